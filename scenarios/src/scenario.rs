//! What a scenario is: one name for one kit, which `run`, `replay`, `check` and `real` all use.

use zklab_models::budget::Budget;
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
/// which the checker breaks its property (tests/kits.rs holds every known bug to it). A catalogue
/// entry states it in a line, `KnownBug::new(&[&HERD], 3)`, followed where they apply by the
/// property the model breaks if not the first shown, the faults it needs, and its need of a
/// follower. (The catalogue's entries are `static`s, where `&[&HERD]` lives as long.)
pub struct KnownBug {
    /// The properties whose violation the simulator may report first: the one the bug breaks,
    /// or one its breaking shows up as first (a client stuck for good also never finishes).
    pub shows: &'static [&'static Property],
    /// How many clients the model needs to break it.
    pub clients: usize,
    /// The faults the model needs to break it.
    pub budget: Budget,
    /// The model's property it breaks: a declared property's name, or the model's own
    /// [`NO_STUCK_STATE`](zklab_models::general_properties::NO_STUCK_STATE).
    pub breaks: &'static str,
    /// What it needs that the model lacks, if anything: there its property holds (a test says
    /// so, and fails the day the model gains it, to move the bug back among those the model
    /// catches).
    pub beyond_the_model: Option<BeyondTheModel>,
}

/// What a known bug needs to show that the model lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeyondTheModel {
    /// A lagging follower: the model has one server, whose reads are never stale.
    LaggingFollower,
    /// Watches lost with a broken connection: the model's server keeps a session's watches
    /// across a break, so a change made meanwhile is still heard.
    WatchesLostWithTheConnection,
}

impl BeyondTheModel {
    /// Its name in `zklab list --json`.
    pub fn name(self) -> &'static str {
        match self {
            BeyondTheModel::LaggingFollower => "lagging-follower",
            BeyondTheModel::WatchesLostWithTheConnection => "watches-lost-with-the-connection",
        }
    }
}

impl KnownBug {
    /// A bug the model breaks with `clients` clients and no fault, breaking the first property
    /// of `shows`, and the simulator shows as a violation of one of `shows`.
    pub const fn new(shows: &'static [&'static Property], clients: usize) -> KnownBug {
        KnownBug {
            shows,
            clients,
            budget: Budget::NONE,
            breaks: shows[0].name,
            beyond_the_model: None,
        }
    }

    /// The same bug, whose model breaks `breaks` instead: another of `shows`, or the model's own
    /// [`NO_STUCK_STATE`](zklab_models::general_properties::NO_STUCK_STATE).
    pub const fn breaking(self, breaks: &'static str) -> KnownBug {
        KnownBug { breaks, ..self }
    }

    /// The same bug, which the model needs one more `fault` to break.
    pub const fn with_one(mut self, fault: ModelFault) -> KnownBug {
        let allowed = match fault {
            ModelFault::ConnectionLoss => &mut self.budget.connection_loss,
            ModelFault::LostReply => &mut self.budget.lost_reply,
            ModelFault::SessionExpiry => &mut self.budget.session_expiry,
            ModelFault::Pause => &mut self.budget.pause,
        };
        *allowed += 1;
        self
    }

    /// The same bug, which needs `what` the model lacks to show.
    pub const fn beyond_the_model(self, what: BeyondTheModel) -> KnownBug {
        KnownBug {
            beyond_the_model: Some(what),
            ..self
        }
    }
}

/// A fault the model injects within its [`Budget`], as a known bug names those it needs.
#[derive(Clone, Copy, Debug)]
pub enum ModelFault {
    /// The connection drops before an op reaches the server.
    ConnectionLoss,
    /// An op is applied and its reply lost.
    LostReply,
    /// The server expires a session.
    SessionExpiry,
    /// A timer goes off while the world is not quiet yet (a paused process, a partition).
    Pause,
}
