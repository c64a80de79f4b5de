//! Watches: which sessions wait on which path, how, and which of them a change fires.
//!
//! Like ZooKeeper 3.8's two `WatchManager`s: data watches (set by `exists`, also on a missing
//! node, and by `getData`) and child watches (set by `getChildren`), each one-time, and the
//! persistent watches of `addWatch`, kept in both tables and never spent. A session has one
//! mode per path and table, the last one set: a one-time watch set where a persistent one
//! stands turns that table's watch one-time, as 3.8's `WatcherModeManager` does.

use std::collections::{BTreeMap, BTreeSet};
use zklab_recipes::session_renaming::{RenameSessions, SessionIds, SessionRenaming, StableHasher};

use zklab_recipes::client::{
    AddWatchMode, EventType, Op, OpReply, OpResult, SessionId, WatchedEvent, WatcherKind,
};

use zklab_recipes::parts::parents::at_or_under;

use crate::path;
use crate::server::Notification;

/// How a session's watch on a path fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum WatchMode {
    /// Once, for a change of the path itself; then it is gone.
    OneTime,
    /// For every change of the path itself.
    Persistent,
    /// For every change of the path and of every node under it, but never for a change of
    /// children.
    Recursive,
}

/// Sessions waiting on a path, each with its mode, per path.
type Table = BTreeMap<String, BTreeMap<SessionId, WatchMode>>;

/// The data and child watch tables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Watches {
    data: Table,
    child: Table,
}

impl Watches {
    /// No watches.
    pub fn new() -> Self {
        Self::default()
    }

    /// Leaves a one-time data watch (fires on the node's creation, deletion or data change).
    pub fn add_data(&mut self, path: &str, session: SessionId) {
        add(&mut self.data, path, session, WatchMode::OneTime);
    }

    /// Leaves a one-time child watch (fires when a child is created or deleted, or the node is
    /// deleted).
    pub fn add_child(&mut self, path: &str, session: SessionId) {
        add(&mut self.child, path, session, WatchMode::OneTime);
    }

    /// Leaves a persistent watch, in both tables (ZooKeeper's `DataTree.addWatch`).
    pub fn add_persistent(&mut self, path: &str, session: SessionId, mode: AddWatchMode) {
        let mode = match mode {
            AddWatchMode::Persistent => WatchMode::Persistent,
            AddWatchMode::PersistentRecursive => WatchMode::Recursive,
        };
        add(&mut self.data, path, session, mode);
        add(&mut self.child, path, session, mode);
    }

    /// Removes the session's watches of `kind` on `path`, whatever their mode: the child
    /// table's for `Children`, the data table's for `Data`, both for `Any`. Whether any was
    /// there (ZooKeeper answers NoWatcher otherwise).
    pub fn remove(&mut self, path: &str, session: SessionId, kind: WatcherKind) -> bool {
        let mut removed = false;
        for table in self.tables_of(kind) {
            if let Some(sessions) = table.get_mut(path) {
                removed |= sessions.remove(&session).is_some();
                if sessions.is_empty() {
                    table.remove(path);
                }
            }
        }
        removed
    }

    /// Whether a watch of `kind` stands on `path`: in ZooKeeper 3.8 (`WatchManager.
    /// containsWatcher`) any session's watch on the path answers, not only the asker's.
    pub fn stands(&self, path: &str, kind: WatcherKind) -> bool {
        let (data, child) = (self.data.contains_key(path), self.child.contains_key(path));
        match kind {
            WatcherKind::Children => child,
            WatcherKind::Data => data,
            WatcherKind::Any => data || child,
        }
    }

    fn tables_of(&mut self, kind: WatcherKind) -> Vec<&mut Table> {
        match kind {
            WatcherKind::Children => vec![&mut self.child],
            WatcherKind::Data => vec![&mut self.data],
            WatcherKind::Any => vec![&mut self.child, &mut self.data],
        }
    }

