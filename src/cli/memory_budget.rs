//! `--memory`: the most memory a run may take. A seed's story is kept whole until it is judged,
//! so its memory grows with its clients and rounds: some 17 KB a client-round for a lock, and
//! more with each round for a queue, whose listings grow too. Before a large workload runs, a
//! pilot measures one seed at two small sizes and carries the growth between them on in a
//! straight line: a seed that would take more than the budget is refused with the figure, and
//! fewer seeds run at once when only a few fit.
//! Each seed's heap is then held to [`HEAP_SHARE`] of its part of the budget (the allocator
//! keeps the rest), and a seed that passes it stops the run.

use crate::scenarios::runner::{self, RunOptions};
use crate::scenarios::scenario::Scenario;

/// The budget unless `--memory` says otherwise.
pub(crate) const DEFAULT_MEMORY: &str = "4GiB";

/// Client-rounds of the pilot's smaller size (its larger one is twice as many); a workload up
/// to four times as large runs without a pilot, held by its share alone.
const PILOT_SIZE: u64 = 2_000;

/// The part of a seed's share of the budget its heap may take: the allocator keeps what a seed
/// freed for the next, and the story's buffer is copied as it grows, so a queue seed stopped
/// at 1.3 GiB of heap had a resident size of 2.8 GB.
pub(crate) const HEAP_SHARE: (u64, u64) = (1, 2);

const UNITS: [(&str, u64); 4] = [
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
    ("B", 1),
];

/// A size as `--memory` takes it: a whole or decimal number with a unit, `4GiB`, `512MiB`,
/// `1.5GiB` (`G`, `M` and `K` mean the same).
pub(crate) fn parse_memory(text: &str) -> Result<u64, String> {
    let bad =
        || format!("{text:?} is not a size: write a number and a unit, as in 4GiB, 512MiB or 1.5G");
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let unit = unit.trim().to_ascii_uppercase();
    let scale = UNITS
        .iter()
        .find(|(name, _)| {
            let name = name.to_ascii_uppercase();
            unit == name || unit == name.trim_end_matches("IB") && !unit.is_empty()
        })
        .map(|(_, scale)| *scale)
        .ok_or_else(bad)?;
    let bytes = number * scale as f64;
    if !(1.0..u64::MAX as f64).contains(&bytes) {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// `bytes` for a person: `1.2 GiB`, `340 MiB`.
pub(crate) fn shown(bytes: u64) -> String {
    let (name, scale) = UNITS
        .iter()
        .find(|(_, scale)| bytes >= *scale)
        .unwrap_or(&UNITS[3]);
    match *scale {
        1 => format!("{bytes} B"),
        _ if bytes < 10 * scale => format!("{:.1} {name}", bytes as f64 / *scale as f64),
        _ => format!("{} {name}", bytes / scale),
    }
}

/// How a scenario's seeds run within the budget.
#[derive(Debug, PartialEq)]
pub(crate) struct Fitted {
    /// Seeds at once: those asked for, or as many as fit.
    pub(crate) threads: usize,
    /// What one seed would take of the budget, as the pilot measured it (`None`: small, not
    /// measured).
    pub(crate) need: Option<u64>,
}

/// Fits `threads` seeds of `scenario` at once within `budget` bytes, measuring a large
/// workload on a pilot of `seed` first, and sets `options.memory_budget` to each seed's
/// share. An error, with the memory a seed would need, when not even one fits.
pub(crate) fn fit(
    scenario: &'static Scenario,
    seed: u64,
    options: &mut RunOptions,
    threads: usize,
    budget: u64,
) -> Result<Fitted, String> {
    let need = pilot(scenario, seed, options);
    let threads = match need {
        Some(need) if need > budget => {
            return Err(format!(
                "{}: one seed of {} clients and {} rounds would take about {} (a pilot's heap \
                 carried on, and as much again for the allocator), more than the memory budget \
                 of {} (--memory): run fewer --rounds or --clients, or raise --memory",
                scenario.name,
                options.clients,
                options.rounds,
                shown(need),
                shown(budget)
            ))
        }
        // The pilot's straight line falls short of a growth that speeds up (a lock's by a fifth
        // at 1,000 rounds): seeds are fitted side by side with half as much again to spare.
        Some(need) => {
            let fits = budget / need.saturating_add(need / 2).max(1);
            threads.min(usize::try_from(fits).unwrap_or(usize::MAX))
        }
        None => threads,
    }
    .max(1);
    let (part, of) = HEAP_SHARE;
    options.memory_budget = Some(budget / threads as u64 / of * part);
    Ok(Fitted { threads, need })
}

/// What one seed of a large workload would take of the budget: its heap measured at two small
/// sizes, the growth between them carried on in a straight line to the full size, and the
/// allocator's part ([`HEAP_SHARE`]) added. `None` for a small workload, or where nothing is
/// counted.
fn pilot(scenario: &'static Scenario, seed: u64, options: &RunOptions) -> Option<u64> {
    let clients = u64::from(options.clients);
    let rounds = u64::from(options.rounds);
    if clients * rounds <= 4 * PILOT_SIZE {
        return None;
    }
    let small = PILOT_SIZE.div_ceil(clients);
    let peak = |rounds: u64| {
        let sized = RunOptions {
            rounds: u32::try_from(rounds).unwrap_or(u32::MAX),
            memory_budget: None,
            ..options.clone()
        };
        runner::run_seed(scenario, seed, &sized).heap_peak
    };
    let (at_small, at_double) = (peak(small), peak(2 * small));
    if at_small == 0 {
        return None;
    }
    let per_round = at_double.saturating_sub(at_small) / small;
    let heap = at_double.saturating_add(per_round.saturating_mul(rounds - 2 * small));
    let (part, of) = HEAP_SHARE;
    Some(heap.saturating_mul(of) / part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_their_units() {
        assert_eq!(parse_memory("4GiB"), Ok(4 << 30));
        assert_eq!(parse_memory("512MiB"), Ok(512 << 20));
        assert_eq!(parse_memory("1.5G"), Ok(3 << 29));
        assert_eq!(parse_memory("100kib"), Ok(100 << 10));
        assert_eq!(parse_memory("2048B"), Ok(2048));
        for bad in ["", "4", "GiB", "4 parsecs", "0MiB", "1e99GiB", "-1GiB"] {
            let error = parse_memory(bad).expect_err(bad);
            assert!(error.contains(bad), "{error}");
        }
    }

    #[test]
    fn sizes_print_for_a_person() {
        assert_eq!(shown(4 << 30), "4.0 GiB");
        assert_eq!(shown(340 << 20), "340 MiB");
        assert_eq!(shown(1536 << 20), "1.5 GiB");
        assert_eq!(shown(12), "12 B");
    }
}
