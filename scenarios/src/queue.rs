//! The queue's kits: `queue` (plain takes) and `locked-queue` (claim, process, acknowledge).
//!
//! Every client is a producer and a consumer: each round it puts one item, tagged with its
//! index and the round (`c1-4`), then takes one, so the items put and taken balance and every
//! take is eventually served. A put whose session ended before its answer is made again in the
//! next session, looking for its tag first. A plain take's consumer is named after its client,
//! in every session; an item handed over again after a session loss is not counted twice. A
//! claimed item is worked on, then acknowledged, and done with even if the session ended before
//! the ack's answer (the item then goes to another consumer, or is gone); a claim lost with its
//! session before the work was done is taken again.
//!
//! The model runs no producer: the queue starts with one item per client, and each client takes
//! one (the way a put survives a lost reply is the own-node part's, checked with the lock).
//! Clients with a plain take are named, so that model is not symmetric; claims are anonymous.
//!
//! Known bugs: a take by plain delete whose NoNode, after a retry, is read as the consumer's own
//! take ([`PlainDelete<true>`]: an item to two consumers) or as another's (`PlainDelete<false>`:
//! an item lost); a claim made persistent ([`PersistentClaim`]: it outlives its session).

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::parts::link::RecipeError;
use zklab_recipes::queue::{holds_an_item, PutMachine, Queue, QueueRequest, TakeMachine};
use zklab_recipes::queue::{TakeMode, ITEM};
use zklab_sim::monitor::failure::NoFailures;
use zklab_sim::monitor::queue::QueueDelivery;

use crate::host::Host;
use crate::kit::Kit;
use crate::mutation::{Documented, Mutated, Mutation, PersistentClaim, PlainDelete};
use crate::scenario::Scenario;

/// Where the plainly taken queue lives.
pub const QUEUE_DIR: &str = "/queue";

/// Where the queue taken by claims lives.
pub const LOCKED_QUEUE_DIR: &str = "/locked-queue";

/// A queue kit: plain takes, or claims; its take machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct QueueKit<X> {
    locked: bool,
    bug: PhantomData<X>,
}

impl<X> QueueKit<X> {
    /// The kit of plain takes.
    pub const TAKE: Self = QueueKit {
        locked: false,
        bug: PhantomData,
    };

    /// The kit of claims.
    pub const LOCKED: Self = QueueKit {
        locked: true,
        bug: PhantomData,
    };
}

/// A consumer's name: its client's, in every session.
fn consumer(client: usize) -> String {
    format!("c{client}")
}

impl<X: Mutation> QueueKit<X> {
    fn dir(&self) -> &'static str {
        match self.locked {
            true => LOCKED_QUEUE_DIR,
            false => QUEUE_DIR,
        }
    }

    fn take_machine(&self, client: usize, session: SessionId) -> Mutated<TakeMachine, X> {
        let mode = match self.locked {
            true => TakeMode::Claim,
            false => TakeMode::Remove {
                consumer: consumer(client),
            },
        };
        Mutated::new(TakeMachine::new(self.dir(), session, mode))
    }

    /// Puts this round's item, in as many sessions as it takes.
    async fn put<H: Host>(
        &self,
        host: &H,
        queue: &Queue,
        session: &mut H::Session,
        round: u32,
    ) -> Result<(), RecipeError> {
        let tag = format!("c{}-{round}", host.index());
        let data = format!("item {round} of c{}", host.index()).into_bytes();
        let mut machine = PutMachine::new(self.dir(), tag.clone(), data.clone());
        loop {
            match queue.put_with(session, machine).await {
                Err(RecipeError::SessionLost) => {
                    *session = host.connect().await;
                    machine = PutMachine::again(self.dir(), tag.clone(), data.clone());
                }
                result => return result.map(|_| ()),
            }
        }
    }

    /// Takes one item this client has not had yet (plainly, or claimed, worked on and
    /// acknowledged), in as many sessions as it takes.
    async fn take<H: Host>(
        &self,
        host: &H,
        queue: &Queue,
        session: &mut H::Session,
        had: &mut BTreeSet<i64>,
    ) -> Result<(), RecipeError> {
        loop {
            let machine = self.take_machine(host.index(), session.session_id());
            let taken = match self.locked {
                true => {
                    let worked = match queue.take_locked_with(&*session, machine).await {
                        Ok(claimed) => {
                            host.work().await;
                            let item = claimed.item().seq;
                            Ok((item, claimed.ack().await))
                        }
                        Err(error) => Err(error),
                    };
                    // Worked on, the item is done with, whether the ack landed or its
                    // session ended first (then it goes to another consumer, or is gone).
                    match worked {
                        Ok((item, Err(RecipeError::SessionLost))) => {
                            *session = host.connect().await;
                            Ok(item)
                        }
                        Ok((item, acked)) => acked.map(|()| item),
                        Err(error) => Err(error),
                    }
                }
                false => queue.take_with(session, machine).await.map(|item| item.seq),
            };
            match taken {
                Ok(item) if had.insert(item) => return Ok(()),
                Ok(_) => {}
                Err(RecipeError::SessionLost) => *session = host.connect().await,
                Err(error) => return Err(error),
            }
        }
    }
}

