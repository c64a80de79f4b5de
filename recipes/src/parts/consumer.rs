//! The consumer part: taking items out of a queue, one at a time, exactly once under faults.
//!
//! A consumer lists the queue's directory with a watch and tries its items in order (by
//! sequence number, or by priority first), reading each first since the listing may be old. A
//! [`TakeMode::Remove`] deletes the item in one `multi` with a persistent record
//! `<item>-taken-<consumer>` holding its data, which tells the consumer after a lost reply
//! (read after a `sync`, since it may be talking to another server now) whether it was the one, and hands it the item in a later session if its session ended first;
//! the record is deleted once the item is told. A [`TakeMode::Claim`] claims the item with an
//! ephemeral `<item>-claim`, made in a `multi` that checks the item is still there, and
//! acknowledges it by deleting item and claim in one `multi`. Under [`Order::Sequence`] the
//! consumer works through a listing before listing again (only if its watch fired meanwhile);
//! under [`Order::Priority`] it drops its listing whenever the watch fires, so it never takes
//! from a listing a change it has heard of made stale. The queue and the priority queue are made
//! of it.

use crate::acl::Acls;
use crate::client::{CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId};
use crate::client::{ZkError, ZkEvent};
use crate::machine::{Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::link::{Connection, Delivery, Link};
use crate::session_renaming::RenameSessions;
use crate::subtree::child_path;

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

/// The priority of a priority queue's item `p<priority>-<tag>-item-<seq>`: lower goes first.
pub fn item_priority(name: &str) -> Option<u32> {
    let (priority, _) = name.strip_prefix('p')?.split_once('-')?;
    priority.parse().ok()
}

/// In which order a consumer tries items, and how fresh its listing must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum Order {
    /// By sequence number; a listing is worked through before the next one is made.
    Sequence,
    /// By priority, then sequence number; a listing is dropped as soon as the queue's watch
    /// fires, so an item is taken only from a listing no change the consumer heard of made old.
    Priority,
}

