//! The conformance cases through the drop-in `zookeeper-client`: [`DropInZk`], the adapter of
//! [`RealZk`](crate::recipes::real_zk::RealZk) compiled over the drop-in's API instead of the
//! real crate's, runs a case's sessions on the simulated service, while `RealZk` runs them on a
//! real server. The drop-in's answers (errors included), what its watchers and state watchers
//! give and the tree it leaves are compared as the pure server's are.

use madsim::runtime::{Handle, Runtime};

use super::case::Step;
use super::observe::{observe, prepare_root, NoFaults, Observation};
use crate::recipes::client::{ZkClient, ZkError};
use crate::sim::connect_string;
use crate::sim::fault::{FaultPlan, FaultRates};
use crate::sim::service::SimZk;

/// `RealZk`'s body over the drop-in.
mod over_the_drop_in {
    use zklab_zookeeper_client as zk;

    include!("../../recipes/src/real_zk/over_the_api.rs");

    /// How the adapter waits: on the simulator's clock.
    fn pause(duration: Duration) -> impl Future<Output = ()> + Send {
        madsim::time::sleep(duration)
    }
}

/// A session of the simulated service through the drop-in `zookeeper-client`, as a
/// [`ZkClient`].
pub use self::over_the_drop_in::RealZk as DropInZk;

/// Runs `steps` of `sessions` sessions through the drop-in on a fresh simulated server without
/// faults, under `root`: every session, the observer's too, is one client process's.
pub(super) fn simulate_through_drop_in(
    sessions: usize,
    steps: &[Step],
    root: &str,
) -> Result<Observation, ZkError> {
    let runtime = Runtime::with_seed_and_config(0, madsim::Config::default());
    let (steps, root) = (steps.to_vec(), root.to_owned());
    runtime.block_on(async move {
        let plan = FaultPlan {
            rates: FaultRates::none(),
            script: Vec::new(),
        };
        let zk = SimZk::start(super::case_config(1), plan);
        let process = Handle::current().create_node().build();
        zk.add_process(1, process.id());
        let hosts = connect_string::of(zk.server_count());
        let timeout = zk.session_timeout();
        let case = process.spawn(async move {
            let observer = DropInZk::connect(&hosts, timeout).await?;
            prepare_root(&observer, &root).await?;
            let mut clients = Vec::with_capacity(sessions);
            for _ in 0..sessions {
                clients.push(DropInZk::connect(&hosts, timeout).await?);
            }
            let observed = observe(&clients, &observer, &steps, &root, &NoFaults).await;
            for client in clients.iter().chain([&observer]) {
                let _ = client.close().await;
            }
            observed
        });
        let observed = case.await.map_err(|_| ZkError::SystemError)?;
        zk.end_tasks();
        observed
    })
}
