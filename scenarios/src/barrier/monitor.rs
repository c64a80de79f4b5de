//! Barrier safety: nobody passes a barrier that stood throughout their wait.
//!
//! Judged by the server's applied ops, not by what clients believe: a barrier node under the
//! directory stands from the create that the leader applied to the delete (or the session end)
//! that took it. A waiter's wait at a barrier begins when it first asks about it (`sync` or
//! `exists`); it may pass once the barrier was down at some moment since (its removal, or an
//! `exists` applied while it was gone). A pass that no such moment justifies is a violation. A
//! pass with no `exists` of the waiter's applied (a real server's trace has no applied ops) is
//! not judged.
//!
//! In an ensemble a follower serves an `exists` from its own state, which may predate the
//! leader's. Its "no node" shows the barrier down at a moment of the wait if the barrier was
//! down when the waiter first asked: the follower has applied at least what the waiter's
//! request followed. If the barrier stood then, and stood throughout, the answer is stale.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpReply, OpResult, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::{changes, Change};

/// Barrier safety: broken when a client passed a barrier that stood throughout its wait.
pub static BARRIER_PASSED: Property = Property::new("barrier-passed", "barrier safety");

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
    /// The barrier was down at some moment since the waiter first asked about it.
    seen_down: bool,
    /// It was down when the waiter first asked.
    asked_while_down: bool,
    /// An `exists` of the waiter's on it has been applied.
    begun: bool,
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

    /// The wait of `session` at the barrier `path`: a new one if it waited elsewhere or nowhere.
    fn ask(&mut self, session: SessionId, path: &str) -> &mut Wait {
        let fresh = Wait {
            barrier: path.to_owned(),
            seen_down: false,
            asked_while_down: !self.standing.contains(path),
            begun: false,
        };
        let wait = self
            .waiting
            .entry(Waiter(session))
            .or_insert_with(|| fresh.clone());
        if wait.barrier != path {
            *wait = fresh;
        }
        wait
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
            TraceEvent::Request {
                session,
                op: Op::Sync { path } | Op::Exists { path, .. },
                ..
            } if self.is_barrier(path) => {
                self.ask(*session, path);
            }
            TraceEvent::Applied {
                session, op, reply, ..
            } => match (op, reply) {
                (Op::Exists { path, .. }, _) if self.is_barrier(path) => {
                    let down_at_leader = !self.standing.contains(path);
                    let served_gone = matches!(reply, Ok(OpResult::Exists(None)));
                    let wait = self.ask(*session, path);
                    wait.begun = true;
                    wait.seen_down |= down_at_leader || (served_gone && wait.asked_while_down);
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
                if wait.seen_down || !wait.begun {
                    return None;
                }
                let message = format!(
                    "c{client} (s{session}) passed the {gate} {}, which stood throughout its wait",
                    wait.barrier
                );
                return Some(Violation::new(&BARRIER_PASSED, entry.at, message));
            }
            _ => {}
        }
        None
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&BARRIER_PASSED]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, OpResult, Stat};

    use super::*;
    use crate::monitor::traces::{applied, at, first_broken};
    use zklab_recipes::acl::Acls;

    fn set(path: &str) -> TraceEntry {
        let op = Op::Create {
            path: path.to_owned(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
            acl: Acls::OPEN,
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

    fn first(entries: &[TraceEntry]) -> Option<&'static Property> {
        first_broken(BarrierSafety::new("/b"), entries)
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
        assert_eq!(first(&standing), Some(&BARRIER_PASSED));
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
        assert_eq!(first(&other), Some(&BARRIER_PASSED));
    }

    fn asks(session: SessionId, path: &str) -> TraceEntry {
        let op = Op::Sync {
            path: path.to_owned(),
        };
        at(
            0,
            TraceEvent::Request {
                client: 1,
                session,
                op,
            },
        )
    }

    #[test]
    fn a_follower_s_no_node_counts_only_if_the_barrier_was_down_when_the_waiter_asked() {
        // Asked before the barrier was set: the follower's state may predate the set.
        let early = [
            asks(2, "/b/x"),
            set("/b/x"),
            read(2, "/b/x", false),
            passed(2),
        ];
        assert_eq!(first(&early), None);
        // Asked while it stood: a "no node" is from before the barrier, stale.
        let stale = [
            set("/b/x"),
            asks(2, "/b/x"),
            read(2, "/b/x", false),
            passed(2),
        ];
        assert_eq!(first(&stale), Some(&BARRIER_PASSED));
    }

    #[test]
    fn a_barrier_gone_and_set_again_while_the_waiter_asked_was_down_in_its_wait() {
        let again = [
            set("/b/x"),
            asks(2, "/b/x"),
            removed("/b/x"),
            set("/b/x"),
            read(2, "/b/x", false),
            passed(2),
        ];
        assert_eq!(first(&again), None);
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
