//! The pure ZooKeeper server: one data tree, its sessions and watches, applying one op at a time.

use zklab_recipes::acl::{Acls, Perms};
use zklab_recipes::client::{
    AddWatchMode, EventType, Op, OpReply, OpResult, SessionId, Stat, WatchedEvent, ZkError, Zxid,
};
use zklab_recipes::session_renaming::RenameSessions;

use crate::acl::{masked, Identity};
use crate::path;
use crate::session::Sessions;
use crate::tree::{Reaping, Tree, Undo, Znode};
use crate::watch::{SessionWatches, TakenWatches, Watches};

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
        let identity = self.sessions.identity(session);
        let reply = if let Err(error) = path::validate_op(op) {
            Err(error)
        } else if !self.sessions.is_alive(session) {
            Err(ZkError::SessionExpired)
        } else if op.is_write() {
            return self.apply_write(session, &identity, op, now_ms);
        } else if let Op::AddAuth { scheme, auth } = op {
            // No transaction: the server the session talks to takes it as it comes.
            identity
                .authenticated(scheme, auth.as_deref())
                .map(|identity| {
                    self.set_identity(session, identity);
                    OpResult::Authenticated
                })
        } else {
            self.read(session, &identity, op)
        };
        Applied {
            reply,
            zxid: self.zxid,
            notifications: Vec::new(),
        }
    }

    /// Applies a write of a live session known as `identity` whose paths are valid: what
    /// [`Server::apply`] does once it has checked both, and what a follower does with a
    /// transaction its leader committed, with the identity the session had there (the follower
    /// may know it by more since: the transaction is decided as the leader decided it).
    pub fn apply_write(
        &mut self,
        session: SessionId,
        identity: &Identity,
        op: &Op,
        now_ms: i64,
    ) -> Applied {
        let mut notifications = Vec::new();
        // Every transaction takes a zxid, an error transaction too.
        let zxid = self.next_zxid();
        let reply = match op {
            Op::Multi(ops) => self.multi(session, identity, ops, zxid, now_ms, &mut notifications),
            _ => self
                .write(identity, session, op, zxid, now_ms)
                .map(|written| {
                    self.commit(session, op, &written, &mut notifications);
                    written.result
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
            if let Ok(undo) = self.tree.delete(&path, -1, zxid) {
                let guards = self.deletion_guards(&path, &undo);
                self.fire(&path, &guards, Watches::fire_deleted, &mut notifications);
                deleted.push(path);
            }
        }
        self.watches.remove_session(session);
        self.sessions.forget_identity(session);
        Some(Ended {
            zxid,
            deleted,
            notifications,
        })
    }

    /// The nodes the server's reaper would delete at `now_ms` (containers emptied, TTL nodes
    /// idle past their TTL), by path.
    pub fn reap_candidates(&self, now_ms: i64) -> Vec<String> {
        self.tree.reap_candidates(now_ms)
    }

    /// Whether any container or TTL node exists, for the reaper to look at.
    pub fn has_reaped_kinds(&self) -> bool {
        self.tree.has_reaped_kinds()
    }

    /// Whether the reaper would delete the node at `path` at `now_ms`.
    pub fn reapable(&self, path: &str, now_ms: i64) -> bool {
        self.tree.reapable(path, now_ms)
    }

    /// The reaper deletes the node at `path`, a transaction of the server's own (ZooKeeper's
    /// `deleteContainer`, sent by no session) that fires watches like any delete. `None`, and
    /// no transaction, if the node is not one the reaper would delete at `now_ms`.
    pub fn reap(&mut self, path: &str, now_ms: i64) -> Option<Applied> {
        if !self.tree.reapable(path, now_ms) {
            return None;
        }
        let zxid = self.next_zxid();
        let mut notifications = Vec::new();
        let deleted = self.tree.delete(path, -1, zxid);
        if let Ok(undo) = &deleted {
            let guards = self.deletion_guards(path, undo);
            self.fire(path, &guards, Watches::fire_deleted, &mut notifications);
        }
        Some(Applied {
            reply: deleted.map(|_| OpResult::Deleted),
            zxid,
            notifications,
        })
    }

    /// Serves a read (`exists`, `getData`, `getChildren`, `sync`, a lone check, a multiRead)
    /// from this server's state as it stands, to a session known as `identity` when it sent
    /// the read, leaving the watch it asks for. A follower serves the reads of the sessions
    /// attached to it without looking the session up: it may not have applied the session's
    /// creation yet, and the leader decides whether a session lives.
    pub fn serve_read(&mut self, session: SessionId, identity: &Identity, op: &Op) -> Applied {
        let reply = match path::validate_op(op) {
            Err(error) => Err(error),
            Ok(()) if op.is_write() => Err(ZkError::BadArguments),
            Ok(()) => self.read(session, identity, op),
        };
        Applied {
            reply,
            zxid: self.zxid,
            notifications: Vec::new(),
        }
    }

    /// Takes every watch `session` holds off this server, as its connection to it breaks.
    pub fn take_watches(&mut self, session: SessionId) -> SessionWatches {
        let TakenWatches {
            data,
            child,
            persistent,
            recursive,
        } = self.watches.take_session(session);
        let (data, exist) = data
            .into_iter()
            .partition(|path| self.tree.get(path).is_some());
        SessionWatches {
            data,
            exist,
            child: child.into_iter().collect(),
            persistent: persistent.into_iter().collect(),
            recursive: recursive.into_iter().collect(),
        }
    }

    /// Re-registers a session's watches on this server, the client having seen every change up
    /// to zxid `seen` (ZooKeeper's `DataTree.setWatches`). What changed since fires at once: a
    /// data watch NodeDeleted if the node is gone or NodeDataChanged if its mzxid is newer; an
    /// exists watch NodeCreated if the node is there; a child watch NodeDeleted if the node is
    /// gone or NodeChildrenChanged if its pzxid is newer. The rest is left in place. An exists
    /// watch therefore misses a node created and deleted while its client was away, and a
    /// persistent watch, set again with nothing fired, misses every change meanwhile.
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
        for (paths, mode) in [
            (&watches.persistent, AddWatchMode::Persistent),
            (&watches.recursive, AddWatchMode::PersistentRecursive),
        ] {
            for path in paths {
                self.watches.add_persistent(path, session, mode);
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

    /// Who the session is known as here.
    pub fn identity(&self, session: SessionId) -> Identity {
        self.sessions.identity(session)
    }

    /// The session is known as `identity` here from now on: what its leader accepted of an
    /// addAuth, which every server of an ensemble learns at once.
    pub fn set_identity(&mut self, session: SessionId, identity: Identity) {
        self.sessions.set_identity(session, identity);
    }

    /// The zxid of the last transaction.
    pub fn last_zxid(&self) -> Zxid {
        self.zxid
    }

    /// A read: answers from the tree what the session may read, leaves a watch if asked. No
    /// zxid.
    fn read(&mut self, session: SessionId, identity: &Identity, op: &Op) -> OpReply {
        match op {
            Op::Exists { path, watch } => {
                // exists leaves its watch whether or not the node is there.
                if *watch {
                    self.watches.add_data(path, session);
                }
                Ok(OpResult::Exists(self.tree.stat(path)))
            }
            Op::GetData { path, watch } => {
                let node = self.readable(identity, path, Perms::READ)?;
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
                let node = self.readable(identity, path, Perms::READ)?;
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
                self.readable(identity, path, Perms::READ)?;
                self.tree.check(path, *version)?;
                Ok(OpResult::Checked)
            }
            Op::Sync { .. } => Ok(OpResult::Synced),
            Op::CountDescendants { path } => {
                self.readable(identity, path, Perms::READ)?;
                Ok(OpResult::Counted(self.tree.descendants(path)))
            }
            // READ or ADMIN lets the ACL be read; without ADMIN, its digests' hashes are hidden.
            Op::GetAcl { path } => {
                let node = self.readable(identity, path, Perms(Perms::READ.0 | Perms::ADMIN.0))?;
                let acl = match identity.may(&node.acl, Perms::ADMIN) {
                    true => node.acl.clone(),
                    false => masked(&node.acl),
                };
                Ok(OpResult::Acl {
                    acl,
                    stat: node.stat(),
                })
            }
            Op::WhoAmI => Ok(OpResult::Identities(identity.who_am_i())),
            // The prefix is matched as text; `/` takes every one.
            Op::GetEphemerals { prefix } => {
                let owned = self.sessions.ephemerals(session).into_iter().flatten();
                let matching =
                    owned.filter(|path| prefix == "/" || path.starts_with(prefix.as_str()));
                Ok(OpResult::Ephemerals(matching.cloned().collect()))
            }
            // On a node that may not exist yet; no permission asked (3.8).
            Op::AddWatch { path, mode } => {
                self.watches.add_persistent(path, session, *mode);
                Ok(OpResult::WatchAdded)
            }
            Op::RemoveWatches { path, kind } => {
                if self.watches.remove(path, session, *kind) {
                    Ok(OpResult::WatchesRemoved)
                } else {
                    Err(ZkError::NoWatcher)
                }
            }
            Op::CheckWatches { path, kind } => {
                if self.watches.stands(path, *kind) {
                    Ok(OpResult::WatchesHeld)
                } else {
                    Err(ZkError::NoWatcher)
                }
            }
            // Each read on its own, all from this state; a listing without the parent's stat.
            // (`validate_op` let only unwatched reads of data and children in.)
            Op::MultiRead(reads) => Ok(OpResult::MultiRead(
                reads
                    .iter()
                    .map(|read| match self.read(session, identity, read)? {
                        OpResult::Children { children, .. } => Ok(OpResult::Listed(children)),
                        data => Ok(data),
                    })
                    .collect(),
            )),
            // `apply` sends every write, and an authentication, elsewhere.
            Op::Create { .. }
            | Op::Delete { .. }
            | Op::SetData { .. }
            | Op::SetAcl { .. }
            | Op::Multi(_)
            | Op::AddAuth { .. } => Err(ZkError::BadArguments),
        }
    }

    /// The node at `path`, if `identity` has one of `wanted`'s permissions on it: NoNode, then
    /// NoAuth, as ZooKeeper checks a read (and a write's node or parent).
    fn readable(&self, identity: &Identity, path: &str, wanted: Perms) -> Result<&Znode, ZkError> {
        let node = self.tree.get(path).ok_or(ZkError::NoNode)?;
        match identity.may(&node.acl, wanted) {
            true => Ok(node),
            false => Err(ZkError::NoAuth),
        }
    }

    /// One create, delete, set_data, set_acl or check of a session known as `identity`, against
    /// the tree only, in ZooKeeper's error order (its `PrepRequestProcessor`), permissions
    /// included. Sessions and watches are left to [`Server::commit`], so that a multi can
    /// still roll back.
    fn write(
        &mut self,
        identity: &Identity,
        session: SessionId,
        op: &Op,
        zxid: Zxid,
        now_ms: i64,
    ) -> Result<Written, ZkError> {
        let written = |result, undo, guards| Written {
            result,
            undo,
            guards,
        };
        match op {
            // The ACL is checked before anything is looked up; CREATE on the parent after its
            // NoNode and before NodeExists.
            Op::Create {
                path,
                data,
                mode,
                acl,
            } => {
                let acl = identity.fix_up(acl)?;
                let parent = self.readable(identity, path::parent(path), Perms::CREATE)?;
                let guards = Guards {
                    parent: parent.acl.clone(),
                    node: acl.clone(),
                };
                let owner = if mode.is_ephemeral() { session } else { 0 };
                let sequential = mode.is_sequential();
                let (path, stat, undo) = self
                    .tree
                    .create(path, sequential, data, acl, owner, zxid, now_ms)?;
                if mode.is_reaped() {
                    self.tree.set_reaping(&path, Reaping::of(*mode));
                }
                Ok(written(OpResult::Created { path, stat }, undo, guards))
            }
            // DELETE on the parent, before the node is looked up.
            Op::Delete { path, version } => {
                if path::special(path) {
                    return Err(ZkError::BadArguments);
                }
                let parent = self.readable(identity, path::parent(path), Perms::DELETE)?;
                let parent = parent.acl.clone();
                let undo = self.tree.delete(path, *version, zxid)?;
                let node = match &undo {
                    Undo::Delete { node, .. } => node.acl.clone(),
                    _ => Acls::OPEN,
                };
                Ok(written(OpResult::Deleted, undo, Guards { node, parent }))
            }
            Op::SetData {
                path,
                data,
                version,
            } => {
                let node = self.readable(identity, path, Perms::WRITE)?.acl.clone();
                let (stat, undo) = self.tree.set_data(path, data, *version, zxid, now_ms)?;
                // A change of data tells no parent.
                let guards = Guards {
                    parent: node.clone(),
                    node,
                };
                Ok(written(OpResult::SetData(stat), undo, guards))
            }
            Op::Check { path, version } => {
                self.readable(identity, path, Perms::READ)?;
                self.tree.check(path, *version)?;
                Ok(written(OpResult::Checked, Undo::Nothing, Guards::NONE))
            }
            // Never in a multi, so nothing to undo; no watch hears it.
            Op::SetAcl { path, acl, version } => {
                let acl = identity.fix_up(acl)?;
                self.readable(identity, path, Perms::ADMIN)?;
                let stat = self.tree.set_acl(path, acl, *version)?;
                Ok(written(OpResult::AclSet(stat), Undo::Nothing, Guards::NONE))
            }
            Op::Exists { .. }
            | Op::GetData { .. }
            | Op::GetChildren { .. }
            | Op::Sync { .. }
            | Op::Multi(_)
            | Op::MultiRead(_)
            | Op::CountDescendants { .. }
            | Op::GetEphemerals { .. }
            | Op::AddWatch { .. }
            | Op::RemoveWatches { .. }
            | Op::CheckWatches { .. }
            | Op::GetAcl { .. }
            | Op::AddAuth { .. }
            | Op::WhoAmI => Err(ZkError::BadArguments),
        }
    }

    /// The session-table and watch side of a successful `write`: record or forget ephemerals and
    /// fire the watches, in ZooKeeper's order.
    fn commit(
        &mut self,
        session: SessionId,
        op: &Op,
        written: &Written,
        out: &mut Vec<Notification>,
    ) {
        let guards = &written.guards;
        match (op, &written.result) {
            (Op::Create { mode, .. }, OpResult::Created { path, .. }) => {
                if mode.is_ephemeral() {
                    self.sessions.add_ephemeral(session, path);
                }
                self.fire(path, guards, Watches::fire_created, out);
            }
            (Op::Delete { path, .. }, _) => {
                if let Undo::Delete { node, .. } = &written.undo {
                    if node.ephemeral_owner != 0 {
                        self.sessions.remove_ephemeral(node.ephemeral_owner, path);
                    }
                }
                self.fire(path, guards, Watches::fire_deleted, out);
            }
            (Op::SetData { path, .. }, _) => {
                self.fire(path, guards, Watches::fire_data_changed, out)
            }
            _ => {}
        }
    }

    /// Fires the watches a change of the node at `path` sets off, as the sessions hear them:
    /// one that may not read the node (its parent, for NodeChildrenChanged), as `guards` had
    /// them when the change was made, hears nothing, its one-time watch spent all the same
    /// (ZooKeeper 3.8.4's check, which Debian's 3.8.0 carries).
    fn fire(
        &mut self,
        path: &str,
        guards: &Guards,
        trigger: fn(&mut Watches, &str, &mut Vec<Notification>),
        out: &mut Vec<Notification>,
    ) {
        let from = out.len();
        trigger(&mut self.watches, path, out);
        let hears = |notification: &Notification| {
            let acl = match notification.event.event_type {
                EventType::NodeChildrenChanged => &guards.parent,
                _ => &guards.node,
            };
            acl.is_open()
                || self
                    .sessions
                    .identity(notification.session)
                    .may(acl, Perms::READ)
        };
        if !out[from..].iter().all(hears) {
            let fired = out.split_off(from);
            out.extend(fired.into_iter().filter(|notification| hears(notification)));
        }
    }

    /// The guards of a deletion the server makes on its own (a session's end, the reaper): the
    /// deleted node's ACL, and its parent's.
    fn deletion_guards(&self, path: &str, deleted: &Undo) -> Guards {
        let parent = self.tree.get(path::parent(path));
        Guards {
            node: match deleted {
                Undo::Delete { node, .. } => node.acl.clone(),
                _ => Acls::OPEN,
            },
            parent: parent.map_or(Acls::OPEN, |parent| parent.acl.clone()),
        }
    }

    /// A multi, all or nothing: the ops run in order against the tree; on the first failure the
    /// earlier ones are undone in reverse and nothing else changes; on success the sessions and
    /// watches see every op in order.
    fn multi(
        &mut self,
        session: SessionId,
        identity: &Identity,
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
        let mut done: Vec<Written> = Vec::with_capacity(ops.len());
        for (i, op) in ops.iter().enumerate() {
            match self.write(identity, session, op, zxid, now_ms) {
                Ok(step) => done.push(step),
                Err(code) => {
                    for (op, written) in ops.iter().zip(done).rev() {
                        let path = match &written.result {
                            OpResult::Created { path, .. } => path.as_str(),
                            _ => op.path(),
                        };
                        self.tree.undo(path, written.undo);
                    }
                    let mut results = Vec::with_capacity(ops.len());
                    results.extend((0..i).map(|_| Ok(OpResult::RolledBack)));
                    results.push(Err(code));
                    results.extend((i + 1..ops.len()).map(|_| Err(ZkError::RuntimeInconsistency)));
                    return Ok(OpResult::Multi(results));
                }
            }
        }
        for (op, written) in ops.iter().zip(&done) {
            self.commit(session, op, written, out);
        }
        Ok(OpResult::Multi(
            (ops.iter().zip(done))
                .map(|(op, written)| match (op, written.result) {
                    // ZooKeeper answers a plain create inside a multi with its path only, and a
                    // container's or a TTL node's with its stat too.
                    (Op::Create { mode, .. }, OpResult::Created { path, stat }) => {
                        let stat = if mode.is_reaped() {
                            stat
                        } else {
                            Stat::UNKNOWN
                        };
                        Ok(OpResult::Created { path, stat })
                    }
                    (_, result) => Ok(result),
                })
                .collect(),
        ))
    }
}

/// What one op of a write did to the tree: its result, how to undo it, and the ACLs its watch
/// events are heard under.
struct Written {
    result: OpResult,
    undo: Undo,
    guards: Guards,
}

/// The ACLs that decide who hears of a change, as they stood when it was made (a multi may
/// change the tree again before its watches fire): the changed node's, for the events of the
/// node, and its parent's, for NodeChildrenChanged.
struct Guards {
    node: Acls,
    parent: Acls,
}

impl Guards {
    /// An op no watch hears.
    const NONE: Guards = Guards {
        node: Acls::OPEN,
        parent: Acls::OPEN,
    };
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests;
