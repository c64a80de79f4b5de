//! zklab's recipes: ZooKeeper coordination recipes written once as pure state machines.
//!
//! [`client`] is the API a recipe talks to. [`machine`] is the sans-IO pattern: a recipe is a
//! [`machine::Recipe`] that turns inputs (replies, watch events, session events, application
//! requests, its timer) into steps (send this op, wait, done), and one async driver runs any
//! machine over any [`client::ZkClient`], on a handle of the session whose events are its own
//! ([`listeners`]). Each recipe tells its application things in its own
//! outcome type, which converts into the one vocabulary of [`outcome`]. Recipes are built from
//! [`parts`]: [`lock`], [`election`], the two sides of [`rw_lock`] (and of [`revocable_lock`]) and
//! the leases of [`semaphore`] are the role part under their own names, and [`barrier`] is a
//! controller and its waiters, [`double_barrier`] a group that enters and leaves together,
//! [`two_phase_commit`] a coordinator and its sites, [`queue`] producers and consumers that neither
//! lose nor duplicate an item ([`priority_queue`]: by priority), [`config`] a value that writers
//! set and readers follow, [`group`] members that join and a membership anyone follows, [`names`]
//! names registered to values, [`tree_cache`] a local copy of a subtree, [`shared_counter`] a
//! counter that counts each increment once. The same machine runs in the simulator, in the model
//! checker and against a real ZooKeeper ([`real_zk`], feature `zookeeper`, on by default). What
//! an application keeps of each recipe is one [`handle::Handle`] over the recipe's settings;
//! [`prelude`] names what most production code uses.

extern crate self as zklab_recipes;

pub mod acl;
pub mod barrier;
pub mod client;
pub mod config;
pub mod declaration;
pub mod double_barrier;
pub mod election;
pub mod group;
pub mod handle;
pub mod listeners;
pub mod lock;
pub mod machine;
pub mod names;
pub mod outcome;
pub mod parts;
pub mod prelude;
pub mod priority_queue;
pub mod queue;
#[cfg(feature = "zookeeper")]
pub mod real_zk;
pub mod revocable_lock;
pub mod rw_lock;
pub mod semaphore;
pub mod session_renaming;
pub mod shared_counter;
pub mod subtree;
#[cfg(test)]
mod test_steps;
pub mod tree_cache;
pub mod two_phase_commit;
