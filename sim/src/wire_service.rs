//! The pure server behind ZooKeeper's wire protocol, as a core any clock and any sockets can
//! drive: `zklab serve` runs it on tokio. It does no I/O: each input (a connection opened, one
//! frame's record received, a connection gone, the clock's tick) comes with its time, and what it
//! causes comes out as [`Outgoing`]s, in order.
//!
//! It keeps what a ZooKeeper server keeps per session (its password, its negotiated timeout,
//! when it was last heard, the connection it is attached to) and per connection (whether it has
//! shaken hands). A session lives across connections until the clock passes its timeout unheard:
//! then it expires, its ephemerals go, and its connection is closed. A connection that sends
//! what no client sends is closed, alone, with a note saying why.

use std::collections::BTreeMap;
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, SessionId, ZkError};

use crate::jute::archive::frame;
use crate::jute::codes::{op_code, xid};
use crate::jute::handshake::{ConnectRequest, ConnectResponse, PASSWORD_LEN, PROTOCOL_VERSION};
use crate::jute::reply::{encode_notification, encode_reply, ReplyHeader};
use crate::jute::request::{Request, RequestHeader};
use crate::server::{Notification, Server};
use crate::service::streams::key;

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

/// A command of the command port, as ZooKeeper's `ControllerService` takes them
/// (`GET /command/<ACTION>[/<parameter>]`); a session id is written in decimal or `0x` hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Nothing: the port answers.
    Ping,
    /// Close one session's connection, or every connection; sessions live on.
    CloseConnection(Option<SessionId>),
    /// Expire one session, or every one.
    ExpireSession(Option<SessionId>),
    /// Send no reply to the next `n` requests of any session (every one with no `n`), which
    /// are still applied. As ZooKeeper's controller, the replies that find a node's data
    /// (getData) or children (getChildren2, not getChildren), and notifications, still go.
    NoResponse(Option<u64>),
    /// Behave again.
    Reset,
}

impl Control {
    /// The command `action` with its `parameter`, as the command port spells them.
    pub fn parse(action: &str, parameter: Option<&str>) -> Result<Control, String> {
        let number = |text: &str| {
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.map_err(|_| format!("{action} takes a number, not {text:?}"))
        };
        let session = |text: Option<&str>| {
            text.map(number)
                .transpose()
                .map(|n| n.map(|n| n as SessionId))
        };
        Ok(match action {
            "PING" => Control::Ping,
            "CLOSECONNECTION" => Control::CloseConnection(session(parameter)?),
            "EXPIRESESSION" => Control::ExpireSession(session(parameter)?),
            "NORESPONSE" => Control::NoResponse(parameter.map(number).transpose()?),
            "RESET" => Control::Reset,
            "ADDDELAY" | "FAILREQUESTS" | "REJECTCONNECTIONS" | "ELECTNEWLEADER" | "SHUTDOWN" => {
                return Err(format!("{action} is not supported by zklab serve yet"))
            }
            _ => return Err(format!("no command {action}")),
        })
    }
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
}

/// The pure server and its sessions on the wire (see the module's documentation).
pub struct WireService {
    server: Server,
    seed: u64,
    ticks: Ticks,
    sessions: BTreeMap<SessionId, SessionState>,
    /// Each open connection, and the session it is attached to once it has shaken hands.
    conns: BTreeMap<ConnId, Option<SessionId>>,
    next_reap: Duration,
    /// How many more replies to swallow (`Control::NoResponse`); `u64::MAX` for all.
    holding: u64,
    out: Vec<Outgoing>,
}

