//! The two-phase commit's kit. Client 0 coordinates one transaction after another; every other
//! client is a site of each (`site-1`, `site-2`, ...), and votes commit, but for site 1 in every
//! fourth transaction, which votes abort. The coordinator gives up waiting for votes after
//! [`VOTE_TIMEOUT`], so a site paused or cut off makes its transaction abort. A coordinator or a
//! site whose session ends starts its transaction again in a new session and learns the
//! decision; a site whose transaction is not decided in time takes the coordinator's part (a
//! coordinator that crashed for good holds nobody up). The model runs transaction 0, in which
//! every site votes commit (a timer goes off whenever the world is quiet, and within the budget
//! of pauses at any moment, so aborts and sites taking the coordinator's part are explored
//! too).
//!
//! Herd-freedom is not asked: the transaction's end is meant to wake every site. Its known bug:
//! a site that presumes a commit once it has voted commit ([`PresumeCommit`]).
//!
//! [`PresumeCommit`]: bugs::PresumeCommit

pub mod bugs;
pub mod monitor;

use std::fmt::Debug;
use std::marker::PhantomData;
use std::time::Duration;

use zklab_models::workload::Workload;
use zklab_recipes::client::{SessionId, ZkClient};
use zklab_recipes::two_phase_commit::{TwoPhaseCommit, TwoPhaseCommitMachine};

use crate::host::{rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};
use crate::two_phase_commit::monitor::TwoPhaseCommitSafety;

/// Where the transactions' nodes live.
pub const TWO_PHASE_COMMIT_DIR: &str = "/two-phase-commit";

/// How long the coordinator waits for the votes before it aborts.
pub const VOTE_TIMEOUT: Duration = Duration::from_secs(3);

/// A model client's part: the number of sites in the high four bits, its own number (0 for the
/// coordinator, then 1, 2, ... for the sites) in the low four (the model checks at most 5
/// clients).
fn part_of(client: usize, sites: usize) -> u8 {
    ((sites << 4) | client) as u8
}

/// The two-phase commit's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct TwoPhaseCommitKit<X>(PhantomData<X>);

impl<X> TwoPhaseCommitKit<X> {
    /// The kit.
    pub const KIT: Self = TwoPhaseCommitKit(PhantomData);
}

/// The transactions of a group of `sites` sites.
fn transactions(sites: usize) -> TwoPhaseCommit {
    let names: Vec<String> = (1..=sites).map(site_name).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    TwoPhaseCommit::new(TWO_PHASE_COMMIT_DIR, &names, VOTE_TIMEOUT)
}

fn site_name(site: usize) -> String {
    format!("site-{site}")
}

/// How site `site` votes in transaction `tx`: commit, but for site 1 in every fourth.
fn votes_commit(tx: i64, site: usize) -> bool {
    !(site == 1 && tx % 4 == 3)
}

impl<X: Mutation> TwoPhaseCommitKit<X> {
    /// The machine of client `client` of a group of `sites` sites in transaction `tx`, in
    /// `session`.
    fn mutated(
        client: usize,
        sites: usize,
        session: SessionId,
        tx: i64,
    ) -> Mutated<TwoPhaseCommitMachine, X> {
        let transactions = transactions(sites);
        let machine = match client {
            0 => transactions.coordinator(tx),
            site => transactions.site(session, tx, &site_name(site), votes_commit(tx, site)),
        };
        Mutated::new(machine)
    }
}

impl<X: Mutation> Workload for TwoPhaseCommitKit<X> {
    type Machine = Mutated<TwoPhaseCommitMachine, X>;
    type Monitors = (TwoPhaseCommitSafety, NoFailures);

    /// A coordinator and one site at least.
    fn min_clients(&self) -> usize {
        2
    }

    fn part(&self, client: usize, clients: usize) -> u8 {
        part_of(client, clients - 1)
    }

    fn machine(&self, part: u8, session: SessionId) -> Self::Machine {
        Self::mutated(usize::from(part & 0xf), usize::from(part >> 4), session, 0)
    }

    fn request_when_holding(&self) {}

    /// Agreement and validity; no recipe giving up.
    fn monitors(&self) -> Self::Monitors {
        (TwoPhaseCommitSafety::new(TWO_PHASE_COMMIT_DIR), NoFailures)
    }

    fn root(&self) -> &str {
        TWO_PHASE_COMMIT_DIR
    }

    /// Every client plays a part of its own (each site has its name): there is nobody to swap.
    fn symmetric(&self) -> bool {
        false
    }

    /// Votes and decisions are judged by versions and data alone.
    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for TwoPhaseCommitKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let sites = host.clients() - 1;
        let transactions = transactions(sites).recording(host.recorder());
        rounds_in_sessions!(host, i64::from(rounds), |session, tx| async {
            let machine = Self::mutated(host.index(), sites, session.session_id(), tx);
            transactions.run_with(&session, machine).await?;
            host.work().await;
            Ok(())
        })
    }
}
