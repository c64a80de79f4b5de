//! zklab's scenarios: seeded, fault-injected workloads of the real recipes in the simulator,
//! judged by oracles that read the trace.
//!
//! [`catalogue::CATALOGUE`] names every scenario; [`runner::run_seed`] runs one seed and
//! [`runner::sweep`] many, in parallel. [`real::run_lock`] runs the lock workload against a real
//! ZooKeeper, judged by the same oracles.

pub mod catalogue;
pub mod lock;
pub mod oracle;
pub mod real;
pub mod resource;
pub mod runner;
pub mod scenario;
