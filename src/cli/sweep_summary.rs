//! A sweep's result as `run --json` prints it and `merge` reads it back: one scenario, the seeds
//! it covered, its failures with their replay commands, and its fault counts. Shards of one sweep
//! (`run --shard K/N`) merge into the summary of the whole.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::runner::SweepReport;
use crate::scenarios::scenario::Scenario;
use crate::sim::fault::{FaultCounts, FaultKind};
use serde::{Deserialize, Serialize};

use crate::cli::Setup;

/// One scenario's sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// The scenario.
    pub scenario: String,
    /// How many seeds ran.
    pub seeds: u64,
    /// The seeds, as ranges from the first to one past the last.
    pub seed_ranges: Vec<Range<u64>>,
    /// Which shard of a sweep this is (`K/N`), if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Clients per seed.
    pub clients: u32,
    /// Rounds per client.
    pub rounds: u32,
    /// The fault specification.
    pub faults: String,
    /// Servers in the simulated ensemble.
    pub servers: usize,
    /// Every failing seed, by seed.
    pub failures: Vec<FailingSeed>,
    /// The kept schedules replayed before the seeds (`zklab-regressions/`), by file.
    #[serde(default)]
    pub regressions: Vec<Regression>,
    /// Faults injected, by kind.
    pub faults_injected: BTreeMap<String, u64>,
    /// For each kind, how many seeds it struck at least once.
    pub seeds_struck: BTreeMap<String, u64>,
    /// The most sessions one deletion woke.
    pub max_wakeups_per_deletion: usize,
    /// Seeds per second of wall time (of all shards' wall times added up, once merged).
    pub seeds_per_sec: f64,
    /// Wall time, in seconds (added up over shards).
    pub seconds: f64,
    /// Why the sweep stopped before its last seed, if it did: Ctrl-C, or a limit on failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// A failing seed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailingSeed {
    /// The seed.
    pub seed: u64,
    /// Its first violation.
    pub violation: String,
    /// The violation's kind.
    pub kind: String,
    /// The command that replays it.
    pub replay: String,
}

/// The seeds a sweep from `first` ran: its first ones, but for those it left out.
fn covered(first: u64, report: &SweepReport) -> Vec<Range<u64>> {
    let end = first + report.seeds + report.left_out.len() as u64;
    let mut ranges = Vec::new();
    let mut start = first;
    for &seed in &report.left_out {
        ranges.push(start..seed);
        start = seed + 1;
    }
    ranges.push(start..end);
    if report.left_out.is_empty() {
        return ranges;
    }
    ranges.retain(|range| !range.is_empty());
    ranges
}

/// A kept schedule, replayed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Regression {
    /// The schedule's file.
    pub file: String,
    /// Its first violation, if it broke something.
    pub violation: Option<String>,
    /// The command that replays it.
    pub replay: String,
}

impl SweepSummary {
    /// The summary of `report`, a sweep of `seeds` of `scenario` under `setup` (of which it ran
    /// the first `report.seeds`, besides those it left out).
    pub fn new(
        scenario: &Scenario,
        report: &SweepReport,
        seeds: Range<u64>,
        shard: Option<String>,
        setup: &Setup,
    ) -> Self {
        let failures = report
            .failures
            .iter()
            .map(|(seed, violation)| FailingSeed {
                seed: *seed,
                violation: violation.to_string(),
                kind: violation.property.violation.to_owned(),
                replay: setup.replay_command(scenario.name, *seed),
            })
            .collect();
        SweepSummary {
            scenario: scenario.name.to_owned(),
            seeds: report.seeds,
            seed_ranges: covered(seeds.start, report),
            shard,
            clients: setup.clients,
            rounds: setup.rounds,
            faults: setup.faults.clone(),
            servers: setup.servers,
            failures,
            regressions: Vec::new(),
            faults_injected: by_kind(&report.faults),
            seeds_struck: by_kind(&report.seeds_struck),
            max_wakeups_per_deletion: report.max_wakeups_per_deletion,
            seeds_per_sec: report.seeds_per_sec(),
            seconds: report.elapsed.as_secs_f64(),
            stopped: None,
        }
    }

