//! Properties and the monitors that judge them: the [`Monitor`] trait, folding over a run's trace
//! one entry at a time, and the [`Violation`] it reports. A monitor is `Clone + Eq + Hash`, so it
//! can judge a simulated seed, a real run's trace, or travel inside a model checker's state. The
//! monitors themselves live above the simulator, beside what they judge (`zklab-scenarios`); only
//! what the model checker and the pictures need of them is here.

use std::fmt::{self, Debug};
use std::hash::Hash;
use std::time::Duration;

use crate::trace::{Trace, TraceEntry};

/// A property judged entry by entry.
pub trait Monitor: Clone + Eq + Hash + Debug {
    /// Takes the next entry of the trace; returns the violation this entry reveals, if any.
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation>;

    /// The kinds of violation it may report.
    fn kinds(&self) -> Vec<ViolationKind>;

    /// Takes the next entry; adds every violation it reveals to `found` (monitors side by side
    /// may each find one in the same entry).
    fn observe_all(&mut self, entry: &TraceEntry, found: &mut Vec<Violation>) {
        found.extend(self.observe(entry));
    }

    /// The first violation in a whole trace.
    fn first_in(mut self, trace: &Trace) -> Option<Violation>
    where
        Self: Sized,
    {
        trace.entries().iter().find_map(|entry| self.observe(entry))
    }
}

/// Monitors side by side, as one: each observes every entry; `observe` gives the first member's
/// violation, `observe_all` every member's.
macro_rules! side_by_side {
    ($($member:ident . $index:tt),+) => {
        impl<$($member: Monitor),+> Monitor for ($($member,)+) {
            fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
                let mut found = Vec::new();
                self.observe_all(entry, &mut found);
                found.into_iter().next()
            }

            fn observe_all(&mut self, entry: &TraceEntry, found: &mut Vec<Violation>) {
                $(self.$index.observe_all(entry, found);)+
            }

            fn kinds(&self) -> Vec<ViolationKind> {
                let mut kinds = Vec::new();
                $(kinds.extend(self.$index.kinds());)+
                kinds
            }
        }
    };
}

side_by_side!(A.0);
side_by_side!(A.0, B.1);
side_by_side!(A.0, B.1, C.2);
side_by_side!(A.0, B.1, C.2, D.3);
side_by_side!(A.0, B.1, C.2, D.3, E.4);
side_by_side!(A.0, B.1, C.2, D.3, E.4, F.5);

/// Which property a run broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationKind {
    /// Two clients held the lock at once, both with live sessions.
    MutualExclusion,
    /// A client passed a barrier that stood throughout its wait.
    BarrierPassed,
    /// A client entered a double barrier before enough participants were there at once.
    EnteredEarly,
    /// A client left a double barrier while one it was inside with was still inside.
    LeftEarly,
    /// Two parties to a transaction learned different decisions.
    Disagreement,
    /// A transaction was committed without every site's commit vote.
    InvalidCommit,
    /// The protected resource accepted a token lower than one already granted.
    StaleToken,
    /// One deletion woke more than one waiter.
    Herd,
    /// A client kept waiting where it could go: a reader with no writer ahead, a semaphore's
    /// waiter whose lease is free.
    HeldBack,
    /// A holder that read an ask to give up kept what it held until it was forced out.
    RevocationIgnored,
    /// A queue's item went to two consumers, or was acknowledged or put twice.
    ItemTwice,
    /// A queue's item was deleted by a consumer that went on without ever taking it.
    ItemLost,
    /// A queue item's claim outlived the session that made it, so the item is never delivered
    /// again.
    DeadClaim,
    /// A priority queue's consumer took an item while one of higher priority that it knew of
    /// stood there for the taking.
    PriorityInverted,
    /// A queue's consumer took an item while one earlier in sequence that its listing held
    /// stood for the taking.
    OutOfSequence,
    /// A configuration's reader read a lower version than it had read before.
    ConfigBackwards,
    /// A configuration's reader finished with a value older than the newest written.
    ConfigStale,
    /// A group member's view held a member whose session had ended when it was served.
    GroupGhost,
    /// A live group member ended with a view other than the group's members.
    GroupStale,
    /// A lookup read an older value of a name than one registered before it was sent.
    NameStale,
    /// Recipe znodes were left behind after every client finished.
    Orphan,
    /// A client did not finish its workload within the sim-time bound.
    Liveness,
    /// Every task was blocked with no event to wake any of them.
    Deadlock,
    /// A recipe gave up with an error it should have handled.
    RecipeFailed,
    /// A client waited, for longer than a bound, on a watch that can no longer fire.
    StuckWaiter,
    /// A recipe node of a live session that no machine of that session knows it owns.
    UnownedNode,
    /// The simulation itself panicked.
    Panic,
}

