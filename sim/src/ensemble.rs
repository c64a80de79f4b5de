//! The simulated ZooKeeper service under madsim: the servers (one standalone, or a leader and
//! its followers, see [`crate::replicas`]), the wire between them and every client, the leader's
//! session tracker, and the fault injector.
//!
//! The wire is one queue of deliveries ordered by (sim time, sequence). A message's delivery time
//! is never earlier than the previous one of the same session in the same direction, so each
//! session is FIFO while sessions overtake each other. One pump task delivers; it runs on the
//! supervisor node, so pausing or killing a client process never stops the server.
//!
//! Connection state is kept as the client library keeps it: `Connected`, `Disconnected` (ops wait
//! for the reconnect), `Expired` or `Closed`. A broken connection fails the ops in flight with
//! ConnectionLoss and loses the watch events in flight; the server drops the session's watches,
//! and the client re-registers those it holds when it reconnects, as ZooKeeper's client does.
//!
//! A session is attached to one server. Its reads are served there, possibly stale on a
//! follower; its writes go through the leader, and their replies wait until its own server has
//! applied them.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use madsim::rand::{thread_rng, GlobalRng, Rng};
use madsim::task::NodeId;
use madsim::time::{Instant, Sleep, TimeHandle};
use zklab_recipes::client::{EventType, Op, OpReply, SessionEvent, SessionId, Zxid};
use zklab_recipes::client::{ZkError, ZkEvent};

use crate::client::SimClient;
use crate::fault::{FaultCounts, FaultKind, FaultPlan, ScriptedFault};
use crate::forced::{ForcedKind, ForcedOrder, ForcedStep, FORCED_PATIENCE};
use crate::notified::Gathering;
use crate::packet;
use crate::path::validate_op;
use crate::replicas::Replicas;
use crate::server::{DeletionOrder, Notification, Server};
use crate::trace::{ClientId, OpText, Trace, TraceEvent};
use crate::watch::SessionWatches;

/// madsim's shortest sleep: a timer set for sooner goes off this long after it was set.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// Timing of the simulated service, in ZooKeeper's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// The negotiated session timeout. Clients ping at a third of it and declare the connection
    /// lost after two thirds without hearing from the server; the server expires a session it has
    /// not heard from for the whole of it.
    pub session_timeout: Duration,
    /// The range of a session's base one-way latency (drawn once per session, so sessions overtake
    /// each other).
    pub latency: (Duration, Duration),
    /// Extra per-message jitter, at most.
    pub jitter: Duration,
    /// The range of the pause before a client tries to reconnect.
    pub reconnect_delay: (Duration, Duration),
    /// How many servers the ensemble has. One is a standalone server, whose every read is up
    /// to date; with more, each session attaches to one of them, and a follower serves its
    /// sessions' reads from a state that can lag behind the leader's writes.
    pub servers: usize,
    /// The range of the delay after which a follower applies a transaction the leader has
    /// committed (drawn per follower and transaction, in commit order).
    pub follower_lag: (Duration, Duration),
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            session_timeout: Duration::from_secs(6),
            latency: (Duration::from_millis(1), Duration::from_millis(5)),
            jitter: Duration::from_millis(1),
            reconnect_delay: (Duration::from_millis(10), Duration::from_millis(200)),
            servers: 1,
            follower_lag: (Duration::from_millis(1), Duration::from_millis(20)),
        }
    }
}

/// What a session's client library believes about its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConnState {
    Connected,
    Disconnected,
    Expired,
    Closed,
}

/// What travels from a client to the server.
#[derive(Debug)]
enum Request {
    Op { id: u64, op: Op },
    Ping,
    Close { id: u64 },
}

/// What travels from the server to a client.
#[derive(Debug)]
enum Response {
    /// The reply, and the zxid of the state that answered (the client's last zxid seen).
    Reply {
        id: u64,
        reply: OpReply,
        zxid: Zxid,
    },
    Pong,
    Watch(Notification, i64, bool),
    /// The session is closed: after the events its own close fired (its ephemerals' watches).
    Closed {
        id: u64,
    },
    /// The server closes the connection of a session it expired, after the events the expiry
    /// fired for the session itself.
    Drop,
}

/// One entry of the wire or the server's timers.
#[derive(Debug)]
enum Delivery {
    ToServer {
        session: SessionId,
        epoch: u64,
        request: Request,
    },
    ToClient {
        session: SessionId,
        epoch: u64,
        response: Response,
    },
    ExpiryCheck {
        session: SessionId,
    },
    /// A follower applies the next transaction it has not.
    Replicate {
        server: usize,
    },
}

/// Every message in flight, delivered in order of (delivery time, send order). The order is a
/// heap of small keys and the deliveries wait in slots beside it: deliveries are large, and
/// keeping them in order directly would move them around on every send and delivery.
#[derive(Default)]
struct Wire {
    order: BinaryHeap<Reverse<(Duration, u64, usize)>>,
    slots: Vec<Option<Delivery>>,
    free: Vec<usize>,
    sent: u64,
}

impl Wire {
    /// When the first delivery is due.
    fn first_due(&self) -> Option<Duration> {
        self.order.peek().map(|&Reverse((at, _, _))| at)
    }

    /// Puts a delivery on the wire, due at `at`.
    fn push(&mut self, at: Duration, delivery: Delivery) {
        self.sent += 1;
        self.push_in_place(at, self.sent, delivery);
    }

    /// Puts a delivery on the wire with the sequence number it was sent with, so a delivery held
    /// back (by a partition) keeps its place among the session's messages due at the same time.
    fn push_in_place(&mut self, at: Duration, sequence: u64, delivery: Delivery) {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(delivery);
                slot
            }
            None => {
                self.slots.push(Some(delivery));
                self.slots.len() - 1
            }
        };
        self.order.push(Reverse((at, sequence, slot)));
    }

    /// Takes the first delivery, with its sequence number, if it is due by `now`.
    fn pop_due(&mut self, now: Duration) -> Option<(u64, Delivery)> {
        let &Reverse((at, sequence, slot)) = self.order.peek()?;
        if at > now {
            return None;
        }
        self.order.pop();
        self.free.push(slot);
        self.slots[slot].take().map(|delivery| (sequence, delivery))
    }
}

/// A request its server answers only once it has applied zxid `until`: a write's reply (the
/// client reads its own writes), a sync, or a read behind them (a session's requests are
/// answered in order).
struct Parked {
    id: u64,
    until: Zxid,
    answer: Answer,
}

/// What a parked request gets when its turn comes.
enum Answer {
    /// The leader's reply to a write.
    Reply(OpReply),
    /// A read (or sync) to serve from the server's state then.
    Read(Op),
    /// The session's end: closed (the close's reply) or expired (the connection closed), told
    /// once its server has fired the watches the end fired for the session itself.
    Ended(Response),
}

/// One session's connection, both ends.
struct Conn {
    client: ClientId,
    /// The server it is attached to.
    server: usize,
    /// Whether it has reached a server yet: a session opened during an election waits.
    attached: bool,
    /// The one server in the client's connect string, if it was given one: it reconnects
    /// there and nowhere else.
    pinned: Option<usize>,
    /// The last zxid the client has seen in a reply: it never attaches to a server behind it,
    /// and re-registers its watches with it.
    seen: Zxid,
    /// Requests answered, in order, once the server has applied what they wait for.
    parked: VecDeque<Parked>,
    state: ConnState,
    /// Bumped on every break: deliveries of an older connection are dropped.
    epoch: u64,
    /// Ops sent on the current connection, awaiting replies.
    pending: BTreeMap<u64, oneshot::Sender<OpReply>>,
    /// Ops issued while disconnected, sent once reconnected.
    held_ops: Vec<(u64, Request, oneshot::Sender<OpReply>)>,
    /// The reads in flight that ask for a watch, by request id: their replies set it.
    watching: BTreeMap<u64, Op>,
    /// The watches the client holds, which it re-registers on reconnecting.
    watches: SessionWatches,
    events: mpsc::UnboundedSender<ZkEvent>,
    heartbeat: mpsc::UnboundedSender<()>,
    base_latency: Duration,
    to_server_floor: Duration,
    to_client_floor: Duration,
    server_heard: Duration,
    client_heard: Duration,
    client_sent: Duration,
    partitioned_until: Duration,
    next_id: u64,
}

