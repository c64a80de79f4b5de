//! The queue's kits: `queue` (plain takes), `locked-queue` (claim, work, acknowledge) and
//! `priority-queue` (plain takes, highest priority first).
//!
//! Every client is a producer and a consumer: each round it puts one item, tagged with its
//! index and the round (`c1-4`; in the priority queue, of a priority that varies), then takes
//! one, so the items put and taken balance and every take is eventually served. A put whose
//! session ended before its answer is made again in the next session, looking for its tag
//! first. A plain take's consumer is named after its client, in every session; an item handed
//! over again after a session loss is not counted twice. A claimed item is worked on, then
//! acknowledged, and done with even if the session ended before the ack's answer (the item then
//! goes to another consumer, or is gone); a claim lost before the work was done is taken again.
//!
//! The model's client 0 is a producer that puts one item (in a priority queue, of the highest
//! priority); the others are consumers that take one each, from a queue that starts with one
//! item per consumer (of the lowest priority), so one item is left. Clients with a plain take
//! are named, so those models are not symmetric; claims are anonymous.
//!
//! Known bugs: a put made again blindly after a lost reply ([`PutBlindly`]: one put, two
//! items); a take by plain delete whose NoNode, after a retry, is read as the consumer's own
//! take ([`PlainDelete<true>`]: an item to two consumers) or as another's (`PlainDelete<false>`:
//! an item lost); a claim made persistent ([`PersistentClaim`]: it outlives its session); a
//! priority consumer that keeps working through a stale listing ([`StaleListing`]).
//!
//! [`PutBlindly`]: bugs::PutBlindly
//! [`PlainDelete`]: bugs::PlainDelete
//! [`PersistentClaim`]: bugs::PersistentClaim
//! [`StaleListing`]: bugs::StaleListing
//! [`PlainDelete<true>`]: bugs::PlainDelete

pub mod bugs;
pub mod monitor;
pub mod take_order;

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::machine::{Input, Recipe, Step};
use zklab_recipes::parts::link::RecipeError;
use zklab_recipes::priority_queue::priority_tag;
use zklab_recipes::queue::{
    holds_an_item, Order, PutMachine, Queue, QueueOutcome, QueueRequest, TakeMachine, TakeMode,
    ITEM,
};
use zklab_recipes::session_renaming::{session_guid, RenameSessions};

use crate::host::{in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};
use crate::queue::monitor::QueueDelivery;
use crate::queue::take_order::TakeOrder;

/// Where the plainly taken queue lives.
pub const QUEUE_DIR: &str = "/queue";

/// Where the queue taken by claims lives.
pub const LOCKED_QUEUE_DIR: &str = "/locked-queue";

/// Where the priority queue lives.
pub const PRIORITY_QUEUE_DIR: &str = "/priority-queue";

/// How many priorities the priority queue's items spread over.
const PRIORITIES: u32 = 4;

/// A queue kit: plain takes, claims, or plain takes by priority; its take machine under
/// mutation `X`.
#[derive(Clone, Debug)]
pub struct QueueKit<X> {
    locked: bool,
    order: Order,
    bug: PhantomData<X>,
}

impl<X> QueueKit<X> {
    /// The kit of plain takes.
    pub const TAKE: Self = QueueKit {
        locked: false,
        order: Order::Sequence,
        bug: PhantomData,
    };

    /// The kit of claims.
    pub const LOCKED: Self = QueueKit {
        locked: true,
        order: Order::Sequence,
        bug: PhantomData,
    };

    /// The kit of plain takes by priority.
    pub const PRIORITY: Self = QueueKit {
        locked: false,
        order: Order::Priority,
        bug: PhantomData,
    };
}

/// A client of the queue's model: the producer, or a consumer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum QueueClient {
    /// Puts one item.
    Producer(PutMachine),
    /// Takes one item.
    Consumer(TakeMachine),
}

impl Recipe for QueueClient {
    type Request = QueueRequest;
    type Outcome = QueueOutcome;

    fn step(&mut self, input: Input<QueueRequest>) -> Step<QueueOutcome> {
        match self {
            QueueClient::Producer(put) => put.step(input),
            QueueClient::Consumer(take) => take.step(input),
        }
    }
}

/// A consumer's name: its client's, in every session.
fn consumer(client: usize) -> String {
    format!("c{client}")
}

/// The model's producer: client 0.
const PRODUCER: u8 = 0;

