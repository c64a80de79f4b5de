//! The catalogue's known bugs must be caught, each within 1,000 seeds, with the right violation,
//! and the failing seed must reproduce on replay.

mod support;

use zklab::scenarios::oracle::{Violation, ViolationKind};
use zklab::scenarios::runner::{run_seed, RunOptions};

/// The first failing seed below 1,000 and its first violation.
fn first_failure(name: &str) -> (u64, Violation) {
    let scenario = support::scenario(name);
    (0..1000)
        .find_map(|seed| {
            run_seed(scenario, seed, &RunOptions::default())
                .violations
                .into_iter()
                .next()
                .map(|v| (seed, v))
        })
        .unwrap_or_else(|| panic!("{name}: no violation in 1,000 seeds"))
}

#[test]
fn blind_retry_after_lost_create_reply_is_caught_as_deadlock_or_orphan() {
    let (seed, violation) = first_failure("lock-bug-blind-retry");
    assert!(
        matches!(
            violation.kind,
            ViolationKind::Deadlock | ViolationKind::Liveness | ViolationKind::Orphan
        ),
        "seed {seed}: {violation}"
    );
    let replayed = run_seed(
        support::scenario("lock-bug-blind-retry"),
        seed,
        &RunOptions::default(),
    );
    assert_eq!(
        replayed.violations.first(),
        Some(&violation),
        "the replay of seed {seed} differs"
    );
}

#[test]
fn waiters_watching_the_lock_children_are_caught_as_a_herd() {
    let (seed, violation) = first_failure("lock-bug-herd");
    assert_eq!(
        violation.kind,
        ViolationKind::Herd,
        "seed {seed}: {violation}"
    );
    let replayed = run_seed(
        support::scenario("lock-bug-herd"),
        seed,
        &RunOptions::default(),
    );
    assert!(replayed.max_wakeups_per_deletion > 1);
    assert_eq!(replayed.violations.first(), Some(&violation));
}
