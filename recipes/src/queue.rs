//! A distributed queue, as ZooKeeper's recipes document describes it, exact under faults:
//! nothing put is lost, and nothing is taken twice.
//!
//! ```no_run
//! # async fn demo(producer: &impl zklab_recipes::client::ZkClient,
//! #               consumer: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::queue::QueueError> {
//! use zklab_recipes::queue::Queue;
//!
//! let queue = Queue::new("/queues/jobs");
//! queue.put(producer, b"job 1".to_vec()).await?;
//! // ... elsewhere, a consumer named "worker-1":
//! let item = queue.take(consumer, "worker-1").await?; // waits for an item
//! # let _ = item;
//! // ... or, to have an item delivered again if the consumer dies before it is done with it:
//! let claimed = queue.take_locked(consumer).await?;
//! // process claimed.item() ...
//! claimed.ack().await?;
//! # Ok(()) }
//! ```
//!
//! **Items.** An item is a persistent sequential node `<dir>/<tag>-item-<seq>` holding the data.
//! The document makes them ephemeral; here they outlive their producer's session, since an item
//! must not vanish because whoever put it went away. The put creates it in one `multi` with an
//! ephemeral marker named by the put's tag, so after a lost reply the producer learns whether it
//! landed, even if a consumer has taken the item already: a put is exactly once while its
//! session lives. One made again in a new session can only look for the item (see
//! [`PutMachine::again`]).
//!
//! **Taking.** A consumer lists the queue with a watch, and works through that listing in
//! sequence order without listing again until it is used up; it lists again only if the watch
//! fired meanwhile, and otherwise waits for it. The listing may be old, so each item is read
//! first, and gone ones are skipped.
//!
//! - [`Queue::take`] removes the item in one `multi` that deletes it and creates a persistent
//!   record `<item>-taken-<consumer>` holding its data. A consumer whose reply was lost reads its
//!   record to learn whether it was the one (a plain delete answered NoNode on retry cannot
//!   tell), and a consumer whose session ended first finds the record when it next takes, and is
//!   handed the item then; it deletes the record once it has told its application. So each item
//!   goes to exactly one consumer (name); only if the consumer's session ends between telling
//!   and deleting the record is it told again, in its next session.
//! - [`Queue::take_locked`] claims the item with an ephemeral node `<item>-claim`, made in a
//!   `multi` that checks the item is still there, and [`ClaimedItem::ack`] deletes the item and
//!   the claim in one `multi`. A claim goes with its session, so an item whose consumer died is
//!   delivered again; an ack from a session that lost its claim fails.
//!
//! Use one way of taking per queue: a plain take does not respect claims.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::client::{SessionId, ZkClient};
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Recipe};
use crate::parts::link::{ask_until, RecipeError};
use crate::session_renaming::session_guid;

pub use crate::parts::producer::PutMachine;

pub use crate::parts::consumer::{
    holds_an_item, item_sequence, Item, Order, QueueOutcome, QueueRequest, TakeMachine, TakeMode,
    CLAIM, ITEM,
};

/// Why a queue operation did not complete: the session ended first (a put may or may not have
/// landed; a claim is gone), or ZooKeeper answered with an error the recipe cannot handle.
pub type QueueError = RecipeError;

/// What a queue keeps besides its directory: the order its consumers take items in, and a count
/// of the puts made through the handle (and its clones), for their tags.
#[derive(Clone, Debug)]
pub struct QueueSettings {
    order: Order,
    puts: Arc<AtomicU64>,
}

impl QueueSettings {
    /// A queue's settings whose consumers take items in `order`, no put made yet.
    pub(crate) fn ordered(order: Order) -> Self {
        QueueSettings {
            order,
            puts: Arc::default(),
        }
    }
}

impl AsRef<QueueSettings> for QueueSettings {
    fn as_ref(&self) -> &QueueSettings {
        self
    }
}

/// A queue under one directory.
pub type Queue = Handle<QueueSettings>;

impl Queue {
    /// The queue whose items live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        Queue::ordered(dir, Order::Sequence)
    }

    /// The queue under `dir` whose consumers take items in `order`.
    pub fn ordered(dir: &str, order: Order) -> Self {
        Handle::at(dir, QueueSettings::ordered(order))
    }

    /// Puts `data` into the queue; returns its sequence number. The put is tagged with the
    /// session's guid and a count of this handle's puts, so a lost reply is survived; if the
    /// session ends first it fails with `SessionLost`, and the item may or may not be there
    /// (a [`PutMachine::again`] with a tag of the application's own finds out, while the item
    /// is still queued).
    pub async fn put<C: ZkClient>(&self, client: &C, data: Vec<u8>) -> Result<i64, QueueError> {
        let tag = self.next_tag(client.session_id());
        self.put_with(client, PutMachine::new(&self.path, tag, data))
            .await
    }
}

