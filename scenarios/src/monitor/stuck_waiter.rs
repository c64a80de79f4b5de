//! Stuck waiter: a client waits on a watch that can no longer fire.
//!
//! An `exists` watch set on a node that is already gone fires only when the node is created
//! again; a sequential node's name is never given out again, so such a watch never fires. A
//! client whose session then sends nothing more for longer than a bound waits for good, until
//! some unrelated fault (an expiry) happens to wake it. The lost wake-up of a lock waiter whose
//! predecessor vanished between its listing and its `exists` is this. A client whose process
//! died waits for nothing: the reply that would have sent it listing again never reached it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::{Op, OpResult, SessionId};
use zklab_sim::fault::FaultKind;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::take_overdue;

/// No stuck waiter: broken when a client waited, for longer than a bound, on a watch that can no
/// longer fire.
pub static STUCK_WAITER: Property = Property::new("stuck-waiter", "no stuck waiter");

/// The stuck-waiter monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StuckWaiter {
    bound: Duration,
    /// Sessions waiting on a watch that cannot fire: since when, which client, on which node.
    waiting: BTreeMap<SessionId, (Duration, (ClientId, String))>,
    /// Clients whose process died or was stopped: whatever the server applied for them later
    /// was sent before, and nobody is left to act on its reply.
    dead: BTreeSet<ClientId>,
}

impl StuckWaiter {
    /// A monitor that reports a client waiting longer than `bound` on a watch that cannot fire.
    pub fn new(bound: Duration) -> Self {
        StuckWaiter {
            bound,
            waiting: BTreeMap::new(),
            dead: BTreeSet::new(),
        }
    }
}

impl Monitor for StuckWaiter {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Applied {
                client,
                session,
                op: Op::Exists { path, watch: true },
                reply: Ok(OpResult::Exists(None)),
                ..
            } if is_sequential(path) && !self.dead.contains(client) => {
                self.waiting
                    .insert(*session, (entry.at, (*client, path.clone())));
            }
            TraceEvent::Fault {
                kind: FaultKind::Crash,
                client,
                ..
            }
            | TraceEvent::Stranded { client } => {
                self.dead.insert(*client);
                self.waiting.retain(|_, (_, (waiter, _))| waiter != client);
            }
            TraceEvent::Request { session, .. } | TraceEvent::SessionEnded { session, .. } => {
                self.waiting.remove(session);
            }
            _ => {}
        }
        let (session, waited, (client, path)) =
            take_overdue(&mut self.waiting, entry.at, self.bound)?;
        let message = format!(
            "c{client} (s{session}) has waited {waited:?} on an exists watch on {path}, which was \
             already gone when the watch was set: it can never fire"
        );
        Some(Violation::new(&STUCK_WAITER, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&STUCK_WAITER]
    }
}

/// Whether a path names a sequential node: it ends in the server's 10-character counter.
pub(crate) fn is_sequential(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    name.len() > 10 && name[name.len() - 10..].parse::<i32>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::{at, crashed};
    use zklab_sim::trace::Trace;

    fn watch_on_gone(ms: u64, path: &str) -> TraceEntry {
        at(
            ms,
            TraceEvent::Applied {
                client: 0,
                session: 1,
                zxid: 3,
                op: Op::Exists {
                    path: path.to_owned(),
                    watch: true,
                },
                reply: Ok(OpResult::Exists(None)),
            },
        )
    }

    fn later(ms: u64) -> TraceEntry {
        at(ms, TraceEvent::Finished { client: 9 })
    }

    #[test]
    fn a_watch_on_a_gone_sequential_node_and_silence_past_the_bound_is_stuck() {
        let mut trace = Trace::new();
        for e in [
            watch_on_gone(0, "/l/a-lock-0000000001"),
            later(500),
            later(1500),
        ] {
            trace.push(e.at, e.event);
        }
        let violation = StuckWaiter::new(Duration::from_secs(1)).first_in(&trace);
        assert_eq!(violation.map(|v| v.at), Some(Duration::from_millis(1500)));
    }

    #[test]
    fn a_new_request_or_a_node_that_can_come_back_is_not() {
        let request = at(
            500,
            TraceEvent::Request {
                client: 0,
                session: 1,
                op: Op::Sync {
                    path: "/".to_owned(),
                },
            },
        );
        let mut monitor = StuckWaiter::new(Duration::from_secs(1));
        for e in [
            watch_on_gone(0, "/l/a-lock-0000000001"),
            request,
            later(5000),
        ] {
            assert_eq!(monitor.observe(&e), None);
        }
        let mut monitor = StuckWaiter::new(Duration::from_secs(1));
        for e in [watch_on_gone(0, "/barrier/ready"), later(5000)] {
            assert_eq!(monitor.observe(&e), None);
        }
    }

    #[test]
    fn a_client_whose_process_died_waits_for_nothing() {
        // Crashed after its watch was set, or before the server applied the `exists` it sent.
        for story in [
            [watch_on_gone(0, "/l/a-lock-0000000001"), at(4, crashed(0))],
            [at(0, crashed(0)), watch_on_gone(4, "/l/a-lock-0000000001")],
        ] {
            let mut monitor = StuckWaiter::new(Duration::from_secs(1));
            for e in story.into_iter().chain([later(5000)]) {
                assert_eq!(monitor.observe(&e), None);
            }
        }
    }
}
