//! Fencing: the protected resource never accepts a token lower than the newest one granted.

use zklab_recipes::outcome::Outcome;
use zklab_recipes::symmetry::RenameSessions;

use super::{Monitor, Violation, ViolationKind};
use crate::trace::{TraceEntry, TraceEvent};

/// The fencing monitor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct Fencing {
    /// The newest token granted so far.
    #[rename(keep)]
    newest: Option<i64>,
}

impl Monitor for Fencing {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Outcome {
                outcome: Outcome::Granted { token, .. },
                ..
            } => {
                self.newest = self.newest.max(Some(*token));
                None
            }
            TraceEvent::Resource {
                client,
                token,
                accepted: true,
            } => {
                let newest = self.newest.filter(|newest| token < newest)?;
                let message =
                    format!("c{client}'s token {token} accepted after token {newest} was granted");
                Some(Violation {
                    kind: ViolationKind::StaleToken,
                    at: entry.at,
                    message,
                })
            }
            _ => None,
        }
    }

    fn kinds(&self) -> Vec<ViolationKind> {
        vec![ViolationKind::StaleToken]
    }
}
