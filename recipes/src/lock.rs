//! The exclusive lock of ZooKeeper's recipes document, fault-tolerant.
//!
//! Each contender creates an ephemeral sequential node `<dir>/<guid>-lock-<seq>`. The lowest
//! sequence holds the lock; every other contender watches only its immediate predecessor with
//! `exists`, and lists the children again whenever that predecessor is gone (so one deletion wakes
//! one waiter). The guid makes a lost create reply survivable: after ConnectionLoss on create, the
//! contender lists the children and adopts the node that carries its guid instead of creating a
//! second one. A disconnected holder is suspended (it may already have lost the lock), an expired
//! one has lost it. The fencing token is the lock node's czxid.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient) -> Result<(), zklab_recipes::lock::LockError> {
//! use zklab_recipes::lock::Lock;
//! let mut guard = Lock::new("/locks/orders").acquire(client).await?;
//! if guard.is_safe().await {
//!     // present guard.token() to the protected resource
//! }
//! guard.release().await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use crate::client::{Op, OpReply, OpResult, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent};
use crate::machine::{Driver, Input, Recipe};
use crate::outcome::{Outcome, Recorder};
use crate::parts::contender::{Contender, Verdict};
use crate::parts::link::{Connection, Delivery, Link};
use crate::symmetry::{session_guid, RenameSessions, SessionRenaming};

/// The marker between a contender's guid and the server's sequence number.
const LOCK_MARKER: &str = "-lock-";

/// What a lock tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockOutcome {
    /// The client holds the lock; `token` is the fencing token to present to any resource the
    /// lock protects: the lock node's czxid, which only grows from one holder to the next.
    Acquired {
        /// The fencing token.
        token: i64,
    },
    /// The connection dropped while holding: the session may expire at any moment, so the holder
    /// must stop trusting the lock until [`LockOutcome::Resumed`].
    Suspended,
    /// Reconnected within the same session while holding: the lock is still held.
    Resumed,
    /// The session ended: the lock, held or awaited, is gone.
    Lost,
    /// The client let go of the lock.
    Released,
    /// The recipe gave up on an error it cannot handle.
    Failed(ZkError),
}

/// The lock's name for what it grants, in the trace.
const ROLE: &str = "lock";

impl From<LockOutcome> for Outcome {
    fn from(outcome: LockOutcome) -> Outcome {
        match outcome {
            LockOutcome::Acquired { token } => Outcome::Granted { role: ROLE, token },
            LockOutcome::Suspended => Outcome::Suspended,
            LockOutcome::Resumed => Outcome::Resumed,
            LockOutcome::Lost => Outcome::Lost,
            LockOutcome::Released => Outcome::Released { role: ROLE },
            LockOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// One answer of the lock machine.
type Step = crate::machine::Step<LockOutcome>;

/// The request an application makes of a held lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockRequest {
    /// Let go of the lock.
    Release,
}

/// Where the lock machine is in the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Not started.
    Idle,
    /// In line for the lock.
    Contending,
    /// Holding the lock.
    Held,
    /// The delete of our node is in flight.
    Releasing,
    /// Finished.
    Done,
}

/// The lock protocol as a pure state machine: a [`Contender`] first in line holds the lock, and
/// its [`Link`] tells it when to stop trusting it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockMachine {
    contender: Contender,
    link: Link,
    phase: Phase,
}

impl LockMachine {
    /// A machine contending for the lock at `dir`, naming its node with `guid` (unique per
    /// contender and stable for its session: [`session_guid`] gives one).
    pub fn new(dir: &str, guid: String) -> Self {
        LockMachine {
            contender: Contender::new(dir, guid, LOCK_MARKER),
            link: Link::default(),
            phase: Phase::Idle,
        }
    }

    /// Whether the holder may act on the lock: it holds it and its connection is up (a
    /// disconnected holder may already have lost it).
    pub fn is_safe(&self) -> bool {
        self.holds() && self.link.is_connected()
    }

    /// Whether the machine currently holds the lock (suspended or not).
    pub fn holds(&self) -> bool {
        self.phase == Phase::Held
    }

