//! The data tree: every znode by path, with its data, its stat fields and its children.
//!
//! The tree knows ZooKeeper's per-node rules (stats, versions, sequence numbers, the error a
//! mutation fails with) but nothing of sessions or watches: the server glues those on. Paths
//! given to it must already be valid (see [`crate::path`]).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::acl::{Acl, Acls, Id, Perms};
use zklab_recipes::client::{CreateMode, SessionId, Stat, ZkError, Zxid};
use zklab_recipes::session_renaming::{RenameSessions, SessionRenaming, StableHasher};

use crate::path;

/// One znode. Its `Stat` is derived on demand: `data_length`, `num_children` and the `cversion`
/// a client sees are computed from the fields here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct Znode {
    /// The node's data.
    #[rename(keep)]
    pub data: Vec<u8>,
    /// The zxid that created it.
    #[rename(keep)]
    pub czxid: Zxid,
    /// The zxid that last set its data (its creation, at first).
    #[rename(keep)]
    pub mzxid: Zxid,
    /// The zxid that last created or deleted a child (its creation, at first).
    #[rename(keep)]
    pub pzxid: Zxid,
    /// Creation time (ms).
    #[rename(keep)]
    pub ctime: i64,
    /// Last data change time (ms).
    #[rename(keep)]
    pub mtime: i64,
    /// The data version.
    pub version: i32,
    /// The ACL version: 0 for every node but `/zookeeper/config`, which a real server reports
    /// as -1 (its ACL is set at startup without counting as a change).
    pub aversion: i32,
    /// The owning session of an ephemeral node, 0 for a persistent one.
    #[rename(session)]
    pub ephemeral_owner: SessionId,
    /// Child names (last components), sorted.
    pub children: BTreeSet<String>,
    /// The child-creation counter (ZooKeeper's stored `cversion`): every successful child creation
    /// adds one, wrapping like a Java `int`; deletes leave it. The next sequence suffix is its value.
    pub counter: i32,
    /// Whether the server deletes it on its own: a container or a TTL node.
    #[rename(keep)]
    pub reaping: Reaping,
    /// Who may do what with it.
    #[rename(keep)]
    pub acl: Acls,
}

/// When the server deletes a persistent node on its own (ZooKeeper's ContainerManager). A
/// client cannot tell: ZooKeeper keeps it in the stored `ephemeralOwner` and reports 0 there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Reaping {
    /// Never: it lives until deleted.
    #[default]
    Never,
    /// A container: once it has had a child and has none.
    Container,
    /// A TTL node: once it has no child and its data has not changed for this many milliseconds.
    Ttl(i64),
}

impl Reaping {
    /// How the server treats a node created as `mode`.
    pub fn of(mode: CreateMode) -> Reaping {
        match mode {
            CreateMode::Container => Reaping::Container,
            _ => mode.ttl_ms().map_or(Reaping::Never, Reaping::Ttl),
        }
    }

    /// 1 for a container or a TTL node, 0 otherwise: what it adds to the tree's count of them.
    fn counted(self) -> usize {
        usize::from(self != Reaping::Never)
    }
}

impl Znode {
    /// Whether the server's reaper would delete it at time `now_ms`: a container that has had
    /// a child and has none, or a TTL node with no child whose data has not changed for longer
    /// than its TTL (ZooKeeper's `ContainerManager.getCandidates`).
    pub fn reapable(&self, now_ms: i64) -> bool {
        self.children.is_empty()
            && match self.reaping {
                Reaping::Never => false,
                Reaping::Container => self.counter > 0,
                Reaping::Ttl(ttl_ms) => now_ms - self.mtime > ttl_ms,
            }
    }

    /// The stat a client sees for this node.
    pub fn stat(&self) -> Stat {
        let num_children = clamp_len(self.children.len());
        Stat {
            czxid: self.czxid,
            mzxid: self.mzxid,
            pzxid: self.pzxid,
            ctime: self.ctime,
            mtime: self.mtime,
            version: self.version,
            // ZooKeeper stores the count of creates and reports the count of changes (v3
            // semantics): every create has a delete except for the children still present.
            cversion: self.counter.wrapping_mul(2).wrapping_sub(num_children),
            aversion: self.aversion,
            ephemeral_owner: self.ephemeral_owner,
            data_length: clamp_len(self.data.len()),
            num_children,
        }
    }
}

