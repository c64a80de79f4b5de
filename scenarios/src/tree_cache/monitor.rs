//! Tree cache truth: a copy shows only states its nodes had, never goes back, and ends equal
//! to the tree.
//!
//! Judged from the server's applied ops (the tree, and every state each node of it had) and
//! what the caches told (`Cached`, `Dropped`), each session's copy apart:
//!
//! - **Nothing invented.** A node cached at a version with a value it never had at that
//!   version, or dropped while it never was deleted, is a state the tree never had.
//! - **Never back.** Within a copy, a node cached again at a lower version than before went
//!   back (unless the copy dropped it in between: a node made again starts over).
//! - **Not stale at the end.** A cache whose client finishes holds the tree's nodes with
//!   their data. A change less than [`GRACE`] before is not held against it, nor a change made
//!   while the client could not hear, until [`GRACE`] after it can again.
//!
//! A real server's trace has no applied ops: none of the rules judges it (they wait for the
//! first applied op). The model has no end of a client: there, a cache that never reaches the tree never finishes, which its "no stuck
//! state" catches.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::parts::parents::at_or_under;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::hearing::{Hearing, GRACE};
use crate::monitor::{changes, Change};

/// A cache shows only states its nodes had: broken when a tree cache told a node's version
/// with a value the node never had at it, or dropped a node never deleted.
pub static CACHE_INVENTED: Property =
    Property::new("cache-invented", "a cache shows only states its nodes had");

/// A cached node never goes back: broken when a tree cache told a node at a lower version than
/// it told before, in one copy.
pub static CACHE_BACKWARDS: Property =
    Property::new("cache-backwards", "a cached node never goes back");

/// Caches end equal to the tree: broken when a tree cache's client finished with a copy other
/// than the tree.
pub static CACHE_STALE: Property = Property::new("cache-stale", "caches end equal to the tree");

/// A session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Session(#[rename(session)] SessionId);

/// A node's state: its data version and its data's digest.
type State = (i64, i64);

/// One session's copy: the client, and each node it holds by path digest.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Copy {
    #[rename(client)]
    client: ClientId,
    #[rename(keep)]
    nodes: BTreeMap<i64, State>,
}

/// The tree-cache monitor of one subtree.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct CacheTruth {
    #[rename(keep)]
    root: String,
    /// Each node of the subtree ever made, by its path's digest.
    #[rename(keep)]
    paths: BTreeMap<i64, String>,
    /// Every state each node had: (path digest, version, value digest).
    #[rename(keep)]
    had: BTreeSet<(i64, i64, i64)>,
    /// The nodes ever deleted.
    #[rename(keep)]
    deleted: BTreeSet<i64>,
    /// The subtree now.
    #[rename(keep)]
    tree: BTreeMap<i64, State>,
    /// When the subtree last changed.
    #[rename(keep)]
    changed_at: Duration,
    /// Whether the trace has shown an applied op: without them (a real server's trace) the
    /// tree is unknown, and nothing is judged by it.
    #[rename(keep)]
    sees_server: bool,
    copies: BTreeMap<Session, Copy>,
    /// Each client's last session that cached.
    #[rename(keep)]
    last_copy: BTreeMap<ClientId, Session>,
    hearing: Hearing,
}

impl CacheTruth {
    /// A monitor of the subtree at `root`, which stands with no data from the start.
    pub fn new(root: &str) -> Self {
        let mut truth = CacheTruth {
            root: root.to_owned(),
            paths: BTreeMap::new(),
            had: BTreeSet::new(),
            deleted: BTreeSet::new(),
            tree: BTreeMap::new(),
            changed_at: Duration::ZERO,
            sees_server: false,
            copies: BTreeMap::new(),
            last_copy: BTreeMap::new(),
            hearing: Hearing::default(),
        };
        truth.now_at(root, 0, b"");
        truth
    }

    /// The node at `path` now has `data` at `version`.
    fn now_at(&mut self, path: &str, version: i64, data: &[u8]) {
        let node = Outcome::digest(path.as_bytes());
        let state = (version, Outcome::digest(data));
        self.paths.insert(node, path.to_owned());
        self.had.insert((node, state.0, state.1));
        self.tree.insert(node, state);
    }

