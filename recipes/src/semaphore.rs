//! A counting semaphore: at most N sessions hold a lease at once, fault-tolerant.
//!
//! A lease is an ephemeral sequential node `<dir>/<guid>-lease-<seq>`; it is granted while fewer
//! than N lease nodes are ahead of it. The first waiter (exactly N ahead) watches each of the N
//! nodes ahead with `exists`, so any release wakes it and nobody else; a waiter further back
//! watches its immediate predecessor, which, once granted, writes its own node's data to wake it
//! (so it can become the first waiter): a contender granted with nodes behind it always writes
//! its node, since one of them may have listed it as a waiter. Everyone lists again after every
//! wake-up. The guid makes
//! a lost create reply survivable: the lease is adopted, never counted twice nor left behind
//! while its session lives. A disconnected holder is suspended, an expired one has lost its
//! lease, as for [`crate::lock`].
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient) -> Result<(), zklab_recipes::lock::LockError> {
//! use zklab_recipes::semaphore::Semaphore;
//! let lease = Semaphore::leases("/semaphores/workers", 2).acquire(client).await?;
//! // at most 2 sessions are here at once
//! lease.release().await?;
//! # Ok(()) }
//! ```

use crate::client::CreateMode;
use crate::lock::LockRequest;
use crate::parts::contender::{Gate, Line, Revocation};
use crate::parts::exclusive::{role_outcome, Claim, Exclusive, Hold, Role};

/// The marker of a lease's node.
pub const MARKER: &str = "-lease-";

role_outcome! {
    /// What a semaphore tells its application: it holds a lease, shared with the other holders.
    SemaphoreOutcome, role "lease", Acquired as Shared, Released
}

/// A lease of a semaphore of this many leases: the role of [`Exclusive`] for a semaphore.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    /// How many leases the semaphore has.
    pub leases: u32,
}

impl Role for Lease {
    type Request = LockRequest;
    type Outcome = SemaphoreOutcome;

    fn line(&self) -> Line {
        Line {
            marker: MARKER,
            kin: &[MARKER],
            gate: Gate::Among(self.leases),
            revocation: Revocation::Never,
            parents: Some(CreateMode::Persistent),
        }
    }

    fn tell(&self, hold: Hold) -> SemaphoreOutcome {
        hold.into()
    }

    fn let_go() -> LockRequest {
        LockRequest::Release
    }
}

/// A semaphore at a directory path: [`Semaphore::leases`] makes one, [`Claim::acquire`] waits
/// for a lease.
pub type Semaphore = Claim<Lease>;

impl Semaphore {
    /// The semaphore of `leases` leases whose nodes live under `dir` (created if missing).
    pub fn leases(dir: &str, leases: u32) -> Semaphore {
        Claim::with_role(dir, Lease { leases })
    }
}

/// The semaphore's protocol as a pure state machine.
pub type SemaphoreMachine = Exclusive<Lease>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{EventType, Op, OpResult, Stat, WatchedEvent, ZkEvent};
    use crate::machine::{Action, Input, Recipe, Step};
    use crate::outcome::Outcome;
    use crate::test_steps::{children, op};

    const DIR: &str = "/sem";

    fn exists(version: i32) -> Input<LockRequest> {
        let stat = Stat {
            version,
            ..Stat::default()
        };
        Input::Reply(Ok(OpResult::Exists(Some(stat))))
    }

    fn watches(name: &str) -> Op {
        Op::Exists {
            path: format!("{DIR}/{name}"),
            watch: true,
        }
    }

    /// A machine of a semaphore of 2 whose lease node is `own`, having listed `line`, and its
    /// next step.
    fn listed(own: &str, line: &[&str]) -> (SemaphoreMachine, Step<SemaphoreOutcome>) {
        let mut m = Semaphore::leases(DIR, 2).machine(1);
        m.step(Input::Start);
        let path = format!("{DIR}/{own}");
        let stat = Stat::default();
        m.step(Input::Reply(Ok(OpResult::Created { path, stat })));
        let step = m.step(children(line));
        (m, step)
    }

    /// Whether `step` tells that the lease is held.
    fn acquired(step: &Step<SemaphoreOutcome>) -> bool {
        matches!(step.outcome, Some(SemaphoreOutcome::Acquired { .. }))
    }

    fn touch(name: &str) -> Op {
        Op::SetData {
            path: format!("{DIR}/{name}"),
            data: Vec::new(),
            version: -1,
        }
    }

    #[test]
    fn a_lease_among_the_first_n_is_granted_shared() {
        let (_, step) = listed(
            "g-lease-0000000002",
            &["a-lease-0000000001", "g-lease-0000000002"],
        );
        let shared = Outcome::Shared {
            role: "lease",
            token: 0,
        };
        assert_eq!(step.outcome.map(Outcome::from), Some(shared));
    }

    #[test]
    fn the_first_waiter_watches_every_holder_then_goes_ahead_telling_the_next() {
        let line = [
            "a-lease-0000000001",
            "b-lease-0000000002",
            "g-lease-0000000003",
        ];
        let (mut m, step) = listed(line[2], &line);
        assert_eq!(op(&step), &watches(line[0]));
        // A holder's data was written when it went ahead: no matter to the first waiter.
        assert_eq!(op(&m.step(exists(1))), &watches(line[1]));
        assert_eq!(m.step(exists(0)).action, Action::Wait);
        let gone = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: format!("{DIR}/{}", line[1]),
        };
        let step = m.step(Input::Event(ZkEvent::Watch(gone)));
        assert!(matches!(op(&step), Op::GetChildren { .. }));
        // Someone came in behind it meanwhile: it goes, telling them.
        let step = m.step(children(&[line[0], line[2], "h-lease-0000000004"]));
        assert_eq!(op(&step), &touch(line[2]));
        let step = m.step(Input::Reply(Ok(OpResult::SetData(Stat::default()))));
        assert!(acquired(&step));
    }

    #[test]
    fn a_lease_granted_at_once_with_nodes_behind_it_still_tells_them() {
        // One behind may have listed it as a waiter before a node ahead went, and watch it.
        let own = "g-lease-0000000002";
        let (_, step) = listed(own, &[own, "h-lease-0000000003"]);
        assert_eq!(op(&step), &touch(own));
        let (_, alone) = listed(own, &["a-lease-0000000001", own]);
        assert!(acquired(&alone));
    }

    #[test]
    fn a_waiter_further_back_lists_again_once_its_predecessor_went_ahead() {
        let line = [
            "a-lease-0000000001",
            "b-lease-0000000002",
            "c-lease-0000000003",
            "g-lease-0000000004",
        ];
        let (mut m, step) = listed(line[3], &line);
        assert_eq!(op(&step), &watches(line[2]));
        // Its predecessor's data is written already: it went ahead between listing and exists.
        let step = m.step(exists(1));
        assert!(matches!(op(&step), Op::GetChildren { .. }));
    }
}
