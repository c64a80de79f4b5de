//! The two sides of a case with faults: the simulated service, whose faults are the
//! simulator's own, and a real server whose command port carries out the same ones.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use madsim::runtime::{Handle, Runtime};

use super::case::Step;
use super::observe::{observe, prepare_root, Faults, Observation, SETTLE_BOUND};
use crate::launcher::{ControlCommand, Controller, Ensemble, LaunchError};
use crate::recipes::client::{Op, OpReply, ZkClient, ZkError};
use crate::sim::fault::{FaultPlan, FaultRates};
use crate::sim::service::{SimConfig, SimZk};
use crate::sim::sim_client::SimClient;

/// How long the real server is given to apply a write whose reply it swallows, before its
/// connection is dropped. It applies one in about a millisecond on loopback.
const APPLY_BOUND: Duration = Duration::from_millis(200);

/// How long a simulated follower stays down for [`Step::Away`]: far longer than the steps the
/// other sessions take meanwhile (milliseconds of simulated time), so it restarts at `Back`'s
/// wait, as the real one restarts at `Back`.
const AWAY_FOR: Duration = Duration::from_secs(5);

// `Back` waits at most `SETTLE_BOUND` for the follower's restart and the session's reconnect.
const _: () = assert!(AWAY_FOR.as_millis() + 1000 < SETTLE_BOUND.as_millis());

/// The session timeout of a simulated ensemble, as asked of the real one: a follower's restart
/// takes seconds there, and its sessions must outlive it.
const ENSEMBLE_SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// The simulator's faults, struck at once.
struct SimFaults {
    zk: SimZk,
    /// In an ensemble, the follower session 0 is pinned to.
    follower: Option<usize>,
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

    async fn away(&self, _: &SimClient) -> Result<(), ZkError> {
        let follower = self.follower.ok_or(ZkError::Unimplemented)?;
        self.zk.crash_server(follower, AWAY_FOR);
        Ok(())
    }

    /// The follower restarts by itself, while the step waits for the session.
    async fn back(&self, _: &SimClient) -> Result<(), ZkError> {
        self.follower.map(|_| ()).ok_or(ZkError::Unimplemented)
    }
}

/// The simulated service a case runs on.
#[derive(Clone, Copy, Debug)]
pub(super) enum Simulated {
    /// One server.
    Standalone,
    /// Three: session 0 is pinned to a follower, the others and the observer use the leader.
    Ensemble,
}

/// The follower of a simulated ensemble that session 0 is pinned to.
const PINNED_FOLLOWER: usize = 1;

/// Runs `steps` of `sessions` sessions on a fresh simulated service, under `root`. The
/// simulated clock runs only as the case needs, so a fault step's wait costs nothing.
pub(super) fn simulate(
    service: Simulated,
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
        let (config, follower) = match service {
            Simulated::Standalone => (super::case_config(1), None),
            Simulated::Ensemble => (
                SimConfig {
                    session_timeout: ENSEMBLE_SESSION_TIMEOUT,
                    ..super::case_config(3)
                },
                Some(PINNED_FOLLOWER),
            ),
        };
        let zk = SimZk::start(config, plan);
        let leader = 0;
        let observer = zk.connect_to(0, leader);
        prepare_root(&observer, root).await?;
        let mut clients = Vec::with_capacity(sessions);
        for client in 1..=sessions as u32 {
            let node = Handle::current().create_node().build();
            zk.add_process(client, node.id());
            clients.push(match follower {
                Some(follower) if client == 1 => zk.connect_pinned(client, follower),
                _ => zk.connect_to(client, leader),
            });
        }
        let faults = SimFaults { zk, follower };
        let observed = observe(&clients, &observer, steps, root, &faults).await;
        faults.zk.end_tasks();
        observed
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

impl<C: ZkClient + Sync> Faults<C> for ControllerFaults<'_> {
    async fn expire(&self, session: &C) -> Result<(), ZkError> {
        self.send(ControlCommand::ExpireSession(session.session_id()))
    }

    async fn disconnect(&self, session: &C) -> Result<(), ZkError> {
        self.send(ControlCommand::CloseConnection(session.session_id()))
    }

    /// The server swallows the next reply; once it has had time to apply the write, the
    /// connection is dropped, as a lost reply drops it in the simulator.
    async fn lose_reply(&self, session: &C, op: Op) -> OpReply {
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

/// A real ensemble's faults: a follower killed and restarted.
pub(super) struct EnsembleFaults<'a> {
    ensemble: &'a Mutex<Ensemble>,
    /// The follower session 0 is attached to.
    follower: usize,
    /// The leader the other sessions know.
    leader: usize,
    /// Whether a kill or restart failed, or another member came to lead: the ensemble can no
    /// longer serve the comparison.
    broken: AtomicBool,
}

impl<'a> EnsembleFaults<'a> {
    pub(super) fn new(ensemble: &'a Mutex<Ensemble>, follower: usize, leader: usize) -> Self {
        EnsembleFaults {
            ensemble,
            follower,
            leader,
            broken: AtomicBool::new(false),
        }
    }

    /// Whether the ensemble failed the case: the run says nothing, and cannot go on.
    pub(super) fn broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    /// Runs `act` on the ensemble, off the runtime's worker (a restart waits for seconds); an
    /// ensemble that fails it is broken.
    fn act<T>(
        &self,
        act: impl FnOnce(&mut Ensemble) -> Result<T, LaunchError>,
    ) -> Result<T, ZkError> {
        let result = tokio::task::block_in_place(|| {
            let mut ensemble = self.ensemble.lock().unwrap_or_else(|e| e.into_inner());
            act(&mut ensemble)
        });
        result.map_err(|_| {
            self.broken.store(true, Ordering::Relaxed);
            ZkError::SystemError
        })
    }
}

impl<C: ZkClient> Faults<C> for EnsembleFaults<'_> {
    async fn away(&self, _: &C) -> Result<(), ZkError> {
        self.act(|ensemble| ensemble.kill(self.follower))
    }

    /// The member restarts; the same member must lead as before.
    async fn back(&self, _: &C) -> Result<(), ZkError> {
        let leader = self.act(|ensemble| ensemble.restart(self.follower))?;
        if leader != self.leader {
            self.broken.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}
