//! Group views: nobody's view of a group holds a dead member, and every live member ends with
//! the group's members.
//!
//! Judged from the server's applied ops and what the clients were told (`Viewed`):
//!
//! - **No ghost.** A member node whose creating session the server ended while the node stayed
//!   (a persistent member node) is a ghost. A client told a view equal to the listing last
//!   served to it, when that listing held a ghost, viewed a dead member.
//! - **Not stale at the end.** A client that finishes as a live member (its session made a
//!   member node that stands) must hold a view equal to the group's members then. A change of
//!   membership less than [`GRACE`] before is not held against it: its news may be on the way.
//!   Nor is a change whose news reached the client (or was made, if no watch told it) while it
//!   could not hear (disconnected, paused or cut off), until [`GRACE`] after it can again: a
//!   lagging follower may hand a watch event to a client paused since the change.
//!
//! A real server's trace has no applied ops: neither rule judges it. The model has no end of a
//! client: there, a watcher that misses a change never reaches its goal, which its "no stuck
//! state" catches.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, OpResult, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::hearing::{Hearing, GRACE};
use crate::monitor::{changes, child_of, Change};

/// No view holds a dead member: broken when a group member's view held a member whose session had
/// ended when it was served.
pub static GROUP_GHOST: Property = Property::new("group-ghost", "no view holds a dead member");

/// Members end with the members' view: broken when a live group member ended with a view other than
/// the group's members.
pub static GROUP_STALE: Property =
    Property::new("group-stale", "members end with the members' view");

/// A session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// A client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Client(#[rename(client)] ClientId);

/// A listing served to a client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Served {
    /// Its members' digest ([`Outcome::digest_names`]).
    #[rename(keep)]
    members: i64,
    /// A ghost it held, if any.
    #[rename(keep)]
    ghost: Option<String>,
}

/// A view a client was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Viewed {
    #[rename(session)]
    session: SessionId,
    #[rename(keep)]
    members: i64,
}

/// The group-views monitor of one group.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct GroupViews {
    #[rename(keep)]
    dir: String,
    /// Each member node standing, by name, and the session that made it.
    #[rename(keep)]
    members: BTreeMap<String, Session>,
    /// Member nodes whose session ended.
    #[rename(keep)]
    ghosts: BTreeSet<String>,
    /// The listing last served to each client.
    served: BTreeMap<Client, Served>,
    /// The view each client was told last.
    views: BTreeMap<Client, Viewed>,
    /// When the membership last changed.
    #[rename(keep)]
    changed_at: Duration,
    /// When each client that has not always heard last received a watch event on the group's
    /// directory.
    #[rename(keep)]
    news_at: BTreeMap<Client, Duration>,
    /// When each client could not hear the server.
    hearing: Hearing,
}

impl GroupViews {
    /// A monitor of the group whose members are the children of `dir`.
    pub fn new(dir: &str) -> Self {
        GroupViews {
            dir: dir.to_owned(),
            members: BTreeMap::new(),
            ghosts: BTreeSet::new(),
            served: BTreeMap::new(),
            views: BTreeMap::new(),
            changed_at: Duration::ZERO,
            news_at: BTreeMap::new(),
            hearing: Hearing::default(),
        }
    }

    /// Takes in an applied op; the membership changed if it made or deleted a member node.
    fn applied(&mut self, client: ClientId, session: SessionId, op: &Op, reply: &OpReply) -> bool {
        if let (Op::GetChildren { path, .. }, Ok(OpResult::Children { children, .. })) = (op, reply)
        {
            if *path == self.dir {
                let ghost = children
                    .iter()
                    .find(|child| self.ghosts.contains(*child))
                    .cloned();
                let members = Outcome::digest_names(children);
                self.served
                    .insert(Client(client), Served { members, ghost });
            }
            return false;
        }
        let mut changed = false;
        for change in changes(op, reply) {
            let (Change::Created { path, .. } | Change::Deleted(path)) = change else {
                continue;
            };
            let Some(name) = child_of(&self.dir, path) else {
                continue;
            };
            self.ghosts.remove(name);
            match change {
                Change::Created { .. } => self.members.insert(name.to_owned(), Session(session)),
                _ => self.members.remove(name),
            };
            changed = true;
        }
        changed
    }