impl Conn {
    /// Notes an op sent on the current connection: a read that asks for a watch sets it when
    /// its reply arrives.
    fn note_sent(&mut self, id: u64, op: &Op) {
        if matches!(
            op,
            Op::Exists { watch: true, .. }
                | Op::GetData { watch: true, .. }
                | Op::GetChildren { watch: true, .. }
        ) {
            self.watching.insert(id, op.clone());
        }
    }
}

/// One simulated client process.
struct Process {
    node: NodeId,
    session: Option<SessionId>,
    crashed: bool,
    /// Scripted message faults waiting for this client's next request.
    armed: Vec<FaultKind>,
}

struct World {
    /// The runtime's clock and generator, held once: looking them up per call is costly.
    clock: TimeHandle,
    rng: GlobalRng,
    /// The run's seed, which keys the order a session's end deletes its ephemerals in. Taken
    /// from the seed rather than drawn, so that it leaves every other draw of the run as it was.
    seed: u64,
    /// The clock's reading when the service started: trace times count from here.
    origin: Duration,
    /// The sim time, read once per lock of the world: madsim's clock stands still while a task
    /// runs, and every reading of it takes a lock of its own.
    now: Duration,
    servers: Replicas,
    /// The changes whose notifications are told once every server has applied them.
    gathering: Gathering,
    /// Per follower, when it applies the last transaction scheduled for it.
    follower_due: Vec<Duration>,
    /// Per server, until when it is down (a crashed follower restarts then).
    down_until: Vec<Duration>,
    /// Per server, until when it lags further behind than usual, and by how much more.
    lag_spikes: Vec<(Duration, Duration)>,
    config: SimConfig,
    plan: FaultPlan,
    trace: Trace,
    counts: FaultCounts,
    /// Every fault injected, as the script that strikes it again (see [`SimZk::take_struck`]).
    struck: Vec<ScriptedFault>,
    /// The order forced on the run, if any ([`SimZk::force_order`]).
    forced: ForcedOrder,
    /// Requests that reached the server before the forced order let it apply them, in order.
    held: VecDeque<(SessionId, Request)>,
    start: Instant,
    wire: Wire,
    /// The pump task's waker, once it has run: the wire's timers wake it.
    pump: Option<Waker>,
    /// The wire's timer, re-set for each wake-up of the pump rather than made anew: making one
    /// clones the clock's handles and reads the clock.
    pump_timer: Sleep,
    /// When the pump's timers that have not fired yet go off. madsim cannot cancel a timer, so a
    /// new one is armed only when none of these wakes the pump in time: one wake-up per delivery
    /// time, not one per message.
    timers: Vec<Duration>,
    conns: BTreeMap<SessionId, Conn>,
    processes: BTreeMap<ClientId, Process>,
    faults_stopped: bool,
    /// The node the service started on, which deals the faults: a client may pause or kill its
    /// own process.
    supervisor: NodeId,
}

/// The simulated ZooKeeper service. Cheap to clone; every clone is the same service.
#[derive(Clone)]
pub struct SimZk {
    world: Arc<Mutex<World>>,
}

impl SimZk {
    /// Starts the service on the current (supervisor) node of a madsim runtime: the wire's pump
    /// and the fault injector begin running.
    pub fn start(config: SimConfig, plan: FaultPlan) -> Self {
        let clock = TimeHandle::current();
        let (origin, start) = (clock.elapsed(), clock.now_instant());
        let world = World {
            origin,
            now: Duration::ZERO,
            start,
            pump_timer: clock.sleep_until(start),
            clock,
            rng: thread_rng(),
            seed: madsim::runtime::Handle::current().seed(),
            servers: Replicas::new(config.servers),
            gathering: Gathering::default(),
            follower_due: vec![Duration::ZERO; config.servers.max(1)],
            down_until: vec![Duration::ZERO; config.servers.max(1)],
            lag_spikes: vec![(Duration::ZERO, Duration::ZERO); config.servers.max(1)],
            config,
            plan,
            trace: Trace::new(),
            counts: FaultCounts::default(),
            struck: Vec::new(),
            forced: ForcedOrder::default(),
            held: VecDeque::new(),
            wire: Wire::default(),
            pump: None,
            timers: Vec::new(),
            conns: BTreeMap::new(),
            processes: BTreeMap::new(),
            faults_stopped: false,
            supervisor: madsim::plugin::node(),
        };
        let zk = SimZk {
            world: Arc::new(Mutex::new(world)),
        };
        // The code under test's own `tracing` events go into this trace; the sink does not keep
        // the service alive.
        let service = Arc::downgrade(&zk.world);
        crate::log::capture_into(Arc::new(move |text| {
            if let Some(world) = service.upgrade() {
                SimZk { world }.note(text);
            }
        }));
        madsim::task::spawn(zk.clone().pump());
        madsim::task::spawn(zk.clone().inject_faults());
        zk
    }

