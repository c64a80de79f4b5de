//! Test your own ZooKeeper code: a seeded, fault-injected run of it in `cargo test`.
//!
//! [`Harness`] runs an async closure once per client, each with a connected [`TestClient`], on
//! the simulated ZooKeeper, for each seed of a sweep. The service injects the faults of the
//! profile (every kind by default), the closure may cause its own (expire its session, drop its
//! connection, lose its next reply, partition, pause or crash its process), and monitors judge
//! the trace: zklab's own (no recipe giving up, no waiter stuck on a watch that cannot fire, no
//! node its creator forgot, no wait-for cycle) and any the test adds. A panic in the closure
//! (an `assert!`) fails the seed too, and so does a client that has not finished within the time
//! bound. On the first failing seed the test panics with the violation, the tail of the trace
//! and one command that replays exactly that seed:
//!
//! ```text
//! ZKLAB_SEED=7 cargo test -p app --example config_watcher -- tests::readers_see_the_last_value --exact
//! ```
//!
//! `ZKLAB_SEED` runs that seed alone and prints its whole trace; `ZKLAB_SEEDS=N` widens a
//! sweep to N seeds. `ZKLAB_SHRINK=1` shrinks the failing seed as `zklab shrink` does a
//! scenario's: the faults that struck, written down, cut to the fewest (and shortest) that still
//! break the same property, the seed moved if need be; the test's clients and servers stay, its
//! closure being written for them. A test that keeps its regressions ([`Harness::regressions`])
//! keeps that schedule and replays it before every later sweep, and `ZKLAB_SCHEDULE=FILE` runs
//! it alone with its whole trace. The code's own `tracing` events (INFO and up) land in the
//! trace as note lines beside its calls, and `RUST_LOG` prints every event as it happens,
//! stamped with the sim time.
//!
//! Seeds run in parallel, one thread per core unless [`Harness::threads`] or `ZKLAB_THREADS=N`
//! says otherwise, on the pool the CLI's sweeps run on ([`runner::on_threads`]). The thread
//! count changes only the speed: a failure is always the first failing seed in the sweep's
//! order, with the trace that seed gives alone. A sweep that holds tells its speed on stderr:
//!
//! ```text
//! zklab: 2000 seeds held, 1.7 s, 1160 seeds/s on 2 threads
//! ```
//!
//! ```rust,ignore
//! use zklab::testing::Harness;
//!
//! #[test]
//! fn readers_see_the_last_value() {
//!     Harness::new().clients(3).seeds(0..200).run(|client| async move {
//!         if client.index() == 0 {
//!             write_values(&client).await;
//!         } else {
//!             let last = follow_until(&client, LAST).await;
//!             assert_eq!(last, LAST);
//!         }
//!     });
//! }
//! ```

mod kept;
#[cfg(feature = "real")]
mod real_harness;
mod replay;
mod test_client;

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use tracing::Dispatch;
use zklab_sim::fault::{FaultRates, ScriptedFault};
use zklab_sim::log;
use zklab_sim::property::Monitor;
use zklab_sim::trace::Trace;

#[cfg(feature = "real")]
pub use self::real_harness::ServerControl;
pub use self::replay::{
    shell_quoted, CARGO_TEST_VARIABLE, SCHEDULE_VARIABLE, SEEDS_VARIABLE, SEED_VARIABLE,
    SHRINK_VARIABLE, THREADS_VARIABLE,
};
pub use self::test_client::TestClient;

use self::replay::{Replayed, Seeds};
use crate::kit::ClientRun;
use crate::monitor::failure::NoFailures;
use crate::oracle::{self, Violation};
use crate::regressions;
use crate::runner::{
    self, in_runtime, quiet_panics_inside_seeds, run_clients, start_service, RunOptions,
    SeedReport, Unfinished,
};
use crate::schedule::Schedule;
use crate::shrink::{self, Rerun};

/// How many trace lines a failure shows; the replay prints them all.
const TAIL_LINES: usize = 40;

/// A seeded run of the test's own code: which clients, faults, seeds and monitors, and how
/// many threads run the seeds.
#[derive(Clone, Debug)]
pub struct Harness<M = NoFailures> {
    options: RunOptions,
    seeds: Range<u64>,
    monitors: M,
    threads: usize,
    test: Option<String>,
    /// Where the test's failing seeds are kept, if they are.
    kept: Option<PathBuf>,
}

