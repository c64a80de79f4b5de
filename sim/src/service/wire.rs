//! The wire: every message in flight between the clients and the servers, and the server's own
//! timers, delivered in order of (delivery time, send order). A message's delivery time is the
//! session's base latency plus jitter (plus a reorder's hold-up), never earlier than the previous
//! one of the same session in the same direction, so each session is FIFO while sessions
//! overtake each other; a partition holds a session's messages back until it heals.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::{Op, OpReply, SessionId, Zxid};

use super::{Output, Service};
use crate::fault::FaultKind;
use crate::server::Notification;

/// What travels from a client to the server.
#[derive(Debug)]
pub(super) enum Request {
    Op { id: u64, op: Op },
    Ping,
    Close { id: u64 },
}

/// What travels from the server to a client.
#[derive(Debug)]
pub(super) enum Response {
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
pub(super) enum Delivery {
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
    /// The leader's reaper looks for containers and TTL nodes to delete.
    ReaperCheck,
}

/// Every message in flight, delivered in order of (delivery time, send order). The order is a
/// heap of small keys and the deliveries wait in slots beside it: deliveries are large, and
/// keeping them in order directly would move them around on every send and delivery.
#[derive(Default)]
pub(super) struct Wire {
    order: BinaryHeap<Reverse<(Duration, u64, usize)>>,
    slots: Vec<Option<Delivery>>,
    free: Vec<usize>,
    sent: u64,
}

impl Wire {
    /// When the first delivery is due.
    pub(super) fn first_due(&self) -> Option<Duration> {
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

impl Service {
    /// When the wire's first delivery is due, if anything is on it: the driver wakes the core
    /// then ([`Service::deliver_due`]).
    pub(crate) fn next_wakeup(&self) -> Option<Duration> {
        self.wire.first_due()
    }

    /// Delivers everything due by now, in order.
    pub(crate) fn deliver_due(&mut self) {
        let now = self.now();
        while let Some((sequence, delivery)) = self.wire.pop_due(now) {
            self.deliver(sequence, delivery);
        }
    }

    /// Puts a delivery on the wire; a new first one asks to be woken then.
    pub(super) fn schedule(&mut self, at: Duration, delivery: Delivery) {
        let first = self.wire.first_due().is_none_or(|due| at < due);
        self.wire.push(at, delivery);
        if first {
            self.outbox.push(Output::WakeAt(at));
        }
    }

    /// Holds a delivery back until `at` without losing its place in its session's FIFO.
    fn postpone(&mut self, at: Duration, sequence: u64, delivery: Delivery) {
        let first = self.wire.first_due().is_none_or(|due| at < due);
        self.wire.push_in_place(at, sequence, delivery);
        if first {
            self.outbox.push(Output::WakeAt(at));
        }
    }

    /// The delivery time of a message: latency plus jitter (plus a reorder hold-up, perhaps),
    /// never before the session's previous message in the same direction, never inside a
    /// partition.
    fn arrival(&mut self, session: SessionId, to_server: bool) -> Duration {
        let now = self.now();
        let jitter = self
            .streams
            .latency
            .gen_range(Duration::ZERO..=self.config.jitter);
        let conn = self.conn(session);
        let (mut delay, client) = (conn.base_latency + jitter, conn.client);
        let armed = self.take_armed(client, |kind| kind == FaultKind::Reorder);
        let (odds, most) = (self.plan.rates.reorder, self.plan.rates.reorder_delay);
        let stream = self.streams.fault(FaultKind::Reorder);
        if armed || stream.gen_bool(odds) {
            let hold = stream.gen_range(Duration::ZERO..=most);
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

    pub(super) fn send_to_server(&mut self, session: SessionId, request: Request) {
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

    pub(super) fn send_to_client(&mut self, session: SessionId, response: Response) {
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

    /// Hands one due delivery to whoever it is for; one to or from a session cut off waits
    /// until the partition heals.
    fn deliver(&mut self, sequence: u64, delivery: Delivery) {
        let now = self.now();
        if let Delivery::ToServer { session, .. } | Delivery::ToClient { session, .. } = delivery {
            let healed = self.conn(session).partitioned_until;
            if healed > now {
                return self.postpone(healed, sequence, delivery);
            }
        }
        match delivery {
            Delivery::Replicate { server } => self.replay(server),
            Delivery::ExpiryCheck { session } => self.check_expiry(session),
            Delivery::ReaperCheck => self.check_containers(),
            Delivery::ToServer {
                session,
                epoch,
                request,
            } => {
                let conn = self.conn(session);
                if !conn.server_reads(epoch) {
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
                // Lost with its connection: the client re-registers the watch it holds.
                if !self.conn(session).carries(epoch) {
                    return;
                }
                self.receive(session, response);
            }
        }
    }
}
