//! The golden trace: the whole story of one fixed seed on a standalone server, byte for byte. A
//! change to the simulator, the fault model or the lock shows up here as a reviewable diff
//! (`cargo insta review`).

mod support;

use zklab::scenarios::runner::{run_seed, RunOptions};

#[test]
fn lock_seed_42_with_three_clients_and_all_faults() {
    let options = RunOptions {
        clients: 3,
        rounds: 3,
        ..RunOptions::default()
    }
    .on_servers(1);
    let report = run_seed(support::scenario("lock"), 42, &options);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    insta::assert_snapshot!(report.trace.render());
}
