//! Herd-freedom: one deletion wakes at most a limited number of sessions (one for an exclusive
//! role). Woken means notified by the server because of the deletion, other than the session
//! that deleted the node (a watch it left on its own node's parent is no waiter woken).

use zklab_recipes::client::SessionId;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

/// Herd-freedom: broken when one deletion woke more than one waiter.
pub static HERD: Property = Property::new("herd", "herd-freedom");

/// The herd monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Herd {
    limit: usize,
}

impl Herd {
    /// A monitor that reports a deletion waking more than `limit` sessions.
    pub fn new(limit: usize) -> Self {
        Herd { limit }
    }

    /// The herd violation of a deletion, told by `entry`, that woke `woken`.
    pub(crate) fn violation(entry: &TraceEntry, woken: &[SessionId]) -> Option<Violation> {
        let TraceEvent::Notified { cause, zxid, .. } = &entry.event else {
            return None;
        };
        let list: Vec<String> = woken.iter().map(|s| format!("s{s}")).collect();
        let message = format!(
            "deleting {cause} (zxid {zxid}) woke {} sessions: {}",
            list.len(),
            list.join(", ")
        );
        Some(Violation::new(&HERD, entry.at, message))
    }

    /// The sessions a deletion woke, if `event` records one.
    pub fn woken(event: &TraceEvent) -> Option<Vec<SessionId>> {
        let TraceEvent::Notified {
            by,
            deletion: true,
            sessions,
            ..
        } = event
        else {
            return None;
        };
        Some(sessions.iter().copied().filter(|s| s != by).collect())
    }
}

impl Monitor for Herd {
    fn herd_count(&self, entry: &TraceEntry) -> Option<usize> {
        Self::woken(&entry.event).map(|woken| woken.len())
    }

    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let woken = Self::woken(&entry.event)?;
        if woken.len() <= self.limit {
            return None;
        }
        Self::violation(entry, &woken)
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&HERD]
    }
}
