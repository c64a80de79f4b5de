//! The pure ZooKeeper server: one data tree, its sessions and watches, applying one op at a time.

use zklab_recipes::client::{
    EventType, Op, OpReply, OpResult, SessionId, Stat, WatchedEvent, ZkError, Zxid,
};
use zklab_recipes::symmetry::RenameSessions;

use crate::path;
use crate::session::Sessions;
use crate::tree::{Tree, Undo};
use crate::watch::{SessionWatches, Watches};

/// A watch that fired: the session it belongs to, the event it gets, and the node whose
/// creation, deletion or data change caused it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Notification {
    /// The session that set the watch.
    pub session: SessionId,
    /// What the session receives.
    pub event: WatchedEvent,
    /// The path of the node that changed (for NodeChildrenChanged, the child, not the parent).
    pub cause: String,
}

/// What applying one op did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Applied {
    /// The reply the session gets.
    pub reply: OpReply,
    /// The op's zxid for a write (success or error transaction); the last zxid for a read.
    pub zxid: Zxid,
    /// The watches it fired, in the order ZooKeeper fires them.
    pub notifications: Vec<Notification>,
}

/// What ending a session (close or expiry) did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ended {
    /// The zxid of the closeSession transaction.
    pub zxid: Zxid,
    /// The session's ephemeral nodes, in the order they were deleted.
    pub deleted: Vec<String>,
    /// The watches of other sessions it fired.
    pub notifications: Vec<Notification>,
}

/// The order in which a session's end deletes its ephemerals. ZooKeeper walks a hash set, so
/// watchers hear those deletions in an order nobody may rely on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeletionOrder {
    /// By path: one fixed order, where a run must not branch on it (the model checker).
    ByPath,
    /// By a hash of each path with this key: the simulated ensemble derives the key from its
    /// seed and the session.
    Hashed(u64),
}

impl DeletionOrder {
    fn arrange(self, paths: &mut [String]) {
        if let DeletionOrder::Hashed(key) = self {
            paths.sort_by_cached_key(|path| keyed_hash(key, path));
        }
    }
}

/// FNV-1a over the path's bytes from a key-dependent start, then a finaliser that spreads it:
/// the same on every platform and every release, unlike the standard library's hasher.
fn keyed_hash(key: u64, path: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ key;
    for byte in path.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^ (hash >> 33)
}

/// The in-memory ZooKeeper: data tree, sessions, zxids, one-time watches.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Server {
    /// Every znode.
    tree: Tree,
    /// One-time data and child watches.
    watches: Watches,
    /// Live sessions and their ephemerals.
    sessions: Sessions,
    /// The zxid of the last transaction (0 before the first).
    #[rename(keep)]
    zxid: Zxid,
    /// Every transaction takes zxid 0 (see [`Server::without_zxids`]).
    #[rename(keep)]
    zxids_forgotten: bool,
}

impl Server {
    /// A fresh server: `/` and `/zookeeper` (with `config` and `quota`) exist, no sessions.
    pub fn new() -> Self {
        Server {
            tree: Tree::new(),
            watches: Watches::new(),
            sessions: Sessions::new(),
            zxid: 0,
            zxids_forgotten: false,
        }
    }

    /// A server that stamps every transaction with zxid 0, for a model of a recipe that never
    /// reads a zxid: two states that differ only by zxids are then one. The server itself never
    /// compares zxids (it stamps them on nodes, stats and replies), so everything else it does
    /// is the same as [`Server::new`]'s.
    pub fn without_zxids() -> Self {
        Server {
            zxids_forgotten: true,
            ..Server::new()
        }
    }

    /// The next transaction's zxid.
    fn next_zxid(&mut self) -> Zxid {
        if !self.zxids_forgotten {
            self.zxid = self.zxid.wrapping_add(1);
        }
        self.zxid
    }

    /// Opens a session; ids are 1, 2, 3, ... in opening order. Creating a session is a
    /// transaction, and takes a zxid, as on a real server.
    pub fn open_session(&mut self) -> SessionId {
        self.next_zxid();
        self.sessions.open()
    }

    /// Whether the session is open (neither closed nor expired).
    pub fn session_alive(&self, session: SessionId) -> bool {
        self.sessions.is_alive(session)
    }

    /// Applies one op for a session at server time `now_ms`. A malformed path is BadArguments
    /// before anything else and costs no zxid: ZooKeeper's clients refuse it without sending it
    /// (a multi with one bad path, whole). A dead session gets SessionExpired.
    pub fn apply(&mut self, session: SessionId, op: &Op, now_ms: i64) -> Applied {
        let reply = if let Err(error) = path::validate_op(op) {
            Err(error)
        } else if !self.sessions.is_alive(session) {
            Err(ZkError::SessionExpired)
        } else if op.is_write() {
            return self.apply_write(session, op, now_ms);
        } else {
            self.read(session, op)
        };
        Applied {
            reply,
            zxid: self.zxid,
            notifications: Vec::new(),
        }
    }

    /// Applies a write of a live session whose paths are valid: what [`Server::apply`] does
    /// once it has checked both, and what a follower does with a transaction its leader
    /// committed (the leader checked them).
    pub fn apply_write(&mut self, session: SessionId, op: &Op, now_ms: i64) -> Applied {
        let mut notifications = Vec::new();
        // Every transaction takes a zxid, an error transaction too.
        let zxid = self.next_zxid();
        let reply = match op {
            Op::Multi(ops) => self.multi(session, ops, zxid, now_ms, &mut notifications),
            _ => self.write(session, op, zxid, now_ms).map(|(result, undo)| {
                self.commit(session, op, &result, &undo, &mut notifications);
                result
            }),
        };
        Applied {
            reply,
            zxid: self.zxid,
            notifications,
        }
    }

    /// Applies an error transaction: a write that failed on the leader takes its zxid on a
    /// follower too, and changes nothing else there.
    pub fn apply_error(&mut self) -> Zxid {
        self.next_zxid()
    }

    /// Closes a session at its client's request. `None` if it was not alive. The server answers
    /// on the closing connection before dropping it, so the session's own watches on its
    /// ephemerals fire for it too.
    pub fn close_session(&mut self, session: SessionId, now_ms: i64) -> Option<Ended> {
        self.end_session(session, now_ms, true, DeletionOrder::ByPath)
    }

    /// Expires a session. `None` if it was not alive. Its connection is gone, so its own watches
    /// go first and its ephemerals' deletion never notifies it.
    pub fn expire_session(&mut self, session: SessionId, now_ms: i64) -> Option<Ended> {
        self.end_session(session, now_ms, false, DeletionOrder::ByPath)
    }

