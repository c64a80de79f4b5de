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
//! must not vanish because whoever put it went away. The tag names the put: after a lost create
//! reply the producer lists the queue and adopts the node carrying it.
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

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::client::{CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId};
use crate::client::{ZkClient, ZkError, ZkEvent};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::{Outcome, Recorder};
use crate::parts::link::{run_until, Connection, Delivery, Link, RecipeError};
use crate::parts::own_node::{Making, OwnNode};
use crate::symmetry::{session_guid, RenameSessions};

/// The marker of an item's node: `<tag>-item-<seq>`.
pub const ITEM: &str = "-item-";

/// What follows an item's name in its take record: `<item>-taken-<consumer>`.
const TAKEN: &str = "-taken-";

/// What a claim is called in outcomes.
const CLAIM_ROLE: &str = "claim";

/// What follows an item's name in its claim: `<item>-claim`.
pub const CLAIM: &str = "-claim";

/// The sequence number of an item's node, or `None` for any other child of the queue.
pub fn item_sequence(name: &str) -> Option<i64> {
    let (_, sequence) = name.rsplit_once(ITEM)?;
    sequence.parse::<i32>().ok().map(i64::from)
}

/// Whether the child `name` of a queue's directory holds an item: one still queued, or one a
/// consumer took and will be handed again in its next take (its take record).
pub fn holds_an_item(name: &str) -> bool {
    let item = name.split(TAKEN).next().unwrap_or(name);
    item_sequence(item).is_some()
}

/// An item taken from a queue.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    /// Its node's sequence number: items are taken in this order.
    pub seq: i64,
    /// What the producer put.
    pub data: Vec<u8>,
}

/// What a queue machine tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueOutcome {
    /// The producer's item is in the queue, with this sequence number.
    Put {
        /// The item's sequence number.
        item: i64,
    },
    /// The consumer took this item: nobody else gets it.
    Taken(Item),
    /// The consumer claimed this item: it is the consumer's until it acknowledges it or its
    /// session ends.
    Claimed(Item),
    /// The consumer acknowledged the item it claimed: it is gone from the queue.
    Acked {
        /// The item's sequence number.
        item: i64,
    },
    /// The session ended while the ack was on its way: the item is gone (acknowledged), or
    /// will be delivered again (the claim went with the session). Either way this consumer is
    /// done with it.
    Unacked {
        /// The item's sequence number.
        item: i64,
    },
    /// The connection dropped while holding a claim: it may be lost at any moment.
    Suspended,
    /// Reconnected within the same session while holding a claim: it is still held.
    Resumed,
    /// The session ended: a claim went with it; a put or a take must be made again.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle.
    Failed(ZkError),
}

impl From<QueueOutcome> for Outcome {
    fn from(outcome: QueueOutcome) -> Self {
        match outcome {
            QueueOutcome::Put { item } => Outcome::Put { item },
            QueueOutcome::Taken(item) => Outcome::Taken { item: item.seq },
            QueueOutcome::Claimed(item) => Outcome::Claimed { item: item.seq },
            QueueOutcome::Acked { item } => Outcome::Acked { item },
            QueueOutcome::Unacked { .. } => Outcome::Released { role: CLAIM_ROLE },
            QueueOutcome::Suspended => Outcome::Suspended,
            QueueOutcome::Resumed => Outcome::Resumed,
            QueueOutcome::Lost => Outcome::Lost,
            QueueOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// What a consumer's application may ask of its machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueueRequest {
    /// Acknowledge the claimed item: delete it and the claim.
    Ack,
}

/// A producer's put of one item, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct PutMachine {
    node: OwnNode,
    /// Look for the tag before creating: the put is made again after its session ended.
    again: bool,
    link: Link,
    done: bool,
}

impl PutMachine {
    /// Puts `data` into the queue at `dir` as `<dir>/<tag>-item-<seq>`. The tag must be unique
    /// to this put (and no other put's tag followed by `-item-`).
    pub fn new(dir: &str, tag: String, data: Vec<u8>) -> Self {
        PutMachine {
            node: OwnNode::persistent(dir, tag, ITEM, data),
            again: false,
            link: Link::default(),
            done: false,
        }
    }

