//! zklab's scenarios: seeded, fault-injected workloads of the real recipes in the simulator,
//! judged by oracles that read the trace.
//!
//! [`catalogue::CATALOGUE`] names every scenario; [`runner::run_seed`] runs one seed and
//! [`runner::sweep`] many, in parallel.

pub mod catalogue;
pub mod lock;
pub mod oracle;
pub mod resource;
pub mod runner;
pub mod scenario;