impl RenameSessions for Tree {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        Tree {
            nodes: self.nodes.rename_sessions(renaming),
            reaped_kinds: self.reaped_kinds,
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        self.nodes.hash_renamed(renaming, hasher);
    }
}

/// A length as the `i32` a stat carries, saturating instead of wrapping.
fn clamp_len(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

/// What a successful mutation replaced, so that a failed multi can put the tree back exactly.
/// Undo records must be applied in reverse order of the mutations, each with the path it was for
/// (the created path for a create).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Undo {
    /// Nothing changed (a check).
    Nothing,
    /// A node was created: remove it, and restore its parent's counter, child list and pzxid.
    Create {
        /// The parent's pzxid before the create.
        parent_pzxid: Zxid,
    },
    /// A node was deleted: this is the node; reinsert it and restore its parent's pzxid.
    Delete {
        /// The deleted node, whole.
        node: Znode,
        /// The parent's pzxid before the delete.
        parent_pzxid: Zxid,
    },
    /// A node's data was set: these are the fields it had.
    SetData {
        /// The old data.
        data: Vec<u8>,
        /// The old version.
        version: i32,
        /// The old mzxid.
        mzxid: Zxid,
        /// The old mtime.
        mtime: i64,
    },
}

/// All znodes, keyed by full path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tree {
    nodes: BTreeMap<String, Znode>,
    /// How many nodes are containers or TTL nodes: none, and the reaper has nothing to look at.
    reaped_kinds: usize,
}

impl Default for Tree {
    fn default() -> Self {
        Self::new()
    }
}

impl Tree {
    /// A fresh tree as a new ZooKeeper has it: `/`, `/zookeeper`, `/zookeeper/config` and
    /// `/zookeeper/quota`, all persistent with zero stats (so `/` reports cversion -1: its child
    /// was added without counting as a create) and open to anyone, but for the config node,
    /// which anyone may only read (its ACL set at startup, reported as ACL version -1).
    pub fn new() -> Self {
        let mut nodes = BTreeMap::new();
        let node = |children: &[&str]| Znode {
            children: children.iter().map(|c| (*c).to_owned()).collect(),
            ..Znode::default()
        };
        nodes.insert("/".to_owned(), node(&["zookeeper"]));
        nodes.insert("/zookeeper".to_owned(), node(&["config", "quota"]));
        let config = Znode {
            aversion: -1,
            acl: Acls::new(vec![Acl::new(Perms::READ, Id::ANYONE)]),
            ..node(&[])
        };
        nodes.insert("/zookeeper/config".to_owned(), config);
        nodes.insert("/zookeeper/quota".to_owned(), node(&[]));
        Tree {
            nodes,
            reaped_kinds: 0,
        }
    }

    /// The node at `path`, if any.
    pub fn get(&self, path: &str) -> Option<&Znode> {
        self.nodes.get(path)
    }

    /// How many nodes are under `path`, at every depth (ZooKeeper counts the keys that start
    /// with `path/`; for the root, every node but itself).
    pub fn descendants(&self, path: &str) -> i32 {
        let count = match path {
            "/" => self.nodes.len().saturating_sub(1),
            _ => {
                let under = format!("{path}/");
                let after = self.nodes.range(under.clone()..);
                after.take_while(|(key, _)| key.starts_with(&under)).count()
            }
        };
        i32::try_from(count).unwrap_or(i32::MAX)
    }

    /// The stat of the node at `path`, if any.
    pub fn stat(&self, path: &str) -> Option<Stat> {
        self.nodes.get(path).map(Znode::stat)
    }

