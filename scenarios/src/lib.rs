//! zklab's scenarios: seeded, fault-injected workloads of the real recipes in the simulator,
//! judged by oracles that read the trace.
//!
//! A [`kit::Kit`] is everything the harness knows of one recipe; [`catalogue::scenarios`] names
//! every scenario, one kit each. [`runner::run_seed`] runs one seed and [`runner::sweep`] many, in
//! parallel; [`real::run`] runs a scenario's workload against a real ZooKeeper, judged by the same
//! oracles. The model checker (`zklab-models`) checks the same kits.

pub mod catalogue;
pub mod exclusive;
pub mod follow;
pub mod host;
pub mod kit;
pub mod monitor;
pub mod mutation;
pub mod oracle;
pub mod real;
pub mod regressions;
pub mod resource;
pub mod runner;
pub mod scenario;
pub mod schedule;
pub mod shrink;
pub mod testing;

/// The kits, one per recipe, in listing order: each line declares the kit's module (its folder,
/// `scenarios/src/<recipe>.rs` and `scenarios/src/<recipe>/`) and puts its `SCENARIOS` in the
/// catalogue ([`catalogue::scenarios`]). A new recipe's kit is one line here.
macro_rules! kits {
    ($($kit:ident),+ $(,)?) => {
        $(pub mod $kit;)+

        /// Every kit's scenarios, in listing order (see [`catalogue::scenarios`]).
        const KITS: &[&[scenario::Scenario]] = &[$($kit::SCENARIOS),+];
    };
}

kits! {
    lock,
    election,
    rw_lock,
    revocable_lock,
    semaphore,
    barrier,
    double_barrier,
    two_phase_commit,
    queue,
    config,
    group,
    names,
}
