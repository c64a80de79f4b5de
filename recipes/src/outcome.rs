//! The one vocabulary the trace and the monitors speak: every recipe's own outcome type (its
//! public contract, such as [`crate::lock::LockOutcome`]) converts into [`Outcome`], and a
//! [`Recorder`] writes it down where the monitors read it.
//!
//! Monitors that know no recipe (mutual exclusion of a granted role, recipe failures) read the
//! umbrella only, so a new recipe, or a user's own, is judged by them without any change here.

use std::fmt;

use crate::client::{SessionId, ZkError};
use crate::declaration::Declared;

/// What a recipe told its application, as the trace carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// The session now holds `role` (a lock, leadership) exclusively; `token` is the fencing
    /// token to present to whatever the role protects: it only grows from one holder to the next.
    Granted {
        /// What is held, in the recipe's words ("lock", "leadership").
        role: &'static str,
        /// The fencing token.
        token: i64,
    },
    /// The session now holds `role` together with any others granted it shared (the read side
    /// of a read/write lock, a semaphore's lease), but with no session holding it exclusively;
    /// `token` is its fencing token, presented to a resource it only reads.
    Shared {
        /// What is held, in the recipe's words ("read lock").
        role: &'static str,
        /// The fencing token.
        token: i64,
    },
    /// The connection dropped while holding: the session may expire at any moment, so the holder
    /// must stop trusting what it holds until [`Outcome::Resumed`].
    Suspended,
    /// Reconnected within the same session while holding: what it held is still held.
    Resumed,
    /// The session ended: whatever the client held is gone.
    Lost,
    /// The client let go of `role`.
    Released {
        /// What it let go of.
        role: &'static str,
    },
    /// Asked to give up `role` (or forced out of it), the client no longer holds it, nor waits
    /// for it.
    Revoked {
        /// What it gave up.
        role: &'static str,
    },
    /// The client is about to force out the holder of `token`, which did not give up when asked:
    /// whatever it protects must refuse `token` from now on.
    Forcing {
        /// The token of the holder forced out.
        token: i64,
    },
    /// The client went through `gate` (a barrier), which the recipe saw open.
    Passed {
        /// What it went through, in the recipe's words ("barrier").
        gate: &'static str,
    },
    /// The client is inside round `round` of `gate` (a double barrier) until it leaves.
    Entered {
        /// What it is inside, in the recipe's words ("double barrier").
        gate: &'static str,
        /// Which round: they count up from 0.
        round: i64,
    },
    /// The client left `gate`: nobody it was inside with is still inside.
    Left {
        /// What it left.
        gate: &'static str,
    },
    /// Round `round` of `gate` began without the client (its session ended after it was
    /// counted in): it is not inside, and the round goes on without it.
    Missed {
        /// What it missed a round of.
        gate: &'static str,
        /// Which round.
        round: i64,
    },
    /// Transaction `tx` (of a two-phase commit) is decided: committed, or aborted.
    Decided {
        /// Which transaction: they count up from 0.
        tx: i64,
        /// Committed.
        commit: bool,
    },
    /// The client put item `item` (its node's sequence number) into a queue.
    Put {
        /// The item's sequence number.
        item: i64,
    },
    /// The client took item `item` out of a queue: nobody else gets it.
    Taken {
        /// The item's sequence number.
        item: i64,
    },
    /// The client claimed item `item` of a queue: it is the client's to process until it
    /// acknowledges it, or until its session ends (then the item goes to another consumer).
    Claimed {
        /// The item's sequence number.
        item: i64,
    },
    /// The client acknowledged item `item` it had claimed: the item is gone from the queue.
    Acked {
        /// The item's sequence number.
        item: i64,
    },
    /// The client wrote a value (a configuration's, or the last of a round of writes), whose
    /// digest is `value`.
    Wrote {
        /// The value's digest ([`Outcome::digest`]).
        value: i64,
    },
    /// The client read a value (a configuration's) at data version `version`, whose digest is
    /// `value`.
    Read {
        /// The node's data version.
        version: i64,
        /// The value's digest ([`Outcome::digest`]).
        value: i64,
    },
    /// The client joined a group: its member node is made, and stays until it leaves or its
    /// session ends.
    Joined,
    /// The client's view of a group's membership: `count` members, the sorted names' digest
    /// `members` ([`Outcome::digest_names`]).
    Viewed {
        /// The digest of the members' names.
        members: i64,
        /// How many members.
        count: i64,
    },
    /// The client left a group: its member node is gone.
    Departed,
    /// The client's copy of a subtree (a tree cache's) holds the node whose path's digest is
    /// `node` at data version `version`, whose value's digest is `value`.
    Cached {
        /// The digest of the node's path ([`Outcome::digest`]).
        node: i64,
        /// The node's data version.
        version: i64,
        /// The digest of its data.
        value: i64,
    },
    /// The node whose path's digest is `node`, and every node under it, left the client's copy
    /// of a subtree: it was deleted.
    Dropped {
        /// The digest of the node's path.
        node: i64,
    },
    /// The increment numbered `seq` of the writer whose name's digest is `writer` is counted
    /// once in a shared counter, which reached `value` by it.
    Counted {
        /// The digest of the writer's name ([`Outcome::digest`]).
        writer: i64,
        /// The increment's number, as its writer numbers them.
        seq: i64,
        /// The counter's value by it.
        value: i64,
    },
    /// The recipe gave up on an error it cannot handle.
    Failed(ZkError),
}

