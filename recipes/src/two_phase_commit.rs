//! Two-phase commit, as ZooKeeper's recipes document describes it, with its two fixes: only the
//! coordinator reads the votes and decides, and a site's vote node is ephemeral, so a site that
//! fails is seen to fail.
//!
//! ```no_run
//! # async fn demo(coordinator: &impl zklab_recipes::client::ZkClient,
//! #               site: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::two_phase_commit::TwoPhaseCommitError> {
//! use std::time::Duration;
//! use zklab_recipes::two_phase_commit::TwoPhaseCommit;
//!
//! let tx = TwoPhaseCommit::new("/app", &["site-1", "site-2"], Duration::from_secs(5));
//! let committed = tx.coordinate(coordinator, 0).await?; // transaction 0 of /app
//! // ... and at each site:
//! let committed_too = tx.vote(site, 0, "site-1", true).await?; // votes commit
//! # Ok(()) }
//! ```
//!
//! **Transaction.** The coordinator creates `<dir>/tx` with the transaction's number and group of
//! sites in its data (a site that finds another number there has the wrong transaction's node).
//! Each site creates its own ephemeral vote node `<dir>/tx/<guid>-vote-<site>` (named by its
//! session, so a node is never mistaken for one of a session that ended) and votes by writing
//! `commit` or `abort` into it (after the number again): its create writes the vote, and only a
//! node that stood already (a lost create reply, or a node made for the transaction before) is
//! written again. The coordinator reads every vote with
//! a watch and writes the decision (after the number) into `<dir>/tx`: commit once every site
//! has voted commit, abort as soon as one voted abort, a vote node went (its session ended), or
//! the coordinator's timer (the framework's timer input) went off first. The decision is
//! written at version 0, so a transaction is decided once, in a `multi` that checks that the
//! directory still counts the transaction and, to commit, that every vote node read is still
//! as it was read. Every site reads `<dir>/tx` with a watch, and learns the decision from it.
//!
//! **Record.** Then the coordinator closes the transaction, and so does every site that reads
//! the decision in `<dir>/tx` (a coordinator may fail for good right after deciding): one
//! `multi` deletes `<dir>/tx` with the vote nodes under it and appends the decision (`c` or `a`)
//! to `<dir>`'s data, at the version that counts the transactions, so only the first close
//! succeeds. A site that lost its session (or was away) reads `<dir>` first: transaction `n` is
//! over once the version is past `n`, and its decision is byte `n` of the data. So a site that
//! never comes back holds nobody up, nothing is left behind, and the record grows by one byte a
//! transaction. Transactions run one after another: whoever comes to
//! transaction `n` while `<dir>` counts fewer waits for it to (a watch on `<dir>`).

use crate::acl::Acls;
use std::time::Duration;

use crate::client::{
    CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId, ZkClient,
};
use crate::client::{ZkError, ZkEvent};
use crate::handle::{Handle, Plays};
use crate::machine::{Input, Recipe, Step, Timer};
use crate::outcome::Outcome;
use crate::parts::link::{Connection, Delivery, Link, RecipeError};
use crate::parts::parents::Parents;
use crate::session_renaming::{session_guid, RenameSessions};
use crate::subtree::child_path;

mod coordinator;
mod site;

use coordinator::{Ballot, Vote};

/// A decision to commit, as written.
pub const COMMIT: &[u8] = b"commit";

/// A decision to abort, as written.
pub const ABORT: &[u8] = b"abort";

/// The transaction node's name in the directory.
pub const TX: &str = "tx";

/// The prefix of a site's vote node's name.
pub const VOTE: &str = "vote-";

/// A committed transaction, in the directory's record.
pub const COMMITTED: u8 = b'c';

/// An aborted transaction, in the directory's record.
pub const ABORTED: u8 = b'a';

/// Site `site`'s vote node's name in the session of `guid`: `<guid>-vote-<site>`. A session
/// has a node of its own, so a decision made on votes read is checked against those very nodes.
pub fn vote_node(guid: &str, site: &str) -> String {
    format!("{guid}-{VOTE}{site}")
}

