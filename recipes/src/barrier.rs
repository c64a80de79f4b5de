//! A barrier, as ZooKeeper's recipes document describes it: a controller sets the barrier node;
//! waiters call `exists` on it with a watch and go on once it is gone, reading it again after
//! every event (an event is news, not a verdict: a session event, or a watch fired by the node
//! being set again, says nothing about whether it is gone now). A waiter syncs before its first
//! read: it knows of the barrier from elsewhere (its controller told it), and a follower that
//! has not applied the barrier's creation yet would answer that it is gone.
//!
//! ```no_run
//! # async fn demo(controller: &impl zklab_recipes::client::ZkClient,
//! #               worker: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::barrier::BarrierError> {
//! use zklab_recipes::barrier::Barrier;
//!
//! let barrier = Barrier::new("/barriers/start");
//! let set = barrier.set(controller).await?; // the barrier stands
//! // ... elsewhere, each worker:
//! barrier.wait(worker).await?; // returns once the barrier is gone
//! // ... and the controller lifts it:
//! set.remove().await?;
//! # Ok(()) }
//! ```
//!
//! The barrier node is ephemeral: it stands while its controller's session lives, so a
//! controller that dies lifts its barrier rather than holding every waiter forever (the document
//! leaves this open). Setting is idempotent (a create whose reply was lost finds the node there),
//! and so is removing.

use crate::acl::Acls;
use crate::client::{CreateMode, Op, OpResult, SessionEvent, SessionId, ZkClient};
use crate::client::{ZkError, ZkEvent};
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::link::{ask_until, Connection, Delivery, Link, RecipeError};
use crate::parts::parents::{dir_of, Parents};
use crate::session_renaming::RenameSessions;

/// What a barrier is called in outcomes.
pub const GATE: &str = "barrier";

/// What a barrier machine tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierOutcome {
    /// The controller's barrier stands; `token` is its node's czxid.
    Set {
        /// The barrier node's czxid.
        token: i64,
    },
    /// The controller's barrier is gone.
    Removed,
    /// A waiter saw the barrier gone, and goes on.
    Passed,
    /// The session ended: a controller's barrier went with it; a waiter must wait again in a new
    /// session.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle.
    Failed(ZkError),
}

impl From<BarrierOutcome> for Outcome {
    fn from(outcome: BarrierOutcome) -> Self {
        match outcome {
            BarrierOutcome::Set { token } => Outcome::Granted { role: GATE, token },
            BarrierOutcome::Removed => Outcome::Released { role: GATE },
            BarrierOutcome::Passed => Outcome::Passed { gate: GATE },
            BarrierOutcome::Lost => Outcome::Lost,
            BarrierOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// What a controller's application may ask of its machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierRequest {
    /// Lift the barrier.
    Remove,
}

/// The part a machine plays at the barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum Part {
    /// Sets the barrier, and removes it when asked.
    Controller,
    /// Waits for the barrier to be gone.
    Waiter,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The barrier node's create is in flight.
    Setting,
    /// Its directory is missing: creating its ancestors.
    CreatingParent(Parents),
    /// The barrier stands; the controller waits to be asked to lift it.
    Standing,
    /// The delete is in flight.
    Removing,
    /// A waiter's `sync` is in flight: it learned of the barrier from elsewhere, and its server
    /// may not have applied the barrier's creation yet.
    Syncing,
    /// A waiter's `exists` (with a watch) is in flight; `again` once news of the barrier came
    /// meanwhile (the answer may predate it: read again).
    Checking {
        again: bool,
    },
    /// A waiter's watch is set on the standing barrier.
    Watching,
    Done,
}

/// A barrier's controller or waiter as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct BarrierMachine {
    #[rename(keep)]
    path: String,
    part: Part,
    /// Its session: a barrier node found already there is its own only if this session owns it.
    #[rename(session)]
    session: SessionId,
    phase: Phase,
    link: Link,
}

impl BarrierMachine {
    /// A machine playing `part` at the barrier node `path`, in session `session`.
    pub fn new(path: &str, part: Part, session: SessionId) -> Self {
        BarrierMachine {
            path: path.to_owned(),
            part,
            session,
            phase: Phase::Idle,
            link: Link::default(),
        }
    }

    /// The barrier node's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<BarrierOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: BarrierOutcome) -> Step<BarrierOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    fn set(&mut self) -> Step<BarrierOutcome> {
        let create = Op::Create {
            path: self.path.clone(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
            acl: Acls::OPEN,
        };
        self.send(Phase::Setting, create)
    }

