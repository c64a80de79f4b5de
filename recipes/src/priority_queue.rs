//! A priority queue, as ZooKeeper's recipes document describes it: the [queue](crate::queue)
//! with its two changes. An item's name carries its priority, `p<priority>-<tag>-item-<seq>`
//! (a lower number goes first, then the older item), and a consumer drops its listing as soon
//! as the queue's watch fires, so it never takes an item from a listing that a change it has
//! heard of made stale (an item of higher priority may have come).
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::queue::QueueError> {
//! use zklab_recipes::priority_queue::PriorityQueue;
//!
//! let queue = PriorityQueue::new("/queues/urgent");
//! queue.put(client, 5, b"later".to_vec()).await?;
//! queue.put(client, 1, b"first".to_vec()).await?;
//! let item = queue.take(client, "worker-1").await?; // "first"
//! # let _ = item;
//! # Ok(()) }
//! ```
//!
//! Takes are the queue's: plain (recorded for their consumer) or claimed and acknowledged.

use std::sync::Arc;

use crate::client::ZkClient;
use crate::machine::Recipe;
use crate::outcome::Recorder;
use crate::queue::{
    ClaimedItem, Item, Order, PutMachine, Queue, QueueError, QueueOutcome, QueueRequest,
    TakeMachine,
};

/// The tag of a put of this priority: `p<priority>-<tag>`, so its item sorts by priority.
pub fn priority_tag(priority: u32, tag: &str) -> String {
    format!("p{priority}-{tag}")
}

/// A priority queue under one directory.
#[derive(Clone, Debug)]
pub struct PriorityQueue {
    queue: Queue,
}

impl PriorityQueue {
    /// The priority queue whose items live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        PriorityQueue {
            queue: Queue::ordered(dir, Order::Priority),
        }
    }

    /// The same queue, writing down everything it tells the application with `recorder`.
    pub fn recording(self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        PriorityQueue {
            queue: self.queue.recording(recorder),
        }
    }

    /// Puts `data` with `priority` (lower first); returns its sequence number. As
    /// [`Queue::put`].
    pub async fn put<C: ZkClient>(
        &self,
        client: &C,
        priority: u32,
        data: Vec<u8>,
    ) -> Result<i64, QueueError> {
        let tag = priority_tag(priority, &self.queue.next_tag(client.session_id()));
        let machine = PutMachine::new(self.queue.dir(), tag, data);
        self.queue.put_with(client, machine).await
    }

    /// Puts with `machine` (its tag made with [`priority_tag`]): as [`Queue::put_with`].
    pub async fn put_with<C, M>(&self, client: &C, machine: M) -> Result<i64, QueueError>
    where
        C: ZkClient,
        M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
    {
        self.queue.put_with(client, machine).await
    }

    /// Takes the item of highest priority: as [`Queue::take`].
    pub async fn take<C: ZkClient>(&self, client: &C, consumer: &str) -> Result<Item, QueueError> {
        self.queue.take(client, consumer).await
    }

    /// Takes with `machine`: as [`Queue::take_with`].
    pub async fn take_with<C, M>(&self, client: &C, machine: M) -> Result<Item, QueueError>
    where
        C: ZkClient,
        M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
    {
        self.queue.take_with(client, machine).await
    }

    /// Claims the item of highest priority: as [`Queue::take_locked`].
    pub async fn take_locked<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<ClaimedItem<'c, C, TakeMachine>, QueueError> {
        self.queue.take_locked(client).await
    }

    /// Claims with `machine`: as [`Queue::take_locked_with`].
    pub async fn take_locked_with<'c, C, M>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<ClaimedItem<'c, C, M>, QueueError>
    where
        C: ZkClient,
        M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
    {
        self.queue.take_locked_with(client, machine).await
    }
}
