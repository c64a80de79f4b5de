//! The sans-IO recipe pattern: a recipe is a pure state machine, and one driver runs any machine
//! over any [`ZkClient`].
//!
//! A machine never touches a client, a clock or a socket. It takes an [`Input`] (start, the reply
//! to the op it asked for, an event, an application request) and answers with a [`Step`]: the
//! next op to send, or wait, or done, plus what the application learns now. Because it is
//! `Clone + Eq + Hash`, the model checker can store and compare its states, and the simulator and
//! a real server run the very same code through [`Driver`].

use std::fmt::Debug;
use std::hash::Hash;

use crate::client::Op;
use crate::client::{OpReply, ZkClient, ZkError, ZkEvent};

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

/// What the application learns from a recipe, in one vocabulary for every recipe, so that the
/// same oracle can judge a simulated run, a model counterexample and a real-server run.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// The client holds the lock (or leadership); `token` is the fencing token to present to
    /// any resource the lock protects.
    Acquired {
        /// The lock node's czxid: it only grows from one holder to the next.
        token: i64,
    },
    /// The connection dropped while holding: the session may expire at any moment, so the holder
    /// must stop trusting the lock until [`Outcome::Resumed`].
    Suspended,
    /// Reconnected within the same session while holding: the lock is still held.
    Resumed,
    /// The session expired: whatever the client held is gone.
    Lost,
    /// The client let go of what it held.
    Released,
    /// The recipe gave up on an error it cannot handle.
    Failed(ZkError),
}

/// One answer of a machine: the next action and, perhaps, an outcome for the application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// What the driver does next.
    pub action: Action,
    /// What the application learns now, if anything.
    pub outcome: Option<Outcome>,
}

impl Step {
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
    pub fn done(outcome: Outcome) -> Self {
        Step {
            action: Action::Done,
            outcome: Some(outcome),
        }
    }

    /// The same action, telling the application `outcome` too.
    pub fn telling(mut self, outcome: Outcome) -> Self {
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

    /// Takes one input and says what to do next.
    fn step(&mut self, input: Input<Self::Request>) -> Step;
}

/// Runs one machine over one client: sends the ops it asks for, feeds back replies and events in
/// the order the session delivered them, and records every outcome with the client.
#[derive(Debug)]
pub struct Driver<'c, C, M> {
    client: &'c C,
    machine: M,
    waiting: bool,
}

impl<'c, C: ZkClient, M: Recipe> Driver<'c, C, M> {
    /// A driver for `machine` over `client`; nothing happens until [`Driver::feed`].
    pub fn new(client: &'c C, machine: M) -> Self {
        Driver {
            client,
            machine,
            waiting: true,
        }
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
    pub async fn feed(&mut self, input: Input<M::Request>) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        if !self.waiting {
            return outcomes;
        }
        let mut step = self.machine.step(input);
        loop {
            self.record(&mut outcomes, step.outcome);
            match step.action {
                Action::Send(op) => {
                    let reply = self.client.call(op).await;
                    // Events the session delivered before the reply reflect earlier changes:
                    // the machine sees them first, as ZooKeeper's ordering promises.
                    while let Some(event) = self.client.try_next_event() {
                        let during = self.machine.step(Input::Event(event));
                        debug_assert!(
                            !matches!(during.action, Action::Send(_)),
                            "a second op in flight"
                        );
                        self.record(&mut outcomes, during.outcome);
                    }
                    step = self.machine.step(Input::Reply(reply));
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
    pub async fn feed_arrived_events(&mut self) -> Vec<Outcome> {
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
    pub async fn feed_next_event(&mut self) -> Vec<Outcome> {
        let event = self.client.next_event().await;
        let event = event.unwrap_or(ZkEvent::Session(crate::client::SessionEvent::Closed));
        self.feed(Input::Event(event)).await
    }

    fn record(&self, outcomes: &mut Vec<Outcome>, outcome: Option<Outcome>) {
        if let Some(outcome) = outcome {
            self.client.record(&outcome);
            outcomes.push(outcome);
        }
    }
}
