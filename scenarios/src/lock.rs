//! The lock's kit: the exclusive-role kit at [`LOCK_DIR`]. Its known bugs are the lock under the
//! [`BlindRetry`], [`GiveUp`], [`WatchParent`], [`SortByName`] and [`LostWakeup`] mutations.
//!
//! [`BlindRetry`]: crate::mutation::BlindRetry
//! [`GiveUp`]: bugs::GiveUp
//! [`WatchParent`]: crate::mutation::WatchParent
//! [`SortByName`]: bugs::SortByName
//! [`LostWakeup`]: crate::mutation::LostWakeup

pub mod bugs;

use zklab_recipes::lock::LockRole;
use zklab_recipes::parts::contained::Contained;

use crate::exclusive::{ExclusiveKit, SoleRole};

/// Where the lock keeps its contender nodes.
pub const LOCK_DIR: &str = "/locks/lock";

impl SoleRole for LockRole {
    const DIR: &'static str = LOCK_DIR;
}

/// The lock's kit, its machine under mutation `X`.
pub type LockKit<X> = ExclusiveKit<LockRole, X>;

/// The kit of the lock whose directory is a container (as Curator 5 keeps it, see
/// [`crate::contained`]), its machine under mutation `X`.
pub type ContainedLockKit<X> = ExclusiveKit<Contained<LockRole>, X>;
