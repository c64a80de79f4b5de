//! The pure server behind ZooKeeper's wire protocol, as a core any clock and any sockets can
//! drive: `zklab serve` runs it on tokio. It does no I/O: each input (a connection opened, one
//! frame's record received, a connection gone, the clock's tick, a command, a client's claim)
//! comes with its time, and what it causes comes out as [`Outgoing`]s, in order.
//!
//! It keeps what a ZooKeeper server keeps per session (its password, its negotiated timeout,
//! when it was last heard, the connection it is attached to) and per connection (the server it
//! reached, whether it has shaken hands). A session lives across connections until the clock
//! passes its timeout unheard: then it expires, its ephemerals go, and its connection is closed.
//! A connection that sends what no client sends is closed, alone, with a note saying why.
//!
//! An ensemble ([`Ensemble`]) keeps the simulator's rules: each connection is to one server
//! (the driver listens once per server); a session's writes go through the leader and their
//! replies wait until its own server has applied them; its reads are served from its server's
//! state, stale on a lagging follower; a `sync` waits until its server has what the leader had
//! committed; a session's requests are answered in order; each server fires the watches left
//! on it as it applies a change; a client that has seen more than a server has is refused.
//!
//! Faults ([`ServeFaults`]) strike as the server sees requests; everything the server sees and
//! does, and what clients claim they were told, goes to a [`Trace`] the driver takes out as it
//! grows ([`WireService::take_trace`]), each session a client of its own (`c0` the first).

mod anchor;
mod control;
mod ensemble;
mod holding;
mod serve_faults;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use zklab_recipes::client::{EventType, Op, OpReply, OpResult, SessionId, Stat, ZkError, Zxid};
use zklab_recipes::outcome::Outcome;

use crate::acl::Identity;
use crate::fault::{FaultKind, ELECTION};
use crate::jute::archive::frame;
use crate::jute::codes::{op_code, xid};
use crate::jute::handshake::{ConnectRequest, ConnectResponse, PASSWORD_LEN, PROTOCOL_VERSION};
use crate::jute::reply::{encode_notification, encode_reply_nulling, ReplyHeader};
use crate::jute::request::{Request, RequestHeader};
use crate::path::parent;
use crate::replicas::goes_through_leader;
use crate::server::{Applied, Ended, Notification};
use crate::service::streams::key;
use crate::trace::{ClientId, OpText, Trace, TraceEvent};

use anchor::RequestAnchors;
pub use anchor::{Anchor, AnchoredFault};
pub use control::{parse_number, Control};
use ensemble::{millis, Ensemble};
use holding::Held;
pub use serve_faults::ServeFaults;

/// A connection, as its driver numbers them.
pub type ConnId = u64;

/// What the core asks its driver to do, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// Write one frame (length prefix included) to a connection.
    Send {
        /// The connection.
        conn: ConnId,
        /// The frame.
        bytes: Vec<u8>,
    },
    /// Close a connection once what was sent before is written.
    Close {
        /// The connection.
        conn: ConnId,
        /// Why, when the connection did something wrong (a line for the log), else `None`.
        why: Option<String>,
    },
}

/// How the server bounds the session timeouts clients ask for: ZooKeeper's `tickTime` (2 s by
/// default), a timeout being 2 to 20 ticks.
#[derive(Clone, Copy, Debug)]
pub struct Ticks {
    /// The tick.
    pub tick: Duration,
    /// How often the reaper looks for emptied containers and idle TTL nodes.
    pub container_check: Duration,
}

impl Default for Ticks {
    fn default() -> Self {
        Ticks {
            tick: Duration::from_secs(2),
            container_check: Duration::from_secs(60),
        }
    }
}

struct SessionState {
    password: Vec<u8>,
    timeout: Duration,
    last_heard: Duration,
    conn: Option<ConnId>,
    client: ClientId,
    /// How many requests of each verb the session sent (its handshakes as `connect`), in all
    /// (`None`) and on each parent's children.
    asked: BTreeMap<(String, Option<String>), u32>,
    /// Its last request, which a fault drawn per second is anchored after.
    last: RequestAnchors,
}

/// An open connection: the server it reached, and the session it is attached to once it has
/// shaken hands.
#[derive(Clone, Copy, Debug)]
struct ConnState {
    server: usize,
    session: Option<SessionId>,
    /// Its session has ended: the server reads nothing more from it and closes it once its
    /// answers ahead are sent.
    ending: bool,
}

/// An answer a connection's server sends only once it has applied zxid `until`, behind the
/// connection's earlier ones.
struct Parked {
    until: Zxid,
    answer: Answer,
}

enum Answer {
    /// A reply of a header alone (a ping's, setWatches').
    Header { xid: i32 },
    /// The session ended: the close's reply (to `xid`, at `zxid`) if it asked, then the
    /// connection closed.
    Ended { xid: Option<i32>, zxid: Zxid },
    /// An op's reply.
    Op(Box<Answering>),
}

/// An op to answer: the leader's answer, or a read its session's server serves when its turn
/// comes, to the session as the leader knew it when it sent the read.
struct Answering {
    header: RequestHeader,
    op: Op,
    identity: Identity,
    applied: Option<Applied>,
    /// The message fault drawn for it (a lost or held-back reply).
    fault: Option<AnchoredFault>,
    anchors: Option<RequestAnchors>,
}

/// Where a change's records of whom it notified go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Told {
    /// Into the trace at once (watches set again on reconnection).
    Now,
    /// Gathered with the followers' until every server has applied the change.
    Committed,
    /// A follower's, gathered with the others'.
    Replayed,
}

