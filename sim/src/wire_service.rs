//! The pure server behind ZooKeeper's wire protocol, as a core any clock and any sockets can
//! drive: `zklab serve` runs it on tokio. It does no I/O: each input (a connection opened, one
//! frame's record received, a connection gone, the clock's tick, a command, a client's claim)
//! comes with its time, and what it causes comes out as [`Outgoing`]s, in order.
//!
//! It keeps what a ZooKeeper server keeps per session (its password, its negotiated timeout,
//! when it was last heard, the connection it is attached to) and per connection (whether it has
//! shaken hands). A session lives across connections until the clock passes its timeout unheard:
//! then it expires, its ephemerals go, and its connection is closed. A connection that sends
//! what no client sends is closed, alone, with a note saying why.
//!
//! Faults ([`ServeFaults`]) strike as the server sees requests; everything the server sees and
//! does, and what clients claim they were told, goes to a [`Trace`] the driver takes out as it
//! grows ([`WireService::take_trace`]), each session a client of its own (`c0` the first).

mod anchor;
mod control;
mod holding;
mod serve_faults;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::time::Duration;

use zklab_recipes::client::{EventType, Op, OpReply, OpResult, SessionId, Stat, ZkError};
use zklab_recipes::outcome::Outcome;

use crate::fault::FaultKind;
use crate::jute::archive::frame;
use crate::jute::codes::{op_code, xid};
use crate::jute::handshake::{ConnectRequest, ConnectResponse, PASSWORD_LEN, PROTOCOL_VERSION};
use crate::jute::reply::{encode_notification, encode_reply_nulling, ReplyHeader};
use crate::jute::request::{Request, RequestHeader};
use crate::path::parent;
use crate::server::{Ended, Notification, Server};
use crate::service::streams::key;
use crate::trace::{ClientId, OpText, Trace, TraceEvent};

use anchor::RequestAnchors;
pub use anchor::{Anchor, AnchoredFault};
pub use control::{parse_number, Control};
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