    /// Number of znodes, the reserved ones included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty (never, since the root always exists).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Creates a node at `path` (for `sequential`, the prefix the parent's counter is appended to
    /// as `%010d`) with `acl`. Errors in ZooKeeper's order: NoNode (parent missing), NodeExists,
    /// NoChildrenForEphemerals. Returns the actual path, the new node's stat and the undo record.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &mut self,
        path: &str,
        sequential: bool,
        data: &[u8],
        acl: Acls,
        ephemeral_owner: SessionId,
        zxid: Zxid,
        now_ms: i64,
    ) -> Result<(String, Stat, Undo), ZkError> {
        let parent_path = path::parent(path);
        let parent = self.nodes.get(parent_path).ok_or(ZkError::NoNode)?;
        let parent_is_ephemeral = parent.ephemeral_owner != 0;
        let full = if sequential {
            let mut full = String::with_capacity(path.len() + 11);
            full.push_str(path);
            push_sequence(&mut full, parent.counter);
            full
        } else {
            path.to_owned()
        };
        // The new node goes in through the entry that finds its path free, and the parent is
        // looked up once more to be changed: three searches of the tree's long paths, not four.
        let Entry::Vacant(free) = self.nodes.entry(full) else {
            return Err(ZkError::NodeExists);
        };
        if parent_is_ephemeral {
            return Err(ZkError::NoChildrenForEphemerals);
        }
        let full = free.key().clone();
        let node = Znode {
            data: data.to_vec(),
            czxid: zxid,
            mzxid: zxid,
            pzxid: zxid,
            ctime: now_ms,
            mtime: now_ms,
            version: 0,
            aversion: 0,
            ephemeral_owner,
            children: BTreeSet::new(),
            counter: 0,
            reaping: Reaping::Never,
            acl,
        };
        let stat = node.stat();
        free.insert(node);
        let parent = self.nodes.get_mut(parent_path).ok_or(ZkError::NoNode)?;
        let undo = Undo::Create {
            parent_pzxid: parent.pzxid,
        };
        parent.counter = parent.counter.wrapping_add(1);
        parent.pzxid = zxid;
        parent.children.insert(path::name(&full).to_owned());
        Ok((full, stat, undo))
    }

    /// Deletes the node at `path` if `version` matches (-1 matches any). Errors in ZooKeeper's
    /// order: NoNode, BadVersion, NotEmpty. The undo record holds the deleted node.
    pub fn delete(&mut self, path: &str, version: i32, zxid: Zxid) -> Result<Undo, ZkError> {
        // The node comes out at once and goes back if it may not go: two searches of the tree's
        // long paths for a delete, not three (a refused delete is rare).
        let (key, node) = self.nodes.remove_entry(path).ok_or(ZkError::NoNode)?;
        let refused = check_version(&node, version).err().or_else(|| {
            let has_children = !node.children.is_empty();
            has_children.then_some(ZkError::NotEmpty)
        });
        match (refused, self.nodes.get_mut(path::parent(path))) {
            (None, Some(parent)) => {
                let parent_pzxid = parent.pzxid;
                parent.children.remove(path::name(path));
                parent.pzxid = zxid;
                self.reaped_kinds -= node.reaping.counted();
                Ok(Undo::Delete { node, parent_pzxid })
            }
            (refused, _) => {
                self.nodes.insert(key, node);
                Err(refused.unwrap_or(ZkError::NoNode))
            }
        }
    }

    /// Replaces the data of the node at `path` if `version` matches (-1 matches any); the version
    /// goes up by one even when the data is equal. Errors: NoNode, BadVersion. Returns the new stat.
    pub fn set_data(
        &mut self,
        path: &str,
        data: &[u8],
        version: i32,
        zxid: Zxid,
        now_ms: i64,
    ) -> Result<(Stat, Undo), ZkError> {
        let node = self.nodes.get_mut(path).ok_or(ZkError::NoNode)?;
        check_version(node, version)?;
        let undo = Undo::SetData {
            data: std::mem::replace(&mut node.data, data.to_vec()),
            version: node.version,
            mzxid: node.mzxid,
            mtime: node.mtime,
        };
        node.version = node.version.wrapping_add(1);
        node.mzxid = zxid;
        node.mtime = now_ms;
        Ok((node.stat(), undo))
    }

    /// Replaces the ACL of the node at `path` if its ACL version matches `version` (-1 matches
    /// any); the ACL version goes up by one. Errors: NoNode, BadVersion. Returns the new stat.
    pub fn set_acl(&mut self, path: &str, acl: Acls, version: i32) -> Result<Stat, ZkError> {
        let node = self.nodes.get_mut(path).ok_or(ZkError::NoNode)?;
        if version != -1 && version != node.aversion {
            return Err(ZkError::BadVersion);
        }
        node.acl = acl;
        node.aversion = node.aversion.wrapping_add(1);
        Ok(node.stat())
    }

    /// Makes the node at `path`, if there is one, one the server deletes on its own as
    /// `reaping` says. A client cannot tell: its stat stays as it was.
    pub fn set_reaping(&mut self, path: &str, reaping: Reaping) {
        if let Some(node) = self.nodes.get_mut(path) {
            self.reaped_kinds = self.reaped_kinds - node.reaping.counted() + reaping.counted();
            node.reaping = reaping;
        }
    }

    /// Whether the server's reaper would delete the node at `path` at time `now_ms` (see
    /// [`Znode::reapable`]).
    pub fn reapable(&self, path: &str, now_ms: i64) -> bool {
        self.nodes
            .get(path)
            .is_some_and(|node| node.reapable(now_ms))
    }

    /// Whether any node is a container or a TTL node.
    pub fn has_reaped_kinds(&self) -> bool {
        self.reaped_kinds > 0
    }

    /// Every node the reaper would delete at `now_ms`, by path.
    pub fn reap_candidates(&self, now_ms: i64) -> Vec<String> {
        if !self.has_reaped_kinds() {
            return Vec::new();
        }
        let candidates = self.nodes.iter().filter(|(_, node)| node.reapable(now_ms));
        candidates.map(|(path, _)| path.clone()).collect()
    }

    /// Fails unless the node at `path` exists at `version` (-1 matches any): NoNode, BadVersion.
    pub fn check(&self, path: &str, version: i32) -> Result<(), ZkError> {
        check_version(self.nodes.get(path).ok_or(ZkError::NoNode)?, version)
    }

    /// Puts back what a mutation at `path` replaced. Records must come in reverse order of the
    /// mutations; a record that does not fit the tree is ignored rather than panicking.
    pub fn undo(&mut self, path: &str, undo: Undo) {
        match undo {
            Undo::Nothing => {}
            Undo::Create { parent_pzxid } => {
                if let Some(removed) = self.nodes.remove(path) {
                    self.reaped_kinds -= removed.reaping.counted();
                }
                if let Some(parent) = self.nodes.get_mut(path::parent(path)) {
                    parent.children.remove(path::name(path));
                    parent.counter = parent.counter.wrapping_sub(1);
                    parent.pzxid = parent_pzxid;
                }
            }
            Undo::Delete { node, parent_pzxid } => {
                if let Some(parent) = self.nodes.get_mut(path::parent(path)) {
                    parent.children.insert(path::name(path).to_owned());
                    parent.pzxid = parent_pzxid;
                }
                self.reaped_kinds += node.reaping.counted();
                self.nodes.insert(path.to_owned(), node);
            }
            Undo::SetData {
                data,
                version,
                mzxid,
                mtime,
            } => {
                if let Some(node) = self.nodes.get_mut(path) {
                    node.data = data;
                    node.version = version;
                    node.mzxid = mzxid;
                    node.mtime = mtime;
                }
            }
        }
    }

    /// Sets a node's child-creation counter; lets tests reach the i32 wrap without 2^31 creates.
    #[cfg(test)]
    pub(crate) fn set_counter(&mut self, path: &str, counter: i32) {
        if let Some(node) = self.nodes.get_mut(path) {
            node.counter = counter;
        }
    }
}