impl<X: Mutation> QueueKit<X> {
    fn dir(&self) -> &'static str {
        match (self.locked, self.order) {
            (true, _) => LOCKED_QUEUE_DIR,
            (false, Order::Sequence) => QUEUE_DIR,
            (false, Order::Priority) => PRIORITY_QUEUE_DIR,
        }
    }

    /// The tag of a put: by priority, for a priority queue (the model's producer puts the
    /// highest, over items of the lowest).
    fn tag(&self, priority: u32, tag: &str) -> String {
        match self.order {
            Order::Sequence => tag.to_owned(),
            Order::Priority => priority_tag(priority, tag),
        }
    }

    fn take_machine(&self, client: usize, session: SessionId) -> Mutated<QueueClient, X> {
        let mode = match self.locked {
            true => TakeMode::Claim,
            false => TakeMode::Remove {
                consumer: consumer(client),
            },
        };
        let take = TakeMachine::ordered(self.dir(), session, mode, self.order);
        Mutated::new(QueueClient::Consumer(take))
    }

    /// Puts this round's item, in as many sessions as it takes.
    async fn put<H: Host>(
        &self,
        host: &H,
        queue: &Queue,
        session: &mut H::Session,
        round: u32,
    ) -> Result<(), RecipeError> {
        let client = host.index();
        let priority = (client as u32 + round) % PRIORITIES;
        let tag = self.tag(priority, &format!("c{client}-{round}"));
        let data = format!("item {round} of c{client}").into_bytes();
        let mut again = false;
        in_sessions!(host, *session, async {
            // Taken up again in a new session, a put looks for its tag first.
            let machine = match again {
                false => PutMachine::new(self.dir(), tag.clone(), data.clone()),
                true => PutMachine::again(self.dir(), tag.clone(), data.clone()),
            };
            again = true;
            let put = Mutated::<_, X>::new(QueueClient::Producer(machine));
            queue.put_with(&*session, put).await
        })
        .map(|_| ())
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
            let (item, acked) = in_sessions!(host, *session, async {
                let machine = self.take_machine(host.index(), session.session_id());
                match self.locked {
                    true => {
                        let claimed = queue.take_locked_with(&*session, machine).await?;
                        host.work().await;
                        Ok((claimed.item().seq, claimed.ack().await))
                    }
                    false => Ok((queue.take_with(&*session, machine).await?.seq, Ok(()))),
                }
            })?;
            // A claimed item worked on is done with, whether the ack landed or its session
            // ended first (then it goes to another consumer, or is gone).
            match acked {
                Err(RecipeError::SessionLost) => *session = host.connect().await,
                acked => acked?,
            }
            if had.insert(item) {
                return Ok(());
            }
        }
    }
}

impl<X: Mutation> Workload for QueueKit<X> {
    type Machine = Mutated<QueueClient, X>;
    type Monitors = (QueueDelivery, TakeOrder, NoFailures);

    /// Client 0 produces; a plain take's consumer is its client, in every session.
    fn part(&self, client: usize, _: usize) -> u8 {
        match (client, self.locked) {
            (0, _) => PRODUCER,
            (_, true) => 1,
            (_, false) => client as u8,
        }
    }

    /// A producer and a consumer.
    fn min_clients(&self) -> usize {
        2
    }

    /// One item per consumer, of the lowest priority: with the producer's, one is left over.
    fn setup(&self, clients: usize) -> Vec<Op> {
        (1..clients)
            .map(|item| Op::Create {
                path: format!(
                    "{}/{}{ITEM}",
                    self.dir(),
                    self.tag(PRIORITIES, &format!("s{item}"))
                ),
                data: format!("item {item}").into_bytes(),
                mode: CreateMode::PersistentSequential,
                acl: Acls::OPEN,
            })
            .collect()
    }

    /// Items still queued (a put made again after a lost answer may make a second once the
    /// first was taken, and the model puts one more than its consumers take), and take records
    /// of consumers that did not take again after losing their session.
    fn may_remain(&self, child: &str) -> bool {
        holds_an_item(child)
    }

    fn machine(&self, part: u8, session: SessionId) -> Self::Machine {
        match part {
            PRODUCER => {
                let tag = self.tag(0, &session_guid(session));
                let put = PutMachine::new(self.dir(), tag, b"put".to_vec());
                Mutated::new(QueueClient::Producer(put))
            }
            consumer => self.take_machine(usize::from(consumer), session),
        }
    }

    fn request_when_holding(&self) -> QueueRequest {
        QueueRequest::Ack
    }

    /// Nothing twice, nothing lost, no dead claim, taken in order, no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        let dir = self.dir();
        (
            QueueDelivery::new(dir),
            TakeOrder::new(dir, self.order),
            NoFailures,
        )
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
        let queue = Queue::ordered(self.dir(), self.order).recording(host.recorder());
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
