//! Stuck waiter: code that declared it awaits a node's deletion (see
//! `zklab_recipes::declaration`) while every node it awaits is gone already, for longer than a
//! bound. Once the awaited node is gone, a waiter whose watch was set hears of it within a
//! reconnect, and moves on; one that set its watch on a node already gone (a watch that fires
//! only if the node comes back, which a sequential node's name never does) waits for good,
//! until some unrelated fault (an expiry) happens to wake it. The lost wake-up of a lock waiter
//! whose predecessor vanished between its listing and its `exists` is this. A client whose
//! process died waits for nothing.
//!
//! Only declared waits count: a watch on a missing node is also how code waits for a node to
//! appear, and nothing in the trace tells the two apart but what the code says.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::SessionId;
use zklab_sim::fault::FaultKind;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, Trace, TraceEntry, TraceEvent};

use crate::monitor::{changes, take_overdue, Change};

/// No stuck waiter: broken when a client waited, for longer than a bound, for nodes to go that
/// were all gone already.
pub static STUCK_WAITER: Property = Property::new("stuck-waiter", "no stuck waiter");

/// A declared wait for nodes to go.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Wait {
    client: ClientId,
    session: SessionId,
    /// The nodes it awaits, any of which going frees it.
    awaits: Vec<String>,
    /// When it declared the wait.
    since: Duration,
}

impl Wait {
    /// The violation of this wait by `declarer`, its nodes gone as `how_long` says, at `at`.
    fn violation(&self, declarer: u32, at: Duration, how_long: &str) -> Violation {
        let message = format!(
            "c{} (s{}, #{declarer}) has waited since {:?} for {} to go; {how_long}, no \
             notification had reached it: it waits for good",
            self.client,
            self.session,
            self.since,
            self.awaits.join(" or "),
        );
        Violation::new(&STUCK_WAITER, at, message)
    }
}

/// The stuck-waiter monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StuckWaiter {
    bound: Duration,
    /// The nodes that stand.
    live: BTreeSet<String>,
    /// Each declarer's wait.
    waits: BTreeMap<u32, Wait>,
    /// The waits whose nodes are all gone: since when.
    gone: BTreeMap<u32, (Duration, Wait)>,
    /// Clients whose process died or was stopped: they wait for nothing.
    dead: BTreeSet<ClientId>,
}

impl StuckWaiter {
    /// A monitor that reports a declared wait whose nodes have all been gone longer than
    /// `bound`.
    pub fn new(bound: Duration) -> Self {
        StuckWaiter {
            bound,
            live: BTreeSet::new(),
            waits: BTreeMap::new(),
            gone: BTreeMap::new(),
            dead: BTreeSet::new(),
        }
    }

    /// Starts the clock of every wait whose nodes are now all gone.
    fn note_gone(&mut self, now: Duration) {
        for (&declarer, wait) in &self.waits {
            let all_gone = wait.awaits.iter().all(|node| !self.live.contains(node));
            if all_gone && !self.gone.contains_key(&declarer) {
                self.gone.insert(declarer, (now, wait.clone()));
            }
        }
    }

    /// The first stuck waiter of a whole run: one whose nodes were gone past the bound while
    /// the run went on, or else one still waiting for nodes all gone when the trace ends. A
    /// run ends when every client has finished (and a finished waiter waits no more) or at the
    /// time bound, long after any notification on its way would have come: either way a wait
    /// left over is one nothing will end, and it is reported as that rather than as the
    /// clients that did not finish.
    pub fn first_in_run(mut self, trace: &Trace) -> Option<Violation> {
        let entries = trace.entries();
        if let Some(violation) = entries.iter().find_map(|entry| self.observe(entry)) {
            return Some(violation);
        }
        let end = entries.last()?.at;
        let (&declarer, (gone_since, wait)) = self.gone.iter().next()?;
        let how_long = format!(
            "they have all been gone since {gone_since:?}, and when the trace ends at {end:?}"
        );
        Some(wait.violation(declarer, end, &how_long))
    }

    fn forget_where(&mut self, ended: impl Fn(&Wait) -> bool) {
        self.waits.retain(|_, wait| !ended(wait));
        self.gone.retain(|_, (_, wait)| !ended(wait));
    }
}

