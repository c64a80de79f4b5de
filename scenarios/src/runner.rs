//! The seeded runner: one madsim runtime per seed, the scenario's clients on their own nodes,
//! the faults of the plan, and every oracle over the resulting trace.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::channel::mpsc;
use futures::{FutureExt, StreamExt};
use madsim::runtime::Runtime;
use zklab_models::general_properties::ORPHAN;
use zklab_recipes::client::ZkClient;
use zklab_sim::fault::{FaultCounts, FaultPlan, FaultRates, ScriptedFault};
use zklab_sim::forced::ForcedStep;
use zklab_sim::service::{SimConfig, SimZk};
use zklab_sim::sim_client::SimClient;
use zklab_sim::trace::{ClientId, Trace, TraceEvent};

use crate::heap;
use crate::host::ClientContext;
use crate::kit::{AnyKit, ClientRun};
use crate::monitor::wait_for::DEADLOCK;
use crate::oracle::{Property, Violation};
use crate::resource::FencedResource;
use crate::scenario::Scenario;

/// Liveness: broken when a client did not finish its workload within the sim-time bound (or, on a
/// real server, the time bound). The model's untimed counterpart is its "no stuck state".
pub static LIVENESS: Property = Property::new("liveness", "liveness");

/// No panic: broken when the simulation itself panicked (or, in a test of your own, its client
/// code did).
pub static PANIC: Property = Property::new("panic", "no panic");

/// How a scenario runs.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// Number of clients.
    pub clients: u32,
    /// Rounds of work per client.
    pub rounds: u32,
    /// Which faults, how often.
    pub faults: FaultRates,
    /// Faults at fixed times, on top of the random ones.
    pub script: Vec<ScriptedFault>,
    /// Start from the model's initial tree and force the server through these steps: a model
    /// checker's counterexample, replayed on the real recipe code ([`SimZk::force_order`]).
    pub forced: Option<Vec<ForcedStep>>,
    /// Every client must finish within this much sim time, plus [`ROUND_ALLOWANCE`] for each
    /// round of each client (see [`RunOptions::liveness_bound`]).
    pub time_bound: Duration,
    /// The simulated service's timing.
    pub sim: SimConfig,
    /// The most heap a seed may hold, in bytes: past it the seed stops, unjudged
    /// ([`SeedReport::over_budget`]). Counted only where [`heap::CountingAllocator`] is the
    /// global allocator; `None`, no bound.
    pub memory_budget: Option<u64>,
}

/// The servers a scenario runs on unless told otherwise: an ensemble of three, as ZooKeeper is
/// deployed. A standalone server never serves a stale read nor sends a client to another
/// server, so the bugs that live there (a read without its `sync`, a watch lost on reconnection)
/// would go unseen.
pub const SCENARIO_SERVERS: usize = 3;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            clients: 5,
            rounds: 10,
            faults: FaultRates::all(),
            script: Vec::new(),
            forced: None,
            time_bound: Duration::from_secs(600),
            sim: SimConfig {
                servers: SCENARIO_SERVERS,
                ..SimConfig::default()
            },
            memory_budget: None,
        }
    }
}

/// The sim time the liveness bound grants per round of each client on top of
/// [`RunOptions::time_bound`]: a long workload is not starvation. Rounds of different clients
/// may not overlap (a lock's holders take turns), so the allowance must cover a round's whole
/// cost, faults included: with 64 clients under every fault the slowest recipes (the
/// read/write lock, the semaphore) take some 80 ms a round on an ensemble, and a lock round
/// without faults some 35 ms. Three times the slowest.
pub const ROUND_ALLOWANCE: Duration = Duration::from_millis(250);

impl RunOptions {
    /// The same options on a simulated ensemble of `servers` servers.
    pub fn on_servers(mut self, servers: usize) -> Self {
        self.sim.servers = servers;
        self
    }

    /// Every client must finish within this much sim time: the base bound, plus an allowance
    /// that grows with the workload.
    pub fn liveness_bound(&self) -> Duration {
        self.time_bound + ROUND_ALLOWANCE * self.clients.saturating_mul(self.rounds)
    }
}