/// The pure server and its sessions on the wire (see the module's documentation).
pub struct WireService {
    ensemble: Ensemble,
    seed: u64,
    ticks: Ticks,
    /// The wall time the service started at: the trace counts from it.
    started: Duration,
    /// The time of the input being handled, since the epoch.
    now: Duration,
    sessions: BTreeMap<SessionId, SessionState>,
    /// The client of every session ever opened, for claims that come after its end.
    clients: BTreeMap<SessionId, ClientId>,
    conns: BTreeMap<ConnId, ConnState>,
    /// Each connection's answers waiting for its server to apply what they wait for.
    answers: BTreeMap<ConnId, VecDeque<Parked>>,
    /// The sessions whose traffic a fault holds back.
    held: BTreeMap<SessionId, Held>,
    /// The nodes whose data is null (created or set so; a client's op holds it as empty), by
    /// czxid: the data version that made it null.
    null_data: BTreeMap<i64, i32>,
    next_reap: Duration,
    /// How many more replies to swallow (`Control::NoResponse`); `u64::MAX` for all.
    holding: u64,
    /// How many more requests to fail (`Control::FailRequests`); `u64::MAX` for all.
    failing: u64,
    /// How long each request waits before it is read (`Control::AddDelay`).
    delay: Duration,
    /// Whether new connections are refused (`Control::RejectConnections`).
    rejecting: bool,
    faults: ServeFaults,
    trace: Trace,
    out: Vec<Outgoing>,
}

impl WireService {
    /// `servers` fresh servers (only `/` and `/zookeeper`; one is a standalone server, more an
    /// ensemble whose first leads) started at wall time `started`, whose session passwords and
    /// followers' lags come from `seed`, striking `faults`.
    pub fn new(
        seed: u64,
        servers: usize,
        ticks: Ticks,
        faults: ServeFaults,
        started: Duration,
    ) -> Self {
        WireService {
            ensemble: Ensemble::new(servers, seed),
            seed,
            ticks,
            started,
            now: started,
            sessions: BTreeMap::new(),
            clients: BTreeMap::new(),
            conns: BTreeMap::new(),
            answers: BTreeMap::new(),
            held: BTreeMap::new(),
            null_data: BTreeMap::new(),
            next_reap: started,
            holding: 0,
            failing: 0,
            delay: Duration::ZERO,
            rejecting: false,
            faults,
            trace: Trace::new(),
            out: Vec::new(),
        }
    }

    /// How many servers it runs.
    pub fn servers(&self) -> usize {
        self.ensemble.len()
    }

    /// The answer of server `server` to a four-letter word (`srvr`, `ruok`), which a
    /// connection sends instead of a handshake; `None` for a word the server does not know.
    pub fn four_letter_word(&self, word: &[u8; 4], server: usize) -> Option<String> {
        let server = server.min(self.ensemble.len() - 1);
        let mode = match (self.ensemble.len(), self.ensemble.leader()) {
            (1, _) => "standalone",
            (_, leader) if leader == server => "leader",
            _ => "follower",
        };
        match word {
            b"ruok" => Some("imok".to_owned()),
            b"srvr" => Some(format!(
                "Zookeeper version: zklab {}\nZxid: {:#x}\nMode: {mode}\nNode count: {}\n",
                env!("CARGO_PKG_VERSION"),
                self.ensemble.applied(server),
                self.node_count(server),
            )),
            _ => None,
        }
    }

    fn node_count(&self, server: usize) -> usize {
        let server = self.ensemble.server(server);
        let mut count = 0;
        let mut stack = vec!["/".to_owned()];
        while let Some(path) = stack.pop() {
            count += 1;
            for child in server.children(&path).unwrap_or_default() {
                stack.push(match path.as_str() {
                    "/" => format!("/{child}"),
                    _ => format!("{path}/{child}"),
                });
            }
        }
        count
    }

    /// The trace so far, taken out (the service keeps none of it).
    pub fn take_trace(&mut self) -> Trace {
        std::mem::take(&mut self.trace)
    }

    /// The faults struck so far.
    pub fn faults(&self) -> &ServeFaults {
        &self.faults
    }

    /// How many connections are open.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// A connection opened to server `server`: its first frame must be a handshake. Refused
    /// at once while the command port says so, or while that server is down.
    pub fn opened(&mut self, conn: ConnId, server: usize, now: Duration) -> Vec<Outgoing> {
        self.now = now;
        let server = server.min(self.ensemble.len() - 1);
        match self.rejecting || !self.ensemble.is_up(server, now) {
            true => self.out.push(Outgoing::Close { conn, why: None }),
            false => {
                let state = ConnState {
                    server,
                    session: None,
                    ending: false,
                };
                self.conns.insert(conn, state);
            }
        }
        self.take()
    }

    /// The run is over: what the last changes notified, though some follower has yet to apply
    /// them, goes to the trace.
    pub fn end(&mut self) {
        for record in self.ensemble.unfinished_records() {
            self.record(record);
        }
    }

    /// A connection is gone (the client closed it, or it broke): the server drops the watches
    /// its session set, as ZooKeeper drops a connection's watches; the session lives on. What it
    /// sent and a fault held unread goes with it.
    pub fn gone(&mut self, conn: ConnId, now: Duration) -> Vec<Outgoing> {
        self.now = now;
        for held in self.held.values_mut() {
            held.forget(conn);
        }
        self.answers.remove(&conn);
        if let Some(state) = self.conns.remove(&conn) {
            self.detach(state, conn);
        }
        self.take()
    }

