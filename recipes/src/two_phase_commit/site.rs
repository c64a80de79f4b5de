//! A site's part in a transaction: it votes in an ephemeral node of its own, and learns the
//! decision from the transaction node.

use super::{tx_data, vote_node, Part, Phase, TwoPhaseCommitMachine, TwoPhaseCommitOutcome};
use super::{ABORT, COMMIT};
use crate::acl::Acls;
use crate::client::{CreateMode, Op};
use crate::machine::Step;

impl TwoPhaseCommitMachine {
    /// A site read the transaction node.
    pub(super) fn site_read(&mut self, data: &[u8]) -> Step<TwoPhaseCommitOutcome> {
        let Part::Site { name, guid, .. } = &self.part else {
            return self.wait();
        };
        let own = self.vote_path(&vote_node(guid, name));
        match self.decision_in(data) {
            // Another transaction's: the directory says whether this one is over.
            None => return self.place(),
            // Decided, and not closed yet: close it too, lest a coordinator that failed for
            // good after deciding leave it standing.
            Some(Some(decision)) => {
                self.decision = Some(decision);
                return self.gather();
            }
            Some(None) => {}
        }
        if self.joined {
            return if self.again {
                self.read_tx()
            } else {
                self.wait()
            };
        }
        let join = Op::Create {
            path: own,
            data: self.ballot_data(),
            mode: CreateMode::Ephemeral,
            acl: Acls::OPEN,
        };
        self.send(Phase::Joining, join)
    }

    /// A site's vote in its transaction, as its vote node holds it.
    fn ballot_data(&self) -> Vec<u8> {
        let commit = matches!(self.part, Part::Site { commit: true, .. });
        tx_data(self.tx, if commit { COMMIT } else { ABORT })
    }

    /// The site's vote node was there already: made by this session for this transaction (a
    /// create whose reply was lost) or for the one before (it came late to that one). Writing
    /// the vote again makes it this transaction's.
    pub(super) fn vote(&mut self) -> Step<TwoPhaseCommitOutcome> {
        let Part::Site { name, guid, .. } = &self.part else {
            return self.wait();
        };
        let vote = Op::SetData {
            path: self.vote_path(&vote_node(guid, name)),
            data: self.ballot_data(),
            version: -1,
        };
        self.send(Phase::Voting, vote)
    }

    /// The site's vote stands in its node.
    pub(super) fn voted(&mut self) -> Step<TwoPhaseCommitOutcome> {
        self.joined = true;
        if self.again {
            return self.read_tx();
        }
        self.wait()
    }
}