/// The pure server and its sessions on the wire (see the module's documentation).
pub struct WireService {
    server: Server,
    seed: u64,
    ticks: Ticks,
    /// The wall time the service started at: the trace counts from it.
    started: Duration,
    /// The time of the input being handled, since the epoch.
    now: Duration,
    sessions: BTreeMap<SessionId, SessionState>,
    /// The client of every session ever opened, for claims that come after its end.
    clients: BTreeMap<SessionId, ClientId>,
    /// Each open connection, and the session it is attached to once it has shaken hands.
    conns: BTreeMap<ConnId, Option<SessionId>>,
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
    /// A fresh server (only `/` and `/zookeeper`) started at wall time `started`, whose session
    /// passwords come from `seed`, striking `faults`.
    pub fn new(seed: u64, ticks: Ticks, faults: ServeFaults, started: Duration) -> Self {
        WireService {
            server: Server::new(),
            seed,
            ticks,
            started,
            now: started,
            sessions: BTreeMap::new(),
            clients: BTreeMap::new(),
            conns: BTreeMap::new(),
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

    /// The answer to a four-letter word (`srvr`, `ruok`), which a connection sends instead of a
    /// handshake; `None` for a word the server does not know.
    pub fn four_letter_word(&self, word: &[u8; 4]) -> Option<String> {
        match word {
            b"ruok" => Some("imok".to_owned()),
            b"srvr" => Some(format!(
                "Zookeeper version: zklab {}\nZxid: {:#x}\nMode: standalone\nNode count: {}\n",
                env!("CARGO_PKG_VERSION"),
                self.server.last_zxid(),
                self.node_count(),
            )),
            _ => None,
        }
    }

    fn node_count(&self) -> usize {
        let mut count = 0;
        let mut stack = vec!["/".to_owned()];
        while let Some(path) = stack.pop() {
            count += 1;
            for child in self.server.children(&path).unwrap_or_default() {
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

    /// A connection opened: its first frame must be a handshake. Refused at once while the
    /// command port says so.
    pub fn opened(&mut self, conn: ConnId) -> Vec<Outgoing> {
        match self.rejecting {
            true => self.out.push(Outgoing::Close { conn, why: None }),
            false => {
                self.conns.insert(conn, None);
            }
        }
        self.take()
    }

    /// A connection is gone (the client closed it, or it broke): the server drops the watches
    /// its session set, as ZooKeeper drops a connection's watches; the session lives on. What it
    /// sent and a fault held unread goes with it.
    pub fn gone(&mut self, conn: ConnId, now: Duration) -> Vec<Outgoing> {
        self.now = now;
        for held in self.held.values_mut() {
            held.forget(conn);
        }
        if let Some(Some(session)) = self.conns.remove(&conn) {
            self.detach(session, conn);
        }
        self.take()
    }

    /// One frame's record from a connection, at `now` (the wall clock, since the epoch).
    pub fn received(&mut self, conn: ConnId, record: &[u8], now: Duration) -> Vec<Outgoing> {
        self.now = now;
        match self.conns.get(&conn) {
            Some(None) => self.handshake(conn, record),
            Some(Some(session)) => {
                let session = *session;
                self.release(session);
                let delay = self.delay;
                let held = self.held.get_mut(&session);
                if delay > Duration::ZERO {
                    let held = self.held.entry(session).or_default();
                    held.delay_incoming(conn, record.to_vec(), now, delay);
                } else if let Some(held) = held.filter(|held| held.reading_held(now)) {
                    held.hold_incoming(conn, record.to_vec());
                } else {
                    self.request(conn, session, record);
                }
            }
            None => {}
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
        let expired: Vec<SessionId> = (self.sessions.iter())
            .filter(|(_, state)| now > state.last_heard + state.timeout)
            .map(|(session, _)| *session)
            .collect();
        for session in expired {
            self.expire(session);
        }
        while let Some(kind) = self.faults.due(self.since_start()) {
            self.strike_drawn(kind);
        }
        if now >= self.next_reap {
            self.next_reap = now + self.ticks.container_check;
            for path in self.server.reap_candidates(millis(now)) {
                self.reap(&path);
            }
        }
        (self.take(), self.next_tick())
    }

    /// How long until the next tick: at most half a tick, sooner when held traffic or a fault
    /// drawn per second is due.
    fn next_tick(&self) -> Duration {
        let releases = (self.held.values()).filter_map(|held| held.next_release(self.now));
        let fault = self.faults.next_due().map(|at| self.started + at);
        let soonest = releases.chain(fault).min();
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
            match self.conns.get(&conn) {
                Some(None) => self.handshake(conn, &record),
                Some(Some(attached)) if *attached == session => {
                    self.request(conn, session, &record)
                }
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
        self.conns.get(&conn).copied().flatten()
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

    /// The server expires a session: its ephemerals go, other sessions' watches fire, and its
    /// connection is closed behind the events it fired for the session itself.
    fn expire(&mut self, session: SessionId) {
        let ended = self.server.expire_session(session, millis(self.now));
        if let Some(ended) = ended {
            self.ended(session, ended, true);
        }
        if let Some(state) = self.sessions.remove(&session) {
            if let Some(conn) = state.conn {
                self.conns.remove(&conn);
                self.emit(Some(session), Outgoing::Close { conn, why: None });
            }
        }
    }

    /// A session's end, in the trace, and the watches it fired.
    fn ended(&mut self, session: SessionId, ended: Ended, expired: bool) {
        let client = self.clients.get(&session).copied().unwrap_or_default();
        self.notify(session, ended.zxid, ended.notifications);
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
        if let (Some(session), Some(why)) = (session, &why) {
            let client = self.clients.get(&session).copied().unwrap_or_default();
            let text = format!("the server closed s{session}'s connection: {why}");
            self.record(TraceEvent::Note { client, text });
        }
        if let Some(session) = session {
            self.conns.remove(&conn);
            self.detach(session, conn);
        } else {
            self.conns.remove(&conn);
        }
        self.emit(session, Outgoing::Close { conn, why });
    }

    /// The session's connection is gone: its watches go with it.
    fn detach(&mut self, session: SessionId, conn: ConnId) {
        if let Some(state) = self.sessions.get_mut(&session) {
            if state.conn == Some(conn) {
                state.conn = None;
                self.server.take_watches(session);
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

    /// A connection's first frame: a new session, or a known one resumed with its password.
    fn handshake(&mut self, conn: ConnId, record: &[u8]) {
        let request = match ConnectRequest::decode(record) {
            Ok(request) => request,
            Err(error) => return self.close(conn, Some(format!("a bad handshake: {error}"))),
        };
        let now = self.now;
        if let Some(held) = self.held.get_mut(&request.session_id) {
            if held.reading_held(now) {
                return held.hold_incoming(conn, record.to_vec());
            }
        }
        if request.last_zxid_seen > self.server.last_zxid() {
            let why = format!(
                "the client has seen zxid {:#x}, beyond this server's {:#x}",
                request.last_zxid_seen,
                self.server.last_zxid()
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
            self.conns.remove(&previous);
            self.server.take_watches(session);
            self.emit(
                Some(session),
                Outgoing::Close {
                    conn: previous,
                    why: None,
                },
            );
        }
        self.conns.insert(conn, Some(session));
        self.send(conn, response.encode());
        if let Some(anchors) = self.count(session, "connect", None) {
            self.strike_after(session, &anchors, &[]);
        }
    }

    /// A new session, a client of its own in the trace.
    fn open_session(&mut self, timeout: Duration) -> SessionId {
        let session = self.server.open_session();
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
        let zxid = self.server.last_zxid();
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
            Request::Ping => self.reply_header(conn, xid::PING, zxid, 0),
            Request::SetWatches(set) => {
                let fired = (self.server).set_watches(session, set.relative_zxid, &set.watches);
                self.notify(session, zxid, fired);
                self.reply_header(conn, xid::SET_WATCHES, zxid, 0);
            }
            Request::CloseSession => {
                let ended = self.server.close_session(session, millis(now));
                let zxid = ended.as_ref().map_or(zxid, |ended| ended.zxid);
                // The closing session hears its own ephemerals go, before the close's reply.
                if let Some(ended) = ended {
                    self.ended(session, ended, false);
                }
                self.sessions.remove(&session);
                self.reply_header(conn, header.xid, zxid, 0);
                self.conns.remove(&conn);
                self.emit(Some(session), Outgoing::Close { conn, why: None });
            }
            Request::Op(op) => self.apply(conn, session, header, op, &nulls),
        }
    }

    fn apply(
        &mut self,
        conn: ConnId,
        session: SessionId,
        header: RequestHeader,
        op: Op,
        nulls: &[String],
    ) {
        let client = self.clients.get(&session).copied().unwrap_or_default();
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
        let applied = self.server.apply(session, &op, millis(self.now));
        self.nulled(&op, &applied.reply, nulls);
        self.record(TraceEvent::Applied {
            client,
            session,
            zxid: applied.zxid,
            op: op.clone(),
            reply: applied.reply.clone(),
        });
        // A watch event goes out before any reply that reflects its change.
        self.notify(session, applied.zxid, applied.notifications);
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
            if let Some((_, stat)) = self.server.node(path) {
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
            if self.server.reapable(container, now) && self.faults.draw_reaped() {
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
                let reapable: Vec<&String> = (emptied.iter())
                    .filter(|path| self.server.reapable(path, millis(now)))
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
            _ => {}
        }
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
        if let Some(applied) = self.server.reap(path, millis(self.now)) {
            self.record(TraceEvent::Reaped {
                zxid: applied.zxid,
                path: path.to_owned(),
            });
            self.notify(0, applied.zxid, applied.notifications);
        }
    }

    fn reply_header(&mut self, conn: ConnId, xid: i32, zxid: i64, err: i32) {
        let header = ReplyHeader { xid, zxid, err };
        let _ = self.reply(conn, header.encode(), false);
    }

    /// Sends each watch that one change (by session `by`, at `zxid`) fired to its session's
    /// connection; a session between connections has no watches to fire.
    fn notify(&mut self, by: SessionId, zxid: i64, notifications: Vec<Notification>) {
        if notifications.is_empty() {
            return;
        }
        for change in TraceEvent::notified(&self.server, by, zxid, &notifications) {
            self.record(change);
        }
        for notification in notifications {
            let state = self.sessions.get(&notification.session);
            let Some((conn, client)) = state.and_then(|s| Some((s.conn?, s.client))) else {
                continue;
            };
            self.record(TraceEvent::Watch {
                client,
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

fn millis(now: Duration) -> i64 {
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}
