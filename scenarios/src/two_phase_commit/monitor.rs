//! Two-phase commit's safety, judged by the server's applied ops and the outcomes:
//!
//! - validity: the decision commit is written only while every site of the group (written in the
//!   transaction node by its coordinator) has a vote node that says commit, and no site voted
//!   abort in that transaction (a site's session that ends takes its vote node, and its vote,
//!   with it);
//! - agreement: everyone who learns a transaction's decision learns the one written in its
//!   transaction node (on a real server's trace, which has no applied ops, the first one
//!   learned).
//!
//! Termination (every live site decides within a bound) is the simulator's liveness and the
//! model's "no stuck state". Transactions are counted as the recipe counts them: one more each
//! time the directory's data is written.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_recipes::two_phase_commit::{parse_tx_data, vote_site, ABORT, COMMIT, TX};
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::{changes, Change};

/// Agreement: broken when two parties to a transaction learned different decisions.
pub static DISAGREEMENT: Property = Property::new("disagreement", "agreement");

/// Validity: broken when a transaction was committed without every site's commit vote.
pub static INVALID_COMMIT: Property = Property::new("invalid-commit", "validity");

/// The two-phase-commit monitor of one directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct TwoPhaseCommitSafety {
    #[rename(keep)]
    dir: String,
    /// The transaction under way: how many transactions ended before it.
    #[rename(keep)]
    tx: i64,
    /// Its group of sites, as its coordinator wrote it.
    #[rename(keep)]
    group: BTreeSet<String>,
    /// Each vote node that stands (by name), its site, and what it says.
    votes: BTreeMap<String, (String, Vec<u8>)>,
    /// A site voted abort in this transaction.
    aborted: bool,
    /// Each transaction's decision: as written, or (with no applied ops seen) as first learned.
    #[rename(keep)]
    decisions: BTreeMap<i64, bool>,
    /// Applied ops are in the trace (a simulated run, or the model).
    applied: bool,
}

impl TwoPhaseCommitSafety {
    /// A monitor of the transactions in `dir`.
    pub fn new(dir: &str) -> Self {
        TwoPhaseCommitSafety {
            dir: dir.to_owned(),
            tx: 0,
            group: BTreeSet::new(),
            votes: BTreeMap::new(),
            aborted: false,
            decisions: BTreeMap::new(),
            applied: false,
        }
    }

    fn tx_path(&self) -> String {
        format!("{}/{TX}", self.dir)
    }

    /// The name of the vote node at `path`, and its site, if it is one.
    fn ballot<'p>(&self, path: &'p str) -> Option<(&'p str, &'p str)> {
        let node = path
            .strip_prefix(self.dir.as_str())?
            .strip_prefix('/')?
            .strip_prefix(TX)?
            .strip_prefix('/')?;
        Some((node, vote_site(node)?))
    }

    /// Takes one applied change; returns a validity violation's message, if it is one.
    fn change(&mut self, change: Change) -> Option<String> {
        let tx_path = self.tx_path();
        match change {
            Change::Created { path, data, .. } if path == tx_path => {
                let (_, group) = parse_tx_data(data).unwrap_or((0, data));
                let group = String::from_utf8_lossy(group);
                self.group = group.split(',').map(str::to_owned).collect();
                self.votes.clear();
                self.aborted = false;
            }
            Change::Created { path, data, .. } | Change::Set { path, data }
                if self.ballot(path).is_some() =>
            {
                let (node, site) = self.ballot(path).unwrap_or_default();
                // A vote counts for the transaction it names.
                let vote = match parse_tx_data(data) {
                    Some((tx, vote)) if tx == self.tx => vote.to_vec(),
                    _ => Vec::new(),
                };
                self.aborted |= vote == ABORT;
                self.votes.insert(node.to_owned(), (site.to_owned(), vote));
            }
            Change::Set { path, data } if path == tx_path => {
                let (_, decision) = parse_tx_data(data)?;
                if decision == COMMIT || decision == ABORT {
                    return self.decide(decision == COMMIT);
                }
            }
            // The transaction is over: the next one begins.
            Change::Set { path, .. } if path == self.dir => self.tx += 1,
            Change::Created { .. } | Change::Set { .. } => {}
            Change::Deleted(path) => {
                if let Some((node, _)) = self.ballot(path) {
                    self.votes.remove(node);
                }
            }
        }
        None
    }

    fn decide(&mut self, commit: bool) -> Option<String> {
        self.decisions.entry(self.tx).or_insert(commit);
        if !commit {
            return None;
        }
        if self.aborted {
            return Some(format!(
                "transaction {} was committed though a site voted abort",
                self.tx
            ));
        }
        let missing: Vec<&str> = self
            .group
            .iter()
            .filter(|site| {
                !self
                    .votes
                    .values()
                    .any(|(voter, vote)| voter == *site && vote == COMMIT)
            })
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            return None;
        }
        Some(format!(
            "transaction {} was committed without a commit vote from {}",
            self.tx,
            missing.join(", ")
        ))
    }
}

