//! Priority order: a consumer of a priority queue never takes an item while one of higher
//! priority that it knew of, or should have, was there for the taking.
//!
//! Judged from the server's applied ops and what each session heard and sent. A consumer knows
//! the items of its latest listing; once it hears the queue's watch fire (a change since that
//! listing), it knows its listing is stale and must list again before it takes. So a take (a
//! `multi` that deletes an item, or claims it) that the server applies is a violation when an
//! unclaimed item of higher priority stood then, and either it was in the consumer's latest
//! listing, or the consumer had heard its listing go stale before it sent the take. A real
//! server's trace has no applied ops: it is not judged.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpReply, OpResult, SessionId};
use zklab_recipes::queue::{Order, CLAIM};
use zklab_recipes::symmetry::RenameSessions;

use super::{changes, child_of, Change, Monitor, Violation, ViolationKind};
use crate::trace::{TraceEntry, TraceEvent};

/// What one session knows of the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
struct View {
    /// The items of its latest listing.
    listing: BTreeSet<String>,
    /// It heard the watch fire since that listing.
    stale: bool,
    /// It had heard so when it sent its op in flight.
    sent_stale: bool,
}

/// A session, as a map key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// The priority-order monitor of one priority queue's directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct PriorityOrder {
    #[rename(keep)]
    dir: String,
    /// The items standing, by name.
    items: BTreeSet<String>,
    /// The items claimed.
    claimed: BTreeSet<String>,
    views: BTreeMap<Session, View>,
}

impl PriorityOrder {
    /// A monitor of the priority queue whose items are the children of `dir`.
    pub fn new(dir: &str) -> Self {
        PriorityOrder {
            dir: dir.to_owned(),
            items: BTreeSet::new(),
            claimed: BTreeSet::new(),
            views: BTreeMap::new(),
        }
    }

    /// The name of a child of the directory, or `None` for another path.
    fn child<'p>(&self, path: &'p str) -> Option<&'p str> {
        child_of(&self.dir, path)
    }

    /// The item a take or a claim is of, if `op` is one.
    fn taken<'o>(&self, op: &'o Op) -> Option<&'o str> {
        let Op::Multi(ops) = op else { return None };
        match ops.first()? {
            Op::Delete { path, .. } | Op::Check { path, .. } => {
                let name = self.child(path)?;
                Order::Priority.key(name).map(|_| name)
            }
            _ => None,
        }
    }

    /// An item passed over by a take of `item` by `session`: of higher priority, standing and
    /// unclaimed, and known to the consumer.
    fn passed_over(&self, session: SessionId, item: &str) -> Option<String> {
        let (priority, _) = Order::Priority.key(item)?;
        let view = self.views.get(&Session(session))?;
        self.items
            .iter()
            .filter(|other| !self.claimed.contains(*other))
            .filter(|other| view.sent_stale || view.listing.contains(*other))
            .find(|other| {
                Order::Priority
                    .key(other)
                    .is_some_and(|(p, _)| p < priority)
            })
            .cloned()
    }

    fn applied(&mut self, session: SessionId, op: &Op, reply: &OpReply) -> Option<String> {
        if let (Op::GetChildren { path, .. }, Ok(OpResult::Children { children, .. })) = (op, reply)
        {
            if *path == self.dir {
                let listing = children
                    .iter()
                    .filter(|name| Order::Priority.key(name).is_some())
                    .cloned()
                    .collect();
                let view = self.views.entry(Session(session)).or_default();
                (view.listing, view.stale) = (listing, false);
            }
        }
        let succeeded = match reply {
            Ok(OpResult::Multi(results)) => results.iter().all(Result::is_ok),
            _ => false,
        };
        let found = match (succeeded, self.taken(op)) {
            (true, Some(item)) => self
                .passed_over(session, item)
                .map(|other| format!("session {session:#x} took {item} while {other} stood")),
            _ => None,
        };
        for change in changes(op, reply) {
            match change {
                Change::Created { path, .. } => match self.child(path) {
                    Some(name) if Order::Priority.key(name).is_some() => {
                        self.items.insert(name.to_owned());
                    }
                    Some(name) => {
                        if let Some(item) = name.strip_suffix(CLAIM) {
                            self.claimed.insert(item.to_owned());
                        }
                    }
                    None => {}
                },
                Change::Deleted(path) => {
                    if let Some(name) = self.child(path) {
                        self.items.remove(name);
                        if let Some(item) = name.strip_suffix(CLAIM) {
                            self.claimed.remove(item);
                        }
                    }
                }
                Change::Set { .. } => {}
            }
        }
        found
    }
}