impl<X: Mutation> Workload for QueueKit<X> {
    type Machine = Mutated<TakeMachine, X>;
    type Monitors = (QueueDelivery, NoFailures);

    /// A plain take's consumer is its client, in every session.
    fn part(&self, client: usize, _: usize) -> u8 {
        match self.locked {
            true => 0,
            false => client as u8,
        }
    }

    /// One item per client.
    fn setup(&self, clients: usize) -> Vec<Op> {
        (0..clients)
            .map(|item| Op::Create {
                path: format!("{}/p{item}{ITEM}", self.dir()),
                data: format!("item {item}").into_bytes(),
                mode: CreateMode::PersistentSequential,
            })
            .collect()
    }

    /// Items still queued (every put makes one, and a put made again after a lost reply may
    /// make a second once the first was taken), and take records of consumers that did not
    /// take again after losing their session.
    fn may_remain(&self, child: &str) -> bool {
        holds_an_item(child)
    }

    fn machine(&self, part: u8, session: SessionId) -> Self::Machine {
        self.take_machine(usize::from(part), session)
    }

    fn request_when_holding(&self) -> QueueRequest {
        QueueRequest::Ack
    }

    /// Nothing twice, nothing lost, no dead claim, no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        (QueueDelivery::new(self.dir()), NoFailures)
    }

    fn root(&self) -> &str {
        self.dir()
    }

    fn symmetric(&self) -> bool {
        self.locked && X::SYMMETRIC
    }

    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for QueueKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let queue = Queue::new(self.dir()).recording(host.recorder());
        let mut session = host.connect().await;
        let mut had = BTreeSet::new();
        for round in 0..rounds {
            let done = match self.put(host, &queue, &mut session, round).await {
                Ok(()) => self.take(host, &queue, &mut session, &mut had).await,
                failed => failed,
            };
            if done.is_err() {
                // The recipe reported the failure in the trace, where a monitor judges it.
                return None;
            }
            host.work().await;
        }
        Some(session)
    }
}

/// The queue's scenarios.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "queue",
        about: "every client puts an item and takes one, round after round; a take is recorded",
        known_bug: false,
        kit: &QueueKit::<Documented>::TAKE,
        states: Some(44_411),
    },
    Scenario {
        name: "queue-bug-delete-mine",
        about: "a take by plain delete reads NoNode on its retry as its own take",
        known_bug: true,
        kit: &QueueKit::<PlainDelete<true>>::TAKE,
        states: Some(55_261),
    },
    Scenario {
        name: "queue-bug-delete-not-mine",
        about: "a take by plain delete reads NoNode on its retry as another's take",
        known_bug: true,
        kit: &QueueKit::<PlainDelete<false>>::TAKE,
        states: Some(76_847),
    },
    Scenario {
        name: "locked-queue",
        about: "every client puts an item, then claims one, works on it and acknowledges it",
        known_bug: false,
        kit: &QueueKit::<Documented>::LOCKED,
        states: Some(92_971),
    },
    Scenario {
        name: "locked-queue-bug-persistent-claim",
        about: "a claim is a persistent node, so it outlives a consumer whose session ended",
        known_bug: true,
        kit: &QueueKit::<PersistentClaim>::LOCKED,
        states: Some(97_657),
    },
];
