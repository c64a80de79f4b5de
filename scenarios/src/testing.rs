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
//! sweep to N seeds. The code's own `tracing` events (INFO and up) land in the trace as note
//! lines beside its calls, and `RUST_LOG` prints every event as it happens, stamped with the
//! sim time.
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
mod real_harness;
mod replay;
mod test_client;

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use zklab_sim::fault::{FaultRates, ScriptedFault};
use zklab_sim::log;
use zklab_sim::property::Monitor;
use zklab_sim::trace::Trace;

pub use self::real_harness::ServerControl;
pub use self::replay::{shell_quoted, SEEDS_VARIABLE, SEED_VARIABLE};
pub use self::test_client::TestClient;

use self::replay::Seeds;
use crate::kit::ClientRun;
use crate::monitor::failure::NoFailures;
use crate::oracle::{self, Violation};
use crate::runner::RunOptions;
use crate::runner::{
    in_runtime, quiet_panics_inside_seeds, run_clients, start_service, Unfinished,
};

/// How many trace lines a failure shows; the replay prints them all.
const TAIL_LINES: usize = 40;

/// A seeded run of the test's own code: which clients, faults, seeds and monitors.
#[derive(Clone, Debug)]
pub struct Harness<M = NoFailures> {
    options: RunOptions,
    seeds: Range<u64>,
    monitors: M,
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
    /// Wall time.
    pub elapsed: Duration,
}

/// A run that broke a property: the first failing seed of a sweep, or a real server's run.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed, in the simulator.
    pub seed: Option<u64>,
    /// What broke, earliest first.
    pub violations: Vec<Violation>,
    /// The whole trace of the run.
    pub trace: Trace,
    /// The command that replays the seed, in the simulator.
    pub replay: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.seed {
            Some(seed) => writeln!(f, "zklab: seed {seed} fails")?,
            None => writeln!(f, "zklab: the run on a real ZooKeeper fails")?,
        }
        for violation in &self.violations {
            writeln!(f, "  VIOLATION {violation}")?;
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
        match &self.replay {
            Some(replay) => write!(f, "\nreplay: {replay}"),
            None => Ok(()),
        }
    }
}

impl<M: Monitor> Harness<M> {
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

    /// The test filter the replay command names; by default the running test's own name.
    pub fn test_name(mut self, name: impl Into<String>) -> Self {
        self.test = Some(name.into());
        self
    }

    /// Judges each trace by `monitors` (one, or a tuple of several: zklab's from
    /// `zklab::scenarios::monitor` or a recipe's folder, or the test's own [`Monitor`]s) beside zklab's own.
    pub fn monitors<N: Monitor>(self, monitors: N) -> Harness<N> {
        Harness {
            options: self.options,
            seeds: self.seeds,
            monitors,
            test: self.test,
            kept: self.kept,
        }
    }

    /// Keeps the seeds this test fails on in `directory` (`zklab-regressions`, say: check it
    /// in), one file per test (`<test name>.seeds`), and replays them before the sweep of every
    /// later run: a seed a wide sweep (`ZKLAB_SEEDS=100000`) found stays in the default one, and
    /// a fixed bug stays fixed. Off unless asked for: a test that fails on purpose keeps
    /// nothing.
    pub fn regressions(mut self, directory: impl Into<PathBuf>) -> Self {
        self.kept = Some(directory.into());
        self
    }

    /// Runs `each` for every client, seed after seed; panics with the first failing seed's
    /// story and the command that replays it. Under `ZKLAB_SEED` it prints that seed's whole
    /// trace first.
    pub fn run<F, Fut>(&self, each: F)
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if let Err(failure) = self.try_run(each) {
            panic!("{failure}");
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
        let seeds = match replay::from_environment(self.seeds.clone()) {
            Ok(seeds) => seeds,
            Err(message) => panic!("zklab: {message}"),
        };
        let (seeds, replaying) = match seeds {
            Seeds::Sweep(seeds) => (seeds, false),
            Seeds::Replay(seed) => (seed..seed.saturating_add(1), true),
        };
        let test = self.test.clone().or_else(running_test);
        let kept_file = match (&self.kept, &test) {
            (Some(directory), Some(test)) if !replaying => Some(kept::file(directory, test)),
            _ => None,
        };
        let kept = match kept_file.as_deref().map(kept::seeds) {
            Some(Ok(kept)) => kept,
            Some(Err(message)) => panic!("zklab: {message}"),
            None => Vec::new(),
        };
        let sweep = seeds.clone().filter(|seed| !kept.contains(seed));
        for seed in kept.iter().copied().chain(sweep) {
            let (trace, violations) =
                tracing::subscriber::with_default(log::subscriber(), || self.run_seed(seed, &each));
            if replaying {
                print!("{}", trace.render());
                println!(
                    "-- seed {seed}: {} events, digest {:016x}",
                    trace.entries().len(),
                    trace.digest()
                );
            }
            if !violations.is_empty() {
                if let Some(path) = kept_file.as_deref().filter(|_| !kept.contains(&seed)) {
                    if let Err(message) = kept::keep(path, seed, &violations[0].to_string()) {
                        eprintln!("zklab: {message}");
                    }
                }
                return Err(Box::new(Failure {
                    seed: Some(seed),
                    violations,
                    trace,
                    replay: Some(replay::command(seed, test.as_deref())),
                }));
            }
        }
        Ok(Passed {
            seeds,
            kept,
            elapsed: started.elapsed(),
        })
    }

    /// One seed: its trace and what broke, earliest first.
    fn run_seed<F, Fut>(&self, seed: u64, each: &Arc<F>) -> (Trace, Vec<Violation>)
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let options = &self.options;
        let (recorded, mut violations) = in_runtime(seed, |slot| async move {
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
        });
        let trace = recorded.trace;
        let judgement = oracle::judge(self.monitors.clone(), &trace, options.sim.session_timeout);
        violations.extend(judgement.violations);
        violations.sort_by_key(|violation| violation.at);
        (trace, violations)
    }
}

/// The running test's name, which libtest gives the thread it runs a test on.
fn running_test() -> Option<String> {
    let thread = std::thread::current();
    thread
        .name()
        .filter(|name| *name != "main")
        .map(str::to_owned)
}