    /// One frame's record from a connection, at `now` (the wall clock, since the epoch).
    pub fn received(&mut self, conn: ConnId, record: &[u8], now: Duration) -> Vec<Outgoing> {
        self.now = now;
        match self.conns.get(&conn).copied() {
            Some(ConnState { session: None, .. }) => self.handshake(conn, record),
            Some(ConnState { ending: true, .. }) | None => {}
            Some(ConnState {
                session: Some(session),
                ..
            }) => {
                self.release(session);
                let delay = self.delay;
                let held = self.held.get_mut(&session);
                let flooded = if delay > Duration::ZERO {
                    let held = self.held.entry(session).or_default();
                    held.delay_incoming(conn, record.to_vec(), now, delay)
                } else if let Some(held) = held.filter(|held| held.reading_held(now)) {
                    held.hold_incoming(conn, record.to_vec())
                } else {
                    self.request(conn, session, record);
                    false
                };
                if flooded {
                    self.cut_flood(conn, session);
                }
            }
        }
        self.take()
    }

    /// The clock's tick: held traffic whose time has come goes, sessions unheard for their
    /// timeout expire, faults drawn per second strike, and the reaper looks when its time
    /// comes. Returns when to tick next at the latest.
    pub fn tick(&mut self, now: Duration) -> (Vec<Outgoing>, Duration) {
        self.now = now;
        let held: Vec<SessionId> = self.held.keys().copied().collect();
        for session in held {
            self.release(session);
        }
        for (server, replayed) in self.ensemble.replay_due(now) {
            let (by, zxid) = (replayed.by, replayed.zxid);
            self.notify(server, by, zxid, replayed.notifications, Told::Replayed);
            self.answer_waiting(server);
        }
        // No leader during an election: nobody expires a session nor reaps a node.
        let leading = self.ensemble.is_up(self.ensemble.leader(), now);
        let expired: Vec<SessionId> = (self.sessions.iter())
            .filter(|(_, state)| leading && now > state.last_heard + state.timeout)
            .map(|(session, _)| *session)
            .collect();
        for session in expired {
            self.expire(session);
        }
        while let Some(kind) = self.faults.due(self.since_start()) {
            self.strike_drawn(kind);
        }
        if leading && now >= self.next_reap {
            self.next_reap = now + self.ticks.container_check;
            for path in self.ensemble.leading().reap_candidates(millis(now)) {
                self.reap(&path);
            }
        }
        (self.take(), self.next_tick())
    }

    /// Sends the answers that waited for server `server` to apply what they wait for.
    fn answer_waiting(&mut self, server: usize) {
        let waiting: Vec<ConnId> = (self.answers.keys())
            .filter(|conn| self.conns.get(conn).is_some_and(|c| c.server == server))
            .copied()
            .collect();
        for conn in waiting {
            self.answer_ready(conn);
        }
    }

    /// How long until the next tick: at most half a tick, sooner when held traffic or a fault
    /// drawn per second is due.
    fn next_tick(&self) -> Duration {
        let releases = (self.held.values()).filter_map(|held| held.next_release(self.now));
        let fault = self.faults.next_due().map(|at| self.started + at);
        let replay = self.ensemble.next_due();
        let soonest = releases.chain(fault).chain(replay).min();
        let wait = soonest.map_or(Duration::MAX, |at| at.saturating_sub(self.now));
        wait.clamp(Duration::from_millis(1), self.ticks.tick / 2)
    }

    /// Carries out a command of the command port.
    pub fn control(&mut self, command: Control, now: Duration) -> Vec<Outgoing> {
        self.now = now;
        let every = |sessions: &BTreeMap<SessionId, SessionState>, one: Option<SessionId>| {
            one.map_or_else(|| sessions.keys().copied().collect(), |one| vec![one])
        };
        match command {
            Control::Ping => {}
            Control::CloseConnection(one) => {
                for session in every(&self.sessions, one) {
                    let conn = self.sessions.get(&session).and_then(|state| state.conn);
                    if let Some(conn) = conn {
                        self.close(conn, None);
                    }
                }
            }
            Control::ExpireSession(one) => {
                for session in every(&self.sessions, one) {
                    self.expire(session);
                }
            }
            Control::NoResponse(n) => self.holding = n.unwrap_or(u64::MAX),
            Control::FailRequests(n) => self.failing = n.unwrap_or(u64::MAX),
            Control::AddDelay(ms) => self.delay = Duration::from_millis(ms),
            Control::RejectConnections => self.rejecting = true,
            Control::ElectNewLeader => {
                let (low, high) = ELECTION;
                self.change_leader((low + high) / 2);
            }
            Control::Reset => {
                (self.holding, self.failing) = (0, 0);
                self.delay = Duration::ZERO;
                self.rejecting = false;
            }
        }
        self.take()
    }

    /// What a client says its recipe told it (it holds a lock, it leads, it lost them), in the
    /// session it names, which may have ended (the monitors decide what a claim in a dead
    /// session means). An error for a session never opened here.
    pub fn claim(
        &mut self,
        session: SessionId,
        outcome: Outcome,
        now: Duration,
    ) -> Result<(), String> {
        self.now = now;
        let client = *(self.clients.get(&session))
            .ok_or_else(|| format!("no session {session:#x} was opened here"))?;
        self.record(TraceEvent::Outcome {
            client,
            session,
            outcome,
        });
        Ok(())
    }

    fn since_start(&self) -> Duration {
        self.now.saturating_sub(self.started)
    }

