//! The read/write lock's kit: the role kit at [`RW_LOCK_DIR`], with odd clients writing and
//! even ones reading (three clients are two readers and a writer, which the model checker puts
//! in every order, a writer between readers among them). Its known bugs: readers that wait on
//! their immediate predecessor even when it is a reader ([`SerialReaders`]: readers held back),
//! a writer that does not count readers as in line ([`WriterIgnoresReaders`]: a writer with
//! readers), and waiters that watch the directory's children ([`WatchParent`]: a herd).
//!
//! [`WatchParent`]: crate::mutation::WatchParent

use zklab_recipes::lock::LockRequest;
use zklab_recipes::parts::contender::{Gate, Line};
use zklab_recipes::parts::exclusive::{Hold, Role};
use zklab_recipes::rw_lock::{Access, RwLockOutcome, READ, WRITE};

use crate::exclusive::RoleKit;
use crate::monitor::exclusion::MutualExclusion;
use crate::monitor::failure::NoFailures;
use crate::monitor::shared_line::{Rule, SharedLine};

/// Where the read/write lock keeps its nodes.
pub const RW_LOCK_DIR: &str = "/locks/rw";

/// The read/write lock's monitors: readers together but never with a writer, its own rules for
/// waking and waiting, no recipe giving up.
pub type RwMonitors = (MutualExclusion, SharedLine, NoFailures);

impl RoleKit for Access {
    const DIR: &'static str = RW_LOCK_DIR;
    type Monitors = RwMonitors;

    fn monitors() -> RwMonitors {
        (
            MutualExclusion::default(),
            readers_line(RW_LOCK_DIR),
            NoFailures,
        )
    }

    /// Odd clients write, even ones read.
    fn part(client: usize, _: usize) -> u8 {
        (client % 2) as u8
    }

    fn playing(part: u8) -> Access {
        match part {
            0 => Access::Read,
            _ => Access::Write,
        }
    }

    fn reads(&self) -> bool {
        *self == Access::Read
    }
}

/// The shared-line monitor of a read/write lock's line under `dir`.
pub fn readers_line(dir: &'static str) -> SharedLine {
    let rule = Rule::Readers {
        read: READ,
        write: WRITE,
    };
    SharedLine::new(dir, rule)
}

/// A known bug in the line a side of the lock gets into: everything else is the recipe's.
pub trait LineBug:
    Copy + std::fmt::Debug + Default + Eq + std::hash::Hash + Send + Sync + 'static
{
    /// The line `access` gets into, with the bug.
    fn line(access: Access) -> Line;
}

/// The read/write lock with a bug in its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Miswired<B> {
    access: Access,
    bug: B,
}

impl<B: LineBug> Role for Miswired<B> {
    type Request = LockRequest;
    type Outcome = RwLockOutcome;

    fn line(&self) -> Line {
        B::line(self.access)
    }

    fn tell(&self, hold: Hold) -> RwLockOutcome {
        self.access.tell(hold)
    }

    fn let_go() -> LockRequest {
        Access::let_go()
    }
}

impl<B: LineBug> RoleKit for Miswired<B> {
    const DIR: &'static str = RW_LOCK_DIR;
    type Monitors = RwMonitors;

    fn monitors() -> RwMonitors {
        Access::monitors()
    }

    fn part(client: usize, clients: usize) -> u8 {
        Access::part(client, clients)
    }

    fn playing(part: u8) -> Self {
        Miswired {
            access: Access::playing(part),
            bug: B::default(),
        }
    }

    fn reads(&self) -> bool {
        self.access.reads()
    }
}

/// A reader that, like a writer, goes only first in line and waits on its immediate
/// predecessor, reader or not. Nothing breaks exclusion and no deletion wakes a herd, but readers
/// that could read together take turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SerialReaders;

impl LineBug for SerialReaders {
    fn line(access: Access) -> Line {
        Line {
            gate: Gate::First,
            ..access.line()
        }
    }
}

/// A writer that counts only writers' nodes as in line: it goes while readers hold the lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct WriterIgnoresReaders;

impl LineBug for WriterIgnoresReaders {
    fn line(access: Access) -> Line {
        match access {
            Access::Read => access.line(),
            Access::Write => Line {
                kin: &[WRITE],
                ..access.line()
            },
        }
    }
}
