//! The shared (read/write) lock of ZooKeeper's recipes document, fault-tolerant.
//!
//! A reader creates an ephemeral sequential node `<dir>/<guid>-read-<seq>`, a writer
//! `<dir>/<guid>-write-<seq>`. A reader holds the lock once no write node has a lower sequence,
//! and until then watches with `exists` the closest write node below its own: when that writer
//! goes, every reader behind it (and before the next writer) goes together, which the document
//! points out is no herd, since they can all proceed. A writer is the exclusive lock's contender:
//! it holds once first in line and watches its immediate predecessor, reader or writer. Both
//! list again whenever the node they wait for is gone, adopt their node by guid after a lost
//! create reply, are suspended while disconnected and lose the lock when their session ends,
//! exactly as [`crate::lock`]. The fencing token is the node's czxid: a resource accepts a
//! write only with a token at least as high as any it has seen, and a read only with a token at
//! least as high as the last write's.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient) -> Result<(), zklab_recipes::lock::LockError> {
//! use zklab_recipes::rw_lock::RwLock;
//! let lock = RwLock::new("/locks/catalogue");
//! let reading = lock.read().acquire(client).await?;
//! // read, presenting reading.token()
//! reading.release().await?;
//! let mut writing = lock.write().acquire(client).await?;
//! if writing.is_safe().await {
//!     // write, presenting writing.token()
//! }
//! writing.release().await?;
//! # Ok(()) }
//! ```

use crate::client::{CreateMode, ZkError};
use crate::lock::LockRequest;
use crate::outcome::Outcome;
use crate::parts::contender::{Gate, Line, Revocation};
use crate::parts::exclusive::{Claim, Exclusive, Hold, Role};

/// The marker of a reader's node.
pub const READ: &str = "-read-";

/// The marker of a writer's node.
pub const WRITE: &str = "-write-";

/// Both kinds of node are in the one line.
const KIN: &[&str] = &[READ, WRITE];

/// Which side of the lock a contender takes: the role of [`Exclusive`] for a read/write lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    /// Shared with other readers, never with a writer.
    Read,
    /// Held alone.
    Write,
}

impl Access {
    /// Its name in the trace.
    pub fn role(self) -> &'static str {
        match self {
            Access::Read => "read lock",
            Access::Write => "write lock",
        }
    }
}

/// What a read/write lock tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RwLockOutcome {
    /// The client holds the lock for `access`, with the fencing token `token` (its node's czxid).
    Acquired {
        /// Read or write.
        access: Access,
        /// The fencing token.
        token: i64,
    },
    /// The connection dropped while holding: stop trusting the lock until
    /// [`RwLockOutcome::Resumed`].
    Suspended,
    /// Reconnected within the same session while holding: the lock is still held.
    Resumed,
    /// The session ended: the lock, held or awaited, is gone.
    Lost,
    /// The client let go of the lock it held for `access`.
    Released {
        /// Read or write.
        access: Access,
    },
    /// Asked to give up (a revocable lock, see [`crate::revocable_lock`]), the client let go of
    /// the lock it held or waited for `access`.
    Revoked {
        /// Read or write.
        access: Access,
    },
    /// About to force out the holder of `token` (a revocable lock's forced variant): the
    /// resource must refuse `token` from now on.
    Forcing {
        /// The token of the holder forced out.
        token: i64,
    },
    /// The recipe gave up on an error it cannot handle.
    Failed(ZkError),
}

