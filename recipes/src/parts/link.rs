//! The connection part: what every recipe does about its session's connection.
//!
//! It remembers the op in flight and sends an idempotent one again after ConnectionLoss (the
//! client holds it until it has reconnected); a sequential create is not idempotent (each makes
//! a new node), so its ConnectionLoss goes to the recipe, which must find out whether it landed. It tracks whether the
//! connection is up in every phase, since a role can be granted by a reply that arrives just
//! before the news of a disconnect, and tells a holder `Suspended` when the connection drops,
//! `Resumed` when it is back within the session, and `Lost` when the session ends.

use std::fmt;

use crate::client::{Op, OpReply, SessionEvent, ZkClient, ZkError};
use crate::machine::{Driver, Input, Recipe};
use crate::outcome::Outcome;
use crate::session_renaming::RenameSessions;

/// Why a recipe's operation (take a role, let it go, set a barrier, wait at one) did not complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecipeError {
    /// The session expired (or was closed) first; what the session held went with it.
    SessionLost,
    /// Asked to give up what it held or waited for (a revocable lock), it did.
    Revoked,
    /// ZooKeeper answered with an error the recipe cannot handle.
    Zk(ZkError),
}

impl fmt::Display for RecipeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecipeError::SessionLost => write!(f, "the session ended"),
            RecipeError::Revoked => write!(f, "asked to give it up, it did"),
            RecipeError::Zk(error) => write!(f, "ZooKeeper error {error} ({})", error.code()),
        }
    }
}

impl std::error::Error for RecipeError {}

impl RecipeError {
    /// The error a wait for a recipe's answer ends with when the recipe says `outcome` instead:
    /// its session ended, or it gave up; `None` for any other outcome.
    pub fn ending(outcome: Outcome) -> Option<Self> {
        match outcome {
            Outcome::Lost => Some(RecipeError::SessionLost),
            Outcome::Revoked { .. } => Some(RecipeError::Revoked),
            Outcome::Failed(error) => Some(RecipeError::Zk(error)),
            _ => None,
        }
    }
}

/// Feeds `input`, then events, until `wanted` picks what the caller waits for out of an outcome,
/// which it returns; a lost session or a failure ends the wait early.
pub async fn run_until<C, M, T>(
    driver: &mut Driver<'_, C, M>,
    input: Input<M::Request>,
    wanted: impl Fn(&M::Outcome) -> Option<T>,
) -> Result<T, RecipeError>
where
    C: ZkClient,
    M: Recipe,
{
    let settled = driver
        .feed_until(input, |outcome| {
            if let Some(picked) = wanted(&outcome) {
                return Some(Ok(picked));
            }
            RecipeError::ending(outcome.into()).map(Err)
        })
        .await;
    settled.unwrap_or(Err(RecipeError::SessionLost))
}

/// Takes in the events that have already arrived, then asks the machine `request` and runs it
/// until `wanted` picks what it waits for out of an outcome: what a held handle (a set barrier, a
/// claimed item) does when its application lets go. Fails with `SessionLost` at once if the
/// session had ended before the request (what it held went with it).
pub async fn ask_until<C, M, T>(
    driver: &mut Driver<'_, C, M>,
    request: M::Request,
    wanted: impl Fn(&M::Outcome) -> Option<T>,
) -> Result<T, RecipeError>
where
    C: ZkClient,
    M: Recipe,
{
    driver.feed_arrived_events().await;
    if driver.is_done() {
        return Err(RecipeError::SessionLost);
    }
    run_until(driver, Input::App(request), wanted).await
}

/// What became of a reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Delivery {
    /// Send this op again: its ConnectionLoss says nothing, and it is safe to repeat.
    Resend(Op),
    /// The session is gone.
    SessionLost,
    /// The reply, for the recipe.
    Reply(OpReply),
}

/// What a holder learns of its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Connection {
    /// The connection dropped: the session may expire at any moment.
    Suspended,
    /// Reconnected within the same session.
    Resumed,
    /// The session ended.
    Lost,
}

/// A recipe's view of its session's connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Link {
    /// The op in flight.
    in_flight: Option<Op>,
    /// The connection is up, as far as the recipe has heard.
    connected: bool,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            in_flight: None,
            connected: true,
        }
    }
}

impl Link {
    /// Whether the connection is up, as far as the recipe has heard.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Notes that `op` is sent, and gives it back to send.
    pub fn send(&mut self, op: Op) -> Op {
        self.in_flight = Some(op.clone());
        op
    }

    /// Notes that `op` is sent once: after ConnectionLoss it is not sent again, and the recipe
    /// gets the ConnectionLoss to find out whether it landed (an op whose second try would read
    /// as another client's doing, such as a queue's take). Gives it back to send.
    pub fn send_once(&mut self, op: Op) -> Op {
        self.in_flight = None;
        op
    }

    /// Takes the reply to the op in flight.
    pub fn on_reply(&mut self, reply: OpReply) -> Delivery {
        let sent = self.in_flight.take();
        match (reply, sent) {
            (Err(ZkError::SessionExpired), _) => Delivery::SessionLost,
            (Err(ZkError::ConnectionLoss), Some(op)) if !creates_a_new_node(&op) => {
                Delivery::Resend(self.send(op))
            }
            (reply, _) => Delivery::Reply(reply),
        }
    }

    /// Takes a session event; `holding` says whether the recipe holds something it must stop
    /// trusting while disconnected. Forgets the op in flight once the session has ended.
    pub fn on_session(&mut self, event: SessionEvent, holding: bool) -> Option<Connection> {
        match event {
            SessionEvent::Expired | SessionEvent::Closed => {
                self.in_flight = None;
                self.connected = false;
                Some(Connection::Lost)
            }
            SessionEvent::Disconnected => {
                let was = std::mem::replace(&mut self.connected, false);
                (holding && was).then_some(Connection::Suspended)
            }
            SessionEvent::SyncConnected => {
                let was = std::mem::replace(&mut self.connected, true);
                (holding && !was).then_some(Connection::Resumed)
            }
        }
    }
}

/// Whether sending `op` twice would make two nodes.
fn creates_a_new_node(op: &Op) -> bool {
    matches!(op, Op::Create { mode, .. } if mode.is_sequential())
}
