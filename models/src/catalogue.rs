//! The models `zklab check` knows: the same lock machines as the scenarios of those names.

use zklab_recipes::lock::LockVariant;

use crate::check::{check, CheckOptions, CheckReport};
use crate::workload::LockWorkload;

/// A named model.
pub struct ModelEntry {
    /// The name on the command line.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// A deliberately broken recipe: some property is expected to fail.
    pub known_bug: bool,
    variant: LockVariant,
}

impl ModelEntry {
    /// Checks this model; `progress` hears the states generated and unique so far.
    pub fn check(&self, options: &CheckOptions, progress: &dyn Fn(usize, usize)) -> CheckReport {
        check(LockWorkload::new(self.variant), options, progress)
    }
}

/// Every model, in listing order.
pub const MODELS: &[ModelEntry] = &[
    ModelEntry {
        name: "lock",
        about: "exclusive lock: each client acquires once and releases",
        known_bug: false,
        variant: LockVariant::Correct,
    },
    ModelEntry {
        name: "lock-bug-blind-retry",
        about: "after ConnectionLoss on create, create again without looking for the guid",
        known_bug: true,
        variant: LockVariant::BlindRetry,
    },
    ModelEntry {
        name: "lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        known_bug: true,
        variant: LockVariant::Herd,
    },
];

/// The model of that name, or an error that lists the known ones.
pub fn find(name: &str) -> Result<&'static ModelEntry, String> {
    MODELS
        .iter()
        .find(|model| model.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = MODELS.iter().map(|m| m.name).collect();
            format!("unknown model `{name}`; known models: {}", known.join(", "))
        })
}
