//! A session's traffic held back by a fault: behind a reordered reply, what the server sends
//! the session waits until the reply is due (the session's own order kept, other sessions'
//! traffic overtaking it); under a partition, what the client sends waits unread too; under the
//! command port's ADDDELAY, each request waits its delay before it is read.

use std::collections::VecDeque;
use std::time::Duration;

use super::{ConnId, Outgoing};

/// The most a session's client may send while a fault holds its traffic (as a real network's
/// buffers fill): past it, its connection is closed, so a client that floods harms only itself.
pub(super) const MOST_HELD: usize = 16 << 20;

/// What one session's connection has not yet carried (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Held {
    /// Until when what the server sends the session waits.
    sending_until: Duration,
    /// Until when what the session's client sends waits unread.
    reading_until: Duration,
    outgoing: VecDeque<Outgoing>,
    /// What the client sent, each with the time it may be read at.
    incoming: VecDeque<(ConnId, Vec<u8>, Duration)>,
    /// The bytes of `incoming`.
    incoming_bytes: usize,
}

impl Held {
    /// Holds what the server sends until `until`.
    pub(super) fn delay_sending(&mut self, until: Duration) {
        self.sending_until = self.sending_until.max(until);
    }

    /// Holds the traffic both ways until `until`.
    pub(super) fn cut_off(&mut self, until: Duration) {
        self.delay_sending(until);
        self.reading_until = self.reading_until.max(until);
    }

    /// Whether what the server sends now must wait (behind what already waits, too).
    pub(super) fn sending_held(&self, now: Duration) -> bool {
        self.sending_until > now || !self.outgoing.is_empty()
    }

    /// Whether what the client sends now must wait unread.
    pub(super) fn reading_held(&self, now: Duration) -> bool {
        self.reading_until > now || !self.incoming.is_empty()
    }

    pub(super) fn hold_outgoing(&mut self, out: Outgoing) {
        self.outgoing.push_back(out);
    }

    /// Holds a record the client sent until the reading may go on; whether what is held now
    /// passes [`MOST_HELD`].
    pub(super) fn hold_incoming(&mut self, conn: ConnId, record: Vec<u8>) -> bool {
        self.push_incoming(conn, record, Duration::ZERO)
    }

    /// Holds a record `delay` longer than the one before it, received at `now`; whether what
    /// is held now passes [`MOST_HELD`].
    pub(super) fn delay_incoming(
        &mut self,
        conn: ConnId,
        record: Vec<u8>,
        now: Duration,
        delay: Duration,
    ) -> bool {
        let after = self
            .incoming
            .back()
            .map_or(now, |(_, _, due)| (*due).max(now));
        self.push_incoming(conn, record, after + delay)
    }

    fn push_incoming(&mut self, conn: ConnId, record: Vec<u8>, due: Duration) -> bool {
        self.incoming_bytes += record.len();
        self.incoming.push_back((conn, record, due));
        self.incoming_bytes > MOST_HELD
    }

    /// What the server sent that may go by `now`, in order.
    pub(super) fn release_outgoing(&mut self, now: Duration) -> Vec<Outgoing> {
        match self.sending_until > now {
            true => Vec::new(),
            false => self.outgoing.drain(..).collect(),
        }
    }

    /// The next record the client sent, if it may be read by `now`.
    pub(super) fn release_incoming(&mut self, now: Duration) -> Option<(ConnId, Vec<u8>)> {
        match self.incoming.front() {
            Some((_, _, due)) if self.reading_until <= now && *due <= now => {
                let (conn, record, _) = self.incoming.pop_front()?;
                self.incoming_bytes -= record.len();
                Some((conn, record))
            }
            _ => None,
        }
    }

    /// A connection is gone: what it sent and was never read goes with it.
    pub(super) fn forget(&mut self, conn: ConnId) {
        self.incoming.retain(|(from, _, _)| *from != conn);
        self.incoming_bytes = self
            .incoming
            .iter()
            .map(|(_, record, _)| record.len())
            .sum();
    }

    /// When something held may go next, if anything is held.
    pub(super) fn next_release(&self, now: Duration) -> Option<Duration> {
        let due = self.incoming.front().map(|(_, _, due)| *due);
        [self.sending_until, self.reading_until]
            .into_iter()
            .chain(due)
            .filter(|until| *until > now)
            .min()
    }

    /// Whether nothing is held any more.
    pub(super) fn is_idle(&self, now: Duration) -> bool {
        self.outgoing.is_empty() && self.incoming.is_empty() && self.next_release(now).is_none()
    }
}
