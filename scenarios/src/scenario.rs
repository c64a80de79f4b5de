//! What a scenario is: one name for one kit, which `run`, `replay`, `check` and `real` all use.

use crate::kit::AnyKit;

/// A named recipe workload, in the simulator, in the model checker and on a real server.
pub struct Scenario {
    /// The name on the command line: the recipe's (`lock`), or `<recipe>-bug-<what>` for a known
    /// bug.
    pub name: &'static str,
    /// One line on what it exercises.
    pub about: &'static str,
    /// A deliberately broken recipe: the runner and the checker are expected to catch it.
    pub known_bug: bool,
    /// The recipe, its workload and its model.
    pub kit: &'static dyn AnyKit,
    /// The model's distinct states for 2 clients with one of each fault and no reduction,
    /// pinned (as stateright's examples pin theirs): a change to the protocol shows up as a
    /// changed count in review. Every scenario of the catalogue pins it (a test checks); a
    /// scenario of your own may leave it `None` until its protocol settles.
    pub states: Option<usize>,
}

impl Scenario {
    /// Whether its workload can finish with `clients` clients; if not, why.
    pub fn fits(&self, clients: usize) -> Result<(), String> {
        let fewest = self.kit.min_clients();
        if clients >= fewest {
            return Ok(());
        }
        Err(format!(
            "{} needs at least {fewest} clients, not {clients}",
            self.name
        ))
    }
}