impl Monitor for TwoPhaseCommitSafety {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let violation = |property, message| Some(Violation::new(property, entry.at, message));
        match &entry.event {
            TraceEvent::Applied { op, reply, .. } => {
                self.applied = true;
                let mut invalid = None;
                for change in changes(op, reply) {
                    invalid = invalid.or(self.change(change));
                }
                invalid.and_then(|message| violation(&INVALID_COMMIT, message))
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome: Outcome::Decided { tx, commit },
            } => {
                let decided = match self.decisions.get(tx) {
                    Some(decided) => *decided,
                    None if !self.applied => *self.decisions.entry(*tx).or_insert(*commit),
                    None => {
                        let message = format!(
                            "c{client} (s{session}) learned a decision of transaction {tx} \
                             nobody had written"
                        );
                        return violation(&DISAGREEMENT, message);
                    }
                };
                if decided == *commit {
                    return None;
                }
                let word = |commit| if commit { "commit" } else { "abort" };
                let message = format!(
                    "c{client} (s{session}) learned {} for transaction {tx}, decided {}",
                    word(*commit),
                    word(decided)
                );
                violation(&DISAGREEMENT, message)
            }
            _ => None,
        }
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&DISAGREEMENT, &INVALID_COMMIT]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, Op, OpResult, SessionId, Stat};
    use zklab_recipes::session_renaming::session_guid;
    use zklab_recipes::two_phase_commit::{tx_data, vote_node};

    use super::*;
    use crate::monitor::traces::{applied, at, first_broken, outcome};
    use zklab_recipes::acl::Acls;

    const DIR: &str = "/tpc";

    fn vote_path(session: SessionId, site: &str) -> String {
        let guid = session_guid(session);
        format!("{DIR}/{TX}/{}", vote_node(&guid, site))
    }

    fn create(session: SessionId, path: String, data: Vec<u8>) -> TraceEntry {
        let op = Op::Create {
            path: path.clone(),
            data,
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        };
        let reply = OpResult::Created {
            path,
            stat: Stat::default(),
        };
        applied(session, op, reply)
    }

    fn set(session: SessionId, path: String, data: Vec<u8>) -> TraceEntry {
        let op = Op::SetData {
            path,
            data,
            version: -1,
        };
        applied(session, op, OpResult::SetData(Stat::default()))
    }

    /// The coordinator opens transaction 0 of sites `a` and `b`.
    fn opens() -> TraceEntry {
        create(9, format!("{DIR}/{TX}"), tx_data(0, b"a,b"))
    }

    /// The site `site` of session `session` joins and votes `vote` in transaction 0.
    fn votes(session: SessionId, site: &str, vote: &[u8]) -> [TraceEntry; 2] {
        [
            create(session, vote_path(session, site), tx_data(0, b"")),
            set(session, vote_path(session, site), tx_data(0, vote)),
        ]
    }

    fn decides(vote: &[u8]) -> TraceEntry {
        set(9, format!("{DIR}/{TX}"), tx_data(0, vote))
    }

    fn learns(session: SessionId, commit: bool) -> TraceEntry {
        at(0, outcome(0, session, Outcome::Decided { tx: 0, commit }))
    }

    fn first(entries: &[TraceEntry]) -> Option<&'static Property> {
        first_broken(TwoPhaseCommitSafety::new(DIR), entries)
    }

    /// The coordinator opens transaction 0, each of `voters` (a session, its site and its vote)
    /// joins and votes, then `then` happens.
    fn voted(voters: &[(SessionId, &str, &[u8])], then: Vec<TraceEntry>) -> Vec<TraceEntry> {
        let mut entries = vec![opens()];
        for (session, site, vote) in voters {
            entries.extend(votes(*session, site, vote));
        }
        entries.extend(then);
        entries
    }

    #[test]
    fn a_commit_every_site_voted_for_and_everyone_learned_is_safe() {
        let both = [(1, "a", COMMIT), (2, "b", COMMIT)];
        let entries = voted(
            &both,
            vec![decides(COMMIT), learns(1, true), learns(2, true)],
        );
        assert_eq!(first(&entries), None);
    }

    #[test]
    fn a_commit_without_a_sites_vote_is_invalid() {
        let entries = voted(&[(1, "a", COMMIT)], vec![decides(COMMIT)]);
        assert_eq!(first(&entries), Some(&INVALID_COMMIT));
    }

    #[test]
    fn a_commit_over_an_abort_vote_is_invalid() {
        let voters = [(1, "a", COMMIT), (2, "b", ABORT), (3, "b", COMMIT)];
        let entries = voted(&voters, vec![decides(COMMIT)]);
        assert_eq!(first(&entries), Some(&INVALID_COMMIT));
    }

    #[test]
    fn a_vote_gone_with_its_session_no_longer_counts() {
        let gone = Op::Delete {
            path: vote_path(2, "b"),
            version: -1,
        };
        let entries = voted(
            &[(1, "a", COMMIT), (2, "b", COMMIT)],
            vec![
                applied(2, gone, OpResult::Deleted),
                create(3, vote_path(3, "b"), tx_data(0, b"")),
                decides(COMMIT),
            ],
        );
        assert_eq!(first(&entries), Some(&INVALID_COMMIT));
    }

    #[test]
    fn an_abort_needs_no_votes_but_everyone_must_learn_it() {
        let entries = [opens(), decides(ABORT), learns(1, false), learns(2, true)];
        assert_eq!(first(&entries), Some(&DISAGREEMENT));
    }

    #[test]
    fn a_decision_nobody_wrote_is_a_disagreement() {
        let entries = [opens(), learns(1, true)];
        assert_eq!(first(&entries), Some(&DISAGREEMENT));
    }
}
