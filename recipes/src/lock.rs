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

use crate::parts::contender::Line;
use crate::parts::exclusive::{role_outcome, Claim, Exclusive, Held, Hold, Role};
use crate::parts::link::RecipeError;

role_outcome! {
    /// What a lock tells its application.
    LockOutcome, role "lock", Acquired as Granted, Released
}

/// The marker between a contender's guid and its sequence number.
const MARKER: &str = "-lock-";

/// The request an application makes of a held lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockRequest {
    /// Let go of the lock.
    Release,
}

/// The lock's names for its exclusive role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LockRole;

impl Role for LockRole {
    type Request = LockRequest;
    type Outcome = LockOutcome;

    fn line(&self) -> Line {
        Line::first_in(&[MARKER])
    }

    fn tell(&self, hold: Hold) -> LockOutcome {
        hold.into()
    }

    fn let_go() -> LockRequest {
        LockRequest::Release
    }
}

/// An exclusive lock at a directory path, such as `/locks/orders`: [`Lock::acquire`] waits
/// until the session holds it.
pub type Lock = Claim<LockRole>;

/// The lock protocol as a pure state machine.
pub type LockMachine = Exclusive<LockRole>;

/// A held lock: [`LockGuard::token`], [`LockGuard::is_safe`], [`LockGuard::release`].
pub type LockGuard<'c, C, M = LockMachine> = Held<'c, C, M>;

/// Why a lock could not be acquired or released cleanly.
pub type LockError = RecipeError;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::Acls;
    use crate::client::ZkEvent;
    use crate::client::{
        CreateMode, EventType, Op, OpResult, SessionEvent, Stat, WatchedEvent, ZkError,
    };
    use crate::machine::{Action, Input, Recipe};
    use crate::test_steps::{children, op};

    type Step = crate::machine::Step<LockOutcome>;

    const DIR: &str = "/locks/x";

    fn machine() -> LockMachine {
        LockMachine::new(DIR, "g1".to_owned(), LockRole)
    }

    /// A machine whose node `own` was created with token `czxid`, waiting for its listing.
    fn contending(own: &str, czxid: i64) -> LockMachine {
        let mut m = machine();
        m.step(Input::Start);
        m.step(created(own, czxid));
        m
    }

    /// Watching `name` with `exists`.
    fn watches(name: &str) -> Op {
        Op::Exists {
            path: format!("{DIR}/{name}"),
            watch: true,
        }
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

    /// Listing the lock directory again, without a watch.
    fn relist() -> Op {
        Op::GetChildren {
            path: DIR.to_owned(),
            watch: false,
        }
    }

    fn deleted(name: &str) -> Input<LockRequest> {
        let event = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: format!("{DIR}/{name}"),
        };
        Input::Event(ZkEvent::Watch(event))
    }

    /// What `m` tells of the session event `event`.
    fn told(m: &mut LockMachine, event: SessionEvent) -> Option<LockOutcome> {
        m.step(Input::Event(ZkEvent::Session(event))).outcome
    }

    /// A machine that holds the lock with node g1-lock-0000000001 and token 7.
    fn holder() -> LockMachine {
        let mut m = contending("g1-lock-0000000001", 7);
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
            acl: Acls::OPEN,
        };
        assert_eq!(op(&step), &expected);
    }

    #[test]
    fn lowest_sequence_acquires_with_the_czxid_as_token() {
        assert!(holder().holds());
    }

    /// A contender whose node is `own`, having listed `line`, and its next step.
    fn listed(own: &str, line: &[&str]) -> (LockMachine, Step) {
        let mut m = contending(own, 9);
        let step = m.step(children(line));
        (m, step)
    }

    #[test]
    fn a_waiter_watches_only_its_immediate_predecessor_by_sequence_number() {
        // By name "a9-..." sorts first, but its sequence (3) is after ours (2).
        let by_name = [
            "zz-lock-0000000001",
            "g1-lock-0000000002",
            "a9-lock-0000000003",
        ];
        let by_sequence = [
            "a-lock-0000000001",
            "b-lock-0000000002",
            "g1-lock-0000000003",
        ];
        // Each line with where its own node is, and the one it watches.
        for (line, own, ahead) in [(by_name, 1, 0), (by_sequence, 2, 1)] {
            let (mut m, step) = listed(line[own], &line);
            assert_eq!(op(&step), &watches(line[ahead]));
            let step = m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
            assert_eq!(step.action, Action::Wait);
            assert!(m.is_waiting());
            // The predecessor's deletion makes it list again rather than assume it is first.
            let step = m.step(deleted(line[ahead]));
            assert_eq!(op(&step), &relist());
        }
    }

    #[test]
    fn a_predecessor_already_gone_means_listing_again() {
        let (mut m, _) = listed(
            "g1-lock-0000000002",
            &["a-lock-0000000001", "g1-lock-0000000002"],
        );
        let step = m.step(Input::Reply(Ok(OpResult::Exists(None))));
        assert_eq!(op(&step), &relist());
    }

    /// A machine whose create's reply was lost, listing again after a `sync` to find its node.
    fn create_lost() -> LockMachine {
        let mut m = machine();
        m.step(Input::Start);
        let step = m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(
            matches!(op(&step), Op::Sync { .. }),
            "its server brought up to date first"
        );
        let step = m.step(Input::Reply(Ok(OpResult::Synced)));
        assert_eq!(op(&step), &relist());
        m
    }

    #[test]
    fn after_connection_loss_on_create_it_adopts_the_node_carrying_its_guid() {
        let mut m = create_lost();
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
        let mut m = create_lost();
        let step = m.step(children(&["other-lock-0000000004"]));
        assert!(matches!(op(&step), Op::Create { .. }));
    }

    #[test]
    fn connection_loss_on_create_before_the_directory_exists_contends_again() {
        let mut m = create_lost();
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
        let suspended = told(&mut m, SessionEvent::Disconnected);
        assert_eq!(suspended, Some(LockOutcome::Suspended));
        let resumed = told(&mut m, SessionEvent::SyncConnected);
        assert_eq!(resumed, Some(LockOutcome::Resumed));
        assert!(m.holds());
    }

    #[test]
    fn a_lock_granted_after_the_connection_dropped_is_not_safe() {
        let mut m = contending("g1-lock-0000000001", 7);
        told(&mut m, SessionEvent::Disconnected);
        let step = m.step(children(&["g1-lock-0000000001"]));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 7 }));
        assert!(m.holds() && !m.is_safe());
        let resumed = told(&mut m, SessionEvent::SyncConnected);
        assert_eq!(resumed, Some(LockOutcome::Resumed));
        assert!(m.is_safe());
    }

    #[test]
    fn expiry_loses_the_lock() {
        let mut m = holder();
        let expired = m.step(Input::Event(ZkEvent::Session(SessionEvent::Expired)));
        assert_eq!(expired, Step::done(LockOutcome::Lost));
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
        let mut m = contending("g1-lock-0000000001", 7);
        let step = m.step(Input::Reply(Err(ZkError::NoAuth)));
        assert_eq!(step, Step::done(LockOutcome::Failed(ZkError::NoAuth)));
    }
}
