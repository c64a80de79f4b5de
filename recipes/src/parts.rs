//! The shared parts recipes are built from, so that each recipe is small and written once:
//! [`contender`] gets in line under a directory ([`contained`]: a container), [`link`] deals with the session's connection,
//! [`exclusive`] holds a role (a lock, leadership) first in line until it lets go, [`own_node`]
//! makes one sequential node that survives a lost create reply, [`parents`] creates a
//! directory's missing ancestors, [`producer`] puts items into a queue,
//! [`consumer`] takes them out and [`follow`] reads a node again on every change.

pub mod consumer;
pub mod contained;
pub mod contender;
pub mod exclusive;
pub mod follow;
pub mod link;
pub mod own_node;
pub mod parents;
pub mod producer;