/// The site whose vote node is named `node`, if it is one.
pub fn vote_site(node: &str) -> Option<&str> {
    node.split_once('-')?.1.strip_prefix(VOTE)
}

/// The transaction node's data: the transaction's number, a space, and `state` (its group of
/// sites, then its decision).
pub fn tx_data(tx: i64, state: &[u8]) -> Vec<u8> {
    let mut data = format!("{tx} ").into_bytes();
    data.extend_from_slice(state);
    data
}

/// The transaction's number and state in a transaction node's data.
pub fn parse_tx_data(data: &[u8]) -> Option<(i64, &[u8])> {
    let space = data.iter().position(|byte| *byte == b' ')?;
    let tx = std::str::from_utf8(&data[..space]).ok()?.parse().ok()?;
    Some((tx, &data[space + 1..]))
}

/// What a two-phase commit machine tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TwoPhaseCommitOutcome {
    /// Transaction `tx` is decided: committed, or aborted.
    Decided {
        /// Which transaction.
        tx: i64,
        /// Committed.
        commit: bool,
    },
    /// The session ended first: start again in a new one to learn the decision.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle.
    Failed(ZkError),
}

impl From<TwoPhaseCommitOutcome> for Outcome {
    fn from(outcome: TwoPhaseCommitOutcome) -> Self {
        match outcome {
            TwoPhaseCommitOutcome::Decided { tx, commit } => Outcome::Decided { tx, commit },
            TwoPhaseCommitOutcome::Lost => Outcome::Lost,
            TwoPhaseCommitOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// The part a machine plays in a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum Part {
    /// Opens the transaction, decides it, and closes it.
    Coordinator,
    /// A site of that name, voting commit or not.
    Site {
        /// Its name in the group.
        #[rename(keep)]
        name: String,
        /// It votes commit (or abort).
        commit: bool,
        /// Names its vote node in this session, so a vote node of a session that ended is
        /// never taken for one of a later session.
        #[rename(guid)]
        guid: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// Reading the directory (with a watch): is the transaction over already, or the one
    /// before not yet?
    Placing,
    /// A site waits for the transaction before to be over (a watch on the directory).
    Behind,
    /// The create of the transaction node is in flight.
    Opening,
    /// Its directory is missing: creating its ancestors.
    CreatingParent(Parents),
    /// Reading the transaction node (with a watch, for a site).
    Reading,
    /// A site waits for the transaction node to be created: the `exists` that sets the watch
    /// is in flight (`asked`), or it waits for the watch.
    AwaitingTx {
        asked: bool,
    },
    /// A site's vote node's create is in flight.
    Joining,
    /// A site's vote is being written into a vote node of its that stood already.
    Voting,
    /// Waiting for news: of the votes (coordinating), of the decision (a site).
    Waiting,
    /// Listing the transaction's vote nodes.
    Listing,
    /// Reading a site's vote.
    ReadingVote {
        ballot: usize,
    },
    /// The decision is being written.
    Deciding {
        commit: bool,
    },
    /// Listing the decided transaction's children, to close it.
    Gathering,
    /// The close is in flight.
    Closing,
    Done,
}

/// A coordinator or a site of one transaction, as a pure state machine.
///
/// A site whose transaction is not decided within twice the coordinator's timeout takes the
/// coordinator's part: the coordinator may have failed for good, and everything it knew is in
/// ZooKeeper. It decides abort, unless the transaction is decided already (the decision is
/// written once, at version 0, so whoever writes first decides for everyone), and closes the
/// transaction. The same goes for a transaction before its own that nobody closed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct TwoPhaseCommitMachine {
    #[rename(keep)]
    dir: String,
    /// Its transaction (the directory's data version while it runs).
    #[rename(keep)]
    tx: i64,
    /// The transaction its coordinating works on: its own, or one before that nobody closed.
    #[rename(keep)]
    working: i64,
    #[rename(keep)]
    sites: Vec<String>,
    #[rename(keep)]
    timeout: Duration,
    part: Part,
    /// A site took the coordinator's part.
    acting: bool,
    phase: Phase,
    /// The vote nodes listed, in the order listed.
    ballots: Vec<Ballot>,
    /// A vote node seen before went away.
    failed: bool,
    /// The timer went off before the decision.
    timed_out: bool,
    /// The decision of the transaction worked on, once known.
    decision: Option<bool>,
    /// A site made its vote node in this session.
    joined: bool,
    /// The directory's record of the transactions before, as read.
    #[rename(keep)]
    record: Vec<u8>,
    /// News came while an op was in flight: read again once it returns.
    again: bool,
    link: Link,
}

impl TwoPhaseCommitMachine {
    /// The machine playing `part` in transaction `tx` of `dir`, whose group is `sites`, and
    /// whose coordinator waits `timeout` for the votes.
    pub fn new(dir: &str, tx: i64, sites: &[String], timeout: Duration, part: Part) -> Self {
        TwoPhaseCommitMachine {
            dir: dir.to_owned(),
            tx,
            working: tx,
            sites: sites.to_vec(),
            timeout,
            part,
            acting: false,
            phase: Phase::Idle,
            ballots: Vec::new(),
            failed: false,
            timed_out: false,
            decision: None,
            joined: false,
            record: Vec::new(),
            again: false,
            link: Link::default(),
        }
    }

    fn tx_path(&self) -> String {
        child_path(&self.dir, TX)
    }

    fn vote_path(&self, node: &str) -> String {
        child_path(&self.tx_path(), node)
    }

    /// Whether it plays the coordinator's part (a site does once its timer went off).
    fn coordinating(&self) -> bool {
        self.part == Part::Coordinator || self.acting
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<TwoPhaseCommitOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: TwoPhaseCommitOutcome) -> Step<TwoPhaseCommitOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome).timing(Timer::Cancel)
    }

