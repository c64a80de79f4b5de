//! The semaphore's kit: the role kit at [`SEMAPHORE_DIR`] with [`LEASES`] leases, each client
//! taking a lease, reading the resource with its token, and giving the lease back. Its known
//! bugs: counting the leases from a listing taken before its own create ([`ListFirst`]: too many
//! holders), and a waiter that waits on a node already gone ([`LostWakeup`]: held back while a
//! lease is free).
//!
//! [`ListFirst`]: bugs::ListFirst
//! [`LostWakeup`]: crate::mutation::LostWakeup

pub mod bugs;

use std::time::Duration;

use zklab_recipes::semaphore::{Lease, MARKER};

use crate::exclusive::RoleKit;
use crate::monitor::exclusion::MutualExclusion;
use crate::monitor::failure::NoFailures;
use crate::monitor::shared_line::{Rule, SharedLine};

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