    fn sync(&mut self) -> Step<BarrierOutcome> {
        let sync = Op::Sync {
            path: self.path.clone(),
        };
        self.send(Phase::Syncing, sync)
    }

    fn check(&mut self) -> Step<BarrierOutcome> {
        let exists = Op::Exists {
            path: self.path.clone(),
            watch: true,
        };
        self.send(Phase::Checking { again: false }, exists)
    }

    fn dir(&self) -> &str {
        dir_of(&self.path)
    }

    fn on_reply(&mut self, reply: Result<OpResult, ZkError>) -> Step<BarrierOutcome> {
        match (self.phase, reply) {
            (Phase::Setting, Ok(OpResult::Created { stat, .. })) => {
                self.phase = Phase::Standing;
                Step::wait().telling(BarrierOutcome::Set { token: stat.czxid })
            }
            // A create whose reply was lost is resent and finds the node there: read whose it is.
            (Phase::Setting, Err(ZkError::NodeExists)) => {
                let exists = Op::Exists {
                    path: self.path.clone(),
                    watch: false,
                };
                self.send(Phase::Setting, exists)
            }
            (Phase::Setting, Ok(OpResult::Exists(Some(stat))))
                if stat.ephemeral_owner == self.session =>
            {
                self.phase = Phase::Standing;
                Step::wait().telling(BarrierOutcome::Set { token: stat.czxid })
            }
            // Another session's barrier stands there: this one cannot set it.
            (Phase::Setting, Ok(OpResult::Exists(Some(_)))) => {
                self.done(BarrierOutcome::Failed(ZkError::NodeExists))
            }
            // Gone between the create and the read: its session ended; the expiry is on its way.
            (Phase::Setting, Ok(OpResult::Exists(None))) => self.set(),
            (Phase::Setting, Err(ZkError::NoNode)) if self.dir() != "/" => {
                let (parents, op) = Parents::start(self.dir(), CreateMode::Persistent);
                self.send(Phase::CreatingParent(parents), op)
            }
            (Phase::CreatingParent(parents), Ok(_) | Err(ZkError::NodeExists)) => {
                match parents.next(self.dir()) {
                    Some((next, op)) => self.send(Phase::CreatingParent(next), op),
                    None => self.set(),
                }
            }
            (Phase::Removing, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => {
                self.done(BarrierOutcome::Removed)
            }
            (Phase::Syncing, Ok(_)) => self.check(),
            (Phase::Checking { .. }, Ok(OpResult::Exists(None))) => {
                self.done(BarrierOutcome::Passed)
            }
            (Phase::Checking { again: true }, Ok(OpResult::Exists(Some(_)))) => self.check(),
            (Phase::Checking { again: false }, Ok(OpResult::Exists(Some(_)))) => {
                self.phase = Phase::Watching;
                Step::wait()
            }
            (_, Err(error)) => self.done(BarrierOutcome::Failed(error)),
            (_, Ok(_)) => Step::wait(),
        }
    }
}

impl Recipe for BarrierMachine {
    type Request = BarrierRequest;
    type Outcome = BarrierOutcome;

    fn step(&mut self, input: Input<BarrierRequest>) -> Step<BarrierOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => match self.part {
                Part::Controller => self.set(),
                Part::Waiter => self.sync(),
            },
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.done(BarrierOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::App(BarrierRequest::Remove) if self.phase == Phase::Standing => {
                let delete = Op::Delete {
                    path: self.path.clone(),
                    version: -1,
                };
                self.send(Phase::Removing, delete)
            }
            Input::Event(ZkEvent::Session(event)) => {
                // A standing barrier needs no care while disconnected: only the session's end
                // takes it down.
                if self.link.on_session(event, false) == Some(Connection::Lost) {
                    return self.done(BarrierOutcome::Lost);
                }
                // Back in the same session: what the watch would have said may have been
                // missed while away, so read again.
                if event == SessionEvent::SyncConnected && self.phase == Phase::Watching {
                    return self.check();
                }
                Step::wait()
            }
            Input::Event(ZkEvent::Watch(event)) if event.path == self.path => match self.phase {
                // Deleted, or set again: either way, read it.
                Phase::Watching => self.check(),
                Phase::Checking { .. } => {
                    self.phase = Phase::Checking { again: true };
                    Step::wait()
                }
                _ => Step::wait(),
            },
            Input::App(_) | Input::Event(_) | Input::Timeout => Step::wait(),
        }
    }
}

