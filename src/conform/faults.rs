//! The two sides of a case with faults: the simulated service, whose faults are the
//! simulator's own, and a real server whose command port carries out the same ones.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use madsim::runtime::{Handle, Runtime};

use super::case::Step;
use super::observe::{create_root, observe, Faults, Observation};
use crate::launcher::{ControlCommand, Controller};
use crate::recipes::client::{Op, OpReply, ZkClient, ZkError};
use crate::recipes::real::RealZk;
use crate::sim::client::SimClient;
use crate::sim::ensemble::{SimConfig, SimZk};
use crate::sim::fault::{FaultPlan, FaultRates};

/// How long the real server is given to apply a write whose reply it swallows, before its
/// connection is dropped. It applies one in about a millisecond on loopback.
const APPLY_BOUND: Duration = Duration::from_millis(200);

/// The simulator's faults, struck at once.
struct SimFaults {
    zk: SimZk,
}

impl Faults<SimClient> for SimFaults {
    async fn expire(&self, session: &SimClient) -> Result<(), ZkError> {
        self.zk.expire_session(session.session_id());
        Ok(())
    }

    async fn disconnect(&self, session: &SimClient) -> Result<(), ZkError> {
        self.zk.drop_connection(session.session_id());
        Ok(())
    }

    async fn lose_reply(&self, session: &SimClient, op: Op) -> OpReply {
        self.zk.lose_next_reply(session.client_id());
        session.call(op).await
    }
}

/// Runs `steps` of `sessions` sessions on a fresh simulated standalone server, under `root`.
/// The simulated clock runs only as the case needs, so a fault step's wait costs nothing.
pub(super) fn simulate(
    sessions: usize,
    steps: &[Step],
    root: &str,
) -> Result<Observation, ZkError> {
    let runtime = Runtime::with_seed_and_config(0, madsim::Config::default());
    runtime.block_on(async move {
        let plan = FaultPlan {
            rates: FaultRates::none(),
            script: Vec::new(),
        };
        let zk = SimZk::start(SimConfig::default(), plan);
        let observer = zk.connect(0);
        create_root(&observer, root).await?;
        let mut clients = Vec::with_capacity(sessions);
        for client in 1..=sessions as u32 {
            let node = Handle::current().create_node().build();
            zk.add_process(client, node.id());
            clients.push(zk.connect(client));
        }
        let faults = SimFaults { zk };
        Ok(observe(&clients, &observer, steps, root, &faults).await)
    })
}

/// A real server's faults, through its command port.
pub(super) struct ControllerFaults<'a> {
    controller: &'a Controller,
    /// Whether a lost reply came back all the same: the server swallowed another reply in the
    /// moment between the command and the write (a ping's, of any session).
    missed: AtomicBool,
}

impl<'a> ControllerFaults<'a> {
    pub(super) fn new(controller: &'a Controller) -> Self {
        ControllerFaults {
            controller,
            missed: AtomicBool::new(false),
        }
    }

    /// Whether a lost reply missed its write: the run says nothing.
    pub(super) fn missed(&self) -> bool {
        self.missed.load(Ordering::Relaxed)
    }

    fn send(&self, command: ControlCommand) -> Result<(), ZkError> {
        self.controller
            .send(command)
            .map_err(|_| ZkError::SystemError)
    }
}

impl Faults<RealZk> for ControllerFaults<'_> {
    async fn expire(&self, session: &RealZk) -> Result<(), ZkError> {
        self.send(ControlCommand::ExpireSession(session.session_id()))
    }

    async fn disconnect(&self, session: &RealZk) -> Result<(), ZkError> {
        self.send(ControlCommand::CloseConnection(session.session_id()))
    }

    /// The server swallows the next reply; once it has had time to apply the write, the
    /// connection is dropped, as a lost reply drops it in the simulator.
    async fn lose_reply(&self, session: &RealZk, op: Op) -> OpReply {
        self.send(ControlCommand::NoResponse(1))?;
        let drop_later = async {
            session.sleep(APPLY_BOUND).await;
            self.send(ControlCommand::CloseConnection(session.session_id()))
        };
        let (reply, dropped) = futures::join!(session.call(op), drop_later);
        // A reply the server never sent (the client refused the op) leaves it swallowing.
        let reset = self.send(ControlCommand::Reset);
        dropped.and(reset)?;
        if reply != Err(ZkError::ConnectionLoss) {
            self.missed.store(true, Ordering::Relaxed);
        }
        reply
    }
}