/// Everything one seed produced.
#[derive(Clone, Debug)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// The whole story.
    pub trace: Trace,
    /// The faults injected.
    pub faults: FaultCounts,
    /// Every fault injected, in order, as a script that strikes it again
    /// ([`zklab_sim::service::SimZk::take_struck`]).
    pub struck: Vec<ScriptedFault>,
    /// Every property broken, earliest first.
    pub violations: Vec<Violation>,
    /// The most sessions one deletion woke, as the scenario's herd rule counts them
    /// ([`crate::oracle::Judgement::max_wakeups_per_deletion`]).
    pub max_wakeups_per_deletion: usize,
    /// The most heap the seed held at once, in bytes (zero unless [`heap::CountingAllocator`]
    /// counts).
    pub heap_peak: u64,
    /// Whether the seed was stopped for holding more than [`RunOptions::memory_budget`]: its
    /// story is cut short and nothing was judged.
    pub over_budget: bool,
    /// Why the run left [`RunOptions::forced`]'s order, if it did: what it found after is no
    /// replay of the counterexample, and the order does not describe a run of this recipe.
    pub abandoned_order: Option<String>,
}

thread_local! {
    /// Whether this thread is running a seed, whose panics are caught and reported.
    static IN_SEED: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the panic hook quiet for panics inside a seed (they are caught and reported as
/// violations) while every other panic is still reported as before.
pub fn quiet_panics_inside_seeds() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !IN_SEED.with(Cell::get) {
            previous(info);
        }
    }));
}

/// Runs one seed of a scenario.
pub fn run_seed(scenario: &'static Scenario, seed: u64, options: &RunOptions) -> SeedReport {
    heap::begin_seed(Trace::spare_bytes());
    let (recorded, mut violations) =
        in_runtime(seed, |slot| simulate(scenario, options.clone(), slot));
    let over_budget = heap::seed_stopped();
    let mut max_wakeups_per_deletion = 0;
    if !over_budget {
        let judgement = scenario
            .kit
            .judge(&recorded.trace, options.sim.session_timeout);
        violations.extend(judgement.violations);
        violations.sort_by_key(|violation| violation.at);
        max_wakeups_per_deletion = judgement.max_wakeups_per_deletion;
    }
    SeedReport {
        seed,
        trace: recorded.trace,
        faults: recorded.faults,
        struck: recorded.struck,
        violations,
        max_wakeups_per_deletion,
        heap_peak: heap::seed_peak(),
        over_budget,
        abandoned_order: recorded.abandoned_order,
    }
}

/// Where a simulation puts the service it starts, so its trace outlives a panic.
pub(crate) type Slot = Arc<Mutex<Option<SimZk>>>;

/// The slot's service, even when a panic left the slot poisoned.
fn lock_slot(slot: &Slot) -> MutexGuard<'_, Option<SimZk>> {
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the service of a run recorded.
#[derive(Default)]
pub(crate) struct Recorded {
    pub(crate) trace: Trace,
    pub(crate) faults: FaultCounts,
    pub(crate) struck: Vec<ScriptedFault>,
    pub(crate) abandoned_order: Option<String>,
}

/// Runs `simulate` on a fresh madsim runtime seeded with `seed`: what the service it put in its
/// slot recorded, and the violations it found, a panic inside counting as one.
pub(crate) fn in_runtime<F: Future<Output = Vec<Violation>>>(
    seed: u64,
    simulate: impl FnOnce(Slot) -> F,
) -> (Recorded, Vec<Violation>) {
    let service: Slot = Arc::default();
    let runtime = Runtime::with_seed_and_config(seed, madsim::Config::default());
    let simulation = simulate(service.clone());
    let was_in_seed = IN_SEED.with(|flag| flag.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(|| runtime.block_on(simulation)));
    let zk = lock_slot(&service).take();
    let recorded = zk.as_ref().map(report_of).unwrap_or_default();
    if let Some(zk) = zk {
        // Whatever the run left waiting would otherwise outlive the runtime.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            runtime.block_on(async move { zk.end_tasks() })
        }));
    }
    IN_SEED.with(|flag| flag.set(was_in_seed));
    drop(runtime);
    let violations = match outcome {
        Ok(violations) => violations,
        Err(panic) => {
            let message = panic_message(&panic);
            let at = recorded
                .trace
                .entries()
                .last()
                .map_or(Duration::ZERO, |entry| entry.at);
            let property = if message.contains("all tasks will block forever") {
                &DEADLOCK
            } else {
                &PANIC
            };
            vec![Violation::new(property, at, message)]
        }
    };
    (recorded, violations)
}