/// Why a barrier operation did not complete: the session ended first (a controller's barrier
/// went with it), or ZooKeeper answered with an error the recipe cannot handle.
pub type BarrierError = RecipeError;

/// What a barrier keeps besides its node's path: nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BarrierSettings;

/// A barrier at one node path.
pub type Barrier = Handle<BarrierSettings>;

impl Barrier {
    /// The barrier whose node is `path` (its directory is created if missing).
    pub fn new(path: &str) -> Self {
        Handle::at(path, BarrierSettings)
    }

    /// Sets the barrier; it stands until [`SetBarrier::remove`] or the session's end.
    pub async fn set<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<SetBarrier<'c, C, BarrierMachine>, BarrierError> {
        let machine = BarrierMachine::new(&self.path, Part::Controller, client.session_id());
        self.set_with(client, machine).await
    }

    /// Sets the barrier with `machine`: a controller's machine, or one built around it.
    pub async fn set_with<'c, C: ZkClient, M: Plays<BarrierRequest, BarrierOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<SetBarrier<'c, C, M>, BarrierError> {
        let set = self.start_until(client, machine, |outcome| match outcome {
            BarrierOutcome::Set { token } => Some(*token),
            _ => None,
        });
        let (driver, token) = set.await?;
        Ok(SetBarrier { driver, token })
    }

    /// Waits until the barrier is gone.
    pub async fn wait<C: ZkClient>(&self, client: &C) -> Result<(), BarrierError> {
        let machine = BarrierMachine::new(&self.path, Part::Waiter, client.session_id());
        self.wait_with(client, machine).await
    }

    /// Waits with `machine`: a waiter's machine, or one built around it.
    pub async fn wait_with<C: ZkClient, M: Plays<BarrierRequest, BarrierOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<(), BarrierError> {
        let passed = self.start_until(client, machine, |outcome| {
            (*outcome == BarrierOutcome::Passed).then_some(())
        });
        passed.await.map(|_| ())
    }
}

/// A barrier this session has set. Dropping it leaves the barrier standing until the session
/// ends; [`SetBarrier::remove`] lifts it.
#[derive(Debug)]
pub struct SetBarrier<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    token: i64,
}

