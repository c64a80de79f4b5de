//! `SimClient`: a ZooKeeper session in the simulator, implementing the recipes' [`ZkClient`].

use std::sync::Mutex;
use std::task::Poll;
use std::time::Duration;

use futures::channel::mpsc;
use futures::StreamExt;
use zklab_recipes::client::{Op, OpReply, SessionId, ZkClient, ZkError, ZkEvent};
use zklab_recipes::outcome::{Outcome, Recorder};

use crate::ensemble::SimZk;
use crate::trace::{ClientId, TraceEvent};

/// One session of one simulated client process.
///
/// Ops travel over the simulated wire with latency and faults. While the connection is down, ops
/// wait for the reconnect (as ZooKeeper's client queues them) and fail with SessionExpired if the
/// session is gone by then. Events arrive on one ordered stream.
pub struct SimClient {
    zk: SimZk,
    client: ClientId,
    session: SessionId,
    events: Mutex<mpsc::UnboundedReceiver<ZkEvent>>,
}

impl SimClient {
    pub(crate) fn new(
        zk: SimZk,
        client: ClientId,
        session: SessionId,
        events: mpsc::UnboundedReceiver<ZkEvent>,
    ) -> Self {
        SimClient {
            zk,
            client,
            session,
            events: Mutex::new(events),
        }
    }

    /// The simulated client process this session belongs to.
    pub fn client_id(&self) -> ClientId {
        self.client
    }

    /// Whether the server still holds this session open.
    pub fn is_alive(&self) -> bool {
        self.zk
            .with_server(|server| server.session_alive(self.session))
    }

    fn events(&self) -> std::sync::MutexGuard<'_, mpsc::UnboundedReceiver<ZkEvent>> {
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ZkClient for SimClient {
    fn call(&self, op: Op) -> impl std::future::Future<Output = OpReply> + Send {
        self.zk.call(self.session, op)
    }

    fn next_event(&self) -> impl std::future::Future<Output = Option<ZkEvent>> + Send {
        futures::future::poll_fn(move |cx| match self.events().poll_next_unpin(cx) {
            Poll::Ready(event) => Poll::Ready(event),
            Poll::Pending => Poll::Pending,
        })
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.events().try_recv().ok()
    }

    fn session_id(&self) -> SessionId {
        self.session
    }

    fn close(&self) -> impl std::future::Future<Output = Result<(), ZkError>> + Send {
        self.zk.close(self.session)
    }

    fn sleep(&self, duration: Duration) -> impl std::future::Future<Output = ()> + Send {
        madsim::time::sleep(duration)
    }
}

/// Writes what one simulated client's recipes tell it into the run's trace, where the monitors
/// read it.
pub struct TraceRecorder {
    zk: SimZk,
    client: ClientId,
}

impl TraceRecorder {
    /// The recorder of `client`'s outcomes in `zk`'s trace.
    pub fn new(zk: SimZk, client: ClientId) -> Self {
        TraceRecorder { zk, client }
    }
}

impl Recorder for TraceRecorder {
    fn record(&self, session: SessionId, outcome: Outcome) {
        self.zk.record(TraceEvent::Outcome {
            client: self.client,
            session,
            outcome,
        });
    }
}
