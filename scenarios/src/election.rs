//! The leader election's kit: the exclusive-role kit at [`ELECTION_DIR`], each client leading
//! for a while and resigning, for its number of rounds. Its known bugs: a candidate that takes
//! its predecessor's deletion as its election ([`TrustDeletion`]: two leaders), and candidates
//! that all watch the leader ([`WatchLowest`]: a herd).

pub mod bugs;

use zklab_recipes::election::ElectionRole;

use crate::election::bugs::WatchLowest;
use crate::exclusive::{ExclusiveKit, SoleRole};
use crate::monitor::exclusion::MUTUAL_EXCLUSION;
use crate::monitor::herd::HERD;
use crate::mutation::{Documented, TrustDeletion};
use crate::scenario::{KnownBug, ModelFault, Scenario};

/// Where the election keeps its candidates' nodes.
pub const ELECTION_DIR: &str = "/election/leader";

impl SoleRole for ElectionRole {
    const DIR: &'static str = ELECTION_DIR;
}

/// The election's kit, its machine under mutation `X`.
pub type ElectionKit<X> = ExclusiveKit<ElectionRole, X>;

/// The election's scenarios.
pub static SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "election",
        about: "leader election: lead with a fenced resource, resign, run again",
        bug: None,
        kit: &ElectionKit::<Documented>::KIT,
        states: Some(13_872),
    },
    Scenario {
        name: "election-bug-trust-deletion",
        about: "a candidate leads on its predecessor's deletion without listing again",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 3).with_one(ModelFault::SessionExpiry)),
        kit: &ElectionKit::<TrustDeletion>::KIT,
        states: Some(85_523),
    },
    Scenario {
        name: "election-bug-herd",
        about: "every candidate watches the leader's node (herd effect)",
        bug: Some(KnownBug::new(&[&HERD], 3)),
        kit: &ElectionKit::<WatchLowest>::KIT,
        states: Some(2_161),
    },
];
