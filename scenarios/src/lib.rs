//! zklab's scenarios: seeded, fault-injected workloads of the real recipes in the simulator,
//! judged by oracles that read the trace.
//!
//! A [`kit::Kit`] is everything the harness knows of one recipe; [`catalogue::scenarios`] names
//! every scenario, one kit each. [`runner::run_seed`] runs one seed and [`runner::sweep`] many, in
//! parallel; [`real::run`] runs a scenario's workload against a real ZooKeeper, judged by the same
//! oracles. The model checker (`zklab-models`) checks the same kits.

pub mod barrier;
pub mod catalogue;
pub mod config;
pub mod double_barrier;
pub mod election;
pub mod exclusive;
pub mod follow;
pub mod group;
pub mod host;
pub mod kit;
pub mod lock;
pub mod monitor;
pub mod mutation;
pub mod names;
pub mod oracle;
pub mod queue;
pub mod real;
pub mod regressions;
pub mod resource;
pub mod revocable_lock;
pub mod runner;
pub mod rw_lock;
pub mod scenario;
pub mod schedule;
pub mod semaphore;
pub mod shrink;
pub mod testing;
pub mod two_phase_commit;
