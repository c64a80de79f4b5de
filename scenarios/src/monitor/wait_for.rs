//! No wait-for cycle: a declarer (a recipe's driver, or code of one's own) that declares it
//! awaits a node's deletion waits for whoever owns that node; if the chain of owners and their
//! own declared waits leads back to it, nobody can move until a session ends. A node whose
//! create reply was lost (the connection broke before it came), that its session has not
//! claimed since (by a create, write or delete of its path), and that no code of the session
//! declares it owns, is an orphan: nothing knows to delete it, so only the session's end will, and the client ends
//! its session only when all its code has finished. Waiting for an orphan is waiting for every
//! declarer of its session. This is the deadlock a lost create reply causes in a recipe that
//! does not look for its own node: the orphan blocks its own creator, or a contender behind it
//! whom the creator waits for. A node its session heard it made, and no code declares it
//! owns, belongs to code that declares nothing, which is not judged.
//!
//! Only declared waits and declared owners count (see `zklab_recipes::declaration`): a watch
//! alone says nothing about waiting, so code that declares nothing is never judged here.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpResult, SessionEvent, SessionId};
use zklab_recipes::declaration::Declared;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::{changes, Change};

/// No deadlock: broken when every task was blocked with no event to wake any of them.
pub static DEADLOCK: Property = Property::new("deadlock", "no deadlock");

/// The wait-for-cycle monitor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WaitFor {
    /// The session that owns each live ephemeral node.
    ephemeral: BTreeMap<String, SessionId>,
    /// The live ephemeral nodes whose create reply is on its way to their session.
    unheard: BTreeMap<String, SessionId>,
    /// The live ephemeral nodes whose create reply was lost: the connection broke first.
    orphans: BTreeSet<String>,
    /// What each declarer declared last, and its session.
    declared: BTreeMap<u32, (SessionId, Declared)>,
}

/// Whom a declarer waits for through one node.
enum Blocker {
    /// A declarer that owns the node.
    Declarer(u32),
    /// The session of an orphan: only the session's end deletes it, and the session's client
    /// finishes only when all its code does.
    Session(SessionId),
}

impl WaitFor {
    /// Whom `declarer` waits for: through each node it awaits that still stands, the node's
    /// declared owner in the session that owns it, or else, for an orphan, that session.
    fn blockers(&self, declarer: u32) -> Vec<(&str, Blocker)> {
        let Some((_, declared)) = self.declared.get(&declarer) else {
            return Vec::new();
        };
        let mut blockers = Vec::new();
        for node in &declared.awaits_gone {
            let Some(&owner) = self.ephemeral.get(node) else {
                continue;
            };
            let declared_owner = self.declared.iter().find(|(_, (in_session, owned))| {
                *in_session == owner && owned.owns.iter().any(|owned| owned == node)
            });
            match declared_owner {
                Some((&other, _)) => blockers.push((node.as_str(), Blocker::Declarer(other))),
                None if self.orphans.contains(node) => {
                    blockers.push((node.as_str(), Blocker::Session(owner)));
                }
                None => {}
            }
        }
        blockers
    }

    /// Forgets a node that is gone.
    fn forget(&mut self, path: &str) {
        self.ephemeral.remove(path);
        self.unheard.remove(path);
        self.orphans.remove(path);
    }

    /// The declarers of `session`.
    fn declarers_of(&self, session: SessionId) -> Vec<u32> {
        self.declared
            .iter()
            .filter(|(_, (in_session, _))| *in_session == session)
            .map(|(&declarer, _)| declarer)
            .collect()
    }

    /// The chain `#1 (s1) waits for path (owned by #2 (s2)) -> ...` that leads from `start`
    /// back to it.
    fn cycle_through(&self, start: u32) -> Option<Vec<String>> {
        let name = |declarer: u32| {
            let session = self
                .declared
                .get(&declarer)
                .map_or(0, |(session, _)| *session);
            format!("#{declarer} (s{session})")
        };
        let mut stack: Vec<(u32, Vec<String>)> = vec![(start, Vec::new())];
        let mut seen = vec![start];
        while let Some((declarer, chain)) = stack.pop() {
            for (node, blocker) in self.blockers(declarer) {
                let (link, next) = match blocker {
                    Blocker::Declarer(owner) => (
                        format!(
                            "{} waits for {node} (owned by {})",
                            name(declarer),
                            name(owner)
                        ),
                        vec![owner],
                    ),
                    Blocker::Session(session) => (
                        format!(
                            "{} waits for {node}, an orphan of s{session} (its create reply was \
                             lost, and none of its code owns it), which stays until s{session} ends",
                            name(declarer)
                        ),
                        self.declarers_of(session),
                    ),
                };
                for owner in next {
                    let mut chain = chain.clone();
                    chain.push(link.clone());
                    if owner == start {
                        return Some(chain);
                    }
                    if !seen.contains(&owner) {
                        seen.push(owner);
                        stack.push((owner, chain));
                    }
                }
            }
        }
        None
    }
}