impl ViolationKind {
    /// Every kind, in declaration order.
    pub const ALL: [ViolationKind; 27] = [
        ViolationKind::MutualExclusion,
        ViolationKind::BarrierPassed,
        ViolationKind::EnteredEarly,
        ViolationKind::LeftEarly,
        ViolationKind::Disagreement,
        ViolationKind::InvalidCommit,
        ViolationKind::StaleToken,
        ViolationKind::Herd,
        ViolationKind::HeldBack,
        ViolationKind::RevocationIgnored,
        ViolationKind::ItemTwice,
        ViolationKind::ItemLost,
        ViolationKind::DeadClaim,
        ViolationKind::PriorityInverted,
        ViolationKind::OutOfSequence,
        ViolationKind::ConfigBackwards,
        ViolationKind::ConfigStale,
        ViolationKind::GroupGhost,
        ViolationKind::GroupStale,
        ViolationKind::NameStale,
        ViolationKind::Orphan,
        ViolationKind::Liveness,
        ViolationKind::Deadlock,
        ViolationKind::RecipeFailed,
        ViolationKind::StuckWaiter,
        ViolationKind::UnownedNode,
        ViolationKind::Panic,
    ];

    /// The kind named `name` ([`ViolationKind::name`]).
    pub fn from_name(name: &str) -> Option<ViolationKind> {
        ViolationKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }

    /// The kind's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            ViolationKind::MutualExclusion => "mutual-exclusion",
            ViolationKind::BarrierPassed => "barrier-passed",
            ViolationKind::EnteredEarly => "entered-early",
            ViolationKind::LeftEarly => "left-early",
            ViolationKind::Disagreement => "disagreement",
            ViolationKind::InvalidCommit => "invalid-commit",
            ViolationKind::StaleToken => "stale-token",
            ViolationKind::Herd => "herd",
            ViolationKind::HeldBack => "held-back",
            ViolationKind::RevocationIgnored => "revocation-ignored",
            ViolationKind::ItemTwice => "item-twice",
            ViolationKind::ItemLost => "item-lost",
            ViolationKind::DeadClaim => "dead-claim",
            ViolationKind::PriorityInverted => "priority-inverted",
            ViolationKind::OutOfSequence => "out-of-sequence",
            ViolationKind::ConfigBackwards => "config-backwards",
            ViolationKind::ConfigStale => "config-stale",
            ViolationKind::GroupGhost => "group-ghost",
            ViolationKind::GroupStale => "group-stale",
            ViolationKind::NameStale => "name-stale",
            ViolationKind::Orphan => "orphan",
            ViolationKind::Liveness => "liveness",
            ViolationKind::Deadlock => "deadlock",
            ViolationKind::RecipeFailed => "recipe-failed",
            ViolationKind::StuckWaiter => "stuck-waiter",
            ViolationKind::UnownedNode => "unowned-node",
            ViolationKind::Panic => "panic",
        }
    }

    /// The name of the property this kind of violation breaks, as a model checker reports it.
    pub fn property(self) -> &'static str {
        match self {
            ViolationKind::MutualExclusion => "mutual exclusion",
            ViolationKind::BarrierPassed => "barrier safety",
            ViolationKind::EnteredEarly => "double barrier enter",
            ViolationKind::LeftEarly => "double barrier leave",
            ViolationKind::Disagreement => "agreement",
            ViolationKind::InvalidCommit => "validity",
            ViolationKind::StaleToken => "fencing",
            ViolationKind::Herd => "herd-freedom",
            ViolationKind::HeldBack => "no waiter held back",
            ViolationKind::RevocationIgnored => "revocation heeded",
            ViolationKind::ItemTwice => "nothing twice",
            ViolationKind::ItemLost => "nothing lost",
            ViolationKind::DeadClaim => "no claim outlives its session",
            ViolationKind::PriorityInverted => "priority order",
            ViolationKind::OutOfSequence => "sequence order",
            ViolationKind::ConfigBackwards => "config never goes back",
            ViolationKind::ConfigStale => "readers end with the last value",
            ViolationKind::GroupGhost => "no view holds a dead member",
            ViolationKind::GroupStale => "members end with the members' view",
            ViolationKind::NameStale => "a name resolves to its latest registration",
            ViolationKind::Orphan => "no orphans",
            ViolationKind::Liveness => "liveness",
            ViolationKind::Deadlock => "no deadlock",
            ViolationKind::RecipeFailed => "no recipe failure",
            ViolationKind::StuckWaiter => "no stuck waiter",
            ViolationKind::UnownedNode => "no unowned node",
            ViolationKind::Panic => "no panic",
        }
    }
}

/// A broken property, when, and the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which property.
    pub kind: ViolationKind,
    /// Sim time of the event that broke it.
    pub at: Duration,
    /// What happened, naming clients and sessions as the trace does.
    pub message: String,
}

impl fmt::Display for Violation {
    /// Its time as the trace writes times (whole microseconds, not rounded), so a story
    /// printed up to the violation ends on a line of the same time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secs, micros) = (self.at.as_secs(), self.at.subsec_micros());
        let name = self.kind.name();
        write!(f, "{name} at {secs}.{micros:06}s: {}", self.message)
    }
}
