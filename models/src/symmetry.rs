//! Symmetry reduction: clients are interchangeable, so states that differ only by which client
//! plays which role are explored once.
//!
//! Reordering the clients moves each to another slot and renames its current session to the
//! session of the client that had that slot, everywhere: the server's session table, ephemeral
//! owners and watches, the session guids inside znode names, the machines, the ops in flight and
//! the inboxes. With symmetry on, a state hashes as the smallest hash of its reorderings, so
//! every reordering of it hashes alike, and the checker, which tells states apart by their
//! hashes, explores one of them. The reorderings are hashed as they would be
//! ([`RenameSessions::hash_renamed`]), and never built.

use std::hash::{Hash, Hasher};

use zklab_recipes::session_renaming::{RenameSessions, SessionRenaming, StableHasher};

use crate::model::State;

impl<M: RenameSessions + Hash, N: RenameSessions + Hash> Hash for State<M, N> {
    fn hash<H: Hasher>(&self, hasher: &mut H) {
        if self.symmetric {
            hasher.write_u64(self.orbit_hash());
        } else {
            // Every field but `symmetric`, which is the same in every state of a search.
            self.server.hash(hasher);
            self.clients.hash(hasher);
            self.budget.hash(hasher);
            self.monitors.hash(hasher);
            self.broken.hash(hasher);
        }
    }
}

impl<M: RenameSessions, N: RenameSessions> State<M, N> {
    /// The same for every reordering of the clients: the smallest [`State::hash_in_order`] of
    /// the orders that sort clients by a hash that ignores which session they have. Only clients
    /// that tie need every ordering tried, so most states have one order to hash.
    pub fn orbit_hash(&self) -> u64 {
        let anonymous = SessionRenaming::new(self.clients.iter().map(|client| (client.session, 0)));
        let keys: Vec<u64> = self
            .clients
            .iter()
            .map(|client| {
                let mut hasher = StableHasher::default();
                client.hash_renamed(&anonymous, &mut hasher);
                hasher.finish()
            })
            .collect();
        orders_by_key(&keys)
            .iter()
            .map(|order| self.hash_in_order(order))
            .min()
            .expect("at least one order")
    }

    /// A hash of [`State::in_order`]'s state, taken without building it: the same as that
    /// state's `hash_in_order` of its clients as they are.
    pub fn hash_in_order(&self, order: &[usize]) -> u64 {
        let renaming = self.renaming(order);
        let mut hasher = StableHasher::default();
        self.server.hash_renamed(&renaming, &mut hasher);
        hasher.write_usize(order.len());
        for &client in order {
            self.clients[client].hash_renamed(&renaming, &mut hasher);
        }
        self.budget.hash(&mut hasher);
        self.monitors.hash_renamed(&renaming, &mut hasher);
        self.broken.hash(&mut hasher);
        hasher.finish()
    }

    /// Each moved client's session to the session of the slot it takes, and its index to the
    /// slot's.
    pub(crate) fn renaming(&self, order: &[usize]) -> SessionRenaming {
        let slots = order.iter().enumerate();
        SessionRenaming::new(
            slots
                .clone()
                .map(|(slot, &client)| (self.clients[client].session, self.clients[slot].session)),
        )
        .with_clients(slots.map(|(slot, &client)| (client as u32, slot as u32)))
    }
}

/// Every ordering of the indices of `keys` sorted by key, with ties in every order.
fn orders_by_key(keys: &[u64]) -> Vec<Vec<usize>> {
    let mut sorted: Vec<usize> = (0..keys.len()).collect();
    sorted.sort_by_key(|&i| keys[i]);
    if sorted.windows(2).all(|pair| keys[pair[0]] != keys[pair[1]]) {
        // No ties, the common case: one order, and nothing more to allocate.
        return vec![sorted];
    }
    let mut orders = vec![Vec::new()];
    for group in sorted.chunk_by(|&a, &b| keys[a] == keys[b]) {
        let arrangements = permutations(group.len());
        orders = orders
            .into_iter()
            .flat_map(|prefix| {
                arrangements.iter().map(move |arrangement| {
                    let mut order = prefix.clone();
                    order.extend(arrangement.iter().map(|&i| group[i]));
                    order
                })
            })
            .collect();
    }
    orders
}

impl<M: RenameSessions + Clone, N: RenameSessions> State<M, N> {
    /// The state with client `order[slot]` in each slot, under the session of the client that
    /// had the slot: what [`State::hash_in_order`] hashes.
    pub fn in_order(&self, order: &[usize]) -> Self {
        self.reordered(order, &self.renaming(order))
    }

    /// The state with client `order[slot]` in each slot and every session renamed by
    /// `renaming`, which may come from another state (a successor keeps its parent's renaming,
    /// so that a session opened on the way keeps its name).
    pub fn reordered(&self, order: &[usize], renaming: &SessionRenaming) -> Self {
        State {
            server: self.server.rename_sessions(renaming),
            clients: order
                .iter()
                .map(|&client| self.clients[client].rename_sessions(renaming))
                .collect(),
            budget: self.budget,
            monitors: self.monitors.rename_sessions(renaming),
            broken: self.broken.clone(),
            symmetric: self.symmetric,
        }
    }
}

/// Every permutation of `0..n`, in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut all = Vec::new();
    let mut current: Vec<usize> = (0..n).collect();
    loop {
        all.push(current.clone());
        // The next permutation in lexicographic order, or the end.
        let Some(i) = (1..n).rev().find(|&i| current[i - 1] < current[i]) else {
            return all;
        };
        let j = (i..n)
            .rev()
            .find(|&j| current[j] > current[i - 1])
            .unwrap_or(i);
        current.swap(i - 1, j);
        current[i..].reverse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutations_are_all_distinct_and_complete() {
        let all = permutations(4);
        assert_eq!(all.len(), 24);
        let distinct: std::collections::BTreeSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), 24);
        assert_eq!(permutations(1), vec![vec![0]]);
    }

    #[test]
    fn only_ties_are_ordered_every_way() {
        assert_eq!(orders_by_key(&[30, 10, 20]), vec![vec![1, 2, 0]]);
        assert_eq!(
            orders_by_key(&[5, 9, 5]),
            vec![vec![0, 2, 1], vec![2, 0, 1]]
        );
        assert_eq!(orders_by_key(&[1, 1, 1]).len(), 6);
    }
}