impl Outcome {
    /// A value's digest (FNV-1a), which an outcome carries in place of the value.
    pub fn digest(data: &[u8]) -> i64 {
        let hash = data.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        hash as i64
    }

    /// The digest of a set of names (a group's members), whatever their order.
    pub fn digest_names(names: &[String]) -> i64 {
        let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        Outcome::digest(sorted.join("/").as_bytes())
    }

    /// Whether the client holds something from now on (a role, a place inside a gate, a
    /// claimed item), which the application may then be asked to give back.
    pub fn starts_hold(&self) -> bool {
        matches!(
            self,
            Outcome::Granted { .. }
                | Outcome::Shared { .. }
                | Outcome::Resumed
                | Outcome::Entered { .. }
                | Outcome::Claimed { .. }
        )
    }

    /// Whether it ends the client's round of work: a role let go, a gate passed, left or
    /// missed, a transaction decided, an item put, taken or acknowledged, a value written or read
    /// (a configuration's reader goes on reading, but has read once), a group joined, viewed
    /// or left, a node cached (a tree cache goes on, but has cached once), an increment
    /// counted. The model checker and a real run count rounds by it, so a recipe's new outcome
    /// that ends a round is told here, once.
    pub fn ends_round(&self) -> bool {
        matches!(
            self,
            Outcome::Released { .. }
                | Outcome::Revoked { .. }
                | Outcome::Passed { .. }
                | Outcome::Left { .. }
                | Outcome::Missed { .. }
                | Outcome::Decided { .. }
                | Outcome::Put { .. }
                | Outcome::Taken { .. }
                | Outcome::Acked { .. }
                | Outcome::Wrote { .. }
                | Outcome::Read { .. }
                | Outcome::Joined
                | Outcome::Viewed { .. }
                | Outcome::Departed
                | Outcome::Cached { .. }
                | Outcome::Counted { .. }
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Granted { role, token } => write!(f, "granted {role} token={token}"),
            Outcome::Shared { role, token } => write!(f, "granted shared {role} token={token}"),
            Outcome::Suspended => write!(f, "suspended"),
            Outcome::Resumed => write!(f, "resumed"),
            Outcome::Lost => write!(f, "lost"),
            Outcome::Released { role } => write!(f, "released {role}"),
            Outcome::Revoked { role } => write!(f, "revoked {role}"),
            Outcome::Forcing { token } => write!(f, "forcing out token={token}"),
            Outcome::Passed { gate } => write!(f, "passed {gate}"),
            Outcome::Entered { gate, round } => write!(f, "entered {gate} round={round}"),
            Outcome::Left { gate } => write!(f, "left {gate}"),
            Outcome::Missed { gate, round } => write!(f, "missed {gate} round={round}"),
            Outcome::Decided { tx, commit: true } => write!(f, "decided commit tx={tx}"),
            Outcome::Decided { tx, commit: false } => write!(f, "decided abort tx={tx}"),
            Outcome::Put { item } => write!(f, "put item={item}"),
            Outcome::Taken { item } => write!(f, "took item={item}"),
            Outcome::Claimed { item } => write!(f, "claimed item={item}"),
            Outcome::Acked { item } => write!(f, "acked item={item}"),
            Outcome::Wrote { value } => write!(f, "wrote value=#{:016x}", *value as u64),
            Outcome::Read { version, value } => {
                write!(f, "read version={version} value=#{:016x}", *value as u64)
            }
            Outcome::Joined => write!(f, "joined group"),
            Outcome::Viewed { members, count } => {
                write!(f, "viewed group members={count} #{:016x}", *members as u64)
            }
            Outcome::Departed => write!(f, "left group"),
            Outcome::Cached {
                node,
                version,
                value,
            } => write!(
                f,
                "cached node=#{:016x} version={version} value=#{:016x}",
                *node as u64, *value as u64
            ),
            Outcome::Dropped { node } => write!(f, "dropped node=#{:016x}", *node as u64),
            Outcome::Counted { writer, seq, value } => write!(
                f,
                "counted writer=#{:016x} seq={seq} value={value}",
                *writer as u64
            ),
            Outcome::Failed(error) => write!(f, "failed {error:?}"),
        }
    }
}

/// Where outcomes are written down: the simulator's trace, a real run's trace, or nowhere (a
/// production application that only acts on them).
pub trait Recorder: Send + Sync {
    /// Notes that `session`'s recipe told its application `outcome`.
    fn record(&self, session: SessionId, outcome: Outcome);

    /// A new declarer's id, unique in the run: one per recipe instance (its driver) or piece of
    /// the application's own code that declares what it owns and awaits.
    fn new_declarer(&self) -> u32;

    /// Notes that `declarer`, in `session`, now owns and awaits what `declared` says (replacing
    /// what it declared before). The wait-for and stuck-waiter monitors judge only what is
    /// declared (see [`crate::declaration`]).
    fn declare(&self, session: SessionId, declarer: u32, declared: &Declared);
}