    /// Takes in an applied op: the nodes of the subtree it made, set or deleted.
    fn applied(&mut self, op: &Op, reply: &OpReply, at: Duration) {
        self.sees_server = true;
        for change in changes(op, reply) {
            let (path, data) = match change {
                Change::Created { path, data, .. } | Change::Set { path, data } => {
                    (path, Some(data))
                }
                Change::Deleted(path) => (path, None),
            };
            if !at_or_under(path, &self.root) {
                continue;
            }
            self.changed_at = at;
            let node = Outcome::digest(path.as_bytes());
            let set = matches!(change, Change::Set { .. });
            match (data, self.tree.get(&node)) {
                (None, _) => {
                    self.deleted.insert(node);
                    self.tree.remove(&node);
                }
                // A set makes the next version; a node made (again) starts at 0.
                (Some(data), Some((version, _))) if set => self.now_at(path, version + 1, data),
                (Some(data), _) => self.now_at(path, 0, data),
            }
        }
    }

    /// A cache told `outcome`: a node cached or dropped in `session`'s copy.
    fn told(
        &mut self,
        client: ClientId,
        session: SessionId,
        outcome: Outcome,
    ) -> Option<(&'static Property, String)> {
        self.last_copy.insert(client, Session(session));
        let copy = self.copies.entry(Session(session)).or_insert_with(|| Copy {
            client,
            nodes: BTreeMap::new(),
        });
        match outcome {
            Outcome::Cached {
                node,
                version,
                value,
            } => {
                let path = self
                    .paths
                    .get(&node)
                    .cloned()
                    .unwrap_or_else(|| format!("#{node:016x}"));
                if !self.had.contains(&(node, version, value)) {
                    let message = format!(
                        "c{client} cached {path} at version {version} with a value it never had there"
                    );
                    return Some((&CACHE_INVENTED, message));
                }
                let before = copy.nodes.insert(node, (version, value));
                match before {
                    Some((was, _)) if was > version => Some((
                        &CACHE_BACKWARDS,
                        format!("c{client} cached {path} at version {version} after version {was}"),
                    )),
                    _ => None,
                }
            }
            Outcome::Dropped { node } => {
                let Some(path) = self.paths.get(&node).cloned() else {
                    let message = format!("c{client} dropped #{node:016x}, never made");
                    return Some((&CACHE_INVENTED, message));
                };
                if !self.deleted.contains(&node) {
                    let message = format!("c{client} dropped {path}, never deleted");
                    return Some((&CACHE_INVENTED, message));
                }
                let paths = &self.paths;
                copy.nodes
                    .retain(|held, _| paths.get(held).is_none_or(|held| !at_or_under(held, &path)));
                None
            }
            _ => None,
        }
    }

    fn finished(&self, client: ClientId, now: Duration) -> Option<(&'static Property, String)> {
        let session = self.last_copy.get(&client)?;
        let copy = self.copies.get(session)?;
        let values = |nodes: &BTreeMap<i64, State>| -> BTreeMap<i64, i64> {
            nodes
                .iter()
                .map(|(node, (_, value))| (*node, *value))
                .collect()
        };
        if values(&copy.nodes) == values(&self.tree) {
            return None;
        }
        let recent = now < self.changed_at.saturating_add(GRACE);
        if recent || self.hearing.missed(client, self.changed_at, now) {
            return None;
        }
        let name = |node: &i64| self.paths.get(node).cloned().unwrap_or_default();
        let missing: Vec<String> = (self.tree.iter())
            .filter(|(node, (_, value))| {
                copy.nodes.get(*node).is_none_or(|(_, held)| held != value)
            })
            .map(|(node, _)| name(node))
            .collect();
        let extra: Vec<String> = (copy.nodes.keys())
            .filter(|node| !self.tree.contains_key(*node))
            .map(name)
            .collect();
        let message = format!(
            "c{client} finished with a copy other than the tree: lacking or behind {missing:?}, holding gone {extra:?}"
        );
        Some((&CACHE_STALE, message))
    }
}

impl Monitor for CacheTruth {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.hearing.observe(entry);
        let (property, message) = match &entry.event {
            TraceEvent::Applied { op, reply, .. } => {
                self.applied(op, reply, entry.at);
                return None;
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome: outcome @ (Outcome::Cached { .. } | Outcome::Dropped { .. }),
            } if self.sees_server => self.told(*client, *session, *outcome)?,
            TraceEvent::Finished { client } if self.sees_server => {
                self.finished(*client, entry.at)?
            }
            _ => return None,
        };
        Some(Violation::new(property, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&CACHE_INVENTED, &CACHE_BACKWARDS, &CACHE_STALE]
    }
}
