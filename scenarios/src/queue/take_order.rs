//! Take order: a queue's consumer never takes an item while one that comes before it, that it
//! knew of (or should have), was there for the taking. Under `Order::Priority`, one of higher
//! priority; under `Order::Sequence`, one of a lower sequence number: a single consumer takes
//! items in sequence order.
//!
//! Judged from the server's applied ops and what each session heard and sent. A consumer knows
//! the unclaimed items of its latest listing. A priority consumer that hears the queue's watch
//! fire (a change since that listing) knows its listing is stale and must list again before it
//! takes; a sequence consumer works through its listing first, by design. So a take (a `multi`
//! that deletes an item, or claims it) that the server applies is a violation when an
//! unclaimed item that comes before it stood then, and either it was in the consumer's latest
//! listing, or a priority consumer had heard its listing go stale before it sent the take. A
//! real server's trace has no applied ops: it is not judged.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpReply, OpResult, SessionId, Zxid};
use zklab_recipes::queue::{Order, CLAIM};
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::{changes, child_of, Change};

/// Priority order: broken when a priority queue's consumer took an item while one of higher
/// priority that it knew of stood there for the taking.
pub static PRIORITY_INVERTED: Property = Property::new("priority-inverted", "priority order");

/// Sequence order: broken when a queue's consumer took an item while one earlier in sequence that
/// its listing held stood for the taking.
pub static OUT_OF_SEQUENCE: Property = Property::new("out-of-sequence", "sequence order");

/// What one session knows of the queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
struct View {
    /// The unclaimed items of its latest listing it has not tried in vain.
    listing: BTreeSet<String>,
    /// It heard the watch fire since that listing.
    stale: bool,
    /// It had heard so when it sent its op in flight.
    sent_stale: bool,
}

/// A session, as a map key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// The take-order monitor of one queue's directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct TakeOrder {
    #[rename(keep)]
    dir: String,
    order: Order,
    /// The items standing, by name.
    items: BTreeSet<String>,
    /// The items claimed.
    claimed: BTreeSet<String>,
    /// The zxid of the last item put or taken: a listing served by a server that had not
    /// applied it (a lagging follower) may show an item already taken.
    #[rename(keep)]
    changed_at: Zxid,
    views: BTreeMap<Session, View>,
}

impl TakeOrder {
    /// A monitor of the queue whose items are the children of `dir`, taken in `order`.
    pub fn new(dir: &str, order: Order) -> Self {
        TakeOrder {
            dir: dir.to_owned(),
            order,
            items: BTreeSet::new(),
            claimed: BTreeSet::new(),
            changed_at: 0,
            views: BTreeMap::new(),
        }
    }

