//! An order forced on a run: a model checker's counterexample, step by step, replayed on the
//! simulated service and the real recipe code ([`crate::service::SimZk::force_order`]).
//!
//! Every step waits for its turn. The server's (apply a client's request, drop it, lose its
//! reply, expire a session): the service holds a request until its step comes. The client's
//! (take its next reply, watch event or news of a broken connection; ask its machine
//! something; let its timer go off): its `SimClient` holds what arrived, or its application
//! or timer waits, until its step comes.

use std::task::Waker;
use std::time::Duration;

use crate::trace::ClientId;

/// One step of a forced order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForcedStep {
    /// Whose request, session or machine; for a reap, which of the nodes the reaper would take
    /// (by path, from 0).
    pub client: ClientId,
    /// What happens.
    pub kind: ForcedKind,
}

/// What a [`ForcedStep`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForcedKind {
    /// The server applies the client's next request.
    Apply,
    /// The client's next request never reaches the server: its connection drops.
    ConnectionLoss,
    /// The server applies the client's next request and its reply is lost.
    LostReply,
    /// The server expires the client's session.
    SessionExpiry,
    /// The client receives its next reply, watch event or news of a broken connection.
    Deliver,
    /// The application asks the client's machine what it asks of a holder (to let go, say).
    Request,
    /// The client's timer goes off.
    Timeout,
    /// The server's reaper deletes a node it would take.
    Reap,
}

impl ForcedKind {
    /// Every kind, in a fixed order.
    pub const ALL: [ForcedKind; 8] = [
        ForcedKind::Apply,
        ForcedKind::ConnectionLoss,
        ForcedKind::LostReply,
        ForcedKind::SessionExpiry,
        ForcedKind::Deliver,
        ForcedKind::Request,
        ForcedKind::Timeout,
        ForcedKind::Reap,
    ];

    /// The kind's name in a schedule.
    pub fn name(self) -> &'static str {
        match self {
            ForcedKind::Apply => "apply",
            ForcedKind::ConnectionLoss => "connection-loss",
            ForcedKind::LostReply => "lost-reply",
            ForcedKind::SessionExpiry => "session-expiry",
            ForcedKind::Deliver => "deliver",
            ForcedKind::Request => "request",
            ForcedKind::Timeout => "timeout",
            ForcedKind::Reap => "reap",
        }
    }

    /// Whether the server takes it (rather than the client's side of the wire).
    pub fn is_server_step(self) -> bool {
        matches!(
            self,
            ForcedKind::Apply
                | ForcedKind::ConnectionLoss
                | ForcedKind::LostReply
                | ForcedKind::SessionExpiry
                | ForcedKind::Reap
        )
    }
}

/// The trace's note once every step of a forced order has happened.
pub const DONE: &str = "the forced order is done; the run goes on freely";

/// How long a forced order waits for its next step before it gives up.
pub const FORCED_PATIENCE: Duration = Duration::from_secs(1);

/// The steps of a forced order, how many have happened, and who waits for their turn.
#[derive(Debug, Default)]
pub struct ForcedOrder {
    steps: Vec<ForcedStep>,
    /// The first step not yet taken.
    next: usize,
    /// When a step was last taken (or the order began).
    progressed: Duration,
    /// Clients waiting for their turn, woken whenever a step is taken.
    waiting: Vec<Waker>,
    /// Why the order was given up, if it was.
    abandoned: Option<String>,
}

impl ForcedOrder {
    /// An order of `steps`, beginning at `now`.
    pub fn new(steps: Vec<ForcedStep>, now: Duration) -> Self {
        ForcedOrder {
            steps,
            next: 0,
            progressed: now,
            waiting: Vec::new(),
            abandoned: None,
        }
    }

    /// Whether every step has happened (or the order was given up, or there never was one).
    pub fn is_over(&self) -> bool {
        self.next >= self.steps.len()
    }

    /// The step whose turn it is, if any.
    pub fn next_step(&self) -> Option<ForcedStep> {
        self.steps.get(self.next).copied()
    }

    /// How many steps have happened before the next one, and how many there are.
    pub fn progress(&self) -> (usize, usize) {
        (self.next, self.steps.len())
    }

    /// Whether no step has happened for [`FORCED_PATIENCE`] by `now`.
    pub fn out_of_patience(&self, now: Duration) -> bool {
        !self.is_over() && now >= self.progressed + FORCED_PATIENCE
    }

    /// Takes the step whose turn it is.
    pub fn take_next(&mut self, now: Duration) {
        if !self.is_over() {
            self.next += 1;
            self.progressed = now;
            self.wake();
        }
    }

    /// Gives the rest of the order up, for the reason `why`.
    pub fn give_up(&mut self, why: String) {
        self.next = self.steps.len();
        self.abandoned = Some(why);
        self.wake();
    }

    /// Why the order was given up, if it was: the run after it is not the one it described.
    pub fn abandoned(&self) -> Option<&str> {
        self.abandoned.as_deref()
    }

    /// Wakes `waker` once a step is taken or the order is over.
    pub fn wait(&mut self, waker: &Waker) {
        self.waiting.push(waker.clone());
    }

    fn wake(&mut self) {
        for waker in self.waiting.drain(..) {
            waker.wake();
        }
    }
}