    /// The same put, made again in a new session after the last one ended without an answer:
    /// it looks for an item carrying its tag before creating one. An item taken meanwhile is
    /// not found, and is put again.
    pub fn again(dir: &str, tag: String, data: Vec<u8>) -> Self {
        PutMachine {
            again: true,
            ..PutMachine::new(dir, tag, data)
        }
    }

    fn making(&mut self, making: Making) -> Step<QueueOutcome> {
        match making {
            Making::Send(op) => Step::send(self.link.send(op)),
            Making::Made => {
                let name = self.node.name().unwrap_or_default();
                let item = item_sequence(name).unwrap_or_default();
                self.finish(QueueOutcome::Put { item })
            }
            Making::Failed(error) => self.finish(QueueOutcome::Failed(error)),
        }
    }

    fn finish(&mut self, outcome: QueueOutcome) -> Step<QueueOutcome> {
        self.done = true;
        Step::done(outcome)
    }
}

impl Recipe for PutMachine {
    type Request = QueueRequest;
    type Outcome = QueueOutcome;

    fn step(&mut self, input: Input<QueueRequest>) -> Step<QueueOutcome> {
        if self.done {
            return Step::stop();
        }
        match input {
            Input::Start if self.again => {
                let making = self.node.find();
                self.making(making)
            }
            Input::Start => {
                let making = self.node.create();
                self.making(making)
            }
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.finish(QueueOutcome::Lost),
                Delivery::Reply(reply) => {
                    let making = self.node.on_reply(reply);
                    self.making(making)
                }
            },
            Input::Event(ZkEvent::Session(event)) => match self.link.on_session(event, false) {
                Some(Connection::Lost) => self.finish(QueueOutcome::Lost),
                _ => Step::wait(),
            },
            Input::App(_) | Input::Event(_) | Input::Timeout => Step::wait(),
        }
    }
}

/// How a consumer takes an item.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum TakeMode {
    /// Remove it at once, recording the take for the consumer of this name.
    Remove {
        /// The consumer's name: the same in every session of the consumer, and its own.
        consumer: String,
    },
    /// Claim it, until the application acknowledges it.
    Claim,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The listing (with a watch) is in flight.
    Listing,
    /// Reading a take record the consumer left in an earlier session.
    Recovering {
        record: String,
    },
    /// Reading the next item of the listing.
    Reading {
        item: String,
    },
    /// The take's `multi` is in flight.
    Taking {
        item: String,
        data: Vec<u8>,
    },
    /// After ConnectionLoss on the take: reading the record to learn whether it landed.
    Confirming {
        item: String,
        data: Vec<u8>,
    },
    /// The item is the consumer's and told: deleting its record.
    Clearing,
    /// The claim's `multi` is in flight.
    Claiming {
        item: String,
        data: Vec<u8>,
    },
    /// After ConnectionLoss on the claim: reading the claim to learn whether it is ours.
    ConfirmingClaim {
        item: String,
        data: Vec<u8>,
    },
    /// The claim is held until the application acknowledges the item.
    Holding {
        item: String,
    },
    /// The ack's `multi` is in flight; `again` once it is a second try.
    Acking {
        item: String,
        again: bool,
    },
    /// The listing is used up, and nothing changed since: waiting for the watch.
    Waiting,
    Done,
}

/// A consumer's take of one item, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct TakeMachine {
    #[rename(keep)]
    dir: String,
    /// Its session: a claim found after a lost reply is its own only if this session owns it.
    #[rename(session)]
    session: SessionId,
    mode: TakeMode,
    phase: Phase,
    /// The items of the last listing not tried yet, in sequence order.
    listing: Vec<String>,
    /// The queue's children changed since the last listing was sent.
    news: bool,
    link: Link,
}

impl TakeMachine {
    /// A consumer of the queue at `dir`, in session `session`, taking the `mode` way.
    pub fn new(dir: &str, session: SessionId, mode: TakeMode) -> Self {
        TakeMachine {
            dir: dir.to_owned(),
            session,
            mode,
            phase: Phase::Idle,
            listing: Vec::new(),
            news: false,
            link: Link::default(),
        }
    }

    fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.dir)
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<QueueOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn send_once(&mut self, phase: Phase, op: Op) -> Step<QueueOutcome> {
        self.phase = phase;
        Step::send(self.link.send_once(op))
    }

    fn done(&mut self, outcome: QueueOutcome) -> Step<QueueOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    fn list(&mut self) -> Step<QueueOutcome> {
        self.news = false;
        let list = Op::GetChildren {
            path: self.dir.clone(),
            watch: true,
        };
        self.send(Phase::Listing, list)
    }

    /// The record of a take of `item` by this consumer (a plain take only).
    fn record(&self, item: &str) -> Option<String> {
        match &self.mode {
            TakeMode::Remove { consumer } => Some(self.path(&format!("{item}{TAKEN}{consumer}"))),
            TakeMode::Claim => None,
        }
    }

    fn claim(&self, item: &str) -> String {
        self.path(&format!("{item}{CLAIM}"))
    }

    fn on_listing(&mut self, children: Vec<String>) -> Step<QueueOutcome> {
        if let TakeMode::Remove { consumer } = &self.mode {
            let suffix = format!("{TAKEN}{consumer}");
            let mut records: Vec<&String> = children
                .iter()
                .filter(|name| name.ends_with(&suffix))
                .collect();
            records.sort_by_key(|name| item_sequence(&name[..name.len() - suffix.len()]));
            if let Some(record) = records.first() {
                let record = self.path(record);
                let read = Op::GetData {
                    path: record.clone(),
                    watch: false,
                };
                return self.send(Phase::Recovering { record }, read);
            }
        }
        let claimed = |name: &String| children.contains(&format!("{name}{CLAIM}"));
        let mut items: Vec<String> = children
            .iter()
            .filter(|name| item_sequence(name).is_some() && !claimed(name))
            .cloned()
            .collect();
        items.sort_by_key(|name| std::cmp::Reverse(item_sequence(name)));
        self.listing = items;
        self.next()
    }

    /// Tries the next item of the listing; once it is used up, lists again if the queue
    /// changed since, or waits for it to.
    fn next(&mut self) -> Step<QueueOutcome> {
        match self.listing.pop() {
            Some(item) => self.read(item),
            None if self.news => self.list(),
            None => {
                self.phase = Phase::Waiting;
                Step::wait()
            }
        }
    }

    fn read(&mut self, item: String) -> Step<QueueOutcome> {
        let read = Op::GetData {
            path: self.path(&item),
            watch: false,
        };
        self.send(Phase::Reading { item }, read)
    }

    fn take(&mut self, item: String, data: Vec<u8>, version: i32) -> Step<QueueOutcome> {
        let path = self.path(&item);
        match self.record(&item) {
            Some(record) => {
                let take = Op::Multi(vec![
                    Op::Delete { path, version },
                    Op::Create {
                        path: record,
                        data: data.clone(),
                        mode: CreateMode::Persistent,
                    },
                ]);
                self.send_once(Phase::Taking { item, data }, take)
            }
            None => {
                let claim = Op::Multi(vec![
                    Op::Check { path, version },
                    Op::Create {
                        path: self.claim(&item),
                        data: Vec::new(),
                        mode: CreateMode::Ephemeral,
                    },
                ]);
                self.send_once(Phase::Claiming { item, data }, claim)
            }
        }
    }

    /// The item is this consumer's: tells it, and deletes the record.
    fn taken(&mut self, record: String, item: &str, data: Vec<u8>) -> Step<QueueOutcome> {
        let seq = item_sequence(item).unwrap_or_default();
        let clear = Op::Delete {
            path: record,
            version: -1,
        };
        self.send(Phase::Clearing, clear)
            .telling(QueueOutcome::Taken(Item { seq, data }))
    }

    fn claimed(&mut self, item: String, data: Vec<u8>) -> Step<QueueOutcome> {
        let seq = item_sequence(&item).unwrap_or_default();
        self.phase = Phase::Holding { item };
        Step::wait().telling(QueueOutcome::Claimed(Item { seq, data }))
    }

    fn ack(&mut self, item: String, again: bool) -> Step<QueueOutcome> {
        let ack = Op::Multi(vec![
            Op::Delete {
                path: self.path(&item),
                version: -1,
            },
            Op::Delete {
                path: self.claim(&item),
                version: -1,
            },
        ]);
        self.send_once(Phase::Acking { item, again }, ack)
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<QueueOutcome> {
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        match (phase, reply) {
            (Phase::Listing, Ok(OpResult::Children { children, .. })) => self.on_listing(children),
            (Phase::Recovering { record }, Ok(OpResult::Data { data, .. })) => {
                let item = record.rsplit('/').next().unwrap_or_default();
                let item = item.split(TAKEN).next().unwrap_or_default().to_owned();
                self.taken(record, &item, data)
            }
            (Phase::Reading { item }, Ok(OpResult::Data { data, stat })) => {
                self.take(item, data, stat.version)
            }
            (Phase::Reading { .. }, Err(ZkError::NoNode)) => self.next(),
            (Phase::Taking { item, data }, Ok(OpResult::Multi(results))) => {
                match results.iter().all(Result::is_ok) {
                    true => self.take_landed(item, data),
                    // Gone, or changed: another consumer took it.
                    false => self.next(),
                }
            }
            (Phase::Taking { item, data }, Err(ZkError::ConnectionLoss)) => {
                let record = self.record(&item).unwrap_or_default();
                let read = Op::Exists {
                    path: record,
                    watch: false,
                };
                self.send(Phase::Confirming { item, data }, read)
            }
            (Phase::Confirming { item, data }, Ok(OpResult::Exists(Some(_)))) => {
                self.take_landed(item, data)
            }
            // It did not land: read the item again (another consumer may have taken it).
            (Phase::Confirming { item, .. }, Ok(OpResult::Exists(None))) => self.read(item),
            // The record is gone (it was this consumer's, told in an earlier session) or
            // deleted now: either way, done.
            (Phase::Clearing, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => {
                self.phase = Phase::Done;
                Step::stop()
            }
            (Phase::Claiming { item, data }, Ok(OpResult::Multi(results))) => {
                match results.iter().all(Result::is_ok) {
                    true => self.claimed(item, data),
                    // Gone, changed or claimed by another consumer.
                    false => self.next(),
                }
            }
            (Phase::Claiming { item, data }, Err(ZkError::ConnectionLoss)) => {
                let read = Op::Exists {
                    path: self.claim(&item),
                    watch: false,
                };
                self.send(Phase::ConfirmingClaim { item, data }, read)
            }
            (Phase::ConfirmingClaim { item, data }, Ok(OpResult::Exists(Some(stat)))) => {
                match stat.ephemeral_owner == self.session {
                    true => self.claimed(item, data),
                    false => self.next(),
                }
            }
            (Phase::ConfirmingClaim { item, .. }, Ok(OpResult::Exists(None))) => self.read(item),
            (Phase::Acking { item, .. }, Ok(OpResult::Multi(results)))
                if results.iter().all(Result::is_ok) =>
            {
                self.acked(&item)
            }
            // A second try finds the item gone: the first one landed (nobody else can delete
            // an item this live session holds the claim of).
            (Phase::Acking { item, again: true }, Ok(OpResult::Multi(results)))
                if results.first() == Some(&Err(ZkError::NoNode)) =>
            {
                self.acked(&item)
            }
            (Phase::Acking { item, .. }, Err(ZkError::ConnectionLoss)) => self.ack(item, true),
            (_, Err(error)) => self.done(QueueOutcome::Failed(error)),
            (Phase::Acking { .. }, Ok(OpResult::Multi(results))) => {
                let error = results.into_iter().find_map(Result::err);
                self.done(QueueOutcome::Failed(error.unwrap_or(ZkError::NoNode)))
            }
            (_, Ok(_)) => self.done(QueueOutcome::Failed(ZkError::MarshallingError)),
        }
    }

    fn take_landed(&mut self, item: String, data: Vec<u8>) -> Step<QueueOutcome> {
        let record = self.record(&item).unwrap_or_default();
        self.taken(record, &item, data)
    }

    fn acked(&mut self, item: &str) -> Step<QueueOutcome> {
        let item = item_sequence(item).unwrap_or_default();
        self.done(QueueOutcome::Acked { item })
    }

    /// The session ended: whatever the take was doing is over.
    fn session_lost(&mut self) -> Step<QueueOutcome> {
        match std::mem::replace(&mut self.phase, Phase::Done) {
            // The item is told already: its record, if still there, is found next time.
            Phase::Clearing => Step::stop(),
            Phase::Acking { item, .. } => {
                let item = item_sequence(&item).unwrap_or_default();
                Step::done(QueueOutcome::Unacked { item })
            }
            _ => Step::done(QueueOutcome::Lost),
        }
    }

    fn holding(&self) -> bool {
        matches!(self.phase, Phase::Holding { .. } | Phase::Acking { .. })
    }
}

impl Recipe for TakeMachine {
    type Request = QueueRequest;
    type Outcome = QueueOutcome;

    fn step(&mut self, input: Input<QueueRequest>) -> Step<QueueOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => self.list(),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.session_lost(),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::App(QueueRequest::Ack) => {
                match std::mem::replace(&mut self.phase, Phase::Idle) {
                    Phase::Holding { item } => self.ack(item, false),
                    phase => {
                        self.phase = phase;
                        Step::wait()
                    }
                }
            }
            Input::Event(ZkEvent::Session(event)) => {
                match self.link.on_session(event, self.holding()) {
                    Some(Connection::Lost) => self.session_lost(),
                    Some(Connection::Suspended) => Step::wait().telling(QueueOutcome::Suspended),
                    Some(Connection::Resumed) => Step::wait().telling(QueueOutcome::Resumed),
                    // What the watch would have said may have been missed while away.
                    None if event == SessionEvent::SyncConnected
                        && self.phase == Phase::Waiting =>
                    {
                        self.list()
                    }
                    None => Step::wait(),
                }
            }
            Input::Event(ZkEvent::Watch(event)) if event.path == self.dir => {
                self.news = true;
                match (self.phase == Phase::Waiting, event.event_type) {
                    (true, EventType::NodeChildrenChanged) => self.list(),
                    _ => Step::wait(),
                }
            }
            Input::Event(_) | Input::Timeout => Step::wait(),
        }
    }
}

