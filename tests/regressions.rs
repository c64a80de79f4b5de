//! Stories that once broke a property, kept so the fix stays fixed. Each names what it found.

mod support;

use std::time::Duration;

use zklab::scenarios::runner::{run_seed, RunOptions};
use zklab::sim::fault::{FaultKind, FaultRates, ScriptedFault};

/// The lock gave up on NoNode: after ConnectionLoss on its first create it listed the lock
/// directory to find its node before anyone had created the directory. Scripted, so the story
/// does not depend on which seed happens to draw it.
#[test]
fn connection_loss_before_the_lock_directory_exists() {
    let script = vec![ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::ConnectionLoss,
        client: 0,
        duration: Duration::ZERO,
    }];
    let options = RunOptions {
        clients: 1,
        rounds: 1,
        faults: FaultRates::none(),
        script,
        ..RunOptions::default()
    };
    let report = run_seed(support::scenario("lock"), 1, &options);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let text = report.trace.render();
    let lost = "c0 XX fault connection-loss: before apply: create /locks/lock/";
    assert!(text.contains(lost), "{text}");
    let listing = text
        .find("c0 s1 -> getChildren /locks/lock")
        .expect("c0 looks for its node");
    let no_directory = text[listing..].find("c0 s1 <- error NoNode");
    assert!(
        no_directory.is_some(),
        "the listing found no directory:\n{text}"
    );
}

/// The seeds of the 10,000-seed sweep (on a standalone server) that first found it.
#[test]
fn the_seeds_that_found_it() {
    let standalone = RunOptions::default().on_servers(1);
    for seed in [2654, 3596, 4708, 7101, 7887, 8550] {
        let report = run_seed(support::scenario("lock"), seed, &standalone);
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
    }
}