impl WireService {
    /// A fresh server (only `/` and `/zookeeper`) whose session passwords come from `seed`.
    pub fn new(seed: u64, ticks: Ticks) -> Self {
        WireService {
            server: Server::new(),
            seed,
            ticks,
            sessions: BTreeMap::new(),
            conns: BTreeMap::new(),
            next_reap: Duration::ZERO,
            holding: 0,
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

    /// A connection opened: its first frame must be a handshake.
    pub fn opened(&mut self, conn: ConnId) {
        self.conns.insert(conn, None);
    }

    /// A connection is gone (the client closed it, or it broke): the server drops the watches
    /// its session set, as ZooKeeper drops a connection's watches; the session lives on.
    pub fn gone(&mut self, conn: ConnId) -> Vec<Outgoing> {
        if let Some(Some(session)) = self.conns.remove(&conn) {
            self.detach(session, conn);
        }
        self.take()
    }

    /// One frame's record from a connection, at `now` (the wall clock, since the epoch).
    pub fn received(&mut self, conn: ConnId, record: &[u8], now: Duration) -> Vec<Outgoing> {
        match self.conns.get(&conn) {
            Some(None) => self.handshake(conn, record, now),
            Some(Some(session)) => {
                let session = *session;
                self.request(conn, session, record, now);
            }
            None => {}
        }
        self.take()
    }

    /// The clock's tick: sessions unheard for their timeout expire, and the reaper looks when
    /// its time comes. Returns when to tick next at the latest.
    pub fn tick(&mut self, now: Duration) -> (Vec<Outgoing>, Duration) {
        let expired: Vec<SessionId> = (self.sessions.iter())
            .filter(|(_, state)| now > state.last_heard + state.timeout)
            .map(|(session, _)| *session)
            .collect();
        for session in expired {
            self.expire(session, now);
        }
        if now >= self.next_reap {
            self.next_reap = now + self.ticks.container_check;
            for path in self.server.reap_candidates(millis(now)) {
                if let Some(applied) = self.server.reap(&path, millis(now)) {
                    self.notify(applied.notifications);
                }
            }
        }
        (self.take(), self.ticks.tick / 2)
    }

    /// Carries out a command of the command port.
    pub fn control(&mut self, command: Control, now: Duration) -> Vec<Outgoing> {
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
                    self.expire(session, now);
                }
            }
            Control::NoResponse(n) => self.holding = n.unwrap_or(u64::MAX),
            Control::Reset => self.holding = 0,
        }
        self.take()
    }

    /// The server expires a session: its ephemerals go, other sessions' watches fire, and its
    /// connection is closed behind the events it fired for the session itself.
    fn expire(&mut self, session: SessionId, now: Duration) {
        let ended = self.server.expire_session(session, millis(now));
        if let Some(ended) = ended {
            self.notify(ended.notifications);
        }
        if let Some(state) = self.sessions.remove(&session) {
            if let Some(conn) = state.conn {
                self.conns.remove(&conn);
                self.out.push(Outgoing::Close { conn, why: None });
            }
        }
    }

    /// Sends a reply, unless the command port said to swallow it. A found node's data or
    /// children (getData, getChildren2) go all the same: ZooKeeper sends those through its
    /// response cache, which its controller does not hold back.
    fn reply(&mut self, conn: ConnId, record: Vec<u8>, cached: bool) {
        if self.holding > 0 && !cached {
            self.holding = self
                .holding
                .saturating_sub(u64::from(self.holding != u64::MAX));
            return;
        }
        self.send(conn, record);
    }

    fn take(&mut self) -> Vec<Outgoing> {
        std::mem::take(&mut self.out)
    }

    fn send(&mut self, conn: ConnId, record: Vec<u8>) {
        let bytes = frame(&record);
        self.out.push(Outgoing::Send { conn, bytes });
    }

    fn close(&mut self, conn: ConnId, why: Option<String>) {
        if let Some(Some(session)) = self.conns.remove(&conn) {
            self.detach(session, conn);
        }
        self.out.push(Outgoing::Close { conn, why });
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

    /// A connection's first frame: a new session, or a known one resumed with its password.
    fn handshake(&mut self, conn: ConnId, record: &[u8], now: Duration) {
        let request = match ConnectRequest::decode(record) {
            Ok(request) => request,
            Err(error) => return self.close(conn, Some(format!("a bad handshake: {error}"))),
        };
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
            0 => {
                let session = self.server.open_session();
                let password = self.password(session);
                let state = SessionState {
                    password,
                    timeout,
                    last_heard: now,
                    conn: None,
                };
                self.sessions.insert(session, state);
                Some(session)
            }
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
            self.out.push(Outgoing::Close {
                conn: previous,
                why: None,
            });
        }
        self.conns.insert(conn, Some(session));
        self.send(conn, response.encode());
    }

    /// A session's password: 16 bytes drawn from the seed and the session.
    fn password(&self, session: SessionId) -> Vec<u8> {
        let first = key(self.seed ^ session as u64, "password");
        let second = key(first, "password");
        [first.to_be_bytes(), second.to_be_bytes()].concat()
    }

    /// One request of an attached connection.
    fn request(&mut self, conn: ConnId, session: SessionId, record: &[u8], now: Duration) {
        let (header, request) = match Request::decode(record) {
            Ok(decoded) => decoded,
            Err(error) => return self.close(conn, Some(format!("a bad request: {error}"))),
        };
        if let Some(state) = self.sessions.get_mut(&session) {
            state.last_heard = now;
        }
        let zxid = self.server.last_zxid();
        match request {
            Request::Ping => self.reply_header(conn, xid::PING, zxid, 0),
            Request::SetWatches(set) => {
                let fired = (self.server).set_watches(session, set.relative_zxid, &set.watches);
                self.notify(fired);
                self.reply_header(conn, xid::SET_WATCHES, zxid, 0);
            }
            Request::CloseSession => {
                let ended = self.server.close_session(session, millis(now));
                let zxid = ended.as_ref().map_or(zxid, |ended| ended.zxid);
                // The closing session hears its own ephemerals go, before the close's reply.
                if let Some(ended) = ended {
                    self.notify(ended.notifications);
                }
                self.sessions.remove(&session);
                self.reply_header(conn, header.xid, zxid, 0);
                self.conns.remove(&conn);
                self.out.push(Outgoing::Close { conn, why: None });
            }
            Request::Op(op) => self.apply(conn, session, header, op, now),
        }
    }

    fn apply(
        &mut self,
        conn: ConnId,
        session: SessionId,
        header: RequestHeader,
        op: Op,
        now: Duration,
    ) {
        let applied = self.server.apply(session, &op, millis(now));
        // A watch event goes out before any reply that reflects its change.
        self.notify(applied.notifications);
        // An auth is answered outside the pipeline, with zxid 0.
        let zxid = match op {
            Op::AddAuth { .. } => 0,
            _ => applied.zxid,
        };
        let cached = header.code == op_code::GET_DATA || header.code == op_code::GET_CHILDREN2;
        let record = encode_reply(header, zxid, &op, &applied.reply);
        self.reply(conn, record, cached && applied.reply.is_ok());
        if refused_auth(&op, &applied.reply) {
            // The server closes the connection behind a refused authentication.
            self.close(conn, None);
        }
    }

    fn reply_header(&mut self, conn: ConnId, xid: i32, zxid: i64, err: i32) {
        let header = ReplyHeader { xid, zxid, err };
        self.reply(conn, header.encode(), false);
    }

    /// Sends each fired watch to its session's connection; a session between connections has
    /// no watches to fire.
    fn notify(&mut self, notifications: Vec<Notification>) {
        for notification in notifications {
            let conn = self
                .sessions
                .get(&notification.session)
                .and_then(|state| state.conn);
            if let Some(conn) = conn {
                self.send(conn, encode_notification(&notification.event));
            }
        }
    }
}

