//! The oracles a run is judged by: the monitors of [`crate::monitor`] and of each recipe's folder, each reading the whole
//! trace, and nothing else. A kit's own monitors (which its model carries too) judge every run;
//! the simulator adds the monitors that count time or read the server's side of the trace.

use std::time::Duration;

use zklab_models::general_properties::ORPHAN;
use zklab_sim::property::Monitor;
use zklab_sim::trace::{Trace, TraceEntry, TraceEvent};

use crate::monitor::fencing::{Fencing, STALE_TOKEN};
use crate::monitor::herd::Herd;
use crate::monitor::stuck_waiter::{StuckWaiter, STUCK_WAITER};
use crate::monitor::unowned_node::{UnownedNode, UNOWNED_NODE};
use crate::monitor::wait_for::{WaitFor, DEADLOCK};
use crate::runner::{LIVENESS, PANIC};

pub use zklab_sim::property::{Property, Violation};

/// What the monitors found in a simulated run's trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Judgement {
    /// The first violation of each kind.
    pub violations: Vec<Violation>,
    /// The most sessions one deletion woke, as the kit's herd rule counts them (a holder's
    /// leftover watch, a reader woken with the others, a watch an earlier node left behind do
    /// not count); every session notified where the kit has no herd rule.
    pub max_wakeups_per_deletion: usize,
}

/// Judges a simulated run: the kit's `monitors`, then wait-for cycles, stuck waiters and
/// unowned nodes, a waiter or a node counting as stuck after three session timeouts (a correct
/// recipe reacts within a reconnect; a session cut off for longer expires).
pub fn judge(monitors: impl Monitor, trace: &Trace, session_timeout: Duration) -> Judgement {
    let bound = session_timeout * 3;
    let (mut violations, counted) = first_of_each_kind((monitors, Fencing::default()), trace);
    violations.sort_by_key(|violation| violation.at);
    violations.extend(WaitFor::default().first_in(trace));
    violations.extend(StuckWaiter::new(bound).first_in_run(trace));
    violations.extend(UnownedNode::new(bound).first_in(trace));
    // Without a herd rule, every session a deletion notified.
    let max_wakeups_per_deletion = counted.unwrap_or_else(|| {
        let notified = trace.entries().iter().filter_map(|e| Herd::woken(&e.event));
        notified.map(|woken| woken.len()).max().unwrap_or(0)
    });
    Judgement {
        violations,
        max_wakeups_per_deletion,
    }
}

/// Judges a run against a real server: the kit's `monitors` and fencing. A real trace has no
/// server-side record (applied ops, the sessions a change notified), so a monitor that reads
/// those (herd) finds nothing there.
pub fn judge_real(monitors: impl Monitor, trace: &Trace) -> Vec<Violation> {
    let (mut violations, _) = first_of_each_kind((monitors, Fencing::default()), trace);
    violations.sort_by_key(|violation| violation.at);
    violations
}

/// Every property a simulated run judged by `monitors` is judged by: theirs, those [`judge`] and
/// [`judge_real`] add, and the runner's own (a client that never finishes, a panic, a node left
/// behind). A schedule's `violation` line names one of them.
pub fn properties(monitors: &impl Monitor) -> Vec<&'static Property> {
    let mut properties = monitors.properties();
    properties.extend([
        &STALE_TOKEN,
        &DEADLOCK,
        &STUCK_WAITER,
        &UNOWNED_NODE,
        &LIVENESS,
        &PANIC,
        &ORPHAN,
    ]);
    properties
}

/// The first violation of each kind `monitors` find in `trace` (each is fed the whole trace, so
/// it sees past the others' violations), and the most sessions one deletion woke as their herd
/// rules count them (`None` without a herd rule).
fn first_of_each_kind(monitors: impl Monitor, trace: &Trace) -> (Vec<Violation>, Option<usize>) {
    let mut judging = Judging::new(monitors);
    for entry in trace.entries() {
        judging.observe(entry);
    }
    (judging.first, judging.most_woken)
}

/// A trace judged as it grows, entry by entry (a run that never ends on its own, such as
/// `zklab serve`'s, cannot be kept whole): the first violation of each kind the monitors find.
#[derive(Debug)]
pub struct Judging<M> {
    monitors: M,
    first: Vec<Violation>,
    found: Vec<Violation>,
    most_woken: Option<usize>,
}

impl<M: Monitor> Judging<M> {
    /// Nothing judged yet.
    pub fn new(monitors: M) -> Self {
        Judging {
            monitors,
            first: Vec::new(),
            found: Vec::new(),
            most_woken: None,
        }
    }

    /// Judges the next entry.
    pub fn observe(&mut self, entry: &TraceEntry) {
        if let TraceEvent::Notified { .. } = entry.event {
            self.most_woken = self.most_woken.max(self.monitors.herd_count(entry));
        }
        self.monitors.observe_all(entry, &mut self.found);
        for violation in self.found.drain(..) {
            if self
                .first
                .iter()
                .all(|seen| seen.property != violation.property)
            {
                self.first.push(violation);
            }
        }
    }

    /// The first violation of each kind so far, in the order they were found.
    pub fn violations(&self) -> &[Violation] {
        &self.first
    }

    /// The properties judged.
    pub fn properties(&self) -> Vec<&'static Property> {
        self.monitors.properties()
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{SessionId, ZkError};
    use zklab_recipes::outcome::Outcome;
    use zklab_sim::trace::TraceEvent;

    use super::*;
    use crate::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
    use crate::monitor::failure::{NoFailures, RECIPE_FAILED};
    use crate::monitor::herd::HERD;

    /// A trace of `events`, one millisecond apart.
    fn trace(events: Vec<TraceEvent>) -> Trace {
        let mut trace = Trace::new();
        for (i, event) in events.into_iter().enumerate() {
            trace.push(Duration::from_millis(i as u64), event);
        }
        trace
    }

    /// Session `session` (of client `session`) learns `outcome`.
    fn told(session: SessionId, outcome: Outcome) -> TraceEvent {
        TraceEvent::Outcome {
            client: session as u32,
            session,
            outcome,
        }
    }

    /// The most sessions one deletion woke, and the first herd.
    fn herd(trace: &Trace, limit: usize) -> (usize, Option<Violation>) {
        let judgement = judge(Herd::new(limit), trace, Duration::from_secs(1));
        (
            judgement.max_wakeups_per_deletion,
            judgement.violations.into_iter().next(),
        )
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
        assert_eq!(violation.map(|v| v.property), Some(&HERD));
        assert_eq!(herd(&two, 2), (2, None));
    }

    #[test]
    fn monitors_side_by_side_each_report_on_the_same_entry() {
        let failed = told(2, Outcome::Failed(ZkError::NoAuth));
        let mut found = Vec::new();
        (NoFailures, NoFailures).observe_all(&trace(vec![failed.clone()]).entries()[0], &mut found);
        assert_eq!(found.len(), 2);
        let granted = |token| Outcome::Granted {
            role: "lock",
            token,
        };
        let t = trace(vec![told(1, granted(5)), told(2, granted(7)), failed]);
        let kinds: Vec<&'static Property> =
            judge_real((MutualExclusion::default(), NoFailures), &t)
                .into_iter()
                .map(|v| v.property)
                .collect();
        assert_eq!(kinds, [&MUTUAL_EXCLUSION, &RECIPE_FAILED]);
    }
}