    fn record(&mut self, event: TraceEvent) {
        let at = self.since_start();
        self.trace.push(at, event);
    }

    /// Sends what a fault held back for `session` once its time has come, then reads what its
    /// client sent meanwhile.
    fn release(&mut self, session: SessionId) {
        let now = self.now;
        let Some(held) = self.held.get_mut(&session) else {
            return;
        };
        let released = held.release_outgoing(now);
        self.out.extend(released);
        while let Some((conn, record)) = self
            .held
            .get_mut(&session)
            .and_then(|h| h.release_incoming(now))
        {
            match self.conns.get(&conn).copied() {
                Some(ConnState { session: None, .. }) => self.handshake(conn, &record),
                Some(ConnState {
                    session: Some(attached),
                    ending: false,
                    ..
                }) if attached == session => self.request(conn, session, &record),
                _ => {}
            }
        }
        if self
            .held
            .get(&session)
            .is_some_and(|held| held.is_idle(now))
        {
            self.held.remove(&session);
        }
    }

    /// The session a connection is attached to, if it has shaken hands.
    fn session_of(&self, conn: ConnId) -> Option<SessionId> {
        self.conns.get(&conn).and_then(|state| state.session)
    }

    /// The connection `session` is attached to on server `server`, if it is.
    fn conn_on(&self, session: SessionId, server: usize) -> Option<ConnId> {
        (self.conns.iter())
            .find(|(_, state)| state.session == Some(session) && state.server == server)
            .map(|(conn, _)| *conn)
    }

    fn client(&self, session: SessionId) -> ClientId {
        self.clients.get(&session).copied().unwrap_or_default()
    }

    /// Hands `out`, for `session`'s connection, to the driver, unless a fault holds the
    /// session's traffic back.
    fn emit(&mut self, session: Option<SessionId>, out: Outgoing) {
        let now = self.now;
        match session.and_then(|session| self.held.get_mut(&session)) {
            Some(held) if held.sending_held(now) => held.hold_outgoing(out),
            _ => self.out.push(out),
        }
    }

    /// The leader expires a session: its ephemerals go, other sessions' watches fire, and its
    /// connection is closed once its server has applied the expiry.
    fn expire(&mut self, session: SessionId) {
        let ended = self.ensemble.end_session(session, false, self.now);
        let zxid = ended.as_ref().map(|ended| ended.zxid);
        if let Some(ended) = ended {
            self.ended(session, ended, true);
        }
        if let Some(conn) = self.sessions.remove(&session).and_then(|state| state.conn) {
            let zxid = zxid.unwrap_or_default();
            self.end_conn(conn, None, zxid);
        }
    }

    /// `conn`'s session has ended at `zxid`: the server reads nothing more from it, answers
    /// what is ahead (the close's request `xid`, if it asked) and closes it.
    fn end_conn(&mut self, conn: ConnId, xid: Option<i32>, zxid: Zxid) {
        if let Some(state) = self.conns.get_mut(&conn) {
            state.ending = true;
            let answer = Answer::Ended { xid, zxid };
            self.park(conn, zxid, answer);
        }
    }

    /// A session's end, in the trace, and the watches it fired.
    fn ended(&mut self, session: SessionId, ended: Ended, expired: bool) {
        let client = self.client(session);
        let leader = self.ensemble.leader();
        self.notify(
            leader,
            session,
            ended.zxid,
            ended.notifications,
            Told::Committed,
        );
        self.record(TraceEvent::SessionEnded {
            client,
            session,
            expired,
            deleted: ended.deleted,
        });
    }

    /// Sends a reply, unless the command port said to swallow it. A found node's data or
    /// children (getData, getChildren2) go all the same: ZooKeeper sends those through its
    /// response cache, which its controller does not hold back.
    /// Whether it went.
    fn reply(&mut self, conn: ConnId, record: Vec<u8>, cached: bool) -> bool {
        if self.holding > 0 && !cached {
            self.holding = self
                .holding
                .saturating_sub(u64::from(self.holding != u64::MAX));
            return false;
        }
        self.send(conn, record);
        true
    }

    fn take(&mut self) -> Vec<Outgoing> {
        std::mem::take(&mut self.out)
    }

    fn send(&mut self, conn: ConnId, record: Vec<u8>) {
        let bytes = frame(&record);
        let session = self.session_of(conn);
        self.emit(session, Outgoing::Send { conn, bytes });
    }

    fn close(&mut self, conn: ConnId, why: Option<String>) {
        let session = self.session_of(conn);
        let close = self.closing(conn, why);
        self.emit(session, close);
    }

    /// Forgets `conn` (with a trace line for `why`): the close to send, now or once a fault
    /// lets its session's traffic go.
    fn closing(&mut self, conn: ConnId, why: Option<String>) -> Outgoing {
        let session = self.session_of(conn);
        if let (Some(session), Some(why)) = (session, &why) {
            let client = self.client(session);
            let text = format!("the server closed s{session}'s connection: {why}");
            self.record(TraceEvent::Note { client, text });
        }
        self.answers.remove(&conn);
        if let Some(state) = self.conns.remove(&conn) {
            self.detach(state, conn);
        }
        Outgoing::Close { conn, why }
    }

    /// A connection is gone: its session's watches go with it, off the server it reached.
    fn detach(&mut self, conn_state: ConnState, conn: ConnId) {
        let Some(session) = conn_state.session else {
            return;
        };
        if let Some(state) = self.sessions.get_mut(&session) {
            if state.conn == Some(conn) {
                state.conn = None;
                (self.ensemble.server_mut(conn_state.server)).take_watches(session);
            }
        }
    }

