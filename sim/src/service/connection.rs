//! A session's connection as its client library keeps it: `Connected`, `Disconnected` (ops
//! wait for the reconnect, as ZooKeeper's client queues them), `Expired`, `Closed` or
//! `AuthFailed`. A broken connection fails the ops in flight with ConnectionLoss (but an
//! authentication, sent again) and loses the watch events in flight; the server drops the
//! session's watches, and the client re-registers those it holds when it reconnects, as
//! ZooKeeper's client does. The heartbeat pings at a third of the session
//! timeout when idle, declares the connection lost after two thirds without hearing from the
//! server, and reconnects after a short random delay.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::{EventType, Op, OpReply, OpResult, SessionEvent, SessionId, Zxid};
use zklab_recipes::client::{ZkError, ZkEvent};
use zklab_recipes::listeners::sets_watch;

use super::serving::Parked;
use super::wire::{Delivery, Request, Response};
use super::{Output, Service};
use crate::path::validate_op;
use crate::server::Notification;
use crate::trace::{ClientId, TraceEvent};
use crate::watch::SessionWatches;

/// What a session's client library believes about its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConnState {
    Connected,
    Disconnected,
    Expired,
    Closed,
    /// The server refused an authentication: the library gave the session up.
    AuthFailed,
}

/// One session's connection, both ends.
pub(super) struct Conn {
    pub(super) client: ClientId,
    /// The server it is attached to.
    pub(super) server: usize,
    /// Whether it has reached a server yet: a session opened during an election waits.
    attached: bool,
    /// The one server in the client's connect string, if it was given one: it reconnects
    /// there and nowhere else.
    pinned: Option<usize>,
    /// The last zxid the client has seen in a reply: it never attaches to a server behind it,
    /// and re-registers its watches with it.
    seen: Zxid,
    /// Requests answered, in order, once the server has applied what they wait for.
    pub(super) parked: VecDeque<Parked>,
    state: ConnState,
    /// Bumped on every break: deliveries of an older connection are dropped.
    pub(super) epoch: u64,
    /// The connection the server closed after refusing its authentication: it reads nothing
    /// more from it.
    pub(super) closed_by_server: Option<u64>,
    /// Ops sent on the current connection, awaiting replies.
    pending: BTreeSet<u64>,
    /// Ops issued while disconnected, sent once reconnected.
    held_ops: Vec<(u64, Request)>,
    /// The reads in flight that ask for a watch, by request id: their replies set it.
    watching: BTreeMap<u64, Op>,
    /// The authentications in flight, by request id: a client library sends one again on its
    /// next connection rather than fail it with the one it lost.
    authenticating: BTreeMap<u64, Op>,
    /// The watches the client holds, which it re-registers on reconnecting.
    watches: SessionWatches,
    pub(super) base_latency: Duration,
    pub(super) to_server_floor: Duration,
    pub(super) to_client_floor: Duration,
    pub(super) server_heard: Duration,
    client_heard: Duration,
    pub(super) client_sent: Duration,
    pub(super) partitioned_until: Duration,
    next_id: u64,
}

impl Conn {
    /// Whether the client library believes it is connected.
    pub(super) fn is_connected(&self) -> bool {
        self.state == ConnState::Connected
    }

    /// Whether the client library gave the session up on an AuthFailed.
    pub(super) fn auth_failed(&self) -> bool {
        self.state == ConnState::AuthFailed
    }

    /// Whether a packet sent on connection `epoch` still arrives: that connection is the
    /// current one and up; a packet of an earlier one was lost with it.
    pub(super) fn carries(&self, epoch: u64) -> bool {
        self.epoch == epoch && self.is_connected()
    }

    /// Whether the server reads a packet sent on connection `epoch`: one it carries, unless
    /// the server has closed it.
    pub(super) fn server_reads(&self, epoch: u64) -> bool {
        self.carries(epoch) && self.closed_by_server != Some(epoch)
    }