/// What every queue does, whatever it adds (a priority queue its priorities).
impl<S: AsRef<QueueSettings>> Handle<S> {
    /// A tag for the next put through this handle in `session`: the session's guid and a count.
    pub(crate) fn next_tag(&self, session: SessionId) -> String {
        let count = self.settings.as_ref().puts.fetch_add(1, Ordering::Relaxed);
        format!("{}-{count}", session_guid(session))
    }

    /// Puts with `machine`: a put of the application's own tag, or a machine built around it.
    pub async fn put_with<C: ZkClient, M: Plays<QueueRequest, QueueOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<i64, QueueError> {
        let put = self.start_until(client, machine, |outcome| match outcome {
            QueueOutcome::Put { item } => Some(*item),
            _ => None,
        });
        Ok(put.await?.1)
    }

    /// Takes the next item (by the queue's order), waiting for one if the queue is empty, for
    /// the consumer named `consumer` (use the same name in every session of one consumer, and no
    /// other consumer's).
    pub async fn take<C: ZkClient>(&self, client: &C, consumer: &str) -> Result<Item, QueueError> {
        let mode = TakeMode::Remove {
            consumer: consumer.to_owned(),
        };
        self.take_with(client, self.take_machine(client.session_id(), mode))
            .await
    }

    /// The machine of a take in `mode`, in the queue's order.
    fn take_machine(&self, session: SessionId, mode: TakeMode) -> TakeMachine {
        TakeMachine::ordered(&self.path, session, mode, self.settings.as_ref().order)
    }

    /// Takes with `machine`: a consumer's machine, or one built around it.
    pub async fn take_with<C: ZkClient, M: Plays<QueueRequest, QueueOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<Item, QueueError> {
        let taken = self.start_until(client, machine, |outcome| match outcome {
            QueueOutcome::Taken(item) => Some(item.clone()),
            _ => None,
        });
        Ok(taken.await?.1)
    }

    /// Claims the next item (by the queue's order), waiting for one if the queue is empty; the
    /// item is delivered again if the session ends before [`ClaimedItem::ack`].
    pub async fn take_locked<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<ClaimedItem<'c, C, TakeMachine>, QueueError> {
        let machine = self.take_machine(client.session_id(), TakeMode::Claim);
        self.take_locked_with(client, machine).await
    }

    /// Claims with `machine`: a claiming consumer's machine, or one built around it.
    pub async fn take_locked_with<'c, C: ZkClient, M: Plays<QueueRequest, QueueOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<ClaimedItem<'c, C, M>, QueueError> {
        let claimed = self.start_until(client, machine, |outcome| match outcome {
            QueueOutcome::Claimed(item) => Some(item.clone()),
            _ => None,
        });
        let (driver, item) = claimed.await?;
        Ok(ClaimedItem { driver, item })
    }
}

/// An item this session claimed: acknowledge it once processed. Dropping it leaves the claim
/// until the session ends, when the item is delivered again.
#[derive(Debug)]
pub struct ClaimedItem<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    item: Item,
}

impl<C: ZkClient, M: Plays<QueueRequest, QueueOutcome>> ClaimedItem<'_, C, M> {
    /// The item claimed.
    pub fn item(&self) -> &Item {
        &self.item
    }

    /// Whether the claim still holds, as far as the client knows (connected, session alive).
    pub async fn is_held(&mut self) -> bool {
        self.driver.feed_arrived_events().await;
        !self.driver.is_done() && self.driver.is_connected()
    }

    /// Acknowledges the item: deletes it and the claim in one `multi`. Fails with
    /// `SessionLost` if the session ended first, or before the answer came: the item is gone
    /// (acknowledged), or is, or will be, delivered again, since the claim went with the session.
    pub async fn ack(mut self) -> Result<(), QueueError> {
        let acked = ask_until(
            &mut self.driver,
            QueueRequest::Ack,
            |outcome| match outcome {
                QueueOutcome::Acked { .. } => Some(true),
                QueueOutcome::Unacked { .. } => Some(false),
                _ => None,
            },
        );
        if acked.await? {
            Ok(())
        } else {
            Err(RecipeError::SessionLost)
        }
    }
}
