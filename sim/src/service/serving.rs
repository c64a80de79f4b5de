//! The server's side of a session: requests handled as they arrive, answered in the session's
//! order once the server a session is attached to has applied what they wait for; the leader's
//! session tracker; a session's end (closed or expired).
//!
//! A session's writes go through the leader and their replies wait until its own server has
//! applied them, so a client reads its own writes; its reads are served from its server's state,
//! possibly stale on a follower; a `sync` waits until its server has applied what the leader had
//! committed when it arrived.

use zklab_recipes::client::{Op, OpReply, SessionId, ZkError, Zxid};

use super::reaping::deleted_by;
use super::wire::{Delivery, Request, Response};
use super::Service;
use crate::acl::Identity;
use crate::fault::FaultKind;
use crate::packet;
use crate::replicas::goes_through_leader;
use crate::server::DeletionOrder;
use crate::trace::{OpText, TraceEvent};

/// A request its server answers only once it has applied zxid `until`: a write's reply (the
/// client reads its own writes), a sync, or a read behind them (a session's requests are
/// answered in order).
pub(super) struct Parked {
    id: u64,
    until: Zxid,
    answer: Answer,
}

/// What a parked request gets when its turn comes.
enum Answer {
    /// The leader's reply to a write.
    Reply(OpReply),
    /// A read (or sync) to serve from the server's state then, to the session as it was known
    /// when it sent the read.
    Read(Op, Identity),
    /// The session's end: closed (the close's reply) or expired (the connection closed), told
    /// once its server has fired the watches the end fired for the session itself.
    Ended(Response),
}

