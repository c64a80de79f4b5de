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

use crate::client::{CreateMode, EventType, Op, OpResult, SessionEvent, SessionId, ZkClient};
use crate::client::{WatchedEvent, ZkError, ZkEvent};
use crate::machine::{Driver, Input, Recipe};
use crate::outcome::{Outcome, Recorder};
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// Not started.
    Idle,
    /// The create of the contender node is in flight.
    Creating,
    /// The lock directory is missing: creating its ancestors, this many path components deep.
    CreatingParent(usize),
    /// After ConnectionLoss on create: listing the children to find the node with our guid.
    FindingOwnNode,
    /// Reading the stat of an adopted node, for its czxid.
    ReadingToken,
    /// Listing the children to see who is first.
    Listing,
    /// Watching the predecessor (the exists is in flight, or set and waiting).
    Watching {
        /// The predecessor's child name.
        predecessor: String,
    },
    /// Holding the lock.
    Held,
    /// The delete of our node is in flight.
    Releasing,
    /// Finished.
    Done,
}

/// The lock protocol as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockMachine {
    dir: String,
    guid: String,
    phase: Phase,
    /// The op in flight, to send again after ConnectionLoss where that is safe.
    in_flight: Option<Op>,
    /// Our node's full path, once known.
    node: Option<String>,
    token: i64,
    /// The predecessor went while a reply was still outstanding: list again when it comes.
    relist: bool,
    /// The session's connection is up, as far as the machine has heard. Tracked in every phase:
    /// the lock can be granted by a reply that arrives just before the news of a disconnect.
    connected: bool,
}

impl LockMachine {
    /// A machine contending for the lock at `dir`, naming its node with `guid` (unique per
    /// contender and stable for its session: [`session_guid`] gives one).
    pub fn new(dir: &str, guid: String) -> Self {
        LockMachine {
            dir: dir.to_owned(),
            guid,
            phase: Phase::Idle,
            in_flight: None,
            node: None,
            token: 0,
            relist: false,
            connected: true,
        }
    }

    /// Whether the holder may act on the lock: it holds it and its connection is up (a
    /// disconnected holder may already have lost it).
    pub fn is_safe(&self) -> bool {
        self.holds() && self.connected
    }

    /// Whether the machine currently holds the lock (suspended or not).
    pub fn holds(&self) -> bool {
        self.phase == Phase::Held
    }

    /// Whether the machine is waiting for its predecessor to go.
    pub fn is_waiting(&self) -> bool {
        matches!(self.phase, Phase::Watching { .. }) && self.in_flight.is_none()
    }

