//! A scenario against a real ZooKeeper: the same client loop, the same recipe, the same fenced
//! resource and the same oracles, on real sessions and wall-clock time.
//!
//! A real server tells a client less than the simulator's trace holds: no server-side record of
//! applied ops, and no zxid on watch events. So the oracles that need those (herd, wait-for
//! cycle) have nothing to read here; mutual exclusion, fencing, recipe failures, liveness and
//! orphans are judged as in the simulator.

use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use zklab_models::general_properties::ORPHAN;
use zklab_recipes::client::{
    EventType, Op, OpReply, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent,
};
use zklab_recipes::declaration::Declared;
use zklab_recipes::outcome::{Outcome, Recorder};
use zklab_recipes::parts::exclusive::Fence;
use zklab_recipes::real_zk::RealZk;
use zklab_recipes::subtree::{delete_tree, read_tree, Znode};
use zklab_sim::trace::{ClientId, Trace, TraceEvent};

use crate::host::{Host, WORK_MS};
use crate::oracle::Violation;
use crate::resource::FencedResource;
use crate::runner::LIVENESS;
use crate::scenario::Scenario;

/// How long a session waits before it tries again to reach a server it lost.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// How the real run goes.
#[derive(Clone, Debug)]
pub struct RealOptions {
    /// Number of clients.
    pub clients: u32,
    /// Rounds of work per client.
    pub rounds: u32,
    /// The session timeout each client asks for: long enough to ride out a leader election.
    pub session_timeout: Duration,
    /// Every client must finish within this much wall time.
    pub time_bound: Duration,
}

impl Default for RealOptions {
    fn default() -> Self {
        RealOptions {
            clients: 5,
            rounds: 10,
            session_timeout: Duration::from_secs(20),
            time_bound: Duration::from_secs(300),
        }
    }
}

/// The trace of a real run, shared by its clients; times are wall time since the run began.
#[derive(Clone)]
pub struct RealTrace {
    started: Instant,
    trace: Arc<Mutex<Trace>>,
    /// Requests answered with ConnectionLoss. The crate reports session states as the latest
    /// value only, so a short disconnection may leave no `Disconnected` in the trace; a request
    /// that lost its connection is the other sign that a client saw it.
    connection_losses: Arc<AtomicUsize>,
    /// The declarers given an id so far.
    declarers: Arc<AtomicU32>,
}

impl Default for RealTrace {
    fn default() -> Self {
        RealTrace {
            started: Instant::now(),
            trace: Arc::default(),
            connection_losses: Arc::default(),
            declarers: Arc::default(),
        }
    }
}

impl RealTrace {
    /// An empty trace; its clock starts now.
    pub fn new() -> Self {
        RealTrace::default()
    }

