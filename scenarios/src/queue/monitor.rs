//! Queue delivery: every item put is taken exactly once.
//!
//! Judged from what the clients were told (`Taken`, `Acked`) and, where the trace has them, the
//! server's applied ops:
//!
//! - **Nothing twice.** An item told taken (or acknowledged) to two clients, or twice to one
//!   client in one session. The same consumer may be told again in a later session: a plain
//!   take hands its item over again if the session ended before the take's record was cleared.
//!   And a session that puts an item of the same tag twice in a row (a put made twice after a
//!   lost reply); in a new session, a put taken up again may.
//! - **Nothing lost.** A client's session deleted an item (a take, an ack) and the client went
//!   on to be told of another item without ever being told of that one: nobody will be.
//!   Excused once the session ended: the consumer's next session is handed the item.
//! - **No dead claim.** A session ended while a claim it made still stands: the claimed item is
//!   never delivered again.
//!
//! Items still queued when the run ends are not lost; a run's end judges what is left (no
//! orphans). A real server's trace has no applied ops, so only the first rule judges it.

use std::collections::BTreeMap;

use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;
use zklab_recipes::queue::{item_sequence, CLAIM};
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::{changes, child_of, Change};

/// Nothing twice: broken when a queue's item went to two consumers, or was acknowledged or put
/// twice.
pub static ITEM_TWICE: Property = Property::new("item-twice", "nothing twice");

/// Nothing lost: broken when a queue's item was deleted by a consumer that went on without ever
/// taking it.
pub static ITEM_LOST: Property = Property::new("item-lost", "nothing lost");

/// No claim outlives its session: broken when a queue item's claim outlived the session that made
/// it, so the item is never delivered again.
pub static DEAD_CLAIM: Property = Property::new("dead-claim", "no claim outlives its session");

/// One session of one client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Consumer {
    #[rename(client)]
    client: ClientId,
    #[rename(session)]
    session: SessionId,
}

/// An item's sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Seq(#[rename(keep)] i64);

/// The queue-delivery monitor of one queue directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct QueueDelivery {
    #[rename(keep)]
    dir: String,
    /// Items deleted by a session not yet told of them.
    owed: BTreeMap<Seq, Consumer>,
    /// Items told taken or acknowledged, and to whom first.
    told: BTreeMap<Seq, Consumer>,
    /// Claims standing, and the session that made each.
    claims: BTreeMap<String, Consumer>,
    /// Each session's last item put, by its name without the sequence number (`<tag>-item-`).
    last_put: BTreeMap<Consumer, String>,
}

impl QueueDelivery {
    /// A monitor of the queue whose items are the children of `dir`.
    pub fn new(dir: &str) -> Self {
        QueueDelivery {
            dir: dir.to_owned(),
            ..QueueDelivery::default()
        }
    }

    /// The name of a child of the directory, or `None` for another path.
    fn child<'p>(&self, path: &'p str) -> Option<&'p str> {
        child_of(&self.dir, path)
    }

    fn applied(&mut self, by: Consumer, change: Change) -> Option<String> {
        match change {
            Change::Created { path, .. } if self.child(path).is_some_and(is_claim) => {
                self.claims.insert(path.to_owned(), by);
            }
            Change::Created { path, .. } => {
                let name = self
                    .child(path)
                    .filter(|name| item_sequence(name).is_some())?;
                let put = name[..name.len() - SEQUENCE_DIGITS].to_owned();
                if self.last_put.get(&by) == Some(&put) {
                    return Some(format!(
                        "session {:#x} of c{} put {put} twice: {name} is the second",
                        by.session, by.client
                    ));
                }
                self.last_put.insert(by, put);
            }
            Change::Deleted(path) => {
                self.claims.remove(path);
                if let Some(item) = self.child(path).and_then(item_sequence) {
                    self.owed.insert(Seq(item), by);
                }
            }
            Change::Set { .. } => {}
        }
        None
    }

    fn session_ended(&mut self, ended: Consumer, deleted: &[String]) -> Option<String> {
        for path in deleted {
            self.claims.remove(path);
        }
        self.owed.retain(|_, taker| *taker != ended);
        self.last_put.remove(&ended);
        let (claim, _) = self.claims.iter().find(|(_, by)| **by == ended)?;
        Some(format!(
            "session {:#x} of c{} ended and its claim {claim} still stands: the item is never \
             delivered again",
            ended.session, ended.client
        ))
    }

    fn told(&mut self, to: Consumer, item: i64) -> Option<(&'static Property, String)> {
        self.owed.remove(&Seq(item));
        let lost = self.owed.iter().find(|(_, taker)| **taker == to);
        if let Some((&Seq(lost), _)) = lost {
            self.owed.remove(&Seq(lost));
            return Some((
                &ITEM_LOST,
                format!(
                    "c{} deleted item {lost} in session {:#x} and went on to item {item} \
                     without taking it: nobody ever will",
                    to.client, to.session
                ),
            ));
        }
        match self.told.get(&Seq(item)) {
            Some(first) if first.client != to.client || first.session == to.session => Some((
                &ITEM_TWICE,
                format!(
                    "item {item} went to c{} (session {:#x}) and again to c{} (session {:#x})",
                    first.client, first.session, to.client, to.session
                ),
            )),
            Some(_) => None,
            None => {
                self.told.insert(Seq(item), to);
                None
            }
        }
    }
}

