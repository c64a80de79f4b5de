//! What most code that uses zklab names, in one `use zklab::prelude::*;`: the client trait (its
//! methods need it in scope), ZooKeeper's types, every recipe's entry point and its error, and
//! the harness that tests one's own code.

pub use zklab_recipes::barrier::Barrier;
pub use zklab_recipes::client::{
    CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId, Stat, WatchedEvent,
    ZkClient, ZkError, ZkEvent,
};
pub use zklab_recipes::config::Config;
pub use zklab_recipes::declaration::Declared;
pub use zklab_recipes::double_barrier::DoubleBarrier;
pub use zklab_recipes::election::Election;
pub use zklab_recipes::group::Group;
pub use zklab_recipes::lock::Lock;
pub use zklab_recipes::names::Names;
pub use zklab_recipes::outcome::{Outcome, Recorder};
pub use zklab_recipes::parts::link::RecipeError;
pub use zklab_recipes::priority_queue::PriorityQueue;
pub use zklab_recipes::queue::Queue;
pub use zklab_recipes::real_zk::RealZk;
pub use zklab_recipes::revocable_lock::RevocableLock;
pub use zklab_recipes::rw_lock::RwLock;
pub use zklab_recipes::semaphore::Semaphore;
pub use zklab_recipes::two_phase_commit::TwoPhaseCommit;
pub use zklab_scenarios::testing::{Harness, TestClient};
