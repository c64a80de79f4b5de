//! One client of a harness run: a connected session that the code under test uses as any
//! [`ZkClient`], and the faults the test may cause on purpose, as Curator's `KillSession` and
//! kazoo's `expire_session()`/`lose_connection()` do, but at a seeded instant. The same client
//! runs on the simulated ZooKeeper or on a real one.

use std::sync::Arc;
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, SessionId, ZkClient, ZkError, ZkEvent};
use zklab_recipes::outcome::Recorder;
use zklab_sim::fault::FaultKind;
use zklab_sim::service::SimZk;
use zklab_sim::sim_client::{SimClient, TraceRecorder};
use zklab_sim::trace::{ClientId, TraceEvent};

#[cfg(feature = "real")]
use super::real_harness::ServerControl;
#[cfg(feature = "real")]
use crate::real::{RealRecorder, RealTrace, TracedSession};

/// One client process of a [`Harness`](super::Harness) run, with its session.
///
/// It is a [`ZkClient`] itself: pass `&client` to the code under test (or to a zklab recipe).
/// Every call goes to its current session, which [`TestClient::reconnect`] replaces.
pub struct TestClient {
    client: ClientId,
    clients: ClientId,
    place: Place,
}

/// Where the client runs.
enum Place {
    /// In the simulator.
    Sim { zk: SimZk, session: SimClient },
    /// Against a real ZooKeeper.
    #[cfg(feature = "real")]
    Real(Box<RealPlace>),
}

/// A client of a real ZooKeeper: how to reach it, the session, and what can strike it.
#[cfg(feature = "real")]
pub(crate) struct RealPlace {
    pub(crate) hosts: String,
    pub(crate) session_timeout: Duration,
    pub(crate) trace: RealTrace,
    pub(crate) control: Option<Arc<dyn ServerControl>>,
    pub(crate) session: TracedSession,
}

impl TestClient {
    /// Simulated client `client` of `clients`, with a new session. Call it on the client's own
    /// node, where the session's heartbeat runs.
    pub(crate) fn simulated(zk: SimZk, client: ClientId, clients: ClientId) -> Self {
        let session = zk.connect(client);
        TestClient {
            client,
            clients,
            place: Place::Sim { zk, session },
        }
    }

    /// Client `client` of `clients` of a real ZooKeeper, with its session.
    #[cfg(feature = "real")]
    pub(crate) fn real(client: ClientId, clients: ClientId, place: RealPlace) -> Self {
        TestClient {
            client,
            clients,
            place: Place::Real(Box::new(place)),
        }
    }

    /// Which client this is: 0, 1, ... (give each client its part by it).
    pub fn index(&self) -> u32 {
        self.client
    }

    /// How many clients the run has.
    pub fn clients(&self) -> u32 {
        self.clients
    }

    /// The ensemble's connect string, for code that opens sessions of its own with a client
    /// library (`zklab-zookeeper-client`, which under the simulator connects to the simulated
    /// ensemble by it): the simulated servers' hosts, or the real run's `hosts`.
    pub fn connect_string(&self) -> String {
        match &self.place {
            Place::Sim { zk, .. } => zklab_sim::connect_string::of(zk.server_count()),
            #[cfg(feature = "real")]
            Place::Real(real) => real.hosts.clone(),
        }
    }

    /// Opens a new session in place of the current one, as an application does once its session
    /// has expired. The old one is left as it is (close it first to end it).
    pub async fn reconnect(&mut self) {
        match &mut self.place {
            Place::Sim { zk, session } => *session = zk.connect(self.client),
            #[cfg(feature = "real")]
            Place::Real(real) => {
                let (hosts, timeout) = (&real.hosts, real.session_timeout);
                real.session =
                    TracedSession::connect(hosts, timeout, self.client, &real.trace).await;
            }
        }
    }

    /// Time since the run began: sim time in the simulator, what the trace's times count.
    pub fn elapsed(&self) -> Duration {
        match &self.place {
            Place::Sim { zk, .. } => zk.elapsed(),
            #[cfg(feature = "real")]
            Place::Real(real) => real.trace.elapsed(),
        }
    }

    /// Writes a line of the test's own into the trace, beside the client's calls.
    pub fn note(&self, text: impl Into<String>) {
        let note = TraceEvent::Note {
            client: self.client,
            text: text.into(),
        };
        match &self.place {
            Place::Sim { zk, .. } => zk.record(note),
            #[cfg(feature = "real")]
            Place::Real(real) => real.trace.push(note),
        }
    }

    /// Where a zklab recipe run by this client writes what it tells the application, so that
    /// the monitors judge it (a recipe's `.recording(Some(client.recorder()))`).
    pub fn recorder(&self) -> Arc<dyn Recorder> {
        match &self.place {
            Place::Sim { zk, .. } => Arc::new(TraceRecorder::new(zk.clone(), self.client)),
            #[cfg(feature = "real")]
            Place::Real(real) => Arc::new(RealRecorder {
                client: self.client,
                trace: real.trace.clone(),
            }),
        }
    }

    /// The server expires the current session now: its ephemeral nodes go, and the client
    /// hears `Expired` when it next hears from the server. On a real server this needs the
    /// control the run was given.
    pub fn expire_session(&self) {
        match &self.place {
            Place::Sim { zk, session } => zk.expire_session(session.session_id()),
            #[cfg(feature = "real")]
            Place::Real(real) => {
                let expire = |control: &dyn ServerControl, session| control.expire(session);
                let session = real.strike(
                    "expire_session",
                    self.client,
                    FaultKind::SessionExpiry,
                    expire,
                );
                real.trace.end_session(self.client, session);
            }
        }
    }

