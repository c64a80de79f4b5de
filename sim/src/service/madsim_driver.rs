//! [`SimZk`]: the service core driven by madsim. It reads madsim's clock for the core, hands it
//! the run's seed, and carries out what the core asks, in order: a reply or an event
//! reaches the client's code, a heartbeat is woken, a process is paused or killed, the wire's
//! pump is woken when its next delivery is due.
//!
//! One pump task delivers the wire's messages; it runs on the supervisor node, so pausing or
//! killing a client process never stops the server. Each session's heartbeat runs on its
//! client's own node, so a paused process stops pinging. madsim is single-threaded per runtime,
//! so the core's lock is never contended; it is never held across an `.await`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use madsim::runtime::Handle;
use madsim::task::{AbortHandle, NodeId};
use madsim::time::{Instant, Sleep, TimeHandle};
use zklab_recipes::client::{Op, OpReply, SessionId, ZkError};
use zklab_recipes::listeners::{sets_watch, ListenerId, Listeners};

use super::{Output, Service, SimConfig};
use crate::fault::{FaultCounts, FaultKind, FaultPlan, ScriptedFault};
use crate::forced::{ForcedKind, ForcedStep, FORCED_PATIENCE};
use crate::server::Server;
use crate::sim_client::SimClient;
use crate::trace::{ClientId, Trace, TraceEvent};

thread_local! {
    /// The service of the run this thread simulates (madsim runs a seed on one thread), for
    /// code that connects by a connect string rather than with a handle.
    static RUNNING: RefCell<Weak<Mutex<Driver>>> = const { RefCell::new(Weak::new()) };
}

/// madsim's shortest sleep: a timer set for sooner goes off this long after it was set.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// The simulated ZooKeeper service. Cheap to clone; every clone is the same service.
#[derive(Clone)]
pub struct SimZk {
    driver: Arc<Mutex<Driver>>,
}

/// The core and what madsim needs to carry out what it asks.
struct Driver {
    core: Service,
    /// The runtime's clock, held once: looking it up per call is costly.
    clock: TimeHandle,
    /// The clock's reading when the service started: the core's times count from here.
    origin: Duration,
    start: Instant,
    /// The pump task's waker, once it has run: the wire's timers wake it.
    pump: Option<Waker>,
    /// The wire's timer, re-set for each wake-up of the pump rather than made anew: making one
    /// clones the clock's handles and reads the clock.
    pump_timer: Sleep,
    /// When the pump's timers that have not fired yet go off. madsim cannot cancel a timer, so a
    /// new one is armed only when none of these wakes the pump in time: one wake-up per delivery
    /// time, not one per message.
    timers: Vec<Duration>,
    /// Each client's process.
    nodes: BTreeMap<ClientId, NodeId>,
    /// The declarers given an id so far (see [`SimZk::new_declarer`]).
    declarers: u32,
    /// The node the service started on, which deals the faults: a client may pause or kill its
    /// own process.
    supervisor: NodeId,
    /// The code waiting for each request's reply, by session and request id.
    waiters: BTreeMap<(SessionId, u64), Waiter>,
    /// Each session's handles, which its events are routed to, until its stream ends.
    events: BTreeMap<SessionId, Arc<Listeners>>,
    /// Each session's heartbeat, woken when its connection breaks.
    heartbeats: BTreeMap<SessionId, mpsc::UnboundedSender<()>>,
    /// The core's outputs being carried out (kept to reuse its allocation).
    outputs: Vec<Output>,
    /// The service's own tasks, ended with the run (see [`SimZk::end_tasks`]).
    tasks: Vec<AbortHandle>,
}

/// The code waiting for a request's reply, and the watch the request asked for, if any: the
/// handle that asked, and the op.
struct Waiter {
    reply: oneshot::Sender<OpReply>,
    watching: Option<(ListenerId, Op)>,
}

/// The driver, locked at the current sim time; what the core asked while it was locked is
/// carried out when it is unlocked. Processes are killed after the lock is let go: killing one
/// drops its code, which may record into the trace through this service on the way out.
struct Locked<'a>(Option<MutexGuard<'a, Driver>>);