    /// Notes an op sent on the current connection: a read that asks for a watch sets it when
    /// its reply arrives, and an authentication is sent again if the connection breaks first.
    fn note_sent(&mut self, id: u64, op: &Op) {
        if sets_watch(op) {
            self.watching.insert(id, op.clone());
        }
        if let Op::AddAuth { .. } = op {
            self.authenticating.insert(id, op.clone());
        }
    }
}

impl Service {
    /// Opens a new session for `client`, attached to `server` if given (pinned there for good
    /// if `pinned`), else to a server drawn from the seed. Returns the session, and whether a
    /// forced order is under way.
    pub(crate) fn open_session(
        &mut self,
        client: ClientId,
        server: Option<usize>,
        pinned: bool,
    ) -> (SessionId, bool) {
        let now = self.now();
        let before = self.servers.applied(self.servers.leader());
        let session = self.servers.open_session();
        self.replicate_since(before);
        let (low, high) = self.config.latency;
        let base_latency = self.streams.latency.gen_range(low..=high);
        // No server is ready during an election: the session waits for its end.
        let picked = match server {
            Some(server) if self.down_until[server] > now => None,
            Some(server) => Some(server),
            None => self.pick_server(0, None),
        };
        let state = match picked {
            Some(_) => ConnState::Connected,
            None => ConnState::Disconnected,
        };
        let pinned = server.filter(|_| pinned);
        let server = picked.unwrap_or(self.servers.leader());
        let conn = Conn {
            client,
            server,
            attached: picked.is_some(),
            pinned,
            seen: 0,
            parked: VecDeque::new(),
            state,
            epoch: 0,
            closed_by_server: None,
            pending: BTreeSet::new(),
            held_ops: Vec::new(),
            watching: BTreeMap::new(),
            authenticating: BTreeMap::new(),
            watches: SessionWatches::default(),
            base_latency,
            to_server_floor: now,
            to_client_floor: now,
            server_heard: now.max(self.down_until[self.servers.leader()]),
            client_heard: now,
            client_sent: now,
            partitioned_until: Duration::ZERO,
            next_id: 0,
        };
        self.conns.insert(session, conn);
        if let Some(process) = self.processes.get_mut(&client) {
            process.session = Some(session);
        }
        self.trace
            .push(now, TraceEvent::SessionOpened { client, session });
        if picked.is_some() {
            self.trace_attached(session);
        }
        let timeout = self.config.session_timeout;
        self.schedule(now + timeout, Delivery::ExpiryCheck { session });
        (session, !self.forced.is_over())
    }

    /// A session's code sends an op: the id its reply will come back with
    /// ([`Output::Reply`]), or the error the client library answers at once.
    pub(crate) fn call(&mut self, session: SessionId, op: Op) -> Result<u64, ZkError> {
        let now = self.now();
        let Some(conn) = self.conns.get_mut(&session) else {
            return Err(ZkError::SessionExpired);
        };
        let client = conn.client;
        conn.next_id += 1;
        let id = conn.next_id;
        let state = conn.state;
        self.trace.push(
            now,
            TraceEvent::Request {
                client,
                session,
                op: op.clone(),
            },
        );
        // The client library refuses a malformed path (or a create without an ACL) before it
        // looks at its connection, but after it knows it was closed.
        let malformed = validate_op(&op).err();
        let refused = match state {
            ConnState::Closed => Some(ZkError::Closed),
            _ if malformed.is_some() => malformed,
            ConnState::AuthFailed => Some(ZkError::AuthFailed),
            ConnState::Connected => {
                self.conn(session).note_sent(id, &op);
                self.send_to_server(session, Request::Op { id, op });
                self.conn(session).pending.insert(id);
                None
            }
            ConnState::Disconnected => {
                self.conn(session)
                    .held_ops
                    .push((id, Request::Op { id, op }));
                None
            }
            ConnState::Expired => Some(ZkError::SessionExpired),
        };
        match refused {
            Some(error) => {
                let reply = Err(error);
                self.trace.push(
                    now,
                    TraceEvent::Reply {
                        client,
                        session,
                        reply,
                    },
                );
                Err(error)
            }
            None => Ok(id),
        }
    }

