//! What a client's application makes of its machine's outcomes: whether it holds what the
//! recipe grants (and may ask the machine to give it back), whether its round is over, whether
//! the recipe gave up. The model's clients and a forced run of the recipe's code
//! (`zklab_scenarios::follow`) judge alike by it.

use zklab_recipes::client::ZkError;
use zklab_recipes::outcome::Outcome;

/// A client's application, as far as one round goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Application {
    /// It believes it holds what the recipe grants.
    pub holds: bool,
    /// It has let go, or passed (the round is over once the machine is done).
    pub round_over: bool,
    /// The recipe gave up on this error.
    pub failed: Option<ZkError>,
}

impl Application {
    /// Hears one outcome of its machine.
    pub fn hear(&mut self, outcome: &Outcome) {
        match outcome {
            outcome if outcome.starts_hold() => self.holds = true,
            // A suspended holder still holds (its node stands) until it learns otherwise.
            Outcome::Suspended => {}
            Outcome::Lost => self.holds = false,
            Outcome::Failed(error) => (self.holds, self.failed) = (false, Some(*error)),
            outcome if outcome.ends_round() => (self.holds, self.round_over) = (false, true),
            _ => {}
        }
    }

    /// Whether it may ask its machine to give back what it holds.
    pub fn may_ask(&self) -> bool {
        self.holds && !self.round_over
    }

    /// Whether a machine that is done leaves it finished (rather than starting over in a new
    /// session).
    pub fn finished_once_done(&self) -> bool {
        self.round_over || self.failed.is_some()
    }
}
