//! `SimClient`: a ZooKeeper session in the simulator, implementing the recipes' [`ZkClient`].

use std::collections::VecDeque;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::poll_fn;
use zklab_recipes::client::{Op, OpReply, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent};
use zklab_recipes::declaration::Declared;
use zklab_recipes::listeners::{ListenerId, Listeners};
use zklab_recipes::outcome::{Outcome, Recorder};

use crate::forced::ForcedKind;
use crate::service::SimZk;
use crate::trace::{ClientId, TraceEvent};

/// A handle on one session of one simulated client process.
///
/// Ops travel over the simulated wire with latency and faults. While the connection is down, ops
/// wait for the reconnect (as ZooKeeper's client queues them) and fail with SessionExpired if the
/// session is gone by then. Events arrive on one ordered stream per handle
/// ([`ZkClient::listener`]).
///
/// In a run forced through a model checker's counterexample ([`crate::forced`]), what arrives
/// waits for its turn before the code takes it: a reply, a watch event, or the news of a
/// broken connection (that news and the ConnectionLoss of the op it lost are one step, as
/// the model has them), and the timer waits for its own.
pub struct SimClient {
    zk: SimZk,
    client: ClientId,
    session: SessionId,
    /// The session was opened with a forced order under way.
    forced: bool,
    /// The session's handles, and which one this is.
    listeners: Arc<Listeners>,
    listener: ListenerId,
    arrived: Mutex<Arrived>,
}

/// What a forced run holds back of the events the wire brought this handle.
struct Arrived {
    /// Events taken off the stream while an op was in flight, their turn taken, in order.
    ready: VecDeque<ZkEvent>,
    /// An event taken off the stream that waits for its turn.
    held: Option<ZkEvent>,
    /// An op is in flight.
    in_call: bool,
    /// The ConnectionLoss of the op in flight took the turn of the next news of a break.
    break_paid: bool,
    /// The news of a break took the turn of the ConnectionLoss of the op in flight.
    loss_paid: bool,
}

impl SimClient {
    pub(crate) fn new(
        zk: SimZk,
        client: ClientId,
        session: SessionId,
        listeners: Arc<Listeners>,
        forced: bool,
    ) -> Self {
        let listener = listeners.add();
        SimClient {
            zk,
            client,
            session,
            forced,
            listeners,
            listener,
            arrived: Mutex::new(Arrived {
                ready: VecDeque::new(),
                held: None,
                in_call: false,
                break_paid: false,
                loss_paid: false,
            }),
        }
    }

    /// The simulated client process this session belongs to.
    pub fn client_id(&self) -> ClientId {
        self.client
    }

    /// Whether the client gave the session up when the server refused its authentication
    /// (its code heard Closed; the server keeps the session until it expires).
    pub fn auth_failed(&self) -> bool {
        self.zk.auth_failed(self.session)
    }

    /// Whether the server still holds this session open.
    pub fn is_alive(&self) -> bool {
        self.zk
            .with_server(|server| server.session_alive(self.session))
    }

    fn arrived(&self) -> std::sync::MutexGuard<'_, Arrived> {
        self.arrived
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next event (`cx`, if given, is woken when there may be one).
    fn poll_event(&self, cx: Option<&mut Context<'_>>) -> Poll<Option<ZkEvent>> {
        if !self.forced {
            return self.poll_own(cx);
        }
        let mut arrived = self.arrived();
        match arrived.ready.pop_front() {
            Some(event) => Poll::Ready(Some(event)),
            None => self.poll_in_turn(&mut arrived, cx),
        }
    }

