//! One-time watches: which sessions wait on which path, and which of them a change fires.
//!
//! Like ZooKeeper's two `WatchManager`s: data watches (set by `exists`, also on a missing node,
//! and by `getData`) and child watches (set by `getChildren`). A fired watch is removed.

use std::collections::{BTreeMap, BTreeSet};
use zklab_recipes::session_renaming::{RenameSessions, SessionIds, SessionRenaming, StableHasher};

use zklab_recipes::client::{EventType, Op, OpReply, OpResult, SessionId, WatchedEvent};

use crate::path;
use crate::server::Notification;

/// Sessions waiting on a path, per path.
type Table = BTreeMap<String, BTreeSet<SessionId>>;

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

    /// Leaves a data watch (fires on the node's creation, deletion or data change).
    pub fn add_data(&mut self, path: &str, session: SessionId) {
        add(&mut self.data, path, session);
    }

    /// Leaves a child watch (fires when a child is created or deleted, or the node is deleted).
    pub fn add_child(&mut self, path: &str, session: SessionId) {
        add(&mut self.child, path, session);
    }

    /// Whether the session holds a data watch on the path.
    pub fn has_data(&self, path: &str, session: SessionId) -> bool {
        self.data.get(path).is_some_and(|s| s.contains(&session))
    }

    /// Whether the session holds a child watch on the path.
    pub fn has_child(&self, path: &str, session: SessionId) -> bool {
        self.child.get(path).is_some_and(|s| s.contains(&session))
    }

    /// Whether no watch is set at all.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.child.is_empty()
    }

    /// A node was created at `path`: NodeCreated for its data watches, then NodeChildrenChanged
    /// for its parent's child watches.
    pub fn fire_created(&mut self, path: &str, out: &mut Vec<Notification>) {
        if let Some(sessions) = self.data.remove(path) {
            emit(out, sessions, EventType::NodeCreated, path, path);
        }
        self.fire_parent(path, out);
    }

    /// The node at `path` was deleted: NodeDeleted for its data watches and its child watches
    /// (once per session holding both), then NodeChildrenChanged for its parent's child watches.
    pub fn fire_deleted(&mut self, path: &str, out: &mut Vec<Notification>) {
        let data = self.data.remove(path);
        let child = self.child.remove(path);
        let sessions = match (data, child) {
            (Some(mut d), Some(c)) => {
                d.extend(c);
                Some(d)
            }
            (d, c) => d.or(c),
        };
        if let Some(sessions) = sessions {
            emit(out, sessions, EventType::NodeDeleted, path, path);
        }
        self.fire_parent(path, out);
    }

    /// The data of the node at `path` was set: NodeDataChanged for its data watches only.
    pub fn fire_data_changed(&mut self, path: &str, out: &mut Vec<Notification>) {
        if let Some(sessions) = self.data.remove(path) {
            emit(out, sessions, EventType::NodeDataChanged, path, path);
        }
    }

    /// Drops every watch the session holds (its session ended).
    pub fn remove_session(&mut self, session: SessionId) {
        for table in [&mut self.data, &mut self.child] {
            table.retain(|_, sessions| {
                sessions.remove(&session);
                !sessions.is_empty()
            });
        }
    }

    /// Takes every watch the session holds out of the tables: its data watches' paths, then its
    /// child watches', each sorted (its connection to this server is gone).
    pub fn take_session(&mut self, session: SessionId) -> (Vec<String>, Vec<String>) {
        let take = |table: &mut Table| {
            let mut paths = Vec::new();
            table.retain(|path, sessions| {
                if sessions.remove(&session) {
                    paths.push(path.clone());
                }
                !sessions.is_empty()
            });
            paths
        };
        let data = take(&mut self.data);
        let child = take(&mut self.child);
        (data, child)
    }

    fn fire_parent(&mut self, path: &str, out: &mut Vec<Notification>) {
        if self.child.is_empty() {
            return;
        }
        let parent = path::parent(path);
        if let Some(sessions) = self.child.remove(parent) {
            emit(out, sessions, EventType::NodeChildrenChanged, parent, path);
        }
    }
}

/// The watches one session's client holds, as it re-registers them after a reconnect
/// (ZooKeeper's `SetWatches`): data watches on nodes that existed when they were set, exists
/// watches on nodes that did not, and child watches.
///
/// The client holds a watch from the reply that set it until the event it fires arrives; one
/// whose reply was lost it never held, one whose event was lost it still holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SessionWatches {
    /// Paths of data watches (`getData`, or `exists` on a node that was there).
    pub data: Vec<String>,
    /// Paths of exists watches on nodes that were missing.
    pub exist: Vec<String>,
    /// Paths of child watches.
    pub child: Vec<String>,
}

impl SessionWatches {
    /// Whether there is nothing to re-register.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.exist.is_empty() && self.child.is_empty()
    }

    /// The client received `reply` to `op`: a read that asked for a watch and succeeded now
    /// holds one (an `exists` on a missing node, an exists watch).
    pub fn register(&mut self, op: &Op, reply: &OpReply) {
        let (list, path) = match (op, reply) {
            (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_))))
            | (Op::GetData { path, watch: true }, Ok(_)) => (&mut self.data, path),
            (Op::Exists { path, watch: true }, Ok(_)) => (&mut self.exist, path),
            (Op::GetChildren { path, watch: true }, Ok(_)) => (&mut self.child, path),
            _ => return,
        };
        if !list.contains(path) {
            list.push(path.clone());
        }
    }

    /// The client received `event`: the watches it fired are gone (a deletion ends every watch
    /// on the node, as ZooKeeper's client does). Whether any was held: an event no watch waits
    /// for reaches nobody.
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
        }
        held
    }
}

fn add(table: &mut Table, path: &str, session: SessionId) {
    match table.get_mut(path) {
        Some(sessions) => {
            sessions.insert(session);
        }
        None => {
            table.insert(path.to_owned(), BTreeSet::from([session]));
        }
    }
}

fn emit(
    out: &mut Vec<Notification>,
    sessions: BTreeSet<SessionId>,
    event_type: EventType,
    watched: &str,
    cause: &str,
) {
    out.extend(sessions.into_iter().map(|session| Notification {
        session,
        event: WatchedEvent {
            event_type,
            path: watched.to_owned(),
        },
        cause: cause.to_owned(),
    }));
}

impl RenameSessions for Watches {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        let table = |table: &Table| -> Table {
            table
                .iter()
                .map(|(path, sessions)| {
                    (
                        renaming.text(path),
                        sessions.iter().map(|&s| renaming.id(s)).collect(),
                    )
                })
                .collect()
        };
        Watches {
            data: table(&self.data),
            child: table(&self.child),
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        for table in [&self.data, &self.child] {
            hasher.write_unordered(table.iter(), |(path, sessions), hasher| {
                renaming.hash_text(path, hasher);
                sessions.hash_ids(renaming, hasher);
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
