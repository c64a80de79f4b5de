//! The scenario catalogue: every scenario the runner knows, by name. Known bugs stay here for
//! good, so the harness keeps proving it catches them.

use crate::lock;
use crate::scenario::Scenario;

/// Every scenario, in listing order.
pub const CATALOGUE: &[Scenario] = &[
    Scenario {
        name: "lock",
        about: "exclusive lock: acquire, use a fenced resource, release",
        root: lock::LOCK_DIR,
        known_bug: false,
        workload: lock::correct,
    },
    Scenario {
        name: "lock-bug-blind-retry",
        about: "after ConnectionLoss on create, create again without looking for the guid",
        root: lock::LOCK_DIR,
        known_bug: true,
        workload: lock::blind_retry,
    },
    Scenario {
        name: "lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        root: lock::LOCK_DIR,
        known_bug: true,
        workload: lock::herd,
    },
];

/// The scenario of that name, or an error that lists the known ones.
pub fn find(name: &str) -> Result<&'static Scenario, String> {
    CATALOGUE
        .iter()
        .find(|scenario| scenario.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = CATALOGUE.iter().map(|s| s.name).collect();
            format!(
                "unknown scenario `{name}`; known scenarios: {}",
                known.join(", ")
            )
        })
}
