//! The session table: which sessions are alive and which ephemeral nodes each one owns, so that
//! ending a session knows what to delete, and who each one authenticated as.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use zklab_recipes::session_renaming::{RenameSessions, SessionIds, SessionRenaming, StableHasher};

use zklab_recipes::client::SessionId;

use crate::acl::Identity;

/// Live sessions and their ephemeral nodes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sessions {
    /// The id the next session gets.
    next: SessionId,
    /// Each live session's ephemeral node paths, sorted.
    live: BTreeMap<SessionId, BTreeSet<String>>,
    /// The identities of each session that authenticated, until it ends. Not tied to `live`: a
    /// follower learns a session's identities as soon as its leader does, before it may have
    /// applied the session's creation.
    identities: BTreeMap<SessionId, Identity>,
}

impl Default for Sessions {
    fn default() -> Self {
        Self::new()
    }
}

impl Sessions {
    /// No sessions yet; the first one opened gets id 1.
    pub fn new() -> Self {
        Sessions {
            next: 1,
            live: BTreeMap::new(),
            identities: BTreeMap::new(),
        }
    }

    /// Opens a session; ids are 1, 2, 3, ... in opening order and never reused.
    pub fn open(&mut self) -> SessionId {
        let id = self.next;
        self.next = self.next.wrapping_add(1);
        self.live.insert(id, BTreeSet::new());
        id
    }

    /// Whether the session is open.
    pub fn is_alive(&self, session: SessionId) -> bool {
        self.live.contains_key(&session)
    }

    /// The live sessions, in id order.
    pub fn alive(&self) -> impl Iterator<Item = SessionId> + '_ {
        self.live.keys().copied()
    }

    /// Records that the session owns the ephemeral node at `path` (no-op for a dead session).
    pub fn add_ephemeral(&mut self, session: SessionId, path: &str) {
        if let Some(paths) = self.live.get_mut(&session) {
            paths.insert(path.to_owned());
        }
    }

    /// Forgets the session's ephemeral node at `path` (it was deleted).
    pub fn remove_ephemeral(&mut self, session: SessionId, path: &str) {
        if let Some(paths) = self.live.get_mut(&session) {
            paths.remove(path);
        }
    }

    /// The session's ephemeral nodes, sorted; `None` for a session that is not alive.
    pub fn ephemerals(&self, session: SessionId) -> Option<&BTreeSet<String>> {
        self.live.get(&session)
    }

    /// Ends the session and hands back its ephemeral nodes; `None` if it was not alive.
    /// Its identities stay until [`Sessions::forget_identity`]: the end's own notifications
    /// are heard as it was known.
    pub fn close(&mut self, session: SessionId) -> Option<BTreeSet<String>> {
        self.live.remove(&session)
    }

    /// Forgets who the session was (it ended).
    pub fn forget_identity(&mut self, session: SessionId) {
        self.identities.remove(&session);
    }

    /// Who the session is: its address alone until it authenticates.
    pub fn identity(&self, session: SessionId) -> Identity {
        self.identities.get(&session).cloned().unwrap_or_default()
    }

    /// The session is known by `identity` from now on (a session known by its address alone
    /// holds no entry, so that one state is not two).
    pub fn set_identity(&mut self, session: SessionId, identity: Identity) {
        match identity == Identity::default() {
            true => self.identities.remove(&session),
            false => self.identities.insert(session, identity),
        };
    }
}

impl RenameSessions for Sessions {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        let live = self
            .live
            .iter()
            .map(|(&session, paths)| {
                (
                    renaming.id(session),
                    paths.iter().map(|p| renaming.text(p)).collect(),
                )
            })
            .collect();
        let identities = self
            .identities
            .iter()
            .map(|(&session, identity)| (renaming.id(session), identity.clone()))
            .collect();
        Sessions {
            next: self.next,
            live,
            identities,
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        hasher.write_i64(self.next);
        hasher.write_unordered(self.live.iter(), |(session, paths), hasher| {
            session.hash_ids(renaming, hasher);
            paths.hash_renamed(renaming, hasher);
        });
        hasher.write_unordered(self.identities.iter(), |(session, identity), hasher| {
            session.hash_ids(renaming, hasher);
            identity.hash(hasher);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_count_from_one_in_opening_order_and_are_not_reused() {
        let mut s = Sessions::new();
        assert_eq!((s.open(), s.open(), s.open()), (1, 2, 3));
        s.close(3);
        assert_eq!(s.open(), 4);
        assert_eq!(s.alive().collect::<Vec<_>>(), [1, 2, 4]);
    }

    #[test]
    fn closed_or_unknown_session_is_not_alive() {
        let mut s = Sessions::new();
        let a = s.open();
        assert!(s.is_alive(a));
        assert!(!s.is_alive(0) && !s.is_alive(2) && !s.is_alive(-1));
        assert_eq!(s.close(a), Some(BTreeSet::new()));
        assert!(!s.is_alive(a));
        assert_eq!(s.close(a), None);
    }

    #[test]
    fn ephemerals_are_tracked_per_session_in_path_order() {
        let mut s = Sessions::new();
        let (a, b) = (s.open(), s.open());
        s.add_ephemeral(a, "/z");
        s.add_ephemeral(a, "/b");
        s.add_ephemeral(b, "/c");
        s.add_ephemeral(9, "/ghost");
        s.remove_ephemeral(b, "/c");
        let mine: Vec<_> = s.ephemerals(a).unwrap().iter().cloned().collect();
        assert_eq!(mine, ["/b", "/z"]);
        assert!(s.ephemerals(b).unwrap().is_empty());
        assert_eq!(s.ephemerals(9), None);
        let closed: Vec<_> = s.close(a).unwrap().into_iter().collect();
        assert_eq!(closed, ["/b", "/z"]);
    }
}