    fn decided(&mut self, commit: bool) -> Step<TwoPhaseCommitOutcome> {
        let tx = self.tx;
        self.done(TwoPhaseCommitOutcome::Decided { tx, commit })
    }

    fn wait(&mut self) -> Step<TwoPhaseCommitOutcome> {
        self.phase = Phase::Waiting;
        Step::wait()
    }

    /// Reads the directory (with a watch), to learn where the transactions stand.
    fn place(&mut self) -> Step<TwoPhaseCommitOutcome> {
        self.again = false;
        let place = Op::GetData {
            path: self.dir.clone(),
            watch: true,
        };
        self.send(Phase::Placing, place)
    }

    /// The directory's record and version: its transaction is over once the version is past
    /// it; the one before is not over yet while the version is below it.
    fn placed(&mut self, record: &[u8], version: i64) -> Step<TwoPhaseCommitOutcome> {
        if version > self.tx {
            let commit = record.get(self.tx as usize) == Some(&COMMITTED);
            return self.decided(commit);
        }
        self.record = record.to_vec();
        if !self.coordinating() {
            if version < self.tx {
                self.phase = Phase::Behind;
                return Step::wait();
            }
            return self.read_tx();
        }
        if version != self.working {
            // Work on the transaction the directory is at: its own, or one nobody closed.
            self.working = version;
            self.ballots.clear();
            (self.failed, self.decision) = (false, None);
        }
        // Only while the directory still counts it: a late party never opens a closed one anew.
        let open = Op::Multi(vec![
            Op::Check {
                path: self.dir.clone(),
                version: self.working as i32,
            },
            Op::Create {
                path: self.tx_path(),
                data: tx_data(self.working, self.sites.join(",").as_bytes()),
                mode: CreateMode::Persistent,
                acl: Acls::OPEN,
            },
        ]);
        self.send(Phase::Opening, open)
    }

    fn read_tx(&mut self) -> Step<TwoPhaseCommitOutcome> {
        self.again = false;
        let read = Op::GetData {
            path: self.tx_path(),
            watch: !self.coordinating(),
        };
        self.send(Phase::Reading, read)
    }

