//! What a scenario is: one name for one kit, which `run`, `replay`, `check` and `real` all use.

use zklab_models::model::Budget;
use zklab_sim::property::Property;

use crate::kit::AnyKit;

/// A named recipe workload, in the simulator, in the model checker and on a real server.
pub struct Scenario {
    /// The name on the command line: the recipe's (`lock`), or `<recipe>-bug-<what>` for a known
    /// bug.
    pub name: &'static str,
    /// One line on what it exercises.
    pub about: &'static str,
    /// A deliberately broken recipe, and how the runner and the checker are expected to catch
    /// it; `None` for a recipe that holds.
    pub bug: Option<KnownBug>,
    /// The recipe, its workload and its model.
    pub kit: &'static dyn AnyKit,
    /// The model's distinct states, pinned (as stateright's examples pin theirs) so that a change
    /// to the protocol or to a reduction shows up as a changed count in review: for a recipe with
    /// 2 clients and one of each fault, for a known bug in its [`KnownBug`]'s model; every
    /// reduction sound for the kit, one checker thread. Every scenario of the catalogue pins it (a test checks); a
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

/// How a known bug is caught, stated beside it: what the simulator shows, and the small model in
/// which the checker breaks its property (tests/kits.rs holds every known bug to it).
pub struct KnownBug {
    /// The properties whose violation the simulator may report first: the one the bug breaks,
    /// or one its breaking shows up as first (a client stuck for good also never finishes).
    pub shows: &'static [&'static Property],
    /// How many clients the model needs to break it.
    pub clients: usize,
    /// The faults the model needs to break it.
    pub budget: Budget,
    /// The model's property it breaks: a declared property's name, or the model's own
    /// [`NO_STUCK_STATE`](zklab_models::model::NO_STUCK_STATE).
    pub breaks: &'static str,
    /// Only a lagging follower shows it: the model has one server, whose reads are never stale,
    /// so there its property holds (a test says so, and fails the day the model gains
    /// followers, to move the bug back among those the model catches).
    pub needs_a_follower: bool,
}