    /// A session's code closes it: the id the close's answer will come back with, or the
    /// error at once (`Closed` for a session closed before, `SessionExpired` for an expired
    /// one). The server ends the session and its ephemerals go.
    pub(crate) fn close(&mut self, session: SessionId) -> Result<u64, ZkError> {
        let Some(conn) = self.conns.get_mut(&session) else {
            return Err(ZkError::SessionExpired);
        };
        conn.next_id += 1;
        let id = conn.next_id;
        match conn.state {
            ConnState::Connected => {
                self.send_to_server(session, Request::Close { id });
                self.conn(session).pending.insert(id);
            }
            ConnState::Disconnected => {
                self.conn(session)
                    .held_ops
                    .push((id, Request::Close { id }));
            }
            // Closed by its application all the same: later calls fail with Closed.
            ConnState::Expired => {
                conn.state = ConnState::Closed;
                return Err(ZkError::SessionExpired);
            }
            // Given up, and closed all the same (no close is sent).
            ConnState::AuthFailed => {
                conn.state = ConnState::Closed;
                return Err(ZkError::AuthFailed);
            }
            ConnState::Closed => return Err(ZkError::Closed),
        }
        Ok(id)
    }

    /// When the session's heartbeat next needs to look at its connection: its next ping, or
    /// the moment the server has been silent too long, or (disconnected) its next try at
    /// reconnecting, drawn from the seed. `None` once the session is over.
    pub(crate) fn heartbeat_due(&mut self, session: SessionId) -> Option<Duration> {
        let now = self.now();
        let third = self.config.session_timeout / 3;
        let (low, high) = self.config.reconnect_delay;
        let conn = self.conn(session);
        match conn.state {
            ConnState::Connected => {
                Some((conn.client_sent + third).min(conn.client_heard + 2 * third))
            }
            ConnState::Disconnected => Some(now + self.streams.reconnect.gen_range(low..=high)),
            ConnState::Expired | ConnState::Closed | ConnState::AuthFailed => None,
        }
    }

    /// The session's heartbeat looks at its connection: declares it lost after two thirds of
    /// the timeout without a word from the server, pings after a third without sending, tries
    /// to reconnect when disconnected.
    pub(crate) fn heartbeat(&mut self, session: SessionId) {
        let now = self.now();
        let third = self.config.session_timeout / 3;
        let conn = self.conn(session);
        match conn.state {
            ConnState::Connected if now >= conn.client_heard + 2 * third => {
                self.disconnect(session)
            }
            ConnState::Connected if now >= conn.client_sent + third => {
                self.send_to_server(session, Request::Ping);
            }
            ConnState::Disconnected => self.reconnect(session),
            _ => {}
        }
    }