    /// The server drops the connection now; the session lives, and the client reconnects
    /// (its calls in flight fail with ConnectionLoss). On a real server this needs the control
    /// the run was given.
    pub fn disconnect(&self) {
        match &self.place {
            Place::Sim { zk, session } => zk.drop_connection(session.session_id()),
            #[cfg(feature = "real")]
            Place::Real(real) => {
                let disconnect = |control: &dyn ServerControl, session| control.disconnect(session);
                real.strike(
                    "disconnect",
                    self.client,
                    FaultKind::ConnectionLoss,
                    disconnect,
                );
            }
        }
    }

    /// The reply to the client's next request is lost after the server applied it, and the
    /// connection breaks: the call fails with ConnectionLoss though it took effect. Simulator
    /// only.
    pub fn lose_next_reply(&self) {
        self.service_for("lose_next_reply")
            .lose_next_reply(self.client);
    }

    /// Cuts the client off from every server for `duration`; returns at once (the client's
    /// calls meanwhile wait, and the session expires if it lasts past the session timeout).
    /// Simulator only.
    pub async fn partition(&self, duration: Duration) {
        let zk = self.service_for("partition");
        zk.strike(FaultKind::Partition, self.client, duration).await;
    }

    /// Pauses the client's whole process for `duration` (a long garbage collection, say):
    /// returns once it runs again. Simulator only.
    pub async fn pause(&self, duration: Duration) {
        let zk = self.service_for("pause");
        zk.strike(FaultKind::Pause, self.client, duration).await;
    }

    /// Kills the client's process: never returns. Its session lives on until the server
    /// expires it. Simulator only.
    pub async fn crash(&self) {
        let zk = self.service_for("crash");
        zk.strike(FaultKind::Crash, self.client, Duration::ZERO)
            .await;
        std::future::pending::<()>().await;
    }

    /// The simulated service, for a fault only it can cause.
    #[cfg_attr(not(feature = "real"), allow(unused_variables))]
    fn service_for(&self, fault: &str) -> &SimZk {
        match &self.place {
            Place::Sim { zk, .. } => zk,
            #[cfg(feature = "real")]
            Place::Real(_) => panic!(
                "{fault} is simulated only: a real ZooKeeper's client cannot be struck so from \
                 within its own test"
            ),
        }
    }
}

#[cfg(feature = "real")]
impl RealPlace {
    /// Strikes `client`'s current session with `kind` through the run's control of the real
    /// server (`by` is how; `fault` names it if the run has no control), and writes so into the
    /// trace; returns the session struck.
    fn strike(
        &self,
        fault: &str,
        client: ClientId,
        kind: FaultKind,
        by: impl FnOnce(&dyn ServerControl, SessionId),
    ) -> SessionId {
        let control = self.control.as_deref().unwrap_or_else(|| {
            panic!("{fault} on a real ZooKeeper needs the run's ServerControl (run_real's control)")
        });
        let session = self.session.session_id();
        by(control, session);
        self.trace.push(TraceEvent::Fault {
            kind,
            client,
            detail: format!("the test strikes s{session}"),
            lasts: Duration::ZERO,
        });
        session
    }
}

impl ZkClient for TestClient {
    async fn call(&self, op: Op) -> OpReply {
        match &self.place {
            Place::Sim { session, .. } => session.call(op).await,
            #[cfg(feature = "real")]
            Place::Real(real) => real.session.call(op).await,
        }
    }

    async fn next_event(&self) -> Option<ZkEvent> {
        match &self.place {
            Place::Sim { session, .. } => session.next_event().await,
            #[cfg(feature = "real")]
            Place::Real(real) => real.session.next_event().await,
        }
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        match &self.place {
            Place::Sim { session, .. } => session.try_next_event(),
            #[cfg(feature = "real")]
            Place::Real(real) => real.session.try_next_event(),
        }
    }

    fn session_id(&self) -> SessionId {
        match &self.place {
            Place::Sim { session, .. } => session.session_id(),
            #[cfg(feature = "real")]
            Place::Real(real) => real.session.session_id(),
        }
    }

    fn listener(&self) -> Self {
        let place = match &self.place {
            Place::Sim { zk, session } => Place::Sim {
                zk: zk.clone(),
                session: session.listener(),
            },
            #[cfg(feature = "real")]
            Place::Real(real) => Place::Real(Box::new(RealPlace {
                hosts: real.hosts.clone(),
                session_timeout: real.session_timeout,
                trace: real.trace.clone(),
                control: real.control.clone(),
                session: real.session.listener(),
            })),
        };
        TestClient {
            client: self.client,
            clients: self.clients,
            place,
        }
    }

    async fn close(&self) -> Result<(), ZkError> {
        match &self.place {
            Place::Sim { session, .. } => session.close().await,
            #[cfg(feature = "real")]
            Place::Real(real) => real.session.close().await,
        }
    }

    async fn sleep(&self, duration: Duration) {
        match &self.place {
            Place::Sim { session, .. } => session.sleep(duration).await,
            #[cfg(feature = "real")]
            Place::Real(real) => real.session.sleep(duration).await,
        }
    }
}
