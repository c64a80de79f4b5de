//! What the model needs to know about a recipe beyond its machine: how a client starts one, what
//! the application asks of it, and where its znodes live.

use std::fmt::Debug;

use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, SessionId};
use zklab_recipes::machine::Recipe;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::Monitor;

/// A recipe as the model checker runs it: one round per client (for a lock: acquire, then
/// release), with a fresh machine whenever a client's session is lost.
pub trait Workload: Clone + Debug + Send + Sync + 'static {
    /// The recipe machine each client runs.
    type Machine: Recipe<Request: Send, Outcome: Send> + RenameSessions + Send + Sync;

    /// Which part client number `client` of `clients` plays (a barrier's controller or a
    /// waiter, say). The part travels with the client's state (a restart in a new session keeps
    /// it), so symmetry reduction, which may move clients between slots, never mistakes one part
    /// for another. By default every client plays the same part.
    fn part(&self, client: usize, clients: usize) -> u8 {
        let _ = (client, clients);
        0
    }

    /// The fewest clients its workload can finish with (a double barrier's round needs its
    /// threshold of participants). By default one.
    fn min_clients(&self) -> usize {
        1
    }

    /// How many clients must still be working for those still working to finish (a double
    /// barrier's round begins only once its threshold is there). Once crashes leave fewer, the
    /// ones left are stranded, not stuck: a run stops them rather than calling it a deadlock. By
    /// default one: a client finishes alone.
    fn quorum_to_finish(&self) -> usize {
        1
    }

    /// What the model makes before any client starts, after the directory, in a session that
    /// then goes: ops applied in order (a queue's items for its consumers, a configuration's
    /// first value). By default nothing.
    fn setup(&self, clients: usize) -> Vec<Op> {
        let _ = clients;
        Vec::new()
    }

    /// Everything the model makes before any client starts: the directory, level by level,
    /// then [`Workload::setup`]. A counterexample replayed in the simulator starts from it too.
    fn initial_ops(&self, clients: usize) -> Vec<Op> {
        let mut ops = directory_creates(self.root());
        ops.extend(self.setup(clients));
        ops
    }

    /// A fresh machine playing `part`, for a client with this session.
    fn machine(&self, part: u8, session: SessionId) -> Self::Machine;

    /// The request the application makes of a client that holds what the recipe grants.
    fn request_when_holding(&self) -> <Self::Machine as Recipe>::Request;

    /// The monitors that judge the recipe: the same ones judge a simulated run, a real run and
    /// every state of the model (which renames them with the rest of the state).
    type Monitors: Monitor + RenameSessions + Send + Sync;

    /// Fresh monitors, before anything happened.
    fn monitors(&self) -> Self::Monitors;

    /// The recipe's znode directory: empty once every client finished, but for what
    /// [`Workload::may_remain`] allows.
    fn root(&self) -> &str;

    /// Whether `child` (a child's name) may stay in the directory once every client is done:
    /// data the recipe keeps for someone, not its own leftovers (a queue's items still queued,
    /// a take record waiting for its consumer's next take). By default nothing may.
    fn may_remain(&self, child: &str) -> bool {
        let _ = child;
        false
    }

    /// Whether `child` may stay once a client has crashed: a node the recipe leaves for its last
    /// user to remove, when every user left died (a double barrier's `ready`, once everyone
    /// still inside its round crashed). The model has no crashes. By default nothing may.
    fn crash_may_leave(&self, child: &str) -> bool {
        let _ = child;
        false
    }

    /// Whether the machine behaves the same under any renaming of sessions, as symmetry
    /// reduction assumes: false for a machine whose decisions depend on the guids in node names.
    fn symmetric(&self) -> bool;

    /// Whether the machines or the monitors ever read a zxid (a stat's czxid, mzxid or pzxid, a
    /// fencing token made of one, a trace event's zxid). By default they may; a workload that
    /// says no is checked with every zxid forgotten (see
    /// [`crate::model::RecipeModel::with_zxids_forgotten`]), which is unsound if it does.
    fn reads_zxids(&self) -> bool {
        true
    }
}

/// The creates that make the directory `root`, level by level (`/a`, then `/a/b`): persistent
/// nodes with no data, as the model starts with them.
pub fn directory_creates(root: &str) -> Vec<Op> {
    let levels = root.match_indices('/').skip(1).map(|(end, _)| end);
    levels
        .chain([root.len()])
        .map(|end| Op::Create {
            path: root[..end].to_owned(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        })
        .collect()
}
