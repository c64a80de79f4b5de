//! One client of a harness run: a connected session that the code under test uses as any
//! [`ZkClient`], and the faults the test may cause on purpose, as Curator's `KillSession` and
//! kazoo's `expire_session()`/`lose_connection()` do, but at a seeded instant.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, SessionId, ZkClient, ZkError, ZkEvent};
use zklab_recipes::outcome::Recorder;
use zklab_sim::client::{SimClient, TraceRecorder};
use zklab_sim::ensemble::SimZk;
use zklab_sim::fault::FaultKind;
use zklab_sim::trace::{ClientId, TraceEvent};

/// One simulated client process of a [`Harness`](super::Harness) run, with its session.
///
/// It is a [`ZkClient`] itself: pass `&client` to the code under test (or to a zklab recipe).
/// Every call goes to its current session, which [`TestClient::reconnect`] replaces.
pub struct TestClient {
    zk: SimZk,
    client: ClientId,
    clients: ClientId,
    session: SimClient,
}

impl TestClient {
    /// Client `client` of `clients`, with a new session. Call it on the client's own node, where
    /// the session's heartbeat runs.
    pub(crate) fn connect(zk: SimZk, client: ClientId, clients: ClientId) -> Self {
        let session = zk.connect(client);
        TestClient {
            zk,
            client,
            clients,
            session,
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

    /// The current session.
    pub fn session(&self) -> &SimClient {
        &self.session
    }

    /// Opens a new session in place of the current one, as an application does once its session
    /// has expired. The old one is left as it is (close it first to end it).
    pub fn reconnect(&mut self) {
        self.session = self.zk.connect(self.client);
    }

    /// Sim time since the run began: what the trace's times count.
    pub fn elapsed(&self) -> Duration {
        self.zk.elapsed()
    }

    /// Writes a line of the test's own into the trace, beside the client's calls.
    pub fn note(&self, text: impl Into<String>) {
        self.zk.record(TraceEvent::Note {
            client: self.client,
            text: text.into(),
        });
    }

    /// Where a zklab recipe run by this client writes what it tells the application, so that
    /// the monitors judge it (`Driver::recording`, or a recipe's `.recording(..)`).
    pub fn recorder(&self) -> Arc<dyn Recorder> {
        Arc::new(TraceRecorder::new(self.zk.clone(), self.client))
    }

    /// The server expires the current session now: its ephemeral nodes go, and the client
    /// hears `Expired` when it next hears from the server.
    pub fn expire_session(&self) {
        self.zk.expire_session(self.session.session_id());
    }

    /// The server drops the connection now; the session lives, and the client reconnects
    /// (its calls in flight fail with ConnectionLoss).
    pub fn disconnect(&self) {
        self.zk.drop_connection(self.session.session_id());
    }

    /// The reply to the client's next request is lost after the server applied it, and the
    /// connection breaks: the call fails with ConnectionLoss though it took effect.
    pub fn lose_next_reply(&self) {
        self.zk.lose_next_reply(self.client);
    }

    /// Cuts the client off from every server for `duration`; returns at once (the client's
    /// calls meanwhile wait, and the session expires if it lasts past the session timeout).
    pub async fn partition(&self, duration: Duration) {
        self.zk
            .strike(FaultKind::Partition, self.client, duration)
            .await;
    }

    /// Pauses the client's whole process for `duration` (a long garbage collection, say):
    /// returns once it runs again.
    pub async fn pause(&self, duration: Duration) {
        self.zk
            .strike(FaultKind::Pause, self.client, duration)
            .await;
    }

    /// Kills the client's process: never returns. Its session lives on until the server
    /// expires it.
    pub async fn crash(&self) {
        self.zk
            .strike(FaultKind::Crash, self.client, Duration::ZERO)
            .await;
        std::future::pending::<()>().await;
    }
}

impl ZkClient for TestClient {
    fn call(&self, op: Op) -> impl Future<Output = OpReply> + Send {
        self.session.call(op)
    }

    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send {
        self.session.next_event()
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.session.try_next_event()
    }

    fn session_id(&self) -> SessionId {
        self.session.session_id()
    }

    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        self.session.close()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self.session.sleep(duration)
    }
}
