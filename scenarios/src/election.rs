//! The leader election's kit: the exclusive-role kit at [`ELECTION_DIR`], each client leading
//! for a while and resigning, for its number of rounds. Its known bugs: a candidate that takes
//! its predecessor's deletion as its election ([`TrustDeletion`]: two leaders), and candidates
//! that all watch the leader ([`WatchLowest`]: a herd).
//!
//! [`TrustDeletion`]: crate::mutation::TrustDeletion
//! [`WatchLowest`]: bugs::WatchLowest

pub mod bugs;

use zklab_recipes::election::ElectionRole;
use zklab_recipes::parts::contained::Contained;

use crate::exclusive::{ExclusiveKit, SoleRole};

/// Where the election keeps its candidates' nodes.
pub const ELECTION_DIR: &str = "/election/leader";

impl SoleRole for ElectionRole {
    const DIR: &'static str = ELECTION_DIR;
}

/// The election's kit, its machine under mutation `X`.
pub type ElectionKit<X> = ExclusiveKit<ElectionRole, X>;

/// The kit of the election whose directory is a container (see [`crate::contained`]), its
/// machine under mutation `X`.
pub type ContainedElectionKit<X> = ExclusiveKit<Contained<ElectionRole>, X>;
