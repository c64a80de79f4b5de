//! The coordinating party's part in a transaction (the coordinator's, or a site's that took it
//! over): it reads every vote, decides, and closes the transaction.

use super::{tx_data, vote_site, Phase, TwoPhaseCommitMachine, TwoPhaseCommitOutcome};
use super::{ABORT, ABORTED, COMMIT, COMMITTED};
use crate::client::Op;
use crate::machine::Step;
use crate::session_renaming::RenameSessions;
use crate::subtree::child_path;

/// A site's vote, as the coordinator has read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub(super) enum Vote {
    /// Its vote node is there, not yet written.
    Pending,
    Commit,
    Abort,
}

/// A vote node the coordinating party has listed, and what it has read in it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub(super) struct Ballot {
    /// The node's name: `vote-<site>-<guid>`.
    #[rename(guid)]
    pub(super) node: String,
    /// Its site's place in the group.
    pub(super) site: usize,
    pub(super) vote: Vote,
    /// The node's data version when it was read.
    pub(super) version: i32,
}

impl TwoPhaseCommitMachine {
    /// The coordinating party read the transaction node.
    pub(super) fn coordinator_read(&mut self, data: &[u8]) -> Step<TwoPhaseCommitOutcome> {
        match self.decision_in(data) {
            None => self.place(),
            Some(Some(decision)) => {
                self.decision = Some(decision);
                self.gather()
            }
            Some(None) => self.list(),
        }
    }

    /// Lists the vote nodes, with a watch.
    pub(super) fn list(&mut self) -> Step<TwoPhaseCommitOutcome> {
        self.again = false;
        let list = Op::GetChildren {
            path: self.tx_path(),
            watch: true,
        };
        self.send(Phase::Listing, list)
    }

    /// Takes a listing of the vote nodes: a node read before and gone now is a site that
    /// failed.
    pub(super) fn listed(&mut self, children: &[String]) -> Step<TwoPhaseCommitOutcome> {
        let before = self.ballots.len();
        self.ballots
            .retain(|ballot| children.contains(&ballot.node));
        self.failed |= self.ballots.len() < before;
        for node in children {
            let site = vote_site(node).and_then(|name| self.sites.iter().position(|s| s == name));
            let known = self.ballots.iter().any(|ballot| &ballot.node == node);
            if let (Some(site), false) = (site, known) {
                self.ballots.push(Ballot {
                    node: node.clone(),
                    site,
                    vote: Vote::Pending,
                    version: 0,
                });
            }
        }
        self.read_next_vote(0)
    }

    /// Reads the first vote from ballot `from` on that is still pending, or decides once none
    /// is: abort as soon as there is a reason to, commit once every site has a ballot and every
    /// ballot says commit.
    pub(super) fn read_next_vote(&mut self, from: usize) -> Step<TwoPhaseCommitOutcome> {
        let voted_abort = self.ballots.iter().any(|b| b.vote == Vote::Abort);
        if self.failed || self.timed_out || voted_abort {
            return self.decide(false);
        }
        let pending = (from..self.ballots.len()).find(|b| self.ballots[*b].vote == Vote::Pending);
        if let Some(ballot) = pending {
            let read = Op::GetData {
                path: self.vote_path(&self.ballots[ballot].node),
                watch: true,
            };
            return self.send(Phase::ReadingVote { ballot }, read);
        }
        let all_sites = (0..self.sites.len()).all(|s| self.ballots.iter().any(|b| b.site == s));
        let all_commit = self.ballots.iter().all(|b| b.vote == Vote::Commit);
        if all_sites && all_commit {
            return self.decide(true);
        }
        if self.again {
            return self.list();
        }
        self.wait()
    }

    /// Writes the decision, only while the directory still counts the transaction worked on (a
    /// write delayed past its transaction's close must not decide the next one, whose node is
    /// at version 0 too) and, to commit, while every ballot's node is as it was read (a site
    /// whose session ended since is a site that failed).
    pub(super) fn decide(&mut self, commit: bool) -> Step<TwoPhaseCommitOutcome> {
        let mut write = vec![Op::Check {
            path: self.dir.clone(),
            version: self.working as i32,
        }];
        if commit {
            write.extend(self.ballots.iter().map(|ballot| Op::Check {
                path: self.vote_path(&ballot.node),
                version: ballot.version,
            }));
        }
        write.push(Op::SetData {
            path: self.tx_path(),
            data: tx_data(self.working, if commit { COMMIT } else { ABORT }),
            version: 0,
        });
        self.send(Phase::Deciding { commit }, Op::Multi(write))
    }

    /// Lists the decided transaction's children, to close it.
    pub(super) fn gather(&mut self) -> Step<TwoPhaseCommitOutcome> {
        let list = Op::GetChildren {
            path: self.tx_path(),
            watch: false,
        };
        self.send(Phase::Gathering, list)
    }

    /// Closes the decided transaction: deletes its node and those under it, and appends the
    /// decision to the directory's record.
    pub(super) fn close(&mut self, children: &[String]) -> Step<TwoPhaseCommitOutcome> {
        let tx = self.tx_path();
        let mut close: Vec<Op> = children
            .iter()
            .map(|child| Op::Delete {
                path: child_path(&tx, child),
                version: -1,
            })
            .collect();
        close.push(Op::Delete {
            path: tx,
            version: -1,
        });
        let mut record = self.record.clone();
        record.push(if self.decision == Some(true) {
            COMMITTED
        } else {
            ABORTED
        });
        close.push(Op::SetData {
            path: self.dir.clone(),
            data: record,
            version: self.working as i32,
        });
        self.send(Phase::Closing, Op::Multi(close))
    }
}