    /// What the transaction node's data says of the transaction worked on: `None` if it is
    /// another transaction's; otherwise the decision, if it is one yet.
    fn decision_in(&self, data: &[u8]) -> Option<Option<bool>> {
        let (tx, state) = parse_tx_data(data)?;
        (tx == self.working).then_some(match state {
            COMMIT => Some(true),
            ABORT => Some(false),
            _ => None,
        })
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<TwoPhaseCommitOutcome> {
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        match (phase, reply) {
            (Phase::Placing, Ok(OpResult::Data { data, stat })) => {
                self.placed(&data, i64::from(stat.version))
            }
            (Phase::Placing, Err(ZkError::NoNode)) => self.placed(&[], 0),
            (Phase::Opening, Ok(OpResult::Multi(results))) => match results.as_slice() {
                [Ok(_), Ok(_)] => self.list(),
                // Opened before (by a coordinating party, maybe in a session that ended).
                [_, Err(ZkError::NodeExists)] => self.read_tx(),
                // No directory yet.
                [Err(ZkError::NoNode), _] => {
                    let (parents, op) = Parents::start(&self.dir, CreateMode::Persistent);
                    self.send(Phase::CreatingParent(parents), op)
                }
                // Closed meanwhile.
                _ => self.place(),
            },
            (Phase::CreatingParent(parents), Ok(_) | Err(ZkError::NodeExists)) => {
                match parents.next(&self.dir) {
                    Some((next, op)) => self.send(Phase::CreatingParent(next), op),
                    None => self.place(),
                }
            }
            (Phase::Reading, Ok(OpResult::Data { data, .. })) if self.coordinating() => {
                self.coordinator_read(&data)
            }
            (Phase::Reading, Ok(OpResult::Data { data, .. })) => self.site_read(&data),
            // Closed meanwhile: the directory says how.
            (Phase::Reading | Phase::Listing, Err(ZkError::NoNode)) if self.coordinating() => {
                self.place()
            }
            (Phase::Gathering, Err(ZkError::NoNode)) => self.place(),
            // Not opened yet: wait for it to be.
            (Phase::Reading, Err(ZkError::NoNode)) => {
                let exists = Op::Exists {
                    path: self.tx_path(),
                    watch: true,
                };
                self.send(Phase::AwaitingTx { asked: true }, exists)
            }
            // There now: it may be a later transaction's, so read the directory first.
            (Phase::AwaitingTx { .. }, Ok(OpResult::Exists(Some(_)))) => self.place(),
            (Phase::AwaitingTx { .. }, Ok(OpResult::Exists(None))) => {
                if self.again {
                    return self.place();
                }
                self.phase = Phase::AwaitingTx { asked: false };
                Step::wait()
            }
            (Phase::Joining, Ok(OpResult::Created { .. })) => self.voted(),
            // Its own node (its name is its own), maybe from the transaction before.
            (Phase::Joining, Err(ZkError::NodeExists)) => self.vote(),
            // Its transaction was closed meanwhile (its vote node with it): the record says how.
            (Phase::Joining | Phase::Voting, Err(ZkError::NoNode)) => self.place(),
            (Phase::Voting, Ok(OpResult::SetData(_))) => self.voted(),
            (Phase::Listing, Ok(OpResult::Children { children, .. })) => self.listed(&children),
            (Phase::ReadingVote { ballot }, Ok(OpResult::Data { data, stat })) => {
                // A vote for another transaction (left by a site that came late to that one)
                // is no vote yet: its site will vote again.
                self.ballots[ballot].vote = match parse_tx_data(&data) {
                    Some((tx, COMMIT)) if tx == self.working => Vote::Commit,
                    Some((tx, ABORT)) if tx == self.working => Vote::Abort,
                    _ => Vote::Pending,
                };
                self.ballots[ballot].version = stat.version;
                self.read_next_vote(ballot + 1)
            }
            // Listed, then gone: that site failed.
            (Phase::ReadingVote { .. }, Err(ZkError::NoNode)) => {
                self.failed = true;
                self.read_next_vote(0)
            }
            (Phase::Deciding { commit }, Ok(OpResult::Multi(results))) => {
                let last = results.len() - 1;
                match results.iter().position(Result::is_err) {
                    None => {
                        self.decision = Some(commit);
                        self.gather()
                    }
                    // Closed meanwhile: the directory says how.
                    Some(0) => self.place(),
                    // Decided already, by another coordinating party: read it.
                    Some(failed) if failed == last => self.read_tx(),
                    // A ballot's node changed (its site wrote its vote again) or went: read it
                    // again, and list the votes again. Deciding on the stale version once more
                    // would fail for ever.
                    Some(failed) => {
                        self.ballots[failed - 1].vote = Vote::Pending;
                        self.list()
                    }
                }
            }
            (Phase::Gathering, Ok(OpResult::Children { children, .. })) => self.close(&children),
            (Phase::Closing, Ok(OpResult::Multi(results)))
                if results.iter().all(Result::is_ok) && self.working == self.tx =>
            {
                self.decided(self.decision == Some(true))
            }
            // A transaction before its own closed, or the close failed (closed by another
            // party already, or a vote node came meanwhile): see where things stand.
            (Phase::Closing, Ok(OpResult::Multi(_))) => self.place(),
            (_, Err(error)) => self.done(TwoPhaseCommitOutcome::Failed(error)),
            (_, Ok(_)) => self.done(TwoPhaseCommitOutcome::Failed(ZkError::MarshallingError)),
        }
    }

    /// News from a watch: what it is about is read again.
    fn on_watch(&mut self, event_type: EventType, path: &str) -> Step<TwoPhaseCommitOutcome> {
        let tx = self.tx_path();
        let about_dir = path == self.dir;
        let about_tx = path == tx
            || path
                .strip_prefix(tx.as_str())
                .is_some_and(|p| p.starts_with('/'));
        if !about_dir && !about_tx {
            return Step::wait();
        }
        let coordinating = self.coordinating();
        match &self.phase {
            Phase::Behind if about_dir => self.place(),
            // The decision, most likely: read it.
            Phase::Waiting
                if !coordinating && path == tx && event_type == EventType::NodeDataChanged =>
            {
                self.read_tx()
            }
            // Closed, or opened (maybe a later one): the directory says where it stands.
            Phase::Waiting | Phase::AwaitingTx { asked: false } if !coordinating => self.place(),
            Phase::Waiting if about_tx => self.list(),
            Phase::Behind | Phase::Waiting | Phase::AwaitingTx { asked: false } => Step::wait(),
            _ => {
                self.again = true;
                Step::wait()
            }
        }
    }

    /// The timer went off before the decision: a coordinator aborts; a site takes the
    /// coordinator's part.
    fn on_timeout(&mut self) -> Step<TwoPhaseCommitOutcome> {
        self.timed_out = true;
        if !self.coordinating() {
            self.acting = true;
            // Waiting for news that may never come: go and see.
            if matches!(
                self.phase,
                Phase::Waiting | Phase::Behind | Phase::AwaitingTx { asked: false }
            ) {
                return self.place();
            }
            self.again = true;
            return Step::wait();
        }
        if self.phase == Phase::Waiting {
            return self.decide(false);
        }
        Step::wait()
    }
}

impl Recipe for TwoPhaseCommitMachine {
    type Request = ();
    type Outcome = TwoPhaseCommitOutcome;

