//! Configuration freshness: a reader never sees the value go back, and ends with the last value
//! written.
//!
//! Judged from what the clients were told: each `Wrote` makes its value the newest (values are
//! known by digest, in the order first written), each `Read` is a reader's view. A reader's
//! session reading a lower version than it read before saw the value go back (a read served
//! by a server behind another it read from). A reader whose client finishes with a value older
//! than the newest written, or with none read at all, ended stale: it missed a change (a value
//! written but not yet told is not held against it, nor a change written while the reader could
//! not hear, until a grace after it could again: see [`Hearing`]). The model has no end of a
//! client: there, a reader that misses the last value never finishes, which its "no stuck
//! state" catches.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::hearing::Hearing;

/// Config never goes back: broken when a configuration's reader read a lower version than it had
/// read before.
pub static CONFIG_BACKWARDS: Property = Property::new("config-backwards", "config never goes back");

/// Readers end with the last value: broken when a configuration's reader finished with a value
/// older than the newest written.
pub static CONFIG_STALE: Property =
    Property::new("config-stale", "readers end with the last value");

/// A reader's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// What a reader's session read last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct View {
    #[rename(client)]
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
    /// When each value was first written, by its place.
    #[rename(keep)]
    written_at: Vec<Duration>,
    /// The place of the newest value written.
    #[rename(keep)]
    newest: Option<usize>,
    /// The clients that wrote: not readers.
    #[rename(client)]
    writers: BTreeSet<ClientId>,
    views: BTreeMap<Session, View>,
    /// When each reader could not hear the server.
    hearing: Hearing,
}

impl ConfigFreshness {
    /// A monitor of one configuration.
    pub fn new() -> Self {
        ConfigFreshness::default()
    }

    fn read(&mut self, session: SessionId, view: View) -> Option<(&'static Property, String)> {
        let before = self.views.insert(Session(session), view)?;
        (view.version < before.version).then(|| {
            let message = format!(
                "c{} read version {} after version {} in session {session:#x}",
                view.client, view.version, before.version
            );
            (&CONFIG_BACKWARDS, message)
        })
    }

    fn finished(&self, client: ClientId, now: Duration) -> Option<(&'static Property, String)> {
        let last = self
            .views
            .values()
            .filter(|view| view.client == client)
            .max_by_key(|view| view.version);
        let newest = self.newest?;
        if self.writers.contains(&client) {
            return None;
        }
        // The first value it has not read, and when that was written.
        let missed = match last {
            Some(view) => self.written.get(&view.value)? + 1,
            None => 0,
        };
        let sent = *self.written_at.get(missed)?;
        if missed > newest || self.hearing.missed(client, sent, now) {
            return None;
        }
        let message = match last {
            Some(view) => format!(
                "c{client} finished with the value of version {}, older than the newest written",
                view.version
            ),
            None => format!("c{client} finished without reading a value, though one was written"),
        };
        Some((&CONFIG_STALE, message))
    }
}

impl Monitor for ConfigFreshness {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.hearing.observe(entry);
        let (property, message) = match &entry.event {
            TraceEvent::Outcome {
                client,
                outcome: Outcome::Wrote { value },
                ..
            } => {
                self.writers.insert(*client);
                let next = self.written.len();
                let place = *self.written.entry(*value).or_insert(next);
                if place == next {
                    self.written_at.push(entry.at);
                }
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
            TraceEvent::Finished { client } => self.finished(*client, entry.at)?,
            _ => return None,
        };
        Some(Violation::new(property, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&CONFIG_BACKWARDS, &CONFIG_STALE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::{at, first_broken, first_broken_in, outcome};

    fn first(events: Vec<TraceEvent>) -> Option<&'static Property> {
        first_broken_in(ConfigFreshness::new(), events)
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
            Some(&CONFIG_BACKWARDS)
        );
        assert_eq!(first(vec![read(2, 3, 30), read(4, 2, 20)]), None);
    }

    #[test]
    fn a_reader_that_finishes_with_an_older_value_than_the_newest_written_ended_stale() {
        let finished = TraceEvent::Finished { client: 1 };
        let stale = vec![wrote(10), read(2, 0, 10), wrote(20), finished.clone()];
        assert_eq!(first(stale), Some(&CONFIG_STALE));
        let fresh = vec![wrote(10), wrote(20), read(2, 1, 20), finished.clone()];
        assert_eq!(first(fresh), None);
        // Read before its write was told: not older.
        assert_eq!(
            first(vec![wrote(10), read(2, 1, 20), finished.clone()]),
            None
        );
        // Read nothing at all; a writer reads nothing either.
        assert_eq!(first(vec![wrote(10), finished]), Some(&CONFIG_STALE));
        let writer_finished = TraceEvent::Finished { client: 0 };
        assert_eq!(first(vec![wrote(10), writer_finished]), None);
    }

    #[test]
    fn a_value_written_while_the_reader_could_not_hear_is_not_held_against_it() {
        let lost = TraceEvent::Session {
            client: 1,
            session: 2,
            event: zklab_recipes::client::SessionEvent::Disconnected,
        };
        let finished = TraceEvent::Finished { client: 1 };
        let run = |events: Vec<TraceEvent>| {
            let entries: Vec<TraceEntry> = events
                .into_iter()
                .enumerate()
                .map(|(i, event)| at(1_000 * i as u64, event))
                .collect();
            first_broken(ConfigFreshness::new(), &entries)
        };
        let deaf_first = vec![
            wrote(10),
            read(2, 0, 10),
            lost.clone(),
            wrote(20),
            finished.clone(),
        ];
        assert_eq!(run(deaf_first), None);
        // Deaf only after the value it missed was written: it could have heard of it.
        let deaf_late = vec![wrote(10), read(2, 0, 10), wrote(20), lost, finished];
        assert_eq!(run(deaf_late), Some(&CONFIG_STALE));
    }
}
