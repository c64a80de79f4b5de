//! Parts of a state that its successors share until one of them changes it.
//!
//! Most steps change one client, or the server, or neither; cloning the whole state for every
//! successor spent a third of a check in the allocator. A [`Shared`] part is cloned by bumping a
//! count, and copied only when a successor writes to it. It compares, hashes and prints as the
//! value it holds, so the state's meaning, and every fingerprint, is unchanged.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

use zklab_recipes::session_renaming::{RenameSessions, SessionRenaming, StableHasher};

/// A value shared by every state that has not changed it; writing through it copies it first
/// when another state still holds it.
pub struct Shared<T>(Arc<Held<T>>);

/// The value, and its last hashes under a renaming: a successor shares most parts of its
/// state, and is mostly hashed under the renamings its parent was (see
/// [`RenameSessions::hash_renamed`]).
struct Held<T> {
    value: T,
    renamed_hashes: Mutex<RenamedHashes>,
}

/// The last two renamings a value was hashed under, and the hashes: one for the key that ignores
/// sessions, one for the order the state is hashed in.
#[derive(Default)]
struct RenamedHashes([Option<(SessionRenaming, u64)>; 2]);

impl<T: Clone> Clone for Held<T> {
    /// A copy to be written to: the hashes are not copied.
    fn clone(&self) -> Self {
        Held::new(self.value.clone())
    }
}

impl<T> Held<T> {
    fn new(value: T) -> Self {
        Held {
            value,
            renamed_hashes: Mutex::default(),
        }
    }
}

impl<T> Shared<T> {
    /// Shares a value.
    pub fn new(value: T) -> Self {
        Shared(Arc::new(Held::new(value)))
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0.value
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        let held = Arc::make_mut(&mut self.0);
        // The value is about to change: its hashes with it.
        *held
            .renamed_hashes
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = RenamedHashes::default();
        &mut held.value
    }
}

impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.value == other.0.value
    }
}

impl<T: Eq> Eq for Shared<T> {}

impl<T: Hash> Hash for Shared<T> {
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        self.0.value.hash(hasher);
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

impl<T: RenameSessions> RenameSessions for Shared<T> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        Shared::new(self.0.value.rename_sessions(renaming))
    }

    /// The value's own hash under the renaming, written as one word; remembered, so that the
    /// states that share the value hash it once per renaming.
    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        let remembered = |hashes: &RenamedHashes| {
            hashes
                .0
                .iter()
                .flatten()
                .find(|(seen, _)| seen == renaming)
                .map(|&(_, hash)| hash)
        };
        let lock = || {
            self.0
                .renamed_hashes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        let seen = remembered(&lock());
        let hash = seen.unwrap_or_else(|| {
            let mut own = StableHasher::default();
            self.0.value.hash_renamed(renaming, &mut own);
            let hash = own.finish();
            let mut hashes = lock();
            hashes.0.swap(0, 1);
            hashes.0[0] = Some((renaming.clone(), hash));
            hash
        });
        hasher.write_u64(hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_copies_only_a_value_another_state_still_holds() {
        let first = Shared::new(vec![1]);
        let mut second = first.clone();
        assert!(Arc::ptr_eq(&first.0, &second.0));
        second.push(2);
        assert_eq!((&*first, &*second), (&vec![1], &vec![1, 2]));
        let before = Arc::as_ptr(&second.0);
        second.push(3);
        assert_eq!(
            Arc::as_ptr(&second.0),
            before,
            "a sole holder writes in place"
        );
    }

    #[test]
    fn it_compares_and_hashes_as_its_value() {
        use std::hash::{BuildHasher, RandomState};
        let hasher = RandomState::new();
        let (a, b) = (Shared::new("x".to_owned()), Shared::new("x".to_owned()));
        assert_eq!(a, b);
        assert_eq!(hasher.hash_one(&a), hasher.hash_one("x".to_owned()));
    }

    #[test]
    fn a_write_forgets_the_hashes_remembered_for_the_old_value() {
        let same = SessionRenaming::default();
        let hashed = |value: &Shared<String>| {
            let mut hasher = StableHasher::default();
            value.hash_renamed(&same, &mut hasher);
            hasher.finish()
        };
        let mut value = Shared::new("a".to_owned());
        let before = hashed(&value);
        value.push('b');
        assert_ne!(hashed(&value), before);
        assert_eq!(hashed(&value), hashed(&Shared::new("ab".to_owned())));
    }
}
