//! Properties and the monitors that judge them: the [`Monitor`] trait, folding over a run's trace
//! one entry at a time, and the [`Violation`] it reports. A monitor is `Clone + Eq + Hash`, so it
//! can judge a simulated seed, a real run's trace, or travel inside a model checker's state. The
//! monitors themselves live above the simulator, beside what they judge (`zklab-scenarios`); only
//! what the model checker and the pictures need of them is here.

use std::cmp::Ordering;
use std::fmt::{self, Debug};
use std::hash::{Hash, Hasher};
use std::time::Duration;

use crate::trace::{Trace, TraceEntry};

/// A property judged entry by entry.
pub trait Monitor: Clone + Eq + Hash + Debug {
    /// Takes the next entry of the trace; returns the violation this entry reveals, if any.
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation>;

    /// The properties it judges: those it may report a violation of. The model checker checks
    /// each.
    fn properties(&self) -> Vec<&'static Property>;

    /// How many sessions the deletion `entry` tells of (a [`TraceEvent::Notified`]) woke as
    /// this monitor's herd rule counts them, asked before [`Monitor::observe`] takes it; `None`
    /// for a monitor that judges no herd, or an entry that tells of no deletion it counts.
    fn herd_count(&self, _entry: &TraceEntry) -> Option<usize> {
        None
    }

    /// Takes the next entry; adds every violation it reveals to `found` (monitors side by side
    /// may each find one in the same entry).
    fn observe_all(&mut self, entry: &TraceEntry, found: &mut Vec<Violation>) {
        // A push, not an `extend`: this runs for every monitor on every entry, and nearly always
        // finds nothing, which `extend` would still make ready room for.
        if let Some(violation) = self.observe(entry) {
            found.push(violation);
        }
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

            fn herd_count(&self, entry: &TraceEntry) -> Option<usize> {
                [$(self.$index.herd_count(entry)),+].into_iter().flatten().max()
            }

            fn properties(&self) -> Vec<&'static Property> {
                let mut properties = Vec::new();
                $(properties.extend(self.$index.properties());)+
                properties
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

/// A property a run must keep, declared once, beside the monitor (or the runner, or the model)
/// that judges it, as a `static`: every report, schedule and model check names it from there,
/// so a new property touches no list but its monitor's [`Monitor::properties`]. Two are the same
/// property when their names are.
#[derive(Debug)]
pub struct Property {
    /// What a report calls a violation of it (`mutual-exclusion`): a violation's first word, a
    /// schedule's `violation` line, a sweep summary's key.
    pub violation: &'static str,
    /// Its name as the model checker reports it (`mutual exclusion`).
    pub name: &'static str,
}

impl Property {
    /// The property whose violations are called `violation` and which the model calls `name`.
    pub const fn new(violation: &'static str, name: &'static str) -> Self {
        Property { violation, name }
    }
}

impl PartialEq for Property {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Property {}

impl Hash for Property {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl PartialOrd for Property {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Property {
    fn cmp(&self, other: &Self) -> Ordering {
        self.name.cmp(other.name)
    }
}

/// A broken property, when, and the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which property.
    pub property: &'static Property,
    /// Sim time of the event that broke it.
    pub at: Duration,
    /// What happened, naming clients and sessions as the trace does.
    pub message: String,
}

impl Violation {
    /// `property` broken at `at` (the time of the entry that broke it), `message` the evidence.
    pub fn new(property: &'static Property, at: Duration, message: String) -> Self {
        Violation {
            property,
            at,
            message,
        }
    }
}

impl fmt::Display for Violation {
    /// Its time as the trace writes times (whole microseconds, not rounded), so a story
    /// printed up to the violation ends on a line of the same time.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secs, micros) = (self.at.as_secs(), self.at.subsec_micros());
        let name = self.property.violation;
        write!(f, "{name} at {secs}.{micros:06}s: {}", self.message)
    }
}
