//! What production code on zklab's recipes names, in one `use zklab_recipes::prelude::*;`: the
//! client trait (its methods need it in scope), ZooKeeper's types, and every recipe's entry
//! point and its error. It builds without the simulator, so a crate's production code depends on
//! this crate alone and its tests on `zklab` (whose prelude adds the harness).

pub use crate::acl::{Acl, Acls, Id, Perms};
pub use crate::barrier::Barrier;
pub use crate::client::{
    CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId, Stat, WatchedEvent,
    ZkClient, ZkError, ZkEvent,
};
pub use crate::config::Config;
pub use crate::declaration::Declared;
pub use crate::double_barrier::DoubleBarrier;
pub use crate::election::Election;
pub use crate::group::Group;
pub use crate::lock::Lock;
pub use crate::names::Names;
pub use crate::outcome::{Outcome, Recorder};
pub use crate::parts::link::RecipeError;
pub use crate::priority_queue::PriorityQueue;
pub use crate::queue::Queue;
#[cfg(feature = "zookeeper")]
pub use crate::real_zk::RealZk;
pub use crate::revocable_lock::RevocableLock;
pub use crate::rw_lock::RwLock;
pub use crate::semaphore::Semaphore;
pub use crate::shared_counter::SharedCounter;
pub use crate::tree_cache::TreeCache;
pub use crate::two_phase_commit::TwoPhaseCommit;