    /// Whether the session holds a one-time data watch on the path.
    pub fn has_data(&self, path: &str, session: SessionId) -> bool {
        mode(&self.data, path, session) == Some(WatchMode::OneTime)
    }

    /// Whether the session holds a one-time child watch on the path.
    pub fn has_child(&self, path: &str, session: SessionId) -> bool {
        mode(&self.child, path, session) == Some(WatchMode::OneTime)
    }

    /// Whether no watch is set at all.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.child.is_empty()
    }

    /// A node was created at `path`: NodeCreated for its data watches (and the recursive ones
    /// above it), then NodeChildrenChanged for its parent's child watches.
    pub fn fire_created(&mut self, path: &str, out: &mut Vec<Notification>) {
        trigger(
            &mut self.data,
            path,
            EventType::NodeCreated,
            path,
            None,
            out,
        );
        self.fire_parent(path, out);
    }

    /// The node at `path` was deleted: NodeDeleted for its data watches and its child watches
    /// (once per session holding both), then NodeChildrenChanged for its parent's child watches.
    pub fn fire_deleted(&mut self, path: &str, out: &mut Vec<Notification>) {
        let told = trigger(
            &mut self.data,
            path,
            EventType::NodeDeleted,
            path,
            None,
            out,
        );
        let deleted = EventType::NodeDeleted;
        trigger(&mut self.child, path, deleted, path, Some(&told), out);
        self.fire_parent(path, out);
    }

    /// The data of the node at `path` was set: NodeDataChanged for its data watches only.
    pub fn fire_data_changed(&mut self, path: &str, out: &mut Vec<Notification>) {
        let changed = EventType::NodeDataChanged;
        trigger(&mut self.data, path, changed, path, None, out);
    }

    /// Drops every watch the session holds (its session ended).
    pub fn remove_session(&mut self, session: SessionId) {
        self.take_session(session);
    }

    /// Takes every watch the session holds out of the tables: its one-time data watches'
    /// paths, its one-time child watches', its persistent and its recursive watches', each
    /// sorted (its connection to this server is gone).
    pub fn take_session(&mut self, session: SessionId) -> TakenWatches {
        let mut taken = TakenWatches::default();
        for (table, one_time) in [
            (&mut self.data, &mut taken.data),
            (&mut self.child, &mut taken.child),
        ] {
            table.retain(|path, sessions| {
                let list = match sessions.remove(&session) {
                    None => None,
                    Some(WatchMode::OneTime) => Some(&mut *one_time),
                    Some(WatchMode::Persistent) => Some(&mut taken.persistent),
                    Some(WatchMode::Recursive) => Some(&mut taken.recursive),
                };
                if let Some(list) = list {
                    list.insert(path.clone());
                }
                !sessions.is_empty()
            });
        }
        taken
    }

    fn fire_parent(&mut self, path: &str, out: &mut Vec<Notification>) {
        if self.child.is_empty() {
            return;
        }
        let parent = path::parent(path);
        let changed = EventType::NodeChildrenChanged;
        trigger(&mut self.child, parent, changed, path, None, out);
    }
}

/// The watches a session held on one server, by kind, as [`Watches::take_session`] takes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TakenWatches {
    /// Paths of one-time data watches.
    pub data: BTreeSet<String>,
    /// Paths of one-time child watches.
    pub child: BTreeSet<String>,
    /// Paths of persistent watches.
    pub persistent: BTreeSet<String>,
    /// Paths of persistent recursive watches.
    pub recursive: BTreeSet<String>,
}

/// The watches one session's client holds, as it re-registers them after a reconnect
/// (ZooKeeper's `SetWatches2`): data watches on nodes that existed when they were set, exists
/// watches on nodes that did not, child watches, persistent and persistent recursive watches.
///
/// The client holds a watch from the reply that set it until the event it fires arrives (a
/// persistent one until its removal); one whose reply was lost it never held, one whose event
/// was lost it still holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SessionWatches {
    /// Paths of data watches (`getData`, or `exists` on a node that was there).
    pub data: Vec<String>,
    /// Paths of exists watches on nodes that were missing.
    pub exist: Vec<String>,
    /// Paths of child watches.
    pub child: Vec<String>,
    /// Paths of persistent watches.
    pub persistent: Vec<String>,
    /// Paths of persistent recursive watches.
    pub recursive: Vec<String>,
}