impl Service {
    /// The server handles one request now. A session the server has ended gets its connection
    /// closed, behind what is still to be sent to it: its client sees Disconnected, then
    /// Expired when it reconnects.
    pub(super) fn serve_now(&mut self, session: SessionId, request: Request) {
        if !self.servers.session_alive(session) {
            // Behind what the server has still to send (a close's reply, say).
            let answer = Answer::Ended(Response::Drop);
            let parked = Parked {
                id: 0,
                until: 0,
                answer,
            };
            return self.answer_in_order(session, parked);
        }
        let now = self.now();
        let client = self.conn(session).client;
        match request {
            Request::Ping => self.send_to_client(session, Response::Pong),
            Request::Close { id } => {
                if let Some((until, deleted)) = self.end_session(session, false) {
                    let answer = Answer::Ended(Response::Closed { id });
                    self.answer_in_order(session, Parked { id, until, answer });
                    self.reap_emptied(client, &deleted);
                }
            }
            // The server reads no further than the packet's length, and drops the connection.
            Request::Op { op, .. } if packet::too_long(&op) => self.disconnect(session),
            Request::Op { id, op } => {
                if self.draw_connection_loss(client) {
                    let detail = format!("before apply: {}", OpText(&op));
                    let sent = self.conn(session).client_sent;
                    self.message_fault(FaultKind::ConnectionLoss, client, sent);
                    self.fault(FaultKind::ConnectionLoss, client, detail);
                    self.disconnect(session);
                    return;
                }
                let (server, leader) = (self.conn(session).server, self.servers.leader());
                if server != leader && !goes_through_leader(&op) {
                    let until = match op {
                        Op::Sync { .. } => self.servers.applied(leader),
                        _ => 0,
                    };
                    let identity = self.servers.server(leader).identity(session);
                    let answer = Answer::Read(op, identity);
                    self.answer_in_order(session, Parked { id, until, answer });
                    return;
                }
                let before = self.servers.applied(leader);
                let applied = self.servers.apply(session, &op, now.as_millis() as i64);
                self.replicate_since(before);
                let (zxid, reply) = (applied.zxid, applied.reply);
                // A server answers an auth at once, outside its pipeline, with zxid 0: it
                // tells the client nothing of how far the server has got.
                let zxid = match op {
                    Op::AddAuth { .. } => 0,
                    _ => zxid,
                };
                let floor = self.conn(session).to_client_floor;
                let notified = self.notify(leader, session, applied.notifications, zxid);
                let told_first = self.conn(session).to_client_floor != floor;
                let notified = match self.servers.applied(leader) > before {
                    true => self.commit_notified(zxid, notified),
                    false => notified,
                };
                let lost = self.draw_lost_reply(client, &op);
                self.start_reaper_for(&op, &reply);
                let deleted = deleted_by(&op, &reply);
                self.trace_applied(session, zxid, op, &reply);
                for change in notified {
                    self.trace.push(now, change);
                }
                if let Some(lost) = lost {
                    self.lose_reply(session, lost, told_first);
                } else if server == leader {
                    self.reply(session, id, reply, zxid);
                } else {
                    let answer = Answer::Reply(reply);
                    let parked = Parked {
                        id,
                        until: zxid,
                        answer,
                    };
                    self.answer_in_order(session, parked);
                }
                // The reaper's transaction comes after the one that emptied the container, and
                // so do its events, after that one's reply.
                self.reap_emptied(client, &deleted);
            }
        }
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

    /// The session tracker's check of a session: the leader expires a session it has not heard
    /// from for the whole timeout, else looks again when it would be.
    pub(super) fn check_expiry(&mut self, session: SessionId) {
        if !self.servers.session_alive(session) {
            return;
        }
        let deadline = self.conn(session).server_heard + self.config.session_timeout;
        if self.now() >= deadline {
            self.expire(session);
        } else {
            self.schedule(deadline, Delivery::ExpiryCheck { session });
        }
    }

    /// The server ends a session; `expired` tells expiry from close.
    /// Returns the zxid of the end and the ephemerals it deleted, or `None` if the session was
    /// not alive.
    fn end_session(&mut self, session: SessionId, expired: bool) -> Option<(Zxid, Vec<String>)> {
        let now = self.now();
        let now_ms = now.as_millis() as i64;
        let leader = self.servers.leader();
        let before = self.servers.applied(leader);
        // A session the server expires while it is connected hears its own ephemerals go
        // before its connection is closed, as on a closed one.
        let conn = self.conn(session);
        let connected = conn.is_connected() && conn.partitioned_until <= now;
        let notify_self = !expired || connected;
        let order = DeletionOrder::Hashed(self.ephemeral_order ^ session as u64);
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
        Some((ended.zxid, ended.deleted))
    }

    /// The server expires a session and its server closes the connection once it has fired the
    /// watches the expiry fired for the session itself; the client learns when that reaches it
    /// (after a partition, when it heals).
    pub(super) fn expire(&mut self, session: SessionId) {
        if let Some((until, deleted)) = self.end_session(session, true) {
            let answer = Answer::Ended(Response::Drop);
            let parked = Parked {
                id: 0,
                until,
                answer,
            };
            self.answer_in_order(session, parked);
            let client = self.conn(session).client;
            self.reap_emptied(client, &deleted);
        }
    }

    /// Queues a request behind the session's earlier ones, and answers what is ready.
    fn answer_in_order(&mut self, session: SessionId, parked: Parked) {
        self.conn(session).parked.push_back(parked);
        self.release(session);
    }

    /// Answers a session's parked requests, in order, as far as its server has applied.
    pub(super) fn release(&mut self, session: SessionId) {
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
                Answer::Read(op, identity) => {
                    let server = self.servers.server_mut(server);
                    let served = server.serve_read(session, &identity, &op);
                    let (reply, zxid) = (served.reply, served.zxid);
                    let lost = self.draw_lost_reply(client, &op);
                    self.trace_applied(session, zxid, op, &reply);
                    if let Some(lost) = lost {
                        self.lose_reply(session, lost, false);
                        return;
                    }
                    (reply, zxid)
                }
            };
            self.reply(session, id, reply, zxid);
        }
    }

    /// Sends a session the reply to its request `id`. A refused authentication is the last
    /// thing its connection carries: the server closes it behind the reply, dropping the
    /// session's watches and reading nothing more from it; the session lives until it expires.
    fn reply(&mut self, session: SessionId, id: u64, reply: OpReply, zxid: Zxid) {
        let refused = reply == Err(ZkError::AuthFailed);
        self.send_to_client(session, Response::Reply { id, reply, zxid });
        if refused {
            let server = self.conn(session).server;
            self.servers.server_mut(server).take_watches(session);
            let conn = self.conn(session);
            conn.closed_by_server = Some(conn.epoch);
            conn.parked.clear();
        }
    }
}