    /// A connected session's client library takes what the server sent it.
    pub(super) fn receive(&mut self, session: SessionId, response: Response) {
        let now = self.now();
        let conn = self.conn(session);
        match response {
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
                if conn.pending.remove(&id) {
                    // closeSession has no result of its own; the caller only waits.
                    let reply = Ok(OpResult::Synced);
                    self.outbox.push(Output::Reply { session, id, reply });
                }
                let event = ZkEvent::Session(SessionEvent::Closed);
                self.outbox.push(Output::Event { session, event });
                self.outbox.push(Output::EventsEnd { session });
                self.trace_state(client, session, SessionEvent::Closed);
            }
            Response::Reply { id, reply, zxid } => {
                conn.client_heard = now;
                conn.seen = conn.seen.max(zxid);
                if let Some(op) = conn.watching.remove(&id) {
                    conn.watches.register(&op, &reply);
                }
                conn.authenticating.remove(&id);
                let client = conn.client;
                if conn.pending.remove(&id) {
                    let failed = reply == Err(ZkError::AuthFailed);
                    self.hand_reply(client, session, id, reply);
                    if failed {
                        self.give_up_on_auth(session);
                    }
                }
            }
        }
    }

    /// A client library told AuthFailed gives its session up, as ZooKeeper's clients do: every
    /// op still waiting fails so, the application hears the session end, and the server,
    /// which closed the connection, keeps the session until it expires.
    fn give_up_on_auth(&mut self, session: SessionId) {
        let conn = self.conn(session);
        conn.state = ConnState::AuthFailed;
        conn.epoch += 1;
        let client = conn.client;
        let waiting = std::mem::take(&mut conn.pending);
        let held = std::mem::take(&mut conn.held_ops);
        let ids = waiting
            .into_iter()
            .chain(held.into_iter().map(|(id, _)| id));
        for id in ids.collect::<Vec<_>>() {
            self.hand_reply(client, session, id, Err(ZkError::AuthFailed));
        }
        let event = ZkEvent::Session(SessionEvent::Closed);
        self.outbox.push(Output::Event { session, event });
        self.outbox.push(Output::EventsEnd { session });
        self.trace_state(client, session, SessionEvent::Closed);
    }

    /// A watch event reaches a connected session's code.
    fn deliver_watch(
        &mut self,
        session: SessionId,
        notification: Notification,
        zxid: i64,
        deletion: bool,
    ) {
        let now = self.now();
        let conn = self.conn(session);
        if conn.state != ConnState::Connected {
            return;
        }
        let client = conn.client;
        let event = notification.event.clone();
        self.outbox.push(Output::Event {
            session,
            event: ZkEvent::Watch(event.clone()),
        });
        self.trace.push(
            now,
            TraceEvent::Watch {
                client,
                session,
                event,
                zxid,
                cause: notification.cause,
                deletion,
            },
        );
    }

    /// The connection breaks: ops in flight fail with ConnectionLoss, the client sees
    /// Disconnected, and its heartbeat starts reconnecting. The server drops the session's
    /// watches with the connection, and what was on its way is lost; the client keeps the
    /// watches it holds, to re-register.
    pub(super) fn disconnect(&mut self, session: SessionId) {
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
        // Authentications go again first on the next connection, as ZooKeeper's clients send
        // theirs; every other op in flight is lost with the connection.
        let authenticating = std::mem::take(&mut conn.authenticating);
        let mut pending = std::mem::take(&mut conn.pending);
        pending.retain(|id| !authenticating.contains_key(id));
        let again = authenticating
            .into_iter()
            .map(|(id, op)| (id, Request::Op { id, op }));
        conn.held_ops.splice(0..0, again);
        let event = ZkEvent::Session(SessionEvent::Disconnected);
        self.outbox.push(Output::Event { session, event });
        self.outbox.push(Output::Heartbeat { session });
        for id in pending {
            self.hand_reply(client, session, id, Err(ZkError::ConnectionLoss));
        }
        self.trace_state(client, session, SessionEvent::Disconnected);
    }

    /// A reply reaches the session's code (from the server, or from the client library when
    /// it fails a request itself): written to the trace as the client sees it, and handed over.
    fn hand_reply(&mut self, client: ClientId, session: SessionId, id: u64, reply: OpReply) {
        let now = self.now();
        self.trace.push(
            now,
            TraceEvent::Reply {
                client,
                session,
                reply: reply.clone(),
            },
        );
        self.outbox.push(Output::Reply { session, id, reply });
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
            let held = std::mem::take(&mut conn.held_ops);
            let event = ZkEvent::Session(SessionEvent::Expired);
            self.outbox.push(Output::Event { session, event });
            self.outbox.push(Output::EventsEnd { session });
            self.trace_state(client, session, SessionEvent::Expired);
            for (id, _) in held {
                self.hand_reply(client, session, id, Err(ZkError::SessionExpired));
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
        let held_ops = std::mem::take(&mut conn.held_ops);
        let event = ZkEvent::Session(SessionEvent::SyncConnected);
        self.outbox.push(Output::Event { session, event });
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
        for (id, request) in held_ops {
            if let Request::Op { op, .. } = &request {
                self.conn(session).note_sent(id, op);
            }
            self.send_to_server(session, request);
            self.conn(session).pending.insert(id);
        }
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
}
