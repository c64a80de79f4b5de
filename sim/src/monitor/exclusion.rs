//! Mutual exclusion: at most one client holds a granted role (a lock, leadership) among those
//! whose session is live on the server.
//!
//! A holder stops counting when it loses the role, lets go of it, or its session ends; a
//! suspended holder still counts (its node is still there: nobody else may be granted the role).
//! A paused holder whose session expired no longer counts: only its fencing token protects what
//! it writes then.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;

use super::{Monitor, Violation, ViolationKind};
use crate::trace::{ClientId, TraceEntry, TraceEvent};

/// The mutual-exclusion monitor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MutualExclusion {
    holders: BTreeMap<ClientId, SessionId>,
    /// Sessions the server has ended.
    dead: BTreeSet<SessionId>,
    /// The role last granted, for the message.
    role: Option<&'static str>,
}

impl Monitor for MutualExclusion {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Outcome {
                client,
                session,
                outcome,
            } => match outcome {
                Outcome::Granted { role, .. } => {
                    self.role = Some(role);
                    self.holders.insert(*client, *session);
                }
                Outcome::Resumed => {
                    self.holders.insert(*client, *session);
                }
                Outcome::Suspended => {}
                Outcome::Lost | Outcome::Released { .. } | Outcome::Failed(_) => {
                    self.holders.remove(client);
                }
            },
            TraceEvent::SessionEnded { session, .. } => {
                self.dead.insert(*session);
            }
            _ => return None,
        }
        let live = |(_, session): &(&ClientId, &SessionId)| !self.dead.contains(session);
        if self.holders.iter().filter(live).count() < 2 {
            return None;
        }
        let names: Vec<String> = self
            .holders
            .iter()
            .filter(live)
            .map(|(client, session)| format!("c{client} (s{session})"))
            .collect();
        let role = self.role.unwrap_or("role");
        let message = format!(
            "{} hold the {role} at once, all with live sessions",
            names.join(" and ")
        );
        Some(Violation {
            kind: ViolationKind::MutualExclusion,
            at: entry.at,
            message,
        })
    }
}