/// Why a queue operation did not complete: the session ended first (a put may or may not have
/// landed; a claim is gone), or ZooKeeper answered with an error the recipe cannot handle.
pub type QueueError = RecipeError;

/// A queue under one directory.
#[derive(Clone)]
pub struct Queue {
    dir: String,
    recorder: Option<Arc<dyn Recorder>>,
    /// Puts made through this handle, for their tags.
    puts: Arc<AtomicU64>,
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Queue {
    /// The queue whose items live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        Queue {
            dir: dir.to_owned(),
            recorder: None,
            puts: Arc::default(),
        }
    }

    /// The queue's directory.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The same queue, writing down everything it tells the application with `recorder`.
    pub fn recording(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Puts `data` into the queue; returns its sequence number. The put is tagged with the
    /// session's guid and a count of this handle's puts, so a lost reply is survived; if the
    /// session ends first it fails with `SessionLost`, and the item may or may not be there
    /// (a [`PutMachine::again`] with a tag of the application's own finds out, while the item
    /// is still queued).
    pub async fn put<C: ZkClient>(&self, client: &C, data: Vec<u8>) -> Result<i64, QueueError> {
        let count = self.puts.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{}-{count}", session_guid(client.session_id()));
        self.put_with(client, PutMachine::new(&self.dir, tag, data))
            .await
    }

    /// Puts with `machine`: a put of the application's own tag, or a machine built around it.
    pub async fn put_with<C, M>(&self, client: &C, machine: M) -> Result<i64, QueueError>
    where
        C: ZkClient,
        M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
    {
        let mut driver = Driver::new(client, machine).recording(self.recorder.clone());
        let outcome = run_until(&mut driver, Input::Start, |outcome| {
            matches!(outcome, QueueOutcome::Put { .. })
        })
        .await?;
        match outcome {
            QueueOutcome::Put { item } => Ok(item),
            _ => Err(RecipeError::SessionLost),
        }
    }

    /// Takes the next item, waiting for one if the queue is empty, for the consumer named
    /// `consumer` (use the same name in every session of one consumer, and no other consumer's).
    pub async fn take<C: ZkClient>(&self, client: &C, consumer: &str) -> Result<Item, QueueError> {
        let mode = TakeMode::Remove {
            consumer: consumer.to_owned(),
        };
        let machine = TakeMachine::new(&self.dir, client.session_id(), mode);
        self.take_with(client, machine).await
    }

    /// Takes with `machine`: a consumer's machine, or one built around it.
    pub async fn take_with<C, M>(&self, client: &C, machine: M) -> Result<Item, QueueError>
    where
        C: ZkClient,
        M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
    {
        let mut driver = Driver::new(client, machine).recording(self.recorder.clone());
        let outcome = run_until(&mut driver, Input::Start, |outcome| {
            matches!(outcome, QueueOutcome::Taken(_))
        })
        .await?;
        // Let the record's delete finish before the driver goes.
        while !driver.is_done() {
            driver.feed_next_event().await;
        }
        match outcome {
            QueueOutcome::Taken(item) => Ok(item),
            _ => Err(RecipeError::SessionLost),
        }
    }

    /// Claims the next item, waiting for one if the queue is empty; the item is delivered
    /// again if the session ends before [`ClaimedItem::ack`].
    pub async fn take_locked<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<ClaimedItem<'c, C, TakeMachine>, QueueError> {
        let machine = TakeMachine::new(&self.dir, client.session_id(), TakeMode::Claim);
        self.take_locked_with(client, machine).await
    }

    /// Claims with `machine`: a claiming consumer's machine, or one built around it.
    pub async fn take_locked_with<'c, C, M>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<ClaimedItem<'c, C, M>, QueueError>
    where
        C: ZkClient,
        M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
    {
        let mut driver = Driver::new(client, machine).recording(self.recorder.clone());
        let outcome = run_until(&mut driver, Input::Start, |outcome| {
            matches!(outcome, QueueOutcome::Claimed(_))
        })
        .await?;
        match outcome {
            QueueOutcome::Claimed(item) => Ok(ClaimedItem { driver, item }),
            _ => Err(RecipeError::SessionLost),
        }
    }
}

