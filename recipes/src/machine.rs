//! The sans-IO recipe pattern: a recipe is a pure state machine, and one driver runs any machine
//! over any [`ZkClient`].
//!
//! A machine never touches a client, a clock or a socket. It takes an [`Input`] (start, the reply
//! to the op it asked for, an event, an application request) and answers with a [`Step`]: the
//! next op to send, or wait, or done, plus what the application learns now. Because it is
//! `Clone + Eq + Hash`, the model checker can store and compare its states, and the simulator and
//! a real server run the very same code through [`Driver`].

use std::fmt::{self, Debug};
use std::hash::Hash;
use std::sync::Arc;

use crate::client::{Op, OpReply, SessionEvent, ZkClient, ZkEvent};
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
}

impl<O> Step<O> {
    /// Send an op, with nothing to tell the application.
    pub fn send(op: Op) -> Self {
        Step {
            action: Action::Send(op),
            outcome: None,
        }
    }

    /// Wait, with nothing to tell the application.
    pub fn wait() -> Self {
        Step {
            action: Action::Wait,
            outcome: None,
        }
    }

    /// Finished, with nothing more to tell.
    pub fn stop() -> Self {
        Step {
            action: Action::Done,
            outcome: None,
        }
    }

    /// Finished, telling the application `outcome`.
    pub fn done(outcome: O) -> Self {
        Step {
            action: Action::Done,
            outcome: Some(outcome),
        }
    }

    /// The same action, telling the application `outcome` too.
    pub fn telling(mut self, outcome: O) -> Self {
        self.outcome = Some(outcome);
        self
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
}

/// Runs one machine over one client: sends the ops it asks for, feeds back replies and events in
/// the order the session delivered them, and hands every outcome to its [`Recorder`], if any.
pub struct Driver<'c, C, M> {
    client: &'c C,
    machine: M,
    waiting: bool,
    connected: bool,
    recorder: Option<Arc<dyn Recorder>>,
}

impl<C, M: Debug> Debug for Driver<'_, C, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver")
            .field("machine", &self.machine)
            .field("waiting", &self.waiting)
            .field("connected", &self.connected)
            .finish_non_exhaustive()
    }
}

impl<'c, C: ZkClient, M: Recipe> Driver<'c, C, M> {
    /// A driver for `machine` over `client`; nothing happens until [`Driver::feed`].
    pub fn new(client: &'c C, machine: M) -> Self {
        Driver {
            client,
            machine,
            waiting: true,
            connected: true,
            recorder: None,
        }
    }

    /// The same driver, writing every outcome down with `recorder` (when there is one).
    pub fn recording(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
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
                    let reply = self.client.call(op).await;
                    // Events the session delivered before the reply reflect earlier changes:
                    // the machine sees them first, as ZooKeeper's ordering promises.
                    while let Some(event) = self.client.try_next_event() {
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

    /// Feeds every event that has already arrived, without waiting for more.
    pub async fn feed_arrived_events(&mut self) -> Vec<M::Outcome> {
        let mut outcomes = Vec::new();
        while !self.is_done() {
            let Some(event) = self.client.try_next_event() else {
                break;
            };
            outcomes.extend(self.feed(Input::Event(event)).await);
        }
        outcomes
    }

    /// Waits for the next event and feeds it. When the session's event stream has ended, the
    /// machine is told the session is closed.
    pub async fn feed_next_event(&mut self) -> Vec<M::Outcome> {
        let event = self.client.next_event().await;
        let event = event.unwrap_or(ZkEvent::Session(SessionEvent::Closed));
        self.feed(Input::Event(event)).await
    }

    /// Steps the machine, keeping track of the connection on the way.
    fn step(&mut self, input: Input<M::Request>) -> Step<M::Outcome> {
        if let Input::Event(ZkEvent::Session(event)) = &input {
            self.connected = *event == SessionEvent::SyncConnected;
        }
        self.machine.step(input)
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
