//! The sans-IO recipe pattern: a recipe is a pure state machine, and one driver runs any machine
//! over any [`ZkClient`].
//!
//! A machine never touches a client, a clock or a socket. It takes an [`Input`] (start, the reply
//! to the op it asked for, an event, an application request, its timer going off) and answers
//! with a [`Step`]: the next op to send, or wait, or done, plus what the application learns now
//! and, if it needs time (a lease, an abort timeout), a [`Timer`] to set. The timer runs on the
//! client's clock: sim time in the simulator, wall time on a real server; the model checker lets
//! it go off at any moment. Because it is
//! `Clone + Eq + Hash`, the model checker can store and compare its states, and the simulator and
//! a real server run the very same code through [`Driver`].

use std::fmt::{self, Debug};
use std::future::{poll_fn, Future};
use std::hash::Hash;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use crate::client::{Op, OpReply, SessionEvent, SessionId, ZkClient, ZkEvent};
use crate::declaration::Declared;
use crate::outcome::{Outcome, Recorder};

/// Something a machine is told.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Input<R> {
    /// Begin.
    Start,
    /// The reply to the op the machine asked to send.
    Reply(OpReply),
    /// An event of the session (a fired watch or a connection state change).
    Event(ZkEvent),
    /// A request of the application, such as "release".
    App(R),
    /// The timer the machine set has gone off.
    Timeout,
}

/// What a machine asks of its one timer: quinn-proto's `poll_timeout`, as a pure answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// Go off after this long (replacing any timer set before).
    Set(Duration),
    /// Never mind the timer set before.
    Cancel,
}

/// What the driver does next for a machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Send this op and feed its reply back as [`Input::Reply`]. A machine has at most one op in
    /// flight: while it waits for a reply, it answers events with [`Action::Wait`].
    Send(Op),
    /// Nothing to send: wait for an event or an application request.
    Wait,
    /// The machine has finished; it takes no more input.
    Done,
}

/// One answer of a machine: the next action and, perhaps, an outcome (the recipe's own type) for
/// the application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step<O> {
    /// What the driver does next.
    pub action: Action,
    /// What the application learns now, if anything.
    pub outcome: Option<O>,
    /// What to do with the machine's timer, if anything.
    pub timer: Option<Timer>,
}

impl<O> Step<O> {
    fn of(action: Action, outcome: Option<O>) -> Self {
        Step {
            action,
            outcome,
            timer: None,
        }
    }

    /// Send an op, with nothing to tell the application.
    pub fn send(op: Op) -> Self {
        Step::of(Action::Send(op), None)
    }

    /// Wait, with nothing to tell the application.
    pub fn wait() -> Self {
        Step::of(Action::Wait, None)
    }

    /// Finished, with nothing more to tell.
    pub fn stop() -> Self {
        Step::of(Action::Done, None)
    }

    /// Finished, telling the application `outcome`.
    pub fn done(outcome: O) -> Self {
        Step::of(Action::Done, Some(outcome))
    }

    /// The same step, doing `timer` too.
    pub fn timing(mut self, timer: Timer) -> Self {
        self.timer = Some(timer);
        self
    }

    /// The same action, telling the application `outcome` too.
    pub fn telling(mut self, outcome: O) -> Self {
        self.outcome = Some(outcome);
        self
    }

    /// The same step, its outcome in another type: a machine that plays one of several roles
    /// tells each role's outcome as its own.
    pub fn map_outcome<P>(self, into: impl FnOnce(O) -> P) -> Step<P> {
        Step {
            action: self.action,
            outcome: self.outcome.map(into),
            timer: self.timer,
        }
    }
}

/// A recipe as a pure state machine.
///
/// Implement it to model-check a protocol of your own: the model checker and the simulator need
/// nothing else.
pub trait Recipe: Clone + Eq + Hash + Debug {
    /// The application's requests to the machine (for a lock: release).
    type Request: Clone + Eq + Hash + Debug;

    /// What the machine tells its application: the recipe's public contract. It converts into
    /// the trace's umbrella [`Outcome`], which the monitors read.
    type Outcome: Clone + Eq + Hash + Debug + Into<Outcome>;

