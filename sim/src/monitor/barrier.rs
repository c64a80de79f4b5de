//! Barrier safety: nobody passes a barrier that stood throughout their wait.
//!
//! Judged by the server's applied ops, not by what clients believe: a barrier node under the
//! directory stands from the create that made it to the delete (or the session end) that took
//! it. A waiter's wait at a barrier begins with its first `exists` on it; it may pass once the
//! barrier was down at some moment since (an `exists` applied while it was gone, or its
//! removal). A pass that no such moment justifies is a violation. A pass whose wait it never
//! saw begin (a real server's trace has no applied ops) is not judged.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpReply, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::symmetry::RenameSessions;

use super::{changes, Change, Monitor, Violation, ViolationKind};
use crate::trace::{TraceEntry, TraceEvent};

/// The barrier-safety monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct BarrierSafety {
    /// The directory whose children are barrier nodes.
    #[rename(keep)]
    dir: String,
    /// The barrier nodes that stand now.
    standing: BTreeSet<String>,
    /// Each waiting session's barrier, and whether it has been down since the wait began.
    waiting: BTreeMap<Waiter, Wait>,
}

/// A session waiting at a barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Waiter(#[rename(session)] SessionId);

/// Where a session waits.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Wait {
    barrier: String,
    /// The barrier was down at some moment since the wait began.
    seen_down: bool,
}

impl BarrierSafety {
    /// A monitor of the barriers whose nodes are children of `dir`.
    pub fn new(dir: &str) -> Self {
        BarrierSafety {
            dir: dir.to_owned(),
            standing: BTreeSet::new(),
            waiting: BTreeMap::new(),
        }
    }

    fn is_barrier(&self, path: &str) -> bool {
        path.rsplit_once('/')
            .is_some_and(|(dir, _)| dir == self.dir || (dir.is_empty() && self.dir == "/"))
    }

    /// Takes a write the server applied: a barrier set or removed, alone or in a multi.
    fn write(&mut self, op: &Op, reply: &OpReply) {
        for change in changes(op, reply) {
            match change {
                Change::Created { path, .. } if self.is_barrier(path) => {
                    self.standing.insert(path.to_owned());
                }
                Change::Deleted(path) if self.is_barrier(path) => self.down(path),
                _ => {}
            }
        }
    }

    /// A barrier node is gone: everyone waiting there has seen it down.
    fn down(&mut self, path: &str) {
        self.standing.remove(path);
        for wait in self.waiting.values_mut() {
            if wait.barrier == path {
                wait.seen_down = true;
            }
        }
    }
}

impl Monitor for BarrierSafety {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => match (op, reply) {
                (Op::Exists { path, .. }, _) if self.is_barrier(path) => {
                    let down = !self.standing.contains(path);
                    let wait = self.waiting.entry(Waiter(*session)).or_insert(Wait {
                        barrier: path.clone(),
                        seen_down: false,
                    });
                    if wait.barrier != *path {
                        *wait = Wait {
                            barrier: path.clone(),
                            seen_down: false,
                        };
                    }
                    wait.seen_down |= down;
                }
                (op, reply) => self.write(op, reply),
            },
            // A session's wait outlives the session: its client may still act on a reply it
            // had before the end (a paused client does).
            TraceEvent::SessionEnded { deleted, .. } => {
                for path in deleted {
                    self.down(path);
                }
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome: Outcome::Passed { gate },
            } => {
                let wait = self.waiting.remove(&Waiter(*session))?;
                if wait.seen_down {
                    return None;
                }
                let message = format!(
                    "c{client} (s{session}) passed the {gate} {}, which stood throughout its wait",
                    wait.barrier
                );
                return Some(Violation {
                    kind: ViolationKind::BarrierPassed,
                    at: entry.at,
                    message,
                });
            }
            _ => {}
        }
        None
    }

    fn kinds(&self) -> Vec<ViolationKind> {
        vec![ViolationKind::BarrierPassed]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, OpResult, Stat};

    use super::*;
    use crate::monitor::testing::{applied, at};

    fn set(path: &str) -> TraceEntry {
        let op = Op::Create {
            path: path.to_owned(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        };
        let created = OpResult::Created {
            path: path.to_owned(),
            stat: Stat::default(),
        };
        applied(1, op, created)
    }

    fn read(session: SessionId, path: &str, standing: bool) -> TraceEntry {
        let op = Op::Exists {
            path: path.to_owned(),
            watch: true,
        };
        applied(session, op, OpResult::Exists(standing.then(Stat::default)))
    }

    fn removed(path: &str) -> TraceEntry {
        let op = Op::Delete {
            path: path.to_owned(),
            version: -1,
        };
        applied(1, op, OpResult::Deleted)
    }

    fn passed(session: SessionId) -> TraceEntry {
        at(
            0,
            TraceEvent::Outcome {
                client: 1,
                session,
                outcome: Outcome::Passed { gate: "barrier" },
            },
        )
    }

    fn first(entries: &[TraceEntry]) -> Option<ViolationKind> {
        let mut monitor = BarrierSafety::new("/b");
        entries
            .iter()
            .find_map(|entry| monitor.observe(entry))
            .map(|violation| violation.kind)
    }

    #[test]
    fn passing_after_the_barrier_went_is_safe() {
        let gone = [
            set("/b/x"),
            read(2, "/b/x", true),
            removed("/b/x"),
            passed(2),
        ];
        assert_eq!(first(&gone), None);
        let never_set = [read(2, "/b/x", false), passed(2)];
        assert_eq!(first(&never_set), None);
    }

    #[test]
    fn passing_a_barrier_that_stood_throughout_is_a_violation() {
        let standing = [set("/b/x"), read(2, "/b/x", true), passed(2)];
        assert_eq!(first(&standing), Some(ViolationKind::BarrierPassed));
        // No read, no wait to judge (as on a real server's trace).
        let unread = [set("/b/x"), passed(2)];
        assert_eq!(first(&unread), None);
        // Down at the first read but set again does not help a wait at another barrier.
        let other = [
            read(2, "/b/y", false),
            set("/b/x"),
            read(2, "/b/x", true),
            passed(2),
        ];
        assert_eq!(first(&other), Some(ViolationKind::BarrierPassed));
    }

    #[test]
    fn a_barrier_removed_inside_a_multi_is_down() {
        let delete = Op::Delete {
            path: "/b/x".to_owned(),
            version: -1,
        };
        let multi = applied(
            1,
            Op::Multi(vec![delete]),
            OpResult::Multi(vec![Ok(OpResult::Deleted)]),
        );
        assert_eq!(
            first(&[set("/b/x"), read(2, "/b/x", true), multi, passed(2)]),
            None
        );
    }

    #[test]
    fn a_barrier_goes_with_its_controllers_session() {
        let ended = at(
            0,
            TraceEvent::SessionEnded {
                client: 0,
                session: 1,
                expired: true,
                deleted: vec!["/b/x".to_owned()],
            },
        );
        let expired = [set("/b/x"), read(2, "/b/x", true), ended, passed(2)];
        assert_eq!(first(&expired), None);
    }
}
