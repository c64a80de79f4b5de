//! The lock's kit: the exclusive-role kit at [`LOCK_DIR`]. Its known bugs are the lock under the
//! [`BlindRetry`], [`GiveUp`], [`WatchParent`], [`SortByName`] and [`LostWakeup`] mutations.

use zklab_recipes::lock::LockRole;

use crate::exclusive::{exclusive_monitors, ExclusiveKit, ExclusiveMonitors, RoleKit};
use crate::mutation::{BlindRetry, Documented, GiveUp, LostWakeup, SortByName, WatchParent};
use crate::scenario::Scenario;

/// Where the lock keeps its contender nodes.
pub const LOCK_DIR: &str = "/locks/lock";

impl RoleKit for LockRole {
    const DIR: &'static str = LOCK_DIR;
    type Monitors = ExclusiveMonitors;

    fn monitors() -> ExclusiveMonitors {
        exclusive_monitors()
    }

    fn playing(_: u8) -> Self {
        LockRole
    }
}

/// The lock's kit, its machine under mutation `X`.
pub type LockKit<X> = ExclusiveKit<LockRole, X>;

/// The lock's scenarios.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "lock",
        about: "exclusive lock: acquire, use a fenced resource, release",
        known_bug: false,
        kit: &LockKit::<Documented>::KIT,
        states: Some(44_843),
    },
    Scenario {
        name: "lock-bug-blind-retry",
        about: "after ConnectionLoss on create, create again without looking for the guid",
        known_bug: true,
        kit: &LockKit::<BlindRetry>::KIT,
        states: Some(87_096),
    },
    Scenario {
        name: "lock-bug-give-up",
        about:
            "after ConnectionLoss on create, start over in a new session, leaving the node behind",
        known_bug: true,
        kit: &LockKit::<GiveUp>::KIT,
        states: Some(263_283),
    },
    Scenario {
        name: "lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        known_bug: true,
        kit: &LockKit::<WatchParent>::KIT,
        states: Some(45_519),
    },
    Scenario {
        name: "lock-bug-sort-by-name",
        about: "contenders ordered by full name (so by guid) instead of by sequence number",
        known_bug: true,
        kit: &LockKit::<SortByName>::KIT,
        states: Some(53_182),
    },
    Scenario {
        name: "lock-bug-lost-wakeup",
        about: "a waiter whose predecessor is gone before its exists arrives waits anyway",
        known_bug: true,
        kit: &LockKit::<LostWakeup>::KIT,
        states: Some(40_187),
    },
];
