//! zklab: deterministic simulation and model checking for ZooKeeper recipes.
//!
//! This crate is the `zklab` command line and re-exports the workspace's crates:
//! [`recipes`] (the product library: client API, sans-IO machines, recipes), [`sim`] (the pure
//! ZooKeeper server and the simulated client under madsim), [`scenarios`] (the recipes' kits,
//! the one catalogue, oracles and the seeded runner) and [`models`] (the model checker).

pub mod conform;
pub mod launcher;
pub mod real_faults;
pub mod shell;

pub use zklab_models as models;
pub use zklab_recipes as recipes;
pub use zklab_scenarios as scenarios;
pub use zklab_sim as sim;

pub use zklab_scenarios::testing;

/// Whether this build runs the simulator: true only when compiled with `--cfg madsim`, which the
/// workspace's `.cargo/config.toml` sets. An environment `RUSTFLAGS` silently replaces it.
pub const SIMULATOR_ENABLED: bool = cfg!(madsim);