    fn step(&mut self, input: Input<()>) -> Step<TwoPhaseCommitOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => {
                let timeout = match self.part {
                    Part::Coordinator => self.timeout,
                    Part::Site { .. } => self.timeout * 2,
                };
                self.place().timing(Timer::Set(timeout))
            }
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.done(TwoPhaseCommitOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::Event(ZkEvent::Session(event)) => {
                if self.link.on_session(event, false) == Some(Connection::Lost) {
                    return self.done(TwoPhaseCommitOutcome::Lost);
                }
                // Back in the same session: a watch's news may have been missed while away.
                let waiting = matches!(
                    self.phase,
                    Phase::Waiting | Phase::Behind | Phase::AwaitingTx { asked: false }
                );
                if event == SessionEvent::SyncConnected && waiting {
                    return if self.coordinating() {
                        self.list()
                    } else {
                        self.place()
                    };
                }
                Step::wait()
            }
            Input::Event(ZkEvent::Watch(event)) => self.on_watch(event.event_type, &event.path),
            Input::Timeout if self.decision.is_none() => self.on_timeout(),
            Input::Timeout | Input::App(()) => Step::wait(),
        }
    }
}

/// Why a two-phase commit operation did not complete: the session ended first (start again in
/// a new one: the decision is read, not lost), or ZooKeeper answered with an error the recipe
/// cannot handle.
pub type TwoPhaseCommitError = RecipeError;

