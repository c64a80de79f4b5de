//! The semaphore's kit: the role kit at [`SEMAPHORE_DIR`] with [`LEASES`] leases, each client
//! taking a lease, reading the resource with its token, and giving the lease back. Its known
//! bugs: counting the leases from a listing taken before its own create ([`ListFirst`]: too many
//! holders), and a waiter that waits on a node already gone ([`LostWakeup`]: held back while a
//! lease is free).

pub mod bugs;

use std::time::Duration;

use zklab_models::model::NO_STUCK_STATE;
use zklab_recipes::semaphore::{Lease, MARKER};

use crate::exclusive::{ExclusiveKit, RoleKit};
use crate::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use crate::monitor::failure::NoFailures;
use crate::monitor::shared_line::{Rule, SharedLine, HELD_BACK};
use crate::monitor::stuck_waiter::STUCK_WAITER;
use crate::mutation::{Documented, LostWakeup};
use crate::scenario::{KnownBug, Scenario};
use crate::semaphore::bugs::ListFirst;

/// Where the semaphore keeps its lease nodes.
pub const SEMAPHORE_DIR: &str = "/semaphores/workers";

/// How many leases the semaphore has.
pub const LEASES: u32 = 2;

/// How long a waiter whose lease is free may take to be told: three default session timeouts,
/// as long as a cut-off client may take to come back or to lose its session and its node.
const LEASE_WAIT: Duration = Duration::from_secs(18);

/// The semaphore's monitors: never more holders than leases, one waiter woken per release and
/// every free lease taken in time, no recipe giving up.
pub type SemaphoreMonitors = (MutualExclusion, SharedLine, NoFailures);

impl RoleKit for Lease {
    const DIR: &'static str = SEMAPHORE_DIR;
    type Monitors = SemaphoreMonitors;

    fn monitors() -> SemaphoreMonitors {
        let rule = Rule::Leases {
            marker: MARKER,
            leases: LEASES as usize,
            bound: LEASE_WAIT,
        };
        let line = SharedLine::new(SEMAPHORE_DIR, rule);
        let exclusion = MutualExclusion::shared_by_at_most(LEASES as usize);
        (exclusion, line, NoFailures)
    }

    fn playing(_: u8) -> Lease {
        Lease { leases: LEASES }
    }

    fn reads(&self) -> bool {
        true
    }
}

/// The semaphore's scenarios.
pub static SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "semaphore",
        about: "semaphore of 2 leases: at most 2 hold at once, one release wakes one waiter",
        bug: None,
        kit: &ExclusiveKit::<Lease, Documented>::KIT,
        states: Some(33_264),
    },
    Scenario {
        name: "semaphore-bug-list-first",
        about: "counts the leases from a listing taken before its own create",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 3)),
        kit: &ExclusiveKit::<Lease, ListFirst>::KIT,
        states: Some(2_312),
    },
    Scenario {
        name: "semaphore-bug-lost-wakeup",
        about: "a waiter whose node ahead is gone before its exists arrives waits on it anyway",
        bug: Some(KnownBug::new(&[&STUCK_WAITER, &HELD_BACK], 3).breaking(NO_STUCK_STATE)),
        kit: &ExclusiveKit::<Lease, LostWakeup>::KIT,
        states: Some(23_269),
    },
];