/// What a panic said.
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "the simulation panicked".to_owned()
    }
}

async fn simulate(scenario: &'static Scenario, options: RunOptions, slot: Slot) -> Vec<Violation> {
    let zk = start_service(&options, &slot);
    if let Some(steps) = &options.forced {
        zk.prepare(&scenario.kit.initial_ops(options.clients as usize));
        zk.force_order(steps.clone());
    }
    let resource = {
        let zk = zk.clone();
        FencedResource::new(move |event| zk.record(event))
    };
    let each = |client| {
        let context = ClientContext {
            zk: zk.clone(),
            client,
            clients: options.clients,
            resource: resource.clone(),
        };
        if options.forced.is_some() {
            // Sessions numbered in client order, as the model numbers them.
            let session = zk.connect(client);
            return scenario.kit.follow(context, session);
        }
        scenario.kit.simulate(context, options.rounds)
    };
    let quorum = scenario.kit.quorum_to_finish();
    let (finished, start) = match run_clients(&zk, &options, quorum, each).await {
        Ok(finished) => finished,
        Err(Unfinished::Broken(liveness)) => return vec![liveness],
        Err(Unfinished::OverBudget) => return Vec::new(),
    };

    let mut violations = Vec::new();
    zk.stop_faults();
    // A crashed client's session lives until the server expires it, a timeout after it last
    // heard from the session: a message still on its way when the process died (held by a
    // partition, say) puts that off.
    let waiting = madsim::time::Instant::now();
    while zk.crashed_session_alive() && waiting.elapsed() < 3 * options.sim.session_timeout {
        madsim::time::sleep(Duration::from_secs(1)).await;
    }
    let when = match zk.crashed_session_alive() {
        true => "every client finished, with a crashed client's session alive three timeouts on",
        false => "every client finished",
    };
    // With every process dead, nobody is left to tidy the recipe's persistent nodes (a
    // transaction whose coordinator died before deciding): only ephemerals, which the server
    // owes, are judged then.
    let ephemerals_only = finished.is_empty();
    let left_over = |when| orphans(&zk, scenario.kit, when, start.elapsed(), ephemerals_only);
    violations.extend(left_over(when));
    for session in finished.into_values().flatten() {
        let _ = madsim::time::timeout(Duration::from_secs(60), session.close()).await;
    }
    if violations.is_empty() {
        violations.extend(left_over("every session closed"));
    }
    violations
}

/// Starts the simulated service of a run with its fault plan, and puts it in `slot`.
pub(crate) fn start_service(options: &RunOptions, slot: &Slot) -> SimZk {
    let zk = SimZk::start(
        options.sim.clone(),
        FaultPlan {
            rates: options.faults.clone(),
            script: options.script.clone(),
        },
    );
    *lock_slot(slot) = Some(zk.clone());
    zk
}

/// The clients that finished, each with the session it ended with, and when the run began.
pub(crate) type Finished = (BTreeMap<ClientId, Option<SimClient>>, madsim::time::Instant);

/// How a client's run ended: with the session it ended with, or in a panic, which said this.
type ClientEnd = Result<Option<SimClient>, String>;

/// Why the clients of a run did not all finish.
pub(crate) enum Unfinished {
    /// A client still worked past the liveness bound, or panicked: the violation.
    Broken(Violation),
    /// The seed held more heap than [`RunOptions::memory_budget`].
    OverBudget,
}