    /// What a take out of order breaks.
    fn property(&self) -> &'static Property {
        match self.order {
            Order::Priority => &PRIORITY_INVERTED,
            Order::Sequence => &OUT_OF_SEQUENCE,
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
                self.order.key(name).map(|_| name)
            }
            _ => None,
        }
    }

    /// An item passed over by a take of `item` by `session`: one that comes before it,
    /// standing and unclaimed, and known to the consumer.
    fn passed_over(&self, session: SessionId, item: &str) -> Option<String> {
        let key = self.order.key(item)?;
        let view = self.views.get(&Session(session))?;
        let heard = view.sent_stale && self.order == Order::Priority;
        self.items
            .iter()
            .filter(|other| !self.claimed.contains(*other))
            .filter(|other| heard || view.listing.contains(*other))
            .find(|other| {
                self.order.key(other).is_some_and(|other| match self.order {
                    Order::Priority => other.0 < key.0,
                    Order::Sequence => other < key,
                })
            })
            .cloned()
    }

    /// A consumer whose claim's reply was lost reads the claim node to learn whether the claim
    /// landed; one held by another session means it tried the item in vain, as when its claim
    /// fails, and it goes on with its listing.
    fn found_claimed(&mut self, session: SessionId, path: &str, owner: SessionId) {
        let Some(item) = self.child(path).and_then(|name| name.strip_suffix(CLAIM)) else {
            return;
        };
        if owner != session {
            self.tried_in_vain(session, item);
        }
    }

    /// `session` tried `item` and found it taken or claimed: it goes on with its listing, and may
    /// rightly pass the item over if it is given up later.
    fn tried_in_vain(&mut self, session: SessionId, item: &str) {
        if let Some(view) = self.views.get_mut(&Session(session)) {
            view.listing.remove(item);
        }
    }

    fn applied(
        &mut self,
        session: SessionId,
        zxid: Zxid,
        op: &Op,
        reply: &OpReply,
    ) -> Option<String> {
        if let (Op::GetChildren { path, .. }, Ok(OpResult::Children { children, .. })) = (op, reply)
        {
            if *path == self.dir && zxid >= self.changed_at {
                // Items made before the run (a model's setup) are known from a listing that
                // is up to date.
                let items = children
                    .iter()
                    .filter(|name| self.order.key(name).is_some());
                self.items.extend(items.cloned());
            }
            if *path == self.dir {
                let listing = children
                    .iter()
                    .filter(|name| self.order.key(name).is_some())
                    .filter(|name| !children.contains(&format!("{name}{CLAIM}")))
                    .cloned()
                    .collect();
                let view = self.views.entry(Session(session)).or_default();
                (view.listing, view.stale) = (listing, false);
            }
        }
        if let (Op::Exists { path, .. }, Ok(OpResult::Exists(Some(stat)))) = (op, reply) {
            self.found_claimed(session, path, stat.ephemeral_owner);
        }
        let succeeded = match reply {
            Ok(OpResult::Multi(results)) => results.iter().all(Result::is_ok),
            _ => false,
        };
        let found = match (succeeded, self.taken(op)) {
            (true, Some(item)) => self
                .passed_over(session, item)
                .map(|other| format!("session {session:#x} took {item} while {other} stood")),
            (false, Some(item)) => {
                self.tried_in_vain(session, item);
                None
            }
            _ => None,
        };
        for change in changes(op, reply) {
            match change {
                Change::Created { path, .. } => match self.child(path) {
                    Some(name) if self.order.key(name).is_some() => {
                        self.items.insert(name.to_owned());
                        self.changed_at = zxid;
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
                        if self.items.remove(name) {
                            self.changed_at = zxid;
                        }
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

impl Monitor for TakeOrder {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let message = match &entry.event {
            TraceEvent::Applied {
                session,
                zxid,
                op,
                reply,
                ..
            } => self.applied(*session, *zxid, op, reply)?,
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
        Some(Violation::new(self.property(), entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![self.property()]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{CreateMode, EventType, Stat, WatchedEvent};

    use super::*;
    use crate::monitor::traces::first_broken_in;
    use zklab_recipes::acl::Acls;

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
            acl: Acls::OPEN,
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

    fn first(events: Vec<TraceEvent>) -> Option<&'static Property> {
        first_in_order(Order::Priority, events)
    }

    fn first_in_order(order: Order, events: Vec<TraceEvent>) -> Option<&'static Property> {
        first_broken_in(TakeOrder::new("/q", order), events)
    }

    /// The same event at another zxid.
    fn at_zxid(zxid: Zxid, mut event: TraceEvent) -> TraceEvent {
        if let TraceEvent::Applied { zxid: at, .. } = &mut event {
            *at = zxid;
        }
        event
    }

    #[test]
    fn a_stale_listing_from_a_lagging_server_does_not_bring_back_an_item_taken() {
        const FIRST: &str = "p0-a-item-0000000001";
        const SECOND: &str = "p1-b-item-0000000002";
        let puts = vec![at_zxid(1, put(FIRST)), at_zxid(2, put(SECOND))];
        let take = |session, name, zxid| {
            takes(session, name)
                .into_iter()
                .map(move |e| at_zxid(zxid, e))
        };
        // The first item is taken at zxid 3; a follower at zxid 2 still lists it.
        let mut stale = puts.clone();
        stale.extend(take(3, FIRST, 3));
        stale.push(at_zxid(2, lists(1, &[FIRST, SECOND])));
        stale.extend(take(1, SECOND, 4));
        assert_eq!(first_in_order(Order::Sequence, stale), None);
        // With the first item still there, taking the second passes it over.
        let mut passed_over = puts;
        passed_over.push(at_zxid(2, lists(1, &[FIRST, SECOND])));
        passed_over.extend(take(1, SECOND, 3));
        assert_eq!(
            first_in_order(Order::Sequence, passed_over),
            Some(&OUT_OF_SEQUENCE)
        );
    }

    #[test]
    fn taking_a_lower_priority_item_over_a_listed_higher_one_inverts_priority() {
        let mut events = vec![put(LOW), put(HIGH), lists(1, &[LOW, HIGH])];
        events.extend(takes(1, LOW));
        assert_eq!(first(events), Some(&PRIORITY_INVERTED));
    }

    #[test]
    fn an_item_that_came_after_the_listing_counts_once_the_consumer_heard_of_it() {
        let mut unheard = vec![put(LOW), lists(1, &[LOW]), put(HIGH)];
        unheard.extend(takes(1, LOW));
        assert_eq!(first(unheard), None);
        let mut heard = vec![put(LOW), lists(1, &[LOW]), put(HIGH), hears(1)];
        heard.extend(takes(1, LOW));
        assert_eq!(first(heard), Some(&PRIORITY_INVERTED));
        // Heard only after the take was sent: nothing it could do.
        let mut late = vec![put(LOW), lists(1, &[LOW]), put(HIGH)];
        let take = takes(1, LOW);
        late.extend([take[0].clone(), hears(1), take[1].clone()]);
        assert_eq!(first(late), None);
    }

    #[test]
    fn a_sequence_consumer_taking_a_later_item_over_a_listed_earlier_one_is_out_of_sequence() {
        const EARLY: &str = "b-item-0000000001";
        const LATE: &str = "a-item-0000000002";
        let mut skipped = vec![put(EARLY), put(LATE), lists(1, &[LATE, EARLY])];
        skipped.extend(takes(1, LATE));
        let found = first_in_order(Order::Sequence, skipped);
        assert_eq!(found, Some(&OUT_OF_SEQUENCE));
        // An earlier item that came after the listing: the consumer works its listing first.
        let mut later = vec![put(LATE), lists(1, &[LATE]), put(EARLY), hears(1)];
        later.extend(takes(1, LATE));
        assert_eq!(first_in_order(Order::Sequence, later), None);
        // An earlier item claimed when listed: not there for the taking.
        let claim = format!("{EARLY}{CLAIM}");
        let mut claimed = vec![put(EARLY), put(LATE), lists(1, &[LATE, EARLY, &claim])];
        claimed.extend(takes(1, LATE));
        assert_eq!(first_in_order(Order::Sequence, claimed), None);
    }

    /// The 3-client locked-queue model's counterexample: a consumer whose claim was lost to
    /// ConnectionLoss finds the item claimed by another and goes on with its listing; the other
    /// session then expires, and its claim with it, before the consumer claims the next item.
    #[test]
    fn an_item_found_claimed_by_another_after_a_lost_claim_was_tried_in_vain() {
        const EARLY: &str = "s1-item-0000000000";
        const LATE: &str = "s2-item-0000000001";
        let claim = format!("/q/{EARLY}{CLAIM}");
        let claims = |session: SessionId, name: &str| {
            let op = Op::Multi(vec![
                Op::Check {
                    path: format!("/q/{name}"),
                    version: 0,
                },
                Op::Create {
                    path: format!("/q/{name}{CLAIM}"),
                    data: Vec::new(),
                    mode: CreateMode::Ephemeral,
                    acl: Acls::OPEN,
                },
            ]);
            let created = OpResult::Created {
                path: format!("/q/{name}{CLAIM}"),
                stat: Stat::default(),
            };
            applied(
                session,
                op,
                OpResult::Multi(vec![Ok(OpResult::Checked), Ok(created)]),
            )
        };
        let looks = |owner: SessionId| {
            let op = Op::Exists {
                path: claim.clone(),
                watch: false,
            };
            let stat = Stat {
                ephemeral_owner: owner,
                ..Stat::default()
            };
            applied(3, op, OpResult::Exists(Some(stat)))
        };
        let expires = TraceEvent::SessionEnded {
            client: 4,
            session: 4,
            expired: true,
            deleted: vec![claim.clone()],
        };
        let run = |owner| {
            vec![
                put(EARLY),
                put(LATE),
                lists(3, &[EARLY, LATE]),
                lists(4, &[EARLY, LATE]),
                claims(4, EARLY),
                looks(owner),
                expires.clone(),
                claims(3, LATE),
            ]
        };
        assert_eq!(first_in_order(Order::Sequence, run(4)), None);
        // Had it not looked, or found its own claim, the earlier item it knew of stood again.
        let mut unlooked = run(4);
        unlooked.remove(5);
        let found = first_in_order(Order::Sequence, unlooked);
        assert_eq!(found, Some(&OUT_OF_SEQUENCE));
        let found = first_in_order(Order::Sequence, run(3));
        assert_eq!(found, Some(&OUT_OF_SEQUENCE));
    }
}