    /// Whether the machine is waiting for its predecessor to go.
    pub fn is_waiting(&self) -> bool {
        self.phase == Phase::Contending && self.contender.is_waiting()
    }

    /// The path of the contender node, once created or adopted.
    pub fn node(&self) -> Option<&str> {
        self.contender.node()
    }

    fn finish(&mut self, outcome: LockOutcome) -> Step {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    /// Does what the contender asks; first in line holds the lock.
    fn follow(&mut self, verdict: Verdict) -> Step {
        match verdict {
            Verdict::Send(op) => Step::send(self.link.send(op)),
            Verdict::Wait => Step::wait(),
            Verdict::First { token } => {
                self.phase = Phase::Held;
                Step::wait().telling(LockOutcome::Acquired { token })
            }
            Verdict::Failed(error) => self.finish(LockOutcome::Failed(error)),
        }
    }

    fn on_reply(&mut self, reply: OpReply) -> Step {
        match (self.phase, self.link.on_reply(reply)) {
            (_, Delivery::Resend(op)) => Step::send(op),
            // NoNode: an earlier delete, whose reply was lost, already landed.
            (
                Phase::Releasing,
                Delivery::SessionLost
                | Delivery::Reply(Ok(OpResult::Deleted) | Err(ZkError::NoNode)),
            ) => {
                self.phase = Phase::Done;
                Step::stop()
            }
            (_, Delivery::SessionLost) => self.finish(LockOutcome::Lost),
            (Phase::Contending, Delivery::Reply(reply)) => {
                let verdict = self.contender.on_reply(reply);
                self.follow(verdict)
            }
            (_, Delivery::Reply(Err(error))) => self.finish(LockOutcome::Failed(error)),
            (_, Delivery::Reply(Ok(_))) => {
                self.finish(LockOutcome::Failed(ZkError::MarshallingError))
            }
        }
    }

    fn on_session(&mut self, event: SessionEvent) -> Step {
        match self.link.on_session(event, self.holds()) {
            Some(Connection::Lost) if self.phase == Phase::Releasing => {
                self.phase = Phase::Done;
                Step::stop()
            }
            Some(Connection::Lost) => self.finish(LockOutcome::Lost),
            Some(Connection::Suspended) => Step::wait().telling(LockOutcome::Suspended),
            Some(Connection::Resumed) => Step::wait().telling(LockOutcome::Resumed),
            None => Step::wait(),
        }
    }
}

impl Recipe for LockMachine {
    type Request = LockRequest;
    type Outcome = LockOutcome;

    fn step(&mut self, input: Input<LockRequest>) -> Step {
        match input {
            _ if self.phase == Phase::Done => Step::stop(),
            Input::Start if self.phase == Phase::Idle => {
                self.phase = Phase::Contending;
                let verdict = self.contender.start();
                self.follow(verdict)
            }
            Input::Start => Step::wait(),
            Input::Reply(reply) => self.on_reply(reply),
            Input::Event(ZkEvent::Watch(event)) if self.phase == Phase::Contending => {
                let verdict = self.contender.on_watch(&event);
                self.follow(verdict)
            }
            Input::Event(ZkEvent::Watch(_)) => Step::wait(),
            Input::Event(ZkEvent::Session(event)) => self.on_session(event),
            // The application stops using the lock the moment it asks to release: from here the
            // delete only cleans up, retried through ConnectionLoss.
            Input::App(LockRequest::Release) if self.phase == Phase::Held => {
                self.phase = Phase::Releasing;
                let path = self.node().unwrap_or_default().to_owned();
                Step::send(self.link.send(Op::Delete { path, version: -1 }))
                    .telling(LockOutcome::Released)
            }
            // The lock sets no timer.
            Input::App(LockRequest::Release) | Input::Timeout => Step::wait(),
        }
    }
}

impl RenameSessions for LockMachine {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        LockMachine {
            contender: self.contender.rename_sessions(renaming),
            link: self.link.rename_sessions(renaming),
            phase: self.phase,
        }
    }
}