    fn lock(&self) -> MutexGuard<'_, World> {
        let mut world = self
            .world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        world.now = world.clock.elapsed().saturating_sub(world.origin);
        world
    }

    /// Registers a client process running on `node`; faults that strike processes act on it.
    pub fn add_process(&self, client: ClientId, node: NodeId) {
        let process = Process {
            node,
            session: None,
            crashed: false,
            armed: Vec::new(),
        };
        self.lock().processes.insert(client, process);
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
        let servers = self.lock().servers.len();
        assert!(
            server < servers,
            "server {server} of an ensemble of {servers}"
        );
    }

    fn open(&self, client: ClientId, server: Option<usize>, pinned: bool) -> SimClient {
        let (events_tx, events_rx) = mpsc::unbounded();
        let (beat_tx, beat_rx) = mpsc::unbounded();
        let (session, forced) = {
            let mut w = self.lock();
            let now = w.now();
            let before = w.servers.applied(w.servers.leader());
            let session = w.servers.open_session();
            w.replicate_since(before);
            let (low, high) = w.config.latency;
            let base_latency = w.rng.gen_range(low..=high);
            // No server is ready during an election: the session waits for its end.
            let picked = match server {
                Some(server) if w.down_until[server] > now => None,
                Some(server) => Some(server),
                None => w.pick_server(0, None),
            };
            let state = match picked {
                Some(_) => ConnState::Connected,
                None => ConnState::Disconnected,
            };
            let pinned = server.filter(|_| pinned);
            let server = picked.unwrap_or(w.servers.leader());
            let conn = Conn {
                client,
                server,
                attached: picked.is_some(),
                pinned,
                seen: 0,
                parked: VecDeque::new(),
                state,
                epoch: 0,
                pending: BTreeMap::new(),
                held_ops: Vec::new(),
                watching: BTreeMap::new(),
                watches: SessionWatches::default(),
                events: events_tx,
                heartbeat: beat_tx,
                base_latency,
                to_server_floor: now,
                to_client_floor: now,
                server_heard: now.max(w.down_until[w.servers.leader()]),
                client_heard: now,
                client_sent: now,
                partitioned_until: Duration::ZERO,
                next_id: 0,
            };
            w.conns.insert(session, conn);
            if let Some(process) = w.processes.get_mut(&client) {
                process.session = Some(session);
            }
            w.trace
                .push(now, TraceEvent::SessionOpened { client, session });
            if picked.is_some() {
                w.trace_attached(session);
            }
            let timeout = w.config.session_timeout;
            w.schedule(now + timeout, Delivery::ExpiryCheck { session });
            (session, !w.forced.is_over())
        };
        madsim::task::spawn(self.clone().heartbeat(session, beat_rx));
        SimClient::new(self.clone(), client, session, events_rx, forced)
    }

    /// Sends an op for a session and waits for its reply (see [`SimClient`]).
    pub(crate) async fn call(&self, session: SessionId, op: Op) -> OpReply {
        let (tx, rx) = oneshot::channel();
        {
            let mut w = self.lock();
            let now = w.now();
            let Some(conn) = w.conns.get_mut(&session) else {
                return Err(ZkError::SessionExpired);
            };
            let client = conn.client;
            conn.next_id += 1;
            let id = conn.next_id;
            let state = conn.state;
            w.trace.push(
                now,
                TraceEvent::Request {
                    client,
                    session,
                    op: op.clone(),
                },
            );
            // The client library refuses a malformed path before it looks at its connection,
            // but after it knows it was closed.
            let refused = match state {
                ConnState::Closed => Some(ZkError::Closed),
                _ if validate_op(&op).is_err() => Some(ZkError::BadArguments),
                ConnState::Connected => {
                    w.conn(session).note_sent(id, &op);
                    w.send_to_server(session, Request::Op { id, op });
                    w.conn(session).pending.insert(id, tx);
                    None
                }
                ConnState::Disconnected => {
                    w.conn(session)
                        .held_ops
                        .push((id, Request::Op { id, op }, tx));
                    None
                }
                ConnState::Expired => Some(ZkError::SessionExpired),
            };
            if let Some(error) = refused {
                w.trace.push(
                    now,
                    TraceEvent::Reply {
                        client,
                        session,
                        reply: Err(error),
                    },
                );
                return Err(error);
            }
        }
        rx.await.unwrap_or(Err(ZkError::ConnectionLoss))
    }

    /// Closes a session: the server ends it and its ephemerals go. Closing it again is
    /// `Closed`; closing an expired one is `SessionExpired`.
    pub(crate) async fn close(&self, session: SessionId) -> Result<(), ZkError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut w = self.lock();
            let Some(conn) = w.conns.get_mut(&session) else {
                return Err(ZkError::SessionExpired);
            };
            conn.next_id += 1;
            let id = conn.next_id;
            match conn.state {
                ConnState::Connected => {
                    w.send_to_server(session, Request::Close { id });
                    w.conn(session).pending.insert(id, tx);
                }
                ConnState::Disconnected => {
                    w.conn(session)
                        .held_ops
                        .push((id, Request::Close { id }, tx));
                }
                // Closed by its application all the same: later calls fail with Closed.
                ConnState::Expired => {
                    w.conn(session).state = ConnState::Closed;
                    return Err(ZkError::SessionExpired);
                }
                ConnState::Closed => return Err(ZkError::Closed),
            }
        }
        rx.await.unwrap_or(Err(ZkError::ConnectionLoss)).map(|_| ())
    }

    /// The server expires `session` now, as a `session-expiry` fault of its client would.
    pub fn expire_session(&self, session: SessionId) {
        let mut w = self.lock();
        if !w.conns.contains_key(&session) || !w.servers.session_alive(session) {
            return;
        }
        w.expire(session);
        let client = w.conn(session).client;
        w.fault(
            FaultKind::SessionExpiry,
            client,
            format!("server expires s{session}"),
        );
    }

    /// The server drops `session`'s connection now; the session lives, and its client
    /// reconnects.
    pub fn drop_connection(&self, session: SessionId) {
        let mut w = self.lock();
        if !w.conns.contains_key(&session) {
            return;
        }
        if w.conn(session).state != ConnState::Connected {
            return;
        }
        let client = w.conn(session).client;
        w.disconnect(session);
        w.fault(
            FaultKind::ConnectionLoss,
            client,
            format!("s{session} connection dropped"),
        );
    }

    /// The reply to `client`'s next request is lost after the server applies it, and the
    /// connection breaks, as a `lost-reply` fault would. Panics unless the client's process was
    /// registered with [`SimZk::add_process`], where the fault waits.
    pub fn lose_next_reply(&self, client: ClientId) {
        let mut w = self.lock();
        let process = w.processes.get_mut(&client).unwrap_or_else(|| {
            panic!("lose_next_reply: c{client} has no process; register it with add_process")
        });
        process.armed.push(FaultKind::LostReply);
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
        let node = madsim::runtime::Handle::current()
            .get_node(supervisor)
            .expect("the service's node lives as long as the run");
        let (struck_tx, struck_rx) = oneshot::channel();
        let zk = self.clone();
        node.spawn(async move {
            zk.inject(fault);
            let _ = struck_tx.send(());
        });
        let _ = struck_rx.await;
    }

    /// Writes `text` into the trace as a note of the client whose process is running now;
    /// nothing when none is (the service's own node).
    fn note(&self, text: String) {
        let node = madsim::plugin::node();
        let mut w = self.lock();
        let now = w.now();
        let client = w.processes.iter().find(|(_, process)| process.node == node);
        if let Some((&client, _)) = client {
            w.trace.push(now, TraceEvent::Note { client, text });
        }
    }

    /// Appends an event to the trace at the current sim time.
    pub fn record(&self, event: TraceEvent) {
        let mut w = self.lock();
        let now = w.now();
        w.trace.push(now, event);
    }

    /// Stops injecting faults (the workload is over; what follows is the clean-up check).
    pub fn stop_faults(&self) {
        self.lock().faults_stopped = true;
    }

    /// Follower `server` dies and restarts after `down_for`, as a `server-crash` fault does: its
    /// clients lose their connections and move to another server (one pinned to it waits), and
    /// it catches up when it restarts. The trace names client 0 as struck. Panics if `server` is
    /// the leader or no server at all.
    pub fn crash_server(&self, server: usize, down_for: Duration) {
        self.assert_server(server);
        let mut w = self.lock();
        assert_ne!(
            server,
            w.servers.leader(),
            "the leader steps down, it does not crash"
        );
        let until = w.now() + down_for;
        w.crash_server(server, until);
        let detail = format!("server {server} down for {down_for:?}");
        w.fault(FaultKind::ServerCrash, 0, detail);
    }

    /// Whether the session of a client whose process a fault killed is still alive: it lives
    /// until the server expires it.
    pub fn crashed_session_alive(&self) -> bool {
        let w = self.lock();
        w.processes
            .values()
            .filter(|process| process.crashed)
            .filter_map(|process| process.session)
            .any(|session| w.servers.session_alive(session))
    }

    /// Sim time since the service started: what the trace's times count.
    pub fn elapsed(&self) -> Duration {
        self.lock().now()
    }

    /// Stops a client that crashes left too few working beside to finish (see
    /// [`TraceEvent::Stranded`]): its process dies as a crashed one does, and the server expires
    /// its session.
    pub fn strand(&self, client: ClientId) {
        let mut w = self.lock();
        w.kill(client);
        let now = w.now();
        w.trace.push(now, TraceEvent::Stranded { client });
    }

    /// Whether a fault has killed any client's process.
    pub fn any_crashed(&self) -> bool {
        self.lock()
            .processes
            .values()
            .any(|process| process.crashed)
    }

    /// Whether a fault killed the client's process (or the run stopped it, stranded).
    pub fn is_crashed(&self, client: ClientId) -> bool {
        self.lock()
            .processes
            .get(&client)
            .is_some_and(|p| p.crashed)
    }

    /// Reads the leader's state: every committed transaction.
    pub fn with_server<T>(&self, read: impl FnOnce(&Server) -> T) -> T {
        let w = self.lock();
        read(w.servers.server(w.servers.leader()))
    }

    /// The trace and the faults injected, taken out at the end of a run without copying the
    /// trace; the service's own trace is left empty. Changes some follower has yet to apply
    /// are told with the sessions notified so far.
    pub fn take_report(&self) -> (Trace, FaultCounts) {
        let mut w = self.lock();
        let now = w.now();
        for record in w.gathering.unfinished() {
            w.trace.push(now, record);
        }
        (std::mem::take(&mut w.trace), w.counts)
    }

    /// Makes the tree the clients will find: `ops` applied by a session of its own, closed
    /// again, before any client connects (as a model checker's initial state has it).
    pub fn prepare(&self, ops: &[Op]) {
        let mut w = self.lock();
        let before = w.servers.applied(w.servers.leader());
        let session = w.servers.open_session();
        for op in ops {
            w.servers.apply(session, op, 0);
        }
        w.servers
            .end_session(session, 0, false, DeletionOrder::ByPath);
        w.replicate_since(before);
    }

    /// Forces the run through `steps` in order (see [`crate::forced`]): a request reaches the
    /// server, but is applied (or dropped, or applied with its reply lost) only when the next
    /// step names its client; a session expires when its step comes; a client's own step waits
    /// for its turn ([`SimZk::forced_turn`]). Once every step is taken, or none has been for
    /// [`FORCED_PATIENCE`] of sim time (the run has left the forced path), the run goes on
    /// freely; a note in the trace says which.
    pub fn force_order(&self, steps: Vec<ForcedStep>) {
        {
            let mut w = self.lock();
            let now = w.now();
            w.forced = ForcedOrder::new(steps, now);
        }
        let zk = self.clone();
        madsim::task::spawn(async move {
            loop {
                madsim::time::sleep(FORCED_PATIENCE / 4).await;
                let mut w = zk.lock();
                let now = w.now();
                let Some(step) = w.forced.next_step() else {
                    return;
                };
                if w.forced.out_of_patience(now) {
                    let (taken, total) = w.forced.progress();
                    let text = format!(
                        "the forced order stops at its step {} of {total} ({} c{}): it has not \
                         come for {FORCED_PATIENCE:?}; the run goes on freely",
                        taken + 1,
                        step.kind.name(),
                        step.client
                    );
                    w.forced.give_up();
                    w.trace.push(
                        now,
                        TraceEvent::Note {
                            client: step.client,
                            text,
                        },
                    );
                    w.take_forced_steps();
                    return;
                }
            }
        });
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
        let mut w = self.lock();
        match w.forced.next_step() {
            None => Poll::Ready(false),
            Some(next) if next == (ForcedStep { client, kind }) => {
                let now = w.now();
                w.forced.take_next(now);
                w.note_forced_order_done(client);
                w.take_forced_steps();
                Poll::Ready(true)
            }
            Some(_) => {
                if let Some(cx) = cx {
                    w.forced.wait(cx.waker());
                }
                Poll::Pending
            }
        }
    }

    /// Every fault injected so far, in order, as a script that strikes each again in a run of
    /// the same workload: its time, kind, client and drawn duration. A message fault's time is
    /// when its client sent the request it struck (the reorder's: when the message it held up
    /// was sent), so that the scripted fault, which strikes the client's next message, strikes
    /// the same one.
    pub fn take_struck(&self) -> Vec<ScriptedFault> {
        std::mem::take(&mut self.lock().struck)
    }

    /// Delivers the wire's messages in order, forever.
    async fn pump(self) {
        std::future::poll_fn(|cx| {
            self.lock().pump(cx.waker());
            Poll::<()>::Pending
        })
        .await
    }

    /// Keeps a session's connection alive from the client's side: pings when idle, declares the
    /// connection lost when the server has been silent too long, and reconnects.
    async fn heartbeat(self, session: SessionId, mut signal: mpsc::UnboundedReceiver<()>) {
        use futures::{FutureExt, StreamExt};
        loop {
            let wake_at = {
                let mut w = self.lock();
                let now = w.now();
                let third = w.config.session_timeout / 3;
                let (low, high) = w.config.reconnect_delay;
                let conn = w.conn(session);
                let wake_at = match conn.state {
                    ConnState::Connected => {
                        (conn.client_sent + third).min(conn.client_heard + 2 * third)
                    }
                    ConnState::Disconnected => now + w.rng.gen_range(low..=high),
                    ConnState::Expired | ConnState::Closed => return,
                };
                w.sleep_until(wake_at)
            };
            futures::select_biased! {
                _ = signal.next() => continue,
                _ = wake_at.fuse() => {}
            }
            let mut w = self.lock();
            let now = w.now();
            let third = w.config.session_timeout / 3;
            let conn = w.conn(session);
            match conn.state {
                ConnState::Connected if now >= conn.client_heard + 2 * third => {
                    w.disconnect(session)
                }
                ConnState::Connected if now >= conn.client_sent + third => {
                    w.send_to_server(session, Request::Ping);
                }
                ConnState::Disconnected => w.reconnect(session),
                _ => {}
            }
        }
    }

    /// Draws and injects the process and session faults of the plan, and its scripted faults.
    async fn inject_faults(self) {
        let (mut script, total_rate) = {
            let w = self.lock();
            let mut script = w.plan.script.clone();
            script.sort_by_key(|fault| std::cmp::Reverse(fault.at));
            let rate: f64 = FaultKind::ALL.iter().map(|&k| w.rate(k)).sum();
            (script, rate)
        };
        let mut rng = self.lock().rng.clone();
        let mut next_random = draw_interval(&mut rng, total_rate);
        loop {
            let next_scripted = script.last().map(|fault| fault.at);
            let (at, scripted) = match (next_scripted, next_random) {
                (Some(s), Some(r)) if s <= r => (s, true),
                (_, Some(r)) => (r, false),
                (Some(s), None) => (s, true),
                (None, None) => return,
            };
            let sleep = self.lock().sleep_until(at);
            sleep.await;
            if self.lock().faults_stopped {
                return;
            }
            let fault = if scripted {
                script.pop()
            } else {
                next_random = next_random
                    .zip(draw_interval(&mut rng, total_rate))
                    .map(|(a, b)| a + b);
                self.draw_fault(total_rate)
            };
            if let Some(fault) = fault {
                self.inject(fault);
            }
        }
    }

    /// Picks a kind by rate, a live client and a duration.
    fn draw_fault(&self, total_rate: f64) -> Option<ScriptedFault> {
        let w = self.lock();
        let mut rng = w.rng.clone();
        let mut pick = rng.gen_range(0.0..total_rate);
        let kind = FaultKind::ALL.into_iter().find(|&kind| {
            pick -= w.rate(kind);
            pick < 0.0 && w.rate(kind) > 0.0
        })?;
        let live: Vec<ClientId> = w
            .processes
            .iter()
            .filter(|(_, p)| !p.crashed)
            .map(|(&c, _)| c)
            .collect();
        if live.is_empty() {
            return None;
        }
        let client = live[rng.gen_range(0..live.len())];
        let timeout = w.config.session_timeout;
        let duration = rng.gen_range(timeout / 3..=timeout * 2);
        Some(ScriptedFault {
            at: w.now(),
            kind,
            client,
            duration,
        })
    }

    fn inject(&self, fault: ScriptedFault) {
        let ScriptedFault {
            kind,
            client,
            duration,
            ..
        } = fault;
        let mut w = self.lock();
        let Some(process) = w.processes.get_mut(&client) else {
            return;
        };
        if process.crashed {
            return;
        }
        let (node, session) = (process.node, process.session);
        let detail = match kind {
            FaultKind::ConnectionLoss
            | FaultKind::LostReply
            | FaultKind::LostCreateReply
            | FaultKind::Reorder => {
                process.armed.push(kind);
                return;
            }
            FaultKind::SessionExpiry => {
                let Some(session) = session.filter(|&s| w.servers.session_alive(s)) else {
                    return;
                };
                if w.down_until[w.servers.leader()] > w.now() {
                    // No leader during an election: nobody expires a session.
                    return;
                }
                w.expire(session);
                format!("server expires s{session}")
            }
            FaultKind::Partition => {
                let Some(session) = session else { return };
                let until = w.now() + duration;
                let conn = w.conn(session);
                conn.partitioned_until = conn.partitioned_until.max(until);
                format!("s{session} cut off for {duration:?}")
            }
            FaultKind::Pause => {
                madsim::runtime::Handle::current().pause(node);
                madsim::task::spawn(async move {
                    madsim::time::sleep(duration).await;
                    madsim::runtime::Handle::current().resume(node);
                });
                format!("process paused for {duration:?}")
            }
            FaultKind::Crash => {
                w.kill(client);
                "process killed".to_owned()
            }
            FaultKind::LeaderChange => {
                let (low, high) = ELECTION;
                let election = w.rng.gen_range(low..=high);
                let Some(leader) = w.change_leader(election) else {
                    return;
                };
                format!("the leader steps down; server {leader} leads after {election:?}")
            }
            FaultKind::StaleRead | FaultKind::ServerCrash => {
                let Some(session) = session else { return };
                let server = w.conn(session).server;
                let until = w.now() + duration;
                if server == w.servers.leader() || w.down_until[server] > w.now() {
                    return;
                }
                if kind == FaultKind::ServerCrash {
                    w.crash_server(server, until);
                    format!("server {server} down for {duration:?}")
                } else {
                    let (low, high) = STALE_READ_LAG;
                    let more = w.rng.gen_range(low..=high);
                    w.lag_spikes[server] = (until, more);
                    format!("server {server} falls {more:?} further behind for {duration:?}")
                }
            }
        };
        // How long the client cannot act: a lagging or crashed follower stops nobody (its
        // clients move on).
        let lasts = match kind {
            FaultKind::Partition | FaultKind::Pause => duration,
            FaultKind::Crash => Duration::MAX,
            _ => Duration::ZERO,
        };
        let at = w.now();
        w.struck.push(ScriptedFault {
            at,
            kind,
            client,
            duration,
        });
        w.lasting_fault(kind, client, detail, lasts);
    }
}