    /// Ends a session: the tree sees the same transaction for a close and an expiry. With
    /// `notify_self`, the watches the session left on its own ephemerals fire too: it still has a
    /// connection to hear them on (a close, or an expiry the server forces on a connected
    /// session). Its ephemerals go in `order`.
    pub fn end_session(
        &mut self,
        session: SessionId,
        _now_ms: i64,
        notify_self: bool,
        order: DeletionOrder,
    ) -> Option<Ended> {
        let mut ephemerals: Vec<String> = self.sessions.close(session)?.into_iter().collect();
        order.arrange(&mut ephemerals);
        if !notify_self {
            self.watches.remove_session(session);
        }
        let zxid = self.next_zxid();
        let mut notifications = Vec::new();
        let mut deleted = Vec::with_capacity(ephemerals.len());
        // Ephemerals have no children, so these deletes cannot fail; skip one that would.
        for path in ephemerals {
            if self.tree.delete(&path, -1, zxid).is_ok() {
                self.watches.fire_deleted(&path, &mut notifications);
                deleted.push(path);
            }
        }
        self.watches.remove_session(session);
        Some(Ended {
            zxid,
            deleted,
            notifications,
        })
    }

    /// Serves a read (`exists`, `getData`, `getChildren`, `sync`, a lone check) from this server's
    /// state as it stands, leaving the watch it asks for. A follower serves the reads of the
    /// sessions attached to it without looking the session up: it may not have applied the
    /// session's creation yet, and the leader decides whether a session lives.
    pub fn serve_read(&mut self, session: SessionId, op: &Op) -> Applied {
        let reply = match path::validate_op(op) {
            Err(error) => Err(error),
            Ok(()) if op.is_write() => Err(ZkError::BadArguments),
            Ok(()) => self.read(session, op),
        };
        Applied {
            reply,
            zxid: self.zxid,
            notifications: Vec::new(),
        }
    }

    /// Takes every watch `session` holds off this server, as its connection to it breaks.
    pub fn take_watches(&mut self, session: SessionId) -> SessionWatches {
        let (on_nodes, child) = self.watches.take_session(session);
        let (data, exist) = on_nodes
            .into_iter()
            .partition(|path| self.tree.get(path).is_some());
        SessionWatches { data, exist, child }
    }

    /// Re-registers a session's watches on this server, the client having seen every change up
    /// to zxid `seen` (ZooKeeper's `DataTree.setWatches`). What changed since fires at once: a
    /// data watch NodeDeleted if the node is gone or NodeDataChanged if its mzxid is newer; an
    /// exists watch NodeCreated if the node is there; a child watch NodeDeleted if the node is
    /// gone or NodeChildrenChanged if its pzxid is newer. The rest is left in place. An exists
    /// watch therefore misses a node created and deleted while its client was away.
    pub fn set_watches(
        &mut self,
        session: SessionId,
        seen: Zxid,
        watches: &SessionWatches,
    ) -> Vec<Notification> {
        let mut fired = Vec::new();
        let mut fire = |path: &str, event_type: EventType| {
            fired.push(Notification {
                session,
                event: WatchedEvent {
                    event_type,
                    path: path.to_owned(),
                },
                cause: path.to_owned(),
            });
        };
        for path in &watches.data {
            match self.tree.get(path) {
                None => fire(path, EventType::NodeDeleted),
                Some(node) if node.stat().mzxid > seen => fire(path, EventType::NodeDataChanged),
                Some(_) => self.watches.add_data(path, session),
            }
        }
        for path in &watches.exist {
            match self.tree.get(path) {
                Some(_) => fire(path, EventType::NodeCreated),
                None => self.watches.add_data(path, session),
            }
        }
        for path in &watches.child {
            match self.tree.get(path) {
                None => fire(path, EventType::NodeDeleted),
                Some(node) if node.stat().pzxid > seen => {
                    fire(path, EventType::NodeChildrenChanged);
                }
                Some(_) => self.watches.add_child(path, session),
            }
        }
        fired
    }

    /// The sorted child names of a node, or `None` if it does not exist.
    pub fn children(&self, path: &str) -> Option<Vec<String>> {
        self.tree
            .get(path)
            .map(|node| node.children.iter().cloned().collect())
    }

    /// A node's data and stat, or `None`.
    pub fn node(&self, path: &str) -> Option<(&[u8], zklab_recipes::client::Stat)> {
        self.tree
            .get(path)
            .map(|node| (node.data.as_slice(), node.stat()))
    }

    /// The ephemeral nodes a session owns, sorted.
    pub fn ephemerals(&self, session: SessionId) -> Vec<String> {
        self.sessions
            .ephemerals(session)
            .map_or_else(Vec::new, |paths| paths.iter().cloned().collect())
    }

    /// The zxid of the last transaction.
    pub fn last_zxid(&self) -> Zxid {
        self.zxid
    }

    /// A read: validates the path, answers from the tree, leaves a watch if asked. No zxid.
    fn read(&mut self, session: SessionId, op: &Op) -> OpReply {
        match op {
            Op::Exists { path, watch } => {
                // exists leaves its watch whether or not the node is there.
                if *watch {
                    self.watches.add_data(path, session);
                }
                Ok(OpResult::Exists(self.tree.stat(path)))
            }
            Op::GetData { path, watch } => {
                let node = self.tree.get(path).ok_or(ZkError::NoNode)?;
                let result = OpResult::Data {
                    data: node.data.clone(),
                    stat: node.stat(),
                };
                if *watch {
                    self.watches.add_data(path, session);
                }
                Ok(result)
            }
            Op::GetChildren { path, watch } => {
                let node = self.tree.get(path).ok_or(ZkError::NoNode)?;
                let result = OpResult::Children {
                    children: node.children.iter().cloned().collect(),
                    stat: node.stat(),
                };
                if *watch {
                    self.watches.add_child(path, session);
                }
                Ok(result)
            }
            Op::Check { path, version } => {
                self.tree.check(path, *version)?;
                Ok(OpResult::Checked)
            }
            Op::Sync { .. } => Ok(OpResult::Synced),
            // `apply` sends every write elsewhere.
            Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Multi(_) => {
                Err(ZkError::BadArguments)
            }
        }
    }

    /// One create, delete, set_data or check against the tree only, in ZooKeeper's error order.
    /// Sessions and watches are left to [`Server::commit`], so that a multi can still roll back.
    fn write(
        &mut self,
        session: SessionId,
        op: &Op,
        zxid: Zxid,
        now_ms: i64,
    ) -> Result<(OpResult, Undo), ZkError> {
        match op {
            Op::Create { path, data, mode } => {
                // The config node (which always exists) grants no CREATE: NoAuth comes after
                // the parent's NoNode and before NodeExists.
                if path::parent(path) == path::CONFIG {
                    return Err(ZkError::NoAuth);
                }
                let owner = if mode.is_ephemeral() { session } else { 0 };
                let (path, stat, undo) =
                    self.tree
                        .create(path, mode.is_sequential(), data, owner, zxid, now_ms)?;
                Ok((OpResult::Created { path, stat }, undo))
            }
            Op::Delete { path, version } => {
                if path::special(path) {
                    return Err(ZkError::BadArguments);
                }
                // Deleting needs DELETE on the parent, checked before the node is looked up.
                if path::parent(path) == path::CONFIG {
                    return Err(ZkError::NoAuth);
                }
                let undo = self.tree.delete(path, *version, zxid)?;
                Ok((OpResult::Deleted, undo))
            }
            Op::SetData {
                path,
                data,
                version,
            } => {
                // The config node grants no WRITE: NoAuth before BadVersion.
                if path == path::CONFIG {
                    return Err(ZkError::NoAuth);
                }
                let (stat, undo) = self.tree.set_data(path, data, *version, zxid, now_ms)?;
                Ok((OpResult::SetData(stat), undo))
            }
            Op::Check { path, version } => {
                self.tree.check(path, *version)?;
                Ok((OpResult::Checked, Undo::Nothing))
            }
            Op::Exists { .. }
            | Op::GetData { .. }
            | Op::GetChildren { .. }
            | Op::Sync { .. }
            | Op::Multi(_) => Err(ZkError::BadArguments),
        }
    }

