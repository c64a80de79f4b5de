//! What most code that uses zklab names, in one `use zklab::prelude::*;`: everything of
//! [`zklab_recipes::prelude`] (the client trait, ZooKeeper's types, every recipe's entry point
//! and its error) and the harness that tests one's own code.

pub use zklab_recipes::prelude::*;
pub use zklab_scenarios::testing::{Harness, TestClient};
