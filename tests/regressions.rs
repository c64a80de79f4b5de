//! Seeds that once broke a property, kept so the fix stays fixed. Each names what it found.

mod support;

use zklab::scenarios::runner::{run_seed, RunOptions};

/// The lock gave up on NoNode: after ConnectionLoss on its first create it listed the lock
/// directory to find its node before anyone had created the directory.
#[test]
fn connection_loss_before_the_lock_directory_exists() {
    for seed in [2654, 3596, 4708, 7101, 7887, 8550] {
        let report = run_seed(support::scenario("lock"), seed, &RunOptions::default());
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
    }
}
