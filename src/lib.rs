//! zklab: deterministic simulation and model checking for ZooKeeper recipes.
//!
//! This crate is the `zklab` command line ([`cli`], which also puts your own scenarios on it)
//! and re-exports the workspace's crates:
//! [`recipes`] (the product library: client API, sans-IO machines, recipes), [`sim`] (the pure
//! ZooKeeper server and the simulated client under madsim), [`scenarios`] (the recipes' kits,
//! the one catalogue, oracles and the seeded runner) and [`models`] (the model checker).
//! [`testing`] tests your own code under seeded faults in `cargo test`; [`launcher`] starts real
//! ZooKeeper servers to run the same code against; [`prelude`] names what most code uses.
//!
//! The simulator needs `--cfg madsim` (see `zklab-sim`). Features: `cli` (on by default) adds
//! the command line, the conformance cases and the shell, and with them `check` (the model
//! checker) and `real` (runs against a real ZooKeeper: [`launcher`], `RealZk`, `run_real`).

#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod conform;
#[cfg(feature = "real")]
pub mod launcher;
pub mod prelude;
#[cfg(feature = "real")]
pub mod real_faults;
#[cfg(feature = "real")]
pub mod serve;
#[cfg(feature = "cli")]
pub mod shell;
#[cfg(feature = "real")]
pub mod wild;
#[cfg(feature = "real")]
pub mod wire_zk;

pub use zklab_models as models;
pub use zklab_recipes as recipes;
pub use zklab_scenarios as scenarios;
pub use zklab_sim as sim;

pub use zklab_scenarios::testing;