    /// Whether a seed or a kept schedule broke something.
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
            || self
                .regressions
                .iter()
                .any(|regression| regression.violation.is_some())
    }

    /// What makes two summaries parts of one sweep.
    fn setup(&self) -> (&str, u32, u32, &str, usize) {
        (
            &self.scenario,
            self.clients,
            self.rounds,
            &self.faults,
            self.servers,
        )
    }

    /// Refuses a part no `run --json` of this program writes: a scenario `catalogue` does not
    /// have, a backward range of seeds, a count of seeds that its ranges do not add up to, a
    /// failing seed outside them.
    fn check(&self, catalogue: &Catalogue) -> Result<(), String> {
        catalogue.find(&self.scenario)?;
        let name = &self.scenario;
        let mut covered: u64 = 0;
        for range in &self.seed_ranges {
            if range.start > range.end {
                return Err(format!(
                    "{name}: seeds {}..{} run backward",
                    range.start, range.end
                ));
            }
            covered = covered.saturating_add(range.end - range.start);
        }
        if covered != self.seeds {
            return Err(format!(
                "{name}: \"seeds\": {} but its seed ranges hold {covered}",
                self.seeds
            ));
        }
        let outside = self.failures.iter().find(|failure| {
            !self
                .seed_ranges
                .iter()
                .any(|range| range.contains(&failure.seed))
        });
        if let Some(failure) = outside {
            return Err(format!(
                "{name}: failing seed {} lies outside the seeds it ran",
                failure.seed
            ));
        }
        Ok(())
    }

    /// Adds `other`, another part of the same sweep.
    fn absorb(&mut self, other: SweepSummary) -> Result<(), String> {
        let too_many = || format!("{}: the counts added up pass {}", self.scenario, u64::MAX);
        self.seeds = self.seeds.checked_add(other.seeds).ok_or_else(too_many)?;
        self.seed_ranges.extend(other.seed_ranges);
        self.failures.extend(other.failures);
        self.regressions.extend(other.regressions);
        for (mine, theirs) in [
            (&mut self.faults_injected, other.faults_injected),
            (&mut self.seeds_struck, other.seeds_struck),
        ] {
            for (kind, count) in theirs {
                let sum = mine.entry(kind).or_default();
                *sum = sum.checked_add(count).ok_or_else(too_many)?;
            }
        }
        self.max_wakeups_per_deletion = self
            .max_wakeups_per_deletion
            .max(other.max_wakeups_per_deletion);
        self.seconds += other.seconds;
        self.stopped = match (self.stopped.take(), other.stopped) {
            (Some(mine), Some(theirs)) => Some(format!("{mine}; {theirs}")),
            (mine, theirs) => mine.or(theirs),
        };
        Ok(())
    }
}

/// Fault counts by kind, under their JSON keys.
fn by_kind(counts: &FaultCounts) -> BTreeMap<String, u64> {
    counts.iter().map(|(kind, n)| (json_key(kind), n)).collect()
}

/// A fault kind's key in JSON (`lost-create-reply` becomes `lost_create_reply`).
pub fn json_key(kind: FaultKind) -> String {
    kind.name().replace('-', "_")
}

/// Merges the parts of sweeps of `catalogue`'s scenarios into one summary per sweep (per scenario and setup), in the order
/// each was first seen: seeds and counts added up, failures by seed. A part that does not add
/// up, and two parts that ran a seed twice, are errors.
pub fn merge(parts: Vec<SweepSummary>, catalogue: &Catalogue) -> Result<Vec<SweepSummary>, String> {
    let mut merged: Vec<SweepSummary> = Vec::new();
    for part in parts {
        part.check(catalogue)?;
        match merged
            .iter_mut()
            .find(|sweep| sweep.setup() == part.setup())
        {
            Some(sweep) => sweep.absorb(part)?,
            None => merged.push(SweepSummary {
                shard: None,
                ..part
            }),
        }
    }
    for sweep in &mut merged {
        sweep
            .seed_ranges
            .sort_by_key(|range| (range.start, range.end));
        let mut joined: Vec<Range<u64>> = Vec::new();
        for range in std::mem::take(&mut sweep.seed_ranges) {
            match joined.last_mut() {
                Some(last) if range.start < last.end => {
                    return Err(format!(
                        "{}: seeds {}..{} and {}..{} overlap: a shard was merged twice, or two \
                         sweeps share seeds",
                        sweep.scenario, last.start, last.end, range.start, range.end
                    ));
                }
                Some(last) if range.start == last.end => last.end = range.end,
                _ => joined.push(range),
            }
        }
        sweep.seed_ranges = joined;
        sweep.failures.sort_by_key(|failure| failure.seed);
        sweep.seeds_per_sec = sweep.seeds as f64 / sweep.seconds.max(1e-9);
    }
    Ok(merged)
}