impl SessionWatches {
    /// Whether there is nothing to re-register.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
            && self.exist.is_empty()
            && self.child.is_empty()
            && self.persistent.is_empty()
            && self.recursive.is_empty()
    }

    /// The client received `reply` to `op`: a read that asked for a watch and succeeded now
    /// holds one (an `exists` on a missing node, an exists watch), an `addWatch` a persistent
    /// one; a removal lets go of what ZooKeeper's client lets go of: child watches for
    /// `Children`, data and exists watches for `Data`, every watch on the path for `Any`.
    pub fn register(&mut self, op: &Op, reply: &OpReply) {
        let (list, path) = match (op, reply) {
            (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_))))
            | (Op::GetData { path, watch: true }, Ok(_)) => (&mut self.data, path),
            (Op::Exists { path, watch: true }, Ok(_)) => (&mut self.exist, path),
            (Op::GetChildren { path, watch: true }, Ok(_)) => (&mut self.child, path),
            (Op::AddWatch { path, mode }, Ok(_)) => match mode {
                AddWatchMode::Persistent => (&mut self.persistent, path),
                AddWatchMode::PersistentRecursive => (&mut self.recursive, path),
            },
            (Op::RemoveWatches { path, kind }, Ok(_)) => {
                let lists = match kind {
                    WatcherKind::Children => vec![&mut self.child],
                    WatcherKind::Data => vec![&mut self.data, &mut self.exist],
                    WatcherKind::Any => vec![
                        &mut self.data,
                        &mut self.exist,
                        &mut self.child,
                        &mut self.persistent,
                        &mut self.recursive,
                    ],
                };
                for list in lists {
                    list.retain(|held| held != path);
                }
                return;
            }
            _ => return,
        };
        if !list.contains(path) {
            list.push(path.clone());
        }
    }

    /// The client received `event`: the one-time watches it fired are gone (a deletion ends
    /// every one-time watch on the node, as ZooKeeper's client does). Whether any watch was
    /// held for it, persistent ones on the path or recursive ones on or above it included: an
    /// event no watch waits for reaches nobody.
    pub fn fire(&mut self, event: &WatchedEvent) -> bool {
        let path = event.path.as_str();
        let mut held = false;
        let mut drop = |list: &mut Vec<String>| {
            let before = list.len();
            list.retain(|watched| watched != path);
            held |= list.len() != before;
        };
        match event.event_type {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                drop(&mut self.data);
                drop(&mut self.exist);
            }
            EventType::NodeChildrenChanged => drop(&mut self.child),
            EventType::NodeDeleted => {
                drop(&mut self.data);
                drop(&mut self.exist);
                drop(&mut self.child);
            }
            EventType::DataWatchRemoved
            | EventType::ChildWatchRemoved
            | EventType::PersistentWatchRemoved => {}
        }
        held || self.persistent.iter().any(|watched| watched == path)
            || self
                .recursive
                .iter()
                .any(|watched| at_or_under(path, watched))
    }
}

fn add(table: &mut Table, path: &str, session: SessionId, mode: WatchMode) {
    match table.get_mut(path) {
        Some(sessions) => {
            sessions.insert(session, mode);
        }
        None => {
            table.insert(path.to_owned(), BTreeMap::from([(session, mode)]));
        }
    }
}

fn mode(table: &Table, path: &str, session: SessionId) -> Option<WatchMode> {
    table.get(path)?.get(&session).copied()
}