impl Order {
    /// The key items are tried by, lowest first; `None` for a child that is no item.
    pub fn key(self, name: &str) -> Option<(u32, i64)> {
        let sequence = item_sequence(name)?;
        match self {
            Order::Sequence => Some((0, sequence)),
            Order::Priority => Some((item_priority(name)?, sequence)),
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
    /// After ConnectionLoss on a take or a claim: bringing its server up to date with `sync`
    /// (on an ensemble it may be another, behind the write), then, once `synced`, reading the
    /// record or the claim to learn whether it landed.
    Confirming {
        item: String,
        data: Vec<u8>,
        synced: bool,
    },
    /// The item is the consumer's and told: deleting its record.
    Clearing,
    /// The claim's `multi` is in flight.
    Claiming {
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
    order: Order,
    phase: Phase,
    /// The items of the last listing not tried yet, in sequence order.
    listing: Vec<String>,
    /// The queue's children changed since the last listing was sent.
    news: bool,
    link: Link,
}

impl TakeMachine {
    /// A consumer of the queue at `dir`, in session `session`, taking the `mode` way, in
    /// sequence order.
    pub fn new(dir: &str, session: SessionId, mode: TakeMode) -> Self {
        TakeMachine::ordered(dir, session, mode, Order::Sequence)
    }

    /// The same, trying items in `order`.
    pub fn ordered(dir: &str, session: SessionId, mode: TakeMode, order: Order) -> Self {
        TakeMachine {
            dir: dir.to_owned(),
            session,
            mode,
            order,
            phase: Phase::Idle,
            listing: Vec::new(),
            news: false,
            link: Link::default(),
        }
    }

    fn path(&self, name: &str) -> String {
        child_path(&self.dir, name)
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

    /// What a take or a claim of `item` by this consumer leaves: its record, or its claim.
    fn evidence(&self, item: &str) -> String {
        self.record(item).unwrap_or_else(|| self.claim(item))
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
        let order = self.order;
        let mut items: Vec<(u32, i64, String)> = children
            .iter()
            .filter(|name| !claimed(name))
            .filter_map(|name| {
                let (first, then) = order.key(name)?;
                Some((first, then, name.clone()))
            })
            .collect();
        items.sort_unstable_by(|a, b| b.cmp(a));
        self.listing = items.into_iter().map(|(_, _, name)| name).collect();
        self.next()
    }

    /// Whether the listing is to be dropped: a priority consumer heard of a change since.
    fn stale(&self) -> bool {
        self.order == Order::Priority && self.news
    }

    /// Tries the next item of the listing; once it is used up (or stale), lists again if the
    /// queue changed since, or waits for it to.
    fn next(&mut self) -> Step<QueueOutcome> {
        if self.stale() {
            return self.list();
        }
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
                        acl: Acls::OPEN,
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
                        acl: Acls::OPEN,
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
            // The record went since a listing a lagging follower served: list again (from the
            // same server, which has now applied its deletion).
            (Phase::Recovering { .. }, Err(ZkError::NoNode)) => self.list(),
            (Phase::Reading { .. }, Ok(OpResult::Data { .. })) if self.stale() => self.list(),
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
            (
                Phase::Taking { item, data } | Phase::Claiming { item, data },
                Err(ZkError::ConnectionLoss),
            ) => {
                let sync = Op::Sync {
                    path: self.dir.clone(),
                };
                let synced = false;
                self.send(Phase::Confirming { item, data, synced }, sync)
            }
            (Phase::Confirming { item, data, .. }, Ok(OpResult::Synced)) => {
                let read = Op::Exists {
                    path: self.evidence(&item),
                    watch: false,
                };
                let synced = true;
                self.send(Phase::Confirming { item, data, synced }, read)
            }
            (Phase::Confirming { item, data, .. }, Ok(OpResult::Exists(Some(stat)))) => {
                match self.mode {
                    TakeMode::Remove { .. } => self.take_landed(item, data),
                    TakeMode::Claim if stat.ephemeral_owner == self.session => {
                        self.claimed(item, data)
                    }
                    TakeMode::Claim => self.next(),
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Stat, WatchedEvent};
    use crate::machine::Action;
    use crate::test_steps::{children, multi_ops, op};

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
    fn a_take_deletes_the_item_and_records_the_taker_in_one_multi_then_clears_the_record() {
        let mut machine = consumer();
        reading_first(&mut machine);
        let step = machine.step(data(b"x"));
        let ops = multi_ops(&step);
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
        assert!(
            matches!(op(&step), Op::Sync { .. }),
            "its server brought up to date first"
        );
        let step = landed.step(reply(OpResult::Synced));
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
        not_landed.step(reply(OpResult::Synced));
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
        let ops = multi_ops(&step);
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
        assert!(matches!(op(&ours.step(lost())), Op::Sync { .. }));
        assert!(matches!(
            op(&ours.step(reply(OpResult::Synced))),
            Op::Exists { .. }
        ));
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
        theirs.step(reply(OpResult::Synced));
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

    #[test]
    fn a_priority_consumer_tries_the_highest_priority_first_and_drops_a_listing_once_it_hears_news()
    {
        let mode = TakeMode::Remove {
            consumer: "c1".to_owned(),
        };
        let mut machine = TakeMachine::ordered(DIR, SESSION, mode, Order::Priority);
        machine.step(Input::Start);
        let step = machine.step(children(&[
            "p2-a-item-0000000001",
            "p1-b-item-0000000003",
            "p1-c-item-0000000002",
        ]));
        assert_eq!(op(&step).path(), "/q/p1-c-item-0000000002");
        let changed = Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeChildrenChanged,
            path: DIR.to_owned(),
        }));
        assert_eq!(machine.step(changed).action, Action::Wait);
        let step = machine.step(data(b"x"));
        assert!(
            matches!(op(&step), Op::GetChildren { .. }),
            "the item read is not taken from a stale listing: {step:?}"
        );
    }
}