impl Harness {
    /// Three clients on an ensemble of three servers, every fault kind at its default rate,
    /// seeds 0 to 99, a minute of sim time, judged by zklab's own monitors.
    pub fn new() -> Self {
        Harness {
            options: RunOptions {
                clients: 3,
                rounds: 0,
                faults: FaultRates::all(),
                script: Vec::new(),
                forced: None,
                time_bound: Duration::from_secs(60),
                ..RunOptions::default()
            },
            seeds: 0..100,
            monitors: NoFailures,
            threads: runner::default_threads(),
            test: None,
            kept: None,
        }
    }
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

/// A run that held: every seed, every property.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passed {
    /// The seeds of the sweep.
    pub seeds: Range<u64>,
    /// The seeds kept from earlier failures, replayed before the sweep.
    pub kept: Vec<u64>,
    /// The schedules kept from earlier failures, shrunk (`ZKLAB_SHRINK`), replayed first.
    pub schedules: Vec<PathBuf>,
    /// How many seeds ran: the sweep's and the kept ones, each once.
    pub seeds_run: u64,
    /// How many threads ran them.
    pub threads: usize,
    /// Wall time.
    pub elapsed: Duration,
}

impl Passed {
    /// Seeds run per second of wall time: what a sweep costs, and what a change of build
    /// profile or of thread count buys.
    pub fn seeds_per_sec(&self) -> f64 {
        self.seeds_run as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The line [`Harness::run`] ends with: what held, and how fast.
impl fmt::Display for Passed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "zklab: ")?;
        match self.schedules.len() {
            0 => {}
            1 => write!(f, "1 kept schedule ")?,
            n => write!(f, "{n} kept schedules ")?,
        }
        let elapsed = self.elapsed.as_secs_f64();
        if self.seeds_run == 0 {
            return write!(f, "held, {elapsed:.1} s");
        }
        if !self.schedules.is_empty() {
            write!(f, "and ")?;
        }
        let threads = match self.threads {
            1 => "thread",
            _ => "threads",
        };
        write!(
            f,
            "{} seeds held, {elapsed:.1} s, {:.0} seeds/s on {} {threads}",
            self.seeds_run,
            self.seeds_per_sec(),
            self.threads
        )
    }
}

/// A run that broke a property: the first failing seed of a sweep, a kept schedule, or a real
/// server's run.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed, in the simulator.
    pub seed: Option<u64>,
    /// What broke, earliest first.
    pub violations: Vec<Violation>,
    /// The whole trace of the run.
    pub trace: Trace,
    /// The command that replays the run, in the simulator.
    pub replay: Option<String>,
    /// The run's faults, written down, when they were not drawn from its seed: a kept
    /// schedule's run, or a shrunk one.
    pub schedule: Option<Schedule>,
    /// The file that keeps [`Failure::schedule`], if one does.
    pub kept: Option<PathBuf>,
    /// Under `ZKLAB_SHRINK`, the failing seed shrunk to the fewest faults that still break the
    /// same property (a schedule's run), or why it could not be.
    pub shrunk: Option<Result<Box<Failure>, String>>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.kept, &self.schedule, self.seed) {
            (Some(path), _, _) => writeln!(f, "zklab: the schedule {} fails", path.display())?,
            (None, Some(_), Some(seed)) => writeln!(f, "zklab: this schedule fails (seed {seed})")?,
            (None, _, Some(seed)) => writeln!(f, "zklab: seed {seed} fails")?,
            (None, _, None) => writeln!(f, "zklab: the run on a real ZooKeeper fails")?,
        }
        for violation in &self.violations {
            writeln!(f, "  VIOLATION {violation}")?;
        }
        if let Some(schedule) = &self.schedule {
            let faults = schedule.to_text();
            let faults: Vec<&str> = faults.lines().filter(|l| l.starts_with("fault ")).collect();
            writeln!(f, "its faults: {}", faults.len())?;
            for fault in faults {
                writeln!(f, "  {fault}")?;
            }
        }
        let entries = self.trace.entries();
        let shown = entries.len().min(TAIL_LINES);
        writeln!(f, "the last {shown} of {} trace lines:", entries.len())?;
        for entry in &entries[entries.len() - shown..] {
            writeln!(f, "  {entry}")?;
        }
        write!(
            f,
            "trace: {} events, digest {:016x}",
            entries.len(),
            self.trace.digest()
        )?;
        if let Some(replay) = &self.replay {
            write!(f, "\nreplay: {replay}")?;
        }
        match &self.shrunk {
            Some(Ok(shrunk)) => {
                let kept = match &shrunk.kept {
                    Some(_) => "kept, and replayed before every later sweep",
                    None => "not kept: a harness keeps it with `.regressions(dir)` in a test",
                };
                write!(f, "\n\n{SHRINK_VARIABLE} shrank it ({kept}):\n{shrunk}")
            }
            Some(Err(why)) => write!(f, "\n\n{SHRINK_VARIABLE} could not shrink it: {why}"),
            None => Ok(()),
        }
    }
}