    /// Queues an answer behind the connection's earlier ones, and sends what is ready.
    fn park(&mut self, conn: ConnId, until: Zxid, answer: Answer) {
        let parked = Parked { until, answer };
        self.answers.entry(conn).or_default().push_back(parked);
        self.answer_ready(conn);
    }

    /// Sends a connection's parked answers, in order, as far as its server has applied.
    fn answer_ready(&mut self, conn: ConnId) {
        loop {
            let Some(state) = self.conns.get(&conn).copied() else {
                return;
            };
            let applied = self.ensemble.applied(state.server);
            let Some(queue) = self.answers.get_mut(&conn) else {
                return;
            };
            if queue.front().is_none_or(|parked| parked.until > applied) {
                return;
            }
            let parked = queue.pop_front().expect("just looked");
            if queue.is_empty() {
                self.answers.remove(&conn);
            }
            match parked.answer {
                Answer::Header { xid } => self.reply_header(conn, xid, applied, 0),
                Answer::Ended { xid, zxid } => {
                    if let Some(xid) = xid {
                        self.reply_header(conn, xid, zxid, 0);
                    }
                    self.answers.remove(&conn);
                    self.conns.remove(&conn);
                    return self.emit(state.session, Outgoing::Close { conn, why: None });
                }
                Answer::Op(answering) => self.answer(conn, state, *answering),
            }
        }
    }

    /// Counts a request of `session` (on a child of `under`, if it names a node), and names it
    /// as a schedule anchors a fault to it.
    fn count(
        &mut self,
        session: SessionId,
        verb: &str,
        under: Option<&str>,
    ) -> Option<RequestAnchors> {
        let state = self.sessions.get_mut(&session)?;
        let client = state.client;
        let mut anchor = |under: Option<&str>| {
            let key = (verb.to_owned(), under.map(str::to_owned));
            let nth = state.asked.entry(key).or_default();
            *nth += 1;
            Anchor {
                client,
                verb: verb.to_owned(),
                nth: *nth,
                under: under.map(str::to_owned),
            }
        };
        let every = anchor(None);
        let under = under.map(|under| anchor(Some(under)));
        let anchors = RequestAnchors { every, under };
        state.last = anchors.clone();
        Some(anchors)
    }

    /// A client sent more than [`holding::MOST_HELD`] while a fault held its traffic: its
    /// connection goes at once, with what it sent.
    fn cut_flood(&mut self, conn: ConnId, session: SessionId) {
        if let Some(held) = self.held.get_mut(&session) {
            held.forget(conn);
        }
        let most = holding::MOST_HELD >> 20;
        let why = format!("it sent more than {most} MiB while a fault held its traffic");
        let close = self.closing(conn, Some(why));
        self.out.push(close);
    }