impl Monitor for WaitFor {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Declared {
                session,
                declarer,
                declared,
                ..
            } => {
                self.declared
                    .insert(*declarer, (*session, declared.clone()));
                let cycle = self.cycle_through(*declarer)?;
                let message = format!("wait-for cycle, nobody can proceed: {}", cycle.join(" -> "));
                return Some(Violation::new(&DEADLOCK, entry.at, message));
            }
            TraceEvent::Applied {
                session, op, reply, ..
            } => {
                // Its session makes (NodeExists), writes or deletes it by its path: its code
                // knows the node for its own after all. A read says only that it is there.
                let adopts = matches!(
                    op,
                    Op::Create { .. } | Op::SetData { .. } | Op::Delete { .. }
                );
                if adopts && self.ephemeral.get(op.path()) == Some(session) {
                    self.orphans.remove(op.path());
                }
                for change in changes(op, reply) {
                    match change {
                        Change::Created { path, mode, .. } if mode.is_ephemeral() => {
                            self.ephemeral.insert(path.to_owned(), *session);
                            self.unheard.insert(path.to_owned(), *session);
                        }
                        Change::Deleted(path) => self.forget(path),
                        Change::Created { .. } | Change::Set { .. } => {}
                    }
                }
            }
            TraceEvent::Reply {
                reply: Ok(OpResult::Created { path, .. }),
                ..
            } => {
                self.unheard.remove(path);
            }
            TraceEvent::Session {
                session,
                event: SessionEvent::Disconnected,
                ..
            } => {
                let lost = self.unheard.iter().filter(|(_, owner)| *owner == session);
                self.orphans.extend(lost.map(|(path, _)| path.clone()));
                self.unheard.retain(|_, owner| owner != session);
            }
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                self.declared
                    .retain(|_, (in_session, _)| in_session != session);
                for path in deleted {
                    self.forget(path);
                }
            }
            _ => {}
        }
        None
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&DEADLOCK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::*;
    use zklab_recipes::acl::Acls;
    use zklab_recipes::client::{CreateMode, ZkError};
    use zklab_sim::trace::ClientId;

    fn declares(session: SessionId, declarer: u32, owns: &[&str], awaits: &[&str]) -> TraceEvent {
        let paths = |paths: &[&str]| paths.iter().map(|path| (*path).to_owned()).collect();
        TraceEvent::Declared {
            client: 0,
            session,
            declarer,
            declared: Declared {
                owns: paths(owns),
                awaits_gone: paths(awaits),
            },
        }
    }

    /// `session`'s connection broke: the replies on their way are lost.
    fn broke(client: ClientId, session: SessionId) -> TraceEvent {
        TraceEvent::Session {
            client,
            session,
            event: SessionEvent::Disconnected,
        }
    }

    /// `session`'s create of `path` was answered.
    fn heard(client: ClientId, session: SessionId, path: &str) -> TraceEvent {
        TraceEvent::Reply {
            client,
            session,
            reply: Ok(OpResult::Created {
                path: path.to_owned(),
                stat: Default::default(),
            }),
        }
    }

    #[test]
    fn waiting_for_an_orphan_of_ones_own_session_is_a_deadlock() {
        let t = trace(vec![
            created(0, 1, "/l/a-1"),
            broke(0, 1),
            created(0, 1, "/l/a-2"),
            heard(0, 1, "/l/a-2"),
            declares(1, 1, &["/l/a-2"], &["/l/a-1"]),
        ]);
        let violation = WaitFor::default().first_in(&t).expect("a deadlock");
        assert!(
            violation.message.contains("none of its code owns"),
            "{}",
            violation.message
        );
        // Its reply heard or still on its way, or the node claimed by its session since, it is
        // its session's code's, though that code declares nothing: not judged.
        let claimed = TraceEvent::Applied {
            client: 0,
            session: 1,
            zxid: 2,
            op: Op::Create {
                path: "/l/a-1".to_owned(),
                data: Vec::new(),
                mode: CreateMode::Ephemeral,
                acl: Acls::OPEN,
            },
            reply: Err(ZkError::NodeExists),
        };
        for story in [
            vec![created(0, 1, "/l/a-1"), heard(0, 1, "/l/a-1"), broke(0, 1)],
            vec![created(0, 1, "/l/a-1")],
            vec![created(0, 1, "/l/a-1"), broke(0, 1), claimed],
        ] {
            let mut t = story;
            t.push(created(0, 1, "/l/a-2"));
            t.push(declares(1, 1, &["/l/a-2"], &["/l/a-1"]));
            assert_eq!(WaitFor::default().first_in(&trace(t)), None);
        }
    }

    #[test]
    fn an_orphan_blocks_whoever_its_creator_waits_behind() {
        // s1's first create lost its reply: /l/a-1 is an orphan, and s1 retried as /l/a-3.
        let setup = vec![
            created(0, 1, "/l/a-1"),
            broke(0, 1),
            created(1, 2, "/l/b-2"),
            created(0, 1, "/l/a-3"),
            declares(2, 2, &["/l/b-2"], &["/l/a-1"]),
        ];
        assert_eq!(WaitFor::default().first_in(&trace(setup.clone())), None);
        let mut stuck = setup;
        stuck.push(declares(1, 1, &["/l/a-3"], &["/l/b-2"]));
        let violation = WaitFor::default()
            .first_in(&trace(stuck))
            .expect("a deadlock");
        assert!(
            violation
                .message
                .contains("#2 (s2) waits for /l/a-1, an orphan of s1"),
            "{}",
            violation.message
        );
    }

    #[test]
    fn a_watch_on_ones_own_node_declares_nothing_and_is_no_deadlock() {
        // A leader flag that checks whether the node it found is its own.
        let t = trace(vec![
            created(0, 1, "/app/leader"),
            watches(0, 1, "/app/leader"),
        ]);
        assert_eq!(WaitFor::default().first_in(&t), None);
        // Two recipes on one session: one owns the node the other waits behind.
        let t = trace(vec![
            created(0, 1, "/l/a-1"),
            declares(1, 1, &["/l/a-1"], &[]),
            created(0, 1, "/l/a-2"),
            declares(1, 2, &["/l/a-2"], &["/l/a-1"]),
        ]);
        assert_eq!(WaitFor::default().first_in(&t), None);
    }

    #[test]
    fn a_chain_of_waiters_is_no_deadlock_but_a_cycle_is() {
        let chain = vec![
            created(0, 1, "/l/a-1"),
            created(1, 2, "/l/b-2"),
            created(2, 3, "/l/c-3"),
            declares(1, 1, &["/l/a-1"], &[]),
            declares(2, 2, &["/l/b-2"], &["/l/a-1"]),
            declares(3, 3, &["/l/c-3"], &["/l/b-2"]),
        ];
        assert_eq!(WaitFor::default().first_in(&trace(chain.clone())), None);
        let mut cycle = chain;
        cycle.push(declares(1, 1, &["/l/a-1"], &["/l/c-3"]));
        let violation = WaitFor::default().first_in(&trace(cycle)).expect("a cycle");
        assert!(
            violation
                .message
                .contains("#1 (s1) waits for /l/c-3 (owned by #3 (s3))"),
            "{}",
            violation.message
        );
    }

    #[test]
    fn a_deleted_node_or_ended_session_breaks_the_wait() {
        let t = trace(vec![
            created(0, 1, "/l/a-1"),
            created(1, 2, "/l/b-2"),
            declares(1, 1, &["/l/a-1"], &[]),
            declares(2, 2, &["/l/b-2"], &["/l/a-1"]),
            ended(0, 1, &["/l/a-1"]),
            created(0, 3, "/l/a-3"),
            declares(3, 3, &["/l/a-3"], &["/l/b-2"]),
        ]);
        assert_eq!(WaitFor::default().first_in(&t), None);
    }
}
