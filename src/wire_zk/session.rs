//! What a [`WireZk`](super::WireZk) session knows between its connections: the requests sent and
//! not answered, those waiting for a connection, the identities to present again, the last zxid
//! seen, and whether the session has ended. No I/O: the connection task and the handles both
//! change it under one lock, so a request's place on the wire and in the queue agree.

use std::collections::VecDeque;

use tokio::sync::{mpsc, oneshot};

use crate::recipes::client::{
    Op, OpReply, OpResult, SessionEvent, SessionId, ZkError, ZkEvent, Zxid,
};
use crate::recipes::listeners::{ListenerId, Listeners};
use crate::sim::jute::request::{Request, RequestHeader};
use crate::sim::watch::SessionWatches;

/// A request and who waits for its reply.
pub(super) struct Pending {
    pub(super) header: RequestHeader,
    pub(super) request: Request,
    /// The handle whose watch the request sets, if it sets one.
    pub(super) listener: ListenerId,
    pub(super) reply: oneshot::Sender<OpReply>,
}

/// An identity the session presented, sent again on every new connection, and who waits for
/// the server's first answer to it.
pub(super) struct Auth {
    pub(super) bytes: Vec<u8>,
    pub(super) waiting: Option<oneshot::Sender<OpReply>>,
}

/// Where the session is.
pub(super) enum Phase {
    /// Connected: frames go to the connection's writer.
    Connected(mpsc::UnboundedSender<Vec<u8>>),
    /// Between connections: requests wait.
    Connecting,
    /// Over: every call fails with this.
    Ended(ZkError),
}

/// The session's state.
pub(super) struct Session {
    pub(super) id: SessionId,
    pub(super) password: Vec<u8>,
    pub(super) phase: Phase,
    pub(super) last_zxid: Zxid,
    next_xid: i32,
    /// Sent on the current connection, in order: replies come in this order.
    pub(super) in_flight: VecDeque<Pending>,
    /// Waiting for a connection, in the order they were called.
    pub(super) queued: VecDeque<(Pending, Vec<u8>)>,
    /// Every identity presented, in order; the auths answered on the current connection are
    /// the first `answered` of them.
    pub(super) auths: Vec<Auth>,
    pub(super) answered: usize,
    /// Closed by its application: every call fails with `Closed`.
    pub(super) closed: bool,
    /// The watches the client holds, set again on each new connection.
    pub(super) watches: SessionWatches,
}

impl Session {
    pub(super) fn new() -> Self {
        Session {
            id: 0,
            password: vec![0; 16],
            phase: Phase::Connecting,
            last_zxid: 0,
            next_xid: 1,
            in_flight: VecDeque::new(),
            queued: VecDeque::new(),
            auths: Vec::new(),
            answered: 0,
            closed: false,
            watches: SessionWatches::default(),
        }
    }

    /// The next xid of the client's own requests.
    pub(super) fn take_xid(&mut self) -> i32 {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.checked_add(1).unwrap_or(1);
        xid
    }

    /// Sends `bytes` now if connected; otherwise they go with the next connection's priming.
    pub(super) fn write(&self, bytes: Vec<u8>) {
        if let Phase::Connected(writer) = &self.phase {
            let _ = writer.send(bytes);
        }
    }

    /// Sends a request, or queues it for the next connection.
    pub(super) fn submit(&mut self, pending: Pending, bytes: Vec<u8>) {
        match &self.phase {
            Phase::Connected(writer) => {
                let _ = writer.send(bytes);
                self.in_flight.push_back(pending);
            }
            Phase::Connecting => self.queued.push_back((pending, bytes)),
            Phase::Ended(error) => {
                let _ = pending.reply.send(Err(*error));
            }
        }
    }

    /// The connection broke: what was sent on it is lost (its callers hear ConnectionLoss);
    /// identities stay, to be presented again.
    pub(super) fn broken(&mut self) {
        if matches!(self.phase, Phase::Connected(_)) {
            self.phase = Phase::Connecting;
        }
        for pending in self.in_flight.drain(..) {
            let _ = pending.reply.send(Err(ZkError::ConnectionLoss));
        }
        self.answered = 0;
    }

    /// A connection could not be made: what waited for one fails, as ZooKeeper's client fails
    /// its queued packets.
    pub(super) fn unreachable(&mut self) {
        for (pending, _) in self.queued.drain(..) {
            let _ = pending.reply.send(Err(ZkError::ConnectionLoss));
        }
    }

    /// The session is over for good: every caller hears `error`, every handle `event`, then
    /// the end of its stream.
    pub(super) fn end(&mut self, error: ZkError, event: SessionEvent, listeners: &Listeners) {
        if matches!(self.phase, Phase::Ended(_)) {
            return;
        }
        self.phase = Phase::Ended(error);
        self.watches = SessionWatches::default();
        // The news first: a caller woken by its error finds it queued.
        listeners.deliver(ZkEvent::Session(event));
        listeners.end();
        let queued = self.queued.drain(..).map(|(pending, _)| pending);
        for pending in self.in_flight.drain(..).chain(queued) {
            let _ = pending.reply.send(Err(error));
        }
        for auth in &mut self.auths {
            if let Some(waiting) = auth.waiting.take() {
                let _ = waiting.send(Err(error));
            }
        }
    }

    /// The server's answer to the next auth on this connection; a refusal ends the session.
    pub(super) fn auth_answered(&mut self, err: Option<ZkError>, listeners: &Listeners) {
        let Some(auth) = self.auths.get_mut(self.answered) else {
            return;
        };
        self.answered += 1;
        let waiting = auth.waiting.take();
        match err {
            None => {
                if let Some(waiting) = waiting {
                    let _ = waiting.send(Ok(OpResult::Authenticated));
                }
            }
            Some(error) => {
                // As ZooKeeper's clients do: the session is given up, its code told it closed
                // before the caller hears the refusal.
                self.end(ZkError::AuthFailed, SessionEvent::Closed, listeners);
                if let Some(waiting) = waiting {
                    let _ = waiting.send(Err(error));
                }
            }
        }
    }

    /// The error a call fails with at once, if the session has ended.
    pub(super) fn ended(&self) -> Option<ZkError> {
        match self.phase {
            Phase::Ended(error) => Some(error),
            _ => None,
        }
    }
}

/// What a lone check is sent as, and its answer taken back out: ZooKeeper's clients have no
/// lone check, and a multi of one asks the same.
pub(super) fn lone_check(op: Op) -> (Op, bool) {
    match op {
        Op::Check { .. } => (Op::Multi(vec![op]), true),
        op => (op, false),
    }
}

/// The answer of a lone check, out of its multi's.
pub(super) fn check_answer(reply: OpReply) -> OpReply {
    match reply? {
        OpResult::Multi(mut results) => results.pop().unwrap_or(Ok(OpResult::Checked)),
        other => Ok(other),
    }
}
