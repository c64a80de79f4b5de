//! Each handle on a session hears its own events: a fired watch goes to the handles whose reads
//! set it, news of the session to every handle. ZooKeeper's own client does so (its watch
//! manager hands a fired watch to the watchers registered on that path and kind, and a state
//! change to all of them), so any number of recipes and the application's own tasks share one
//! session without taking each other's events.
//!
//! [`Listeners`] is that routing for a client implementation: it learns who set which watch from
//! each watching read's reply, in the order the replies and events came off the wire, and keeps
//! one queue per handle ([`ListenerId`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use crate::client::{
    AddWatchMode, EventType, Op, OpReply, OpResult, SessionEvent, WatchedEvent, WatcherKind,
    ZkEvent,
};
use crate::parts::parents::dir_of;

/// One handle's place among a session's [`Listeners`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ListenerId(u64);

/// The handles of one session and the watches each of them holds.
#[derive(Debug, Default)]
pub struct Listeners {
    routing: Mutex<Routing>,
}

#[derive(Debug, Default)]
struct Routing {
    next: u64,
    queues: BTreeMap<ListenerId, Queue>,
    /// Who holds a data watch on each path: set by `getData`, or by `exists` on a node that
    /// exists.
    data: Watchers,
    /// Who holds an exists watch on each path: set by `exists` on a node that does not exist.
    exist: Watchers,
    /// Who holds a child watch on each path: set by `getChildren`.
    child: Watchers,
    /// Who holds a persistent watch on each path (`addWatch`): never spent by firing.
    persistent: Watchers,
    /// Who holds a persistent recursive watch on each path: it hears every node under it.
    recursive: Watchers,
    /// The session's stream has ended: nothing follows what is queued.
    ended: bool,
}

/// Who holds one kind of watch, by path.
type Watchers = BTreeMap<String, BTreeSet<ListenerId>>;

/// One handle's events not taken yet, and the task waiting for them.
#[derive(Debug, Default)]
struct Queue {
    events: VecDeque<ZkEvent>,
    waiting: Option<Waker>,
}

impl Queue {
    fn push(&mut self, event: ZkEvent) {
        self.events.push_back(event);
        if let Some(waiting) = self.waiting.take() {
            waiting.wake();
        }
    }
}

/// Whether `op` asks the server for a watch, or to remove some: its reply says whether it
/// got one, and which.
pub fn sets_watch(op: &Op) -> bool {
    matches!(
        op,
        Op::Exists { watch: true, .. }
            | Op::GetData { watch: true, .. }
            | Op::GetChildren { watch: true, .. }
            | Op::AddWatch { .. }
            | Op::RemoveWatches { .. }
    )
}

impl Listeners {
    /// A new handle, hearing the session's news from now on.
    pub fn add(&self) -> ListenerId {
        let mut routing = self.routing();
        let id = ListenerId(routing.next);
        routing.next += 1;
        routing.queues.insert(id, Queue::default());
        id
    }

    /// A handle gone: its queue and its watches are dropped, and the watches' events with them.
    pub fn remove(&self, listener: ListenerId) {
        let mut routing = self.routing();
        routing.queues.remove(&listener);
        for watchers in routing.every_kind() {
            watchers.retain(|_, holders| {
                holders.remove(&listener);
                !holders.is_empty()
            });
        }
    }

