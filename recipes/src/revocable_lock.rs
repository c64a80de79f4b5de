//! The revocable shared lock of ZooKeeper's recipes document: the read/write lock of
//! [`crate::rw_lock`], whose waiters ask the node in their way to give up.
//!
//! A waiter writes `unlock` to the one node it waits for (a reader: the closest writer ahead; a
//! writer: its immediate predecessor), then watches it as the read/write lock does. A contender
//! reads its own node with a watch right after making it, as the document says, and again on
//! every change: an `unlock` written while it waits makes it give up its place (deleting its
//! node is all a waiter can release), one written while it holds makes it let go as soon as its
//! application checks in between uses ([`Held::is_safe`]), so the holder consents once its
//! current use is over. Either way the application learns it was revoked
//! ([`RecipeError::Revoked`] from `acquire`, or [`Held::is_revoked`]).
//!
//! With [`Revocation::Force`] (the document's forced variant), a waiter whose ask was not
//! answered within the grace period deletes the node itself. Its owner may be cut off and still
//! believe it holds, so the waiter first has the application fence the owner's token
//! ([`Claim::fencing`]): the resource refuses it from then on. The owner learns it was forced
//! out from its watch, and is revoked too.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient) -> Result<(), zklab_recipes::parts::link::RecipeError> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use zklab_recipes::parts::contender::Revocation;
//! use zklab_recipes::revocable_lock::RevocableLock;
//! let lock = RevocableLock::new("/locks/catalogue", Revocation::Force(Duration::from_secs(1)));
//! let fence = Arc::new(|token: i64| { /* make the resource refuse `token` */ });
//! let mut reading = lock.read().fencing(fence).acquire(client).await?;
//! while reading.is_safe().await {
//!     // read, presenting reading.token(); stop when asked to give up
//! }
//! reading.release().await?;
//! # Ok(()) }
//! ```
//!
//! [`Held::is_safe`]: crate::parts::exclusive::Held::is_safe
//! [`Held::is_revoked`]: crate::parts::exclusive::Held::is_revoked
//! [`RecipeError::Revoked`]: crate::parts::link::RecipeError::Revoked

use crate::lock::LockRequest;
use crate::parts::contender::{Line, Revocation};
use crate::parts::exclusive::{Claim, Exclusive, Hold, Revoking, Role};
use crate::rw_lock::{Access, RwLockOutcome};

/// One side of a revocable lock: the role of [`Exclusive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RevocableAccess {
    /// Read or write.
    pub access: Access,
    /// Whether its waiters only ask, or force out a holder that does not give up in time.
    pub revocation: Revocation,
}

impl Role for RevocableAccess {
    type Request = LockRequest;
    type Outcome = RwLockOutcome;

    fn line(&self) -> Line {
        Line {
            revocation: self.revocation,
            ..self.access.line()
        }
    }

    fn tell(&self, hold: Hold) -> RwLockOutcome {
        self.access.tell(hold)
    }

    fn let_go() -> LockRequest {
        Access::let_go()
    }

    fn tell_revoking(&self, revoking: Revoking) -> Option<RwLockOutcome> {
        Some(match revoking {
            Revoking::Revoked => RwLockOutcome::Revoked {
                access: self.access,
            },
            Revoking::Forcing { token } => RwLockOutcome::Forcing { token },
        })
    }
}

/// A revocable lock at a directory path, such as `/locks/catalogue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevocableLock {
    dir: String,
    revocation: Revocation,
}

impl RevocableLock {
    /// The lock whose nodes live under `dir` (created if missing); its waiters ask, and force
    /// as `revocation` says.
    pub fn new(dir: &str, revocation: Revocation) -> Self {
        RevocableLock {
            dir: dir.to_owned(),
            revocation,
        }
    }

    fn side(&self, access: Access) -> Claim<RevocableAccess> {
        let role = RevocableAccess {
            access,
            revocation: self.revocation,
        };
        Claim::with_role(&self.dir, role)
    }

    /// Its read side.
    pub fn read(&self) -> Claim<RevocableAccess> {
        self.side(Access::Read)
    }

    /// Its write side.
    pub fn write(&self) -> Claim<RevocableAccess> {
        self.side(Access::Write)
    }
}