/// What two-phase commit keeps besides its directory: who votes, and for how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwoPhaseCommitSettings {
    /// The names of the sites that vote on every transaction.
    pub sites: Vec<String>,
    /// How long the coordinator waits for every vote before it aborts.
    pub timeout: Duration,
}

/// Transactions in one directory, over one group of sites.
pub type TwoPhaseCommit = Handle<TwoPhaseCommitSettings>;

impl TwoPhaseCommit {
    /// Transactions in `dir` (created if missing) over the sites named `sites`, whose
    /// coordinator aborts a transaction whose votes are not all in within `timeout`.
    pub fn new(dir: &str, sites: &[&str], timeout: Duration) -> Self {
        let sites = sites.iter().map(|site| site.to_string()).collect();
        Handle::at(dir, TwoPhaseCommitSettings { sites, timeout })
    }

    /// The machine of `part` for transaction `tx`.
    fn machine_for(&self, tx: i64, part: Part) -> TwoPhaseCommitMachine {
        let TwoPhaseCommitSettings { sites, timeout } = &self.settings;
        TwoPhaseCommitMachine::new(&self.path, tx, sites, *timeout, part)
    }

    /// The coordinator's machine for transaction `tx`.
    pub fn coordinator(&self, tx: i64) -> TwoPhaseCommitMachine {
        self.machine_for(tx, Part::Coordinator)
    }

    /// The machine of site `name` for transaction `tx` in `session`, voting commit or not.
    pub fn site(
        &self,
        session: SessionId,
        tx: i64,
        name: &str,
        commit: bool,
    ) -> TwoPhaseCommitMachine {
        let part = Part::Site {
            name: name.to_owned(),
            commit,
            guid: session_guid(session),
        };
        self.machine_for(tx, part)
    }

    /// Coordinates transaction `tx` (they count from 0, one after another): returns whether it
    /// committed, once every site has learned so.
    pub async fn coordinate<C: ZkClient>(
        &self,
        client: &C,
        tx: i64,
    ) -> Result<bool, TwoPhaseCommitError> {
        self.run_with(client, self.coordinator(tx)).await
    }

    /// Takes part in transaction `tx` as site `name`, voting commit or not: returns whether it
    /// committed.
    pub async fn vote<C: ZkClient>(
        &self,
        client: &C,
        tx: i64,
        name: &str,
        commit: bool,
    ) -> Result<bool, TwoPhaseCommitError> {
        let machine = self.site(client.session_id(), tx, name, commit);
        self.run_with(client, machine).await
    }

    /// Runs `machine` (this recipe's own, or one built around it) until it learns the decision.
    pub async fn run_with<C: ZkClient, M: Plays<(), TwoPhaseCommitOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<bool, TwoPhaseCommitError> {
        let decided = self.start_until(client, machine, |outcome| match outcome {
            TwoPhaseCommitOutcome::Decided { commit, .. } => Some(*commit),
            _ => None,
        });
        Ok(decided.await?.1)
    }
}

#[cfg(test)]
mod tests;
