//! Shrinking a failing seed to its story: the fewest faults, clients, rounds and servers, and the
//! shortest delays, that still break the same property.
//!
//! A seed draws its faults as it goes, so shrinking first writes them down: every fault the seed
//! struck becomes a scripted one at its time ([`crate::schedule::Schedule`]), with nothing drawn
//! at random, and the seed keeps drawing only latencies and the like. The script is then cut
//! down while the run's first violation keeps its kind. Each step of the search is one run of
//! the simulator, and the result is a schedule whose run shows the violation, so what is printed
//! is what happened, never a guess.
//!
//! The seed draws on as the run goes (latencies, jitter, which task madsim polls next), so a
//! script does not strike at exactly the same moments as the seed's own draws did, and a smaller
//! workload changes every later draw. A step that misses at its seed therefore tries the next
//! few seeds (`SEEDS_PER_STEP`, more for a smaller workload) before it gives up; a run of a small workload takes well under a
//! millisecond, so the whole search takes a fraction of a second.
//!
//! The same search shrinks a failing seed of a harness test ([`crate::testing`]), whose workload
//! is the test's own closure, written for its clients and servers: only its faults and their
//! lengths are cut, and the seed moved.

use std::time::{Duration, Instant};

use zklab_sim::fault::{FaultKind, FaultRates};

use crate::oracle::Property;
use crate::runner::{self, RunOptions, SeedReport};
use crate::scenario::Scenario;
use crate::schedule::Schedule;

/// How many seeds a step that drops one of the last few faults tries, from the one it had.
const SEEDS_PER_STEP: u64 = 64;

/// How many seeds a step that makes the workload smaller tries: a bug that shows in one seed of
/// a few hundred with five clients may take many more seeds to show with two.
const SEEDS_PER_WORKLOAD: u64 = 2048;

/// How many seeds the written-down faults are tried at, from the seed that drew them.
const SEEDS_TO_WRITE_DOWN: u64 = 256;

/// How much more often the process and session faults strike when a smaller workload shows
/// the violation in none of its seeds at the rates the seed had: a bug that needs a session to
/// expire at the right moment shows in a short run only if expiries are frequent.
const BOOST: f64 = 100.0;

/// With this many faults left or fewer, dropping one also tries other seeds.
const FEW_FAULTS: usize = 8;

/// The shortest a partition, a pause, a stale read or a server crash is cut to.
const SHORTEST: Duration = Duration::from_millis(1);

/// How big a failing run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Faults struck.
    pub faults: usize,
    /// Clients.
    pub clients: u32,
    /// Rounds per client.
    pub rounds: u32,
    /// Servers.
    pub servers: usize,
    /// Trace lines up to and including the first violation: the story.
    pub lines: usize,
}

impl Size {
    fn of(report: &SeedReport, options: &RunOptions) -> Size {
        Size {
            faults: report.struck.len(),
            clients: options.clients,
            rounds: options.rounds,
            servers: options.sim.servers,
            lines: story_lines(report),
        }
    }
}

/// The trace lines up to the first violation (all of them if none).
pub fn story_lines(report: &SeedReport) -> usize {
    match report.violations.first() {
        Some(first) => report
            .trace
            .entries()
            .iter()
            .take_while(|entry| entry.at <= first.at)
            .count(),
        None => report.trace.entries().len(),
    }
}

/// What shrinking a failing seed gave.
#[derive(Debug)]
pub struct Shrunk {
    /// The property broken, before and after.
    pub property: &'static Property,
    /// The seed's run as it was.
    pub original: Size,
    /// The smallest run found.
    pub shrunk: Size,
    /// That run, written down.
    pub schedule: Schedule,
    /// That run's report.
    pub report: SeedReport,
    /// How many runs the search made.
    pub runs: u64,
    /// How long it took.
    pub elapsed: Duration,
}