impl Monitor for StuckWaiter {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Declared {
                client,
                session,
                declarer,
                declared,
            } => {
                self.waits.remove(declarer);
                self.gone.remove(declarer);
                if !declared.awaits_gone.is_empty() && !self.dead.contains(client) {
                    let wait = Wait {
                        client: *client,
                        session: *session,
                        awaits: declared.awaits_gone.clone(),
                        since: entry.at,
                    };
                    self.waits.insert(*declarer, wait);
                    self.note_gone(entry.at);
                }
            }
            TraceEvent::Applied { op, reply, .. } => {
                for change in changes(op, reply) {
                    match change {
                        Change::Created { path, .. } => {
                            self.live.insert(path.to_owned());
                            self.gone
                                .retain(|_, (_, wait)| !wait.awaits.iter().any(|a| a == path));
                        }
                        Change::Deleted(path) => {
                            self.live.remove(path);
                        }
                        Change::Set { .. } => {}
                    }
                }
                self.note_gone(entry.at);
            }
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                for path in deleted {
                    self.live.remove(path);
                }
                self.forget_where(|wait| wait.session == *session);
                self.note_gone(entry.at);
            }
            TraceEvent::Fault {
                kind: FaultKind::Crash,
                client,
                ..
            }
            | TraceEvent::Stranded { client } => {
                self.dead.insert(*client);
                self.forget_where(|wait| wait.client == *client);
            }
            _ => {}
        }
        let (declarer, waited, wait) = take_overdue(&mut self.gone, entry.at, self.bound)?;
        self.waits.remove(&declarer);
        let how_long = format!("for {waited:?} they have all been gone");
        Some(wait.violation(declarer, entry.at, &how_long))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&STUCK_WAITER]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::{at, crashed, created, ended, trace_of};
    use zklab_recipes::declaration::Declared;

    fn awaits(ms: u64, path: &str) -> TraceEntry {
        at(
            ms,
            TraceEvent::Declared {
                client: 0,
                session: 1,
                declarer: 1,
                declared: Declared {
                    owns: Vec::new(),
                    awaits_gone: vec![path.to_owned()],
                },
            },
        )
    }

    fn later(ms: u64) -> TraceEntry {
        at(ms, TraceEvent::Finished { client: 9 })
    }

    fn first(story: Vec<TraceEntry>) -> Option<Violation> {
        let mut monitor = StuckWaiter::new(Duration::from_secs(1));
        story.iter().find_map(|entry| monitor.observe(entry))
    }

    #[test]
    fn a_declared_wait_for_a_node_already_gone_and_silence_past_the_bound_is_stuck() {
        let story = vec![awaits(0, "/l/a-1"), later(500), later(1500)];
        assert_eq!(
            first(story).map(|v| v.at),
            Some(Duration::from_millis(1500))
        );
        // Deleted after the wait began, and never heard of.
        let story = vec![
            at(0, created(1, 2, "/l/a-1")),
            awaits(1, "/l/a-1"),
            at(2, ended(1, 2, &["/l/a-1"])),
            later(3000),
        ];
        let violation = first(story).expect("stuck");
        assert!(
            violation.message.contains("/l/a-1"),
            "{}",
            violation.message
        );
    }

    #[test]
    fn a_wait_left_when_a_quiet_run_ends_is_stuck_and_says_since_when() {
        let story = vec![
            at(0, created(1, 2, "/l/a-1")),
            awaits(1, "/l/a-1"),
            at(78, ended(1, 2, &["/l/a-1"])),
            later(200),
        ];
        assert_eq!(
            first(story.clone()),
            None,
            "within the bound while the run went on"
        );
        let monitor = StuckWaiter::new(Duration::from_secs(1));
        let violation = monitor
            .first_in_run(&trace_of(story))
            .expect("stuck at the end");
        assert_eq!(violation.at, Duration::from_millis(200));
        assert!(
            violation
                .message
                .contains("/l/a-1 to go; they have all been gone since 78ms"),
            "{}",
            violation.message
        );
        // A wait for a node that still stands when the run ends is not this monitor's to judge.
        let standing = vec![
            at(0, created(1, 2, "/l/a-1")),
            awaits(1, "/l/a-1"),
            later(200),
        ];
        let monitor = StuckWaiter::new(Duration::from_secs(1));
        assert_eq!(monitor.first_in_run(&trace_of(standing)), None);
    }

    #[test]
    fn a_wait_that_moves_on_or_a_watch_declared_as_nothing_is_not() {
        let moved_on = vec![
            awaits(0, "/l/a-1"),
            at(
                500,
                TraceEvent::Declared {
                    client: 0,
                    session: 1,
                    declarer: 1,
                    declared: Declared::default(),
                },
            ),
            later(5000),
        ];
        assert_eq!(first(moved_on), None);
        // A node that stands: the wait is not stuck however long it lasts.
        let standing = vec![
            at(0, created(1, 2, "/l/a-1")),
            awaits(1, "/l/a-1"),
            later(5000),
        ];
        assert_eq!(first(standing), None);
    }

    #[test]
    fn a_client_whose_process_died_waits_for_nothing() {
        for story in [
            vec![awaits(0, "/l/a-1"), at(4, crashed(0)), later(5000)],
            vec![at(0, crashed(0)), awaits(4, "/l/a-1"), later(5000)],
        ] {
            assert_eq!(first(story), None);
        }
    }
}
