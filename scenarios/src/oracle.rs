//! The oracles a run is judged by: the monitors of [`zklab_sim::monitor`], each reading the whole
//! trace, and nothing else. A kit's own monitors (which its model carries too) judge every run;
//! the simulator adds the monitors that count time or read the server's side of the trace.

use std::time::Duration;

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
    /// The first violation of each kind.
    pub violations: Vec<Violation>,
    /// The most sessions one deletion woke.
    pub max_wakeups_per_deletion: usize,
}

/// Judges a simulated run: the kit's `monitors`, then wait-for cycles, stuck waiters and
/// unowned nodes, a waiter or a node counting as stuck after three session timeouts (a correct
/// recipe reacts within a reconnect; a session cut off for longer expires).
pub fn judge(monitors: impl Monitor, trace: &Trace, session_timeout: Duration) -> Judgement {
    let bound = session_timeout * 3;
    let mut violations = judge_real(monitors, trace);
    violations.extend(WaitFor::default().first_in(trace));
    violations.extend(StuckWaiter::new(bound).first_in(trace));
    violations.extend(UnownedNode::new(bound).first_in(trace));
    let max_wakeups_per_deletion = trace
        .entries()
        .iter()
        .filter_map(|entry| Herd::woken(&entry.event))
        .map(|woken| woken.len())
        .max()
        .unwrap_or(0);
    Judgement {
        violations,
        max_wakeups_per_deletion,
    }
}

/// Judges a run against a real server: the kit's `monitors` and fencing. A real trace has no
/// server-side record (applied ops, the sessions a change notified), so a monitor that reads
/// those (herd) finds nothing there.
pub fn judge_real(monitors: impl Monitor, trace: &Trace) -> Vec<Violation> {
    let mut violations = first_of_each_kind((monitors, Fencing::default()), trace);
    violations.sort_by_key(|violation| violation.at);
    violations
}

/// Feeds `monitors` the whole trace (so each sees past the others' violations), and returns the
/// first violation of each kind.
fn first_of_each_kind(mut monitors: impl Monitor, trace: &Trace) -> Vec<Violation> {
    let mut first: Vec<Violation> = Vec::new();
    let mut found = Vec::new();
    for entry in trace.entries() {
        monitors.observe_all(entry, &mut found);
        for violation in found.drain(..) {
            if first.iter().all(|seen| seen.kind != violation.kind) {
                first.push(violation);
            }
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::client::{CreateMode, Stat};
    use zklab_recipes::client::{Op, OpResult, SessionId};
    use zklab_recipes::outcome::Outcome;
    use zklab_sim::monitor::exclusion::MutualExclusion;
    use zklab_sim::monitor::failure::NoFailures;
    use zklab_sim::trace::{ClientId, TraceEvent};

    /// The most sessions one deletion woke, and the first herd.
    fn herd(trace: &Trace, limit: usize) -> (usize, Option<Violation>) {
        let judgement = judge(Herd::new(limit), trace, Duration::from_secs(1));
        (
            judgement.max_wakeups_per_deletion,
            judgement.violations.into_iter().next(),
        )
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
    fn one_deletion_waking_two_sessions_other_than_the_deleters_is_a_herd() {
        let notified = |deletion, sessions: &[SessionId]| TraceEvent::Notified {
            by: 1,
            zxid: 9,
            cause: "/l/a".to_owned(),
            deletion,
            sessions: sessions.to_vec(),
        };
        // The deleter's own leftover watch is no waiter woken; a change that is no deletion
        // wakes nobody.
        let one = trace(vec![notified(true, &[1, 2]), notified(false, &[3, 4])]);
        assert_eq!(herd(&one, 1), (1, None));
        let two = trace(vec![notified(true, &[1, 2, 3])]);
        let (most, violation) = herd(&two, 1);
        assert_eq!(most, 2);
        assert_eq!(violation.map(|v| v.kind), Some(ViolationKind::Herd));
        assert_eq!(herd(&two, 2), (2, None));
    }

    #[test]
    fn monitors_side_by_side_each_report_on_the_same_entry() {
        let failed = trace(vec![outcome(
            1,
            2,
            Outcome::Failed(zklab_recipes::client::ZkError::NoAuth),
        )]);
        let mut found = Vec::new();
        (NoFailures, NoFailures).observe_all(&failed.entries()[0], &mut found);
        assert_eq!(found.len(), 2);
        let t = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(1, 2, granted(7)),
            outcome(
                1,
                2,
                Outcome::Failed(zklab_recipes::client::ZkError::NoAuth),
            ),
        ]);
        let kinds: Vec<ViolationKind> = judge_real((MutualExclusion::default(), NoFailures), &t)
            .into_iter()
            .map(|v| v.kind)
            .collect();
        assert_eq!(
            kinds,
            [ViolationKind::MutualExclusion, ViolationKind::RecipeFailed]
        );
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