/// Fires `event_type` at `path` in one table (ZooKeeper's `triggerWatch`): the watches on the
/// path itself (one-time ones spent) and the recursive ones above it; recursive watches never
/// hear NodeChildrenChanged. Each session hears it once, unless it is in `told` (it heard this
/// change from the other table). Returns every session the change reached.
fn trigger(
    table: &mut Table,
    path: &str,
    event_type: EventType,
    cause: &str,
    told: Option<&BTreeSet<SessionId>>,
    out: &mut Vec<Notification>,
) -> BTreeSet<SessionId> {
    let children_changed = event_type == EventType::NodeChildrenChanged;
    let mut reached = BTreeSet::new();
    if let Some(sessions) = table.get_mut(path) {
        sessions.retain(|&session, mode| {
            if *mode != WatchMode::Recursive || !children_changed {
                reached.insert(session);
            }
            *mode != WatchMode::OneTime
        });
        if sessions.is_empty() {
            table.remove(path);
        }
    }
    if !children_changed {
        let mut above = path;
        while above != "/" {
            above = path::parent(above);
            let recursive = table.get(above).into_iter().flatten();
            reached.extend(
                recursive
                    .filter(|(_, mode)| **mode == WatchMode::Recursive)
                    .map(|(s, _)| *s),
            );
        }
    }
    let untold = reached
        .iter()
        .filter(|session| told.is_none_or(|told| !told.contains(session)));
    out.extend(untold.map(|&session| Notification {
        session,
        event: WatchedEvent {
            event_type,
            path: path.to_owned(),
        },
        cause: cause.to_owned(),
    }));
    reached
}

