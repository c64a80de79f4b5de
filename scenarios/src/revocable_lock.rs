//! The revocable lock's kit: the read/write lock's workload at [`REVOCABLE_LOCK_DIR`], made
//! revocable with the forced variant. Odd clients write, even ones read; a holder keeps the lock
//! for its 50 pieces of work ([`RoleKit::USES`]) unless asked to give it up, and every waiter asks
//! the node in its way, forcing it out (after fencing its token) once [`GRACE`] has passed. Its
//! known bug: a contender that ignores the ask ([`IgnoresUnlock`]), which the waiter then has to
//! force out.
//!
//! [`IgnoresUnlock`]: bugs::IgnoresUnlock

pub mod bugs;
pub mod monitor;

use std::time::Duration;

use zklab_recipes::parts::contender::Revocation as Revoke;
use zklab_recipes::revocable_lock::RevocableAccess;
use zklab_recipes::rw_lock::Access;

use crate::exclusive::RoleKit;
use crate::monitor::exclusion::MutualExclusion;
use crate::monitor::failure::NoFailures;
use crate::monitor::shared_line::SharedLine;
use crate::revocable_lock::monitor::Revocation;
use crate::rw_lock::readers_line;

/// Where the revocable lock keeps its nodes.
pub const REVOCABLE_LOCK_DIR: &str = "/locks/revocable";

/// How long a waiter lets the node in its way take to give up before forcing it out: many times
/// what a connected holder needs to hear the ask between two pieces of work and delete its node,
/// and shorter than what a holder that ignores the ask keeps the lock.
pub const GRACE: Duration = Duration::from_millis(300);

/// The revocable lock's monitors: the read/write lock's, with holders forced out no longer
/// counted as holding, and every ask read heeded.
pub type RevocableMonitors = (MutualExclusion, SharedLine, Revocation, NoFailures);

impl RoleKit for RevocableAccess {
    const DIR: &'static str = REVOCABLE_LOCK_DIR;
    type Monitors = RevocableMonitors;

    fn monitors() -> RevocableMonitors {
        let line = readers_line(REVOCABLE_LOCK_DIR);
        let revocation = Revocation::new(REVOCABLE_LOCK_DIR);
        (MutualExclusion::default(), line, revocation, NoFailures)
    }

    fn part(client: usize, clients: usize) -> u8 {
        Access::part(client, clients)
    }

    fn playing(part: u8) -> RevocableAccess {
        RevocableAccess {
            access: Access::playing(part),
            revocation: Revoke::Force(GRACE),
        }
    }

    fn reads(&self) -> bool {
        self.access.reads()
    }

    /// Long enough (about half a second of work) that a holder that ignores an ask outlasts
    /// [`GRACE`].
    const USES: u32 = 50;
}