/// Appends a sequence suffix as Java's `%010d` writes it: zero-padded to 10 characters, the sign
/// included (`-000000001`), without the formatting machinery a create would otherwise spend most
/// of its time in.
fn push_sequence(out: &mut String, counter: i32) {
    let mut digits = [b'0'; 10];
    let mut rest = counter.unsigned_abs();
    let mut first = digits.len();
    while rest > 0 {
        first -= 1;
        digits[first] = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let width = match counter < 0 {
        true => {
            out.push('-');
            9
        }
        false => 10,
    };
    let shown = (digits.len() - first).max(width);
    out.extend(
        digits[digits.len() - shown..]
            .iter()
            .map(|&digit| char::from(digit)),
    );
}

/// ZooKeeper's version check: -1 matches any version.
fn check_version(node: &Znode, version: i32) -> Result<(), ZkError> {
    if version != -1 && version != node.version {
        return Err(ZkError::BadVersion);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_is_written_as_java_writes_percent_010d() {
        for counter in [
            0,
            7,
            42,
            1_000_000_000,
            i32::MAX,
            -1,
            -42,
            -999_999_999,
            i32::MIN,
        ] {
            let mut written = String::from("/a/n-");
            push_sequence(&mut written, counter);
            assert_eq!(written, format!("/a/n-{counter:010}"));
        }
    }

    fn tree_with(paths: &[&str]) -> Tree {
        let mut t = Tree::new();
        for p in paths {
            t.create(p, false, b"", Acls::OPEN, 0, 1, 1).unwrap();
        }
        t
    }

    #[test]
    fn new_tree_has_root_and_reserved_nodes_with_zero_stats() {
        let t = Tree::new();
        assert_eq!(t.len(), 4);
        let root = t.get("/").unwrap();
        assert_eq!(root.children.iter().collect::<Vec<_>>(), ["zookeeper"]);
        assert_eq!(
            t.stat("/").unwrap(),
            Stat {
                cversion: -1,
                num_children: 1,
                ..Stat::default()
            }
        );
        assert_eq!(t.stat("/zookeeper").unwrap().cversion, -2);
        let config = Stat {
            aversion: -1,
            ..Stat::default()
        };
        assert_eq!(t.stat("/zookeeper/config"), Some(config));
        assert_eq!(t.stat("/zookeeper/quota"), Some(Stat::default()));
    }

    #[test]
    fn create_sets_czxid_mzxid_pzxid_and_times() {
        let mut t = Tree::new();
        let (path, stat, _) = t
            .create("/a", false, b"xyz", Acls::OPEN, 0, 7, 1234)
            .unwrap();
        assert_eq!(Some(stat), t.stat("/a"));
        assert_eq!(path, "/a");
        assert_eq!(
            t.stat("/a").unwrap(),
            Stat {
                czxid: 7,
                mzxid: 7,
                pzxid: 7,
                ctime: 1234,
                mtime: 1234,
                version: 0,
                cversion: 0,
                aversion: 0,
                ephemeral_owner: 0,
                data_length: 3,
                num_children: 0,
            }
        );
        assert_eq!(t.get("/a").unwrap().data, b"xyz");
    }

    #[test]
    fn create_sets_parent_pzxid_but_not_its_mzxid() {
        let mut t = tree_with(&["/a"]);
        t.create("/a/b", false, b"", Acls::OPEN, 0, 9, 50).unwrap();
        let a = t.stat("/a").unwrap();
        assert_eq!((a.pzxid, a.mzxid, a.mtime), (9, 1, 1));
    }

    #[test]
    fn delete_sets_parent_pzxid() {
        let mut t = tree_with(&["/a", "/a/b"]);
        t.delete("/a/b", -1, 12).unwrap();
        assert_eq!(t.stat("/a").unwrap().pzxid, 12);
        assert_eq!(t.get("/a/b"), None);
        assert!(t.get("/a").unwrap().children.is_empty());
    }

    #[test]
    fn set_data_bumps_version_even_for_equal_data() {
        let mut t = Tree::new();
        t.create("/a", false, b"same", Acls::OPEN, 0, 1, 10)
            .unwrap();
        let (s1, _) = t.set_data("/a", b"same", -1, 2, 20).unwrap();
        let (s2, _) = t.set_data("/a", b"same", -1, 3, 30).unwrap();
        assert_eq!((s1.version, s1.mzxid, s1.mtime), (1, 2, 20));
        assert_eq!((s2.version, s2.mzxid, s2.mtime), (2, 3, 30));
        assert_eq!((s2.czxid, s2.ctime, s2.pzxid), (1, 10, 1));
    }

    #[test]
    fn version_minus_one_matches_any_version() {
        let mut t = tree_with(&["/a"]);
        t.set_data("/a", b"1", -1, 2, 2).unwrap();
        t.set_data("/a", b"2", 1, 3, 3).unwrap();
        assert_eq!(
            t.set_data("/a", b"3", 1, 4, 4).unwrap_err(),
            ZkError::BadVersion
        );
        assert_eq!(t.check("/a", -1), Ok(()));
        assert_eq!(t.check("/a", 2), Ok(()));
        assert_eq!(t.check("/a", 0), Err(ZkError::BadVersion));
        assert_eq!(t.delete("/a", 5, 5).unwrap_err(), ZkError::BadVersion);
        assert!(t.delete("/a", -1, 6).is_ok());
    }

    #[test]
    fn set_data_version_wraps_like_java_int() {
        let mut t = tree_with(&["/a"]);
        t.nodes.get_mut("/a").unwrap().version = i32::MAX;
        let (s, _) = t.set_data("/a", b"", i32::MAX, 2, 2).unwrap();
        assert_eq!(s.version, i32::MIN);
    }

    #[test]
    fn sequential_suffix_counts_every_child_creation_not_deletes() {
        let mut t = tree_with(&["/q"]);
        let (p0, _, _) = t.create("/q/n-", true, b"", Acls::OPEN, 0, 2, 0).unwrap();
        t.create("/q/plain", false, b"", Acls::OPEN, 0, 3, 0)
            .unwrap();
        t.delete("/q/plain", -1, 4).unwrap();
        t.delete(&p0, -1, 5).unwrap();
        let (p2, _, _) = t.create("/q/n-", true, b"", Acls::OPEN, 0, 6, 0).unwrap();
        let (p3, _, _) = t.create("/q/", true, b"", Acls::OPEN, 0, 7, 0).unwrap();
        assert_eq!(p0, "/q/n-0000000000");
        assert_eq!(p2, "/q/n-0000000002");
        assert_eq!(p3, "/q/0000000003");
        // The root's counter started at 0 although /zookeeper exists; creating /q counted 1.
        let (r, _, _) = t.create("/", true, b"", Acls::OPEN, 0, 8, 0).unwrap();
        assert_eq!(r, "/0000000001");
    }

    #[test]
    fn counter_wraps_to_negative() {
        let mut t = tree_with(&["/q"]);
        t.set_counter("/q", i32::MAX);
        let (a, _, _) = t.create("/q/n", true, b"", Acls::OPEN, 0, 2, 0).unwrap();
        let (b, _, _) = t.create("/q/n", true, b"", Acls::OPEN, 0, 3, 0).unwrap();
        let (c, _, _) = t.create("/q/n", true, b"", Acls::OPEN, 0, 4, 0).unwrap();
        assert_eq!(a, "/q/n2147483647");
        assert_eq!(b, "/q/n-2147483648");
        assert_eq!(c, "/q/n-2147483647");
        t.set_counter("/q", -1);
        let (d, _, _) = t.create("/q/n", true, b"", Acls::OPEN, 0, 5, 0).unwrap();
        assert_eq!(d, "/q/n-000000001");
        assert_eq!(t.get("/q").unwrap().counter, 0);
    }

    #[test]
    fn sequential_name_taken_is_node_exists() {
        let mut t = tree_with(&["/q", "/q/n0000000001"]);
        // counter is 1 now: the next sequential name collides.
        assert_eq!(
            t.create("/q/n", true, b"", Acls::OPEN, 0, 3, 0)
                .unwrap_err(),
            ZkError::NodeExists
        );
        assert_eq!(t.get("/q").unwrap().counter, 1);
    }

    #[test]
    fn cversion_reported_is_twice_counter_minus_children() {
        let mut t = tree_with(&["/p", "/p/a", "/p/b", "/p/c"]);
        assert_eq!(t.stat("/p").unwrap().cversion, 3);
        t.delete("/p/a", -1, 2).unwrap();
        assert_eq!(t.stat("/p").unwrap().cversion, 4);
        t.delete("/p/b", -1, 3).unwrap();
        t.delete("/p/c", -1, 4).unwrap();
        assert_eq!(t.stat("/p").unwrap().cversion, 6);
        t.set_counter("/p", i32::MAX);
        assert_eq!(t.stat("/p").unwrap().cversion, -2);
    }

    #[test]
    fn data_length_and_num_children_are_derived() {
        let mut t = Tree::new();
        t.create("/p", false, &[0; 5], Acls::OPEN, 0, 1, 0).unwrap();
        t.create("/p/a", false, b"", Acls::OPEN, 0, 2, 0).unwrap();
        t.create("/p/b", false, b"", Acls::OPEN, 0, 3, 0).unwrap();
        let s = t.stat("/p").unwrap();
        assert_eq!((s.data_length, s.num_children), (5, 2));
        t.set_data("/p", b"", -1, 4, 0).unwrap();
        assert_eq!(t.stat("/p").unwrap().data_length, 0);
    }

    #[test]
    fn create_error_precedence_no_node_then_node_exists_then_no_children_for_ephemerals() {
        let mut t = Tree::new();
        t.create("/e", false, b"", Acls::OPEN, 42, 1, 0).unwrap();
        for (path, sequential, error) in [
            ("/x/y", false, ZkError::NoNode),
            ("/e", false, ZkError::NodeExists),
            ("/e/c", false, ZkError::NoChildrenForEphemerals),
            ("/e/c", true, ZkError::NoChildrenForEphemerals),
            ("/", false, ZkError::NodeExists),
        ] {
            let refused = t.create(path, sequential, b"", Acls::OPEN, 0, 2, 0);
            assert_eq!(
                refused.unwrap_err(),
                error,
                "{path} sequential={sequential}"
            );
        }
        assert_eq!(t.stat("/e").unwrap().ephemeral_owner, 42);
        assert_eq!(t.get("/e").unwrap().counter, 0);
    }

    #[test]
    fn delete_error_precedence_no_node_then_bad_version_then_not_empty() {
        let mut t = tree_with(&["/a", "/a/b"]);
        assert_eq!(t.delete("/x", 3, 2).unwrap_err(), ZkError::NoNode);
        assert_eq!(t.delete("/a", 3, 2).unwrap_err(), ZkError::BadVersion);
        assert_eq!(t.delete("/a", 0, 2).unwrap_err(), ZkError::NotEmpty);
        assert_eq!(t.delete("/a", -1, 2).unwrap_err(), ZkError::NotEmpty);
    }

    #[test]
    fn undo_in_reverse_order_restores_the_tree_exactly() {
        let mut t = tree_with(&["/a", "/a/old"]);
        let before = t.clone();
        let mut log = Vec::new();
        let (p, _, u) = t.create("/a/n", true, b"", Acls::OPEN, 0, 5, 9).unwrap();
        log.push((p.clone(), u));
        log.push((p.clone(), t.set_data(&p, b"new", -1, 5, 9).unwrap().1));
        log.push((p.clone(), t.delete(&p, -1, 5).unwrap()));
        log.push(("/a/old".to_owned(), t.delete("/a/old", -1, 5).unwrap()));
        log.push(("/a".to_owned(), t.set_data("/a", b"z", 0, 5, 9).unwrap().1));
        assert_ne!(t, before);
        for (path, undo) in log.into_iter().rev() {
            t.undo(&path, undo);
        }
        assert_eq!(t, before);
    }
}