impl From<RwLockOutcome> for Outcome {
    fn from(outcome: RwLockOutcome) -> Outcome {
        match outcome {
            RwLockOutcome::Acquired {
                access: Access::Read,
                token,
            } => Outcome::Shared {
                role: Access::Read.role(),
                token,
            },
            RwLockOutcome::Acquired {
                access: Access::Write,
                token,
            } => Outcome::Granted {
                role: Access::Write.role(),
                token,
            },
            RwLockOutcome::Suspended => Outcome::Suspended,
            RwLockOutcome::Resumed => Outcome::Resumed,
            RwLockOutcome::Lost => Outcome::Lost,
            RwLockOutcome::Released { access } => Outcome::Released {
                role: access.role(),
            },
            RwLockOutcome::Revoked { access } => Outcome::Revoked {
                role: access.role(),
            },
            RwLockOutcome::Forcing { token } => Outcome::Forcing { token },
            RwLockOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

impl Role for Access {
    type Request = LockRequest;
    type Outcome = RwLockOutcome;

    fn line(&self) -> Line {
        match self {
            Access::Read => Line {
                marker: READ,
                kin: KIN,
                gate: Gate::NoneAhead(WRITE),
                revocation: Revocation::Never,
                parents: Some(CreateMode::Persistent),
            },
            Access::Write => Line {
                marker: WRITE,
                kin: KIN,
                gate: Gate::First,
                revocation: Revocation::Never,
                parents: Some(CreateMode::Persistent),
            },
        }
    }

    fn tell(&self, hold: Hold) -> RwLockOutcome {
        match hold {
            Hold::Granted { token } => RwLockOutcome::Acquired {
                access: *self,
                token,
            },
            Hold::Suspended => RwLockOutcome::Suspended,
            Hold::Resumed => RwLockOutcome::Resumed,
            Hold::Lost => RwLockOutcome::Lost,
            Hold::Released => RwLockOutcome::Released { access: *self },
            Hold::Failed(error) => RwLockOutcome::Failed(error),
        }
    }

    fn let_go() -> LockRequest {
        LockRequest::Release
    }
}

/// A read/write lock at a directory path, such as `/locks/catalogue`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RwLock {
    dir: String,
}

impl RwLock {
    /// The lock whose nodes live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        RwLock {
            dir: dir.to_owned(),
        }
    }

    /// Its read side: [`Claim::acquire`] waits until no writer is ahead.
    pub fn read(&self) -> Claim<Access> {
        Claim::with_role(&self.dir, Access::Read)
    }

    /// Its write side: [`Claim::acquire`] waits until the session is first in line.
    pub fn write(&self) -> Claim<Access> {
        Claim::with_role(&self.dir, Access::Write)
    }
}

/// The read/write lock's protocol as a pure state machine, one side of it.
pub type RwLockMachine = Exclusive<Access>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Op, OpResult, Stat};
    use crate::machine::{Input, Recipe, Step};
    use crate::test_steps::{children, op};

    const DIR: &str = "/locks/rw";

    /// A machine for `access` whose node is `own` (czxid 7), answered with a listing of `names`.
    fn listed(access: Access, own: &str, names: &[&str]) -> (RwLockMachine, Step<RwLockOutcome>) {
        let mut m = RwLockMachine::new(DIR, "g".to_owned(), access);
        m.step(Input::Start);
        let stat = Stat {
            czxid: 7,
            ..Stat::default()
        };
        let path = format!("{DIR}/{own}");
        m.step(Input::Reply(Ok(OpResult::Created { path, stat })));
        let step = m.step(children(names));
        (m, step)
    }

    fn watches(name: &str) -> Op {
        Op::Exists {
            path: format!("{DIR}/{name}"),
            watch: true,
        }
    }

    #[test]
    fn nodes_are_named_by_side() {
        let read = RwLock::new(DIR).read().machine(1).step(Input::Start);
        let write = RwLock::new(DIR).write().machine(1).step(Input::Start);
        assert!(matches!(op(&read), Op::Create { path, .. } if path.ends_with("-read-")));
        assert!(matches!(op(&write), Op::Create { path, .. } if path.ends_with("-write-")));
    }

    #[test]
    fn a_reader_shares_the_lock_with_readers_ahead_of_it() {
        let names = ["a-read-0000000001", "g-read-0000000002"];
        let (_, step) = listed(Access::Read, names[1], &names);
        let acquired = RwLockOutcome::Acquired {
            access: Access::Read,
            token: 7,
        };
        assert_eq!(step.outcome, Some(acquired));
        assert_eq!(
            Outcome::from(acquired),
            Outcome::Shared {
                role: "read lock",
                token: 7
            }
        );
    }

    #[test]
    fn a_reader_waits_for_the_closest_writer_ahead_not_its_predecessor() {
        let names = [
            "a-write-0000000001",
            "b-read-0000000002",
            "g-read-0000000003",
            "c-write-0000000004",
        ];
        let (_, step) = listed(Access::Read, names[2], &names);
        assert_eq!(op(&step), &watches(names[0]));
    }

    #[test]
    fn a_writer_waits_for_its_immediate_predecessor_even_a_reader() {
        let names = [
            "a-write-0000000001",
            "b-read-0000000002",
            "g-write-0000000003",
        ];
        let (_, step) = listed(Access::Write, names[2], &names);
        assert_eq!(op(&step), &watches(names[1]));
        let (m, step) = listed(Access::Write, names[0], &names);
        assert!(m.holds());
        assert_eq!(
            step.outcome.map(Outcome::from),
            Some(Outcome::Granted {
                role: "write lock",
                token: 7
            })
        );
    }
}