    /// Time since the trace's clock started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// A new declarer's id, unique in the run.
    pub fn new_declarer(&self) -> u32 {
        self.declarers.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Appends an event, now.
    pub fn push(&self, event: TraceEvent) {
        let at = self.started.elapsed();
        self.lock().push(at, event);
    }

    /// Ends `session` of `client` in the trace, unless it has ended there already: a session is
    /// ended both by whoever expired it on the server and by its client when told it expired.
    pub fn end_session(&self, client: ClientId, session: SessionId) {
        let mut trace = self.lock();
        let ended = trace.entries().iter().any(|entry| {
            matches!(entry.event, TraceEvent::SessionEnded { session: ended, .. } if ended == session)
        });
        if !ended {
            let at = self.started.elapsed();
            trace.push(
                at,
                TraceEvent::SessionEnded {
                    client,
                    session,
                    expired: true,
                    deleted: Vec::new(),
                },
            );
        }
    }

    /// How many rounds of their workloads the clients have finished so far: every outcome that
    /// ends a round ([`Outcome::ends_round`]), but a role (a lock, leadership, a barrier set)
    /// counts when granted rather than when let go. Lets a test strike mid-run.
    pub fn completions(&self) -> usize {
        self.lock()
            .entries()
            .iter()
            .filter(|entry| match &entry.event {
                TraceEvent::Outcome { outcome, .. } => match outcome {
                    Outcome::Granted { .. } | Outcome::Shared { .. } => true,
                    Outcome::Released { .. } => false,
                    other => other.ends_round(),
                },
                _ => false,
            })
            .count()
    }

    /// How many clients have finished their workloads so far.
    pub fn finished(&self) -> usize {
        self.lock()
            .entries()
            .iter()
            .filter(|entry| matches!(entry.event, TraceEvent::Finished { .. }))
            .count()
    }

    /// How many requests the clients have had answered with ConnectionLoss so far.
    pub fn connection_losses(&self) -> usize {
        self.connection_losses.load(Ordering::Relaxed)
    }

    /// A copy of the trace so far: the story of the run, the clients' requests, replies and
    /// watch events among it.
    pub fn snapshot(&self) -> Trace {
        self.lock().clone()
    }

    /// The trace so far as the oracles judge it: without the clients' requests, replies and
    /// watch events, which the monitors read only alongside the server's record of the ops it
    /// applied, a record a real run does not have.
    pub fn judged(&self) -> Trace {
        let mut trace = self.snapshot();
        trace.retain(|entry| {
            !matches!(
                entry.event,
                TraceEvent::Request { .. } | TraceEvent::Reply { .. } | TraceEvent::Watch { .. }
            )
        });
        trace
    }

    fn lock(&self) -> MutexGuard<'_, Trace> {
        self.trace
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A handle on a real session that writes what the application learns, and its session's
/// state changes, into the run's trace.
pub struct TracedSession {
    inner: RealZk,
    client: ClientId,
    trace: RealTrace,
    /// A handle of the session that sets no watch, so it hears only the session's news, shared
    /// by every handle: whichever takes its copy of a state change first writes it down, once.
    news: Arc<Mutex<RealZk>>,
}

impl TracedSession {
    /// A new session of `client` on the ZooKeeper at `hosts`, writing into `trace`. While an
    /// ensemble elects a leader, connecting fails for a while: it keeps trying.
    pub(crate) async fn connect(
        hosts: &str,
        session_timeout: Duration,
        client: ClientId,
        trace: &RealTrace,
    ) -> TracedSession {
        loop {
            match RealZk::connect(hosts, session_timeout).await {
                Ok(inner) => {
                    return TracedSession {
                        news: Arc::new(Mutex::new(inner.listener())),
                        inner,
                        client,
                        trace: trace.clone(),
                    }
                }
                Err(_) => tokio::time::sleep(RECONNECT_PAUSE).await,
            }
        }
    }

    /// Writes an event into the trace; a session's expiry also ends it there. A real server
    /// sends no zxid with a watch event: the trace's is -1, as on the wire.
    fn saw(&self, event: Option<ZkEvent>) -> Option<ZkEvent> {
        let (client, session) = (self.client, self.inner.session_id());
        let news = self.news.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(ZkEvent::Session(state)) = news.try_next_event() {
            self.trace.push(TraceEvent::Session {
                client,
                session,
                event: state,
            });
            if state == SessionEvent::Expired {
                self.trace.end_session(client, session);
            }
        }
        match &event {
            Some(ZkEvent::Session(_)) | None => {}
            Some(ZkEvent::Watch(watched)) => self.trace.push(TraceEvent::Watch {
                client,
                session,
                event: watched.clone(),
                zxid: -1,
                cause: watched.path.clone(),
                deletion: watched.event_type == EventType::NodeDeleted,
            }),
        }
        event
    }
}

impl ZkClient for TracedSession {
    async fn call(&self, op: Op) -> OpReply {
        let (client, session) = (self.client, self.inner.session_id());
        self.trace.push(TraceEvent::Request {
            client,
            session,
            op: op.clone(),
        });
        let reply = self.inner.call(op).await;
        if matches!(reply, Err(ZkError::ConnectionLoss)) {
            self.trace.connection_losses.fetch_add(1, Ordering::Relaxed);
        }
        self.trace.push(TraceEvent::Reply {
            client,
            session,
            reply: reply.clone(),
        });
        reply
    }

    async fn next_event(&self) -> Option<ZkEvent> {
        self.saw(self.inner.next_event().await)
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.saw(self.inner.try_next_event())
    }

    fn session_id(&self) -> SessionId {
        self.inner.session_id()
    }

    fn listener(&self) -> Self {
        TracedSession {
            inner: self.inner.listener(),
            client: self.client,
            trace: self.trace.clone(),
            news: self.news.clone(),
        }
    }

    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        self.inner.close()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self.inner.sleep(duration)
    }
}

/// The run's own client, which clears the recipe's directory before the run and reads what is
/// left after it. The faults the run strikes reach it too: it repeats a call that lost its
/// connection (it only reads, and deletes whatever the version), and opens a new session when
/// its own expired (a leader's death can outlast a session on a busy machine). Its sessions are
/// the harness's, not the recipe's: their ends are no verdict.
struct Patient {
    hosts: String,
    session_timeout: Duration,
    session: Mutex<Arc<RealZk>>,
}

impl Patient {
    async fn connect(hosts: &str, session_timeout: Duration) -> Result<Patient, ZkError> {
        let session = RealZk::connect(hosts, session_timeout).await?;
        Ok(Patient {
            hosts: hosts.to_owned(),
            session_timeout,
            session: Mutex::new(Arc::new(session)),
        })
    }

