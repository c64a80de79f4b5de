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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testing::*;

    #[test]
    fn an_accepted_token_older_than_the_newest_grant_is_stale() {
        // Two grants, then the older holder writes with its token and the resource decides.
        let late_write = |accepted| {
            trace(vec![
                outcome(0, 1, granted(5)),
                outcome(1, 2, granted(7)),
                TraceEvent::Resource {
                    client: 0,
                    token: 5,
                    accepted,
                },
            ])
        };
        assert_eq!(Fencing::default().first_in(&late_write(false)), None);
        let t = late_write(true);
        assert_eq!(
            Fencing::default().first_in(&t).map(|v| v.kind),
            Some(ViolationKind::StaleToken)
        );
    }
}