/// Runs `each` client's loop on a node of its own, and waits until every client has finished or
/// crashed. A client still working past the liveness bound is a violation, unless crashes left
/// fewer than `quorum` working (see [`Workload::quorum_to_finish`]): then the run strands those
/// left.
///
/// [`Workload::quorum_to_finish`]: zklab_models::workload::Workload::quorum_to_finish
pub(crate) async fn run_clients(
    zk: &SimZk,
    options: &RunOptions,
    quorum: usize,
    each: impl Fn(ClientId) -> ClientRun<SimClient>,
) -> Result<Finished, Unfinished> {
    let (done_tx, mut done_rx) = mpsc::unbounded::<(ClientId, ClientEnd)>();
    let handle = madsim::runtime::Handle::current();
    for client in 0..options.clients {
        let node = handle.create_node().name(format!("c{client}")).build();
        zk.add_process(client, node.id());
        let run = each(client);
        let (zk, done_tx) = (zk.clone(), done_tx.clone());
        node.spawn(async move {
            // Caught here, a panic of the code under test ends the run as a violation; let
            // through, madsim would print its own context line for it first.
            let ended = AssertUnwindSafe(run).catch_unwind().await;
            if ended.is_ok() {
                zk.record(TraceEvent::Finished { client });
            }
            let _ = done_tx.unbounded_send((client, ended.map_err(|panic| panic_message(&panic))));
        });
    }

    let mut finished: BTreeMap<ClientId, Option<SimClient>> = BTreeMap::new();
    let start = madsim::time::Instant::now();
    loop {
        let pending: Vec<ClientId> = (0..options.clients)
            .filter(|c| !finished.contains_key(c) && !zk.is_crashed(*c))
            .collect();
        if pending.is_empty() {
            return Ok((finished, start));
        }
        if options.memory_budget.is_some_and(heap::stop_if_over) {
            return Err(Unfinished::OverBudget);
        }
        if start.elapsed() >= options.liveness_bound() {
            if zk.any_crashed() && pending.len() < quorum {
                for &client in &pending {
                    zk.strand(client);
                }
                return Ok((finished, start));
            }
            let names: Vec<String> = pending.iter().map(|c| format!("c{c}")).collect();
            let message = format!(
                "{} did not finish within {:?} of sim time (deadlocked or starved)",
                names.join(", "),
                options.liveness_bound()
            );
            return Err(Unfinished::Broken(Violation::new(
                &LIVENESS,
                start.elapsed(),
                message,
            )));
        }
        futures::select_biased! {
            done = done_rx.next() => match done {
                Some((client, Ok(session))) => { finished.insert(client, session); }
                Some((client, Err(message))) => {
                    let message = format!("c{client} panicked: {message}");
                    return Err(Unfinished::Broken(Violation::new(&PANIC, start.elapsed(), message)));
                }
                None => {}
            },
            _ = madsim::time::sleep(Duration::from_secs(1)).fuse() => {}
        }
    }
}

/// The recipe nodes left under the kit's directory that may not stay (`ephemerals_only`: of
/// those, the ephemerals), as a violation. After a crash, what a crash may leave may stay too.
fn orphans(
    zk: &SimZk,
    kit: &dyn AnyKit,
    when: &str,
    at: Duration,
    ephemerals_only: bool,
) -> Option<Violation> {
    let root = kit.root();
    let crashed = zk.any_crashed();
    let left = zk.with_server(|server| {
        let children = server.children(root).unwrap_or_default();
        children
            .into_iter()
            .filter(|child| !(kit.may_remain(child) || crashed && kit.crash_may_leave(child)))
            .map(|child| {
                let path = format!("{root}/{child}");
                let owner = server
                    .node(&path)
                    .map_or(0, |(_, stat)| stat.ephemeral_owner);
                (path, owner)
            })
            .filter(|(_, owner)| *owner != 0 || !ephemerals_only)
            .map(|(path, owner)| format!("{path} (owner s{owner})"))
            .collect::<Vec<_>>()
    });
    (!left.is_empty()).then(|| {
        Violation::new(
            &ORPHAN,
            at,
            format!("{} left after {when}: {}", left.len(), left.join(", ")),
        )
    })
}

/// The result of running many seeds.
#[derive(Clone, Debug, Default)]
pub struct SweepReport {
    /// How many seeds ran: the first this many of the sweep's, besides those [`left_out`].
    ///
    /// [`left_out`]: SweepReport::left_out
    pub seeds: u64,
    /// The seeds stopped for holding more heap than [`RunOptions::memory_budget`], by seed:
    /// not counted, nothing of them merged. The sweep stops at the first.
    pub left_out: Vec<u64>,
    /// Each failing seed with its first violation, by seed.
    pub failures: Vec<(u64, Violation)>,
    /// The faults injected across all seeds.
    pub faults: FaultCounts,
    /// For each kind, how many seeds it struck.
    pub seeds_struck: FaultCounts,
    /// The most sessions one deletion woke, across all seeds.
    pub max_wakeups_per_deletion: usize,
    /// Wall time of the sweep.
    pub elapsed: Duration,
}

