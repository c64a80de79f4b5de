//! Herd-freedom: one deletion wakes at most a limited number of sessions (one for an exclusive
//! role). Counted per deleted node and the zxid of its deletion, over the watch events the
//! sessions received.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{SessionId, Zxid};

use super::{Monitor, Violation, ViolationKind};
use crate::trace::{TraceEntry, TraceEvent};

/// The herd monitor; it also keeps the most sessions one deletion woke.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Herd {
    limit: usize,
    woken: BTreeMap<(Zxid, String), BTreeSet<SessionId>>,
    most: usize,
}

impl Herd {
    /// A monitor that reports a deletion waking more than `limit` sessions.
    pub fn new(limit: usize) -> Self {
        Herd {
            limit,
            woken: BTreeMap::new(),
            most: 0,
        }
    }

    /// The most sessions one deletion has woken so far.
    pub fn most(&self) -> usize {
        self.most
    }
}

impl Monitor for Herd {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let TraceEvent::Watch {
            session,
            zxid,
            cause,
            deletion: true,
            ..
        } = &entry.event
        else {
            return None;
        };
        let sessions = self.woken.entry((*zxid, cause.clone())).or_default();
        sessions.insert(*session);
        self.most = self.most.max(sessions.len());
        if sessions.len() <= self.limit {
            return None;
        }
        let list: Vec<String> = sessions.iter().map(|s| format!("s{s}")).collect();
        let message = format!(
            "deleting {cause} (zxid {zxid}) woke {} sessions: {}",
            list.len(),
            list.join(", ")
        );
        Some(Violation {
            kind: ViolationKind::Herd,
            at: entry.at,
            message,
        })
    }
}
