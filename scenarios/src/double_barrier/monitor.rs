//! The double barrier's monitors, judged by the server's applied ops:
//!
//! - [`DoubleBarrierSafety`]: nobody enters before `threshold` participants stood at once, with
//!   no `ready` standing, since its entry began; nobody leaves while one it was inside with is
//!   still inside (a participant whose session ended has left: its node went with it). Those
//!   inside a round are the participants whose nodes stood when its `ready` was made: a node
//!   made after is late, and withdraws without entering.
//!   Participants are counted by the sessions that own a participant node, so one with two
//!   nodes (the second made after a lost create reply) counts once.
//! - [`LeaveHerd`]: the leave wakes one process per deletion, except where every process is
//!   meant to wake: the deletion of the lowest participant node (the flag the others wait on)
//!   and of `ready` (which those waiting to enter the next round wait on).
//!
//! A participant node is any child of the barrier's directory other than `ready`.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::SessionId;
use zklab_recipes::double_barrier::READY;
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::herd::{Herd, HERD};
use crate::monitor::{changes, Change};

/// Double barrier enter: broken when a client entered a double barrier before enough participants
/// were there at once.
pub static ENTERED_EARLY: Property = Property::new("entered-early", "double barrier enter");

/// Double barrier leave: broken when a client left a double barrier while one it was inside with
/// was still inside.
pub static LEFT_EARLY: Property = Property::new("left-early", "double barrier leave");

/// A session, as a key that renaming renames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// The participant nodes that stand, and whether `ready` does, as the applied ops say.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Standing {
    #[rename(keep)]
    dir: String,
    /// Each participant node's owner.
    nodes: BTreeMap<String, Session>,
    ready: bool,
}

impl Standing {
    fn new(dir: &str) -> Self {
        Standing {
            dir: dir.to_owned(),
            nodes: BTreeMap::new(),
            ready: false,
        }
    }

    /// The child name of `path` if it is in the barrier's directory.
    fn child<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.dir.as_str())?.strip_prefix('/')
    }

    /// Whether `path` is in the barrier (the directory or a child).
    fn touches(&self, path: &str) -> bool {
        path == self.dir || self.child(path).is_some()
    }

    /// Takes what an entry changed.
    fn observe(&mut self, event: &TraceEvent) {
        match event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => {
                for change in changes(op, reply) {
                    match change {
                        Change::Created { path, .. } => self.created(path, *session),
                        Change::Deleted(path) => self.deleted(path),
                        Change::Set { .. } => {}
                    }
                }
            }
            TraceEvent::SessionEnded { deleted, .. } => {
                for path in deleted {
                    self.deleted(path);
                }
            }
            _ => {}
        }
    }

    fn created(&mut self, path: &str, owner: SessionId) {
        match self.child(path) {
            Some(READY) => self.ready = true,
            Some(_) => {
                self.nodes.insert(path.to_owned(), Session(owner));
            }
            None => {}
        }
    }

    fn deleted(&mut self, path: &str) {
        match self.child(path) {
            Some(READY) => self.ready = false,
            Some(_) => {
                self.nodes.remove(path);
            }
            None => {}
        }
    }

    /// How many sessions own a participant node.
    fn participants(&self) -> usize {
        self.nodes.values().collect::<BTreeSet<_>>().len()
    }
}

/// Enter and leave safety of one double barrier.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct DoubleBarrierSafety {
    standing: Standing,
    threshold: usize,
    /// Each session on its way in, and whether enough participants stood at once since.
    entering: BTreeMap<Session, bool>,
    /// The participant nodes that stood when the latest `ready` was made and stand still.
    began_with: BTreeSet<String>,
    /// Each session inside, and the participant nodes of its round that stand still.
    inside: BTreeMap<Session, BTreeSet<String>>,
}

impl DoubleBarrierSafety {
    /// A monitor of the double barrier in `dir` whose rounds begin at `threshold` participants.
    pub fn new(dir: &str, threshold: u32) -> Self {
        DoubleBarrierSafety {
            standing: Standing::new(dir),
            threshold: threshold as usize,
            entering: BTreeMap::new(),
            began_with: BTreeSet::new(),
            inside: BTreeMap::new(),
        }
    }

    /// Enough participants stand, with no `ready` of a round before.
    fn gathered(&self) -> bool {
        !self.standing.ready && self.standing.participants() >= self.threshold
    }

    fn violation(
        property: &'static Property,
        entry: &TraceEntry,
        message: String,
    ) -> Option<Violation> {
        Some(Violation::new(property, entry.at, message))
    }
}

