//! One record per change of every session its watches woke, across an ensemble.
//!
//! Each server of an ensemble fires the watches left on it when it applies a change, at its own
//! time. A herd is counted over all of them: one deletion that wakes one session on each of
//! three servers woke three. So the trace tells a change's [`TraceEvent::Notified`] once, when
//! the last server has applied it, with every session any server notified. Servers apply
//! changes in zxid order, so these records come in zxid order too. On a standalone server the
//! record is told as the change is applied. A follower that is down holds no watches: the
//! changes it has yet to apply are told without it, and what it fires once it has restarted
//! (for sessions that attached to it since) is told as it applies.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::Zxid;

use crate::trace::TraceEvent;

/// The changes some servers have applied and others not yet.
#[derive(Debug, Default)]
pub struct Gathering {
    pending: BTreeMap<Zxid, Gathered>,
}

/// A change's records so far, and the servers that have yet to apply it.
#[derive(Debug)]
struct Gathered {
    servers_left: BTreeSet<usize>,
    records: Vec<TraceEvent>,
}

impl Gathering {
    /// The leader committed the change `zxid`, which the `followers` apply later; `records`
    /// are the leader's. Returns the records to tell now.
    pub fn committed(
        &mut self,
        zxid: Zxid,
        followers: impl IntoIterator<Item = usize>,
        records: Vec<TraceEvent>,
    ) -> Vec<TraceEvent> {
        let servers_left: BTreeSet<usize> = followers.into_iter().collect();
        if servers_left.is_empty() {
            return records;
        }
        let gathered = Gathered {
            servers_left,
            records,
        };
        self.pending.insert(zxid, gathered);
        Vec::new()
    }

    /// The follower `server` applied the change `zxid`, notifying as `records` say. Returns
    /// the change's gathered records once this was the last server to apply it, or `records`
    /// at once if the change was told without it (it was down).
    pub fn applied(
        &mut self,
        server: usize,
        zxid: Zxid,
        records: Vec<TraceEvent>,
    ) -> Vec<TraceEvent> {
        let Some(gathered) = self.pending.get_mut(&zxid) else {
            return records;
        };
        if !gathered.servers_left.remove(&server) {
            return records;
        }
        for record in records {
            merge(&mut gathered.records, record);
        }
        if !gathered.servers_left.is_empty() {
            return Vec::new();
        }
        self.pending
            .remove(&zxid)
            .map(|gathered| gathered.records)
            .unwrap_or_default()
    }

    /// The run is over: the records of the changes some follower has yet to apply, as gathered
    /// so far, in zxid order, so that what the last moments woke is judged too.
    pub fn unfinished(&mut self) -> Vec<TraceEvent> {
        let pending = std::mem::take(&mut self.pending);
        pending
            .into_values()
            .flat_map(|gathered| gathered.records)
            .collect()
    }

    /// The follower `server` went down: it dropped every watch, so the changes it has yet to
    /// apply wait for it no more. Returns the records of those it was the last one for, in zxid
    /// order.
    pub fn server_down(&mut self, server: usize) -> Vec<TraceEvent> {
        let mut told = Vec::new();
        self.pending.retain(|_, gathered| {
            gathered.servers_left.remove(&server);
            if !gathered.servers_left.is_empty() {
                return true;
            }
            told.append(&mut gathered.records);
            false
        });
        told
    }
}

/// Adds one server's record of a node's change to the records of the same change.
fn merge(records: &mut Vec<TraceEvent>, record: TraceEvent) {
    let TraceEvent::Notified {
        cause,
        deletion,
        sessions,
        ..
    } = &record
    else {
        return;
    };
    let same = records
        .iter_mut()
        .find(|kept| matches!(kept, TraceEvent::Notified { cause: c, .. } if c == cause));
    match same {
        Some(TraceEvent::Notified {
            deletion: kept_deletion,
            sessions: kept_sessions,
            ..
        }) => {
            *kept_deletion |= *deletion;
            for session in sessions {
                if !kept_sessions.contains(session) {
                    kept_sessions.push(*session);
                }
            }
        }
        _ => records.push(record),
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::SessionId;

    use super::*;

    fn notified(cause: &str, sessions: &[SessionId]) -> TraceEvent {
        TraceEvent::Notified {
            by: 1,
            zxid: 7,
            cause: cause.to_owned(),
            deletion: true,
            sessions: sessions.to_vec(),
        }
    }

    #[test]
    fn a_standalone_server_tells_at_once() {
        let mut gathering = Gathering::default();
        let told = gathering.committed(7, [], vec![notified("/a", &[2])]);
        assert_eq!(told, vec![notified("/a", &[2])]);
    }

    #[test]
    fn an_ensemble_tells_every_server_s_sessions_once_the_last_applied() {
        let mut gathering = Gathering::default();
        let leader = vec![notified("/a", &[2])];
        assert!(gathering.committed(7, [1, 2], leader).is_empty());
        let follower = vec![notified("/a", &[3, 2]), notified("/b", &[4])];
        assert!(gathering.applied(2, 7, follower).is_empty());
        let told = gathering.applied(1, 7, Vec::new());
        assert_eq!(told, vec![notified("/a", &[2, 3]), notified("/b", &[4])]);
        // A change the leader did not commit through the gathering (a session's opening)
        // notifies no one, and is told as it is.
        assert!(gathering.applied(1, 8, Vec::new()).is_empty());
    }

    #[test]
    fn a_follower_that_goes_down_is_waited_for_no_more() {
        let mut gathering = Gathering::default();
        gathering.committed(7, [1, 2], vec![notified("/a", &[2])]);
        gathering.committed(8, [1, 2], vec![notified("/b", &[3])]);
        assert!(gathering.applied(2, 7, Vec::new()).is_empty());
        assert_eq!(gathering.server_down(1), vec![notified("/a", &[2])]);
        assert_eq!(
            gathering.applied(2, 8, Vec::new()),
            vec![notified("/b", &[3])]
        );
        assert!(gathering
            .committed(9, [1, 2], vec![notified("/c", &[4])])
            .is_empty());
        assert_eq!(gathering.unfinished(), vec![notified("/c", &[4])]);
        // Restarted, it catches up on its own.
        assert_eq!(
            gathering.applied(1, 7, vec![notified("/a", &[5])]),
            vec![notified("/a", &[5])]
        );
    }
}
