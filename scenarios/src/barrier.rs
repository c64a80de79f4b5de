//! The barrier's kit. Client 0 is the controller: it sets one barrier per round (each round's
//! before lifting the last, so a waiter through one round finds the next standing), works a
//! while, and lifts it. Every other client starts once the first barrier stands (as workers
//! started by their controller would; it stops looking after a while), then waits at each
//! round's barrier in turn. The model runs one barrier: a controller that sets and lifts it, and
//! waiters that may come before it is set.
//!
//! Herd-freedom is not asked of a barrier: its removal is meant to wake every waiter. Its known
//! bug: a waiter that takes any event as the barrier's removal ([`TrustAnyEvent`]).
//!
//! [`TrustAnyEvent`]: bugs::TrustAnyEvent

pub mod bugs;
pub mod monitor;

use std::fmt::Debug;
use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::barrier::{Barrier, BarrierError, BarrierMachine, BarrierRequest, Part};
use zklab_recipes::client::{SessionId, ZkClient, ZkError};

use crate::barrier::monitor::BarrierSafety;
use crate::host::{in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};

/// Where the barrier nodes live.
pub const BARRIER_DIR: &str = "/barrier";

/// How many pieces of work the controller does while a barrier stands: long enough that faults
/// which strike per second of sim time (expiry, partition, pause) find waiters waiting.
const HOLD_WORKS: u32 = 25;

/// The barrier's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct BarrierKit<X>(PhantomData<X>);

impl<X> BarrierKit<X> {
    /// The kit.
    pub const KIT: Self = BarrierKit(PhantomData);
}

/// The barrier of one round.
fn barrier(round: u32) -> Barrier {
    Barrier::new(&format!("{BARRIER_DIR}/round-{round:04}"))
}

/// The part client number `client` plays.
fn part_of(client: usize) -> Part {
    if client == 0 {
        Part::Controller
    } else {
        Part::Waiter
    }
}

impl<X: Mutation> BarrierKit<X> {
    fn mutated(round: u32, part: Part, session: SessionId) -> Mutated<BarrierMachine, X> {
        Mutated::new(BarrierMachine::new(barrier(round).path(), part, session))
    }

    /// The controller from `round` on, in one session: returns once every round is done, or
    /// with the error that ended the session's part.
    async fn control<H: Host>(
        host: &H,
        session: &H::Session,
        round: &mut u32,
        rounds: u32,
    ) -> Result<(), BarrierError> {
        let recorder = host.recorder();
        let set = |round| {
            let barrier = barrier(round).recording(recorder.clone());
            async move {
                let machine = Self::mutated(round, Part::Controller, session.session_id());
                barrier.set_with(session, machine).await
            }
        };
        let mut current = set(*round).await?;
        loop {
            let next = match *round + 1 < rounds {
                true => Some(set(*round + 1).await?),
                false => None,
            };
            for _ in 0..HOLD_WORKS {
                host.work().await;
            }
            current.remove().await?;
            *round += 1;
            match next {
                Some(next) => current = next,
                None => return Ok(()),
            }
        }
    }
}

/// How many times a waiter looks for the first barrier before it starts anyway (its controller
/// may have lifted it already, or crashed before setting it).
const START_POLLS: u32 = 50;

/// Polls until the controller has set the first barrier, read with `getData` (which the recipe
/// never sends, so the barrier monitor does not take it for a wait), at most [`START_POLLS`]
/// times. Fails only if the session is lost.
async fn controller_started<H: Host>(host: &H, session: &H::Session) -> Result<(), BarrierError> {
    let first = barrier(0);
    for _ in 0..START_POLLS {
        match session.get_data(first.path(), false).await {
            Ok(_) => return Ok(()),
            Err(ZkError::SessionExpired | ZkError::Closed) => {
                return Err(BarrierError::SessionLost);
            }
            Err(_) => host.work().await,
        }
    }
    Ok(())
}

impl<X: Mutation> Workload for BarrierKit<X> {
    type Machine = Mutated<BarrierMachine, X>;
    type Monitors = (BarrierSafety, NoFailures);

    fn part(&self, client: usize, _: usize) -> u8 {
        u8::from(part_of(client) == Part::Waiter)
    }

    fn machine(&self, part: u8, session: SessionId) -> Self::Machine {
        Self::mutated(0, part_of(usize::from(part)), session)
    }

    fn request_when_holding(&self) -> BarrierRequest {
        BarrierRequest::Remove
    }

    /// Nobody passes a standing barrier, no recipe gives up.
    fn monitors(&self) -> Self::Monitors {
        (BarrierSafety::new(BARRIER_DIR), NoFailures)
    }

    fn root(&self) -> &str {
        BARRIER_DIR
    }

    fn symmetric(&self) -> bool {
        X::SYMMETRIC
    }
}

impl<X: Mutation> Kit for BarrierKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let mut session = host.connect().await;
        if part_of(host.index()) == Part::Waiter {
            in_sessions!(host, session, async {
                controller_started(host, &session).await
            })
            .ok()?;
        }
        let mut round = 0;
        in_sessions!(host, session, async {
            while round < rounds {
                match part_of(host.index()) {
                    Part::Controller => Self::control(host, &session, &mut round, rounds).await?,
                    Part::Waiter => {
                        let machine = Self::mutated(round, Part::Waiter, session.session_id());
                        barrier(round)
                            .recording(host.recorder())
                            .wait_with(&session, machine)
                            .await?;
                        host.work().await;
                        round += 1;
                    }
                }
            }
            Ok(())
        })
        .ok()?;
        Some(session)
    }
}
