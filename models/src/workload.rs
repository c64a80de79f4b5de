//! What the model needs to know about a recipe beyond its machine: how a client starts one, what
//! the application asks of it, and where its znodes live.

use std::fmt::Debug;

use zklab_recipes::client::SessionId;
use zklab_recipes::lock::{Lock, LockMachine, LockRequest, LockVariant};
use zklab_recipes::machine::Recipe;
use zklab_recipes::symmetry::RenameSessions;

/// A recipe as the model checker runs it: one round per client (for a lock: acquire, then
/// release), with a fresh machine whenever a client's session is lost.
pub trait Workload: Clone + Debug + Send + Sync + 'static {
    /// The recipe machine each client runs.
    type Machine: Recipe + RenameSessions + Send + Sync;

    /// A fresh machine for a client with this session.
    fn machine(&self, session: SessionId) -> Self::Machine;

    /// The request the application makes of a client that holds what the recipe grants.
    fn request_when_holding(&self) -> <Self::Machine as Recipe>::Request;

    /// The recipe's znode directory: empty once every client finished.
    fn root(&self) -> &str;
}

/// The exclusive lock, in one of its variants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockWorkload {
    lock: Lock,
}

/// Where the lock models keep their contender nodes.
pub const LOCK_DIR: &str = "/lock";

impl LockWorkload {
    /// The lock at [`LOCK_DIR`], following `variant`.
    pub fn new(variant: LockVariant) -> Self {
        LockWorkload {
            lock: Lock::new(LOCK_DIR).with_variant(variant),
        }
    }
}

impl Workload for LockWorkload {
    type Machine = LockMachine;

    fn machine(&self, session: SessionId) -> LockMachine {
        self.lock.machine(session)
    }

    fn request_when_holding(&self) -> LockRequest {
        LockRequest::Release
    }

    fn root(&self) -> &str {
        LOCK_DIR
    }
}