/// The digits of a sequential node's suffix.
const SEQUENCE_DIGITS: usize = 10;

fn is_claim(name: &str) -> bool {
    name.strip_suffix(CLAIM)
        .is_some_and(|item| item_sequence(item).is_some())
}

impl Monitor for QueueDelivery {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let (property, message) = match &entry.event {
            TraceEvent::Applied {
                client,
                session,
                op,
                reply,
                ..
            } => {
                let by = Consumer {
                    client: *client,
                    session: *session,
                };
                let twice = changes(op, reply)
                    .filter_map(|change| self.applied(by, change))
                    .next();
                (&ITEM_TWICE, twice?)
            }
            TraceEvent::SessionEnded {
                client,
                session,
                deleted,
                ..
            } => {
                let ended = Consumer {
                    client: *client,
                    session: *session,
                };
                (&DEAD_CLAIM, self.session_ended(ended, deleted)?)
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome: Outcome::Taken { item } | Outcome::Acked { item },
            } => {
                let to = Consumer {
                    client: *client,
                    session: *session,
                };
                self.told(to, *item)?
            }
            _ => return None,
        };
        Some(Violation::new(property, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&ITEM_TWICE, &ITEM_LOST, &DEAD_CLAIM]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, Op, OpResult, Stat};

    use super::*;
    use crate::monitor::traces::{created, ended, first_broken_in, outcome};
    use zklab_recipes::acl::Acls;

    const ITEM: &str = "/q/p-item-0000000001";

    fn first(events: Vec<TraceEvent>) -> Option<&'static Property> {
        first_broken_in(QueueDelivery::new("/q"), events)
    }

    fn deletes(client: ClientId, session: SessionId, path: &str) -> TraceEvent {
        TraceEvent::Applied {
            client,
            session,
            zxid: 1,
            op: Op::Delete {
                path: path.to_owned(),
                version: -1,
            },
            reply: Ok(OpResult::Deleted),
        }
    }

    fn taken(client: ClientId, session: SessionId, item: i64) -> TraceEvent {
        outcome(client, session, Outcome::Taken { item })
    }

    #[test]
    fn an_item_told_to_two_clients_or_twice_in_one_session_is_taken_twice() {
        let to_two = vec![deletes(1, 1, ITEM), taken(1, 1, 1), taken(2, 2, 1)];
        assert_eq!(first(to_two), Some(&ITEM_TWICE));
        let twice = vec![deletes(1, 1, ITEM), taken(1, 1, 1), taken(1, 1, 1)];
        assert_eq!(first(twice), Some(&ITEM_TWICE));
        // Handed over again to the same consumer in its next session: allowed.
        let again = vec![deletes(1, 1, ITEM), taken(1, 1, 1), taken(1, 3, 1)];
        assert_eq!(first(again), None);
    }

    #[test]
    fn a_consumer_that_deleted_an_item_and_went_on_to_another_lost_it() {
        let lost = vec![deletes(1, 1, ITEM), taken(1, 1, 2)];
        assert_eq!(first(lost), Some(&ITEM_LOST));
        // Its session ended first: its next session is handed the item.
        let excused = vec![deletes(1, 1, ITEM), ended(1, 1, &[]), taken(1, 3, 2)];
        assert_eq!(first(excused), None);
    }

    #[test]
    fn a_claim_that_outlives_its_session_is_a_dead_claim() {
        let claim = "/q/p-item-0000000001-claim";
        let make = |mode| TraceEvent::Applied {
            client: 1,
            session: 1,
            zxid: 1,
            op: Op::Create {
                path: claim.to_owned(),
                data: Vec::new(),
                mode,
                acl: Acls::OPEN,
            },
            reply: Ok(OpResult::Created {
                path: claim.to_owned(),
                stat: Stat::default(),
            }),
        };
        let ephemeral = vec![make(CreateMode::Ephemeral), ended(1, 1, &[claim])];
        assert_eq!(first(ephemeral), None);
        let persistent = vec![make(CreateMode::Persistent), ended(1, 1, &[])];
        assert_eq!(first(persistent), Some(&DEAD_CLAIM));
        // Another directory's nodes are not this queue's.
        let elsewhere = vec![
            created(1, 1, "/r/p-item-0000000001-claim"),
            ended(1, 1, &[]),
        ];
        assert_eq!(first(elsewhere), None);
    }

    #[test]
    fn a_session_that_puts_one_tag_twice_in_a_row_puts_an_item_twice() {
        let put = |session, seq| {
            let name = format!("/q/t1-item-{seq:010}");
            let op = Op::Create {
                path: "/q/t1-item-".to_owned(),
                data: Vec::new(),
                mode: CreateMode::PersistentSequential,
                acl: Acls::OPEN,
            };
            TraceEvent::Applied {
                client: 1,
                session,
                zxid: 1,
                op,
                reply: Ok(OpResult::Created {
                    path: name,
                    stat: Stat::default(),
                }),
            }
        };
        assert_eq!(first(vec![put(1, 1), put(1, 2)]), Some(&ITEM_TWICE));
        // Taken up again in a new session, a put may find its item gone and put it again.
        assert_eq!(first(vec![put(1, 1), ended(1, 1, &[]), put(3, 2)]), None);
    }
}
