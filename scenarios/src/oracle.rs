//! The oracles a run is judged by: the monitors of [`zklab_sim::monitor`], each reading the whole
//! trace, and nothing else.

use std::time::Duration;

use zklab_sim::monitor::exclusion::MutualExclusion;
use zklab_sim::monitor::failure::NoFailures;
use zklab_sim::monitor::fencing::Fencing;
use zklab_sim::monitor::herd::Herd;
use zklab_sim::monitor::stuck_waiter::StuckWaiter;
use zklab_sim::monitor::unowned_node::UnownedNode;
use zklab_sim::monitor::wait_for::WaitFor;
use zklab_sim::monitor::Monitor;
use zklab_sim::trace::Trace;

pub use zklab_sim::monitor::{Violation, ViolationKind};

/// What the monitors found in a simulated run's trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Judgement {
    /// The first violation each monitor found.
    pub violations: Vec<Violation>,
    /// The most sessions one deletion woke.
    pub max_wakeups_per_deletion: usize,
}

/// Judges a simulated run: every monitor, a waiter or an orphan counting as stuck after three
/// session timeouts (a correct recipe reacts within a reconnect; a session cut off for longer
/// expires).
pub fn judge(trace: &Trace, session_timeout: Duration) -> Judgement {
    let bound = session_timeout * 3;
    let mut herd = Herd::new(1);
    let herded = all_of(&mut herd, trace);
    let mut violations: Vec<Violation> = judge_real(trace);
    violations.extend(WaitFor::default().first_in(trace));
    violations.extend(StuckWaiter::new(bound).first_in(trace));
    violations.extend(UnownedNode::new(bound).first_in(trace));
    violations.extend(herded);
    Judgement {
        violations,
        max_wakeups_per_deletion: herd.most(),
    }
}

/// Feeds `monitor` the whole trace (so it sees past its first violation), and returns that first
/// violation.
fn all_of(monitor: &mut impl Monitor, trace: &Trace) -> Option<Violation> {
    let mut first = None;
    for entry in trace.entries() {
        let violation = monitor.observe(entry);
        first = first.or(violation);
    }
    first
}

/// Judges a run against a real server, whose trace has no server-side record (applied ops, the
/// zxid behind a watch event): mutual exclusion, fencing and recipe failures.
pub fn judge_real(trace: &Trace) -> Vec<Violation> {
    let mut violations = Vec::new();
    violations.extend(MutualExclusion::default().first_in(trace));
    violations.extend(Fencing::default().first_in(trace));
    violations.extend(NoFailures.first_in(trace));
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::client::{CreateMode, EventType, Stat, WatchedEvent};
    use zklab_recipes::client::{Op, OpResult, SessionId};
    use zklab_recipes::outcome::Outcome;
    use zklab_sim::trace::{ClientId, TraceEvent};

    /// The most sessions one deletion woke, and the first herd.
    fn herd(trace: &Trace, limit: usize) -> (usize, Option<Violation>) {
        let mut herd = Herd::new(limit);
        let first = all_of(&mut herd, trace);
        (herd.most(), first)
    }

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
        let violation = MutualExclusion::default()
            .first_in(&t)
            .expect("a violation");
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
        assert_eq!(MutualExclusion::default().first_in(&t), None);
    }

    #[test]
    fn a_released_holder_does_not_count_but_a_suspended_one_does() {
        let released = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(0, 1, Outcome::Released { role: "lock" }),
            outcome(1, 2, granted(7)),
        ]);
        assert_eq!(MutualExclusion::default().first_in(&released), None);
        let suspended = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(0, 1, Outcome::Suspended),
            outcome(1, 2, granted(7)),
        ]);
        let violation = MutualExclusion::default()
            .first_in(&suspended)
            .expect("a suspended holder with a live session");
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
        assert_eq!(Fencing::default().first_in(&late_write(false)), None);
        let t = late_write(true);
        assert_eq!(
            Fencing::default().first_in(&t).map(|v| v.kind),
            Some(ViolationKind::StaleToken)
        );
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
            WaitFor::default().first_in(&t).map(|v| v.kind),
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

    #[test]
    fn a_recipe_that_gives_up_is_reported() {
        let t = trace(vec![outcome(
            2,
            4,
            Outcome::Failed(zklab_recipes::client::ZkError::NoAuth),
        )]);
        assert_eq!(
            NoFailures.first_in(&t).map(|v| v.kind),
            Some(ViolationKind::RecipeFailed)
        );
    }
}
