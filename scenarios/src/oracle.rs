//! Oracles: invariant monitors that judge a run by reading its trace, and nothing else. The same
//! oracle can judge a simulated run, a model counterexample or a run against a real server.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpResult, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_sim::trace::{ClientId, Trace, TraceEvent};

pub use zklab_sim::monitor::{Violation, ViolationKind};

/// At most one client holds a granted role (a lock, leadership) among those whose session is
/// live on the server. A holder stops counting when it loses the role, lets go of it, or its
/// session ends; a suspended holder still counts (its node is still there: nobody else may be
/// granted the role).
pub fn mutual_exclusion(trace: &Trace) -> Option<Violation> {
    let mut holders: BTreeMap<ClientId, SessionId> = BTreeMap::new();
    let mut dead: BTreeSet<SessionId> = BTreeSet::new();
    let mut held = "the role";
    for entry in trace.entries() {
        match &entry.event {
            TraceEvent::Outcome {
                client,
                session,
                outcome,
            } => match outcome {
                Outcome::Granted { role, .. } => {
                    held = role;
                    holders.insert(*client, *session);
                }
                Outcome::Resumed => {
                    holders.insert(*client, *session);
                }
                Outcome::Suspended => {}
                Outcome::Lost | Outcome::Released { .. } | Outcome::Failed(_) => {
                    holders.remove(client);
                }
            },
            TraceEvent::SessionEnded { session, .. } => {
                dead.insert(*session);
            }
            _ => continue,
        }
        let live: Vec<String> = holders
            .iter()
            .filter(|(_, session)| !dead.contains(session))
            .map(|(client, session)| format!("c{client} (s{session})"))
            .collect();
        if live.len() > 1 {
            let message = format!(
                "{} hold the {held} at once, all with live sessions",
                live.join(" and ")
            );
            return Some(Violation {
                kind: ViolationKind::MutualExclusion,
                at: entry.at,
                message,
            });
        }
    }
    None
}

/// The protected resource never accepts a token lower than the newest one granted.
pub fn fencing(trace: &Trace) -> Option<Violation> {
    let mut newest = i64::MIN;
    for entry in trace.entries() {
        match &entry.event {
            TraceEvent::Outcome {
                outcome: Outcome::Granted { token, .. },
                ..
            } => newest = newest.max(*token),
            TraceEvent::Resource {
                client,
                token,
                accepted: true,
            } if *token < newest => {
                let message =
                    format!("c{client}'s token {token} accepted after token {newest} was granted");
                return Some(Violation {
                    kind: ViolationKind::StaleToken,
                    at: entry.at,
                    message,
                });
            }
            _ => {}
        }
    }
    None
}

/// The most sessions any one deletion woke, and the first deletion that woke more than `limit`.
pub fn herd(trace: &Trace, limit: usize) -> (usize, Option<Violation>) {
    let mut woken: BTreeMap<(i64, &str), BTreeSet<SessionId>> = BTreeMap::new();
    let mut most = 0;
    let mut violation = None;
    for entry in trace.entries() {
        let TraceEvent::Watch {
            session,
            zxid,
            cause,
            deletion: true,
            ..
        } = &entry.event
        else {
            continue;
        };
        let sessions = woken.entry((*zxid, cause.as_str())).or_default();
        sessions.insert(*session);
        most = most.max(sessions.len());
        if sessions.len() > limit && violation.is_none() {
            let list: Vec<String> = sessions.iter().map(|s| format!("s{s}")).collect();
            let message = format!(
                "deleting {cause} (zxid {zxid}) woke {} sessions: {}",
                list.len(),
                list.join(", ")
            );
            violation = Some(Violation {
                kind: ViolationKind::Herd,
                at: entry.at,
                message,
            });
        }
    }
    (most, violation)
}

/// No recipe reported an error it could not handle.
pub fn no_failures(trace: &Trace) -> Option<Violation> {
    trace.entries().iter().find_map(|entry| match &entry.event {
        TraceEvent::Outcome {
            client,
            session,
            outcome: Outcome::Failed(error),
        } => Some(Violation {
            kind: ViolationKind::RecipeFailed,
            at: entry.at,
            message: format!("c{client} (s{session}) gave up on {error:?}"),
        }),
        _ => None,
    })
}