    fn viewed(&mut self, client: ClientId, viewed: Viewed) -> Option<String> {
        self.views.insert(Client(client), viewed);
        let served = self.served.get(&Client(client))?;
        let ghost = served.ghost.as_ref()?;
        (served.members == viewed.members).then(|| {
            format!(
                "c{client}'s view holds {ghost}, whose session had ended when the listing was \
                 served"
            )
        })
    }

    fn finished(&self, client: ClientId, at: Duration) -> Option<String> {
        let view = self.views.get(&Client(client))?;
        let live = self
            .members
            .iter()
            .any(|(name, by)| by.0 == view.session && !self.ghosts.contains(name));
        let names: Vec<String> = self.members.keys().cloned().collect();
        let quiet = at.saturating_sub(self.changed_at) >= GRACE;
        let news_at = self.news_at.get(&Client(client)).copied();
        let sent = news_at.unwrap_or_default().max(self.changed_at);
        let quiet = quiet && !self.hearing.missed(client, sent, at);
        (live && quiet && view.members != Outcome::digest_names(&names)).then(|| {
            format!(
                "c{client} finished a member with a view other than the group's {} members: {}",
                names.len(),
                names.join(", ")
            )
        })
    }
}

impl Monitor for GroupViews {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.hearing.observe(entry);
        let (property, message) = match &entry.event {
            TraceEvent::Applied {
                client,
                session,
                op,
                reply,
                ..
            } => {
                if self.applied(*client, *session, op, reply) {
                    self.changed_at = entry.at;
                }
                return None;
            }
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                for path in deleted {
                    if let Some(name) = child_of(&self.dir, path) {
                        self.members.remove(name);
                        self.changed_at = entry.at;
                    }
                }
                for (name, by) in &self.members {
                    if by.0 == *session {
                        self.ghosts.insert(name.clone());
                    }
                }
                return None;
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome: Outcome::Viewed { members, .. },
            } => {
                let viewed = Viewed {
                    session: *session,
                    members: *members,
                };
                (&GROUP_GHOST, self.viewed(*client, viewed)?)
            }
            // Only a client that has not always heard can have missed news; the model, which
            // tells no hearing, keeps no times in its states.
            TraceEvent::Watch { client, event, .. } if event.path == self.dir => {
                if self.hearing.hearing_since(*client, entry.at) != Some(Duration::ZERO) {
                    self.news_at.insert(Client(*client), entry.at);
                }
                return None;
            }
            TraceEvent::Finished { client } => (&GROUP_STALE, self.finished(*client, entry.at)?),
            _ => return None,
        };
        Some(Violation::new(property, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&GROUP_GHOST, &GROUP_STALE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::{at, created, ended, first_broken, outcome};
    use zklab_recipes::client::{EventType, SessionEvent, Stat, WatchedEvent};

    fn listed(client: ClientId, session: SessionId, names: &[&str]) -> TraceEvent {
        let children: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        TraceEvent::Applied {
            client,
            session,
            zxid: 1,
            op: Op::GetChildren {
                path: "/g".into(),
                watch: true,
            },
            reply: Ok(OpResult::Children {
                children,
                stat: Stat::default(),
            }),
        }
    }

    fn viewed(client: ClientId, session: SessionId, names: &[&str]) -> TraceEvent {
        let names: Vec<String> = names.iter().map(|name| (*name).to_owned()).collect();
        let members = Outcome::digest_names(&names);
        let count = names.len() as i64;
        outcome(client, session, Outcome::Viewed { members, count })
    }

    fn first(entries: Vec<TraceEntry>) -> Option<&'static Property> {
        first_broken(GroupViews::new("/g"), &entries)
    }

    #[test]
    fn a_view_served_after_a_persistent_members_session_ended_holds_a_ghost() {
        let ghost = vec![
            at(0, created(1, 3, "/g/b")),
            at(1, ended(1, 3, &[])),
            at(2, listed(0, 2, &["b"])),
            at(3, viewed(0, 2, &["b"])),
        ];
        assert_eq!(first(ghost), Some(&GROUP_GHOST));
        // An ephemeral member goes with its session: the listing after it is empty.
        let gone = vec![
            at(0, created(1, 3, "/g/b")),
            at(1, listed(0, 2, &["b"])),
            at(2, ended(1, 3, &["/g/b"])),
            at(3, viewed(0, 2, &["b"])),
        ];
        assert_eq!(first(gone), None);
    }

    #[test]
    fn a_member_finishing_with_a_view_older_than_the_members_is_stale_once_quiet() {
        let finished = TraceEvent::Finished { client: 0 };
        let stale = vec![
            at(0, created(0, 2, "/g/a")),
            at(1, listed(0, 2, &["a"])),
            at(2, viewed(0, 2, &["a"])),
            at(3, created(1, 3, "/g/b")),
            at(3_000, finished.clone()),
        ];
        assert_eq!(first(stale), Some(&GROUP_STALE));
        // The change came just before: its news may be on the way.
        let recent = vec![
            at(0, created(0, 2, "/g/a")),
            at(2, viewed(0, 2, &["a"])),
            at(3, created(1, 3, "/g/b")),
            at(500, finished.clone()),
        ];
        assert_eq!(first(recent), None);
        let fresh = vec![
            at(0, created(0, 2, "/g/a")),
            at(3, created(1, 3, "/g/b")),
            at(4, viewed(0, 2, &["b", "a"])),
            at(3_000, finished),
        ];
        assert_eq!(first(fresh), None);
    }

    #[test]
    fn a_change_made_while_a_member_cannot_hear_is_not_held_against_it() {
        let session = |event| TraceEvent::Session {
            client: 0,
            session: 2,
            event,
        };
        let run = |lost_at: u64| {
            vec![
                at(0, created(0, 2, "/g/a")),
                at(1, listed(0, 2, &["a"])),
                at(2, viewed(0, 2, &["a"])),
                at(lost_at, session(SessionEvent::Disconnected)),
                at(10, created(1, 3, "/g/b")),
                at(3_000, TraceEvent::Finished { client: 0 }),
            ]
        };
        assert_eq!(first(run(5)), None);
        // Disconnected only after the change: it was connected when the news was due.
        assert_eq!(first(run(2_000)), Some(&GROUP_STALE));
        // Connected again since: the news reached it.
        let mut again = run(5);
        again.insert(5, at(20, session(SessionEvent::SyncConnected)));
        assert_eq!(first(again), Some(&GROUP_STALE));
        // Cut off before it noticed: a partition that outlasts the run.
        let mut cut = run(2_000);
        let partition = TraceEvent::Fault {
            kind: zklab_sim::fault::FaultKind::Partition,
            client: 0,
            detail: String::new(),
            lasts: Duration::from_secs(10),
        };
        cut.insert(3, at(5, partition));
        assert_eq!(first(cut), None);
    }

    #[test]
    fn news_a_lagging_follower_handed_to_a_paused_member_is_not_held_against_it() {
        let pause = TraceEvent::Fault {
            kind: zklab_sim::fault::FaultKind::Pause,
            client: 0,
            detail: String::new(),
            lasts: Duration::from_secs(3),
        };
        let told = TraceEvent::Watch {
            client: 0,
            session: 2,
            event: WatchedEvent {
                event_type: EventType::NodeChildrenChanged,
                path: "/g".into(),
            },
            zxid: 4,
            cause: "/g/b".into(),
            deletion: false,
        };
        let run = |told_at: Option<u64>| {
            let mut entries = vec![
                at(0, created(0, 2, "/g/a")),
                at(1, listed(0, 2, &["a"])),
                at(2, viewed(0, 2, &["a"])),
                at(10, created(1, 3, "/g/b")),
                at(400, pause.clone()),
                at(3_000, TraceEvent::Finished { client: 0 }),
            ];
            entries.extend(told_at.map(|ms| at(ms, told.clone())));
            entries.sort_by_key(|entry| entry.at);
            entries
        };
        // Told 600 ms after the change, 200 ms into its pause: it could not act on it yet.
        assert_eq!(first(run(Some(600))), None);
        // Told before the pause: it could have listed again.
        assert_eq!(first(run(Some(100))), Some(&GROUP_STALE));
        // Never told, and the change came before the pause.
        assert_eq!(first(run(None)), Some(&GROUP_STALE));
    }
}
