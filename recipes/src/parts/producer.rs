//! The producer part: putting one item into a queue, exactly once while its session lives.
//!
//! The item is a persistent sequential node `<dir>/<tag>-item-<seq>` holding its data. It is
//! created in one `multi` with an ephemeral sequential marker `<dir>/<tag>-put-<seq+1>` (two
//! creates under one directory take consecutive sequence numbers). After a lost reply the
//! producer syncs (it may be talking to another server now, behind the write) and lists: its
//! marker says the put landed, and under which number, even when a consumer has taken the item
//! already; with no marker, the put did not land and is made again. The marker is deleted once
//! the put is told, and would go with the session anyway. A put taken up again in a new session
//! ([`PutMachine::again`]) has no marker left to find: it looks for the item by its tag, and if
//! a consumer took it meanwhile, puts it a second time.

use crate::acl::Acls;
use crate::client::{CreateMode, Op, OpReply, OpResult, ZkError, ZkEvent};
use crate::machine::{Input, Recipe, Step};
use crate::parts::consumer::{QueueOutcome, QueueRequest, ITEM};
use crate::parts::link::{Connection, Delivery, Link};
use crate::parts::parents::Parents;
use crate::session_renaming::RenameSessions;
use crate::subtree::child_path;

/// What follows a put's tag in its marker: `<tag>-put-<seq>`.
const PUT: &str = "-put-";

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The put's `multi` is in flight.
    Putting,
    /// The directory is missing: creating its ancestors.
    CreatingParent(Parents),
    /// Bringing its server up to date before looking for the put.
    Syncing,
    /// Listing the queue for the put's marker (or, taken up again, its item).
    Finding,
    /// The put is told: deleting its marker.
    Clearing,
    Done,
}

/// A producer's put of one item, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct PutMachine {
    #[rename(keep)]
    dir: String,
    /// Names this put: unique to it, and no other put's tag followed by `-item-` or `-put-`.
    #[rename(guid)]
    tag: String,
    /// The item's name before its sequence number: `<tag>-item-`, or one of the caller's. Not a
    /// bare guid: renamed as a name, whose leading guid is its session's.
    item: String,
    #[rename(keep)]
    data: Vec<u8>,
    /// Taken up again in a new session: look for the item first.
    again: bool,
    phase: Phase,
    link: Link,
}

impl PutMachine {
    /// Puts `data` into the queue at `dir` as `<dir>/<tag>-item-<seq>`.
    pub fn new(dir: &str, tag: String, data: Vec<u8>) -> Self {
        let item = format!("{tag}{ITEM}");
        PutMachine::named(dir, item, tag, data)
    }

    /// Puts `data` as `<dir>/<item><seq>` (a unique name of the caller's choosing, such as
    /// `job-`), with the marker of `tag`. Not for a put taken up again: its item does not carry
    /// the tag to be found by.
    pub fn named(dir: &str, item: String, tag: String, data: Vec<u8>) -> Self {
        PutMachine {
            dir: dir.to_owned(),
            tag,
            item,
            data,
            again: false,
            phase: Phase::Idle,
            link: Link::default(),
        }
    }

    /// The same put, taken up again in a new session after the last one ended without an
    /// answer: it looks for an item carrying its tag before putting one. An item taken
    /// meanwhile is not found, and is put again.
    pub fn again(dir: &str, tag: String, data: Vec<u8>) -> Self {
        PutMachine {
            again: true,
            ..PutMachine::new(dir, tag, data)
        }
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<QueueOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: QueueOutcome) -> Step<QueueOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    fn put(&mut self) -> Step<QueueOutcome> {
        let put = Op::Multi(vec![
            Op::Create {
                path: child_path(&self.dir, &self.item),
                data: self.data.clone(),
                mode: CreateMode::PersistentSequential,
                acl: Acls::OPEN,
            },
            Op::Create {
                path: format!("{}/{}{PUT}", self.dir, self.tag),
                data: Vec::new(),
                mode: CreateMode::EphemeralSequential,
                acl: Acls::OPEN,
            },
        ]);
        self.phase = Phase::Putting;
        Step::send(self.link.send_once(put))
    }

