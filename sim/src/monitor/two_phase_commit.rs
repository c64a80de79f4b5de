//! Two-phase commit's safety, judged by the server's applied ops and the outcomes:
//!
//! - validity: the decision commit is written only while every site of the group (written in the
//!   transaction node by its coordinator) has a vote node that says commit, and no site voted
//!   abort in that transaction;
//! - agreement: everyone who learns a transaction's decision learns the one written in its
//!   transaction node (on a real server's trace, which has no applied ops, the first one
//!   learned).
//!
//! Termination (every live site decides within a bound) is the simulator's liveness and the
//! model's "no stuck state". Transactions are counted as the recipe counts them: one more each
//! time the directory's data is written.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::outcome::Outcome;
use zklab_recipes::symmetry::RenameSessions;
use zklab_recipes::two_phase_commit::{parse_tx_data, ABORT, COMMIT, TX, VOTE};

use super::{changes, Change, Monitor, Violation, ViolationKind};
use crate::trace::{TraceEntry, TraceEvent};

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
    /// Each site's vote node that stands, and what it says.
    #[rename(keep)]
    votes: BTreeMap<String, Vec<u8>>,
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

    /// The site whose vote node `path` is, if it is one.
    fn voter<'p>(&self, path: &'p str) -> Option<&'p str> {
        let name = path
            .strip_prefix(self.dir.as_str())?
            .strip_prefix('/')?
            .strip_prefix(TX)?
            .strip_prefix('/')?;
        name.strip_prefix(VOTE)
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
                if self.voter(path).is_some() =>
            {
                let site = self.voter(path).unwrap_or_default().to_owned();
                // A vote counts for the transaction it names.
                let vote = match parse_tx_data(data) {
                    Some((tx, vote)) if tx == self.tx => vote.to_vec(),
                    _ => Vec::new(),
                };
                self.aborted |= vote == ABORT;
                self.votes.insert(site, vote);
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
                if let Some(site) = self.voter(path) {
                    self.votes.remove(site);
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
        let missing: Vec<&String> = self
            .group
            .iter()
            .filter(|site| self.votes.get(*site).map(Vec::as_slice) != Some(COMMIT))
            .collect();
        if self.aborted {
            return Some(format!(
                "transaction {} was committed though a site voted abort",
                self.tx
            ));
        }
        if missing.is_empty() {
            return None;
        }
        let missing: Vec<&str> = missing.iter().map(|site| site.as_str()).collect();
        Some(format!(
            "transaction {} was committed without a commit vote from {}",
            self.tx,
            missing.join(", ")
        ))
    }
}

impl Monitor for TwoPhaseCommitSafety {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let violation = |kind, message| {
            Some(Violation {
                kind,
                at: entry.at,
                message,
            })
        };
        match &entry.event {
            TraceEvent::Applied { op, reply, .. } => {
                self.applied = true;
                let mut invalid = None;
                for change in changes(op, reply) {
                    invalid = invalid.or(self.change(change));
                }
                invalid.and_then(|message| violation(ViolationKind::InvalidCommit, message))
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
                        return violation(ViolationKind::Disagreement, message);
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
                violation(ViolationKind::Disagreement, message)
            }
            _ => None,
        }
    }

    fn kinds(&self) -> Vec<ViolationKind> {
        vec![ViolationKind::Disagreement, ViolationKind::InvalidCommit]
    }
}