impl Deref for Locked<'_> {
    type Target = Driver;

    fn deref(&self) -> &Driver {
        self.0.as_ref().expect("the driver is locked until dropped")
    }
}

impl DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Driver {
        self.0.as_mut().expect("the driver is locked until dropped")
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let Some(mut driver) = self.0.take() else {
            return;
        };
        let killed = driver.carry_out();
        drop(driver);
        kill_processes(killed);
    }
}

/// Kills the processes on `nodes`, with the driver unlocked.
fn kill_processes(nodes: Vec<NodeId>) {
    for node in nodes {
        Handle::current().kill(node);
    }
}

impl Driver {
    /// Carries out what the core asked, in order, and gives the processes to kill once the
    /// driver is unlocked. Most unlocks find nothing to do: a read of the clock or of the trace
    /// asks for nothing.
    fn carry_out(&mut self) -> Vec<NodeId> {
        let mut killed = Vec::new();
        if !self.core.has_outputs() {
            return killed;
        }
        let mut outputs = std::mem::take(&mut self.outputs);
        self.core.take_outputs(&mut outputs);
        for output in outputs.drain(..) {
            match output {
                Output::Reply { session, id, reply } => {
                    if let Some(waiter) = self.waiters.remove(&(session, id)) {
                        // The watch the reply tells of is noted before any later event comes.
                        if let (Some((listener, op)), Some(listeners)) =
                            (&waiter.watching, self.events.get(&session))
                        {
                            listeners.note_reply(*listener, op, &reply);
                        }
                        let _ = waiter.reply.send(reply);
                    }
                }
                Output::Event { session, event } => {
                    if let Some(listeners) = self.events.get(&session) {
                        listeners.deliver(event);
                    }
                }
                Output::EventsEnd { session } => {
                    if let Some(listeners) = self.events.remove(&session) {
                        listeners.end();
                    }
                }
                Output::Heartbeat { session } => {
                    if let Some(heartbeat) = self.heartbeats.get(&session) {
                        let _ = heartbeat.unbounded_send(());
                    }
                }
                Output::WakeAt(due) => self.arm_pump(due),
                Output::Pause { client, duration } => {
                    let node = self.nodes[&client];
                    Handle::current().pause(node);
                    self.spawn(async move {
                        madsim::time::sleep(duration).await;
                        Handle::current().resume(node);
                    });
                }
                Output::Kill { client } => killed.push(self.nodes[&client]),
            }
        }
        self.outputs = outputs;
        killed
    }

    /// Spawns one of the service's own tasks on the current node.
    fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.retain(|task| !task.is_finished());
        self.tasks.push(madsim::task::spawn(task).abort_handle());
    }

    /// A timer for `at` on the service's clock.
    fn sleep_until(&self, at: Duration) -> Sleep {
        self.clock.sleep_until(self.start + at)
    }

    /// Makes sure a timer wakes the pump when a delivery is due at `due`. The timer is
    /// registered here, with the pump's waker, so a sender does not wake the pump just for that.
    fn arm_pump(&mut self, due: Duration) {
        let Some(waker) = &self.pump else {
            return;
        };
        let now = self.core.now();
        self.timers.retain(|&at| at > now);
        // As madsim's own sleeps do, sleep at least `MIN_SLEEP` (a reset timer does not).
        let deadline = due.max(now + MIN_SLEEP);
        if self.timers.iter().any(|&at| at <= deadline) {
            return;
        }
        let mut timer = Pin::new(&mut self.pump_timer);
        timer.as_mut().reset(self.start + deadline);
        let armed = timer.poll(&mut Context::from_waker(waker)).is_pending();
        debug_assert!(armed, "the deadline is in the future");
        self.timers.push(deadline);
    }

    /// One run of the pump task: delivers everything due, then arms a timer for what is next.
    /// Gives the processes to kill once the driver is unlocked.
    fn pump(&mut self, waker: &Waker) -> Vec<NodeId> {
        if !self.pump.as_ref().is_some_and(|pump| pump.will_wake(waker)) {
            self.pump = Some(waker.clone());
        }
        self.core.deliver_due();
        let killed = self.carry_out();
        if let Some(due) = self.core.next_wakeup() {
            self.arm_pump(due);
        }
        killed
    }
}

