//! Unowned node: a recipe node of a live session that no machine of that session knows it owns.
//!
//! A sequential create whose reply was lost leaves a node only the server knows about. A correct
//! recipe finds it again (by its guid) or deletes it; a broken one forgets it, and the orphan
//! blocks whoever waits behind it until its session ends, which may be never. The node counts as
//! known once its session received the create's reply, or read, deleted or watched it by path.
//! Its time runs only while its creator can hear the server: a client cut off or paused can
//! claim nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::{Op, OpResult, SessionId};
use zklab_sim::fault::FaultKind;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::hearing::Hearing;
use crate::monitor::take_overdue;

/// No unowned node: broken when a recipe node of a live session that no machine of that session
/// knows it owns.
pub static UNOWNED_NODE: Property = Property::new("unowned-node", "no unowned node");

/// The unowned-node monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnownedNode {
    bound: Duration,
    /// Nodes whose creator has not heard of them: since when, whose.
    unknown: BTreeMap<String, (Duration, (ClientId, SessionId))>,
    /// Clients whose process died: none of their nodes can be claimed, and all go when their
    /// sessions expire (a create still on its way when it died too).
    dead: BTreeSet<ClientId>,
    /// When each creator could hear the server.
    hearing: Hearing,
}

impl UnownedNode {
    /// A monitor that reports a node left unknown to its session for longer than `bound`.
    pub fn new(bound: Duration) -> Self {
        UnownedNode {
            bound,
            unknown: BTreeMap::new(),
            dead: BTreeSet::new(),
            hearing: Hearing::default(),
        }
    }
}

