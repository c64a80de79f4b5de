//! The lock under every fault over hundreds of seeds: no property breaks, and every fault kind
//! was really injected (a sweep that injects nothing proves nothing).

mod support;

use zklab::scenarios::runner::{sweep, RunOptions};
use zklab::sim::fault::FaultKind;

#[test]
fn lock_holds_every_property_over_500_seeds_with_all_faults() {
    let report = sweep(
        support::scenario("lock"),
        0,
        500,
        &RunOptions::default(),
        2,
        &|_, _| {},
    );
    assert_eq!(report.seeds, 500);
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|(seed, v)| format!("seed {seed}: {v}"))
        .collect();
    assert!(failures.is_empty(), "violations:\n{}", failures.join("\n"));
    for kind in FaultKind::ALL {
        assert!(
            report.faults.get(kind) > 0,
            "the sweep never injected {kind}"
        );
    }
    assert_eq!(
        report.max_wakeups_per_deletion, 1,
        "a deletion woke more than one waiter, or none ever did"
    );
}