/// No wait-for cycle: when a session leaves an `exists` watch on a node another session owns, it
/// waits for that session; if the chain of owners and their own waits leads back to it, nobody
/// can move until a session ends. This is the deadlock a lost create reply causes in a recipe
/// that does not look for its own node: the orphan blocks its own creator.
pub fn wait_for_cycle(trace: &Trace) -> Option<Violation> {
    let mut owners: BTreeMap<&str, SessionId> = BTreeMap::new();
    let mut waits: BTreeMap<SessionId, BTreeSet<&str>> = BTreeMap::new();
    for entry in trace.entries() {
        match &entry.event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => match (op, reply) {
                (Op::Create { mode, .. }, Ok(OpResult::Created { path, .. }))
                    if mode.is_ephemeral() =>
                {
                    owners.insert(path, *session);
                }
                (Op::Delete { path, .. }, Ok(OpResult::Deleted)) => {
                    forget(path, &mut owners, &mut waits)
                }
                (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_)))) => {
                    waits.entry(*session).or_default().insert(path);
                    if let Some(cycle) = cycle_through(*session, &owners, &waits) {
                        let message =
                            format!("wait-for cycle, nobody can proceed: {}", cycle.join(" -> "));
                        return Some(Violation {
                            kind: ViolationKind::Deadlock,
                            at: entry.at,
                            message,
                        });
                    }
                }
                _ => {}
            },
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                waits.remove(session);
                for path in deleted {
                    forget(path, &mut owners, &mut waits);
                }
            }
            _ => {}
        }
    }
    None
}

/// A node is gone: nobody owns it and nobody waits for it any more.
fn forget(
    path: &str,
    owners: &mut BTreeMap<&str, SessionId>,
    waits: &mut BTreeMap<SessionId, BTreeSet<&str>>,
) {
    owners.remove(path);
    for waited in waits.values_mut() {
        waited.remove(path);
    }
}

/// One link of a wait-for chain: the waiting session, the node it watches, the node's owner.
type WaitLink<'a> = (SessionId, &'a str, SessionId);

