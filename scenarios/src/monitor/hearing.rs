//! Whether a client could hear the server: a part of the monitors that hold a client to news (a
//! view, a value, a wake-up) it could not have heard while it was disconnected, paused or cut
//! off, or until [`GRACE`] after it could again.
//!
//! Read from the trace's session state changes and from faults that last (a pause, a
//! partition, a crash for ever). A stale read, a server's crash or a leader change stops nobody
//! from hearing: the client moves on, and its state changes say so. The model tells monitors
//! neither, so there this part stays empty.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use zklab_recipes::client::SessionEvent;
use zklab_recipes::session_renaming::{RenameSessions, SessionRenaming, StableHasher};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

/// How long after a client can hear again its news may still be on the way: longer than any
/// message's latency added to the most a stale read holds a follower back (up to a second
/// more than its usual lag).
pub const GRACE: Duration = Duration::from_secs(2);

/// When each client last could not hear.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hearing {
    deaf: BTreeMap<ClientId, Deaf>,
}

/// A time a client could not hear: from `since` until `until` (`None`: until it is connected
/// again).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Deaf {
    since: Duration,
    until: Option<Duration>,
}

/// Clients move when the checker reorders them; the times stay.
impl RenameSessions for Hearing {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        let deaf = self.deaf.iter();
        Hearing {
            deaf: deaf
                .map(|(&client, &deaf)| (renaming.client(client), deaf))
                .collect(),
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        hasher.write_unordered(self.deaf.iter(), |(&client, deaf), hasher| {
            hasher.write_u32(renaming.client(client));
            deaf.hash(hasher);
        });
    }
}

impl Hearing {
    /// Takes in a session state change or a fault that lasts.
    pub fn observe(&mut self, entry: &TraceEntry) {
        match &entry.event {
            TraceEvent::Session { client, event, .. } => {
                let connected = *event != SessionEvent::Disconnected;
                let until = connected.then_some(entry.at);
                self.deaf_until(*client, entry.at, until, connected);
            }
            TraceEvent::Fault { client, lasts, .. } if !lasts.is_zero() => {
                let until = entry.at.checked_add(*lasts);
                self.deaf_until(*client, entry.at, until, false);
            }
            _ => {}
        }
    }

    /// Whether `client` may not have heard by `now` of news sent at `sent`: it could not hear
    /// then, and has not heard for [`GRACE`] since.
    pub fn missed(&self, client: ClientId, sent: Duration, now: Duration) -> bool {
        self.deaf.get(&client).is_some_and(|deaf| {
            deaf.since <= sent && deaf.until.is_none_or(|end| now < end.saturating_add(GRACE))
        })
    }

    /// Since when `client` has been hearing, its news on the way allowed for ([`GRACE`] after
    /// it could hear again; zero if it always could); `None` while it cannot hear.
    pub fn hearing_since(&self, client: ClientId, now: Duration) -> Option<Duration> {
        match self.deaf.get(&client) {
            None => Some(Duration::ZERO),
            Some(Deaf { until: None, .. }) => None,
            Some(Deaf {
                until: Some(end), ..
            }) => (*end <= now).then(|| end.saturating_add(GRACE)),
        }
    }

    /// Takes in that `client` cannot hear from `now` until `until` (`None`: until connected);
    /// `connected` says it is connected again.
    fn deaf_until(
        &mut self,
        client: ClientId,
        now: Duration,
        until: Option<Duration>,
        connected: bool,
    ) {
        let fresh = Deaf {
            since: now,
            until: Some(now),
        };
        self.deaf
            .entry(client)
            .or_insert(fresh)
            .extend(now, until, connected);
    }
}

impl Deaf {
    /// Deaf from `now` until `until` (`None`: until connected again), or longer if it already
    /// was; `connected` ends a deafness that waits for a connection. A deafness that begins
    /// within [`GRACE`] of the last one's end continues it: the client had not caught up.
    fn extend(&mut self, now: Duration, until: Option<Duration>, connected: bool) {
        let over = self
            .until
            .is_some_and(|end| end.saturating_add(GRACE) < now);
        if over {
            self.since = now;
        }
        self.until = match (self.until, until) {
            _ if over => until,
            (None, _) if connected => until,
            (None, _) => None,
            (Some(_), None) => None,
            (Some(old), Some(new)) => Some(old.max(new)),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::at;
    use zklab_sim::fault::FaultKind;

    fn session(ms: u64, event: SessionEvent) -> TraceEntry {
        at(
            ms,
            TraceEvent::Session {
                client: 0,
                session: 1,
                event,
            },
        )
    }

    fn paused(ms: u64, for_ms: u64) -> TraceEntry {
        at(
            ms,
            TraceEvent::Fault {
                kind: FaultKind::Pause,
                client: 0,
                detail: String::new(),
                lasts: Duration::from_millis(for_ms),
            },
        )
    }

    fn heard(entries: &[TraceEntry]) -> Hearing {
        let mut hearing = Hearing::default();
        entries.iter().for_each(|entry| hearing.observe(entry));
        hearing
    }

    const fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn news_sent_while_disconnected_may_be_missed_until_a_grace_after_the_reconnect() {
        let hearing = heard(&[
            session(10, SessionEvent::Disconnected),
            session(500, SessionEvent::SyncConnected),
        ]);
        assert!(hearing.missed(0, ms(100), ms(1_000)));
        assert!(!hearing.missed(0, ms(100), ms(2_600)));
        // Sent before it went deaf: it was hearing then.
        assert!(!hearing.missed(0, ms(5), ms(1_000)));
        assert!(!hearing.missed(1, ms(100), ms(1_000)));
        assert_eq!(hearing.hearing_since(0, ms(1_000)), Some(ms(2_500)));
        assert_eq!(hearing.hearing_since(1, ms(1_000)), Some(Duration::ZERO));
        let still = heard(&[session(10, SessionEvent::Disconnected)]);
        assert_eq!(still.hearing_since(0, ms(1_000)), None);
        assert!(still.missed(0, ms(100), ms(60_000)));
    }

    #[test]
    fn a_deafness_that_begins_within_the_grace_of_the_last_continues_it() {
        // Paused from 10 ms to 510 ms; the client notices its lost connection on waking.
        let woke_disconnected = heard(&[paused(10, 500), session(510, SessionEvent::Disconnected)]);
        assert!(woke_disconnected.missed(0, ms(100), ms(600)));
        // Heard for longer than the grace in between: news sent in the pause reached it.
        let heard_between = heard(&[paused(10, 500), session(3_000, SessionEvent::Disconnected)]);
        assert!(!heard_between.missed(0, ms(100), ms(3_100)));
        assert_eq!(heard_between.hearing_since(0, ms(3_100)), None);
    }
}