impl Monitor for DoubleBarrierSafety {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let was_ready = self.standing.ready;
        self.standing.observe(&entry.event);
        // A participant node's name is sequential, so never stands again once gone: forgetting
        // it changes no verdict, and states that differ only in such history become one.
        let standing = &self.standing.nodes;
        for with in self.inside.values_mut() {
            with.retain(|node| standing.contains_key(node));
        }
        self.began_with.retain(|node| standing.contains_key(node));
        if self.standing.ready && !was_ready {
            self.began_with = standing.keys().cloned().collect();
        }
        if self.gathered() {
            self.entering.values_mut().for_each(|seen| *seen = true);
        }
        let (client, session, outcome) = match &entry.event {
            // A session's entry begins with its first op on the barrier while not inside.
            TraceEvent::Applied { session, op, .. } if self.standing.touches(op.path()) => {
                let session = Session(*session);
                if !self.inside.contains_key(&session) {
                    let gathered = self.gathered();
                    self.entering.entry(session).or_insert(gathered);
                }
                return None;
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome,
            } => (client, Session(*session), outcome),
            _ => return None,
        };
        match outcome {
            Outcome::Entered { gate, round } => {
                let seen = self.entering.remove(&session);
                self.inside.insert(session, self.began_with.clone());
                if seen != Some(false) {
                    return None;
                }
                let message = format!(
                    "c{client} (s{}) entered round {round} of the {gate} before {} participants \
                     stood at once",
                    session.0, self.threshold
                );
                Self::violation(&ENTERED_EARLY, entry, message)
            }
            Outcome::Left { gate } => {
                let with = self.inside.remove(&session)?;
                let still: Vec<&String> = with
                    .iter()
                    .filter(|node| {
                        self.standing
                            .nodes
                            .get(*node)
                            .is_some_and(|owner| *owner != session)
                    })
                    .collect();
                if still.is_empty() {
                    return None;
                }
                let message = format!(
                    "c{client} (s{}) left the {gate} while {} still stood",
                    session.0,
                    still
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                Self::violation(&LEFT_EARLY, entry, message)
            }
            Outcome::Missed { .. } => {
                self.entering.remove(&session);
                None
            }
            Outcome::Lost => {
                self.entering.remove(&session);
                self.inside.remove(&session);
                None
            }
            _ => None,
        }
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&ENTERED_EARLY, &LEFT_EARLY]
    }
}

/// Herd-freedom of a double barrier's leave.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct LeaveHerd {
    standing: Standing,
}

impl LeaveHerd {
    /// A monitor of the double barrier in `dir`.
    pub fn new(dir: &str) -> Self {
        LeaveHerd {
            standing: Standing::new(dir),
        }
    }

    /// Whether the deletion of `path` may wake everyone: `ready`, or a participant node no
    /// standing one is lower than (it is gone already when its deletion is told).
    fn wakes_everyone(&self, path: &str) -> bool {
        match self.standing.child(path) {
            Some(READY) => true,
            Some(name) => {
                let lower = |node: &String| {
                    let other = node.rsplit('/').next().unwrap_or_default();
                    sequence(other) < sequence(name)
                };
                !self.standing.nodes.keys().any(lower)
            }
            None => true,
        }
    }
}

/// The server's sequence number at the end of a sequential node's name (`%010d`).
fn sequence(name: &str) -> Option<i32> {
    name.get(name.len().checked_sub(10)?..)?.parse().ok()
}

impl LeaveHerd {
    /// The sessions the deletion `entry` tells of woke, unless it is one that wakes everyone.
    fn counted_woken(&self, entry: &TraceEntry) -> Option<Vec<SessionId>> {
        let woken = Herd::woken(&entry.event)?;
        let TraceEvent::Notified { cause, .. } = &entry.event else {
            return None;
        };
        (!self.wakes_everyone(cause)).then_some(woken)
    }
}