    /// The next event off the stream, once its turn in the forced order has come.
    fn poll_in_turn(
        &self,
        arrived: &mut Arrived,
        mut cx: Option<&mut Context<'_>>,
    ) -> Poll<Option<ZkEvent>> {
        let event = match arrived.held.take() {
            Some(event) => event,
            None => {
                let event = match self.poll_own(cx.as_deref_mut()) {
                    Poll::Ready(Some(event)) => event,
                    other => return other,
                };
                let takes_a_turn = match event {
                    ZkEvent::Watch(_) => true,
                    ZkEvent::Session(SessionEvent::Disconnected) => {
                        let paid = std::mem::take(&mut arrived.break_paid);
                        arrived.loss_paid = !paid && arrived.in_call;
                        !paid
                    }
                    ZkEvent::Session(_) => false,
                };
                if !takes_a_turn {
                    return Poll::Ready(Some(event));
                }
                event
            }
        };
        let turn = self
            .zk
            .poll_forced_turn(self.client, ForcedKind::Deliver, cx.as_deref());
        if turn.is_pending() {
            arrived.held = Some(event);
            return Poll::Pending;
        }
        Poll::Ready(Some(event))
    }

    /// While an op is in flight, takes the events whose turn comes meanwhile, for the code to
    /// find once the op's reply is back (the model lets a client take them then).
    fn take_events_in_turn(&self, cx: &mut Context<'_>) {
        let mut arrived = self.arrived();
        while let Poll::Ready(Some(event)) = self.poll_in_turn(&mut arrived, Some(cx)) {
            arrived.ready.push_back(event);
        }
    }

    /// A forced run's op: sent, its reply awaited, then its turn.
    async fn forced_call(&self, op: Op) -> OpReply {
        self.arrived().in_call = true;
        let mut call = pin!(self.zk.call(self.session, self.listener, op));
        let reply = poll_fn(|cx| {
            let reply = call.as_mut().poll(cx);
            if reply.is_pending() {
                self.take_events_in_turn(cx);
            }
            reply
        })
        .await;
        let takes_a_turn = {
            let mut arrived = self.arrived();
            arrived.in_call = false;
            match reply {
                // News of a session already lost, whose turn its break took.
                Err(ZkError::SessionExpired) => false,
                Err(ZkError::ConnectionLoss) => {
                    let paid = std::mem::take(&mut arrived.loss_paid);
                    arrived.break_paid = !paid;
                    !paid
                }
                _ => true,
            }
        };
        if takes_a_turn {
            poll_fn(|cx| {
                // What arrived before the reply comes before it.
                self.take_events_in_turn(cx);
                self.zk
                    .poll_forced_turn(self.client, ForcedKind::Deliver, Some(cx))
                    .map(|_| ())
            })
            .await;
        }
        reply
    }
}

impl SimClient {
    /// This handle's next event off the wire; without `cx`, only one already there.
    fn poll_own(&self, cx: Option<&mut Context<'_>>) -> Poll<Option<ZkEvent>> {
        match cx {
            Some(cx) => self.listeners.poll_next(self.listener, cx),
            None => Poll::Ready(self.listeners.try_next(self.listener)),
        }
    }
}

impl Drop for SimClient {
    fn drop(&mut self) {
        self.listeners.remove(self.listener);
    }
}

impl ZkClient for SimClient {
    async fn call(&self, op: Op) -> OpReply {
        match self.forced {
            true => self.forced_call(op).await,
            false => self.zk.call(self.session, self.listener, op).await,
        }
    }

    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send {
        poll_fn(move |cx| self.poll_event(Some(cx)))
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        match self.poll_event(None) {
            Poll::Ready(event) => event,
            Poll::Pending => None,
        }
    }

    fn session_id(&self) -> SessionId {
        self.session
    }

    fn listener(&self) -> Self {
        let (zk, listeners) = (self.zk.clone(), self.listeners.clone());
        SimClient::new(zk, self.client, self.session, listeners, self.forced)
    }

    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        self.zk.close(self.session)
    }

    /// In a forced run, the timer goes off when the order says so, or once the order is over
    /// and its time has come.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        let until = madsim::time::Instant::now() + duration;
        async move {
            if !self.forced || !self.zk.forced_turn(self.client, ForcedKind::Timeout).await {
                madsim::time::sleep_until(until).await;
            }
        }
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

    fn new_declarer(&self) -> u32 {
        self.zk.new_declarer()
    }

    fn declare(&self, session: SessionId, declarer: u32, declared: &Declared) {
        self.zk.record(TraceEvent::Declared {
            client: self.client,
            session,
            declarer,
            declared: declared.clone(),
        });
    }
}