    /// The session-table and watch side of a successful `write`: record or forget ephemerals and
    /// fire the watches, in ZooKeeper's order.
    fn commit(
        &mut self,
        session: SessionId,
        op: &Op,
        result: &OpResult,
        undo: &Undo,
        out: &mut Vec<Notification>,
    ) {
        match (op, result) {
            (Op::Create { mode, .. }, OpResult::Created { path, .. }) => {
                if mode.is_ephemeral() {
                    self.sessions.add_ephemeral(session, path);
                }
                self.watches.fire_created(path, out);
            }
            (Op::Delete { path, .. }, _) => {
                if let Undo::Delete { node, .. } = undo {
                    if node.ephemeral_owner != 0 {
                        self.sessions.remove_ephemeral(node.ephemeral_owner, path);
                    }
                }
                self.watches.fire_deleted(path, out);
            }
            (Op::SetData { path, .. }, _) => self.watches.fire_data_changed(path, out),
            _ => {}
        }
    }

    /// A multi, all or nothing: the ops run in order against the tree; on the first failure the
    /// earlier ones are undone in reverse and nothing else changes; on success the sessions and
    /// watches see every op in order.
    fn multi(
        &mut self,
        session: SessionId,
        ops: &[Op],
        zxid: Zxid,
        now_ms: i64,
        out: &mut Vec<Notification>,
    ) -> OpReply {
        let allowed = |op: &Op| {
            matches!(
                op,
                Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Check { .. }
            )
        };
        if !ops.iter().all(allowed) {
            return Err(ZkError::BadArguments);
        }
        let mut done: Vec<(OpResult, Undo)> = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            match self.write(session, op, zxid, now_ms) {
                Ok(step) => done.push(step),
                Err(code) => {
                    for (op, (result, undo)) in ops.iter().zip(done).rev() {
                        let path = match &result {
                            OpResult::Created { path, .. } => path.as_str(),
                            _ => op.path(),
                        };
                        self.tree.undo(path, undo);
                    }
                    let mut results = Vec::with_capacity(ops.len());
                    results.extend((0..i).map(|_| Ok(OpResult::RolledBack)));
                    results.push(Err(code));
                    results.extend((i + 1..ops.len()).map(|_| Err(ZkError::RuntimeInconsistency)));
                    return Ok(OpResult::Multi(results));
                }
            }
        }
        for (op, (result, undo)) in ops.iter().zip(&done) {
            self.commit(session, op, result, undo, out);
        }
        Ok(OpResult::Multi(
            done.into_iter()
                .map(|(result, _)| match result {
                    // ZooKeeper answers a create inside a multi with its path only.
                    OpResult::Created { path, .. } => Ok(OpResult::Created {
                        path,
                        stat: Stat::UNKNOWN,
                    }),
                    result => Ok(result),
                })
                .collect(),
        ))
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn renaming_sessions_swaps_owners_names_and_watches_everywhere() {
        use zklab_recipes::client::CreateMode;
        use zklab_recipes::symmetry::{session_guid, RenameSessions, SessionRenaming};
        let mut server = Server::new();
        let (a, b) = (server.open_session(), server.open_session());
        let dir = Op::Create {
            path: "/l".to_owned(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        };
        server.apply(a, &dir, 0);
        let contend = |s: i64| Op::Create {
            path: format!("/l/{}-lock-", session_guid(s)),
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
        };
        server.apply(a, &contend(a), 0);
        server.apply(b, &contend(b), 0);
        let first = format!("/l/{}-lock-0000000000", session_guid(a));
        server.apply(
            b,
            &Op::Exists {
                path: first.clone(),
                watch: true,
            },
            0,
        );

        let swap = SessionRenaming::new([(a, b), (b, a)]);
        let swapped = server.rename_sessions(&swap);
        let renamed_first = format!("/l/{}-lock-0000000000", session_guid(b));
        assert_eq!(
            swapped
                .node(&renamed_first)
                .map(|(_, stat)| stat.ephemeral_owner),
            Some(b)
        );
        assert_eq!(swapped.ephemerals(b), vec![renamed_first.clone()]);
        assert!(swapped
            .node(&first)
            .is_none_or(|(_, stat)| stat.ephemeral_owner == a));
        // The watch moved with its session: deleting the renamed node notifies the renamed watcher.
        let mut after = swapped.clone();
        let fired = after
            .apply(
                b,
                &Op::Delete {
                    path: renamed_first,
                    version: -1,
                },
                0,
            )
            .notifications;
        assert_eq!(fired.iter().map(|n| n.session).collect::<Vec<_>>(), vec![a]);
        assert_eq!(
            swapped.rename_sessions(&swap),
            server,
            "a swap undone is the identity"
        );
    }

    use super::*;
    use std::collections::BTreeSet;
    use zklab_recipes::client::{CreateMode, EventType, Stat};

    fn create(path: &str, mode: CreateMode) -> Op {
        Op::Create {
            path: path.to_owned(),
            data: Vec::new(),
            mode,
        }
    }

    fn persistent(path: &str) -> Op {
        create(path, CreateMode::Persistent)
    }

    fn delete(path: &str, version: i32) -> Op {
        Op::Delete {
            path: path.to_owned(),
            version,
        }
    }

    fn set(path: &str, data: &[u8], version: i32) -> Op {
        Op::SetData {
            path: path.to_owned(),
            data: data.to_vec(),
            version,
        }
    }

    fn check(path: &str, version: i32) -> Op {
        Op::Check {
            path: path.to_owned(),
            version,
        }
    }

    fn exists(path: &str, watch: bool) -> Op {
        Op::Exists {
            path: path.to_owned(),
            watch,
        }
    }

    fn get_data(path: &str, watch: bool) -> Op {
        Op::GetData {
            path: path.to_owned(),
            watch,
        }
    }

    fn get_children(path: &str, watch: bool) -> Op {
        Op::GetChildren {
            path: path.to_owned(),
            watch,
        }
    }

    fn note(session: SessionId, event_type: EventType, path: &str, cause: &str) -> Notification {
        Notification {
            session,
            event: WatchedEvent {
                event_type,
                path: path.to_owned(),
            },
            cause: cause.to_owned(),
        }
    }

    /// Applies an op that must succeed, returning its result.
    fn ok(server: &mut Server, session: SessionId, op: Op) -> OpResult {
        server
            .apply(session, &op, 0)
            .reply
            .unwrap_or_else(|e| panic!("{op:?}: {e:?}"))
    }

    fn err(server: &mut Server, session: SessionId, op: Op) -> ZkError {
        server.apply(session, &op, 0).reply.unwrap_err()
    }

    #[test]
    fn new_server_has_root_and_zookeeper_nodes() {
        let s = Server::new();
        assert_eq!(s.children("/"), Some(vec!["zookeeper".to_owned()]));
        assert_eq!(
            s.children("/zookeeper"),
            Some(vec!["config".to_owned(), "quota".to_owned()])
        );
        let config = Stat {
            aversion: -1,
            ..Stat::default()
        };
        assert_eq!(s.node("/zookeeper/config"), Some((&b""[..], config)));
        assert_eq!(
            s.node("/zookeeper/quota"),
            Some((&b""[..], Stat::default()))
        );
        assert_eq!(
            s.node("/").unwrap().1,
            Stat {
                cversion: -1,
                num_children: 1,
                ..Stat::default()
            }
        );
        assert_eq!(s.last_zxid(), 0);
        assert_eq!(s, Server::default());
    }

    #[test]
    fn every_write_consumes_one_zxid_and_stamps_the_stat() {
        let mut s = Server::new();
        let a = s.open_session();
        let applied = s.apply(
            a,
            &Op::Create {
                path: "/x".into(),
                data: b"d".to_vec(),
                mode: CreateMode::Persistent,
            },
            77,
        );
        // The session's creation took zxid 1.
        assert_eq!(applied.zxid, 2);
        let Ok(OpResult::Created { path, stat }) = applied.reply else {
            panic!()
        };
        assert_eq!(path, "/x");
        assert_eq!(
            stat,
            Stat {
                czxid: 2,
                mzxid: 2,
                pzxid: 2,
                ctime: 77,
                mtime: 77,
                data_length: 1,
                ..Stat::default()
            }
        );
        assert_eq!(s.node("/").unwrap().1.pzxid, 2);
        let applied = s.apply(a, &set("/x", b"d", -1), 88);
        assert_eq!(applied.zxid, 3);
        assert_eq!(
            applied.reply,
            Ok(OpResult::SetData(Stat {
                czxid: 2,
                mzxid: 3,
                pzxid: 2,
                ctime: 77,
                mtime: 88,
                version: 1,
                data_length: 1,
                ..Stat::default()
            }))
        );
        assert_eq!(s.apply(a, &delete("/x", 1), 0).zxid, 4);
        assert_eq!(s.node("/").unwrap().1.pzxid, 4);
        assert_eq!(s.apply(a, &Op::Multi(vec![]), 0).zxid, 5);
        assert_eq!(s.last_zxid(), 5);
    }

    #[test]
    fn a_server_without_zxids_answers_the_same_but_for_the_zxids() {
        let ops = [
            Op::Create {
                path: "/x".into(),
                data: b"d".to_vec(),
                mode: CreateMode::EphemeralSequential,
            },
            set("/x0000000000", b"e", 0),
            set("/x0000000000", b"f", 0),
            delete("/x0000000000", 1),
        ];
        let (mut stamped, mut blind) = (Server::new(), Server::without_zxids());
        let (a, b) = (stamped.open_session(), blind.open_session());
        assert_eq!(a, b);
        for op in &ops {
            let (x, y) = (stamped.apply(a, op, 5), blind.apply(b, op, 5));
            assert_eq!(y.zxid, 0);
            let forget = |reply: OpReply| match reply {
                Ok(OpResult::Created { path, stat }) => Ok(OpResult::Created {
                    path,
                    stat: Stat {
                        czxid: 0,
                        mzxid: 0,
                        pzxid: 0,
                        ..stat
                    },
                }),
                Ok(OpResult::SetData(stat)) => Ok(OpResult::SetData(Stat {
                    czxid: 0,
                    mzxid: 0,
                    pzxid: 0,
                    ..stat
                })),
                other => other,
            };
            assert_eq!(forget(x.reply), y.reply, "{op:?}");
        }
        assert_eq!(blind.last_zxid(), 0);
        assert_eq!(blind.node("/").unwrap().1.pzxid, 0);
    }

    #[test]
    fn failed_write_consumes_a_zxid() {
        let mut s = Server::new();
        let a = s.open_session();
        let base = s.last_zxid();
        let cases = [
            persistent("/missing/x"),
            delete("/nope", -1),
            set("/nope", b"", -1),
        ];
        for (i, op) in cases.into_iter().enumerate() {
            let applied = s.apply(a, &op, 0);
            assert!(applied.reply.is_err(), "{op:?}");
            assert_eq!(applied.zxid, base + i as Zxid + 1);
        }
        // A failed multi too, and one with a forbidden op.
        let applied = s.apply(a, &Op::Multi(vec![delete("/nope", -1)]), 0);
        assert!(matches!(applied.reply, Ok(OpResult::Multi(_))));
        assert_eq!(applied.zxid, base + 4);
        let forbidden = Op::Multi(vec![exists("/", false)]);
        assert_eq!(s.apply(a, &forbidden, 0).zxid, base + 5);
        // A malformed path never reaches the server: the client refuses it.
        let applied = s.apply(a, &persistent("bad"), 0);
        assert_eq!(applied.reply, Err(ZkError::BadArguments));
        assert_eq!(s.last_zxid(), base + 5);
    }

    #[test]
    fn reads_lone_check_and_sync_consume_no_zxid() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/x"));
        let reads = [
            exists("/x", true),
            exists("/nope", false),
            get_data("/x", true),
            get_data("/nope", false),
            get_children("/x", true),
            check("/x", 0),
            check("/x", 5),
            check("/nope", -1),
            Op::Sync { path: "/x".into() },
            Op::Sync { path: "bad".into() },
        ];
        let base = s.last_zxid();
        for op in reads {
            assert_eq!(s.apply(a, &op, 0).zxid, base, "{op:?}");
        }
        assert_eq!(s.last_zxid(), base);
    }