fn refused_auth(op: &Op, reply: &OpReply) -> bool {
    matches!(op, Op::AddAuth { .. }) && *reply == Err(ZkError::AuthFailed)
}

fn millis(now: Duration) -> i64 {
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, EventType, OpResult, WatchedEvent};

    use super::*;
    use crate::jute::archive::frame_len;
    use crate::jute::reply::{decode_notification, decode_reply};
    use crate::test_ops::{create, persistent};

    const SECOND: Duration = Duration::from_secs(1);

    fn service() -> WireService {
        WireService::new(7, Ticks::default())
    }

    /// The records of the frames sent to `conn`, and whether it was closed.
    fn sent_to(outgoing: &[Outgoing], conn: ConnId) -> (Vec<Vec<u8>>, bool) {
        let mut records = Vec::new();
        let mut closed = false;
        for out in outgoing {
            match out {
                Outgoing::Send { conn: to, bytes } if *to == conn => {
                    let len = frame_len(bytes[..4].try_into().expect("a prefix"), usize::MAX);
                    assert_eq!(len, Ok(bytes.len() - 4));
                    records.push(bytes[4..].to_vec());
                }
                Outgoing::Close { conn: to, .. } if *to == conn => closed = true,
                _ => {}
            }
        }
        (records, closed)
    }

    fn connect(
        service: &mut WireService,
        conn: ConnId,
        session: SessionId,
        password: Vec<u8>,
        now: Duration,
    ) -> (ConnectResponse, bool) {
        service.opened(conn);
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 10_000,
            session_id: session,
            password,
            read_only: false,
        };
        let outgoing = service.received(conn, &request.encode(), now);
        let (records, closed) = sent_to(&outgoing, conn);
        (
            ConnectResponse::decode(&records[0]).expect("a response"),
            closed,
        )
    }

    fn call(
        service: &mut WireService,
        conn: ConnId,
        xid: i32,
        op: Op,
        now: Duration,
    ) -> Vec<Outgoing> {
        let (_, bytes) = Request::Op(op).encode(xid).expect("sendable");
        service.received(conn, &bytes, now)
    }

    fn reply_of(records: &[Vec<u8>], op: &Op, xid: i32) -> OpReply {
        let request = Request::Op(op.clone());
        let (sent, _) = request.encode(xid).expect("sendable");
        let record = records.last().expect("a reply");
        let (header, body) = ReplyHeader::decode(record).expect("a header");
        assert_eq!(header.xid, xid);
        decode_reply(sent, &request, &header, body).expect("a reply")
    }

    #[test]
    fn a_session_is_opened_resumed_with_its_password_and_refused_with_another() {
        let mut service = service();
        let (opened, closed) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
        assert!(!closed);
        assert_eq!(opened.timeout_ms, 10_000);
        assert_ne!(opened.session_id, 0);
        let session = opened.session_id;
        let op = create("/e", CreateMode::Ephemeral);
        call(&mut service, 1, 1, op, SECOND);
        service.gone(1);
        let (resumed, closed) = connect(&mut service, 2, session, opened.password.clone(), SECOND);
        assert!(!closed);
        assert_eq!((resumed.session_id, resumed.timeout_ms), (session, 10_000));
        let (refused, closed) = connect(&mut service, 3, session, vec![1; 16], SECOND);
        assert!(closed);
        assert_eq!((refused.session_id, refused.timeout_ms), (0, 0));
        let read = Op::Exists {
            path: "/e".into(),
            watch: false,
        };
        let (records, _) = sent_to(&call(&mut service, 2, 2, read.clone(), SECOND), 2);
        assert!(matches!(
            reply_of(&records, &read, 2),
            Ok(OpResult::Exists(Some(_)))
        ));
    }

    #[test]
    fn an_unheard_session_expires_its_ephemerals_go_and_its_watchers_hear_it() {
        let mut service = service();
        let (owner, _) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
        connect(&mut service, 2, 0, vec![0; 16], SECOND);
        call(
            &mut service,
            1,
            1,
            create("/e", CreateMode::Ephemeral),
            SECOND,
        );
        call(
            &mut service,
            2,
            1,
            Op::Exists {
                path: "/e".into(),
                watch: true,
            },
            SECOND,
        );
        // The watcher pings; the owner is silent past its timeout.
        for at in [4, 8, 12] {
            let (_, bytes) = Request::Ping.encode(-2).expect("sendable");
            service.received(2, &bytes, SECOND * at);
        }
        let (outgoing, _) = service.tick(SECOND * 12);
        assert!(
            sent_to(&outgoing, 1).1,
            "the expired session's connection is closed"
        );
        let (records, _) = sent_to(&outgoing, 2);
        let (header, body) = ReplyHeader::decode(&records[0]).expect("a header");
        assert_eq!(header.xid, xid::NOTIFICATION);
        let deleted = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: "/e".into(),
        };
        assert_eq!(decode_notification(body), Ok(deleted));
        let (expired, closed) = connect(
            &mut service,
            3,
            owner.session_id,
            owner.password,
            SECOND * 13,
        );
        assert!(closed);
        assert_eq!(expired.timeout_ms, 0);
    }

    #[test]
    fn a_bad_handshake_or_request_or_a_client_from_the_future_closes_that_connection_alone() {
        let mut service = service();
        connect(&mut service, 1, 0, vec![0; 16], SECOND);
        service.opened(2);
        let outgoing = service.received(2, b"nonsense", SECOND);
        assert!(matches!(
            &outgoing[..],
            [Outgoing::Close {
                conn: 2,
                why: Some(_)
            }]
        ));
        let outgoing = service.received(1, &[0, 0, 0, 9, 0, 0, 0, 77], SECOND);
        assert!(matches!(
            &outgoing[..],
            [Outgoing::Close {
                conn: 1,
                why: Some(_)
            }]
        ));
        service.opened(3);
        let ahead = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 1_000,
            timeout_ms: 10_000,
            session_id: 0,
            password: vec![0; 16],
            read_only: false,
        };
        let outgoing = service.received(3, &ahead.encode(), SECOND);
        assert!(matches!(
            &outgoing[..],
            [Outgoing::Close {
                conn: 3,
                why: Some(_)
            }]
        ));
        connect(&mut service, 4, 0, vec![0; 16], SECOND);
        let (records, _) = sent_to(&call(&mut service, 4, 1, persistent("/p"), SECOND), 4);
        assert!(reply_of(&records, &persistent("/p"), 1).is_ok());
    }

    #[test]
    fn the_command_port_swallows_replies_but_found_data_closes_connections_and_expires() {
        let mut service = service();
        let (opened, _) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
        let session = opened.session_id;
        let write = persistent("/p");
        let read = Op::GetData {
            path: "/p".into(),
            watch: false,
        };
        assert_eq!(
            Control::parse("NORESPONSE", Some("2")),
            Ok(Control::NoResponse(Some(2)))
        );
        service.control(Control::NoResponse(Some(2)), SECOND);
        assert!(call(&mut service, 1, 1, write.clone(), SECOND).is_empty());
        let (records, _) = sent_to(&call(&mut service, 1, 2, read.clone(), SECOND), 1);
        assert!(matches!(
            reply_of(&records, &read, 2),
            Ok(OpResult::Data { .. })
        ));
        let missing = Op::Exists {
            path: "/q".into(),
            watch: false,
        };
        assert!(call(&mut service, 1, 3, missing.clone(), SECOND).is_empty());
        let (records, _) = sent_to(&call(&mut service, 1, 4, missing.clone(), SECOND), 1);
        assert_eq!(reply_of(&records, &missing, 4), Ok(OpResult::Exists(None)));
        let hex = format!("{session:#x}");
        let close = Control::parse("CLOSECONNECTION", Some(&hex)).expect("a command");
        assert!(sent_to(&service.control(close, SECOND), 1).1);
        connect(&mut service, 2, session, opened.password.clone(), SECOND);
        let expire =
            Control::parse("EXPIRESESSION", Some(&session.to_string())).expect("a command");
        assert!(sent_to(&service.control(expire, SECOND), 2).1);
        let (expired, _) = connect(&mut service, 3, session, opened.password, SECOND);
        assert_eq!(expired.timeout_ms, 0);
        assert!(Control::parse("ELECTNEWLEADER", None).is_err());
        assert!(Control::parse("EXPIRESESSION", Some("nine")).is_err());
    }

    #[test]
    fn srvr_says_the_mode_as_launch_scripts_look_for_it() {
        let service = service();
        let srvr = service.four_letter_word(b"srvr").expect("an answer");
        assert!(
            srvr.lines().any(|line| line == "Mode: standalone"),
            "{srvr}"
        );
        assert_eq!(service.four_letter_word(b"ruok").as_deref(), Some("imok"));
        assert_eq!(service.four_letter_word(b"abcd"), None);
    }
}
