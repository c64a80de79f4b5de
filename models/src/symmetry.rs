//! Symmetry reduction: clients are interchangeable, so states that differ only by which client
//! plays which role are explored once.
//!
//! The representative of a state is, among every reordering of the clients, the renamed state
//! with the smallest hash. Reordering moves each client to another slot and renames its current
//! session to the session of the client that had that slot, everywhere: the server's session
//! table, ephemeral owners and watches, the session guids inside znode names, the machines, the
//! ops in flight and the inboxes. Candidates are compared by a hash taken under the renaming
//! ([`RenameSessions::hash_renamed`]), and only the one kept is built.

use std::hash::{Hash, Hasher};

use stateright::Representative;
use zklab_recipes::symmetry::{FxHasher, RenameSessions, SessionRenaming};

use crate::model::State;

impl<M: RenameSessions + Clone, N: RenameSessions + Clone> Representative for State<M, N> {
    fn representative(&self) -> Self {
        // Clients go in the order of a hash that ignores which session they have; only clients
        // that tie need every ordering tried, so most states have one candidate.
        let anonymous = SessionRenaming::new(self.clients.iter().map(|client| (client.session, 0)));
        let keys: Vec<u64> = self
            .clients
            .iter()
            .map(|client| {
                let mut hasher = FxHasher::default();
                client.hash_renamed(&anonymous, &mut hasher);
                hasher.finish()
            })
            .collect();
        let orders = orders_by_key(&keys);
        let chosen = match orders.as_slice() {
            [order] => order,
            _ => orders
                .iter()
                .min_by_key(|order| self.hash_in_order(order))
                .expect("at least one order"),
        };
        if chosen
            .iter()
            .enumerate()
            .all(|(slot, &client)| slot == client)
        {
            self.clone()
        } else {
            self.in_order(chosen)
        }
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
    /// had the slot.
    pub fn in_order(&self, order: &[usize]) -> Self {
        let renaming = self.renaming(order);
        State {
            server: self.server.rename_sessions(&renaming),
            clients: order
                .iter()
                .map(|&client| self.clients[client].rename_sessions(&renaming))
                .collect(),
            budget: self.budget,
            monitors: self.monitors.rename_sessions(&renaming),
            broken: self.broken.clone(),
        }
    }

    /// A hash of [`State::in_order`]'s state, taken without building it: the same as that
    /// state's `hash_in_order` of the clients as they are.
    pub fn hash_in_order(&self, order: &[usize]) -> u64 {
        let renaming = self.renaming(order);
        let mut hasher = FxHasher::default();
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

    /// Each moved client's session to the session of the slot it takes.
    fn renaming(&self, order: &[usize]) -> SessionRenaming {
        SessionRenaming::new(
            order
                .iter()
                .enumerate()
                .map(|(slot, &client)| (self.clients[client].session, self.clients[slot].session)),
        )
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