/// The monitors judge seeds on several threads at once, each seed with its own clone: they are
/// `Send + Sync`, as plain data is.
impl<M: Monitor + Send + Sync> Harness<M> {
    /// How many clients run the closure (at least one).
    pub fn clients(mut self, clients: u32) -> Self {
        assert!(clients > 0, "a run needs at least one client");
        self.options.clients = clients;
        self
    }

    /// The servers of the simulated ensemble: 1 for a standalone server, 3 (the default) or
    /// more for an ensemble, whose followers may serve stale reads.
    pub fn servers(mut self, servers: usize) -> Self {
        assert!(servers > 0, "a ZooKeeper needs at least one server");
        self.options.sim.servers = servers;
        self
    }

    /// The faults the service draws from the seed, and how often
    /// (`FaultRates::parse("connection-loss,session-expiry=0.2")`, say).
    pub fn faults(mut self, faults: FaultRates) -> Self {
        self.options.faults = faults;
        self
    }

    /// No random faults: only those of the script and those the closure causes.
    pub fn no_faults(self) -> Self {
        self.faults(FaultRates::none())
    }

    /// Faults at fixed sim times, on top of the random ones.
    pub fn script(mut self, script: Vec<ScriptedFault>) -> Self {
        self.options.script = script;
        self
    }

    /// The seeds of the sweep (`ZKLAB_SEEDS` and `ZKLAB_SEED` override them).
    pub fn seeds(mut self, seeds: Range<u64>) -> Self {
        self.seeds = seeds;
        self
    }

    /// Every client must finish within this much sim time, or the seed fails (as a deadlock or
    /// starvation).
    pub fn time_bound(mut self, bound: Duration) -> Self {
        self.options.time_bound = bound;
        self
    }

    /// How many threads run the seeds (0 or 1: one); by default one per core.
    /// `ZKLAB_THREADS=N` overrides it. Only the speed changes: the failure reported is the
    /// first failing seed, with the same trace, whatever the count.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The test filter the replay command names; by default the running test's own name.
    pub fn test_name(mut self, name: impl Into<String>) -> Self {
        self.test = Some(name.into());
        self
    }

    /// Judges each trace by `monitors` (one, or a tuple of several: zklab's from
    /// `zklab::scenarios::monitor` or a recipe's folder, or the test's own [`Monitor`]s) beside zklab's own.
    /// They must be `Send + Sync`: seeds run on several threads, each judged by its own clone.
    pub fn monitors<N: Monitor + Send + Sync>(self, monitors: N) -> Harness<N> {
        Harness {
            options: self.options,
            seeds: self.seeds,
            monitors,
            threads: self.threads,
            test: self.test,
            kept: self.kept,
        }
    }

    /// Keeps the seeds this test fails on in `directory` (`zklab-regressions`, say: check it
    /// in), one file per test (`<test name>.seeds`), and the schedules `ZKLAB_SHRINK` shrinks
    /// them to (`<test name>-seed<seed>.schedule`), and replays them all before the sweep of
    /// every later run, the schedules first: a seed a wide sweep (`ZKLAB_SEEDS=100000`) found
    /// stays in the default one, and a fixed bug stays fixed. Off unless asked for: a test that
    /// fails on purpose keeps nothing.
    pub fn regressions(mut self, directory: impl Into<PathBuf>) -> Self {
        self.kept = Some(directory.into());
        self
    }