impl Monitor for PriorityOrder {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let message = match &entry.event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => self.applied(*session, op, reply)?,
            TraceEvent::Watch { session, event, .. } if event.path == self.dir => {
                self.views.entry(Session(*session)).or_default().stale = true;
                return None;
            }
            TraceEvent::Request { session, .. } => {
                let view = self.views.entry(Session(*session)).or_default();
                view.sent_stale = view.stale;
                return None;
            }
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                self.views.remove(&Session(*session));
                for path in deleted {
                    if let Some(item) = self.child(path).and_then(|n| n.strip_suffix(CLAIM)) {
                        self.claimed.remove(item);
                    }
                }
                return None;
            }
            _ => return None,
        };
        Some(Violation {
            kind: ViolationKind::PriorityInverted,
            at: entry.at,
            message,
        })
    }

    fn kinds(&self) -> Vec<ViolationKind> {
        vec![ViolationKind::PriorityInverted]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, EventType, Stat, WatchedEvent};

    use super::*;
    use crate::monitor::testing::trace;

    const HIGH: &str = "p0-a-item-0000000002";
    const LOW: &str = "p1-b-item-0000000001";

    fn applied(session: SessionId, op: Op, reply: OpResult) -> TraceEvent {
        TraceEvent::Applied {
            client: session as u32,
            session,
            zxid: 1,
            op,
            reply: Ok(reply),
        }
    }

    fn put(name: &str) -> TraceEvent {
        let path = format!("/q/{name}");
        let op = Op::Create {
            path: path.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        };
        applied(
            9,
            op,
            OpResult::Created {
                path,
                stat: Stat::default(),
            },
        )
    }

    fn lists(session: SessionId, names: &[&str]) -> TraceEvent {
        let op = Op::GetChildren {
            path: "/q".to_owned(),
            watch: true,
        };
        let children = names.iter().map(|n| n.to_string()).collect();
        applied(
            session,
            op,
            OpResult::Children {
                children,
                stat: Stat::default(),
            },
        )
    }

    fn hears(session: SessionId) -> TraceEvent {
        TraceEvent::Watch {
            client: session as u32,
            session,
            event: WatchedEvent {
                event_type: EventType::NodeChildrenChanged,
                path: "/q".to_owned(),
            },
            zxid: 1,
            cause: "/q".to_owned(),
            deletion: false,
        }
    }

    fn takes(session: SessionId, name: &str) -> Vec<TraceEvent> {
        let op = Op::Multi(vec![Op::Delete {
            path: format!("/q/{name}"),
            version: -1,
        }]);
        let request = TraceEvent::Request {
            client: session as u32,
            session,
            op: op.clone(),
        };
        vec![
            request,
            applied(session, op, OpResult::Multi(vec![Ok(OpResult::Deleted)])),
        ]
    }

    fn first(events: Vec<TraceEvent>) -> Option<ViolationKind> {
        PriorityOrder::new("/q")
            .first_in(&trace(events))
            .map(|v| v.kind)
    }

    #[test]
    fn taking_a_lower_priority_item_over_a_listed_higher_one_inverts_priority() {
        let mut events = vec![put(LOW), put(HIGH), lists(1, &[LOW, HIGH])];
        events.extend(takes(1, LOW));
        assert_eq!(first(events), Some(ViolationKind::PriorityInverted));
    }

    #[test]
    fn an_item_that_came_after_the_listing_counts_once_the_consumer_heard_of_it() {
        let mut unheard = vec![put(LOW), lists(1, &[LOW]), put(HIGH)];
        unheard.extend(takes(1, LOW));
        assert_eq!(first(unheard), None);
        let mut heard = vec![put(LOW), lists(1, &[LOW]), put(HIGH), hears(1)];
        heard.extend(takes(1, LOW));
        assert_eq!(first(heard), Some(ViolationKind::PriorityInverted));
        // Heard only after the take was sent: nothing it could do.
        let mut late = vec![put(LOW), lists(1, &[LOW]), put(HIGH)];
        let take = takes(1, LOW);
        late.extend([take[0].clone(), hears(1), take[1].clone()]);
        assert_eq!(first(late), None);
    }
}