impl Monitor for UnownedNode {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.hearing.observe(entry);
        match &entry.event {
            TraceEvent::Applied {
                client,
                session,
                op: Op::Create { mode, .. },
                reply: Ok(OpResult::Created { path, .. }),
                ..
            } if mode.is_sequential() && mode.is_ephemeral() && !self.dead.contains(client) => {
                self.unknown
                    .insert(path.clone(), (entry.at, (*client, *session)));
            }
            TraceEvent::Reply {
                reply: Ok(OpResult::Created { path, .. }),
                ..
            } => {
                self.unknown.remove(path);
            }
            TraceEvent::Applied { session, op, .. } => {
                if let Op::Delete { path, .. }
                | Op::Exists { path, .. }
                | Op::GetData { path, .. }
                | Op::SetData { path, .. } = op
                {
                    let known = self
                        .unknown
                        .get(path)
                        .is_some_and(|(_, (_, owner))| owner == session);
                    if known || matches!(op, Op::Delete { .. }) {
                        self.unknown.remove(path);
                    }
                }
            }
            TraceEvent::SessionEnded { session, .. } => {
                self.unknown.retain(|_, (_, (_, owner))| owner != session);
            }
            // A process that died can claim nothing: its nodes go when its session expires.
            TraceEvent::Fault {
                kind: FaultKind::Crash,
                client,
                ..
            } => {
                self.dead.insert(*client);
                self.unknown
                    .retain(|_, (_, (creator, _))| creator != client);
            }
            _ => {}
        }
        // Most entries come while every node is known: none to age, none to report.
        if self.unknown.is_empty() {
            return None;
        }
        for (since, (client, _)) in self.unknown.values_mut() {
            let hearing = self.hearing.hearing_since(*client, entry.at);
            *since = (*since).max(hearing.unwrap_or(entry.at));
        }
        let (path, waited, (client, session)) =
            take_overdue(&mut self.unknown, entry.at, self.bound)?;
        let message = format!(
            "{path} was created for c{client} (s{session}), whose create reply was lost, and no \
             machine of s{session} has claimed it in {waited:?} of hearing the server: an orphan \
             while its session lives"
        );
        Some(Violation::new(&UNOWNED_NODE, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&UNOWNED_NODE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::{at, crashed};
    use zklab_recipes::acl::Acls;
    use zklab_recipes::client::{CreateMode, Stat, ZkError};

    fn created(ms: u64, path: &str) -> TraceEntry {
        at(
            ms,
            TraceEvent::Applied {
                client: 0,
                session: 1,
                zxid: 5,
                op: Op::Create {
                    path: "/l/g-lock-".to_owned(),
                    data: Vec::new(),
                    mode: CreateMode::EphemeralSequential,
                    acl: Acls::OPEN,
                },
                reply: Ok(OpResult::Created {
                    path: path.to_owned(),
                    stat: Stat::default(),
                }),
            },
        )
    }

    fn lost(ms: u64) -> TraceEntry {
        at(
            ms,
            TraceEvent::Reply {
                client: 0,
                session: 1,
                reply: Err(ZkError::ConnectionLoss),
            },
        )
    }

    fn later(ms: u64) -> TraceEntry {
        at(ms, TraceEvent::Finished { client: 9 })
    }

    #[test]
    fn a_node_whose_create_reply_was_lost_and_never_claimed_is_unowned() {
        let mut monitor = UnownedNode::new(Duration::from_secs(1));
        let path = "/l/g-lock-0000000001";
        assert_eq!(monitor.observe(&created(0, path)), None);
        assert_eq!(monitor.observe(&lost(1)), None);
        assert_eq!(monitor.observe(&later(900)), None);
        let violation = monitor.observe(&later(1100)).expect("an unowned node");
        assert!(violation.message.contains(path), "{}", violation.message);
    }

    #[test]
    fn a_node_adopted_by_its_session_is_owned() {
        let mut monitor = UnownedNode::new(Duration::from_secs(1));
        let path = "/l/g-lock-0000000001";
        let adopt = at(
            200,
            TraceEvent::Applied {
                client: 0,
                session: 1,
                zxid: 6,
                op: Op::Exists {
                    path: path.to_owned(),
                    watch: false,
                },
                reply: Ok(OpResult::Exists(Some(Stat::default()))),
            },
        );
        for entry in [created(0, path), lost(1), adopt, later(5000)] {
            assert_eq!(monitor.observe(&entry), None);
        }
    }

    #[test]
    fn only_the_time_its_creator_can_hear_counts() {
        let paused = at(
            100,
            TraceEvent::Fault {
                kind: FaultKind::Pause,
                client: 0,
                detail: "process paused".to_owned(),
                lasts: Duration::from_millis(3000),
            },
        );
        let path = "/l/g-lock-0000000001";
        let mut monitor = UnownedNode::new(Duration::from_secs(1));
        // Paused until 3.1 s, and hearing again from 5.1 s (its news on the way allowed for).
        for entry in [created(0, path), lost(1), paused, later(3500), later(6000)] {
            assert_eq!(monitor.observe(&entry), None);
        }
        let violation = monitor.observe(&later(6200)).expect("an unowned node");
        assert!(violation.message.contains(path), "{}", violation.message);
    }

    #[test]
    fn the_node_of_a_process_that_died_is_left_to_its_sessions_expiry() {
        let mut monitor = UnownedNode::new(Duration::from_secs(1));
        let crash = |client| at(300, crashed(client));
        let path = "/l/g-lock-0000000001";
        // Another client's death changes nothing.
        for entry in [created(0, path), lost(1), crash(4)] {
            assert_eq!(monitor.observe(&entry), None);
        }
        assert!(monitor.observe(&later(1100)).is_some());
        let mut monitor = UnownedNode::new(Duration::from_secs(1));
        for entry in [created(0, path), lost(1), crash(0), later(5000)] {
            assert_eq!(monitor.observe(&entry), None);
        }
        // A create the server applies after the process died.
        let mut monitor = UnownedNode::new(Duration::from_secs(1));
        for entry in [crash(0), created(400, path), later(5000)] {
            assert_eq!(monitor.observe(&entry), None);
        }
    }
}
