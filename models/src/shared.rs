//! Parts of a state that its successors share until one of them changes it.
//!
//! Most steps change one client, or the server, or neither; cloning the whole state for every
//! successor spent a third of a check in the allocator. A [`Shared`] part is cloned by bumping a
//! count, and copied only when a successor writes to it. It compares, hashes and prints as the
//! value it holds, so the state's meaning, and every fingerprint, is unchanged.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use zklab_recipes::symmetry::{RenameSessions, SessionRenaming, StableHasher};

/// A value shared by every state that has not changed it; writing through it copies it first
/// when another state still holds it.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    /// Shares a value.
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: RenameSessions> RenameSessions for Shared<T> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        Shared::new(self.0.rename_sessions(renaming))
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        self.0.hash_renamed(renaming, hasher);
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
}
