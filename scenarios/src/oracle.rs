//! Oracles: invariant monitors that judge a run by reading its trace, and nothing else. The same
//! oracle can judge a simulated run, a model counterexample or a run against a real server.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use zklab_recipes::client::{Op, OpResult, SessionId};
use zklab_recipes::machine::Outcome;
use zklab_sim::trace::{ClientId, Trace, TraceEvent};

/// Which property a run broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationKind {
    /// Two clients held the lock at once, both with live sessions.
    MutualExclusion,
    /// The protected resource accepted a token lower than one already granted.
    StaleToken,
    /// One deletion woke more than one waiter.
    Herd,
    /// Recipe znodes were left behind after every client finished.
    Orphan,
    /// A client did not finish its workload within the sim-time bound.
    Liveness,
    /// Every task was blocked with no event to wake any of them.
    Deadlock,
    /// A recipe gave up with an error it should have handled.
    RecipeFailed,
    /// The simulation itself panicked.
    Panic,
}

impl ViolationKind {
    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ViolationKind::MutualExclusion => "mutual-exclusion",
            ViolationKind::StaleToken => "stale-token",
            ViolationKind::Herd => "herd",
            ViolationKind::Orphan => "orphan",
            ViolationKind::Liveness => "liveness",
            ViolationKind::Deadlock => "deadlock",
            ViolationKind::RecipeFailed => "recipe-failed",
            ViolationKind::Panic => "panic",
        }
    }
}

/// A broken property, when, and the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which property.
    pub kind: ViolationKind,
    /// Sim time of the event that broke it.
    pub at: Duration,
    /// What happened, naming clients and sessions as the trace does.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.at.as_secs_f64();
        write!(f, "{} at {at:.6}s: {}", self.kind.name(), self.message)
    }
}

/// At most one client believes it holds the lock among those whose session is live on the
/// server. A holder stops counting when it is suspended, loses the lock or asks to release it.
pub fn mutual_exclusion(trace: &Trace) -> Option<Violation> {
    let mut holders: BTreeMap<ClientId, SessionId> = BTreeMap::new();
    let mut dead: BTreeSet<SessionId> = BTreeSet::new();
    for entry in trace.entries() {
        match &entry.event {
            TraceEvent::Outcome {
                client,
                session,
                outcome,
            } => match outcome {
                Outcome::Acquired { .. } | Outcome::Resumed => {
                    holders.insert(*client, *session);
                }
                Outcome::Suspended | Outcome::Lost | Outcome::Released | Outcome::Failed(_) => {
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
                "{} hold the lock at once, all with live sessions",
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
                outcome: Outcome::Acquired { token },
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

/// The chain `s1 waits for path (s2) -> ...` that leads from `start` back to it, if any.
fn cycle_through(
    start: SessionId,
    owners: &BTreeMap<&str, SessionId>,
    waits: &BTreeMap<SessionId, BTreeSet<&str>>,
) -> Option<Vec<String>> {
    let mut stack: Vec<(SessionId, Vec<String>)> = vec![(start, Vec::new())];
    let mut seen = BTreeSet::new();
    while let Some((session, chain)) = stack.pop() {
        for path in waits.get(&session).into_iter().flatten() {
            let Some(&owner) = owners.get(path) else {
                continue;
            };
            let mut chain = chain.clone();
            chain.push(format!("s{session} waits for {path} (owned by s{owner})"));
            if owner == start {
                return Some(chain);
            }
            if seen.insert(owner) {
                stack.push((owner, chain));
            }
        }
    }
    None
}