impl RenameSessions for Watches {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        let table = |table: &Table| -> Table {
            table
                .iter()
                .map(|(path, sessions)| {
                    let sessions = sessions.iter().map(|(&s, &mode)| (renaming.id(s), mode));
                    (renaming.text(path), sessions.collect())
                })
                .collect()
        };
        Watches {
            data: table(&self.data),
            child: table(&self.child),
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        use std::hash::Hash;
        for table in [&self.data, &self.child] {
            hasher.write_unordered(table.iter(), |(path, sessions), hasher| {
                renaming.hash_text(path, hasher);
                hasher.write_unordered(sessions.iter(), |(&session, mode), hasher| {
                    session.hash_ids(renaming, hasher);
                    mode.hash(hasher);
                });
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ops::{exists, get_children, get_data, note};

    /// Data watches and child watches, each a path and the session that set it.
    fn watching(data: &[(&str, SessionId)], child: &[(&str, SessionId)]) -> Watches {
        let mut w = Watches::new();
        for (path, session) in data {
            w.add_data(path, *session);
        }
        for (path, session) in child {
            w.add_child(path, *session);
        }
        w
    }

    /// What `fire` (a creation, deletion or data change) of `path` notifies.
    fn fired(
        w: &mut Watches,
        fire: fn(&mut Watches, &str, &mut Vec<Notification>),
        path: &str,
    ) -> Vec<Notification> {
        let mut out = Vec::new();
        fire(w, path, &mut out);
        out
    }

    #[test]
    fn create_fires_node_created_on_data_watches_and_children_changed_on_parent() {
        // Neither a child watch on the new node itself nor a data watch on the parent fires.
        let mut w = watching(
            &[("/p/c", 2), ("/p/c", 1), ("/p", 5)],
            &[("/p", 3), ("/p/c", 4)],
        );
        assert_eq!(
            fired(&mut w, Watches::fire_created, "/p/c"),
            [
                note(1, EventType::NodeCreated, "/p/c", "/p/c"),
                note(2, EventType::NodeCreated, "/p/c", "/p/c"),
                note(3, EventType::NodeChildrenChanged, "/p", "/p/c"),
            ]
        );
        assert!(w.has_child("/p/c", 4) && w.has_data("/p", 5));
    }

    #[test]
    fn child_of_root_fires_children_changed_on_root() {
        let mut w = watching(&[], &[("/", 1)]);
        assert_eq!(
            fired(&mut w, Watches::fire_created, "/a"),
            [note(1, EventType::NodeChildrenChanged, "/", "/a")]
        );
    }

    #[test]
    fn delete_fires_one_node_deleted_for_data_and_child_watches_and_parent_children_changed() {
        let data = [("/p/c", 1), ("/p", 4)];
        let mut w = watching(&data, &[("/p/c", 1), ("/p/c", 2), ("/p", 3)]);
        assert_eq!(
            fired(&mut w, Watches::fire_deleted, "/p/c"),
            [
                note(1, EventType::NodeDeleted, "/p/c", "/p/c"),
                note(2, EventType::NodeDeleted, "/p/c", "/p/c"),
                note(3, EventType::NodeChildrenChanged, "/p", "/p/c"),
            ]
        );
        assert!(w.has_data("/p", 4));
    }

    #[test]
    fn set_data_fires_data_watches_only() {
        let mut w = watching(&[("/a", 1)], &[("/a", 2), ("/", 3)]);
        assert_eq!(
            fired(&mut w, Watches::fire_data_changed, "/a"),
            [note(1, EventType::NodeDataChanged, "/a", "/a")]
        );
        assert!(w.has_child("/a", 2) && w.has_child("/", 3));
    }

    #[test]
    fn watches_are_one_time_and_set_once_per_session() {
        let mut w = watching(&[("/a", 1), ("/a", 1)], &[]);
        assert_eq!(fired(&mut w, Watches::fire_data_changed, "/a").len(), 1);
        assert!(fired(&mut w, Watches::fire_data_changed, "/a").is_empty());
        assert!(fired(&mut w, Watches::fire_deleted, "/a").is_empty());
        assert!(w.is_empty());
    }

    #[test]
    fn removing_a_session_drops_all_its_watches() {
        let mut w = watching(&[("/a", 1)], &[("/a", 1), ("/b", 1), ("/b", 2)]);
        w.remove_session(1);
        assert!(!w.has_data("/a", 1) && !w.has_child("/a", 1) && !w.has_child("/b", 1));
        assert!(w.has_child("/b", 2));
        w.remove_session(2);
        assert!(w.is_empty());
    }

    fn event(event_type: EventType, path: &str) -> WatchedEvent {
        WatchedEvent {
            event_type,
            path: path.to_owned(),
        }
    }

    #[test]
    fn a_client_holds_the_watches_of_the_reads_answered_by_kind_and_a_failed_read_none() {
        use zklab_recipes::client::{Stat, ZkError};
        let mut held = SessionWatches::default();
        let found = Ok(OpResult::Exists(Some(Stat::UNKNOWN)));
        held.register(&exists("/a", true), &found);
        held.register(&exists("/b", true), &Ok(OpResult::Exists(None)));
        held.register(&get_data("/c", true), &Err(ZkError::NoNode));
        let listing = OpResult::Children {
            children: Vec::new(),
            stat: Stat::UNKNOWN,
        };
        held.register(&get_children("/d", true), &Ok(listing));
        held.register(&exists("/e", false), &Ok(OpResult::Exists(None)));
        assert_eq!(held.data, vec!["/a"]);
        assert_eq!(held.exist, vec!["/b"]);
        assert_eq!(held.child, vec!["/d"]);
    }

    #[test]
    fn an_event_ends_the_watches_it_fired_and_one_nobody_holds_reaches_nobody() {
        let mut held = SessionWatches {
            data: vec!["/a".into()],
            exist: vec!["/b".into()],
            child: vec!["/a".into(), "/c".into()],
            ..SessionWatches::default()
        };
        assert!(held.fire(&event(EventType::NodeCreated, "/b")));
        assert!(!held.fire(&event(EventType::NodeCreated, "/b")));
        assert!(held.fire(&event(EventType::NodeChildrenChanged, "/c")));
        assert!(!held.fire(&event(EventType::NodeDataChanged, "/c")));
        // A deletion ends the data and the child watch on the node at once.
        assert!(held.fire(&event(EventType::NodeDeleted, "/a")));
        assert!(!held.fire(&event(EventType::NodeDeleted, "/a")));
        assert!(held.is_empty());
    }
}