/// What the search runs again and again: a scenario's runs, or a harness test's.
pub(crate) trait Rerun {
    /// The name its schedules carry: the scenario's, or the test's.
    fn name(&self) -> &str;

    /// Runs `seed` with `options`.
    fn run(&self, seed: u64, options: &RunOptions) -> SeedReport;

    /// The fewest clients its workload may be cut down to; `None` for a workload that is not
    /// the search's to change (a harness test's closure), whose faults alone are cut.
    fn fewest_clients(&self) -> Option<u32>;
}

/// A scenario's runs, whose workload the search may cut down to the fewest clients its kit
/// can finish with.
struct ScenarioRuns(&'static Scenario);

impl Rerun for ScenarioRuns {
    fn name(&self) -> &str {
        self.0.name
    }

    fn run(&self, seed: u64, options: &RunOptions) -> SeedReport {
        runner::run_seed(self.0, seed, options)
    }

    fn fewest_clients(&self) -> Option<u32> {
        Some(self.0.kit.min_clients() as u32)
    }
}

/// Shrinks `seed` of `scenario` run with `options`. `progress` hears the size after each step
/// that made the run smaller. An error says why there is nothing to shrink: the seed holds, or
/// its faults, struck again by script, no longer break the property.
pub fn shrink(
    scenario: &'static Scenario,
    seed: u64,
    options: &RunOptions,
    progress: &dyn Fn(&Size),
) -> Result<Shrunk, String> {
    shrink_runs(&ScenarioRuns(scenario), seed, options, progress)
}

/// Shrinks `seed` of `target` run with `options`, as [`shrink`] does a scenario's.
pub(crate) fn shrink_runs(
    target: &dyn Rerun,
    seed: u64,
    options: &RunOptions,
    progress: &dyn Fn(&Size),
) -> Result<Shrunk, String> {
    let started = Instant::now();
    let first = target.run(seed, options);
    let Some(property) = first.violations.first().map(|violation| violation.property) else {
        return Err(format!(
            "{} seed {seed} holds: there is nothing to shrink",
            target.name()
        ));
    };
    let mut search = Search {
        target,
        property,
        runs: 1,
        progress,
        searched: Vec::new(),
    };
    let original = Size::of(&first, options);
    progress(&original);

    // Two starts: the smallest workload that shows the violation at the seed's own rates, and
    // the smallest with its faults boosted where need be. The boosted one has fewer clients,
    // but may need many faults where a larger workload needs none: each is cut down, and the
    // shorter story kept. A workload the search may not change is its one start.
    let mut starts = vec![(seed, options.clone())];
    if let Some(fewest) = target.fewest_clients() {
        starts = vec![search.smaller_workload_drawn(fewest, seed, options.clone(), false)];
        let boosted_start = search.smaller_workload_drawn(fewest, seed, options.clone(), true);
        if boosted_start != starts[0] {
            starts.push(boosted_start);
        }
    }
    let mut best: Option<Best> = None;
    let mut missed = None;
    for (drawn_seed, drawn) in starts {
        // Where the smaller workload's faults, written down, miss, the seed's own may not.
        let written = search
            .written_down(drawn_seed, &drawn)
            .or_else(|_| search.written_down(seed, options));
        let (schedule, report) = match written {
            Ok(written) => written,
            Err(error) => {
                missed = Some(error);
                continue;
            }
        };
        let mut candidate = Best { schedule, report };
        progress(&candidate.size());
        search.cut_down(&mut candidate);
        if best
            .as_ref()
            .is_none_or(|best| candidate.rank() < best.rank())
        {
            best = Some(candidate);
        }
    }
    let Some(mut best) = best else {
        return Err(missed.unwrap_or_default());
    };
    search.shortest_story(&mut best);
    Ok(Shrunk {
        property,
        original,
        shrunk: best.size(),
        schedule: Schedule {
            violation: Some(property.violation.to_owned()),
            ..best.schedule
        },
        report: best.report,
        runs: search.runs,
        elapsed: started.elapsed(),
    })
}

/// `rates` with every process and session fault [`BOOST`] times as frequent (at most 100 a
/// second). The ensemble's own faults stay as they were: servers that crash and elect leaders
/// many times a second leave a short run no time to go wrong in any other way.
fn boosted(rates: &FaultRates) -> FaultRates {
    let mut boosted = rates.clone();
    for kind in FaultKind::ALL
        .into_iter()
        .filter(|kind| !kind.needs_followers())
    {
        let rate = rates.per_second(kind);
        if rate > 0.0 {
            boosted.set(kind, (rate * BOOST).min(100.0));
        }
    }
    boosted
}

/// The smallest failing run so far, and its report.
struct Best {
    schedule: Schedule,
    report: SeedReport,
}

impl Best {
    /// A shorter story first (what a reader reads), then fewer faults.
    fn rank(&self) -> (usize, usize) {
        let size = self.size();
        (size.lines, size.faults)
    }

    fn size(&self) -> Size {
        Size {
            faults: self.schedule.faults.len(),
            clients: self.schedule.clients,
            rounds: self.schedule.rounds,
            servers: self.schedule.servers,
            lines: story_lines(&self.report),
        }
    }
}

struct Search<'a> {
    target: &'a dyn Rerun,
    property: &'static Property,
    runs: u64,
    progress: &'a dyn Fn(&Size),
    /// Every workload searched for a failing seed: the seed searched from, the options, and the
    /// first failing seed found. Runs are deterministic, so the boosted start, which tries each
    /// workload at the seed's own rates before boosting them, need not run again what the
    /// unboosted start ran.
    searched: Vec<(u64, RunOptions, Option<u64>)>,
}