impl<C: ZkClient, M: Plays<BarrierRequest, BarrierOutcome>> SetBarrier<'_, C, M> {
    /// The barrier node's czxid.
    pub fn token(&self) -> i64 {
        self.token
    }

    /// Lifts the barrier, retrying the delete through ConnectionLoss. Fails with `SessionLost`
    /// if the session had already ended (and the barrier with it).
    pub async fn remove(mut self) -> Result<(), BarrierError> {
        ask_until(&mut self.driver, BarrierRequest::Remove, |outcome| {
            (*outcome == BarrierOutcome::Removed).then_some(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{EventType, Stat, WatchedEvent};
    use crate::machine::Action;
    use crate::test_steps::op;

    const PATH: &str = "/b/round";
    const SESSION: SessionId = 5;

    fn exists(standing: bool) -> Input<BarrierRequest> {
        let stat = Stat {
            czxid: 7,
            ..Stat::default()
        };
        Input::Reply(Ok(OpResult::Exists(standing.then_some(stat))))
    }

    fn watch(event_type: EventType) -> Input<BarrierRequest> {
        Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type,
            path: PATH.to_owned(),
        }))
    }

    /// A waiter that has synced, its first read in flight.
    fn checking() -> BarrierMachine {
        let mut waiter = BarrierMachine::new(PATH, Part::Waiter, SESSION);
        let step = waiter.step(Input::Start);
        assert!(matches!(op(&step), Op::Sync { .. }));
        let step = waiter.step(Input::Reply(Ok(OpResult::Synced)));
        assert!(matches!(op(&step), Op::Exists { watch: true, .. }));
        waiter
    }

    fn waiting() -> BarrierMachine {
        let mut waiter = checking();
        assert_eq!(waiter.step(exists(true)).action, Action::Wait);
        waiter
    }

    #[test]
    fn a_waiter_passes_only_when_a_read_finds_the_barrier_gone() {
        let mut waiter = waiting();
        // Set again (a watch fired by creation), then deleted: each event is read again.
        let step = waiter.step(watch(EventType::NodeCreated));
        assert!(matches!(op(&step), Op::Exists { .. }));
        assert_eq!(waiter.step(exists(true)).outcome, None);
        let step = waiter.step(watch(EventType::NodeDeleted));
        assert!(matches!(op(&step), Op::Exists { .. }));
        let step = waiter.step(exists(false));
        assert_eq!(step.outcome, Some(BarrierOutcome::Passed));
        assert_eq!(step.action, Action::Done);
    }

    #[test]
    fn a_waiter_reads_again_after_reconnecting_and_not_on_a_mere_disconnect() {
        let mut waiter = waiting();
        let disconnected = Input::Event(ZkEvent::Session(SessionEvent::Disconnected));
        assert_eq!(waiter.step(disconnected).action, Action::Wait);
        let reconnected = Input::Event(ZkEvent::Session(SessionEvent::SyncConnected));
        assert!(matches!(op(&waiter.step(reconnected)), Op::Exists { .. }));
    }

    /// The deletion's watch event can reach the machine before the reply of the `exists` that
    /// set the watch (both arrive together, and the driver hands events over first): the reply
    /// "still there" is older than the event, so the waiter reads again instead of waiting on
    /// a watch that already fired. Found by the barrier sweep under all faults.
    #[test]
    fn news_that_comes_while_the_read_is_in_flight_is_read_again() {
        let mut waiter = checking();
        assert_eq!(
            waiter.step(watch(EventType::NodeDeleted)).action,
            Action::Wait
        );
        let step = waiter.step(exists(true));
        assert!(matches!(op(&step), Op::Exists { .. }), "{step:?}");
        assert_eq!(
            waiter.step(exists(false)).outcome,
            Some(BarrierOutcome::Passed)
        );
    }

    #[test]
    fn a_controller_sets_and_removes_and_finds_its_own_node_after_a_lost_reply() {
        let mut controller = BarrierMachine::new(PATH, Part::Controller, SESSION);
        let step = controller.step(Input::Start);
        assert!(matches!(
            op(&step),
            Op::Create {
                mode: CreateMode::Ephemeral,
                ..
            }
        ));
        // The reply was lost: the create is sent again and finds the node there.
        let step = controller.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(matches!(op(&step), Op::Create { .. }));
        let step = controller.step(Input::Reply(Err(ZkError::NodeExists)));
        assert!(matches!(op(&step), Op::Exists { watch: false, .. }));
        let ours = Stat {
            czxid: 7,
            ephemeral_owner: SESSION,
            ..Stat::default()
        };
        let step = controller.step(Input::Reply(Ok(OpResult::Exists(Some(ours)))));
        assert_eq!(step.outcome, Some(BarrierOutcome::Set { token: 7 }));
        let step = controller.step(Input::App(BarrierRequest::Remove));
        assert!(matches!(op(&step), Op::Delete { .. }));
        let step = controller.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(step.outcome, Some(BarrierOutcome::Removed));
    }

    #[test]
    fn a_barrier_another_session_set_is_not_taken_for_ones_own() {
        let mut controller = BarrierMachine::new(PATH, Part::Controller, SESSION);
        controller.step(Input::Start);
        controller.step(Input::Reply(Err(ZkError::NodeExists)));
        let step = controller.step(exists(true));
        assert_eq!(
            step.outcome,
            Some(BarrierOutcome::Failed(ZkError::NodeExists))
        );
    }

    #[test]
    fn a_missing_directory_is_created_before_the_barrier() {
        let mut controller = BarrierMachine::new("/a/b/round", Part::Controller, SESSION);
        controller.step(Input::Start);
        let step = controller.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(op(&step).path(), "/a");
        let step = controller.step(Input::Reply(Err(ZkError::NodeExists)));
        assert_eq!(op(&step).path(), "/a/b");
        let created = Ok(OpResult::Created {
            path: "/a/b".to_owned(),
            stat: Stat::default(),
        });
        let step = controller.step(Input::Reply(created));
        assert_eq!(op(&step).path(), "/a/b/round");
    }

    #[test]
    fn a_session_end_is_lost_for_either_part() {
        for part in [Part::Controller, Part::Waiter] {
            let mut machine = BarrierMachine::new(PATH, part, SESSION);
            machine.step(Input::Start);
            let expired = Input::Event(ZkEvent::Session(SessionEvent::Expired));
            assert_eq!(
                machine.step(expired).outcome,
                Some(BarrierOutcome::Lost),
                "{part:?}"
            );
        }
    }
}