/// An item this session claimed: acknowledge it once processed. Dropping it leaves the claim
/// until the session ends, when the item is delivered again.
#[derive(Debug)]
pub struct ClaimedItem<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    item: Item,
}

impl<C, M> ClaimedItem<'_, C, M>
where
    C: ZkClient,
    M: Recipe<Request = QueueRequest, Outcome = QueueOutcome>,
{
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
        self.driver.feed_arrived_events().await;
        if self.driver.is_done() {
            return Err(RecipeError::SessionLost);
        }
        let request = Input::App(QueueRequest::Ack);
        let acked = run_until(&mut self.driver, request, |outcome| {
            matches!(
                outcome,
                QueueOutcome::Acked { .. } | QueueOutcome::Unacked { .. }
            )
        });
        match acked.await? {
            QueueOutcome::Acked { .. } => Ok(()),
            _ => Err(RecipeError::SessionLost),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Stat, WatchedEvent};
    use crate::machine::Action;
    use crate::testing::{children, op};

    const DIR: &str = "/q";
    const SESSION: SessionId = 5;
    const FIRST: &str = "p-item-0000000001";
    const SECOND: &str = "p-item-0000000002";

    fn reply(result: OpResult) -> Input<QueueRequest> {
        Input::Reply(Ok(result))
    }

    fn data(bytes: &[u8]) -> Input<QueueRequest> {
        reply(OpResult::Data {
            data: bytes.to_vec(),
            stat: Stat::default(),
        })
    }

    fn multi(results: Vec<OpReply>) -> Input<QueueRequest> {
        reply(OpResult::Multi(results))
    }

    fn exists(stat: Option<Stat>) -> Input<QueueRequest> {
        reply(OpResult::Exists(stat))
    }

    fn lost() -> Input<QueueRequest> {
        Input::Reply(Err(ZkError::ConnectionLoss))
    }

    fn consumer() -> TakeMachine {
        let mode = TakeMode::Remove {
            consumer: "c1".to_owned(),
        };
        TakeMachine::new(DIR, SESSION, mode)
    }

    /// Lists, and reads the item of lowest sequence number first.
    fn reading_first(machine: &mut TakeMachine) {
        let step = machine.step(Input::Start);
        assert!(matches!(op(&step), Op::GetChildren { watch: true, .. }));
        let step = machine.step(children(&[SECOND, FIRST, "p-item-0000000001-claim-not"]));
        assert_eq!(
            op(&step),
            &Op::GetData {
                path: format!("{DIR}/{FIRST}"),
                watch: false
            }
        );
    }

    #[test]
    fn a_put_survives_a_lost_create_reply_by_its_tag() {
        let mut put = PutMachine::new(DIR, "t1".to_owned(), b"x".to_vec());
        let step = put.step(Input::Start);
        assert!(matches!(
            op(&step),
            Op::Create { path, mode: CreateMode::PersistentSequential, data } if path == "/q/t1-item-" && data == b"x"
        ));
        assert!(matches!(op(&put.step(lost())), Op::GetChildren { .. }));
        let step = put.step(children(&["t10-item-0000000003", "t1-item-0000000004"]));
        assert_eq!(op(&step).path(), "/q/t1-item-0000000004");
        let step = put.step(exists(Some(Stat::default())));
        assert_eq!(step.outcome, Some(QueueOutcome::Put { item: 4 }));
    }

    #[test]
    fn a_take_deletes_the_item_and_records_the_taker_in_one_multi_then_clears_the_record() {
        let mut machine = consumer();
        reading_first(&mut machine);
        let step = machine.step(data(b"x"));
        let Op::Multi(ops) = op(&step) else {
            panic!("{step:?}")
        };
        assert!(matches!(&ops[0], Op::Delete { path, .. } if path == "/q/p-item-0000000001"));
        assert!(
            matches!(&ops[1], Op::Create { path, mode: CreateMode::Persistent, .. }
            if path == "/q/p-item-0000000001-taken-c1")
        );
        let step = machine.step(multi(vec![Ok(OpResult::Deleted), Ok(OpResult::RolledBack)]));
        let taken = Item {
            seq: 1,
            data: b"x".to_vec(),
        };
        assert_eq!(step.outcome, Some(QueueOutcome::Taken(taken)));
        assert_eq!(op(&step).path(), "/q/p-item-0000000001-taken-c1");
        assert_eq!(
            machine.step(Input::Reply(Err(ZkError::NoNode))).action,
            Action::Done
        );
    }

    #[test]
    fn after_a_lost_take_reply_the_record_says_whether_it_landed() {
        let mut landed = consumer();
        reading_first(&mut landed);
        landed.step(data(b"x"));
        let step = landed.step(lost());
        assert_eq!(op(&step).path(), "/q/p-item-0000000001-taken-c1");
        let step = landed.step(exists(Some(Stat::default())));
        assert!(matches!(
            step.outcome,
            Some(QueueOutcome::Taken(Item { seq: 1, .. }))
        ));

        let mut not_landed = consumer();
        reading_first(&mut not_landed);
        not_landed.step(data(b"x"));
        not_landed.step(lost());
        let step = not_landed.step(exists(None));
        assert_eq!(
            op(&step).path(),
            "/q/p-item-0000000001",
            "the item is read again"
        );
        let step = not_landed.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(
            op(&step).path(),
            "/q/p-item-0000000002",
            "taken by another: the next"
        );
    }

    #[test]
    fn a_take_record_left_by_an_earlier_session_is_handed_over_first() {
        let mut machine = consumer();
        machine.step(Input::Start);
        let step = machine.step(children(&[
            FIRST,
            "p-item-0000000000-taken-c1",
            "p-item-0000000000-taken-c2",
        ]));
        assert_eq!(op(&step).path(), "/q/p-item-0000000000-taken-c1");
        let step = machine.step(data(b"old"));
        let taken = Item {
            seq: 0,
            data: b"old".to_vec(),
        };
        assert_eq!(step.outcome, Some(QueueOutcome::Taken(taken)));
        assert!(matches!(op(&step), Op::Delete { .. }));
    }

    #[test]
    fn an_empty_queue_is_listed_again_only_when_its_watch_fires() {
        let mut machine = consumer();
        machine.step(Input::Start);
        assert_eq!(machine.step(children(&[])).action, Action::Wait);
        let changed = Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeChildrenChanged,
            path: DIR.to_owned(),
        }));
        assert!(matches!(
            op(&machine.step(changed.clone())),
            Op::GetChildren { .. }
        ));
        // News while the listing is worked through: the next listing is made once it is used up.
        let step = machine.step(children(&[FIRST]));
        assert_eq!(op(&step).path(), "/q/p-item-0000000001");
        assert_eq!(machine.step(changed).action, Action::Wait);
        let step = machine.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(op(&step), Op::GetChildren { .. }));
    }

    fn claiming() -> TakeMachine {
        let mut machine = TakeMachine::new(DIR, SESSION, TakeMode::Claim);
        machine.step(Input::Start);
        let claimed = format!("{FIRST}{CLAIM}");
        let step = machine.step(children(&[FIRST, SECOND, &claimed]));
        assert_eq!(
            op(&step).path(),
            "/q/p-item-0000000002",
            "a claimed item is skipped"
        );
        let step = machine.step(data(b"y"));
        let Op::Multi(ops) = op(&step) else {
            panic!("{step:?}")
        };
        assert!(matches!(&ops[0], Op::Check { .. }));
        assert!(
            matches!(&ops[1], Op::Create { path, mode: CreateMode::Ephemeral, .. }
            if path == "/q/p-item-0000000002-claim")
        );
        machine
    }

    #[test]
    fn a_claimed_item_is_acknowledged_by_deleting_it_and_its_claim_in_one_multi() {
        let mut machine = claiming();
        let step = machine.step(multi(vec![Ok(OpResult::Checked), Ok(OpResult::RolledBack)]));
        let claimed = Item {
            seq: 2,
            data: b"y".to_vec(),
        };
        assert_eq!(step.outcome, Some(QueueOutcome::Claimed(claimed)));
        let step = machine.step(Input::App(QueueRequest::Ack));
        assert!(matches!(op(&step), Op::Multi(ops) if ops.len() == 2));
        // The ack's reply is lost; the second try finds the item gone: the first landed.
        assert!(matches!(op(&machine.step(lost())), Op::Multi(_)));
        let gone = multi(vec![
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ]);
        assert_eq!(
            machine.step(gone).outcome,
            Some(QueueOutcome::Acked { item: 2 })
        );
    }

    #[test]
    fn an_ack_that_finds_the_item_gone_at_once_fails() {
        let mut machine = claiming();
        machine.step(multi(vec![Ok(OpResult::Checked), Ok(OpResult::RolledBack)]));
        machine.step(Input::App(QueueRequest::Ack));
        let gone = multi(vec![
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ]);
        let step = machine.step(gone);
        assert_eq!(step.outcome, Some(QueueOutcome::Failed(ZkError::NoNode)));
    }

    #[test]
    fn after_a_lost_claim_reply_the_claims_owner_says_whose_it_is() {
        let mut ours = claiming();
        assert!(matches!(op(&ours.step(lost())), Op::Exists { .. }));
        let owned = Stat {
            ephemeral_owner: SESSION,
            ..Stat::default()
        };
        assert!(matches!(
            ours.step(exists(Some(owned))).outcome,
            Some(QueueOutcome::Claimed(_))
        ));

        let mut theirs = claiming();
        theirs.step(lost());
        let other = Stat {
            ephemeral_owner: SESSION + 1,
            ..Stat::default()
        };
        let step = theirs.step(exists(Some(other)));
        assert_eq!(step.outcome, None);
        assert_eq!(
            step.action,
            Action::Wait,
            "listing used up, nothing new: wait"
        );
    }

    #[test]
    fn a_claim_is_suspended_and_lost_with_the_session() {
        let mut machine = claiming();
        machine.step(multi(vec![Ok(OpResult::Checked), Ok(OpResult::RolledBack)]));
        let session = |event| Input::Event(ZkEvent::Session(event));
        let step = machine.step(session(SessionEvent::Disconnected));
        assert_eq!(step.outcome, Some(QueueOutcome::Suspended));
        let step = machine.step(session(SessionEvent::Expired));
        assert_eq!(step.outcome, Some(QueueOutcome::Lost));
    }
}