/// The revocable lock's protocol as a pure state machine, one side of it.
pub type RevocableLockMachine = Exclusive<RevocableAccess>;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::client::{EventType, Op, OpResult, Stat, WatchedEvent, ZkEvent};
    use crate::machine::{Action, Input, Recipe, Step, Timer};
    use crate::outcome::Outcome;
    use crate::test_steps::{children, op};

    const DIR: &str = "/locks/revocable";
    const GRACE: Duration = Duration::from_millis(300);

    fn path(name: &str) -> String {
        format!("{DIR}/{name}")
    }

    fn data(bytes: &[u8]) -> Input<LockRequest> {
        Input::Reply(Ok(OpResult::Data {
            data: bytes.to_vec(),
            stat: Stat::default(),
        }))
    }

    fn own_changed(name: &str, event_type: EventType) -> Input<LockRequest> {
        Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type,
            path: path(name),
        }))
    }

    /// A machine for `access` whose node is `own` (czxid 7), having read its node, answered with
    /// a listing of `names`; its waiters force after [`GRACE`].
    fn listed(
        access: Access,
        own: &str,
        names: &[&str],
    ) -> (RevocableLockMachine, Step<RwLockOutcome>) {
        listed_under(Revocation::Force(GRACE), access, own, names)
    }

    /// As [`listed`], its waiters revoking as `revocation` says.
    fn listed_under(
        revocation: Revocation,
        access: Access,
        own: &str,
        names: &[&str],
    ) -> (RevocableLockMachine, Step<RwLockOutcome>) {
        let role = RevocableAccess { access, revocation };
        let mut m = RevocableLockMachine::new(DIR, "g".to_owned(), role);
        m.step(Input::Start);
        let stat = Stat {
            czxid: 7,
            ..Stat::default()
        };
        let created = Input::Reply(Ok(OpResult::Created {
            path: path(own),
            stat,
        }));
        let read = m.step(created);
        let read_own = Op::GetData {
            path: path(own),
            watch: true,
        };
        assert_eq!(
            op(&read),
            &read_own,
            "it reads its node right after making it"
        );
        m.step(data(b""));
        let step = m.step(children(names));
        (m, step)
    }

    #[test]
    fn a_waiter_asks_the_node_in_its_way_then_forces_it_out_fenced_after_the_grace_period() {
        let names = ["a-read-0000000001", "g-write-0000000002"];
        let (mut m, step) = listed(Access::Write, names[1], &names);
        let ask = Op::SetData {
            path: path(names[0]),
            data: b"unlock".to_vec(),
            version: -1,
        };
        assert_eq!(op(&step), &ask, "it asks before it watches");
        let asked = Stat {
            czxid: 5,
            version: 1,
            ..Stat::default()
        };
        let step = m.step(Input::Reply(Ok(OpResult::SetData(asked))));
        let watch = Op::Exists {
            path: path(names[0]),
            watch: true,
        };
        assert_eq!((op(&step), step.timer), (&watch, Some(Timer::Set(GRACE))));
        m.step(Input::Reply(Ok(OpResult::Exists(Some(asked)))));
        let step = m.step(Input::Timeout);
        let delete = Op::Delete {
            path: path(names[0]),
            version: -1,
        };
        assert_eq!(op(&step), &delete);
        let fenced = step.outcome.map(Outcome::from);
        assert_eq!(fenced, Some(Outcome::Forcing { token: 5 }), "fenced first");
    }

    #[test]
    fn a_waiter_that_only_asks_sets_no_grace_timer_and_never_forces() {
        let names = ["a-write-0000000001", "g-write-0000000002"];
        let (mut m, step) = listed_under(Revocation::Ask, Access::Write, names[1], &names);
        assert!(matches!(op(&step), Op::SetData { data, .. } if data == b"unlock"));
        let step = m.step(Input::Reply(Ok(OpResult::SetData(Stat::default()))));
        assert_eq!(step.timer, None);
        m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
        let step = m.step(Input::Timeout);
        assert_eq!((step.action, step.outcome), (Action::Wait, None));
        assert!(m.is_waiting());
    }

    #[test]
    fn a_holder_asked_to_give_up_lets_go_when_it_hears_of_it() {
        let names = ["g-read-0000000001"];
        let (mut m, step) = listed(Access::Read, names[0], &names);
        assert!(m.holds(), "{step:?}");
        let step = m.step(own_changed(names[0], EventType::NodeDataChanged));
        let reread = Op::GetData {
            path: path(names[0]),
            watch: true,
        };
        assert_eq!(op(&step), &reread);
        let step = m.step(data(b"unlock"));
        let revoked = Outcome::Revoked { role: "read lock" };
        assert_eq!(step.outcome.map(Outcome::from), Some(revoked));
        assert!(matches!(op(&step), Op::Delete { path: p, .. } if *p == path(names[0])));
    }

    #[test]
    fn a_waiter_asked_to_give_up_gives_up_its_place() {
        let names = ["a-write-0000000001", "g-read-0000000002"];
        let (mut m, _) = listed(Access::Read, names[1], &names);
        m.step(Input::Reply(Ok(OpResult::SetData(Stat::default()))));
        m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
        assert!(m.is_waiting());
        m.step(own_changed(names[1], EventType::NodeDataChanged));
        let step = m.step(data(b"unlock"));
        let revoked = Outcome::Revoked { role: "read lock" };
        assert_eq!(step.outcome.map(Outcome::from), Some(revoked));
        assert_eq!(step.timer, Some(Timer::Cancel), "no grace period runs on");
    }

    #[test]
    fn a_holder_forced_out_learns_it_lost_the_lock() {
        let names = ["g-write-0000000001"];
        let (mut m, _) = listed(Access::Write, names[0], &names);
        let step = m.step(own_changed(names[0], EventType::NodeDeleted));
        let revoked = Outcome::Revoked { role: "write lock" };
        assert_eq!(step.outcome.map(Outcome::from), Some(revoked));
        assert!(!m.holds());
    }
}
