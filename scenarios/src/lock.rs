//! The lock's kit: the exclusive-role kit at [`LOCK_DIR`]. Its known bugs are the lock under the
//! [`BlindRetry`], [`GiveUp`], [`WatchParent`], [`SortByName`] and [`LostWakeup`] mutations.

pub mod bugs;

use zklab_models::model::{NO_STUCK_STATE, ORPHAN};
use zklab_recipes::lock::LockRole;

use crate::exclusive::{ExclusiveKit, SoleRole};
use crate::lock::bugs::{GiveUp, SortByName};
use crate::monitor::exclusion::MUTUAL_EXCLUSION;
use crate::monitor::herd::HERD;
use crate::monitor::stuck_waiter::STUCK_WAITER;
use crate::monitor::unowned_node::UNOWNED_NODE;
use crate::monitor::wait_for::DEADLOCK;
use crate::mutation::{BlindRetry, Documented, LostWakeup, WatchParent};
use crate::runner::LIVENESS;
use crate::scenario::{KnownBug, ModelFault, Scenario};

/// Where the lock keeps its contender nodes.
pub const LOCK_DIR: &str = "/locks/lock";

impl SoleRole for LockRole {
    const DIR: &'static str = LOCK_DIR;
}

/// The lock's kit, its machine under mutation `X`.
pub type LockKit<X> = ExclusiveKit<LockRole, X>;

/// The lock's scenarios.
pub static SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "lock",
        about: "exclusive lock: acquire, use a fenced resource, release",
        bug: None,
        kit: &LockKit::<Documented>::KIT,
        states: Some(13_872),
    },
    Scenario {
        name: "lock-bug-blind-retry",
        about: "after ConnectionLoss on create, create again without looking for the guid",
        bug: Some(
            KnownBug::new(&[&DEADLOCK, &LIVENESS, &ORPHAN], 2)
                .breaking(NO_STUCK_STATE)
                .with_one(ModelFault::ConnectionLoss)
                .with_one(ModelFault::LostReply)
                .with_one(ModelFault::SessionExpiry)
                .with_one(ModelFault::Pause),
        ),
        kit: &LockKit::<BlindRetry>::KIT,
        states: Some(23_554),
    },
    Scenario {
        name: "lock-bug-give-up",
        about:
            "after ConnectionLoss on create, start over in a new session, leaving the node behind",
        bug: Some(
            KnownBug::new(&[&UNOWNED_NODE], 2)
                .breaking(NO_STUCK_STATE)
                .with_one(ModelFault::LostReply),
        ),
        kit: &LockKit::<GiveUp>::KIT,
        states: Some(604),
    },
    Scenario {
        name: "lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        bug: Some(KnownBug::new(&[&HERD], 3)),
        kit: &LockKit::<WatchParent>::KIT,
        states: Some(477),
    },
    Scenario {
        name: "lock-bug-sort-by-name",
        about: "contenders ordered by full name (so by guid) instead of by sequence number",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 2)),
        kit: &LockKit::<SortByName>::KIT,
        states: Some(162),
    },
    Scenario {
        name: "lock-bug-lost-wakeup",
        about: "a waiter whose predecessor is gone before its exists arrives waits anyway",
        bug: Some(KnownBug::new(&[&STUCK_WAITER], 3).breaking(NO_STUCK_STATE)),
        kit: &LockKit::<LostWakeup>::KIT,
        states: Some(369),
    },
];
