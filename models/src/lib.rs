//! zklab's model checker: stateright models that step the real recipe machines against the pure
//! server, exploring every interleaving and fault up to a bound.
//!
//! Not built yet: this crate holds the place the workspace layout gives it. The machines it will
//! drive already exist ([`zklab_recipes`]' `Recipe` trait) and so does the server it will step
//! them against (`zklab_sim::server::Server`, `Clone + Eq + Hash`).
