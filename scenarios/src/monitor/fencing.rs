//! Fencing: the protected resource never accepts a write with a token lower than the newest one
//! granted, nor a read with a token lower than the newest one granted exclusively (readers that
//! share a lock present their tokens in any order), nor any use with the token of a holder that
//! a revocable lock's waiter forced out (it fenced the token before it deleted the node).

use std::collections::BTreeSet;

use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

/// Fencing: broken when the protected resource accepted a token lower than one already granted.
pub static STALE_TOKEN: Property = Property::new("stale-token", "fencing");

/// The fencing monitor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct Fencing {
    /// The newest token granted so far, shared or not.
    #[rename(keep)]
    newest: Option<i64>,
    /// The newest token granted exclusively so far.
    #[rename(keep)]
    newest_exclusive: Option<i64>,
    /// The tokens of holders forced out.
    #[rename(keep)]
    forced: BTreeSet<i64>,
}

impl Monitor for Fencing {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Outcome { outcome, .. } => {
                if let Outcome::Granted { token, .. } = outcome {
                    self.newest_exclusive = self.newest_exclusive.max(Some(*token));
                }
                if let Outcome::Granted { token, .. } | Outcome::Shared { token, .. } = outcome {
                    self.newest = self.newest.max(Some(*token));
                }
                if let Outcome::Forcing { token } = outcome {
                    self.forced.insert(*token);
                }
                None
            }
            TraceEvent::Resource {
                client,
                token,
                accepted: true,
                ..
            } if self.forced.contains(token) => Some(Violation::new(
                &STALE_TOKEN,
                entry.at,
                format!("c{client}'s token {token} accepted after it was forced out"),
            )),
            TraceEvent::Resource {
                client,
                read,
                token,
                accepted: true,
            } => {
                let bar = if *read {
                    self.newest_exclusive
                } else {
                    self.newest
                };
                let newest = bar.filter(|newest| token < newest)?;
                let message =
                    format!("c{client}'s token {token} accepted after token {newest} was granted");
                Some(Violation::new(&STALE_TOKEN, entry.at, message))
            }
            _ => None,
        }
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&STALE_TOKEN]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::*;

    #[test]
    fn a_token_forced_out_is_stale_from_then_on() {
        let t = trace(vec![
            outcome(0, 1, granted(5)),
            outcome(1, 2, Outcome::Forcing { token: 5 }),
            TraceEvent::Resource {
                client: 0,
                read: false,
                token: 5,
                accepted: true,
            },
        ]);
        let violation = Fencing::default().first_in(&t).expect("a violation");
        assert_eq!(violation.property, &STALE_TOKEN);
    }

    #[test]
    fn an_accepted_token_older_than_the_newest_grant_is_stale() {
        // Two grants, then the older holder writes with its token and the resource decides.
        let late_write = |accepted| {
            trace(vec![
                outcome(0, 1, granted(5)),
                outcome(1, 2, granted(7)),
                TraceEvent::Resource {
                    client: 0,
                    read: false,
                    token: 5,
                    accepted,
                },
            ])
        };
        assert_eq!(Fencing::default().first_in(&late_write(false)), None);
        let t = late_write(true);
        assert_eq!(
            Fencing::default().first_in(&t).map(|v| v.property),
            Some(&STALE_TOKEN)
        );
    }

    #[test]
    fn a_read_is_stale_only_behind_an_exclusive_grant() {
        let read = |grant: Outcome| {
            trace(vec![
                outcome(
                    0,
                    1,
                    Outcome::Shared {
                        role: "read lock",
                        token: 5,
                    },
                ),
                outcome(1, 2, grant),
                TraceEvent::Resource {
                    client: 0,
                    read: true,
                    token: 5,
                    accepted: true,
                },
            ])
        };
        let other_reader = Outcome::Shared {
            role: "read lock",
            token: 7,
        };
        assert_eq!(Fencing::default().first_in(&read(other_reader)), None);
        assert_eq!(
            Fencing::default()
                .first_in(&read(granted(7)))
                .map(|v| v.property),
            Some(&STALE_TOKEN)
        );
    }
}
