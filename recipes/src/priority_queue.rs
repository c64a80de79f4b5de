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

use crate::client::ZkClient;
use crate::handle::Handle;
use crate::queue::{Order, PutMachine, QueueError, QueueSettings};

/// The tag of a put of this priority: `p<priority>-<tag>`, so its item sorts by priority.
pub fn priority_tag(priority: u32, tag: &str) -> String {
    format!("p{priority}-{tag}")
}

/// What a priority queue keeps besides its directory: a queue's settings, in priority order.
#[derive(Clone, Debug)]
pub struct PriorityQueueSettings(QueueSettings);

impl AsRef<QueueSettings> for PriorityQueueSettings {
    fn as_ref(&self) -> &QueueSettings {
        &self.0
    }
}

/// A priority queue under one directory: takes and claims are the
/// [queue's](crate::queue::Queue), in priority order.
pub type PriorityQueue = Handle<PriorityQueueSettings>;

impl PriorityQueue {
    /// The priority queue whose items live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        Handle::at(
            dir,
            PriorityQueueSettings(QueueSettings::ordered(Order::Priority)),
        )
    }

    /// Puts `data` with `priority` (lower first); returns its sequence number. As
    /// [`crate::queue::Queue::put`]; [`Handle::put_with`] takes a machine whose tag is made with
    /// [`priority_tag`].
    pub async fn put<C: ZkClient>(
        &self,
        client: &C,
        priority: u32,
        data: Vec<u8>,
    ) -> Result<i64, QueueError> {
        let tag = priority_tag(priority, &self.next_tag(client.session_id()));
        self.put_with(client, PutMachine::new(&self.path, tag, data))
            .await
    }
}
