//! zklab's model checker: stateright models that step the real recipe machines against the
//! real pure server, exploring every interleaving and every fault within a budget.
//!
//! [`model::RecipeModel`] is generic over any [`workload::Workload`] (a recipe machine plus what
//! its application does); [`check::check`] runs it with symmetry reduction, once
//! [`symmetry_claim`] has tested the workload's claim to allow it, and finds a short
//! counterexample of each failing property; [`render`] tells a counterexample as trace
//! lines and a Mermaid diagram. It knows no recipe: the kits (`zklab-scenarios`) bring them.
//!
//! Without the `check` feature (on by default) only what the simulator shares with the model is
//! built: [`workload::Workload`], [`budget::Budget`] and [`general_properties`], and no stateright.

pub mod application;
pub mod budget;
#[cfg(feature = "check")]
pub mod check;
pub mod general_properties;
#[cfg(feature = "check")]
pub mod model;
#[cfg(feature = "check")]
pub mod pictured;
#[cfg(feature = "check")]
pub mod render;
#[cfg(feature = "check")]
pub mod shared;
#[cfg(feature = "check")]
pub mod symmetry;
#[cfg(feature = "check")]
pub mod symmetry_claim;
pub mod workload;