/// How long an election takes: no server serves meanwhile.
const ELECTION: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(2));

/// How much further behind than usual a follower falls under a stale-read fault.
const STALE_READ_LAG: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(1));

/// The time to the next random fault, or `None` when the rate is zero.
fn draw_interval(rng: &mut GlobalRng, rate_per_second: f64) -> Option<Duration> {
    if rate_per_second <= 0.0 {
        return None;
    }
    let uniform: f64 = rng.gen_range(f64::EPSILON..1.0);
    Some(Duration::from_secs_f64(-uniform.ln() / rate_per_second))
}

impl World {
    fn now(&self) -> Duration {
        self.now
    }

    /// A timer for `at` on the service's clock.
    fn sleep_until(&self, at: Duration) -> Sleep {
        self.clock.sleep_until(self.start + at)
    }

    fn conn(&mut self, session: SessionId) -> &mut Conn {
        self.conns
            .get_mut(&session)
            .expect("every session the wire names has a connection")
    }

    /// The per-second rate of a process, session or server fault here: a standalone server has
    /// no follower to strike.
    fn rate(&self, kind: FaultKind) -> f64 {
        if kind.needs_followers() && self.servers.len() == 1 {
            return 0.0;
        }
        self.plan.rates.per_second(kind)
    }

    /// A follower dies until `until`: its clients lose their connections and move to other
    /// servers; it applies nothing meanwhile, and catches up when it restarts.
    fn crash_server(&mut self, server: usize, until: Duration) {
        self.down_until[server] = until;
        let attached: Vec<SessionId> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.server == server)
            .map(|(&session, _)| session)
            .collect();
        for session in attached {
            self.disconnect(session);
        }
        let now = self.now();
        for record in self.gathering.server_down(server) {
            self.trace.push(now, record);
        }
    }

    /// The leader steps down and an election of `election` picks a follower that is up (from
    /// the seed); `None` if none is. Every server stops serving while it elects, so every
    /// connection drops, and clients retry until it is over. The new leader first takes every
    /// transaction the old one committed (Zab's recovery: a committed write survives), and it
    /// gives every session a whole timeout from when it starts, as ZooKeeper's does.
    fn change_leader(&mut self, election: Duration) -> Option<usize> {
        let now = self.now();
        let old = self.servers.leader();
        let candidates: Vec<usize> = (0..self.servers.len())
            .filter(|&server| server != old && self.down_until[server] <= now)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let leader = candidates[self.rng.gen_range(0..candidates.len())];
        let connected: Vec<SessionId> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.state == ConnState::Connected)
            .map(|(&session, _)| session)
            .collect();
        for session in connected {
            self.disconnect(session);
        }
        while self.apply_next(leader) {}
        self.servers.hand_over(leader);
        let until = now + election;
        for down in &mut self.down_until {
            *down = (*down).max(until);
        }
        for conn in self.conns.values_mut() {
            conn.server_heard = conn.server_heard.max(until);
        }
        Some(leader)
    }

    fn fault(&mut self, kind: FaultKind, client: ClientId, detail: String) {
        self.lasting_fault(kind, client, detail, Duration::ZERO);
    }

    /// Notes a message fault among those struck, at `sent`: when its client sent the message.
    fn message_fault(&mut self, kind: FaultKind, client: ClientId, sent: Duration) {
        self.struck.push(ScriptedFault {
            at: sent,
            kind,
            client,
            duration: Duration::ZERO,
        });
    }

    fn lasting_fault(
        &mut self,
        kind: FaultKind,
        client: ClientId,
        detail: String,
        lasts: Duration,
    ) {
        self.counts.add(kind);
        let now = self.now();
        self.trace.push(
            now,
            TraceEvent::Fault {
                kind,
                client,
                detail,
                lasts,
            },
        );
    }

    fn schedule(&mut self, at: Duration, delivery: Delivery) {
        let first = self.wire.first_due().is_none_or(|due| at < due);
        self.wire.push(at, delivery);
        if first {
            self.arm_pump();
        }
    }

    /// Kills a client's process for good: its tasks stop, and its session lives until the
    /// server expires it.
    fn kill(&mut self, client: ClientId) {
        if let Some(process) = self.processes.get_mut(&client) {
            madsim::runtime::Handle::current().kill(process.node);
            process.crashed = true;
        }
    }

    /// Holds a delivery back until `at` without losing its place in its session's FIFO.
    fn postpone(&mut self, at: Duration, sequence: u64, delivery: Delivery) {
        let first = self.wire.first_due().is_none_or(|due| at < due);
        self.wire.push_in_place(at, sequence, delivery);
        if first {
            self.arm_pump();
        }
    }

    /// One run of the pump task: delivers everything due, then arms a timer for what is next.
    fn pump(&mut self, waker: &Waker) {
        if !self.pump.as_ref().is_some_and(|pump| pump.will_wake(waker)) {
            self.pump = Some(waker.clone());
        }
        let now = self.now();
        while let Some((sequence, delivery)) = self.wire.pop_due(now) {
            self.deliver(sequence, delivery);
        }
        self.arm_pump();
    }

    /// Makes sure a timer wakes the pump when the wire's first delivery is due. The timer is
    /// registered here, with the pump's waker, so a sender does not wake the pump just for that.
    fn arm_pump(&mut self) {
        let (Some(waker), Some(due)) = (&self.pump, self.wire.first_due()) else {
            return;
        };
        let now = self.now();
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

    /// The delivery time of a message: latency plus jitter (plus a reorder hold-up, perhaps),
    /// never before the session's previous message in the same direction, never inside a
    /// partition.
    fn arrival(&mut self, session: SessionId, to_server: bool) -> Duration {
        let now = self.now();
        let jitter = self.rng.gen_range(Duration::ZERO..=self.config.jitter);
        let conn = self.conn(session);
        let (mut delay, client) = (conn.base_latency + jitter, conn.client);
        let armed = self.take_armed(client, |kind| kind == FaultKind::Reorder);
        if armed || self.rng.gen_bool(self.plan.rates.reorder) {
            let hold = self
                .rng
                .gen_range(Duration::ZERO..=self.plan.rates.reorder_delay);
            delay += hold;
            self.message_fault(FaultKind::Reorder, client, now);
            self.fault(
                FaultKind::Reorder,
                client,
                format!("s{session} message held {hold:?}"),
            );
        }
        let conn = self.conn(session);
        let floor = if to_server {
            &mut conn.to_server_floor
        } else {
            &mut conn.to_client_floor
        };
        let at = (now + delay)
            .max(*floor + Duration::from_nanos(1))
            .max(conn.partitioned_until);
        *floor = at;
        at
    }

    /// Takes the first armed scripted fault of a client that `wanted` accepts.
    fn take_armed(&mut self, client: ClientId, wanted: impl Fn(FaultKind) -> bool) -> bool {
        let Some(process) = self.processes.get_mut(&client) else {
            return false;
        };
        match process.armed.iter().position(|&kind| wanted(kind)) {
            Some(i) => {
                process.armed.remove(i);
                true
            }
            None => false,
        }
    }

    fn send_to_server(&mut self, session: SessionId, request: Request) {
        let at = self.arrival(session, true);
        let now = self.now();
        let conn = self.conn(session);
        conn.client_sent = now.max(conn.client_sent);
        let epoch = conn.epoch;
        self.schedule(
            at,
            Delivery::ToServer {
                session,
                epoch,
                request,
            },
        );
    }

    fn send_to_client(&mut self, session: SessionId, response: Response) {
        if !self.conns.contains_key(&session) {
            return;
        }
        let at = self.arrival(session, false);
        let epoch = self.conn(session).epoch;
        self.schedule(
            at,
            Delivery::ToClient {
                session,
                epoch,
                response,
            },
        );
    }

    fn deliver(&mut self, sequence: u64, delivery: Delivery) {
        let now = self.now();
        match delivery {
            Delivery::Replicate { server } => self.replay(server),
            Delivery::ExpiryCheck { session } => {
                if !self.servers.session_alive(session) {
                    return;
                }
                let deadline = self.conn(session).server_heard + self.config.session_timeout;
                if now >= deadline {
                    self.expire(session);
                } else {
                    self.schedule(deadline, Delivery::ExpiryCheck { session });
                }
            }
            Delivery::ToServer {
                session,
                epoch,
                request,
            } => {
                let conn = self.conn(session);
                if conn.partitioned_until > now {
                    let at = conn.partitioned_until;
                    self.postpone(
                        at,
                        sequence,
                        Delivery::ToServer {
                            session,
                            epoch,
                            request,
                        },
                    );
                    return;
                }
                if conn.epoch != epoch || conn.state != ConnState::Connected {
                    return;
                }
                conn.server_heard = now;
                self.serve(session, request);
            }
            Delivery::ToClient {
                session,
                epoch,
                response,
            } => {
                let conn = self.conn(session);
                if conn.partitioned_until > now {
                    let at = conn.partitioned_until;
                    self.postpone(
                        at,
                        sequence,
                        Delivery::ToClient {
                            session,
                            epoch,
                            response,
                        },
                    );
                    return;
                }
                match response {
                    // Lost with its connection: the client re-registers the watch it holds.
                    _ if conn.epoch != epoch || conn.state != ConnState::Connected => {}
                    Response::Watch(notification, zxid, deletion) => {
                        if conn.watches.fire(&notification.event) {
                            self.deliver_watch(session, notification, zxid, deletion);
                        }
                    }
                    Response::Pong => conn.client_heard = now,
                    Response::Drop => self.disconnect(session),
                    Response::Closed { id } => {
                        conn.state = ConnState::Closed;
                        let client = conn.client;
                        if let Some(waiter) = conn.pending.remove(&id) {
                            // closeSession has no result of its own; the caller only waits.
                            let _ = waiter.send(Ok(zklab_recipes::client::OpResult::Synced));
                        }
                        let _ = conn
                            .events
                            .unbounded_send(ZkEvent::Session(SessionEvent::Closed));
                        conn.events.close_channel();
                        self.trace_state(client, session, SessionEvent::Closed);
                    }
                    Response::Reply { id, reply, zxid } => {
                        conn.client_heard = now;
                        conn.seen = conn.seen.max(zxid);
                        if let Some(op) = conn.watching.remove(&id) {
                            conn.watches.register(&op, &reply);
                        }
                        let client = conn.client;
                        if let Some(waiter) = conn.pending.remove(&id) {
                            self.trace.push(
                                now,
                                TraceEvent::Reply {
                                    client,
                                    session,
                                    reply: reply.clone(),
                                },
                            );
                            let _ = waiter.send(reply);
                        }
                    }
                }
            }
        }
    }

    /// The server handles one request from a connected session. A session the server has ended
    /// gets its connection closed, behind what is still to be sent to it: its client sees
    /// Disconnected, then Expired when it reconnects.
    fn serve(&mut self, session: SessionId, request: Request) {
        if self.forced.is_over() || !matches!(request, Request::Op { .. }) {
            return self.serve_now(session, request);
        }
        self.held.push_back((session, request));
        self.take_forced_steps();
    }

    /// Takes the forced order's server steps while it can: an expiry at once, a request's step
    /// once its client's request is held; then, with no step left, serves what is still held.
    fn take_forced_steps(&mut self) {
        while let Some(step) = self.forced.next_step() {
            if !step.kind.is_server_step() {
                return;
            }
            let ForcedStep { client, kind } = step;
            // A request of a session that has ended since it came is not the model's: the
            // model's op in flight went with its session. The server answers it as ended.
            while let Some(index) = self
                .held
                .iter()
                .position(|(session, _)| !self.servers.session_alive(*session))
            {
                if let Some((session, request)) = self.held.remove(index) {
                    self.serve_now(session, request);
                }
            }
            let taken = if kind == ForcedKind::SessionExpiry {
                let session = self.processes.get(&client).and_then(|p| p.session);
                if let Some(session) = session.filter(|&s| self.servers.session_alive(s)) {
                    self.expire(session);
                    self.fault(
                        FaultKind::SessionExpiry,
                        client,
                        format!("server expires s{session}"),
                    );
                }
                None
            } else {
                let Some(index) = self.held.iter().position(|(session, _)| {
                    self.conns.get(session).is_some_and(|c| c.client == client)
                }) else {
                    return;
                };
                self.held.remove(index)
            };
            let now = self.now();
            self.forced.take_next(now);
            self.note_forced_order_done(client);
            let armed = match kind {
                ForcedKind::ConnectionLoss => Some(FaultKind::ConnectionLoss),
                ForcedKind::LostReply => Some(FaultKind::LostReply),
                _ => None,
            };
            if let (Some(armed), Some(process)) = (armed, self.processes.get_mut(&client)) {
                process.armed.push(armed);
            }
            if let Some((session, request)) = taken {
                self.serve_now(session, request);
            }
        }
        while let Some((session, request)) = self.held.pop_front() {
            self.serve_now(session, request);
        }
    }

    /// Says in the trace that the forced order is done, if it is, after a step of `client`'s.
    fn note_forced_order_done(&mut self, client: ClientId) {
        if self.forced.is_over() {
            let now = self.now();
            let text = crate::forced::DONE.to_owned();
            self.trace.push(now, TraceEvent::Note { client, text });
        }
    }

    /// The server handles one request now.
    fn serve_now(&mut self, session: SessionId, request: Request) {
        if !self.servers.session_alive(session) {
            // Behind what the server has still to send (a close's reply, say).
            let answer = Answer::Ended(Response::Drop);
            self.answer_in_order(
                session,
                Parked {
                    id: 0,
                    until: 0,
                    answer,
                },
            );
            return;
        }
        let now = self.now();
        let client = self.conn(session).client;
        match request {
            Request::Ping => self.send_to_client(session, Response::Pong),
            Request::Close { id } => {
                if let Some(until) = self.end_session(session, false) {
                    let answer = Answer::Ended(Response::Closed { id });
                    self.answer_in_order(session, Parked { id, until, answer });
                }
            }
            // The server reads no further than the packet's length, and drops the connection.
            Request::Op { op, .. } if packet::too_long(&op) => self.disconnect(session),
            Request::Op { id, op } => {
                let drop_before = self.take_armed(client, |k| k == FaultKind::ConnectionLoss)
                    || self.rng.gen_bool(self.plan.rates.connection_loss);
                if drop_before {
                    let detail = format!("before apply: {}", OpText(&op));
                    let sent = self.conn(session).client_sent;
                    self.message_fault(FaultKind::ConnectionLoss, client, sent);
                    self.fault(FaultKind::ConnectionLoss, client, detail);
                    self.disconnect(session);
                    return;
                }
                let (server, leader) = (self.conn(session).server, self.servers.leader());
                let linearized = op.is_write() || matches!(op, Op::Check { .. });
                if server != leader && !linearized {
                    let until = match op {
                        Op::Sync { .. } => self.servers.applied(leader),
                        _ => 0,
                    };
                    let answer = Answer::Read(op);
                    self.answer_in_order(session, Parked { id, until, answer });
                    return;
                }
                let before = self.servers.applied(leader);
                let applied = self.servers.apply(session, &op, now.as_millis() as i64);
                self.replicate_since(before);
                let (zxid, reply) = (applied.zxid, applied.reply);
                let notified = self.notify(leader, session, applied.notifications, zxid);
                let notified = match self.servers.applied(leader) > before {
                    true => self.commit_notified(zxid, notified),
                    false => notified,
                };
                let lost = self.draw_lost_reply(client, &op);
                self.trace_applied(session, zxid, op, &reply);
                for change in notified {
                    self.trace.push(now, change);
                }
                if let Some(lost) = lost {
                    self.lose_reply(session, lost);
                    return;
                }
                if server == leader {
                    self.send_to_client(session, Response::Reply { id, reply, zxid });
                } else {
                    let answer = Answer::Reply(reply);
                    self.answer_in_order(
                        session,
                        Parked {
                            id,
                            until: zxid,
                            answer,
                        },
                    );
                }
            }
        }
    }

    /// Draws whether the reply to `op`, which the server has applied, is lost (an armed scripted
    /// fault first): the fault's kind and its trace line.
    fn draw_lost_reply(&mut self, client: ClientId, op: &Op) -> Option<(FaultKind, String)> {
        let (kind, rate) = if matches!(op, Op::Create { .. }) {
            let rate = self.plan.rates.lost_create_reply;
            (FaultKind::LostCreateReply, rate)
        } else {
            (FaultKind::LostReply, self.plan.rates.lost_reply)
        };
        let lost = self.take_armed(client, |k| k == kind || k == FaultKind::LostReply)
            || self.rng.gen_bool(rate);
        lost.then(|| (kind, format!("reply lost after apply: {}", OpText(op))))
    }

    /// Writes what a server answered a session's op, whether or not the client hears it.
    fn trace_applied(&mut self, session: SessionId, zxid: Zxid, op: Op, reply: &OpReply) {
        let now = self.now();
        let client = self.conn(session).client;
        let reply = reply.clone();
        let applied = TraceEvent::Applied {
            client,
            session,
            zxid,
            op,
            reply,
        };
        self.trace.push(now, applied);
    }

    /// A reply is lost: the fault is recorded and the connection breaks.
    fn lose_reply(&mut self, session: SessionId, (kind, detail): (FaultKind, String)) {
        if kind == FaultKind::LostCreateReply {
            self.counts.add(FaultKind::LostReply);
        }
        let (client, sent) = (self.conn(session).client, self.conn(session).client_sent);
        self.message_fault(kind, client, sent);
        self.fault(kind, client, detail);
        self.disconnect(session);
    }

    /// Sends fired watches to their sessions; `zxid` is the change behind them, made by `by`.
    /// Returns the trace's record of which sessions each changed node notified.
    fn notify(
        &mut self,
        server: usize,
        by: SessionId,
        notifications: Vec<Notification>,
        zxid: i64,
    ) -> Vec<TraceEvent> {
        let changes = TraceEvent::notified(self.servers.server(server), by, zxid, &notifications);
        for notification in notifications {
            let deletion = changes.iter().any(|change| {
                matches!(change, TraceEvent::Notified { cause, deletion: true, .. } if *cause == notification.cause)
            });
            self.send_watch(notification, zxid, deletion);
        }
        changes
    }

    /// The leader's records of the change `zxid` it committed: told now on a standalone server,
    /// with the followers' once every follower that is up has applied it in an ensemble.
    fn commit_notified(&mut self, zxid: Zxid, records: Vec<TraceEvent>) -> Vec<TraceEvent> {
        let now = self.now();
        let leader = self.servers.leader();
        let followers: Vec<usize> = (0..self.servers.len())
            .filter(|&server| server != leader && self.down_until[server] <= now)
            .collect();
        self.gathering.committed(zxid, followers, records)
    }

    /// Sends a fired watch's event to its session.
    fn send_watch(&mut self, notification: Notification, zxid: i64, deletion: bool) {
        let session = notification.session;
        self.send_to_client(session, Response::Watch(notification, zxid, deletion));
    }

    fn deliver_watch(
        &mut self,
        session: SessionId,
        notification: Notification,
        zxid: i64,
        deletion: bool,
    ) {
        let now = self.now();
        let conn = self.conn(session);
        match conn.state {
            ConnState::Connected => {
                let client = conn.client;
                let event = notification.event.clone();
                let _ = conn.events.unbounded_send(ZkEvent::Watch(event.clone()));
                let cause = notification.cause;
                self.trace.push(
                    now,
                    TraceEvent::Watch {
                        client,
                        session,
                        event,
                        zxid,
                        cause,
                        deletion,
                    },
                );
            }
            ConnState::Disconnected | ConnState::Expired | ConnState::Closed => {}
        }
    }

    /// The server ends a session; `expired` tells expiry from close.
    /// Returns the zxid of the end, or `None` if the session was not alive.
    fn end_session(&mut self, session: SessionId, expired: bool) -> Option<Zxid> {
        let now = self.now();
        let now_ms = now.as_millis() as i64;
        let leader = self.servers.leader();
        let before = self.servers.applied(leader);
        // A session the server expires while it is connected hears its own ephemerals go
        // before its connection is closed, as on a closed one.
        let conn = self.conn(session);
        let connected = conn.state == ConnState::Connected && conn.partitioned_until <= now;
        let notify_self = !expired || connected;
        let order =
            DeletionOrder::Hashed(self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ session as u64);
        let ended = self
            .servers
            .end_session(session, now_ms, notify_self, order)?;
        self.replicate_since(before);
        let client = self.conn(session).client;
        let deleted = ended.deleted.clone();
        self.trace.push(
            now,
            TraceEvent::SessionEnded {
                client,
                session,
                expired,
                deleted,
            },
        );
        let notified = self.notify(leader, session, ended.notifications, ended.zxid);
        for change in self.commit_notified(ended.zxid, notified) {
            self.trace.push(now, change);
        }
        Some(ended.zxid)
    }

    /// The server expires a session and its server closes the connection once it has fired the
    /// watches the expiry fired for the session itself; the client learns when that reaches it
    /// (after a partition, when it heals).
    fn expire(&mut self, session: SessionId) {
        if let Some(until) = self.end_session(session, true) {
            let answer = Answer::Ended(Response::Drop);
            self.answer_in_order(
                session,
                Parked {
                    id: 0,
                    until,
                    answer,
                },
            );
        }
    }

    /// The connection breaks: ops in flight fail with ConnectionLoss, the client sees
    /// Disconnected, and its heartbeat starts reconnecting. The server drops the session's
    /// watches with the connection, and what was on its way is lost; the client keeps the
    /// watches it holds, to re-register.
    fn disconnect(&mut self, session: SessionId) {
        let now = self.now();
        let conn = self.conn(session);
        if conn.state != ConnState::Connected {
            return;
        }
        let server = conn.server;
        self.servers.server_mut(server).take_watches(session);
        let conn = self.conn(session);
        conn.state = ConnState::Disconnected;
        conn.epoch += 1;
        conn.parked.clear();
        conn.watching.clear();
        let client = conn.client;
        let pending = std::mem::take(&mut conn.pending);
        let _ = conn
            .events
            .unbounded_send(ZkEvent::Session(SessionEvent::Disconnected));
        let _ = conn.heartbeat.unbounded_send(());
        for (_, waiter) in pending {
            let reply = Err(ZkError::ConnectionLoss);
            self.trace.push(
                now,
                TraceEvent::Reply {
                    client,
                    session,
                    reply: reply.clone(),
                },
            );
            let _ = waiter.send(reply);
        }
        self.trace_state(client, session, SessionEvent::Disconnected);
    }

    /// A disconnected client tries again: within its session it resumes on a server that is not
    /// behind it, re-registering its watches there (what changed since fires first), then
    /// sending the ops it held; past it, it learns the session expired.
    fn reconnect(&mut self, session: SessionId) {
        let now = self.now();
        let alive = self.servers.session_alive(session);
        let conn = self.conn(session);
        if conn.state != ConnState::Disconnected || conn.partitioned_until > now {
            return;
        }
        let client = conn.client;
        if !alive {
            conn.state = ConnState::Expired;
            conn.watches = SessionWatches::default();
            let _ = conn
                .events
                .unbounded_send(ZkEvent::Session(SessionEvent::Expired));
            conn.events.close_channel();
            let held = std::mem::take(&mut conn.held_ops);
            self.trace_state(client, session, SessionEvent::Expired);
            for (_, _, waiter) in held {
                let reply = Err(ZkError::SessionExpired);
                self.trace.push(
                    now,
                    TraceEvent::Reply {
                        client,
                        session,
                        reply: reply.clone(),
                    },
                );
                let _ = waiter.send(reply);
            }
            return;
        }
        let (old, seen, attached, pinned) = (conn.server, conn.seen, conn.attached, conn.pinned);
        let Some(server) = self.pick_server(seen, pinned) else {
            return;
        };
        let conn = self.conn(session);
        conn.state = ConnState::Connected;
        conn.server = server;
        conn.attached = true;
        conn.client_heard = now;
        conn.server_heard = now;
        let _ = conn
            .events
            .unbounded_send(ZkEvent::Session(SessionEvent::SyncConnected));
        let held_ops = std::mem::take(&mut conn.held_ops);
        self.trace_state(client, session, SessionEvent::SyncConnected);
        if server != old || !attached {
            self.trace_attached(session);
        }
        let watches = self.conn(session).watches.clone();
        let fired = self
            .servers
            .server_mut(server)
            .set_watches(session, seen, &watches);
        let zxid = self.servers.applied(server);
        for notification in fired {
            let deletion = notification.event.event_type == EventType::NodeDeleted;
            self.send_watch(notification, zxid, deletion);
        }
        for (id, request, waiter) in held_ops {
            if let Request::Op { op, .. } = &request {
                self.conn(session).note_sent(id, op);
            }
            self.send_to_server(session, request);
            self.conn(session).pending.insert(id, waiter);
        }
    }

    /// The server a session attaches to: any that is up and has applied every zxid the client
    /// has seen (a server behind it refuses the client, which tries another), drawn from the
    /// seed; `None` if none is (the client tries again later). A standalone server, or a client
    /// pinned to one server, draws nothing.
    fn pick_server(&mut self, seen: Zxid, pinned: Option<usize>) -> Option<usize> {
        if self.servers.len() == 1 {
            return Some(0);
        }
        let now = self.now();
        if let Some(server) = pinned {
            let ready = self.down_until[server] <= now && self.servers.applied(server) >= seen;
            return ready.then_some(server);
        }
        let ready: Vec<usize> = (0..self.servers.len())
            .filter(|&server| self.down_until[server] <= now)
            .filter(|&server| self.servers.applied(server) >= seen)
            .collect();
        if ready.is_empty() {
            return None;
        }
        Some(ready[self.rng.gen_range(0..ready.len())])
    }

    /// Writes a session state change as the client sees it.
    fn trace_state(&mut self, client: ClientId, session: SessionId, event: SessionEvent) {
        let now = self.now();
        self.trace.push(
            now,
            TraceEvent::Session {
                client,
                session,
                event,
            },
        );
    }

    /// Writes which server a session is attached to, in an ensemble.
    fn trace_attached(&mut self, session: SessionId) {
        if self.servers.len() == 1 {
            return;
        }
        let now = self.now();
        let conn = self.conn(session);
        let (client, server) = (conn.client, conn.server);
        self.trace.push(
            now,
            TraceEvent::Attached {
                client,
                session,
                server,
                leader: server == self.servers.leader(),
            },
        );
    }

    /// Schedules every follower's apply of the transactions the leader committed after
    /// `before`, each after a lag of its own, in commit order.
    fn replicate_since(&mut self, before: Zxid) {
        let leader = self.servers.leader();
        let committed = self.servers.applied(leader) - before;
        let now = self.now();
        let (low, high) = self.config.follower_lag;
        for server in (0..self.servers.len()).filter(|&server| server != leader) {
            let (spiked_until, more) = self.lag_spikes[server];
            let more = if now < spiked_until {
                more
            } else {
                Duration::ZERO
            };
            for _ in 0..committed {
                let lag = self.rng.gen_range(low..=high) + more;
                let at = (now + lag).max(self.follower_due[server] + Duration::from_nanos(1));
                self.follower_due[server] = at;
                self.schedule(at, Delivery::Replicate { server });
            }
        }
    }

    /// A follower applies its next transaction: it fires the watches left on it, then answers
    /// the requests that waited for it. A follower that is down applies it once it restarts.
    fn replay(&mut self, server: usize) {
        let restart = self.down_until[server];
        if restart > self.now() {
            self.schedule(restart, Delivery::Replicate { server });
            return;
        }
        self.apply_next(server);
    }

    /// A follower applies its next transaction, if it has one, as [`World::replay`] says.
    fn apply_next(&mut self, server: usize) -> bool {
        let Some(replayed) = self.servers.replay_next(server) else {
            return false;
        };
        let now = self.now();
        let changes = self.notify(server, replayed.by, replayed.notifications, replayed.zxid);
        for change in self.gathering.applied(server, replayed.zxid, changes) {
            self.trace.push(now, change);
        }
        let waiting: Vec<SessionId> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.server == server && !conn.parked.is_empty())
            .map(|(&session, _)| session)
            .collect();
        for session in waiting {
            self.release(session);
        }
        true
    }

    /// Queues a request behind the session's earlier ones, and answers what is ready.
    fn answer_in_order(&mut self, session: SessionId, parked: Parked) {
        self.conn(session).parked.push_back(parked);
        self.release(session);
    }

    /// Answers a session's parked requests, in order, as far as its server has applied.
    fn release(&mut self, session: SessionId) {
        loop {
            let conn = self.conn(session);
            let (server, client) = (conn.server, conn.client);
            let applied = self.servers.applied(server);
            let conn = self.conn(session);
            if conn.parked.front().is_none_or(|head| head.until > applied) {
                return;
            }
            let Some(Parked { id, until, answer }) = conn.parked.pop_front() else {
                return;
            };
            let (reply, zxid) = match answer {
                Answer::Ended(response) => {
                    self.send_to_client(session, response);
                    continue;
                }
                Answer::Reply(reply) => (reply, until),
                Answer::Read(op) => {
                    let served = self.servers.server_mut(server).serve_read(session, &op);
                    let (reply, zxid) = (served.reply, served.zxid);
                    let lost = self.draw_lost_reply(client, &op);
                    self.trace_applied(session, zxid, op, &reply);
                    if let Some(lost) = lost {
                        self.lose_reply(session, lost);
                        return;
                    }
                    (reply, zxid)
                }
            };
            self.send_to_client(session, Response::Reply { id, reply, zxid });
        }
    }
}
