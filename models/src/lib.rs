//! zklab's model checker: stateright models that step the real recipe machines against the
//! real pure server, exploring every interleaving and every fault within a budget.
//!
//! [`model::RecipeModel`] is generic over any [`workload::Workload`] (a recipe machine plus what
//! its application does); [`check::check`] runs it with symmetry reduction, once
//! [`symmetry_claim`] has tested the workload's claim to allow it, and finds a short
//! counterexample of each failing property; [`render`] tells a counterexample as trace
//! lines and a Mermaid diagram. It knows no recipe: the kits (`zklab-scenarios`) bring them.

pub mod application;
pub mod check;
pub mod model;
pub mod pictured;
pub mod render;
pub mod shared;
pub mod symmetry;
pub mod symmetry_claim;
pub mod workload;