    /// Takes one input and says what to do next.
    fn step(&mut self, input: Input<Self::Request>) -> Step<Self::Outcome>;

    /// What the machine owns and waits for as it stands (see [`crate::declaration`]): the
    /// driver writes each change down. By default nothing, so no monitor counts it as waiting.
    fn declared(&self) -> Declared {
        Declared::default()
    }
}

/// The machine's timer, running on the client's clock.
type Sleep<'c> = Pin<Box<dyn Future<Output = ()> + Send + 'c>>;

/// Runs one machine over one client: sends the ops it asks for, feeds back replies and events in
/// the order the session delivered them, runs its timer, and hands every outcome to its
/// [`Recorder`], if any. It works through a handle of its own on the session
/// ([`ZkClient::listener`]): the events it takes are those of its own watches and the session's
/// news, never another recipe's or the application's.
pub struct Driver<'c, C, M> {
    client: &'c C,
    /// The driver's own handle on the client's session.
    own: C,
    machine: M,
    waiting: bool,
    connected: bool,
    recorder: Option<Arc<dyn Recorder>>,
    /// Its id among the run's declarers, once it records.
    declarer: u32,
    /// What it declared last, and in which session.
    declared: (SessionId, Declared),
    timer: Option<Sleep<'c>>,
}

/// A driver dropped while its machine still owned or awaited something (its application gave
/// up on it) declares that it no longer does: nothing of it waits any more.
impl<C, M> Drop for Driver<'_, C, M> {
    fn drop(&mut self) {
        let (session, declared) = &self.declared;
        if let (Some(recorder), false) = (&self.recorder, declared.is_empty()) {
            recorder.declare(*session, self.declarer, &Declared::default());
        }
    }
}

impl<C, M: Debug> Debug for Driver<'_, C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("machine", &self.machine)
            .field("waiting", &self.waiting)
            .field("connected", &self.connected)
            .field("timer set", &self.timer.is_some())
            .finish_non_exhaustive()
    }
}

impl<'c, C: ZkClient, M: Recipe> Driver<'c, C, M> {
    /// A driver for `machine` over `client`; nothing happens until [`Driver::feed`].
    pub fn new(client: &'c C, machine: M) -> Self {
        Driver {
            client,
            own: client.listener(),
            machine,
            waiting: true,
            connected: true,
            recorder: None,
            declarer: 0,
            declared: (client.session_id(), Declared::default()),
            timer: None,
        }
    }

    /// The same driver, writing every outcome, and every change of what the machine owns and
    /// awaits, down with `recorder` (when there is one).
    pub fn recording(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        if let Some(recorder) = &recorder {
            self.declarer = recorder.new_declarer();
        }
        self.recorder = recorder;
        self
    }

    /// Whether the session's connection is up, as far as the events fed so far tell: a holder
    /// that learned of a disconnect must stop trusting what it holds until the reconnect.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// The machine, as it stands.
    pub fn machine(&self) -> &M {
        &self.machine
    }

