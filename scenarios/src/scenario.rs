//! What a scenario is: a workload each simulated client runs, the znode directory its recipe
//! uses, and whether it is a known bug the harness must catch.

use std::future::Future;
use std::pin::Pin;

use zklab_sim::client::SimClient;
use zklab_sim::ensemble::SimZk;
use zklab_sim::trace::ClientId;

use crate::resource::FencedResource;

/// What one client's workload gets to work with.
pub struct ClientContext {
    /// The simulated ZooKeeper service: connect to it for a session.
    pub zk: SimZk,
    /// Which client this is.
    pub client: ClientId,
    /// How many rounds of work (for a lock: acquisitions) to complete.
    pub rounds: u32,
    /// The resource the recipe protects.
    pub resource: FencedResource,
}

/// One client's workload: it returns its last session, still open, once its rounds are done
/// (the runner checks for orphans before closing it), or `None` if it had to give up.
pub type Workload = fn(ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>>;

/// A named, seeded, fault-injected scenario.
pub struct Scenario {
    /// The name on the command line.
    pub name: &'static str,
    /// One line on what it exercises.
    pub about: &'static str,
    /// The recipe's znode directory: nothing may be left in it once every client has finished.
    pub root: &'static str,
    /// A deliberately broken recipe: the runner is expected to report a violation.
    pub known_bug: bool,
    /// What each client runs.
    pub workload: Workload,
}