/// Why a lock could not be acquired or released cleanly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockError {
    /// The session expired (or was closed) before the lock was acquired, or while it was held.
    SessionLost,
    /// ZooKeeper answered with an error the recipe cannot handle.
    Zk(ZkError),
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::SessionLost => write!(f, "the session ended before the lock was released"),
            LockError::Zk(error) => write!(f, "ZooKeeper error {error} ({})", error.code()),
        }
    }
}

impl std::error::Error for LockError {}

/// An exclusive lock at a directory path, such as `/locks/orders`.
#[derive(Clone)]
pub struct Lock {
    dir: String,
    recorder: Option<Arc<dyn Recorder>>,
}

impl fmt::Debug for Lock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lock")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Lock {
    /// The lock whose contender nodes live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        Lock {
            dir: dir.to_owned(),
            recorder: None,
        }
    }

    /// The same lock, writing down everything it tells the application with `recorder`.
    pub fn recording(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// The machine this lock runs for a session.
    pub fn machine(&self, session: SessionId) -> LockMachine {
        LockMachine::new(&self.dir, session_guid(session))
    }

    /// Waits until this session holds the lock.
    pub async fn acquire<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<LockGuard<'c, C>, LockError> {
        self.acquire_with(client, self.machine(client.session_id()))
            .await
    }

    /// Waits until `machine` holds the lock: this lock's own machine, or one built around it
    /// (the harness runs known-broken variants of the protocol this way).
    pub async fn acquire_with<'c, C, M>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<LockGuard<'c, C, M>, LockError>
    where
        C: ZkClient,
        M: Recipe<Request = LockRequest, Outcome = LockOutcome>,
    {
        let mut driver = Driver::new(client, machine).recording(self.recorder.clone());
        let mut outcomes = driver.feed(Input::Start).await;
        loop {
            for outcome in outcomes {
                match outcome {
                    LockOutcome::Acquired { token } => return Ok(LockGuard { driver, token }),
                    LockOutcome::Lost => return Err(LockError::SessionLost),
                    LockOutcome::Failed(error) => return Err(LockError::Zk(error)),
                    LockOutcome::Suspended | LockOutcome::Resumed | LockOutcome::Released => {}
                }
            }
            if driver.is_done() {
                return Err(LockError::SessionLost);
            }
            outcomes = driver.feed_next_event().await;
        }
    }
}

/// A held lock. It does not release on drop (release needs the network): call
/// [`LockGuard::release`]; a dropped guard's node goes when its session ends.
#[derive(Debug)]
pub struct LockGuard<'c, C, M = LockMachine> {
    driver: Driver<'c, C, M>,
    token: i64,
}