impl Monitor for LeaveHerd {
    fn herd_count(&self, entry: &TraceEntry) -> Option<usize> {
        self.counted_woken(entry).map(|woken| woken.len())
    }

    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.standing.observe(&entry.event);
        let woken = self.counted_woken(entry)?;
        if woken.len() <= 1 {
            return None;
        }
        Herd::violation(entry, &woken)
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&HERD]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{Op, OpResult};

    use super::*;
    use crate::monitor::traces::{applied, at, created, ended, first_broken, outcome};

    const DIR: &str = "/db";

    fn node(session: SessionId, seq: u32) -> String {
        format!("{DIR}/{session:x}-p-{seq:010}")
    }

    fn looks(session: SessionId) -> TraceEntry {
        let op = Op::Exists {
            path: format!("{DIR}/{READY}"),
            watch: true,
        };
        applied(session, op, OpResult::Exists(None))
    }

    fn joins(session: SessionId, seq: u32) -> TraceEntry {
        at(0, created(0, session, &node(session, seq)))
    }

    fn ready() -> TraceEntry {
        at(0, created(0, 9, &format!("{DIR}/{READY}")))
    }

    fn deletes(session: SessionId, path: &str) -> TraceEntry {
        let op = Op::Delete {
            path: path.to_owned(),
            version: -1,
        };
        applied(session, op, OpResult::Deleted)
    }

    fn told(session: SessionId, said: Outcome) -> TraceEntry {
        at(0, outcome(0, session, said))
    }

    fn entered(session: SessionId) -> TraceEntry {
        told(
            session,
            Outcome::Entered {
                gate: "double barrier",
                round: 0,
            },
        )
    }

    fn left(session: SessionId) -> TraceEntry {
        told(
            session,
            Outcome::Left {
                gate: "double barrier",
            },
        )
    }

    fn first(entries: &[TraceEntry]) -> Option<&'static Property> {
        first_broken(DoubleBarrierSafety::new(DIR, 2), entries)
    }

    /// Sessions 1 and 2 look and join, `ready` is made, then `rest` happens.
    fn two_joined_then(rest: Vec<TraceEntry>) -> Vec<TraceEntry> {
        let mut run = vec![looks(1), joins(1, 1), looks(2), joins(2, 2), ready()];
        run.extend(rest);
        run
    }

    #[test]
    fn entering_once_enough_participants_stood_is_safe() {
        assert_eq!(first(&two_joined_then(vec![entered(1)])), None);
    }

    #[test]
    fn one_participant_with_two_nodes_is_not_two() {
        let run = [looks(1), joins(1, 1), joins(1, 2), ready(), entered(1)];
        assert_eq!(first(&run), Some(&ENTERED_EARLY));
    }

    #[test]
    fn participants_of_a_round_before_do_not_count_while_its_ready_stands() {
        let run = two_joined_then(vec![
            entered(1),
            entered(2),
            // Session 3 comes while they are inside, and enters on their `ready`.
            looks(3),
            joins(3, 3),
            entered(3),
        ]);
        assert_eq!(first(&run), Some(&ENTERED_EARLY));
    }

    #[test]
    fn leaving_while_one_inside_with_it_still_stands_is_a_violation() {
        let inside = two_joined_then(vec![entered(1)]);
        let early = [&inside[..], &[deletes(1, &node(1, 1)), left(1)]].concat();
        assert_eq!(first(&early), Some(&LEFT_EARLY));
        let together = [
            &inside[..],
            &[deletes(1, &node(1, 1)), deletes(2, &node(2, 2)), left(1)],
        ]
        .concat();
        assert_eq!(first(&together), None);
        // The other's session ended: its node went with it, and it has left.
        let failed = [
            &inside[..],
            &[
                at(0, ended(0, 2, &[&node(2, 2)])),
                deletes(1, &node(1, 1)),
                left(1),
            ],
        ]
        .concat();
        assert_eq!(first(&failed), None);
    }

    #[test]
    fn a_node_made_after_the_round_began_is_not_inside_it() {
        let run = two_joined_then(vec![
            // Session 3 comes late: its node is made after `ready`, and it withdraws.
            looks(3),
            joins(3, 3),
            entered(1),
            entered(2),
            deletes(1, &node(1, 1)),
            deletes(2, &node(2, 2)),
            left(1),
        ]);
        assert_eq!(first(&run), None);
    }

    fn woke(cause: &str, sessions: &[SessionId]) -> TraceEntry {
        at(
            0,
            TraceEvent::Notified {
                by: 9,
                zxid: 1,
                cause: cause.to_owned(),
                deletion: true,
                sessions: sessions.to_vec(),
            },
        )
    }

    #[test]
    fn only_the_lowest_and_ready_may_wake_everyone() {
        let mut herd = LeaveHerd::new(DIR);
        for entry in [joins(1, 1), joins(2, 2), joins(3, 3), ready()] {
            assert_eq!(herd.observe(&entry), None);
        }
        // The highest goes: it may wake the lowest only.
        herd.observe(&deletes(3, &node(3, 3)));
        assert_eq!(herd.observe(&woke(&node(3, 3), &[1])), None);
        let herd_of_two = herd.observe(&woke(&node(3, 3), &[1, 2]));
        assert_eq!(herd_of_two.map(|v| v.property), Some(&HERD));
        // The lowest goes: everyone waiting on it wakes.
        herd.observe(&deletes(1, &node(1, 1)));
        assert_eq!(herd.observe(&woke(&node(1, 1), &[2, 4, 5])), None);
        let path = format!("{DIR}/{READY}");
        herd.observe(&deletes(2, &path));
        assert_eq!(herd.observe(&woke(&path, &[4, 5, 6])), None);
    }
}