    /// A connection's first frame: a new session, or a known one resumed with its password.
    fn handshake(&mut self, conn: ConnId, record: &[u8]) {
        let request = match ConnectRequest::decode(record) {
            Ok(request) => request,
            Err(error) => return self.close(conn, Some(format!("a bad handshake: {error}"))),
        };
        let now = self.now;
        if let Some(held) = self.held.get_mut(&request.session_id) {
            if held.reading_held(now) {
                if held.hold_incoming(conn, record.to_vec()) {
                    self.cut_flood(conn, request.session_id);
                }
                return;
            }
        }
        let server = self.conns.get(&conn).map_or(0, |state| state.server);
        let applied = self.ensemble.applied(server);
        if request.last_zxid_seen > applied {
            let why = format!(
                "the client has seen zxid {:#x}, beyond server {server}'s {applied:#x}",
                request.last_zxid_seen,
            );
            return self.close(conn, Some(why));
        }
        let (tick, timeout) = (
            self.ticks.tick,
            Duration::from_millis(request.timeout_ms.max(0) as u64),
        );
        let timeout = timeout.clamp(tick * 2, tick * 20);
        let session = match request.session_id {
            0 => Some(self.open_session(timeout)),
            session => {
                let known = self.sessions.get(&session);
                known
                    .filter(|state| state.password == request.password)
                    .map(|_| session)
            }
        };
        let Some(session) = session else {
            // An expired session, or a wrong password: ZooKeeper answers with a timeout of 0.
            let response = ConnectResponse {
                protocol_version: PROTOCOL_VERSION,
                timeout_ms: 0,
                session_id: 0,
                password: vec![0; PASSWORD_LEN],
                read_only: false,
            };
            self.send(conn, response.encode());
            return self.close(conn, None);
        };
        let state = self.sessions.get_mut(&session).expect("just checked");
        state.last_heard = now;
        state.timeout = timeout;
        let previous = state.conn.replace(conn);
        let response = ConnectResponse {
            protocol_version: PROTOCOL_VERSION,
            timeout_ms: i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX),
            session_id: session,
            password: state.password.clone(),
            read_only: false,
        };
        if let Some(previous) = previous {
            // The session moved to this connection: the old one goes, with its watches.
            self.answers.remove(&previous);
            if let Some(old) = self.conns.remove(&previous) {
                (self.ensemble.server_mut(old.server)).take_watches(session);
            }
            self.emit(
                Some(session),
                Outgoing::Close {
                    conn: previous,
                    why: None,
                },
            );
        }
        let attached = ConnState {
            server,
            session: Some(session),
            ending: false,
        };
        self.conns.insert(conn, attached);
        if self.ensemble.len() > 1 {
            let client = self.clients[&session];
            let leader = server == self.ensemble.leader();
            self.record(TraceEvent::Attached {
                client,
                session,
                server,
                leader,
            });
        }
        self.send(conn, response.encode());
        if let Some(anchors) = self.count(session, "connect", None) {
            self.strike_after(session, &anchors, &[]);
        }
    }

    /// A new session, a client of its own in the trace.
    fn open_session(&mut self, timeout: Duration) -> SessionId {
        let session = self.ensemble.open_session(self.now);
        let client = ClientId::try_from(self.clients.len()).unwrap_or(ClientId::MAX);
        self.clients.insert(session, client);
        let state = SessionState {
            password: self.password(session),
            timeout,
            last_heard: self.now,
            conn: None,
            client,
            asked: BTreeMap::new(),
            last: RequestAnchors {
                every: Anchor {
                    client,
                    verb: "connect".to_owned(),
                    nth: 1,
                    under: None,
                },
                under: None,
            },
        };
        self.sessions.insert(session, state);
        self.record(TraceEvent::SessionOpened { client, session });
        session
    }

    /// A session's password: 16 bytes drawn from the seed and the session.
    fn password(&self, session: SessionId) -> Vec<u8> {
        let first = key(self.seed ^ session as u64, "password");
        let second = key(first, "password");
        [first.to_be_bytes(), second.to_be_bytes()].concat()
    }

    /// One request of an attached connection.
    fn request(&mut self, conn: ConnId, session: SessionId, record: &[u8]) {
        let (header, request, nulls) = match Request::decode_noting_null_data(record) {
            Ok(decoded) => decoded,
            Err(error) => return self.close(conn, Some(format!("a bad request: {error}"))),
        };
        let now = self.now;
        if let Some(state) = self.sessions.get_mut(&session) {
            state.last_heard = now;
        }
        let server = self.conns.get(&conn).map_or(0, |state| state.server);
        if self.failing > 0 {
            // The command port fails it unread, as ZooKeeper's controller: APIERROR, zxid 0.
            self.failing -= u64::from(self.failing != u64::MAX);
            let header = ReplyHeader {
                xid: header.xid,
                zxid: 0,
                err: ZkError::ApiError.code(),
            };
            return self.send(conn, header.encode());
        }
        match request {
            Request::Ping => self.park(conn, 0, Answer::Header { xid: xid::PING }),
            Request::SetWatches(set) => {
                let zxid = self.ensemble.applied(server);
                let fired = (self.ensemble.server_mut(server)).set_watches(
                    session,
                    set.relative_zxid,
                    &set.watches,
                );
                self.notify(server, session, zxid, fired, Told::Now);
                let answer = Answer::Header {
                    xid: xid::SET_WATCHES,
                };
                self.park(conn, 0, answer);
            }
            Request::CloseSession => {
                let ended = self.ensemble.end_session(session, true, now);
                let zxid = ended.as_ref().map_or(0, |ended| ended.zxid);
                // The closing session hears its own ephemerals go, before the close's reply.
                if let Some(ended) = ended {
                    self.ended(session, ended, false);
                }
                self.sessions.remove(&session);
                self.end_conn(conn, Some(header.xid), zxid);
            }
            Request::Op(op) => self.apply(conn, server, session, header, op, &nulls),
        }
    }

    /// An op of `session`, come on `conn` to server `server`: struck by a fault, applied by
    /// the leader, or left for the server to serve in its turn.
    fn apply(
        &mut self,
        conn: ConnId,
        server: usize,
        session: SessionId,
        header: RequestHeader,
        op: Op,
        nulls: &[String],
    ) {
        let client = self.client(session);
        let text = OpText(&op).to_string();
        let verb = text.split(' ').next().unwrap_or_default();
        let anchors = self.count(session, verb, Some(parent(op.path())));
        self.record(TraceEvent::Request {
            client,
            session,
            op: op.clone(),
        });
        let fault = (anchors.as_ref()).and_then(|anchors| self.faults.at(anchors, &op));
        if let Some(fault) = fault
            .as_ref()
            .filter(|f| f.kind == FaultKind::ConnectionLoss)
        {
            self.strike(fault.clone(), format!("connection lost before {text}"));
            return self.close(conn, None);
        }
        let leader = self.ensemble.leader();
        let identity = self.ensemble.leading().identity(session);
        let (until, applied) = if server == leader || goes_through_leader(&op) {
            let before = self.ensemble.applied(leader);
            let applied = self.ensemble.apply(session, &op, self.now);
            self.nulled(&op, &applied.reply, nulls);
            self.trace_applied(session, &op, &applied);
            // A watch event goes out before any reply that reflects its change.
            let told = match self.ensemble.applied(leader) > before {
                true => Told::Committed,
                false => Told::Now,
            };
            let notifications = applied.notifications.clone();
            self.notify(leader, session, applied.zxid, notifications, told);
            // A client reads its own writes: its server answers once it has applied them.
            let until = if server == leader { 0 } else { applied.zxid };
            (until, Some(applied))
        } else {
            // A sync waits for what the leader had committed when it came.
            let until = match op {
                Op::Sync { .. } => self.ensemble.applied(leader),
                _ => 0,
            };
            (until, None)
        };
        let answering = Answering {
            header,
            op,
            identity,
            applied,
            fault,
            anchors,
        };
        self.park(conn, until, Answer::Op(Box::new(answering)));
    }

    fn trace_applied(&mut self, session: SessionId, op: &Op, applied: &Applied) {
        self.record(TraceEvent::Applied {
            client: self.client(session),
            session,
            zxid: applied.zxid,
            op: op.clone(),
            reply: applied.reply.clone(),
        });
    }

    /// Answers an op on `conn` (its state `state`), in its turn: a read left to the session's
    /// server is served now; a lost reply closes the connection instead.
    fn answer(&mut self, conn: ConnId, state: ConnState, answering: Answering) {
        let Answering {
            header,
            op,
            identity,
            applied,
            fault,
            anchors,
        } = answering;
        let Some(session) = state.session else {
            return;
        };
        let client = self.client(session);
        let text = OpText(&op).to_string();
        let applied = applied.unwrap_or_else(|| {
            let server = self.ensemble.server_mut(state.server);
            let served = server.serve_read(session, &identity, &op);
            self.trace_applied(session, &op, &served);
            served
        });
        if let Some(fault) = fault.as_ref().filter(|f| f.kind != FaultKind::Reorder) {
            self.strike(fault.clone(), format!("reply lost after apply: {text}"));
            self.close(conn, None);
        } else {
            if let Some(fault) = fault {
                let until = self.now + fault.lasts;
                self.strike(fault, format!("the reply to {text} held back"));
                self.held.entry(session).or_default().delay_sending(until);
            }
            // An auth is answered outside the pipeline, with zxid 0.
            let zxid = match op {
                Op::AddAuth { .. } => 0,
                _ => applied.zxid,
            };
            let cached = header.code == op_code::GET_DATA || header.code == op_code::GET_CHILDREN2;
            let null = |stat: &Stat| self.null_data.get(&stat.czxid) == Some(&stat.version);
            let record = encode_reply_nulling(header, zxid, &op, &applied.reply, &null);
            if self.reply(conn, record, cached && applied.reply.is_ok()) {
                self.record(TraceEvent::Reply {
                    client,
                    session,
                    reply: applied.reply.clone(),
                });
            }
            if refused_auth(&op, &applied.reply) {
                // The server closes the connection behind a refused authentication.
                self.close(conn, None);
            }
        }
        let emptied = emptied(&op, &applied.reply);
        if let Some(anchors) = anchors {
            self.strike_after(session, &anchors, &emptied);
        }
    }

    /// Notes the nodes `op` left with null data: those of `nulls` it created or set.
    fn nulled(&mut self, op: &Op, reply: &OpReply, nulls: &[String]) {
        if nulls.is_empty() {
            return;
        }
        let done: Vec<(&Op, &OpReply)> = match (op, reply) {
            (Op::Multi(ops), Ok(OpResult::Multi(results))) => ops.iter().zip(results).collect(),
            _ => vec![(op, reply)],
        };
        for (op, reply) in done {
            let path = match (op, reply) {
                (Op::Create { path, data, .. }, Ok(OpResult::Created { path: made, .. }))
                    if data.is_empty() && nulls.contains(path) =>
                {
                    made
                }
                (Op::SetData { path, data, .. }, Ok(_))
                    if data.is_empty() && nulls.contains(path) =>
                {
                    path
                }
                _ => continue,
            };
            if let Some((_, stat)) = self.ensemble.leading().node(path) {
                self.null_data.insert(stat.czxid, stat.version);
            }
        }
    }

    /// The schedule's faults that strike once the request of `session` that answers to
    /// `anchors` is answered, then a drawn reaping of each container it `emptied`.
    fn strike_after(&mut self, session: SessionId, anchors: &RequestAnchors, emptied: &[String]) {
        for fault in self.faults.after(anchors) {
            self.strike_on(session, fault, emptied);
        }
        let now = millis(self.now);
        for container in emptied {
            let reapable = self.ensemble.leading().reapable(container, now);
            if reapable && self.faults.draw_reaped() {
                let fault = AnchoredFault {
                    kind: FaultKind::ContainerReaped,
                    anchor: anchors.written(),
                    lasts: Duration::ZERO,
                };
                self.strike_on(session, fault, std::slice::from_ref(container));
            }
        }
    }

    /// Strikes a fault that acts on a session (rather than on one request's fate).
    fn strike_on(&mut self, session: SessionId, fault: AnchoredFault, emptied: &[String]) {
        let now = self.now;
        match fault.kind {
            FaultKind::SessionExpiry => {
                self.strike(fault, format!("server expires s{session}"));
                self.expire(session);
            }
            FaultKind::Partition => {
                let until = now + fault.lasts;
                let detail = format!("s{session} cut off for {:?}", fault.lasts);
                self.strike(fault, detail);
                self.held.entry(session).or_default().cut_off(until);
            }
            FaultKind::ContainerReaped => {
                let leader = self.ensemble.leading();
                let reapable: Vec<&String> = (emptied.iter())
                    .filter(|path| leader.reapable(path, millis(now)))
                    .collect();
                let detail = match reapable.is_empty() {
                    true => "no container to reap".to_owned(),
                    false => format!("reaped at once: {reapable:?}"),
                };
                let reapable: Vec<String> = reapable.into_iter().cloned().collect();
                self.strike(fault, detail);
                for path in reapable {
                    self.reap(&path);
                }
            }
            FaultKind::StaleRead | FaultKind::ServerCrash => {
                let conn = self.sessions.get(&session).and_then(|state| state.conn);
                let server = conn
                    .and_then(|conn| self.conns.get(&conn))
                    .map(|c| c.server);
                let until = now + fault.lasts;
                let Some(server) = server.filter(|&server| {
                    server != self.ensemble.leader() && self.ensemble.is_up(server, now)
                }) else {
                    return;
                };
                if fault.kind == FaultKind::ServerCrash {
                    let detail = format!("server {server} down for {:?}", fault.lasts);
                    self.strike(fault, detail);
                    self.crash(server, until);
                } else {
                    let detail = format!("server {server} applies nothing for {:?}", fault.lasts);
                    self.strike(fault, detail);
                    self.ensemble.stand_still(server, until);
                }
            }
            FaultKind::LeaderChange => {
                let old = self.ensemble.leader();
                if let Some(leader) = self.change_leader(fault.lasts) {
                    let detail = format!(
                        "server {old} steps down; server {leader} leads after {:?}",
                        fault.lasts
                    );
                    self.strike(fault, detail);
                }
            }
            _ => {}
        }
    }

    /// A follower dies until `until`: its connections close (its clients move to other
    /// servers, or wait), it takes none meanwhile, and it catches up when it is back.
    fn crash(&mut self, server: usize, until: Duration) {
        let attached: Vec<ConnId> = (self.conns.iter())
            .filter(|(_, state)| state.server == server)
            .map(|(conn, _)| *conn)
            .collect();
        for conn in attached {
            self.close(conn, None);
        }
        for record in self.ensemble.crash(server, until) {
            self.record(record);
        }
    }

    /// The leader steps down for an election of `election`: every connection closes, no
    /// server takes one until it is over, and every session has a whole timeout from then.
    /// The new leader, or `None` if no follower is up.
    fn change_leader(&mut self, election: Duration) -> Option<usize> {
        let until = self.now + election;
        let (leader, told) = self.ensemble.elect(self.now, until)?;
        for record in told {
            self.record(record);
        }
        let conns: Vec<ConnId> = self.conns.keys().copied().collect();
        for conn in conns {
            self.close(conn, None);
        }
        for state in self.sessions.values_mut() {
            state.last_heard = state.last_heard.max(until);
        }
        Some(leader)
    }

    /// A fault drawn per second strikes a random live session, anchored after its last request.
    fn strike_drawn(&mut self, kind: FaultKind) {
        let live: Vec<SessionId> = self.sessions.keys().copied().collect();
        if live.is_empty() {
            return;
        }
        let which = self.faults.pick(kind, live.len());
        let session = live[which];
        let state = &self.sessions[&session];
        let (anchor, lasts) = (
            state.last.written(),
            self.faults.length(kind, state.timeout),
        );
        let fault = AnchoredFault {
            kind,
            anchor,
            lasts,
        };
        self.strike_on(session, fault, &[]);
    }

    /// A fault struck: a trace line, and a line of the schedule that strikes it again.
    fn strike(&mut self, fault: AnchoredFault, detail: String) {
        let detail = format!("{detail} (schedule: {fault})");
        self.record(TraceEvent::Fault {
            kind: fault.kind,
            client: fault.anchor.client,
            detail,
            lasts: fault.lasts,
        });
        self.faults.struck(fault);
    }

    /// The reaper deletes a container or an idle TTL node.
    fn reap(&mut self, path: &str) {
        if let Some(applied) = self.ensemble.reap(path, self.now) {
            self.record(TraceEvent::Reaped {
                zxid: applied.zxid,
                path: path.to_owned(),
            });
            let leader = self.ensemble.leader();
            self.notify(
                leader,
                0,
                applied.zxid,
                applied.notifications,
                Told::Committed,
            );
        }
    }

    fn reply_header(&mut self, conn: ConnId, xid: i32, zxid: i64, err: i32) {
        let header = ReplyHeader { xid, zxid, err };
        let _ = self.reply(conn, header.encode(), false);
    }

    /// Sends each watch that one change (by session `by`, at `zxid`) fired on server `server`
    /// to its session's connection there, and traces whom it notified as `told` says; a session
    /// between connections has no watches to fire.
    fn notify(
        &mut self,
        server: usize,
        by: SessionId,
        zxid: Zxid,
        notifications: Vec<Notification>,
        told: Told,
    ) {
        let state = self.ensemble.server(server);
        let records = TraceEvent::notified(state, by, zxid, &notifications);
        let records = match told {
            Told::Now => records,
            Told::Committed => self.ensemble.committed_records(zxid, records, self.now),
            Told::Replayed => self.ensemble.replayed_records(server, zxid, records),
        };
        for record in records {
            self.record(record);
        }
        for notification in notifications {
            let Some(conn) = self.conn_on(notification.session, server) else {
                continue;
            };
            self.record(TraceEvent::Watch {
                client: self.client(notification.session),
                session: notification.session,
                deletion: notification.event.event_type == EventType::NodeDeleted,
                event: notification.event.clone(),
                zxid,
                cause: notification.cause,
            });
            self.send(conn, encode_notification(&notification.event));
        }
    }
}

/// The parents of the nodes an op deleted: the containers it may have emptied.
fn emptied(op: &Op, reply: &OpReply) -> Vec<String> {
    let deleted: Vec<&str> = match (op, reply) {
        (Op::Delete { path, .. }, Ok(_)) => vec![path],
        (Op::Multi(ops), Ok(_)) => (ops.iter())
            .filter_map(|op| match op {
                Op::Delete { path, .. } => Some(path.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    deleted
        .into_iter()
        .map(|path| parent(path).to_owned())
        .collect()
}

fn refused_auth(op: &Op, reply: &OpReply) -> bool {
    matches!(op, Op::AddAuth { .. }) && *reply == Err(ZkError::AuthFailed)
}