impl Search<'_> {
    /// Whether `report` breaks the property being shrunk first.
    fn shows(&self, report: &SeedReport) -> bool {
        report.violations.first().map(|v| v.property) == Some(self.property)
    }

    fn run(&mut self, seed: u64, options: &RunOptions) -> SeedReport {
        self.runs += 1;
        self.target.run(seed, options)
    }

    /// The schedule, run; its report if it shows the violation.
    fn try_schedule(&mut self, schedule: &Schedule) -> Option<SeedReport> {
        let report = self.run(schedule.seed, &schedule.options());
        self.shows(&report).then_some(report)
    }

    /// The schedule at its own seed or one of the next `count - 1`: the first that shows the
    /// violation.
    fn try_seeds(&mut self, schedule: Schedule, count: u64) -> Option<(Schedule, SeedReport)> {
        (0..count).find_map(|offset| {
            let candidate = Schedule {
                seed: schedule.seed.wrapping_add(offset),
                ..schedule.clone()
            };
            self.try_schedule(&candidate)
                .map(|report| (candidate, report))
        })
    }

    /// Cuts the failing run down: fewer faults, a smaller workload (where the search may change
    /// it) and shorter faults, in turn, until a round of all three makes it no smaller.
    fn cut_down(&mut self, best: &mut Best) {
        loop {
            let before = best.size();
            self.fewer_faults(best);
            if let Some(fewest) = self.target.fewest_clients() {
                self.smaller_workload(fewest, best);
            }
            self.shorter_faults(best);
            if best.size() == before {
                break;
            }
        }
    }

    /// One round of as few clients as will do (at least `fewest`), or else fewer clients, then
    /// fewer rounds, with faults still drawn at random: a smaller workload draws fewer faults to
    /// write down. The seed and options of the smallest that fails, where a workload that fails
    /// at none of its seeds at the options' rates tries them boosted too if `boost` says so.
    fn smaller_workload_drawn(
        &mut self,
        fewest: u32,
        seed: u64,
        options: RunOptions,
        boost: bool,
    ) -> (u64, RunOptions) {
        let sized = |options: &RunOptions, clients, rounds| RunOptions {
            clients,
            rounds,
            ..options.clone()
        };
        let one_round = (fewest..=options.clients).map(|clients| sized(&options, clients, 1));
        if let Some(found) = self.first_failing(seed, one_round, boost) {
            return found;
        }
        let mut best = (seed, options);
        let fewer_clients = (fewest..best.1.clients).map(|c| sized(&best.1, c, best.1.rounds));
        if let Some(found) = self.first_failing(best.0, fewer_clients, boost) {
            best = found;
        }
        let fewer_rounds = (1..best.1.rounds).map(|r| sized(&best.1, best.1.clients, r));
        self.first_failing(best.0, fewer_rounds, boost)
            .unwrap_or(best)
    }

    /// The first of `candidates` that shows the violation at one of the seeds from `from`.
    fn first_failing(
        &mut self,
        from: u64,
        mut candidates: impl Iterator<Item = RunOptions>,
        boost: bool,
    ) -> Option<(u64, RunOptions)> {
        candidates.find_map(|candidate| self.failing_seed(from, candidate, boost))
    }

    /// The first of the seeds from `from` that shows the violation with `options`, or else
    /// (if `boost`) with its process and session faults boosted; with the options it showed
    /// with.
    fn failing_seed(
        &mut self,
        from: u64,
        options: RunOptions,
        boost: bool,
    ) -> Option<(u64, RunOptions)> {
        let boosted = RunOptions {
            faults: boosted(&options.faults),
            ..options.clone()
        };
        let tries = match !boost || boosted.faults == options.faults {
            true => vec![options],
            false => vec![options, boosted],
        };
        tries
            .into_iter()
            .find_map(|options| Some((self.first_failing_seed(from, &options)?, options)))
    }

    /// The first of the seeds from `from` that shows the violation with `options`, remembered
    /// (see [`Search::searched`]).
    fn first_failing_seed(&mut self, from: u64, options: &RunOptions) -> Option<u64> {
        let remembered = self
            .searched
            .iter()
            .find(|(searched_from, searched, _)| *searched_from == from && searched == options);
        if let Some(&(_, _, found)) = remembered {
            return found;
        }
        let found = (0..SEEDS_PER_WORKLOAD)
            .map(|offset| from.wrapping_add(offset))
            .find(|&seed| {
                let report = self.run(seed, options);
                self.shows(&report)
            });
        self.searched.push((from, options.clone(), found));
        found
    }

    /// The faults `seed` drew with `options`, written down as a schedule that shows the
    /// violation (at that seed or one of the next few).
    fn written_down(
        &mut self,
        seed: u64,
        options: &RunOptions,
    ) -> Result<(Schedule, SeedReport), String> {
        // Scripted faults of the options that struck are among those struck.
        let mut faults = self.run(seed, options).struck;
        faults.sort_by_key(|fault| fault.at);
        let schedule = Schedule {
            scenario: self.target.name().to_owned(),
            seed,
            clients: options.clients,
            rounds: options.rounds,
            servers: options.sim.servers,
            faults,
            violation: None,
            forced: None,
        };
        let count = schedule.faults.len();
        let no_faults = Schedule {
            faults: Vec::new(),
            ..schedule.clone()
        };
        let written = self.try_seeds(schedule, SEEDS_TO_WRITE_DOWN);
        // A bug that needs no fault may show without them where the script misses.
        let written = written.or_else(|| self.try_seeds(no_faults, SEEDS_TO_WRITE_DOWN));
        written.ok_or_else(|| {
            format!(
                "the {count} faults seed {seed} drew, struck again by script, no longer show \
                 {} (tried seeds {seed} to {})",
                self.property.violation,
                seed.wrapping_add(SEEDS_TO_WRITE_DOWN - 1)
            )
        })
    }

    /// Drops every fault, if some seed shows the violation without them (a race needs none, but
    /// may need many seeds); else drops halves of the script, then quarters, down to one at a
    /// time.
    fn fewer_faults(&mut self, best: &mut Best) {
        if !best.schedule.faults.is_empty() {
            let none = Schedule {
                faults: Vec::new(),
                ..best.schedule.clone()
            };
            if let Some((none, report)) = self.try_seeds(none, SEEDS_PER_WORKLOAD) {
                return self.improve(best, none, report);
            }
        }
        let mut chunk = best.schedule.faults.len().div_ceil(2).max(1);
        while !best.schedule.faults.is_empty() {
            let mut start = 0;
            while start < best.schedule.faults.len() {
                let mut candidate = best.schedule.clone();
                let end = (start + chunk).min(candidate.faults.len());
                candidate.faults.drain(start..end);
                match self.try_schedule(&candidate) {
                    Some(report) => self.improve(best, candidate, report),
                    None => start += chunk,
                }
            }
            if chunk == 1 {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
        if best.schedule.faults.len() > FEW_FAULTS {
            return;
        }
        let mut index = 0;
        while index < best.schedule.faults.len() {
            let mut candidate = best.schedule.clone();
            candidate.faults.remove(index);
            match self.try_seeds(candidate, SEEDS_PER_STEP) {
                Some((candidate, report)) => self.improve(best, candidate, report),
                None => index += 1,
            }
        }
    }

    /// Fewer clients, down to `fewest` (their faults go with them), fewer rounds, one server
    /// where no fault needs followers.
    fn smaller_workload(&mut self, fewest: u32, best: &mut Best) {
        for clients in fewest..best.schedule.clients {
            let mut candidate = best.schedule.clone();
            candidate.clients = clients;
            candidate.faults.retain(|fault| fault.client < clients);
            if let Some((candidate, report)) = self.try_seeds(candidate, SEEDS_PER_WORKLOAD) {
                self.improve(best, candidate, report);
                break;
            }
        }
        for rounds in 1..best.schedule.rounds {
            let candidate = Schedule {
                rounds,
                ..best.schedule.clone()
            };
            if let Some((candidate, report)) = self.try_seeds(candidate, SEEDS_PER_WORKLOAD) {
                self.improve(best, candidate, report);
                break;
            }
        }
        let followers = best
            .schedule
            .faults
            .iter()
            .any(|f| f.kind.needs_followers());
        if best.schedule.servers > 1 && !followers {
            let candidate = Schedule {
                servers: 1,
                ..best.schedule.clone()
            };
            if let Some((candidate, report)) = self.try_seeds(candidate, SEEDS_PER_WORKLOAD) {
                self.improve(best, candidate, report);
            }
        }
    }

    /// Halves each lasting fault while the violation still shows.
    fn shorter_faults(&mut self, best: &mut Best) {
        for index in 0..best.schedule.faults.len() {
            loop {
                let duration = best.schedule.faults[index].duration;
                if duration <= SHORTEST {
                    break;
                }
                let mut candidate = best.schedule.clone();
                candidate.faults[index].duration = (duration / 2).max(SHORTEST);
                match self.try_schedule(&candidate) {
                    Some(report) => self.improve(best, candidate, report),
                    None => break,
                }
            }
        }
    }

    /// The seed, among the next few, whose run of the final schedule tells the shortest story.
    fn shortest_story(&mut self, best: &mut Best) {
        for offset in 1..SEEDS_TO_WRITE_DOWN {
            let candidate = Schedule {
                seed: best.schedule.seed.wrapping_add(offset),
                ..best.schedule.clone()
            };
            if let Some(report) = self.try_schedule(&candidate) {
                if story_lines(&report) < story_lines(&best.report) {
                    self.improve(best, candidate, report);
                }
            }
        }
    }

    fn improve(&mut self, best: &mut Best, schedule: Schedule, report: SeedReport) {
        *best = Best { schedule, report };
        (self.progress)(&best.size());
    }
}