    /// The path of the contender node, once created or adopted.
    pub fn node(&self) -> Option<&str> {
        self.node.as_deref()
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step {
        self.phase = phase;
        self.in_flight = Some(op.clone());
        Step::send(op)
    }

    fn finish(&mut self, outcome: LockOutcome) -> Step {
        self.phase = Phase::Done;
        self.in_flight = None;
        Step::done(outcome)
    }

    fn create(&mut self) -> Step {
        let op = Op::Create {
            path: format!("{}/{}{}", self.dir, self.guid, LOCK_MARKER),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        };
        self.send(Phase::Creating, op)
    }

    fn list(&mut self) -> Step {
        self.relist = false;
        self.send(
            Phase::Listing,
            Op::GetChildren {
                path: self.dir.clone(),
                watch: false,
            },
        )
    }

    /// Creates the `depth`-th ancestor of the lock directory (1 = the top component).
    fn create_parent(&mut self, depth: usize) -> Step {
        let end = self
            .dir
            .match_indices('/')
            .nth(depth)
            .map_or(self.dir.len(), |(i, _)| i);
        let op = Op::Create {
            path: self.dir[..end].to_owned(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        };
        self.send(Phase::CreatingParent(depth), op)
    }

    fn on_reply(&mut self, reply: Result<OpResult, ZkError>) -> Step {
        let sent = self.in_flight.take();
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        match (phase, reply) {
            (
                Phase::Releasing,
                Ok(OpResult::Deleted) | Err(ZkError::NoNode | ZkError::SessionExpired),
            ) => {
                self.phase = Phase::Done;
                Step::stop()
            }
            (_, Err(ZkError::SessionExpired)) => self.finish(LockOutcome::Lost),
            (Phase::Creating, Err(ZkError::ConnectionLoss)) => self.send(
                Phase::FindingOwnNode,
                Op::GetChildren {
                    path: self.dir.clone(),
                    watch: false,
                },
            ),
            // Reads and the release are idempotent: after ConnectionLoss, ask again. The client
            // holds the op until it has reconnected.
            (phase, Err(ZkError::ConnectionLoss)) if phase != Phase::Creating => match sent {
                Some(op) => self.send(phase, op),
                None => self.finish(LockOutcome::Failed(ZkError::ConnectionLoss)),
            },
            (Phase::Creating, Ok(OpResult::Created { path, stat })) => {
                self.node = Some(path);
                self.token = stat.czxid;
                self.list()
            }
            (Phase::Creating, Err(ZkError::NoNode)) => self.create_parent(1),
            // No lock directory, so no node of ours in it: contend from the start, which creates
            // the directory (the first create's ConnectionLoss can come before anyone made it).
            (Phase::FindingOwnNode | Phase::Listing, Err(ZkError::NoNode)) => self.create(),
            (Phase::CreatingParent(depth), Ok(_) | Err(ZkError::NodeExists)) => {
                if depth >= self.dir.matches('/').count() {
                    self.create()
                } else {
                    self.create_parent(depth + 1)
                }
            }
            (Phase::FindingOwnNode, Ok(OpResult::Children { children, .. })) => {
                match children
                    .iter()
                    .find(|c| c.starts_with(&self.guid) && c.contains(LOCK_MARKER))
                {
                    Some(own) => {
                        let path = format!("{}/{}", self.dir, own);
                        self.node = Some(path.clone());
                        self.send(Phase::ReadingToken, Op::Exists { path, watch: false })
                    }
                    None => self.create(),
                }
            }
            (Phase::ReadingToken, Ok(OpResult::Exists(Some(stat)))) => {
                self.token = stat.czxid;
                self.list()
            }
            (Phase::ReadingToken, Ok(OpResult::Exists(None))) => self.create(),
            (Phase::Listing, Ok(OpResult::Children { children, .. })) => self.on_children(children),
            (Phase::Watching { predecessor }, Ok(OpResult::Exists(stat))) => {
                if stat.is_none() || self.relist {
                    self.list()
                } else {
                    self.phase = Phase::Watching { predecessor };
                    Step::wait()
                }
            }
            (_, Err(error)) => self.finish(LockOutcome::Failed(error)),
            (_, Ok(_)) => self.finish(LockOutcome::Failed(ZkError::MarshallingError)),
        }
    }

    /// Decides from a listing: first in line holds the lock; anyone else watches its predecessor.
    fn on_children(&mut self, children: Vec<String>) -> Step {
        let mut contenders: Vec<(i64, String)> = children
            .into_iter()
            .filter_map(|name| sequence_of(&name).map(|seq| (seq, name)))
            .collect();
        contenders.sort();
        let own = self
            .node
            .as_deref()
            .and_then(|n| n.rsplit('/').next())
            .unwrap_or_default();
        let Some(position) = contenders.iter().position(|(_, name)| name == own) else {
            // Our node is not among the children (the directory was deleted and made again under
            // us): contend anew.
            return self.create();
        };
        if position == 0 {
            self.phase = Phase::Held;
            return Step::wait().telling(LockOutcome::Acquired { token: self.token });
        }
        let predecessor = contenders[position - 1].1.clone();
        let path = format!("{}/{}", self.dir, predecessor);
        self.send(
            Phase::Watching { predecessor },
            Op::Exists { path, watch: true },
        )
    }

    fn on_watch(&mut self, event: WatchedEvent) -> Step {
        let wakes = match &self.phase {
            Phase::Watching { predecessor } => {
                event.event_type == EventType::NodeDeleted
                    && event
                        .path
                        .strip_prefix(self.dir.as_str())
                        .and_then(|p| p.strip_prefix('/'))
                        == Some(predecessor.as_str())
            }
            _ => false,
        };
        if !wakes {
            return Step::wait();
        }
        if self.in_flight.is_some() {
            self.relist = true;
            Step::wait()
        } else {
            self.list()
        }
    }

    fn on_session(&mut self, event: SessionEvent) -> Step {
        match event {
            SessionEvent::Expired | SessionEvent::Closed if self.phase == Phase::Releasing => {
                self.phase = Phase::Done;
                self.in_flight = None;
                Step::stop()
            }
            SessionEvent::Expired | SessionEvent::Closed => self.finish(LockOutcome::Lost),
            SessionEvent::Disconnected => {
                let was = std::mem::replace(&mut self.connected, false);
                match self.phase {
                    Phase::Held if was => Step::wait().telling(LockOutcome::Suspended),
                    _ => Step::wait(),
                }
            }
            SessionEvent::SyncConnected => {
                let was = std::mem::replace(&mut self.connected, true);
                match self.phase {
                    Phase::Held if !was => Step::wait().telling(LockOutcome::Resumed),
                    _ => Step::wait(),
                }
            }
        }
    }
}

impl Recipe for LockMachine {
    type Request = LockRequest;
    type Outcome = LockOutcome;

    fn step(&mut self, input: Input<LockRequest>) -> Step {
        match input {
            _ if self.phase == Phase::Done => Step::stop(),
            Input::Start if self.phase == Phase::Idle => self.create(),
            Input::Start => Step::wait(),
            Input::Reply(reply) => self.on_reply(reply),
            Input::Event(ZkEvent::Watch(event)) => self.on_watch(event),
            Input::Event(ZkEvent::Session(event)) => self.on_session(event),
            // The application stops using the lock the moment it asks to release: from here the
            // delete only cleans up, retried through ConnectionLoss.
            Input::App(LockRequest::Release) if self.phase == Phase::Held => {
                let path = self.node.clone().unwrap_or_default();
                self.send(Phase::Releasing, Op::Delete { path, version: -1 })
                    .telling(LockOutcome::Released)
            }
            // The lock sets no timer.
            Input::App(LockRequest::Release) | Input::Timeout => Step::wait(),
        }
    }
}

impl RenameSessions for LockMachine {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        let phase = match &self.phase {
            Phase::Watching { predecessor } => Phase::Watching {
                predecessor: renaming.text(predecessor),
            },
            other => other.clone(),
        };
        LockMachine {
            dir: self.dir.clone(),
            guid: renaming.guid(&self.guid),
            phase,
            in_flight: self.in_flight.rename_sessions(renaming),
            node: self.node.rename_sessions(renaming),
            token: self.token,
            relist: self.relist,
            connected: self.connected,
        }
    }
}

/// The server's sequence number of a contender node, or `None` for a foreign child.
fn sequence_of(name: &str) -> Option<i64> {
    let (_, sequence) = name.rsplit_once(LOCK_MARKER)?;
    sequence.parse::<i32>().ok().map(i64::from)
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
    use crate::client::Stat;
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

    #[test]
    fn foreign_children_are_ignored_when_ordering() {
        assert_eq!(sequence_of("g1-lock-0000000042"), Some(42));
        assert_eq!(sequence_of("g1-lock--000000001"), Some(-1));
        assert_eq!(sequence_of("readme"), None);
    }
}