    /// Runs `each` for every client of every seed, [`Harness::threads`] seeds at once; panics
    /// with the first failing seed's story and the command that replays it. Under `ZKLAB_SEED`
    /// it prints that seed's whole trace first. When every seed holds it tells, on stderr, how
    /// many and how fast ([`Passed`]'s line).
    pub fn run<F, Fut>(&self, each: F)
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        match self.try_run(each) {
            Ok(passed) => eprintln!("{passed}"),
            Err(failure) => panic!("{failure}"),
        }
    }

    /// [`Harness::run`], returning the failure rather than panicking with it.
    pub fn try_run<F, Fut>(&self, each: F) -> Result<Passed, Box<Failure>>
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        static QUIET: Once = Once::new();
        QUIET.call_once(quiet_panics_inside_seeds);
        let started = Instant::now();
        let each = Arc::new(each);
        let test = self.test.clone().or_else(running_test);
        let test = test.as_deref();
        let threads = replay::threads_from_environment(self.threads);
        let threads = threads.unwrap_or_else(|message| panic!("zklab: {message}"));
        let asked = replay::from_environment(self.seeds.clone());
        let (seeds, replaying) = match asked.unwrap_or_else(|message| panic!("zklab: {message}")) {
            Seeds::Sweep(seeds) => (seeds, false),
            Seeds::Replay(seed) => (seed..seed.saturating_add(1), true),
            Seeds::Schedule(path) => {
                let schedule = regressions::read(&path).and_then(|s| self.fitting(&path, s, test));
                let schedule = schedule.unwrap_or_else(|message| panic!("zklab: {message}"));
                self.replay_schedule(&path, &schedule, &each, test, true)?;
                return Ok(Passed {
                    seeds: 0..0,
                    kept: Vec::new(),
                    schedules: vec![path],
                    seeds_run: 0,
                    threads: 1,
                    elapsed: started.elapsed(),
                });
            }
        };
        // Where this test keeps what it failed on: not while one seed is replayed.
        let keeping = self.kept.as_deref().zip(test).filter(|_| !replaying);
        let kept_file = keeping.map(|(directory, test)| kept::file(directory, test));
        let kept = match kept_file.as_deref().map(kept::seeds) {
            Some(Ok(kept)) => kept,
            Some(Err(message)) => panic!("zklab: {message}"),
            None => Vec::new(),
        };
        let schedules = match keeping {
            Some((directory, test)) => regressions::load(directory, test),
            None => Ok(Vec::new()),
        };
        let schedules = schedules.unwrap_or_else(|message| panic!("zklab: {message}"));
        for (path, schedule) in &schedules {
            let schedule = self.fitting(path, schedule.clone(), test);
            let schedule = schedule.unwrap_or_else(|message| panic!("zklab: {message}"));
            self.replay_schedule(path, &schedule, &each, test, false)?;
        }
        // The kept seeds first, then the sweep's others, each part in order.
        let in_sweep = |index| Some(seeds.start + index).filter(|seed| !kept.contains(seed));
        let ran = AtomicU64::new(0);
        let first_failing = |count, seed_at: &(dyn Fn(u64) -> Option<u64> + Sync)| {
            self.first_failing(count, seed_at, threads, &each, replaying, &ran)
        };
        let failing = first_failing(kept.len() as u64, &|index| Some(kept[index as usize]))
            .or_else(|| first_failing(seeds.end - seeds.start, &in_sweep));
        if let Some(report) = failing {
            let seed = report.seed;
            if let Some(path) = kept_file.as_deref().filter(|_| !kept.contains(&seed)) {
                if let Err(message) = kept::keep(path, seed, &report.violations[0].to_string()) {
                    eprintln!("zklab: {message}");
                }
            }
            // Shrunk on request, so kept even while one seed is replayed.
            let keeping = self.kept.as_deref().zip(test);
            let shrunk = replay::shrinking().then(|| self.shrunk(seed, &each, test, keeping));
            return Err(Box::new(Failure {
                seed: Some(seed),
                violations: report.violations,
                trace: report.trace,
                replay: Some(replay::command(Replayed::Seed(seed), test)),
                schedule: None,
                kept: None,
                shrunk,
            }));
        }
        let seeds_run = ran.into_inner();
        Ok(Passed {
            seeds,
            kept,
            schedules: schedules.into_iter().map(|(path, _)| path).collect(),
            seeds_run,
            threads: runner::threads_for(seeds_run, threads),
            elapsed: started.elapsed(),
        })
    }

    /// The report of the first failing seed of `count`, the `i`th being `seed_at(i)` (`None`:
    /// none to run), run on `threads` threads, printing each seed's whole trace if
    /// `replaying`; `ran` counts the seeds run. Once one fails no thread starts another, and
    /// every seed before it has run ([`runner::on_threads`]): the lowest failing one is the
    /// one a single thread finds.
    fn first_failing<F, Fut>(
        &self,
        count: u64,
        seed_at: &(dyn Fn(u64) -> Option<u64> + Sync),
        threads: usize,
        each: &Arc<F>,
        replaying: bool,
        ran: &AtomicU64,
    ) -> Option<SeedReport>
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let first: Mutex<Option<(u64, SeedReport)>> = Mutex::new(None);
        runner::on_threads(count, threads, &|index| {
            let Some(seed) = seed_at(index) else {
                return ControlFlow::Continue(());
            };
            let report = self.report(seed, &self.options, each);
            ran.fetch_add(1, Ordering::Relaxed);
            if replaying {
                print_trace(&format!("seed {seed}"), &report.trace);
            }
            if report.violations.is_empty() {
                return ControlFlow::Continue(());
            }
            let mut first = first
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if first.as_ref().is_none_or(|(earliest, _)| index < *earliest) {
                *first = Some((index, report));
            }
            ControlFlow::Break(())
        });
        let first = first.into_inner();
        first
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .map(|(_, report)| report)
    }

    /// `schedule`, kept in `path`, if it is one this harness runs: the running test's (`test`,
    /// if known), written for as many clients and servers as it has (its closure is the
    /// workload, written for them).
    fn fitting(
        &self,
        path: &Path,
        schedule: Schedule,
        test: Option<&str>,
    ) -> Result<Schedule, String> {
        if let Some(test) = test.filter(|test| *test != schedule.scenario) {
            return Err(format!(
                "{} is a schedule of {}, not of {test}",
                path.display(),
                schedule.scenario
            ));
        }
        let (clients, servers) = (self.options.clients, self.options.sim.servers);
        if (schedule.clients, schedule.servers) != (clients, servers) {
            return Err(format!(
                "{} was kept for {} clients on {} servers, and the test runs {clients} on \
                 {servers}: delete it, or shrink the failure again",
                path.display(),
                schedule.clients,
                schedule.servers
            ));
        }
        Ok(schedule)
    }

    /// Runs the schedule kept in `path`, printing its whole trace if `replaying`; the failure
    /// if it breaks a property.
    fn replay_schedule<F, Fut>(
        &self,
        path: &Path,
        schedule: &Schedule,
        each: &Arc<F>,
        test: Option<&str>,
        replaying: bool,
    ) -> Result<(), Box<Failure>>
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let report = self.report(schedule.seed, &self.scripted(schedule), each);
        if replaying {
            print_trace(&path.display().to_string(), &report.trace);
        }
        if report.violations.is_empty() {
            return Ok(());
        }
        Err(Box::new(Failure {
            seed: Some(schedule.seed),
            violations: report.violations,
            trace: report.trace,
            replay: Some(replay::command(Replayed::Schedule(path), test)),
            schedule: Some(schedule.clone()),
            kept: Some(path.to_owned()),
            shrunk: None,
        }))
    }

    /// The harness's options with `schedule`'s faults, and none drawn at random.
    fn scripted(&self, schedule: &Schedule) -> RunOptions {
        RunOptions {
            faults: FaultRates::none(),
            script: schedule.faults.clone(),
            ..self.options.clone()
        }
    }

    /// `seed`, which fails, shrunk to the fewest faults that still break the same property,
    /// kept where `keeping` says (the directory and the test's name), as a failure of its own;
    /// or why it could not be.
    fn shrunk<F, Fut>(
        &self,
        seed: u64,
        each: &Arc<F>,
        test: Option<&str>,
        keeping: Option<(&Path, &str)>,
    ) -> Result<Box<Failure>, String>
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let runs = TestRuns {
            harness: self,
            each,
            name: test.unwrap_or("harness"),
        };
        let shrunk = shrink::shrink_runs(&runs, seed, &self.options, &|_| {})?;
        let kept = match keeping {
            Some((directory, test)) => {
                let path = regressions::schedule_path(directory, test, seed);
                regressions::save(&path, &shrunk.schedule)?;
                Some(path)
            }
            None => None,
        };
        let replay = kept
            .as_deref()
            .map(|path| replay::command(Replayed::Schedule(path), test));
        Ok(Box::new(Failure {
            seed: Some(shrunk.schedule.seed),
            violations: shrunk.report.violations,
            trace: shrunk.report.trace,
            replay,
            schedule: Some(shrunk.schedule),
            kept,
            shrunk: None,
        }))
    }

    /// Runs `seed` with `options`: its report, judged, the code under test's own `tracing`
    /// events among its notes.
    fn report<F, Fut>(&self, seed: u64, options: &RunOptions, each: &Arc<F>) -> SeedReport
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (recorded, mut violations) = tracing::dispatcher::with_default(listening(), || {
            in_runtime(seed, |slot| async move {
                let zk = start_service(options, &slot);
                let clients = options.clients;
                let client_run = |client| -> ClientRun<_> {
                    let (zk, each) = (zk.clone(), each.clone());
                    Box::pin(async move {
                        each(TestClient::simulated(zk, client, clients)).await;
                        None
                    })
                };
                match run_clients(&zk, options, 1, client_run).await {
                    Err(Unfinished::Broken(liveness)) => vec![liveness],
                    Ok(_) | Err(Unfinished::OverBudget) => Vec::new(),
                }
            })
        });
        let judgement = oracle::judge(
            self.monitors.clone(),
            &recorded.trace,
            options.sim.session_timeout,
        );
        violations.extend(judgement.violations);
        violations.sort_by_key(|violation| violation.at);
        SeedReport {
            seed,
            trace: recorded.trace,
            faults: recorded.faults,
            struck: recorded.struck,
            violations,
            max_wakeups_per_deletion: judgement.max_wakeups_per_deletion,
            heap_peak: 0,
            over_budget: false,
            abandoned_order: recorded.abandoned_order,
        }
    }
}