/// The chain `s1 waits for path (s2) -> ...` that leads from `start` back to it, if any.
fn cycle_through(
    start: SessionId,
    owners: &BTreeMap<&str, SessionId>,
    waits: &BTreeMap<SessionId, BTreeSet<&str>>,
) -> Option<Vec<String>> {
    // Links stay (waiter, node, owner) triples; only a cycle, which ends the run, is put into
    // words. The oracle walks this chain for every new watch, so it is kept cheap.
    let mut stack: Vec<(SessionId, Vec<WaitLink>)> = vec![(start, Vec::new())];
    let mut seen = BTreeSet::new();
    while let Some((session, chain)) = stack.pop() {
        for &path in waits.get(&session).into_iter().flatten() {
            let Some(&owner) = owners.get(path) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use zklab_recipes::client::{CreateMode, EventType, Stat, WatchedEvent};

    fn trace(events: Vec<TraceEvent>) -> Trace {
        let mut trace = Trace::new();
        for (i, event) in events.into_iter().enumerate() {
            trace.push(Duration::from_millis(i as u64), event);
        }
        trace
    }

    fn outcome(client: ClientId, session: SessionId, outcome: Outcome) -> TraceEvent {
        TraceEvent::Outcome {
            client,
            session,
            outcome,
        }
    }

    fn granted(token: i64) -> Outcome {
        Outcome::Granted {
            role: "lock",
            token,
        }
    }

    fn ended(client: ClientId, session: SessionId, deleted: &[&str]) -> TraceEvent {
        let deleted = deleted.iter().map(|p| p.to_string()).collect();
        TraceEvent::SessionEnded {
            client,
            session,
            expired: true,
            deleted,
        }
    }

    fn created(client: ClientId, session: SessionId, path: &str) -> TraceEvent {
        let op = Op::Create {
            path: path.to_owned(),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        };
        let reply = Ok(OpResult::Created {
            path: path.to_owned(),
            stat: Stat::default(),
        });
        TraceEvent::Applied {
            client,
            session,
            zxid: 1,
            op,
            reply,
        }
    }

    fn watches(client: ClientId, session: SessionId, path: &str) -> TraceEvent {
        let op = Op::Exists {
            path: path.to_owned(),
            watch: true,
        };
        TraceEvent::Applied {
            client,
            session,
            zxid: 1,
            op,
            reply: Ok(OpResult::Exists(Some(Stat::default()))),
        }
    }

    #[test]
    fn two_live_holders_break_mutual_exclusion() {
        let t = trace(vec![outcome(0, 1, granted(5)), outcome(1, 2, granted(7))]);
        let violation = mutual_exclusion(&t).expect("a violation");
        assert_eq!(violation.kind, ViolationKind::MutualExclusion);
        assert_eq!(violation.at, Duration::from_millis(1));
    }

    #[test]
    fn a_holder_whose_session_ended_does_not_count() {
        let t = trace(vec![
            outcome(0, 1, granted(5)),
            ended(0, 1, &[]),
            outcome(1, 2, granted(7)),
        ]);
        assert_eq!(mutual_exclusion(&t), None);
    }

    #[test]
    fn a_released_holder_does_not_count_but_a_suspended_one_does() {
        let released = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(0, 1, Outcome::Released { role: "lock" }),
            outcome(1, 2, granted(7)),
        ]);
        assert_eq!(mutual_exclusion(&released), None);
        let suspended = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(0, 1, Outcome::Suspended),
            outcome(1, 2, granted(7)),
        ]);
        let violation =
            mutual_exclusion(&suspended).expect("a suspended holder with a live session");
        assert_eq!(violation.at, Duration::from_millis(2));
    }

    #[test]
    fn an_accepted_token_older_than_the_newest_grant_is_stale() {
        // Two grants, then the older holder writes with its token and the resource decides.
        let late_write = |accepted| {
            trace(vec![
                outcome(0, 1, granted(5)),
                outcome(1, 2, granted(7)),
                TraceEvent::Resource {
                    client: 0,
                    token: 5,
                    accepted,
                },
            ])
        };
        assert_eq!(fencing(&late_write(false)), None);
        let t = late_write(true);
        assert_eq!(fencing(&t).map(|v| v.kind), Some(ViolationKind::StaleToken));
    }

    #[test]
    fn one_deletion_waking_two_sessions_is_a_herd() {
        let watch = |session, event_type, deletion| TraceEvent::Watch {
            client: 0,
            session,
            event: WatchedEvent {
                event_type,
                path: "/l".to_owned(),
            },
            zxid: 9,
            cause: "/l/a".to_owned(),
            deletion,
        };
        let one = trace(vec![
            watch(1, EventType::NodeDeleted, true),
            watch(2, EventType::NodeChildrenChanged, false),
        ]);
        assert_eq!(herd(&one, 1), (1, None));
        let two = trace(vec![
            watch(1, EventType::NodeChildrenChanged, true),
            watch(2, EventType::NodeChildrenChanged, true),
        ]);
        let (most, violation) = herd(&two, 1);
        assert_eq!(most, 2);
        assert_eq!(violation.map(|v| v.kind), Some(ViolationKind::Herd));
    }

    #[test]
    fn a_session_waiting_for_its_own_node_is_a_deadlock() {
        let t = trace(vec![
            created(0, 1, "/l/a-1"),
            created(0, 1, "/l/a-2"),
            watches(0, 1, "/l/a-1"),
        ]);
        assert_eq!(
            wait_for_cycle(&t).map(|v| v.kind),
            Some(ViolationKind::Deadlock)
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
        assert_eq!(wait_for_cycle(&trace(chain.clone())), None);
        let mut cycle = chain;
        cycle.push(watches(0, 1, "/l/c-3"));
        let violation = wait_for_cycle(&trace(cycle)).expect("a cycle");
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
        assert_eq!(wait_for_cycle(&t), None);
    }

    #[test]
    fn a_recipe_that_gives_up_is_reported() {
        let t = trace(vec![outcome(
            2,
            4,
            Outcome::Failed(zklab_recipes::client::ZkError::NoAuth),
        )]);
        assert_eq!(
            no_failures(&t).map(|v| v.kind),
            Some(ViolationKind::RecipeFailed)
        );
    }
}