    /// The client it drives.
    pub fn client(&self) -> &'c C {
        self.client
    }

    /// Whether the machine has finished.
    pub fn is_done(&self) -> bool {
        !self.waiting
    }

    /// Feeds one input, then sends every op the machine asks for in turn until it waits or is
    /// done. Returns the outcomes, in order.
    pub async fn feed(&mut self, input: Input<M::Request>) -> Vec<M::Outcome> {
        let mut outcomes = Vec::new();
        if !self.waiting {
            return outcomes;
        }
        let mut step = self.step(input);
        loop {
            self.record(&mut outcomes, step.outcome);
            match step.action {
                Action::Send(op) => {
                    let reply = self.own.call(op).await;
                    // Events the session delivered before the reply reflect earlier changes:
                    // the machine sees them first, as ZooKeeper's ordering promises.
                    while let Some(event) = self.own.try_next_event() {
                        let during = self.step(Input::Event(event));
                        debug_assert!(
                            !matches!(during.action, Action::Send(_)),
                            "a second op in flight"
                        );
                        self.record(&mut outcomes, during.outcome);
                    }
                    step = self.step(Input::Reply(reply));
                }
                Action::Wait => return outcomes,
                Action::Done => {
                    self.waiting = false;
                    return outcomes;
                }
            }
        }
    }

    /// Feeds `input`, then each event as it comes, until `settle` makes a result of an outcome
    /// (what the caller waits for, or the failure that ends its wait); `None` if the machine
    /// finishes first.
    pub async fn feed_until<T>(
        &mut self,
        input: Input<M::Request>,
        mut settle: impl FnMut(M::Outcome) -> Option<T>,
    ) -> Option<T> {
        let mut outcomes = self.feed(input).await;
        loop {
            if let Some(result) = outcomes.into_iter().find_map(&mut settle) {
                return Some(result);
            }
            if self.is_done() {
                return None;
            }
            outcomes = self.feed_next_event().await;
        }
    }

    /// Feeds every event that has already arrived, without waiting for more.
    pub async fn feed_arrived_events(&mut self) -> Vec<M::Outcome> {
        let mut outcomes = Vec::new();
        while !self.is_done() {
            let Some(event) = self.own.try_next_event() else {
                break;
            };
            outcomes.extend(self.feed(Input::Event(event)).await);
        }
        outcomes
    }

    /// Waits for the next event, or for the machine's timer to go off, and feeds it. When the
    /// session's event stream has ended, the machine is told the session is closed.
    pub async fn feed_next_event(&mut self) -> Vec<M::Outcome> {
        let never = std::future::pending::<()>();
        self.feed_next_event_or(never).await.unwrap_or_default()
    }

    /// As [`Driver::feed_next_event`], unless `interrupt` finishes first: then nothing is fed
    /// and the answer is `None` (the application has something to ask of the machine, say).
    pub async fn feed_next_event_or(
        &mut self,
        interrupt: impl Future<Output = ()>,
    ) -> Option<Vec<M::Outcome>> {
        /// What came first.
        enum First {
            Event(Option<ZkEvent>),
            Timer,
            Interrupt,
        }
        let first = {
            let mut event = pin!(self.own.next_event());
            let mut interrupt = pin!(interrupt);
            let timer = &mut self.timer;
            poll_fn(|cx| {
                if let Poll::Ready(event) = event.as_mut().poll(cx) {
                    return Poll::Ready(First::Event(event));
                }
                if let Some(Poll::Ready(())) = timer.as_mut().map(|sleep| sleep.as_mut().poll(cx)) {
                    return Poll::Ready(First::Timer);
                }
                interrupt.as_mut().poll(cx).map(|()| First::Interrupt)
            })
            .await
        };
        match first {
            First::Event(event) => {
                let event = event.unwrap_or(ZkEvent::Session(SessionEvent::Closed));
                Some(self.feed(Input::Event(event)).await)
            }
            First::Timer => Some(self.feed(Input::Timeout).await),
            First::Interrupt => None,
        }
    }

    /// Steps the machine, keeping track of the connection and running its timer on the way.
    fn step(&mut self, input: Input<M::Request>) -> Step<M::Outcome> {
        match &input {
            Input::Event(ZkEvent::Session(event)) => {
                self.connected = *event == SessionEvent::SyncConnected;
            }
            Input::Timeout => self.timer = None,
            _ => {}
        }
        let step = self.machine.step(input);
        match step.timer {
            Some(Timer::Set(after)) => self.timer = Some(Box::pin(self.client.sleep(after))),
            Some(Timer::Cancel) => self.timer = None,
            None => {}
        }
        if let Some(recorder) = &self.recorder {
            let declared = match step.action {
                Action::Done => Declared::default(),
                _ => self.machine.declared(),
            };
            if declared != self.declared.1 {
                let session = self.client.session_id();
                recorder.declare(session, self.declarer, &declared);
                self.declared = (session, declared);
            }
        }
        step
    }

    fn record(&self, outcomes: &mut Vec<M::Outcome>, outcome: Option<M::Outcome>) {
        if let Some(outcome) = outcome {
            if let Some(recorder) = &self.recorder {
                recorder.record(self.client.session_id(), outcome.clone().into());
            }
            outcomes.push(outcome);
        }
    }
}