/// The seeds of shard `k` of `n` (counted from 1) of the sweep `seeds`: contiguous, the shards'
/// sizes at most one apart, together every seed once.
pub fn shard_of(seeds: Range<u64>, k: u64, n: u64) -> Range<u64> {
    let count = u128::from(seeds.end - seeds.start);
    let bound = |i: u64| seeds.start + (count * u128::from(i) / u128::from(n)) as u64;
    bound(k - 1)..bound(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Merges `parts` of sweeps of zklab's own scenarios.
    fn merge(parts: Vec<SweepSummary>) -> Result<Vec<SweepSummary>, String> {
        super::merge(parts, &Catalogue::builtin())
    }

    fn part(scenario: &str, seeds: Range<u64>, failing: &[u64]) -> SweepSummary {
        let count = seeds.end - seeds.start;
        SweepSummary {
            scenario: scenario.to_owned(),
            seeds: count,
            seed_ranges: vec![seeds],
            shard: Some("1/2".to_owned()),
            clients: 5,
            rounds: 10,
            faults: "all".to_owned(),
            servers: 3,
            failures: failing
                .iter()
                .map(|&seed| FailingSeed {
                    seed,
                    violation: format!("herd at seed {seed}"),
                    kind: "herd".to_owned(),
                    replay: format!("zklab replay {scenario} --seed {seed}"),
                })
                .collect(),
            regressions: Vec::new(),
            faults_injected: [("crash".to_owned(), count)].into(),
            seeds_struck: [("crash".to_owned(), 1)].into(),
            max_wakeups_per_deletion: count as usize,
            seeds_per_sec: 1.0,
            seconds: count as f64,
            stopped: None,
        }
    }

    #[test]
    fn shards_cover_every_seed_once_in_near_equal_parts() {
        let shards: Vec<Range<u64>> = (1..=3).map(|k| shard_of(10..20, k, 3)).collect();
        assert_eq!(shards, [10..13, 13..16, 16..20]);
        assert_eq!(shard_of(0..2, 3, 3), 1..2);
        assert_eq!(shard_of(0..2, 1, 3), 0..0);
        let top = u64::MAX - 10..u64::MAX;
        assert_eq!(shard_of(top.clone(), 2, 2).end, u64::MAX);
    }

    #[test]
    fn parts_of_one_sweep_merge_and_a_seed_run_twice_is_refused() {
        let merged = merge(vec![
            part("lock-bug-herd", 50..100, &[60, 99]),
            part("lock", 0..100, &[]),
            part("lock-bug-herd", 0..50, &[7]),
        ])
        .unwrap();
        assert_eq!(merged.len(), 2);
        let herd = &merged[0];
        assert_eq!(herd.seeds, 100);
        assert_eq!(herd.seed_ranges.len(), 1);
        assert_eq!(herd.seed_ranges[0], 0..100);
        let failing: Vec<u64> = herd.failures.iter().map(|f| f.seed).collect();
        assert_eq!(failing, [7, 60, 99]);
        assert_eq!(herd.faults_injected["crash"], 100);
        assert_eq!(herd.seeds_struck["crash"], 2);
        assert_eq!(herd.max_wakeups_per_deletion, 50);
        assert_eq!(
            (herd.seconds, herd.seeds_per_sec, herd.shard.clone()),
            (100.0, 1.0, None)
        );

        let twice = merge(vec![part("lock", 0..50, &[]), part("lock", 40..60, &[])]);
        assert!(twice
            .unwrap_err()
            .contains("seeds 0..50 and 40..60 overlap"));
        let gap = merge(vec![part("lock", 0..10, &[]), part("lock", 20..30, &[])]).unwrap();
        assert_eq!(gap[0].seed_ranges, [0..10, 20..30]);
    }

    #[test]
    fn a_part_that_does_not_add_up_is_refused() {
        let refused = |part: SweepSummary| merge(vec![part]).unwrap_err();
        let counted_wrong = SweepSummary {
            seeds: 999,
            ..part("lock", 0..50, &[])
        };
        assert!(refused(counted_wrong).contains("\"seeds\": 999 but its seed ranges hold 50"));
        let backward = SweepSummary {
            seed_ranges: Vec::from([Range { start: 50, end: 0 }]),
            ..part("lock", 0..0, &[])
        };
        assert!(refused(backward).contains("seeds 50..0 run backward"));
        assert!(refused(part("lock-bug-heard", 0..5, &[])).contains("lock-bug-herd"));
        assert!(refused(part("lock", 0..5, &[7])).contains("failing seed 7 lies outside"));
        let mut huge = part("lock", 0..5, &[]);
        huge.faults_injected.insert("crash".to_owned(), u64::MAX);
        let overflow = merge(vec![huge.clone(), part("lock", 5..10, &[])]);
        assert!(overflow.unwrap_err().contains("pass 18446744073709551615"));
    }
}