    fn sync(&mut self) -> Step<QueueOutcome> {
        let sync = Op::Sync {
            path: self.dir.clone(),
        };
        self.send(Phase::Syncing, sync)
    }

    /// The sequence number after `marker` in a child's name that starts with the tag.
    fn numbered(&self, name: &str, marker: &str) -> Option<i64> {
        let rest = name.strip_prefix(self.tag.as_str())?.strip_prefix(marker)?;
        rest.parse::<i32>().ok().map(i64::from)
    }

    /// The sequence number of an item of this put's name.
    fn item_number(&self, name: &str) -> Option<i64> {
        let rest = name.strip_prefix(self.item.as_str())?;
        rest.parse::<i32>().ok().map(i64::from)
    }

    /// The put landed as item `item`: tells it, and deletes its marker `marker`.
    fn landed(&mut self, item: i64, marker: String) -> Step<QueueOutcome> {
        let clear = Op::Delete {
            path: marker,
            version: -1,
        };
        self.send(Phase::Clearing, clear)
            .telling(QueueOutcome::Put { item })
    }

    fn on_listing(&mut self, children: &[String]) -> Step<QueueOutcome> {
        let marker = children
            .iter()
            .find_map(|name| Some((self.numbered(name, PUT)?, name)));
        if let Some((after, name)) = marker {
            let path = child_path(&self.dir, name);
            return self.landed(after - 1, path);
        }
        let item = children
            .iter()
            .find_map(|name| self.item_number(name))
            .filter(|_| self.again);
        match item {
            Some(item) => self.done(QueueOutcome::Put { item }),
            None => self.put(),
        }
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<QueueOutcome> {
        match (std::mem::replace(&mut self.phase, Phase::Idle), reply) {
            (Phase::Putting, Ok(OpResult::Multi(results))) => match results.as_slice() {
                [Ok(OpResult::Created { path: item, .. }), Ok(OpResult::Created { path, .. })] => {
                    let name = item.rsplit('/').next().unwrap_or_default();
                    let item = self.item_number(name).unwrap_or_default();
                    self.landed(item, path.clone())
                }
                [Err(ZkError::NoNode), ..] => {
                    let (parents, op) = Parents::start(&self.dir, CreateMode::Persistent);
                    self.send(Phase::CreatingParent(parents), op)
                }
                _ => {
                    let error = results.into_iter().find_map(Result::err);
                    self.done(QueueOutcome::Failed(error.unwrap_or(ZkError::ApiError)))
                }
            },
            (Phase::Putting, Err(ZkError::ConnectionLoss)) => self.sync(),
            (Phase::CreatingParent(parents), Ok(_) | Err(ZkError::NodeExists)) => {
                match parents.next(&self.dir) {
                    Some((next, op)) => self.send(Phase::CreatingParent(next), op),
                    None => self.put(),
                }
            }
            (Phase::Syncing, Ok(OpResult::Synced)) => {
                let list = Op::GetChildren {
                    path: self.dir.clone(),
                    watch: false,
                };
                self.send(Phase::Finding, list)
            }
            (Phase::Finding, Ok(OpResult::Children { children, .. })) => self.on_listing(&children),
            // No directory, so nothing put yet.
            (Phase::Syncing | Phase::Finding, Err(ZkError::NoNode)) => self.put(),
            // The marker is gone (it goes with the session anyway): the put is told.
            (Phase::Clearing, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => {
                self.phase = Phase::Done;
                Step::stop()
            }
            (_, Err(error)) => self.done(QueueOutcome::Failed(error)),
            (_, Ok(_)) => self.done(QueueOutcome::Failed(ZkError::MarshallingError)),
        }
    }

    /// The session ended: the put is told already (clearing its marker), or it may or may not
    /// have landed.
    fn session_lost(&mut self) -> Step<QueueOutcome> {
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Clearing => Step::stop(),
            _ => Step::done(QueueOutcome::Lost),
        }
    }
}

impl Recipe for PutMachine {
    type Request = QueueRequest;
    type Outcome = QueueOutcome;

