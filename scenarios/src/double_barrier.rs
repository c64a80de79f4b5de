//! The double barrier's kit. Every client goes through the rounds of one reusable barrier of
//! [`THRESHOLD`]: it enters round after round, works inside, and leaves. A round begins once
//! [`THRESHOLD`] are there; whoever comes later misses it and waits for the next one, so the
//! rounds are the barrier's own (counted by the barrier), and every client asks for each in
//! turn. A client whose session ends asks for the same round again in a new session, and learns
//! whether it began without it. The model runs round 0: every client enters it or misses it.
//!
//! Its known bugs: a participant that creates its node again after a lost create reply, without
//! looking for the first one, and so counts itself twice ([`BlindRetry`]); a lowest participant
//! that takes the deletion of the node it waits on as everyone gone ([`TrustDeletion`]); and
//! waiters that watch the whole directory ([`WatchParent`]: every deletion wakes them all).
//!
//! [`BlindRetry`]: crate::mutation::BlindRetry
//! [`TrustDeletion`]: crate::mutation::TrustDeletion
//! [`WatchParent`]: crate::mutation::WatchParent

pub mod monitor;

use std::fmt::Debug;
use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::client::{SessionId, ZkClient};
use zklab_recipes::double_barrier::{
    DoubleBarrier, DoubleBarrierMachine, DoubleBarrierRequest, READY,
};

use crate::double_barrier::monitor::{DoubleBarrierSafety, LeaveHerd};
use crate::host::{rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};

/// Where the barrier's nodes live.
pub const DOUBLE_BARRIER_DIR: &str = "/double-barrier";

/// How many participants begin a round: fewer than the clients, so that some come late to a
/// round and must wait for the next.
pub const THRESHOLD: u32 = 2;

/// How many pieces of work a participant does inside a round: long enough that faults which
/// strike per second of sim time find participants inside.
const INSIDE_WORKS: u32 = 5;

/// The double barrier's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct DoubleBarrierKit<X>(PhantomData<X>);

impl<X> DoubleBarrierKit<X> {
    /// The kit.
    pub const KIT: Self = DoubleBarrierKit(PhantomData);
}

fn barrier() -> DoubleBarrier {
    DoubleBarrier::new(DOUBLE_BARRIER_DIR, THRESHOLD)
}

impl<X: Mutation> DoubleBarrierKit<X> {
    fn mutated(session: SessionId, round: i64) -> Mutated<DoubleBarrierMachine, X> {
        Mutated::new(barrier().machine(session, Some(round)))
    }
}

impl<X: Mutation> Workload for DoubleBarrierKit<X> {
    type Machine = Mutated<DoubleBarrierMachine, X>;
    type Monitors = (DoubleBarrierSafety, LeaveHerd, NoFailures);

    /// A round begins once [`THRESHOLD`] are there.
    fn min_clients(&self) -> usize {
        THRESHOLD as usize
    }

    /// A round needs [`THRESHOLD`] still asking for it.
    fn quorum_to_finish(&self) -> usize {
        THRESHOLD as usize
    }

    fn machine(&self, _: u8, session: SessionId) -> Self::Machine {
        Self::mutated(session, 0)
    }

    fn request_when_holding(&self) -> DoubleBarrierRequest {
        DoubleBarrierRequest::Leave
    }

    /// Nobody enters early or leaves early, one woken per deletion in the leave but for the
    /// lowest's and `ready`'s, no recipe giving up.
    fn monitors(&self) -> Self::Monitors {
        (
            DoubleBarrierSafety::new(DOUBLE_BARRIER_DIR, THRESHOLD),
            LeaveHerd::new(DOUBLE_BARRIER_DIR),
            NoFailures,
        )
    }

    fn root(&self) -> &str {
        DOUBLE_BARRIER_DIR
    }

    /// The last one out of a round removes `ready`: not if everyone still inside crashed.
    fn crash_may_leave(&self, child: &str) -> bool {
        child == READY
    }

    fn symmetric(&self) -> bool {
        X::SYMMETRIC
    }
}

impl<X: Mutation> Kit for DoubleBarrierKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let barrier = barrier().recording(host.recorder());
        rounds_in_sessions!(host, rounds, |session, round| async {
            let machine = Self::mutated(session.session_id(), i64::from(round));
            // Without an inside, the round began without this client: on to the next.
            if let Some(inside) = barrier.enter_with(&session, machine).await? {
                for _ in 0..INSIDE_WORKS {
                    host.work().await;
                }
                // A session lost while leaving asks for this round again: it sees the round
                // out, clears a `ready` left standing, and learns that it missed it.
                inside.leave().await?;
            }
            Ok(())
        })
    }
}
