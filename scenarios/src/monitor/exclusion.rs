//! Mutual exclusion: among clients whose session is live on the server, a client that holds a
//! granted role (a lock, leadership, a write lock) holds it alone, while roles granted shared
//! (read locks, a semaphore's leases) may be held together, up to a limit if there is one.
//!
//! A holder stops counting when it loses the role, lets go of it, or its session ends; a
//! suspended holder still counts (its node is still there: nobody else may be granted the role).
//! A paused holder whose session expired no longer counts: only its fencing token protects what
//! it writes then. Nor does a holder about to be forced out of a revocable lock (its token is
//! fenced first), even if it resumes before it learns it.
//!
//! Each role is judged on its own, since recipes sharing a session may hold a lock and
//! leadership at once; the read and the write side of a lock are one lock.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

/// Mutual exclusion: broken when two clients held the lock at once, both with live sessions.
pub static MUTUAL_EXCLUSION: Property = Property::new("mutual-exclusion", "mutual exclusion");

/// The mutual-exclusion monitor. It names holders by session only (the trace says which client
/// has which), so a model checker can rename its state like any other.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct MutualExclusion {
    /// The live sessions in which a client holds a role, by what it holds, and the role's name.
    /// (Nothing is kept that the state of the world does not determine: a model checker carries
    /// this.)
    holders: BTreeMap<Holder, Held>,
    /// Sessions the server has ended.
    #[rename(session)]
    dead: BTreeSet<SessionId>,
    /// How many may hold a role granted shared at once, if not any number.
    sharing: Option<usize>,
    /// Sessions forced out of what they held, which they may not know yet.
    #[rename(session)]
    forced: BTreeSet<SessionId>,
    /// The tokens of holders forced out: a grant with one comes too late to count.
    #[rename(keep)]
    forced_tokens: BTreeSet<i64>,
}

/// What a holder holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Held {
    /// The role's name.
    role: &'static str,
    /// Held shared.
    shared: bool,
    /// Its fencing token.
    #[rename(keep)]
    token: i64,
}

/// A session that holds a role of what its second field names: one session may hold a lock and
/// leadership at once, each by a recipe of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Holder(#[rename(session)] SessionId, #[rename(keep)] &'static str);

/// What a role is a side of: the read and the write side of a lock are one lock, whose sides
/// exclude each other; other roles are each their own.
fn resource(role: &'static str) -> &'static str {
    role.strip_prefix("read ")
        .or_else(|| role.strip_prefix("write "))
        .unwrap_or(role)
}

impl MutualExclusion {
    /// A monitor under which at most `limit` may hold a role granted shared at once (a
    /// semaphore of `limit` leases).
    pub fn shared_by_at_most(limit: usize) -> Self {
        MutualExclusion {
            sharing: Some(limit),
            ..MutualExclusion::default()
        }
    }
}

impl Monitor for MutualExclusion {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Outcome {
                session, outcome, ..
            } => match outcome {
                Outcome::Granted { role, token } | Outcome::Shared { role, token } => {
                    let shared = matches!(outcome, Outcome::Shared { .. });
                    self.forced.remove(session);
                    if self.forced_tokens.contains(token) {
                        self.forced.insert(*session);
                    }
                    let held = Held {
                        role,
                        shared,
                        token: *token,
                    };
                    // A session that has ended or was forced out holds nothing, whatever its
                    // client was told.
                    let holder = Holder(*session, resource(role));
                    if self.dead.contains(session) || self.forced.contains(session) {
                        self.holders.remove(&holder);
                    } else {
                        self.holders.insert(holder, held);
                    }
                }
                Outcome::Resumed if self.forced.contains(session) => self.let_go(*session),
                Outcome::Forcing { token } => {
                    self.forced_tokens.insert(*token);
                    let forced = self.holders.iter().find(|(_, held)| held.token == *token);
                    if let Some((&holder, _)) = forced {
                        self.forced.insert(holder.0);
                        self.holders.remove(&holder);
                    }
                }
                Outcome::Released { role } | Outcome::Revoked { role } => {
                    self.forced.remove(session);
                    self.holders.remove(&Holder(*session, resource(role)));
                }
                Outcome::Lost | Outcome::Failed(_) => {
                    self.forced.remove(session);
                    self.let_go(*session);
                }
                // A suspended holder still holds; gates and transactions are no roles.
                _ => {}
            },
            TraceEvent::SessionEnded { session, .. } => {
                self.dead.insert(*session);
                self.forced.remove(session);
                self.let_go(*session);
            }
            _ => return None,
        }
        let resources: BTreeSet<&str> = self.holders.keys().map(|holder| holder.1).collect();
        resources
            .into_iter()
            .find_map(|resource| self.overheld(resource, entry))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&MUTUAL_EXCLUSION]
    }
}

impl MutualExclusion {
    /// The session holds nothing any more.
    fn let_go(&mut self, session: SessionId) {
        self.holders.retain(|holder, _| holder.0 != session);
    }