    #[test]
    fn dead_session_gets_session_expired_and_changes_nothing() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        ok(&mut s, a, exists("/x", true));
        s.expire_session(b, 0).unwrap();
        let before = s.clone();
        for session in [b, 0, 99, -5] {
            for op in [
                persistent("/x"),
                exists("/x", true),
                get_data("/", true),
                Op::Multi(vec![persistent("/x")]),
            ] {
                let applied = s.apply(session, &op, 0);
                assert_eq!(applied.reply, Err(ZkError::SessionExpired));
                assert_eq!(applied.zxid, before.last_zxid());
                assert!(applied.notifications.is_empty());
            }
        }
        assert_eq!(s, before);
        assert!(!s.session_alive(b) && s.session_alive(a));
    }

    #[test]
    fn create_error_precedence_bad_path_no_node_node_exists_no_children_for_ephemerals() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, create("/e", CreateMode::Ephemeral));
        // A bad path wins over a missing parent.
        assert_eq!(
            err(&mut s, a, persistent("/missing/./x")),
            ZkError::BadArguments
        );
        assert_eq!(
            err(&mut s, a, persistent("/missing/x/")),
            ZkError::BadArguments
        );
        assert_eq!(err(&mut s, a, persistent("/missing/x")), ZkError::NoNode);
        // A missing parent wins over the (ephemeral) rest.
        assert_eq!(err(&mut s, a, persistent("/e/x/y")), ZkError::NoNode);
        assert_eq!(err(&mut s, a, persistent("/e")), ZkError::NodeExists);
        assert_eq!(err(&mut s, a, persistent("/")), ZkError::NodeExists);
        assert_eq!(
            err(&mut s, a, persistent("/e/x")),
            ZkError::NoChildrenForEphemerals
        );
        assert_eq!(
            err(&mut s, a, create("/e/x", CreateMode::EphemeralSequential)),
            ZkError::NoChildrenForEphemerals
        );
        // Nothing of that touched /e's counter.
        assert_eq!(s.node("/e").unwrap().1.cversion, 0);
    }

    #[test]
    fn sequential_create_appends_parent_counter_to_valid_prefix() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/q"));
        let got = |r: OpResult| match r {
            OpResult::Created { path, .. } => path,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            got(ok(
                &mut s,
                a,
                create("/q/", CreateMode::PersistentSequential)
            )),
            "/q/0000000000"
        );
        assert_eq!(
            got(ok(
                &mut s,
                a,
                create("/q/n-", CreateMode::EphemeralSequential)
            )),
            "/q/n-0000000001"
        );
        assert_eq!(
            got(ok(&mut s, a, create("/", CreateMode::PersistentSequential))),
            "/0000000001"
        );
        assert_eq!(
            err(&mut s, a, create("/q/", CreateMode::Persistent)),
            ZkError::BadArguments
        );
    }

    #[test]
    fn counter_wrap_gives_negative_sequence_names() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/q"));
        s.tree.set_counter("/q", -1);
        let r = ok(&mut s, a, create("/q/n", CreateMode::PersistentSequential));
        assert!(
            matches!(r, OpResult::Created { ref path, .. } if path == "/q/n-000000001"),
            "{r:?}"
        );
    }

    #[test]
    fn delete_error_precedence_no_node_before_bad_version_before_not_empty() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/a"));
        ok(&mut s, a, persistent("/a/b"));
        assert_eq!(err(&mut s, a, delete("/a/", 7)), ZkError::BadArguments);
        assert_eq!(err(&mut s, a, delete("/x", 7)), ZkError::NoNode);
        assert_eq!(err(&mut s, a, delete("/a", 7)), ZkError::BadVersion);
        assert_eq!(err(&mut s, a, delete("/a", 0)), ZkError::NotEmpty);
        assert_eq!(ok(&mut s, a, delete("/a/b", 0)), OpResult::Deleted);
        assert_eq!(ok(&mut s, a, delete("/a", -1)), OpResult::Deleted);
        assert_eq!(s.children("/"), Some(vec!["zookeeper".to_owned()]));
    }

    #[test]
    fn set_data_error_precedence_no_node_before_bad_version() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/a"));
        assert_eq!(
            err(&mut s, a, set("/a/../a", b"", 9)),
            ZkError::BadArguments
        );
        assert_eq!(err(&mut s, a, set("/x", b"", 9)), ZkError::NoNode);
        assert_eq!(err(&mut s, a, set("/a", b"", 9)), ZkError::BadVersion);
        assert!(matches!(
            ok(&mut s, a, set("/a", b"", 0)),
            OpResult::SetData(Stat { version: 1, .. })
        ));
    }

    #[test]
    fn special_nodes_cannot_be_deleted_and_config_is_read_only() {
        let mut s = Server::new();
        let a = s.open_session();
        for p in ["/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"] {
            assert_eq!(err(&mut s, a, delete(p, -1)), ZkError::BadArguments, "{p}");
        }
        // The rest of /zookeeper is an ordinary tree.
        assert!(matches!(
            ok(&mut s, a, persistent("/zookeeper/x")),
            OpResult::Created { .. }
        ));
        assert_eq!(ok(&mut s, a, delete("/zookeeper/x", -1)), OpResult::Deleted);
        assert_eq!(
            err(&mut s, a, delete("/zookeeper/nope", -1)),
            ZkError::NoNode
        );
        assert!(matches!(
            ok(
                &mut s,
                a,
                create("/zookeeper/quota/", CreateMode::PersistentSequential)
            ),
            OpResult::Created { .. }
        ));
        // The config node's ACL is read-only for everyone.
        assert_eq!(
            err(&mut s, a, persistent("/zookeeper/config/x")),
            ZkError::NoAuth
        );
        assert_eq!(
            err(&mut s, a, delete("/zookeeper/config/x", -1)),
            ZkError::NoAuth
        );
        assert_eq!(
            err(&mut s, a, set("/zookeeper/config", b"", 7)),
            ZkError::NoAuth
        );
        assert_eq!(
            err(&mut s, a, persistent("/zookeeper/config/x/y")),
            ZkError::NoNode
        );
        assert_eq!(
            err(&mut s, a, persistent("/zookeeper")),
            ZkError::NodeExists
        );
        assert!(matches!(
            ok(&mut s, a, persistent("/zookeeperx")),
            OpResult::Created { .. }
        ));
        assert_eq!(
            s.children("/zookeeper"),
            Some(vec!["config".to_owned(), "quota".to_owned()])
        );
    }

    #[test]
    fn exists_on_missing_node_sets_watch() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        assert_eq!(ok(&mut s, a, exists("/x", true)), OpResult::Exists(None));
        let applied = s.apply(b, &persistent("/x"), 0);
        assert_eq!(
            applied.notifications,
            [note(a, EventType::NodeCreated, "/x", "/x")]
        );
        // One-time: a second change does not fire it again.
        assert!(s.apply(b, &set("/x", b"", -1), 0).notifications.is_empty());
    }

    #[test]
    fn exists_on_existing_node_returns_stat_and_sets_data_watch() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/x"));
        let stat = s.node("/x").unwrap().1;
        assert_eq!(
            ok(&mut s, a, exists("/x", true)),
            OpResult::Exists(Some(stat))
        );
        let applied = s.apply(a, &set("/x", b"v", -1), 0);
        assert_eq!(
            applied.notifications,
            [note(a, EventType::NodeDataChanged, "/x", "/x")]
        );
    }

    #[test]
    fn get_data_on_missing_node_sets_no_watch() {
        let mut s = Server::new();
        let a = s.open_session();
        assert_eq!(err(&mut s, a, get_data("/x", true)), ZkError::NoNode);
        assert!(s.watches.is_empty());
        assert!(s.apply(a, &persistent("/x"), 0).notifications.is_empty());
    }

    #[test]
    fn get_children_on_missing_node_sets_no_watch() {
        let mut s = Server::new();
        let a = s.open_session();
        assert_eq!(err(&mut s, a, get_children("/x", true)), ZkError::NoNode);
        assert!(s.watches.is_empty());
        ok(&mut s, a, persistent("/x"));
        assert!(s.apply(a, &persistent("/x/c"), 0).notifications.is_empty());
    }

    #[test]
    fn reads_with_bad_path_are_bad_arguments() {
        let mut s = Server::new();
        let a = s.open_session();
        for op in [
            exists("", true),
            get_data("/a/", true),
            get_children("x", true),
            check("//", -1),
        ] {
            assert_eq!(err(&mut s, a, op), ZkError::BadArguments);
        }
        assert!(s.watches.is_empty());
    }

    #[test]
    fn get_data_returns_data_and_stat_and_sets_watch() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        s.apply(
            a,
            &Op::Create {
                path: "/x".into(),
                data: b"hello".to_vec(),
                mode: CreateMode::Persistent,
            },
            5,
        );
        let stat = s.node("/x").unwrap().1;
        assert_eq!(
            ok(&mut s, b, get_data("/x", true)),
            OpResult::Data {
                data: b"hello".to_vec(),
                stat
            }
        );
        let applied = s.apply(a, &delete("/x", -1), 0);
        assert_eq!(
            applied.notifications,
            [note(b, EventType::NodeDeleted, "/x", "/x")]
        );
    }

    #[test]
    fn get_children_returns_children_sorted_by_name() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/p"));
        for c in ["/p/b", "/p/a-0000000009", "/p/C", "/p/a-0000000010", "/p/a"] {
            ok(&mut s, a, persistent(c));
        }
        let OpResult::Children { children, stat } = ok(&mut s, a, get_children("/p", false)) else {
            panic!()
        };
        assert_eq!(children, ["C", "a", "a-0000000009", "a-0000000010", "b"]);
        assert_eq!((stat.num_children, stat.cversion), (5, 5));
    }

    #[test]
    fn child_watch_fires_children_changed_with_child_as_cause() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/p"));
        ok(&mut s, a, get_children("/p", true));
        let applied = s.apply(a, &create("/p/n-", CreateMode::EphemeralSequential), 0);
        assert_eq!(
            applied.notifications,
            [note(
                a,
                EventType::NodeChildrenChanged,
                "/p",
                "/p/n-0000000000"
            )]
        );
        ok(&mut s, a, get_children("/p", true));
        let applied = s.apply(a, &delete("/p/n-0000000000", -1), 0);
        assert_eq!(
            applied.notifications,
            [note(
                a,
                EventType::NodeChildrenChanged,
                "/p",
                "/p/n-0000000000"
            )]
        );
    }

    #[test]
    fn delete_fires_node_deleted_once_per_session_then_parent_children_changed() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        ok(&mut s, a, persistent("/p"));
        ok(&mut s, a, persistent("/p/c"));
        ok(&mut s, a, exists("/p/c", true));
        ok(&mut s, a, get_children("/p/c", true));
        ok(&mut s, b, get_children("/p/c", true));
        ok(&mut s, b, get_children("/p", true));
        let applied = s.apply(a, &delete("/p/c", -1), 0);
        assert_eq!(
            applied.notifications,
            [
                note(a, EventType::NodeDeleted, "/p/c", "/p/c"),
                note(b, EventType::NodeDeleted, "/p/c", "/p/c"),
                note(b, EventType::NodeChildrenChanged, "/p", "/p/c"),
            ]
        );
        assert!(s.watches.is_empty());
    }

    #[test]
    fn set_data_fires_data_watches_only() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/p"));
        ok(&mut s, a, get_children("/p", true));
        ok(&mut s, a, get_children("/", true));
        ok(&mut s, a, get_data("/p", true));
        let applied = s.apply(a, &set("/p", b"x", -1), 0);
        assert_eq!(
            applied.notifications,
            [note(a, EventType::NodeDataChanged, "/p", "/p")]
        );
        assert!(s.watches.has_child("/p", a) && s.watches.has_child("/", a));
    }

    #[test]
    fn lone_check_reports_checked_no_node_or_bad_version() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/x"));
        assert_eq!(ok(&mut s, a, check("/x", 0)), OpResult::Checked);
        assert_eq!(ok(&mut s, a, check("/x", -1)), OpResult::Checked);
        assert_eq!(err(&mut s, a, check("/x", 1)), ZkError::BadVersion);
        assert_eq!(err(&mut s, a, check("/y", 1)), ZkError::NoNode);
    }

    #[test]
    fn sync_ignores_missing_node_but_rejects_bad_path() {
        let mut s = Server::new();
        let a = s.open_session();
        assert_eq!(
            ok(
                &mut s,
                a,
                Op::Sync {
                    path: "/nope/deeper".into()
                }
            ),
            OpResult::Synced
        );
        assert_eq!(
            err(
                &mut s,
                a,
                Op::Sync {
                    path: "nope".into()
                }
            ),
            ZkError::BadArguments
        );
    }

    #[test]
    fn ephemeral_create_records_owner_and_delete_forgets_it() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        let OpResult::Created { stat, .. } = ok(&mut s, b, create("/e2", CreateMode::Ephemeral))
        else {
            panic!()
        };
        assert_eq!(stat.ephemeral_owner, b);
        ok(&mut s, b, create("/e1", CreateMode::EphemeralSequential));
        ok(&mut s, b, persistent("/p"));
        assert_eq!(s.node("/p").unwrap().1.ephemeral_owner, 0);
        assert_eq!(s.ephemerals(b), ["/e10000000001", "/e2"]);
        assert!(s.ephemerals(a).is_empty());
        // Another session may delete it; the owner's table follows.
        ok(&mut s, a, delete("/e2", -1));
        assert_eq!(s.ephemerals(b), ["/e10000000001"]);
    }

    #[test]
    fn a_hashed_deletion_order_deletes_every_ephemeral_in_an_order_its_key_decides() {
        let paths: Vec<String> = (0..8).map(|i| format!("/e{i}")).collect();
        let end_with = |order| {
            let mut s = Server::new();
            let a = s.open_session();
            for path in &paths {
                ok(&mut s, a, create(path, CreateMode::Ephemeral));
            }
            s.end_session(a, 0, false, order).unwrap().deleted
        };
        assert_eq!(end_with(DeletionOrder::ByPath), paths);
        let orders: BTreeSet<Vec<String>> = (0..4)
            .map(|key| end_with(DeletionOrder::Hashed(key)))
            .collect();
        assert!(orders.len() > 1, "the key decides the order");
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(sorted, paths, "every ephemeral goes once");
        }
        assert_eq!(
            end_with(DeletionOrder::Hashed(3)),
            end_with(DeletionOrder::Hashed(3))
        );
    }

    #[test]
    fn session_end_deletes_ephemerals_and_fires_other_sessions_watches() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        ok(&mut s, a, persistent("/p"));
        ok(&mut s, b, create("/p/z", CreateMode::Ephemeral));
        ok(&mut s, b, create("/p/m", CreateMode::Ephemeral));
        ok(&mut s, b, create("/p/keep", CreateMode::Persistent));
        ok(&mut s, a, exists("/p/z", true));
        ok(&mut s, a, get_children("/p", true));
        // b's own watches never fire, and are gone afterwards.
        ok(&mut s, b, exists("/p/m", true));
        ok(&mut s, b, exists("/other", true));
        let zxid_before = s.last_zxid();
        let ended = s.expire_session(b, 0).unwrap();
        assert_eq!(ended.zxid, zxid_before + 1);
        assert_eq!(ended.deleted, ["/p/m", "/p/z"]);
        assert_eq!(
            ended.notifications,
            [
                note(a, EventType::NodeChildrenChanged, "/p", "/p/m"),
                note(a, EventType::NodeDeleted, "/p/z", "/p/z"),
            ]
        );
        assert_eq!(s.last_zxid(), zxid_before + 1);
        assert_eq!(s.children("/p"), Some(vec!["keep".to_owned()]));
        assert_eq!(s.node("/p").unwrap().1.pzxid, ended.zxid);
        assert!(s.watches.is_empty());
        assert!(s.ephemerals(b).is_empty());
        assert!(!s.session_alive(b));
        assert!(s
            .apply(a, &persistent("/other"), 0)
            .notifications
            .is_empty());
    }

    #[test]
    fn ending_a_dead_session_returns_none_and_consumes_no_zxid() {
        let mut s = Server::new();
        let a = s.open_session();
        assert_eq!(s.expire_session(a, 0).map(|e| e.zxid), Some(2));
        assert_eq!(s.expire_session(a, 0), None);
        assert_eq!(s.expire_session(42, 0), None);
        assert_eq!(s.last_zxid(), 2);
        assert_eq!(s.open_session(), 2);
    }

    #[test]
    fn multi_success_commits_every_op_and_notifies_in_order() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        ok(&mut s, a, persistent("/x"));
        ok(&mut s, b, exists("/n", true));
        ok(&mut s, b, get_data("/x", true));
        ok(&mut s, b, get_children("/", true));
        let multi = Op::Multi(vec![
            create("/n", CreateMode::Ephemeral),
            set("/n", b"v", 0),
            check("/n", 1),
            delete("/x", 0),
        ]);
        let applied = s.apply(a, &multi, 9);
        assert_eq!(applied.zxid, 4);
        let stat_n = Stat {
            czxid: 4,
            mzxid: 4,
            pzxid: 4,
            ctime: 9,
            mtime: 9,
            ephemeral_owner: a,
            ..Stat::default()
        };
        assert_eq!(
            applied.reply,
            Ok(OpResult::Multi(vec![
                // ZooKeeper answers a create inside a multi without its stat.
                Ok(OpResult::Created {
                    path: "/n".into(),
                    stat: Stat::UNKNOWN
                }),
                Ok(OpResult::SetData(Stat {
                    version: 1,
                    data_length: 1,
                    ..stat_n
                })),
                Ok(OpResult::Checked),
                Ok(OpResult::Deleted),
            ]))
        );
        assert_eq!(
            applied.notifications,
            [
                note(b, EventType::NodeCreated, "/n", "/n"),
                note(b, EventType::NodeChildrenChanged, "/", "/n"),
                note(b, EventType::NodeDeleted, "/x", "/x"),
            ]
        );
        assert_eq!(s.ephemerals(a), ["/n"]);
        assert_eq!(s.node("/n").unwrap().0, b"v");
        assert_eq!(s.node("/x"), None);
    }

    #[test]
    fn multi_failure_reports_ok_code_runtime_inconsistency_and_rolls_back() {
        let mut s = Server::new();
        let a = s.open_session();
        let b = s.open_session();
        ok(&mut s, a, persistent("/x"));
        ok(&mut s, a, persistent("/q"));
        ok(&mut s, b, exists("/x", true));
        ok(&mut s, b, get_children("/q", true));
        let before = s.clone();
        let multi = Op::Multi(vec![
            create("/q/n-", CreateMode::EphemeralSequential),
            set("/x", b"new", -1),
            delete("/x", -1),
            check("/x", -1),
            persistent("/y"),
        ]);
        let applied = s.apply(a, &multi, 0);
        assert_eq!(
            applied.reply,
            Ok(OpResult::Multi(vec![
                Ok(OpResult::RolledBack),
                Ok(OpResult::RolledBack),
                Ok(OpResult::RolledBack),
                Err(ZkError::NoNode),
                Err(ZkError::RuntimeInconsistency),
            ]))
        );
        assert!(applied.notifications.is_empty());
        assert_eq!(applied.zxid, before.last_zxid() + 1);
        // Tree, watches and sessions are exactly as before; only the zxid moved.
        assert_eq!(s.tree, before.tree);
        assert_eq!(s.watches, before.watches);
        assert_eq!(s.sessions, before.sessions);
        // The rolled-back sequential create did not consume a sequence number.
        let r = ok(&mut s, a, create("/q/n-", CreateMode::PersistentSequential));
        assert!(
            matches!(r, OpResult::Created { ref path, .. } if path == "/q/n-0000000000"),
            "{r:?}"
        );
    }

    #[test]
    fn multi_first_op_failing_is_per_op_errors_and_a_bad_path_refuses_it_whole() {
        let mut s = Server::new();
        let a = s.open_session();
        let failing = Op::Multi(vec![persistent("/missing/x"), persistent("/ok")]);
        assert_eq!(
            s.apply(a, &failing, 0).reply,
            Ok(OpResult::Multi(vec![
                Err(ZkError::NoNode),
                Err(ZkError::RuntimeInconsistency)
            ]))
        );
        assert_eq!(s.node("/ok"), None);
        let before = s.last_zxid();
        let malformed = Op::Multi(vec![persistent("/ok"), persistent("bad")]);
        assert_eq!(s.apply(a, &malformed, 0).reply, Err(ZkError::BadArguments));
        assert_eq!(s.node("/ok"), None);
        assert_eq!(s.last_zxid(), before);
    }

    #[test]
    fn multi_with_a_read_or_nested_multi_is_bad_arguments_and_consumes_a_zxid() {
        let mut s = Server::new();
        let a = s.open_session();
        let before = s.clone();
        let base = s.last_zxid();
        let bad = [
            exists("/", false),
            get_data("/", false),
            get_children("/", true),
            Op::Sync { path: "/".into() },
            Op::Multi(vec![]),
        ];
        for (i, op) in bad.into_iter().enumerate() {
            let applied = s.apply(a, &Op::Multi(vec![persistent("/x"), op]), 0);
            assert_eq!(applied.reply, Err(ZkError::BadArguments));
            assert_eq!(applied.zxid, base + i as Zxid + 1);
        }
        assert_eq!(s.tree, before.tree);
        assert!(s.watches.is_empty());
    }

    #[test]
    fn empty_multi_succeeds_with_empty_list() {
        let mut s = Server::new();
        let a = s.open_session();
        let applied = s.apply(a, &Op::Multi(vec![]), 0);
        assert_eq!(applied.reply, Ok(OpResult::Multi(vec![])));
        assert_eq!(applied.zxid, 2);
        assert!(applied.notifications.is_empty());
    }

    #[test]
    fn watch_fires_once_within_a_multi() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, exists("/n", true));
        let multi = Op::Multi(vec![persistent("/n"), delete("/n", -1)]);
        let applied = s.apply(a, &multi, 0);
        assert_eq!(
            applied.notifications,
            [note(a, EventType::NodeCreated, "/n", "/n")]
        );
    }

    #[test]
    fn watches_taken_off_a_server_say_data_exists_or_child_and_leave_none_behind() {
        let mut s = Server::new();
        let a = s.open_session();
        ok(&mut s, a, persistent("/x"));
        ok(&mut s, a, exists("/x", true));
        ok(&mut s, a, exists("/gone", true));
        ok(&mut s, a, get_children("/x", true));
        let watches = s.take_watches(a);
        assert_eq!(watches.data, vec!["/x"]);
        assert_eq!(watches.exist, vec!["/gone"]);
        assert_eq!(watches.child, vec!["/x"]);
        assert!(s.watches.is_empty());
        assert!(s.take_watches(a).is_empty());
    }

    #[test]
    fn reregistered_watches_fire_for_what_changed_since_the_zxid_seen_and_stay_otherwise() {
        let mut s = Server::new();
        let a = s.open_session();
        for path in ["/same", "/set", "/deleted", "/kids", "/kids-same"] {
            ok(&mut s, a, persistent(path));
        }
        let seen = s.last_zxid();
        ok(&mut s, a, set("/set", b"v", -1));
        ok(&mut s, a, delete("/deleted", -1));
        ok(&mut s, a, persistent("/kids/k"));
        ok(&mut s, a, persistent("/created"));
        let watches = SessionWatches {
            data: vec!["/same".into(), "/set".into(), "/deleted".into()],
            exist: vec!["/created".into(), "/absent".into()],
            child: vec!["/kids".into(), "/kids-same".into(), "/deleted".into()],
        };
        let fired = s.set_watches(a, seen, &watches);
        assert_eq!(
            fired,
            vec![
                note(a, EventType::NodeDataChanged, "/set", "/set"),
                note(a, EventType::NodeDeleted, "/deleted", "/deleted"),
                note(a, EventType::NodeCreated, "/created", "/created"),
                note(a, EventType::NodeChildrenChanged, "/kids", "/kids"),
                note(a, EventType::NodeDeleted, "/deleted", "/deleted"),
            ]
        );
        for path in ["/same", "/absent"] {
            assert!(s.watches.has_data(path, a), "{path}");
        }
        assert!(s.watches.has_child("/kids-same", a));
        assert!(!s.watches.has_data("/set", a));
    }

    #[test]
    fn an_exists_watch_misses_a_node_created_and_deleted_while_its_client_was_away() {
        let mut s = Server::new();
        let (a, b) = (s.open_session(), s.open_session());
        ok(&mut s, a, exists("/x", true));
        let watches = s.take_watches(a);
        let seen = s.last_zxid();
        ok(&mut s, b, persistent("/x"));
        ok(&mut s, b, delete("/x", -1));
        assert!(s.set_watches(a, seen, &watches).is_empty());
        assert!(s.watches.has_data("/x", a), "still waiting for a creation");
    }

    #[test]
    fn a_follower_serves_a_read_of_a_session_it_has_not_heard_of() {
        let mut s = Server::new();
        let applied = s.serve_read(7, &exists("/zookeeper", true));
        assert!(matches!(applied.reply, Ok(OpResult::Exists(Some(_)))));
        assert!(s.watches.has_data("/zookeeper", 7));
        assert_eq!(
            s.serve_read(7, &persistent("/x")).reply,
            Err(ZkError::BadArguments)
        );
        assert_eq!(
            s.serve_read(7, &exists("bad", false)).reply,
            Err(ZkError::BadArguments)
        );
    }

    #[test]
    fn server_state_is_comparable_and_hashable() {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        let hash = |s: &Server| {
            let mut h = DefaultHasher::new();
            s.hash(&mut h);
            h.finish()
        };
        let mut x = Server::new();
        let mut y = Server::new();
        let (a, b) = (x.open_session(), y.open_session());
        ok(&mut x, a, persistent("/n"));
        ok(&mut y, b, persistent("/n"));
        assert_eq!(x, y);
        assert_eq!(hash(&x), hash(&y));
        ok(&mut y, b, exists("/w", true));
        assert_ne!(x, y);
    }

    #[test]
    fn garbage_inputs_never_panic() {
        let mut s = Server::new();
        let a = s.open_session();
        let long = "/x".repeat(50_000);
        let paths: Vec<String> = [
            "",
            "/",
            "//",
            ".",
            "/.",
            "/..",
            "\0",
            "/\0",
            "/\u{10FFFF}",
            "/é",
            "/zookeeper",
            "/zookeeper/",
            "/zookeeper/quota",
            "/a",
            "/a/",
            "/a/b",
            "/a/b/c",
            "-",
            "/-2147483648",
        ]
        .iter()
        .map(|p| (*p).to_owned())
        .chain([long.clone(), format!("{long}/"), "/a".repeat(2_000)])
        .collect();
        let modes = [
            CreateMode::Persistent,
            CreateMode::PersistentSequential,
            CreateMode::Ephemeral,
            CreateMode::EphemeralSequential,
        ];
        let versions = [-1, 0, 1, i32::MAX, i32::MIN];
        s.tree.set_counter("/", i32::MAX - 3);
        for (i, p) in paths.iter().enumerate() {
            let v = versions[i % versions.len()];
            let mode = modes[i % modes.len()];
            let ops = vec![
                Op::Create {
                    path: p.clone(),
                    data: vec![0xff; i],
                    mode,
                },
                Op::SetData {
                    path: p.clone(),
                    data: vec![],
                    version: v,
                },
                Op::Check {
                    path: p.clone(),
                    version: v,
                },
                Op::Delete {
                    path: p.clone(),
                    version: v,
                },
            ];
            for op in
                ops.iter()
                    .chain([&exists(p, true), &get_data(p, true), &get_children(p, true)])
            {
                s.apply(a, op, i64::MAX);
                s.apply(-1, op, i64::MIN);
            }
            s.apply(a, &Op::Multi(ops.clone()), 0);
            s.apply(a, &Op::Multi(vec![Op::Multi(ops)]), 0);
            s.apply(a, &Op::Sync { path: p.clone() }, 0);
            let _ = (s.children(p), s.node(p));
        }
        // Creating the long paths level by level works, as deep as asked.
        let mut deep = String::new();
        for _ in 0..1_000 {
            deep.push_str("/d");
            ok(&mut s, a, create(&deep, CreateMode::Persistent));
        }
        s.expire_session(a, 0);
        s.expire_session(a, 0);
        s.expire_session(i64::MIN, 0);
        assert!(s.node(&deep).is_some());
        assert!(s.node("/long").is_none());
    }
}
