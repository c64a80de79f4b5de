//! zklab's scenarios: seeded, fault-injected workloads of the real recipes in the simulator,
//! judged by oracles that read the trace.
//!
//! A [`kit::Kit`] is everything the harness knows of one recipe; [`catalogue::scenarios`] names
//! zklab's scenarios, one kit each, and a [`catalogue::Catalogue`] finds these, or a user's own,
//! by name. [`runner::run_seed`] runs one seed and [`runner::sweep`] many, in
//! parallel; [`real::run`] runs a scenario's workload against a real ZooKeeper, judged by the same
//! oracles. The model checker (`zklab-models`) checks the same kits.

pub mod catalogue;
pub mod contained;
pub mod exclusive;
pub mod heap;
pub mod host;
pub mod kit;
pub mod model_round;
pub mod monitor;
pub mod mutation;
pub mod oracle;
#[cfg(feature = "real")]
pub mod real;
pub mod regressions;
pub mod resource;
pub mod runner;
pub mod scenario;
pub mod schedule;
pub mod shrink;
pub mod testing;

// The kits, one per recipe: `<recipe>.rs` and its folder. The catalogue lists their scenarios.
pub mod barrier;
pub mod config;
pub mod double_barrier;
pub mod election;
pub mod group;
pub mod lock;
pub mod names;
pub mod queue;
pub mod revocable_lock;
pub mod rw_lock;
pub mod semaphore;
pub mod shared_counter;
pub mod tree_cache;
pub mod two_phase_commit;