    /// Notes the watch `listener`'s `op` left, as its `reply` tells. Call it when the reply
    /// comes off the wire, before any event that came after it: an event is routed by the
    /// watches noted so far. A removal of watches takes them from every handle, each told by
    /// a removal event as ZooKeeper's client tells its watchers.
    pub fn note_reply(&self, listener: ListenerId, op: &Op, reply: &OpReply) {
        let mut routing = self.routing();
        let routing = &mut *routing;
        let (watchers, path) = match (op, reply) {
            (Op::RemoveWatches { path, kind }, Ok(_)) => {
                routing.remove_watches(path, *kind);
                return;
            }
            (Op::AddWatch { path, mode }, Ok(_)) => match mode {
                AddWatchMode::Persistent => (&mut routing.persistent, path),
                AddWatchMode::PersistentRecursive => (&mut routing.recursive, path),
            },
            (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_)))) => {
                (&mut routing.data, path)
            }
            (Op::Exists { path, watch: true }, Ok(OpResult::Exists(None))) => {
                (&mut routing.exist, path)
            }
            (Op::GetData { path, watch: true }, Ok(_)) => (&mut routing.data, path),
            (Op::GetChildren { path, watch: true }, Ok(_)) => (&mut routing.child, path),
            _ => return,
        };
        watchers.entry(path.clone()).or_default().insert(listener);
    }

    /// Routes an event off the wire: a fired watch to the handles holding it (each once, and the
    /// watch is spent), a session event to every handle. An expiry spends every watch.
    pub fn deliver(&self, event: ZkEvent) {
        let mut routing = self.routing();
        match &event {
            ZkEvent::Watch(watched) => {
                let holders = routing.take_holders(watched.event_type, &watched.path);
                routing.push_to(holders, &event);
            }
            ZkEvent::Session(state) => {
                if *state == SessionEvent::Expired {
                    for watchers in routing.every_kind() {
                        watchers.clear();
                    }
                }
                for queue in routing.queues.values_mut() {
                    queue.push(event.clone());
                }
            }
        }
    }

    /// Queues an event for `listener` alone: for a client library that hands each watching
    /// call a watcher of its own, and so routes fired watches itself.
    pub fn deliver_to(&self, listener: ListenerId, event: ZkEvent) {
        if let Some(queue) = self.routing().queues.get_mut(&listener) {
            queue.push(event);
        }
    }

    /// The session's stream has ended: every handle gets what is queued, then `None`.
    pub fn end(&self) {
        let mut routing = self.routing();
        routing.ended = true;
        for queue in routing.queues.values_mut() {
            if let Some(waiting) = queue.waiting.take() {
                waiting.wake();
            }
        }
    }

    /// `listener`'s next event; `None` once the stream has ended and the queue is drained (or
    /// the handle is gone). Pending until there is one, `cx` to be woken then.
    pub fn poll_next(&self, listener: ListenerId, cx: &mut Context<'_>) -> Poll<Option<ZkEvent>> {
        let mut routing = self.routing();
        let ended = routing.ended;
        let Some(queue) = routing.queues.get_mut(&listener) else {
            return Poll::Ready(None);
        };
        match queue.events.pop_front() {
            Some(event) => Poll::Ready(Some(event)),
            None if ended => Poll::Ready(None),
            None => {
                queue.waiting = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }

    /// `listener`'s next event if one is queued.
    pub fn try_next(&self, listener: ListenerId) -> Option<ZkEvent> {
        self.routing().queues.get_mut(&listener)?.events.pop_front()
    }

    fn routing(&self) -> MutexGuard<'_, Routing> {
        self.routing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Routing {
    fn every_kind(&mut self) -> [&mut Watchers; 5] {
        [
            &mut self.data,
            &mut self.exist,
            &mut self.child,
            &mut self.persistent,
            &mut self.recursive,
        ]
    }

    /// The handles a fired watch of `kind` on `path` reaches, their one-time watches spent: a
    /// creation or a change of data reaches data and exists watches, a deletion every kind, a
    /// change of children the child watches; any event reaches the persistent watches on the
    /// path and the recursive ones on it and above it, as ZooKeeper's client materializes it.
    fn take_holders(&mut self, kind: EventType, path: &str) -> BTreeSet<ListenerId> {
        let spent: &mut [&mut Watchers] = match kind {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                &mut [&mut self.data, &mut self.exist]
            }
            EventType::NodeDeleted => &mut [&mut self.data, &mut self.exist, &mut self.child],
            EventType::NodeChildrenChanged => &mut [&mut self.child],
            // The client's own word; the server never sends it.
            EventType::DataWatchRemoved
            | EventType::ChildWatchRemoved
            | EventType::PersistentWatchRemoved => &mut [],
        };
        let mut holders = BTreeSet::new();
        for watchers in spent {
            holders.extend(watchers.remove(path).unwrap_or_default());
        }
        let holding = |watchers: &Watchers, path: &str| {
            watchers
                .get(path)
                .into_iter()
                .flatten()
                .copied()
                .collect::<Vec<_>>()
        };
        holders.extend(holding(&self.persistent, path));
        let mut above = Some(path);
        while let Some(at) = above {
            holders.extend(holding(&self.recursive, at));
            above = (at != "/").then(|| dir_of(at));
        }
        holders
    }

    /// Takes the watches of `kind` on `path` from every handle, as ZooKeeper's client does
    /// when the server has removed them: child watches for `Children`, data and exists
    /// watches for `Data`, every watch, persistent ones too, for `Any`. Each holder hears
    /// one removal event per kind it held.
    fn remove_watches(&mut self, path: &str, kind: WatcherKind) {
        let mut removed: Vec<(EventType, BTreeSet<ListenerId>)> = Vec::new();
        let mut take = |event_type, watchers: &mut [&mut Watchers]| {
            let mut holders = BTreeSet::new();
            for watchers in watchers {
                holders.extend(watchers.remove(path).unwrap_or_default());
            }
            removed.push((event_type, holders));
        };
        let (data, child) = match kind {
            WatcherKind::Children => (false, true),
            WatcherKind::Data => (true, false),
            WatcherKind::Any => (true, true),
        };
        if data {
            take(
                EventType::DataWatchRemoved,
                &mut [&mut self.data, &mut self.exist],
            );
        }
        if child {
            take(EventType::ChildWatchRemoved, &mut [&mut self.child]);
        }
        if kind == WatcherKind::Any {
            let persistent = &mut [&mut self.persistent, &mut self.recursive];
            take(EventType::PersistentWatchRemoved, persistent);
        }
        for (event_type, holders) in removed {
            let event = ZkEvent::Watch(WatchedEvent {
                event_type,
                path: path.to_owned(),
            });
            self.push_to(holders, &event);
        }
    }

    fn push_to(&mut self, holders: BTreeSet<ListenerId>, event: &ZkEvent) {
        for listener in holders {
            if let Some(queue) = self.queues.get_mut(&listener) {
                queue.push(event.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Stat, WatchedEvent, ZkError};

    fn exists(path: &str) -> Op {
        Op::Exists {
            path: path.to_owned(),
            watch: true,
        }
    }

    fn watch(event_type: EventType, path: &str) -> ZkEvent {
        ZkEvent::Watch(WatchedEvent {
            event_type,
            path: path.to_owned(),
        })
    }

    fn queued(listeners: &Listeners, listener: ListenerId) -> Vec<ZkEvent> {
        std::iter::from_fn(|| listeners.try_next(listener)).collect()
    }

    #[test]
    fn a_watch_reaches_only_the_handle_that_set_it_and_news_reaches_all() {
        let listeners = Listeners::default();
        let (lock, barrier) = (listeners.add(), listeners.add());
        listeners.note_reply(
            lock,
            &exists("/l"),
            &Ok(OpResult::Exists(Some(Stat::default()))),
        );
        listeners.note_reply(barrier, &exists("/b"), &Ok(OpResult::Exists(None)));
        listeners.deliver(watch(EventType::NodeDeleted, "/l"));
        listeners.deliver(watch(EventType::NodeCreated, "/b"));
        let dropped = ZkEvent::Session(SessionEvent::Disconnected);
        listeners.deliver(dropped.clone());
        assert_eq!(
            queued(&listeners, lock),
            [watch(EventType::NodeDeleted, "/l"), dropped.clone()]
        );
        assert_eq!(
            queued(&listeners, barrier),
            [watch(EventType::NodeCreated, "/b"), dropped]
        );
    }

    #[test]
    fn a_watch_is_spent_once_and_each_holder_hears_it_once() {
        let listeners = Listeners::default();
        let (one, two) = (listeners.add(), listeners.add());
        let children = Op::GetChildren {
            path: "/d".to_owned(),
            watch: true,
        };
        let listed = Ok(OpResult::Children {
            children: Vec::new(),
            stat: Stat::default(),
        });
        let found = Ok(OpResult::Exists(Some(Stat::default())));
        listeners.note_reply(one, &children, &listed);
        listeners.note_reply(one, &exists("/d"), &found);
        listeners.note_reply(two, &children, &listed);
        listeners.deliver(watch(EventType::NodeDeleted, "/d"));
        listeners.deliver(watch(EventType::NodeDeleted, "/d"));
        assert_eq!(
            queued(&listeners, one),
            [watch(EventType::NodeDeleted, "/d")]
        );
        assert_eq!(
            queued(&listeners, two),
            [watch(EventType::NodeDeleted, "/d")]
        );
    }

    #[test]
    fn a_failed_read_or_a_gone_handle_holds_no_watch() {
        let listeners = Listeners::default();
        let (failed, gone, child) = (listeners.add(), listeners.add(), listeners.add());
        let get = Op::GetData {
            path: "/x".to_owned(),
            watch: true,
        };
        listeners.note_reply(failed, &get, &Err(ZkError::NoNode));
        listeners.note_reply(gone, &exists("/x"), &Ok(OpResult::Exists(None)));
        listeners.remove(gone);
        let children = Op::GetChildren {
            path: "/x".to_owned(),
            watch: true,
        };
        let listed = Ok(OpResult::Children {
            children: Vec::new(),
            stat: Stat::default(),
        });
        listeners.note_reply(child, &children, &listed);
        // A creation does not reach a child watch.
        listeners.deliver(watch(EventType::NodeCreated, "/x"));
        assert_eq!(queued(&listeners, failed), []);
        assert_eq!(queued(&listeners, child), []);
        assert_eq!(queued(&listeners, gone), []);
    }

    #[test]
    fn persistent_watches_hear_every_event_and_a_removal_tells_each_holder_once() {
        use crate::client::{AddWatchMode, WatcherKind};
        let listeners = Listeners::default();
        let (cache, node, other) = (listeners.add(), listeners.add(), listeners.add());
        let add = |path: &str, mode| Op::AddWatch {
            path: path.to_owned(),
            mode,
        };
        let added = Ok(OpResult::WatchAdded);
        listeners.note_reply(cache, &add("/t", AddWatchMode::PersistentRecursive), &added);
        listeners.note_reply(node, &add("/t/a", AddWatchMode::Persistent), &added);
        listeners.note_reply(node, &exists("/t/a"), &Ok(OpResult::Exists(None)));
        for _ in 0..2 {
            listeners.deliver(watch(EventType::NodeCreated, "/t/a"));
        }
        listeners.deliver(watch(EventType::NodeChildrenChanged, "/t/a"));
        listeners.deliver(watch(EventType::NodeDataChanged, "/t/a/b"));
        listeners.deliver(watch(EventType::NodeDataChanged, "/tx"));
        let created = watch(EventType::NodeCreated, "/t/a");
        let changed = watch(EventType::NodeChildrenChanged, "/t/a");
        assert_eq!(
            queued(&listeners, cache),
            [
                created.clone(),
                created.clone(),
                changed.clone(),
                watch(EventType::NodeDataChanged, "/t/a/b")
            ]
        );
        assert_eq!(
            queued(&listeners, node),
            [created.clone(), created, changed]
        );
        assert_eq!(queued(&listeners, other), []);
        let remove = |kind| Op::RemoveWatches {
            path: "/t/a".to_owned(),
            kind,
        };
        let removed = Ok(OpResult::WatchesRemoved);
        listeners.note_reply(other, &exists("/t/a"), &Ok(OpResult::Exists(None)));
        listeners.note_reply(other, &remove(WatcherKind::Data), &removed);
        listeners.note_reply(other, &remove(WatcherKind::Any), &removed);
        listeners.deliver(watch(EventType::NodeDeleted, "/t/a"));
        assert_eq!(
            queued(&listeners, other),
            [watch(EventType::DataWatchRemoved, "/t/a")]
        );
        assert_eq!(
            queued(&listeners, node),
            [watch(EventType::PersistentWatchRemoved, "/t/a")]
        );
        assert_eq!(
            queued(&listeners, cache),
            [watch(EventType::NodeDeleted, "/t/a")]
        );
    }

    #[test]
    fn an_expiry_spends_every_watch_and_the_end_drains_then_stops() {
        let listeners = Listeners::default();
        let holder = listeners.add();
        listeners.note_reply(holder, &exists("/x"), &Ok(OpResult::Exists(None)));
        let expired = ZkEvent::Session(SessionEvent::Expired);
        listeners.deliver(expired.clone());
        listeners.deliver(watch(EventType::NodeCreated, "/x"));
        listeners.end();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert_eq!(
            listeners.poll_next(holder, &mut cx),
            Poll::Ready(Some(expired))
        );
        assert_eq!(listeners.poll_next(holder, &mut cx), Poll::Ready(None));
    }
}
