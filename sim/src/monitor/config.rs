//! Configuration freshness: a reader never sees the value go back, and ends with the last value
//! written.
//!
//! Judged from what the clients were told: each `Wrote` makes its value the newest (values are
//! known by digest, in the order first written), each `Read` is a reader's view. A reader's
//! session reading a lower version than it read before saw the value go back (a read served
//! by a server behind another it read from). A reader whose client finishes with a value older
//! than the newest written ended stale: it missed a change (a value written but not yet told is
//! not held against it). The model has no end of a client: there, a reader that misses the last
//! value never finishes, which its "no stuck state" catches.

use std::collections::BTreeMap;

use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;
use zklab_recipes::symmetry::RenameSessions;

use super::{Monitor, Violation, ViolationKind};
use crate::trace::{ClientId, TraceEntry, TraceEvent};

/// A reader's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// What a reader's session read last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct View {
    #[rename(keep)]
    client: ClientId,
    #[rename(keep)]
    version: i64,
    #[rename(keep)]
    value: i64,
}

/// The configuration-freshness monitor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct ConfigFreshness {
    /// Each value written, by digest, and its place in the order first written.
    #[rename(keep)]
    written: BTreeMap<i64, usize>,
    /// The place of the newest value written.
    #[rename(keep)]
    newest: Option<usize>,
    views: BTreeMap<Session, View>,
}

impl ConfigFreshness {
    /// A monitor of one configuration.
    pub fn new() -> Self {
        ConfigFreshness::default()
    }

    fn read(&mut self, session: SessionId, view: View) -> Option<(ViolationKind, String)> {
        let before = self.views.insert(Session(session), view)?;
        (view.version < before.version).then(|| {
            let message = format!(
                "c{} read version {} after version {} in session {session:#x}",
                view.client, view.version, before.version
            );
            (ViolationKind::ConfigBackwards, message)
        })
    }

    fn finished(&self, client: ClientId) -> Option<(ViolationKind, String)> {
        let last = self
            .views
            .values()
            .filter(|view| view.client == client)
            .max_by_key(|view| view.version)?;
        let newest = self.newest?;
        let place = self.written.get(&last.value)?;
        (*place < newest).then(|| {
            let message = format!(
                "c{client} finished with the value of version {}, older than the newest written",
                last.version
            );
            (ViolationKind::ConfigStale, message)
        })
    }
}

impl Monitor for ConfigFreshness {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let (kind, message) = match &entry.event {
            TraceEvent::Outcome {
                outcome: Outcome::Wrote { value },
                ..
            } => {
                let next = self.written.len();
                let place = *self.written.entry(*value).or_insert(next);
                self.newest = Some(place);
                return None;
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome: Outcome::Read { version, value },
            } => {
                let view = View {
                    client: *client,
                    version: *version,
                    value: *value,
                };
                self.read(*session, view)?
            }
            TraceEvent::Finished { client } => self.finished(*client)?,
            _ => return None,
        };
        Some(Violation {
            kind,
            at: entry.at,
            message,
        })
    }

    fn kinds(&self) -> Vec<ViolationKind> {
        vec![ViolationKind::ConfigBackwards, ViolationKind::ConfigStale]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testing::{outcome, trace};

    fn first(events: Vec<TraceEvent>) -> Option<ViolationKind> {
        ConfigFreshness::new()
            .first_in(&trace(events))
            .map(|v| v.kind)
    }

    fn wrote(value: i64) -> TraceEvent {
        outcome(0, 1, Outcome::Wrote { value })
    }

    fn read(session: SessionId, version: i64, value: i64) -> TraceEvent {
        outcome(1, session, Outcome::Read { version, value })
    }

    #[test]
    fn a_reader_that_sees_the_version_go_back_in_one_session_saw_it_go_back() {
        assert_eq!(
            first(vec![read(2, 3, 30), read(2, 2, 20)]),
            Some(ViolationKind::ConfigBackwards)
        );
        assert_eq!(first(vec![read(2, 3, 30), read(4, 2, 20)]), None);
    }

    #[test]
    fn a_reader_that_finishes_with_an_older_value_than_the_newest_written_ended_stale() {
        let finished = TraceEvent::Finished { client: 1 };
        let stale = vec![wrote(10), read(2, 0, 10), wrote(20), finished.clone()];
        assert_eq!(first(stale), Some(ViolationKind::ConfigStale));
        let fresh = vec![wrote(10), wrote(20), read(2, 1, 20), finished.clone()];
        assert_eq!(first(fresh), None);
        // Read before its write was told: not older.
        assert_eq!(first(vec![wrote(10), read(2, 1, 20), finished]), None);
    }
}