    /// A violation if more hold `resource` at once than may.
    fn overheld(&self, resource: &str, entry: &TraceEntry) -> Option<Violation> {
        let holders: Vec<(&Holder, &Held)> = self
            .holders
            .iter()
            .filter(|(holder, _)| holder.1 == resource)
            .collect();
        let shared = holders.iter().all(|(_, held)| held.shared);
        let limit = if shared { self.sharing } else { Some(1) };
        if limit.is_none_or(|limit| holders.len() <= limit) {
            return None;
        }
        let roles: BTreeSet<&str> = holders.iter().map(|(_, held)| held.role).collect();
        let names: Vec<String> = holders
            .iter()
            .map(|(holder, held)| match roles.len() {
                1 => format!("s{}", holder.0),
                _ => format!("s{} ({})", holder.0, held.role),
            })
            .collect();
        let what = match roles.iter().next() {
            Some(role) if roles.len() == 1 => format!("the {role}"),
            _ => format!("the {resource}"),
        };
        let message = format!(
            "{} hold {what} at once, all with live sessions",
            names.join(" and ")
        );
        Some(Violation::new(&MUTUAL_EXCLUSION, entry.at, message))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zklab_sim::trace::Trace;

    use super::*;
    use crate::monitor::traces::*;

    /// Session 1 is granted the lock, `between` happens, then session 2 is granted it.
    fn granted_around(between: Vec<TraceEvent>) -> Trace {
        let mut events = vec![outcome(0, 1, granted(5))];
        events.extend(between);
        events.push(outcome(1, 2, granted(7)));
        trace(events)
    }

    #[test]
    fn two_live_holders_break_mutual_exclusion() {
        let violation = MutualExclusion::default()
            .first_in(&granted_around(Vec::new()))
            .expect("a violation");
        assert_eq!(violation.property, &MUTUAL_EXCLUSION);
        assert_eq!(violation.at, Duration::from_millis(1));
    }

    #[test]
    fn each_role_is_held_alone_but_a_lock_and_leadership_may_be_held_together() {
        let leadership = |token| Outcome::Granted {
            role: "leadership",
            token,
        };
        let write = |token| Outcome::Granted {
            role: "write lock",
            token,
        };
        let read = |token| Outcome::Shared {
            role: "read lock",
            token,
        };
        let apart = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(1, 2, leadership(6)),
        ]);
        assert_eq!(MutualExclusion::default().first_in(&apart), None);
        let both_lead = trace(vec![
            outcome(0, 1, leadership(5)),
            outcome(1, 2, granted(6)),
            outcome(1, 2, leadership(7)),
        ]);
        let violation = MutualExclusion::default().first_in(&both_lead);
        assert!(violation.is_some_and(|v| v.message.contains("the leadership")));
        let sides = trace(vec![outcome(0, 1, read(5)), outcome(1, 2, write(6))]);
        let violation = MutualExclusion::default().first_in(&sides);
        assert!(violation.is_some_and(|v| v.message.contains("(write lock)")));
    }

    #[test]
    fn a_holder_forced_out_does_not_count_even_once_it_resumes() {
        let t = granted_around(vec![
            outcome(1, 2, Outcome::Forcing { token: 5 }),
            outcome(0, 1, Outcome::Resumed),
        ]);
        assert_eq!(MutualExclusion::default().first_in(&t), None);
    }

    #[test]
    fn a_holder_whose_session_ended_does_not_count() {
        let t = granted_around(vec![ended(0, 1, &[])]);
        assert_eq!(MutualExclusion::default().first_in(&t), None);
    }

    #[test]
    fn a_released_holder_does_not_count_but_a_suspended_one_does() {
        let released = granted_around(vec![outcome(0, 1, Outcome::Released { role: "lock" })]);
        assert_eq!(MutualExclusion::default().first_in(&released), None);
        let suspended = granted_around(vec![outcome(0, 1, Outcome::Suspended)]);
        let violation = MutualExclusion::default()
            .first_in(&suspended)
            .expect("a suspended holder with a live session");
        assert_eq!(violation.at, Duration::from_millis(2));
    }

    #[test]
    fn readers_hold_together_but_never_with_a_writer() {
        let shared = |token| Outcome::Shared {
            role: "read lock",
            token,
        };
        let readers = trace(vec![outcome(0, 1, shared(5)), outcome(1, 2, shared(7))]);
        assert_eq!(MutualExclusion::default().first_in(&readers), None);
        let three = trace(vec![
            outcome(0, 1, shared(5)),
            outcome(1, 2, shared(7)),
            outcome(2, 3, shared(9)),
        ]);
        assert_eq!(MutualExclusion::shared_by_at_most(3).first_in(&three), None);
        let violation = MutualExclusion::shared_by_at_most(2)
            .first_in(&three)
            .expect("three holders of two leases");
        assert_eq!(violation.at, Duration::from_millis(2));
        let writer = trace(vec![outcome(0, 1, shared(5)), outcome(1, 2, granted(7))]);
        let violation = MutualExclusion::default()
            .first_in(&writer)
            .expect("a writer with a reader");
        assert_eq!(violation.property, &MUTUAL_EXCLUSION);
    }
}