/// A harness test's runs, for the shrinker: its closure, on the options the search gives.
struct TestRuns<'h, M, F> {
    harness: &'h Harness<M>,
    each: &'h Arc<F>,
    name: &'h str,
}

impl<M, F, Fut> Rerun for TestRuns<'_, M, F>
where
    M: Monitor + Send + Sync,
    F: Fn(TestClient) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    fn name(&self) -> &str {
        self.name
    }

    fn run(&self, seed: u64, options: &RunOptions) -> SeedReport {
        self.harness.report(seed, options, self.each)
    }

    /// The closure is written for the test's clients and servers: only faults are cut.
    fn fewest_clients(&self) -> Option<u32> {
        None
    }
}

/// The `tracing` subscriber every seed of the process runs under ([`log::subscriber`]), built
/// once: each new one would make `tracing` recompute every callsite's interest, under a lock
/// all threads share.
fn listening() -> &'static Dispatch {
    static LISTENING: OnceLock<Dispatch> = OnceLock::new();
    LISTENING.get_or_init(|| Dispatch::new(log::subscriber()))
}

/// Prints the whole trace of a run replayed alone, and its digest.
fn print_trace(title: &str, trace: &Trace) {
    print!("{}", trace.render());
    println!(
        "-- {title}: {} events, digest {:016x}",
        trace.entries().len(),
        trace.digest()
    );
}

/// The running test's name, which libtest gives the thread it runs a test on.
fn running_test() -> Option<String> {
    let thread = std::thread::current();
    thread
        .name()
        .filter(|name| *name != "main")
        .map(str::to_owned)
}