    fn step(&mut self, input: Input<QueueRequest>) -> Step<QueueOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start if self.again => self.sync(),
            Input::Start => self.put(),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.session_lost(),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::Event(ZkEvent::Session(event)) => match self.link.on_session(event, false) {
                Some(Connection::Lost) => self.session_lost(),
                _ => Step::wait(),
            },
            Input::App(_) | Input::Event(_) | Input::Timeout => Step::wait(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Stat;
    use crate::test_steps::{children, multi_ops, op};

    fn created(path: &str) -> OpReply {
        Ok(OpResult::Created {
            path: path.to_owned(),
            stat: Stat::UNKNOWN,
        })
    }

    #[test]
    fn a_put_creates_its_item_and_a_marker_in_one_multi_and_clears_the_marker() {
        let mut put = PutMachine::new("/q", "t1".to_owned(), b"x".to_vec());
        let step = put.step(Input::Start);
        let ops = multi_ops(&step);
        assert!(
            matches!(&ops[0], Op::Create { path, mode: CreateMode::PersistentSequential, data, .. }
            if path == "/q/t1-item-" && data == b"x")
        );
        assert!(
            matches!(&ops[1], Op::Create { path, mode: CreateMode::EphemeralSequential, .. }
            if path == "/q/t1-put-")
        );
        let both = vec![
            created("/q/t1-item-0000000004"),
            created("/q/t1-put-0000000005"),
        ];
        let step = put.step(Input::Reply(Ok(OpResult::Multi(both))));
        landed_as_4_clearing_its_marker(&step);
    }

    /// `step` tells that the put landed as item 4, and deletes its marker.
    fn landed_as_4_clearing_its_marker(step: &Step<QueueOutcome>) {
        assert_eq!(step.outcome, Some(QueueOutcome::Put { item: 4 }));
        assert_eq!(op(step).path(), "/q/t1-put-0000000005");
    }

    /// A put whose multi's reply was lost, listing after a `sync` to find its marker.
    fn reply_lost() -> PutMachine {
        let mut put = PutMachine::new("/q", "t1".to_owned(), b"x".to_vec());
        put.step(Input::Start);
        let step = put.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(matches!(op(&step), Op::Sync { .. }));
        let step = put.step(Input::Reply(Ok(OpResult::Synced)));
        assert!(matches!(op(&step), Op::GetChildren { .. }));
        put
    }

    #[test]
    fn after_a_lost_reply_its_marker_says_it_landed_though_the_item_is_taken() {
        let mut put = reply_lost();
        // The item is gone (a consumer took it); the marker is still there.
        let step = put.step(children(&["t10-put-0000000002", "t1-put-0000000005"]));
        landed_as_4_clearing_its_marker(&step);
    }

    #[test]
    fn with_no_marker_after_a_lost_reply_it_puts_again() {
        let mut put = reply_lost();
        // An item of its tag without a marker is another attempt's; this one did not land.
        let step = put.step(children(&["t1-item-0000000003"]));
        assert!(matches!(op(&step), Op::Multi(_)));
    }

    #[test]
    fn a_named_put_makes_its_item_under_that_name_and_finds_it_by_its_marker() {
        let mut put = PutMachine::named("/n", "job-".into(), "t1".into(), b"x".to_vec());
        let step = put.step(Input::Start);
        let ops = multi_ops(&step);
        assert_eq!(ops[0].path(), "/n/job-");
        put.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        put.step(Input::Reply(Ok(OpResult::Synced)));
        let step = put.step(children(&["job-0000000006", "t1-put-0000000007"]));
        assert_eq!(step.outcome, Some(QueueOutcome::Put { item: 6 }));
    }

    #[test]
    fn a_put_taken_up_again_adopts_an_item_of_its_tag() {
        let mut put = PutMachine::again("/q", "t1".to_owned(), b"x".to_vec());
        assert!(matches!(op(&put.step(Input::Start)), Op::Sync { .. }));
        put.step(Input::Reply(Ok(OpResult::Synced)));
        let step = put.step(children(&["t2-item-0000000001", "t1-item-0000000003"]));
        assert_eq!(step.outcome, Some(QueueOutcome::Put { item: 3 }));
    }
}
