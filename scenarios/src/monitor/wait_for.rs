//! No wait-for cycle: when a session leaves an `exists` watch on a node another session owns, it
//! waits for that session; if the chain of owners and their own waits leads back to it, nobody
//! can move until a session ends. This is the deadlock a lost create reply causes in a recipe
//! that does not look for its own node: the orphan blocks its own creator.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpResult, SessionId};
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::{changes, Change};

/// No deadlock: broken when every task was blocked with no event to wake any of them.
pub static DEADLOCK: Property = Property::new("deadlock", "no deadlock");

/// One link of a wait-for chain: the waiting session, the node it watches, the node's owner.
type WaitLink<'a> = (SessionId, &'a str, SessionId);

/// The wait-for-cycle monitor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct WaitFor {
    /// Who owns each ephemeral node.
    owners: BTreeMap<String, SessionId>,
    /// The nodes each session watches with `exists`.
    waits: BTreeMap<SessionId, BTreeSet<String>>,
}

impl WaitFor {
    /// A node is gone: nobody owns it and nobody waits for it any more.
    fn forget(&mut self, path: &str) {
        self.owners.remove(path);
        for waited in self.waits.values_mut() {
            waited.remove(path);
        }
    }

    /// The chain `s1 waits for path (s2) -> ...` that leads from `start` back to it, if any.
    fn cycle_through(&self, start: SessionId) -> Option<Vec<String>> {
        // Links stay (waiter, node, owner) triples; only a cycle, which ends the run, is put
        // into words. The monitor walks this chain for every new watch, so it is kept cheap.
        let mut stack: Vec<(SessionId, Vec<WaitLink>)> = vec![(start, Vec::new())];
        let mut seen = BTreeSet::new();
        while let Some((session, chain)) = stack.pop() {
            for path in self.waits.get(&session).into_iter().flatten() {
                let Some(&owner) = self.owners.get(path) else {
                    continue;
                };
                let mut chain = chain.clone();
                chain.push((session, path, owner));
                if owner == start {
                    let words = chain.iter().map(|(waiter, path, owner)| {
                        format!("s{waiter} waits for {path} (owned by s{owner})")
                    });
                    return Some(words.collect());
                }
                if seen.insert(owner) {
                    stack.push((owner, chain));
                }
            }
        }
        None
    }
}

impl Monitor for WaitFor {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => match (op, reply) {
                (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_)))) => {
                    self.waits.entry(*session).or_default().insert(path.clone());
                    let cycle = self.cycle_through(*session)?;
                    let message =
                        format!("wait-for cycle, nobody can proceed: {}", cycle.join(" -> "));
                    return Some(Violation::new(&DEADLOCK, entry.at, message));
                }
                (op, reply) => {
                    for change in changes(op, reply) {
                        match change {
                            Change::Created { path, mode, .. } if mode.is_ephemeral() => {
                                self.owners.insert(path.to_owned(), *session);
                            }
                            Change::Deleted(path) => self.forget(path),
                            Change::Created { .. } | Change::Set { .. } => {}
                        }
                    }
                }
            },
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                self.waits.remove(session);
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

    #[test]
    fn a_session_waiting_for_its_own_node_is_a_deadlock() {
        let t = trace(vec![
            created(0, 1, "/l/a-1"),
            created(0, 1, "/l/a-2"),
            watches(0, 1, "/l/a-1"),
        ]);
        assert_eq!(
            WaitFor::default().first_in(&t).map(|v| v.property),
            Some(&DEADLOCK)
        );
    }

    #[test]
    fn a_chain_of_waiters_is_no_deadlock_but_a_cycle_is() {
        let chain = vec![
            created(0, 1, "/l/a-1"),
            created(1, 2, "/l/b-2"),
            created(2, 3, "/l/c-3"),
            watches(1, 2, "/l/a-1"),
            watches(2, 3, "/l/b-2"),
        ];
        assert_eq!(WaitFor::default().first_in(&trace(chain.clone())), None);
        let mut cycle = chain;
        cycle.push(watches(0, 1, "/l/c-3"));
        let violation = WaitFor::default().first_in(&trace(cycle)).expect("a cycle");
        assert!(
            violation
                .message
                .contains("s1 waits for /l/c-3 (owned by s3)"),
            "{}",
            violation.message
        );
    }

    #[test]
    fn a_deleted_node_or_ended_session_breaks_the_wait() {
        let t = trace(vec![
            created(0, 1, "/l/a-1"),
            created(1, 2, "/l/b-2"),
            watches(1, 2, "/l/a-1"),
            ended(0, 1, &["/l/a-1"]),
            created(0, 3, "/l/a-3"),
            watches(0, 3, "/l/b-2"),
        ]);
        assert_eq!(WaitFor::default().first_in(&t), None);
    }
}