    fn current(&self) -> Arc<RealZk> {
        Arc::clone(&self.session.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl ZkClient for Patient {
    async fn call(&self, op: Op) -> OpReply {
        loop {
            match self.current().call(op.clone()).await {
                Err(ZkError::ConnectionLoss) => tokio::time::sleep(RECONNECT_PAUSE).await,
                Err(ZkError::SessionExpired) => {
                    let session = RealZk::connect(&self.hosts, self.session_timeout).await?;
                    *self.session.lock().unwrap_or_else(PoisonError::into_inner) =
                        Arc::new(session);
                }
                reply => return reply,
            }
        }
    }

    async fn next_event(&self) -> Option<ZkEvent> {
        self.current().next_event().await
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.current().try_next_event()
    }

    fn session_id(&self) -> SessionId {
        self.current().session_id()
    }

    fn listener(&self) -> Self {
        Patient {
            hosts: self.hosts.clone(),
            session_timeout: self.session_timeout,
            session: Mutex::new(Arc::new(self.current().listener())),
        }
    }

    async fn close(&self) -> Result<(), ZkError> {
        self.current().close().await
    }

    async fn sleep(&self, duration: Duration) {
        self.current().sleep(duration).await
    }
}

/// Writes what one real client's recipes tell it into the run's trace.
pub(crate) struct RealRecorder {
    pub(crate) client: ClientId,
    pub(crate) trace: RealTrace,
}

impl Recorder for RealRecorder {
    fn record(&self, session: SessionId, outcome: Outcome) {
        self.trace.push(TraceEvent::Outcome {
            client: self.client,
            session,
            outcome,
        });
    }

    fn new_declarer(&self) -> u32 {
        self.trace.new_declarer()
    }

    fn declare(&self, session: SessionId, declarer: u32, declared: &Declared) {
        self.trace.push(TraceEvent::Declared {
            client: self.client,
            session,
            declarer,
            declared: declared.clone(),
        });
    }
}

/// One client of a real run.
pub struct RealHost {
    hosts: String,
    client: ClientId,
    options: RealOptions,
    trace: RealTrace,
    resource: FencedResource,
    /// Draws the work times (xorshift; real runs need variety, not reproducibility).
    rng: AtomicU64,
}

impl Host for RealHost {
    type Session = TracedSession;

    fn index(&self) -> usize {
        self.client as usize
    }

    fn clients(&self) -> usize {
        self.options.clients as usize
    }

    async fn connect(&self) -> TracedSession {
        let timeout = self.options.session_timeout;
        TracedSession::connect(&self.hosts, timeout, self.client, &self.trace).await
    }

    fn work(&self) -> impl Future<Output = ()> + Send {
        let mut x = self.rng.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.store(x, Ordering::Relaxed);
        let span = WORK_MS.end() - WORK_MS.start() + 1;
        tokio::time::sleep(Duration::from_millis(WORK_MS.start() + x % span))
    }

    fn elapsed(&self) -> Duration {
        self.trace.started.elapsed()
    }

    fn write(&self, token: i64) -> bool {
        self.resource.write(self.client, token)
    }

    fn read(&self, token: i64) -> bool {
        self.resource.read(self.client, token)
    }

    fn recorder(&self) -> Option<Arc<dyn Recorder>> {
        Some(Arc::new(RealRecorder {
            client: self.client,
            trace: self.trace.clone(),
        }))
    }

    fn fence(&self) -> Fence {
        let resource = self.resource.clone();
        Arc::new(move |token| resource.refuse(token))
    }
}

/// What a real run found.
#[derive(Clone, Debug)]
pub struct RealReport {
    /// The whole story, as the clients saw it.
    pub trace: Trace,
    /// Every property broken, earliest first.
    pub violations: Vec<Violation>,
    /// Wall time of the workload, from the first connect to the last release.
    pub elapsed: Duration,
}

/// Runs `scenario`'s workload on the ZooKeeper at `hosts` (on the ambient tokio runtime),
/// recording into `trace`; an error means the server could not be reached to prepare or inspect
/// the run.
pub async fn run(
    scenario: &'static Scenario,
    hosts: &str,
    options: &RealOptions,
    trace: RealTrace,
) -> Result<RealReport, ZkError> {
    let root = scenario.kit.root();
    let admin = Patient::connect(hosts, options.session_timeout).await?;
    // A fresh recipe directory: what an earlier run left must not count against this one.
    delete_tree(&admin, root).await?;
    let resource = {
        let trace = trace.clone();
        FencedResource::new(move |event| trace.push(event))
    };
    let started = Instant::now();
    let mut workers = Vec::new();
    for client in 0..options.clients {
        let host = RealHost {
            hosts: hosts.to_owned(),
            client,
            options: options.clone(),
            trace: trace.clone(),
            resource: resource.clone(),
            rng: AtomicU64::new(0x9E37_79B9_7F4A_7C15 ^ u64::from(client + 1)),
        };
        let trace = trace.clone();
        let run = scenario.kit.real(host, options.rounds);
        workers.push(tokio::spawn(async move {
            let session = run.await;
            trace.push(TraceEvent::Finished { client });
            session
        }));
    }
    let mut violations = Vec::new();
    let mut sessions = Vec::new();
    for (client, worker) in workers.into_iter().enumerate() {
        let remaining = options.time_bound.saturating_sub(started.elapsed());
        // A client that did not finish in time is stopped, not left working on the server
        // while the run is judged and cleared (and the next run starts).
        let stop = worker.abort_handle();
        match tokio::time::timeout(remaining, worker).await {
            Ok(Ok(session)) => sessions.extend(session.map(|session| (client, session))),
            Ok(Err(_)) | Err(_) => {
                stop.abort();
                violations.push(Violation::new(
                    &LIVENESS,
                    started.elapsed(),
                    format!("c{client} did not finish within {:?}", options.time_bound),
                ));
            }
        }
    }
    let elapsed = started.elapsed();
    let may_remain = |path: &str| {
        let child = path.strip_prefix(root).and_then(|p| p.strip_prefix('/'));
        child.is_some_and(|child| scenario.kit.may_remain(child))
    };
    // Whose each leftover is, so that a failure says which session kept it.
    let owner = |node: &Znode| match node.stat.ephemeral_owner {
        0 => String::new(),
        owner => match sessions.iter().find(|(_, s)| s.session_id() == owner) {
            Some((client, _)) => format!(" (ephemeral of c{client}'s session {owner:#x})"),
            None => format!(" (ephemeral of session {owner:#x}, which no client holds)"),
        },
    };
    let tree = read_tree(&admin, root).await;
    // The clients' sessions close whether or not the leftovers could be read: a session left
    // open would hold its ephemerals on the server until it expired.
    for (_, session) in &sessions {
        let _ = session.close().await;
    }
    let tree = match tree {
        Ok(tree) => tree,
        Err(error) => {
            let _ = admin.close().await;
            return Err(error);
        }
    };
    let left: Vec<String> = tree
        .into_iter()
        .skip(1)
        .filter(|node| !may_remain(&node.path))
        .map(|node| format!("{}{}", node.path, owner(&node)))
        .collect();
    if !left.is_empty() {
        violations.push(Violation::new(
            &ORPHAN,
            elapsed,
            format!("left after every client finished: {}", left.join(", ")),
        ));
    }
    let _ = delete_tree(&admin, root).await;
    let _ = admin.close().await;
    violations.extend(scenario.kit.judge_real(&trace.judged()));
    let trace = trace.snapshot();
    violations.sort_by_key(|violation| violation.at);
    Ok(RealReport {
        trace,
        violations,
        elapsed,
    })
}