impl<C, M> LockGuard<'_, C, M>
where
    C: ZkClient,
    M: Recipe<Request = LockRequest, Outcome = LockOutcome>,
{
    /// The fencing token: present it to the protected resource, which must refuse any token lower
    /// than one it has already seen.
    pub fn token(&self) -> i64 {
        self.token
    }

    /// Takes in the session events that have arrived and says whether the lock can still be
    /// trusted: false while disconnected (even if the lock was granted just as the connection
    /// dropped) and for good once the session ended.
    pub async fn is_safe(&mut self) -> bool {
        self.driver.feed_arrived_events().await;
        !self.driver.is_done() && self.driver.is_connected()
    }

    /// Releases the lock, retrying the delete through ConnectionLoss. Fails with `SessionLost`
    /// if the session ended before the release was asked for (the lock was already gone).
    pub async fn release(mut self) -> Result<(), LockError> {
        self.driver.feed_arrived_events().await;
        if self.driver.is_done() {
            return Err(LockError::SessionLost);
        }
        let mut outcomes = self.driver.feed(Input::App(LockRequest::Release)).await;
        let mut result = Ok(());
        loop {
            for outcome in outcomes {
                match outcome {
                    LockOutcome::Lost => result = Err(LockError::SessionLost),
                    LockOutcome::Failed(error) => result = Err(LockError::Zk(error)),
                    LockOutcome::Acquired { .. }
                    | LockOutcome::Suspended
                    | LockOutcome::Resumed
                    | LockOutcome::Released => {}
                }
            }
            if self.driver.is_done() {
                return result;
            }
            outcomes = self.driver.feed_next_event().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{CreateMode, EventType, Stat, WatchedEvent};
    use crate::machine::Action;

    const DIR: &str = "/locks/x";

    fn machine() -> LockMachine {
        LockMachine::new(DIR, "g1".to_owned())
    }

    fn created(name: &str, czxid: i64) -> Input<LockRequest> {
        let stat = Stat {
            czxid,
            ..Stat::default()
        };
        Input::Reply(Ok(OpResult::Created {
            path: format!("{DIR}/{name}"),
            stat,
        }))
    }

    fn children(names: &[&str]) -> Input<LockRequest> {
        let children = names.iter().map(|n| n.to_string()).collect();
        Input::Reply(Ok(OpResult::Children {
            children,
            stat: Stat::default(),
        }))
    }

    /// Listing the lock directory again, without a watch.
    fn relist() -> Op {
        Op::GetChildren {
            path: DIR.to_owned(),
            watch: false,
        }
    }

    fn op(step: &Step) -> &Op {
        match &step.action {
            Action::Send(op) => op,
            other => panic!("expected an op, got {other:?}"),
        }
    }

    fn deleted(name: &str) -> Input<LockRequest> {
        let event = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: format!("{DIR}/{name}"),
        };
        Input::Event(ZkEvent::Watch(event))
    }

    fn session(event: SessionEvent) -> Input<LockRequest> {
        Input::Event(ZkEvent::Session(event))
    }

    /// A machine that holds the lock with node g1-lock-0000000001 and token 7.
    fn holder() -> LockMachine {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created("g1-lock-0000000001", 7));
        let step = m.step(children(&["g1-lock-0000000001"]));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 7 }));
        m
    }

    #[test]
    fn start_creates_an_ephemeral_sequential_node_named_with_the_guid() {
        let step = machine().step(Input::Start);
        let expected = Op::Create {
            path: format!("{DIR}/g1-lock-"),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        };
        assert_eq!(op(&step), &expected);
    }

    #[test]
    fn lowest_sequence_acquires_with_the_czxid_as_token() {
        assert!(holder().holds());
    }

    #[test]
    fn sorts_by_sequence_number_not_by_name() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created("g1-lock-0000000002", 9));
        // By name "a9-..." sorts first, but its sequence (3) is after ours (2).
        let step = m.step(children(&[
            "zz-lock-0000000001",
            "g1-lock-0000000002",
            "a9-lock-0000000003",
        ]));
        assert_eq!(
            op(&step),
            &Op::Exists {
                path: format!("{DIR}/zz-lock-0000000001"),
                watch: true
            }
        );
    }

    #[test]
    fn a_waiter_watches_only_its_immediate_predecessor() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created("g1-lock-0000000003", 9));
        let step = m.step(children(&[
            "a-lock-0000000001",
            "b-lock-0000000002",
            "g1-lock-0000000003",
        ]));
        assert_eq!(
            op(&step),
            &Op::Exists {
                path: format!("{DIR}/b-lock-0000000002"),
                watch: true
            }
        );
        let step = m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
        assert_eq!(step.action, Action::Wait);
        assert!(m.is_waiting());
        // The predecessor's deletion makes it list again rather than assume it is first.
        let step = m.step(deleted("b-lock-0000000002"));
        assert_eq!(op(&step), &relist());
    }

    #[test]
    fn a_predecessor_already_gone_means_listing_again() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created("g1-lock-0000000002", 9));
        m.step(children(&["a-lock-0000000001", "g1-lock-0000000002"]));
        let step = m.step(Input::Reply(Ok(OpResult::Exists(None))));
        assert_eq!(op(&step), &relist());
    }

    #[test]
    fn after_connection_loss_on_create_it_adopts_the_node_carrying_its_guid() {
        let mut m = machine();
        m.step(Input::Start);
        let step = m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert_eq!(op(&step), &relist());
        let step = m.step(children(&["other-lock-0000000004", "g1-lock-0000000005"]));
        assert_eq!(
            op(&step),
            &Op::Exists {
                path: format!("{DIR}/g1-lock-0000000005"),
                watch: false
            }
        );
        assert_eq!(m.node(), Some("/locks/x/g1-lock-0000000005"));
        let step = m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat {
            czxid: 11,
            ..Stat::default()
        })))));
        assert_eq!(op(&step), &relist());
        let step = m.step(children(&["g1-lock-0000000005", "other-lock-0000000006"]));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 11 }));
    }

    #[test]
    fn after_connection_loss_on_create_with_no_node_it_creates_again() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        let step = m.step(children(&["other-lock-0000000004"]));
        assert!(matches!(op(&step), Op::Create { .. }));
    }

    #[test]
    fn connection_loss_on_create_before_the_directory_exists_contends_again() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(
            op(&step),
            Op::Create {
                mode: CreateMode::EphemeralSequential,
                ..
            }
        ));
    }

    #[test]
    fn a_missing_lock_directory_is_created_level_by_level() {
        let mut m = machine();
        m.step(Input::Start);
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(
            matches!(op(&step), Op::Create { path, mode: CreateMode::Persistent, .. } if path == "/locks")
        );
        let step = m.step(Input::Reply(Err(ZkError::NodeExists)));
        assert!(
            matches!(op(&step), Op::Create { path, mode: CreateMode::Persistent, .. } if path == DIR)
        );
        let step = m.step(Input::Reply(Ok(OpResult::Created {
            path: DIR.to_owned(),
            stat: Stat::default(),
        })));
        assert!(matches!(
            op(&step),
            Op::Create {
                mode: CreateMode::EphemeralSequential,
                ..
            }
        ));
    }

    #[test]
    fn disconnect_suspends_the_holder_and_reconnect_resumes_it() {
        let mut m = holder();
        assert_eq!(
            m.step(session(SessionEvent::Disconnected)).outcome,
            Some(LockOutcome::Suspended)
        );
        assert_eq!(
            m.step(session(SessionEvent::SyncConnected)).outcome,
            Some(LockOutcome::Resumed)
        );
        assert!(m.holds());
    }

    #[test]
    fn a_lock_granted_after_the_connection_dropped_is_not_safe() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created("g1-lock-0000000001", 7));
        m.step(session(SessionEvent::Disconnected));
        let step = m.step(children(&["g1-lock-0000000001"]));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 7 }));
        assert!(m.holds() && !m.is_safe());
        assert_eq!(
            m.step(session(SessionEvent::SyncConnected)).outcome,
            Some(LockOutcome::Resumed)
        );
        assert!(m.is_safe());
    }

    #[test]
    fn expiry_loses_the_lock() {
        let mut m = holder();
        assert_eq!(
            m.step(session(SessionEvent::Expired)),
            Step::done(LockOutcome::Lost)
        );
    }

    #[test]
    fn session_expired_reply_while_waiting_loses_the_lock() {
        let mut m = machine();
        m.step(Input::Start);
        assert_eq!(
            m.step(Input::Reply(Err(ZkError::SessionExpired))),
            Step::done(LockOutcome::Lost)
        );
    }

    #[test]
    fn release_tells_the_application_at_once_and_retries_the_delete_through_connection_loss() {
        let mut m = holder();
        let step = m.step(Input::App(LockRequest::Release));
        assert_eq!(step.outcome, Some(LockOutcome::Released));
        let delete = Op::Delete {
            path: format!("{DIR}/g1-lock-0000000001"),
            version: -1,
        };
        assert_eq!(op(&step), &delete);
        let step = m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert_eq!(op(&step), &delete);
        // The first delete was applied after all: NoNode means released.
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(step.action, Action::Done);
    }

    #[test]
    fn an_unexpected_error_is_reported_not_swallowed() {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created("g1-lock-0000000001", 7));
        let step = m.step(Input::Reply(Err(ZkError::NoAuth)));
        assert_eq!(step, Step::done(LockOutcome::Failed(ZkError::NoAuth)));
    }
}
