//! Shared helpers of the integration tests.

use zklab::scenarios::catalogue;
use zklab::scenarios::scenario::Scenario;

/// The scenario of that name; the catalogue must have it.
pub fn scenario(name: &str) -> &'static Scenario {
    catalogue::find(name).unwrap_or_else(|message| panic!("{message}"))
}