impl SweepReport {
    /// Seeds per second of wall time.
    pub fn seeds_per_sec(&self) -> f64 {
        self.seeds as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A sweep's `progress` that tells nothing and never stops the sweep.
pub fn run_every_seed(_: &SeedReport, _: u64, _: u64) -> ControlFlow<()> {
    ControlFlow::Continue(())
}

/// How many threads a sweep (or a model check) runs on unless told otherwise: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many of `threads` [`on_threads`] starts for `count` items: at least one, and no more
/// than there are items, each extra thread would only start and stop.
pub fn threads_for(count: u64, threads: usize) -> usize {
    threads.clamp(1, usize::try_from(count).unwrap_or(usize::MAX).max(1))
}

/// Calls `each` on every index from 0 to `count`, on [`threads_for`] threads, each taking the
/// next index when done with one. When `each` breaks, no thread takes another index, and those
/// under way finish. So the indices run are always the first ones, `0..n`, whatever the number
/// of threads: a caller after the first failing index finds it among those run, and only the
/// thread count changes how many past it ran. Returns `n`. Both the CLI's sweep and the test
/// harness run their seeds here.
pub fn on_threads(
    count: u64,
    threads: usize,
    each: &(dyn Fn(u64) -> ControlFlow<()> + Sync),
) -> u64 {
    let stopping = AtomicBool::new(false);
    let next = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads_for(count, threads) {
            scope.spawn(|| {
                while !stopping.load(Ordering::Relaxed) {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= count {
                        break;
                    }
                    if each(index).is_break() {
                        stopping.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    next.into_inner().min(count)
}

/// Runs `count` seeds from `first` on `threads` threads ([`on_threads`]). `progress` is called
/// after each seed, on the thread that ran it, with its report, the seeds done and the failures
/// so far; when it breaks, or a seed passes its memory budget, no thread starts another seed,
/// and the seeds already under way finish. The seeds run are always the first of the `count`,
/// but for [`SweepReport::left_out`].
pub fn sweep(
    scenario: &'static Scenario,
    first: u64,
    count: u64,
    options: &RunOptions,
    threads: usize,
    progress: &(dyn Fn(&SeedReport, u64, u64) -> ControlFlow<()> + Sync),
) -> SweepReport {
    let started = Instant::now();
    let done = AtomicU64::new(0);
    let failed = AtomicU64::new(0);
    let merged = Mutex::new(SweepReport::default());
    on_threads(count, threads, &|index| {
        let seed = first.wrapping_add(index);
        let report = run_seed(scenario, seed, options);
        let failing = !report.violations.is_empty();
        let mut merged = merged
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if report.over_budget {
            merged.left_out.push(seed);
            return ControlFlow::Break(());
        }
        merged.faults.merge(&report.faults);
        merged.seeds_struck.merge(&report.faults.struck());
        merged.max_wakeups_per_deletion = merged
            .max_wakeups_per_deletion
            .max(report.max_wakeups_per_deletion);
        if let Some(violation) = report.violations.first() {
            merged.failures.push((seed, violation.clone()));
        }
        drop(merged);
        let failures = failed.fetch_add(u64::from(failing), Ordering::Relaxed);
        progress(
            &report,
            done.fetch_add(1, Ordering::Relaxed) + 1,
            failures + u64::from(failing),
        )
    });
    let mut report = merged
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    report.seeds = done.into_inner();
    report.left_out.sort_unstable();
    report.failures.sort_by_key(|(seed, _)| *seed);
    report.elapsed = started.elapsed();
    report
}

/// Runs a scenario inside the current madsim runtime and returns its trace: the form madsim's
/// own determinism check (`Runtime::check_determinism`) needs.
pub async fn simulate_trace(scenario: &'static Scenario, options: RunOptions) -> Trace {
    let slot: Slot = Arc::default();
    simulate(scenario, options, slot.clone()).await;
    let zk = lock_slot(&slot).take();
    zk.as_ref().map(report_of).unwrap_or_default().trace
}

/// What the service of a run recorded, taken out without copying.
fn report_of(zk: &SimZk) -> Recorded {
    let struck = zk.take_struck();
    let (trace, faults) = zk.take_report();
    Recorded {
        trace,
        faults,
        struck,
        abandoned_order: zk.forced_order_abandoned(),
    }
}