impl SimZk {
    /// Starts the service on the current (supervisor) node of a madsim runtime: the wire's pump
    /// and the fault injector begin running.
    pub fn start(config: SimConfig, plan: FaultPlan) -> Self {
        let clock = TimeHandle::current();
        let (origin, start) = (clock.elapsed(), clock.now_instant());
        let seed = Handle::current().seed();
        let core = Service::new(config, plan, seed);
        let driver = Driver {
            core,
            pump_timer: clock.sleep_until(start),
            clock,
            origin,
            start,
            pump: None,
            timers: Vec::new(),
            nodes: BTreeMap::new(),
            declarers: 0,
            supervisor: madsim::plugin::node(),
            waiters: BTreeMap::new(),
            events: BTreeMap::new(),
            heartbeats: BTreeMap::new(),
            outputs: Vec::new(),
            tasks: Vec::new(),
        };
        let zk = SimZk {
            driver: Arc::new(Mutex::new(driver)),
        };
        // The code under test's own `tracing` events go into this trace; the sink does not keep
        // the service alive.
        let service = Arc::downgrade(&zk.driver);
        crate::log::capture_into(Arc::new(move |text| {
            if let Some(driver) = service.upgrade() {
                SimZk { driver }.note(text);
            }
        }));
        zk.spawn(zk.clone().pump());
        zk.spawn(zk.clone().inject_faults());
        RUNNING.with(|running| *running.borrow_mut() = Arc::downgrade(&zk.driver));
        zk
    }

    /// The service of the run this thread simulates, while it runs.
    pub fn running() -> Option<SimZk> {
        let driver = RUNNING.with(|running| running.borrow().upgrade())?;
        Some(SimZk { driver })
    }

    /// The client whose process runs the calling task, if it is one of the run's processes.
    pub fn client_here(&self) -> Option<ClientId> {
        let here = madsim::plugin::node();
        let driver = self.lock();
        let mut nodes = driver.nodes.iter();
        nodes
            .find(|(_, node)| **node == here)
            .map(|(client, _)| *client)
    }

    /// How many servers the ensemble has.
    pub fn server_count(&self) -> usize {
        self.lock().core.servers().len()
    }

    /// Whether `session`'s client believes it is connected: a session opened during an election,
    /// or pinned to a server that is down, waits for a server first.
    pub fn is_connected(&self, session: SessionId) -> bool {
        self.lock().core.is_connected(session)
    }

    /// Whether `session`'s client gave it up when the server refused its authentication, as
    /// ZooKeeper's clients do: it then told its code the session was closed.
    pub fn auth_failed(&self, session: SessionId) -> bool {
        self.lock().core.auth_failed(session)
    }

    /// The timeout of every session of the ensemble.
    pub fn session_timeout(&self) -> Duration {
        self.lock().core.config.session_timeout
    }

    /// A random id a client library makes up for itself (Curator names its lock nodes with a
    /// UUID), drawn from a stream of the run's own: the same seed gives the same ids, and a
    /// draw moves nothing else of the run.
    pub fn unique_id(&self) -> u128 {
        self.lock().core.draw_unique_id()
    }

    fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        self.lock().spawn(task);
    }

    /// Ends every task of the run, the clients' processes and the service's own, so that
    /// dropping the runtime frees them: madsim keeps a task still waiting when its runtime is
    /// dropped alive for good, with all it holds (this service among it). Call it last in the
    /// future the runtime blocks on, or in one it blocks on after the run: the runtime drops
    /// the tasks before it returns.
    pub fn end_tasks(&self) {
        let (nodes, tasks) = {
            let mut driver = self.lock();
            let nodes: Vec<NodeId> = driver.nodes.values().copied().collect();
            (nodes, std::mem::take(&mut driver.tasks))
        };
        kill_processes(nodes);
        for task in tasks {
            task.abort();
        }
    }

    fn lock(&self) -> Locked<'_> {
        let mut driver = self
            .driver
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = driver.clock.elapsed().saturating_sub(driver.origin);
        driver.core.set_time(now);
        Locked(Some(driver))
    }

    /// Registers a client process running on `node`; faults that strike processes act on it.
    pub fn add_process(&self, client: ClientId, node: NodeId) {
        let mut driver = self.lock();
        driver.nodes.insert(client, node);
        driver.core.add_process(client);
    }

    /// Opens a new session for `client`, attached to a server drawn from the seed. Call it from
    /// a task on the client's own node: the session's heartbeat runs there, so pausing the
    /// process stops its pings.
    pub fn connect(&self, client: ClientId) -> SimClient {
        self.open(client, None, false)
    }

    /// Opens a new session for `client` attached to server `server` (the first leader is 0), as a
    /// client with that one server in its connect string would; it may still move on a
    /// reconnect (and if that server is down, it waits and attaches where it can). Panics if the
    /// ensemble has no such server.
    pub fn connect_to(&self, client: ClientId, server: usize) -> SimClient {
        self.assert_server(server);
        self.open(client, Some(server), false)
    }

    /// Opens a new session for `client` that only ever attaches to server `server`, as a client
    /// with that one server in its connect string: while the server is down, it waits for it.
    /// Panics if the ensemble has no such server.
    pub fn connect_pinned(&self, client: ClientId, server: usize) -> SimClient {
        self.assert_server(server);
        self.open(client, Some(server), true)
    }

    fn assert_server(&self, server: usize) {
        let servers = self.server_count();
        assert!(
            server < servers,
            "server {server} of an ensemble of {servers}"
        );
    }

    fn open(&self, client: ClientId, server: Option<usize>, pinned: bool) -> SimClient {
        let listeners = Arc::new(Listeners::default());
        let (beat_tx, beat_rx) = mpsc::unbounded();
        let (session, forced) = {
            let mut driver = self.lock();
            let (session, forced) = driver.core.open_session(client, server, pinned);
            driver.events.insert(session, listeners.clone());
            driver.heartbeats.insert(session, beat_tx);
            (session, forced)
        };
        self.spawn(self.clone().heartbeat(session, beat_rx));
        SimClient::new(self.clone(), client, session, listeners, forced)
    }

    /// Sends an op for a session's handle `listener` and waits for its reply (see
    /// [`SimClient`]).
    pub(crate) async fn call(&self, session: SessionId, listener: ListenerId, op: Op) -> OpReply {
        let (reply, rx) = oneshot::channel();
        {
            let watching = sets_watch(&op).then(|| (listener, op.clone()));
            let mut driver = self.lock();
            let id = driver.core.call(session, op)?;
            driver
                .waiters
                .insert((session, id), Waiter { reply, watching });
        }
        rx.await.unwrap_or(Err(ZkError::ConnectionLoss))
    }

    /// Closes a session: the server ends it and its ephemerals go. Closing it again is
    /// `Closed`; closing an expired one is `SessionExpired`.
    pub(crate) async fn close(&self, session: SessionId) -> Result<(), ZkError> {
        let (reply, rx) = oneshot::channel();
        {
            let mut driver = self.lock();
            let id = driver.core.close(session)?;
            let watching = None;
            driver
                .waiters
                .insert((session, id), Waiter { reply, watching });
        }
        rx.await.unwrap_or(Err(ZkError::ConnectionLoss)).map(|_| ())
    }

    /// The server expires `session` now, as a `session-expiry` fault of its client would.
    pub fn expire_session(&self, session: SessionId) {
        self.lock().core.expire_session(session);
    }

    /// The server drops `session`'s connection now; the session lives, and its client
    /// reconnects.
    pub fn drop_connection(&self, session: SessionId) {
        self.lock().core.drop_connection(session);
    }

    /// The reply to `client`'s next request is lost after the server applies it, and the
    /// connection breaks, as a `lost-reply` fault would. Panics unless the client's process was
    /// registered with [`SimZk::add_process`], where the fault waits.
    pub fn lose_next_reply(&self, client: ClientId) {
        self.lock().core.lose_next_reply(client);
    }

    /// Strikes `client` now with a fault of `kind`, as the seed's own draws would (`duration`:
    /// how long a partition or a pause lasts), and returns once it has struck: the paused client
    /// resumes after the pause, the killed one never. A message kind strikes the client's next
    /// request.
    pub async fn strike(&self, kind: FaultKind, client: ClientId, duration: Duration) {
        let fault = ScriptedFault {
            at: self.elapsed(),
            kind,
            client,
            duration,
        };
        let supervisor = self.lock().supervisor;
        let node = Handle::current()
            .get_node(supervisor)
            .expect("the service's node lives as long as the run");
        let (struck_tx, struck_rx) = oneshot::channel();
        let zk = self.clone();
        node.spawn(async move {
            zk.lock().core.inject(fault);
            let _ = struck_tx.send(());
        });
        let _ = struck_rx.await;
    }

    /// Writes `text` into the trace as a note of the client whose process is running now;
    /// nothing when none is (the service's own node).
    fn note(&self, text: String) {
        let node = madsim::plugin::node();
        let mut driver = self.lock();
        let client = driver.nodes.iter().find(|(_, &n)| n == node);
        if let Some((&client, _)) = client {
            driver.core.record(TraceEvent::Note { client, text });
        }
    }

    /// A new declarer's id, unique in the run: the first is 1, in the order they ask, which the
    /// seed decides.
    pub fn new_declarer(&self) -> u32 {
        let mut driver = self.lock();
        driver.declarers += 1;
        driver.declarers
    }

    /// Appends an event to the trace at the current sim time.
    pub fn record(&self, event: TraceEvent) {
        self.lock().core.record(event);
    }

    /// Stops injecting faults (the workload is over; what follows is the clean-up check).
    pub fn stop_faults(&self) {
        self.lock().core.stop_faults();
    }

    /// Follower `server` dies and restarts after `down_for`, as a `server-crash` fault does: its
    /// clients lose their connections and move to another server (one pinned to it waits), and
    /// it catches up when it restarts. The trace names client 0 as struck. Panics if `server` is
    /// the leader or no server at all.
    pub fn crash_server(&self, server: usize, down_for: Duration) {
        self.assert_server(server);
        self.lock().core.crash_server(server, down_for);
    }

    /// Whether the session of a client whose process a fault killed is still alive: it lives
    /// until the server expires it.
    pub fn crashed_session_alive(&self) -> bool {
        self.lock().core.crashed_session_alive()
    }

    /// Sim time since the service started: what the trace's times count.
    pub fn elapsed(&self) -> Duration {
        self.lock().core.now()
    }

    /// Stops a client that crashes left too few working beside to finish (see
    /// [`TraceEvent::Stranded`]): its process dies as a crashed one does, and the server expires
    /// its session.
    pub fn strand(&self, client: ClientId) {
        self.lock().core.strand(client);
    }

    /// Whether a fault has killed any client's process.
    pub fn any_crashed(&self) -> bool {
        self.lock().core.any_crashed()
    }

    /// Whether a fault killed the client's process (or the run stopped it, stranded).
    pub fn is_crashed(&self, client: ClientId) -> bool {
        self.lock().core.is_crashed(client)
    }

    /// Reads the leader's state: every committed transaction.
    pub fn with_server<T>(&self, read: impl FnOnce(&Server) -> T) -> T {
        let driver = self.lock();
        let servers = driver.core.servers();
        read(servers.server(servers.leader()))
    }

    /// The trace and the faults injected, taken out at the end of a run without copying the
    /// trace; the service's own trace is left empty. Changes some follower has yet to apply
    /// are told with the sessions notified so far.
    pub fn take_report(&self) -> (Trace, FaultCounts) {
        self.lock().core.take_report()
    }

    /// Makes the tree the clients will find: `ops` applied by a session of its own, closed
    /// again, before any client connects (as a model checker's initial state has it).
    pub fn prepare(&self, ops: &[Op]) {
        self.lock().core.prepare(ops);
    }

    /// Forces the run through `steps` in order (see [`crate::forced`]): a request reaches the
    /// server, but is applied (or dropped, or applied with its reply lost) only when the next
    /// step names its client; a session expires when its step comes; a client's own step waits
    /// for its turn ([`SimZk::forced_turn`]). Once every step is taken, or none has been for
    /// [`FORCED_PATIENCE`] of sim time (the run has left the forced path), the run goes on
    /// freely; a note in the trace says which.
    pub fn force_order(&self, steps: Vec<ForcedStep>) {
        self.lock().core.force_order(steps);
        let zk = self.clone();
        self.spawn(async move {
            loop {
                madsim::time::sleep(FORCED_PATIENCE / 4).await;
                if !zk.lock().core.check_forced_patience() {
                    return;
                }
            }
        });
    }

    /// Why the forced order was given up, if it was: the run after that point is not the one
    /// the order described, and what it finds is no counterexample's.
    pub fn forced_order_abandoned(&self) -> Option<String> {
        self.lock().core.forced_order_abandoned()
    }

    /// Waits for client `client`'s step of kind `kind` to come in the forced order, and takes
    /// it: true. False at once when no order is forced, or once it is over.
    pub fn forced_turn(
        &self,
        client: ClientId,
        kind: ForcedKind,
    ) -> impl std::future::Future<Output = bool> + Send + '_ {
        futures::future::poll_fn(move |cx| self.poll_forced_turn(client, kind, Some(cx)))
    }

    /// Takes client `client`'s step of kind `kind` if its turn has come: ready with true; ready
    /// with false when no order is forced, or it is over; pending otherwise, and `cx`, if
    /// given, is woken when a step is taken.
    pub(crate) fn poll_forced_turn(
        &self,
        client: ClientId,
        kind: ForcedKind,
        cx: Option<&Context<'_>>,
    ) -> Poll<bool> {
        let waker = cx.map(Context::waker);
        match self.lock().core.take_forced_turn(client, kind, waker) {
            Some(taken) => Poll::Ready(taken),
            None => Poll::Pending,
        }
    }

    /// Every fault injected so far, in order, as a script that strikes each again in a run of
    /// the same workload (see [`crate::fault::ScriptedFault`]): a message fault's time is when
    /// its client sent the request it struck, so that the scripted fault, which strikes the
    /// client's next message, strikes the same one.
    pub fn take_struck(&self) -> Vec<ScriptedFault> {
        self.lock().core.take_struck()
    }

    /// Delivers the wire's messages in order, forever.
    async fn pump(self) {
        std::future::poll_fn(|cx| {
            let killed = self.lock().pump(cx.waker());
            kill_processes(killed);
            Poll::<()>::Pending
        })
        .await
    }

    /// Keeps a session's connection alive from the client's side (see
    /// [`Service::heartbeat`]), on the client's own node: a paused process stops pinging.
    async fn heartbeat(self, session: SessionId, mut signal: mpsc::UnboundedReceiver<()>) {
        use futures::{FutureExt, StreamExt};
        loop {
            let wake_at = {
                let mut driver = self.lock();
                let Some(at) = driver.core.heartbeat_due(session) else {
                    return;
                };
                driver.sleep_until(at)
            };
            futures::select_biased! {
                _ = signal.next() => continue,
                _ = wake_at.fuse() => {}
            }
            self.lock().core.heartbeat(session);
        }
    }

    /// Strikes the plan's process, session, server and scripted faults, each at its time.
    async fn inject_faults(self) {
        self.lock().core.start_faults();
        loop {
            let sleep = {
                let driver = self.lock();
                let Some(at) = driver.core.next_fault_at() else {
                    return;
                };
                driver.sleep_until(at)
            };
            sleep.await;
            if !self.lock().core.strike_next_fault() {
                return;
            }
        }
    }
}
