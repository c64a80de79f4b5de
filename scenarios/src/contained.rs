//! Roles whose directory is a container (`zklab_recipes::parts::contained`), as the lock's and
//! the election's kits run them, and their known bug: a contender that takes the directory for
//! granted.

use zklab_recipes::election::ElectionRole;
use zklab_recipes::lock::LockRole;
use zklab_recipes::parts::contained::Contained;
use zklab_recipes::parts::exclusive::Role;

use crate::exclusive::SoleRole;

/// Where the lock in a container directory keeps its contender nodes.
pub const CONTAINED_LOCK_DIR: &str = "/locks/contained";

/// Where the election in a container directory keeps its candidates' nodes.
pub const CONTAINED_ELECTION_DIR: &str = "/election/contained";

impl SoleRole for Contained<LockRole> {
    const DIR: &'static str = CONTAINED_LOCK_DIR;
    const CONTAINER: bool = true;
}

impl SoleRole for Contained<ElectionRole> {
    const DIR: &'static str = CONTAINED_ELECTION_DIR;
    const CONTAINER: bool = true;
}

/// Role `R` in a container directory, taking the directory for granted: a contender whose
/// create finds it gone (the server's reaper deleted it once the last contender left) reports
/// NoNode to its application instead of making the directory again.
pub type DirectoryTakenForGranted<R> = Contained<R, false>;

impl<R: Role + Default> SoleRole for DirectoryTakenForGranted<R>
where
    Contained<R>: SoleRole,
{
    const DIR: &'static str = <Contained<R> as SoleRole>::DIR;
    const CONTAINER: bool = true;
}
