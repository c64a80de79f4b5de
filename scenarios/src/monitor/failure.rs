//! Recipe failures: no recipe gives up on an error it could not handle.

use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

/// No recipe failure: broken when a recipe gave up with an error it should have handled.
pub static RECIPE_FAILED: Property = Property::new("recipe-failed", "no recipe failure");

/// The recipe-failure monitor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct NoFailures;

impl Monitor for NoFailures {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Outcome {
                client,
                session,
                outcome: Outcome::Failed(error),
            } => Some(Violation::new(
                &RECIPE_FAILED,
                entry.at,
                format!("c{client} (s{session}) gave up on {error:?}"),
            )),
            _ => None,
        }
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&RECIPE_FAILED]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::*;

    #[test]
    fn a_recipe_that_gives_up_is_reported() {
        let t = trace(vec![outcome(
            2,
            4,
            Outcome::Failed(zklab_recipes::client::ZkError::NoAuth),
        )]);
        assert_eq!(
            NoFailures.first_in(&t).map(|v| v.property),
            Some(&RECIPE_FAILED)
        );
    }
}
