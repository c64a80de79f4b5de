//! Symmetry reduction: clients are interchangeable, so states that differ only by which client
//! plays which role are explored once.
//!
//! The representative of a state is, among every permutation of the clients, the renamed state
//! with the smallest hash. A permutation moves each client to another slot and renames its
//! current session to the session of the client it replaces, everywhere: the server's session
//! table, ephemeral owners and watches, the session guids inside znode names, the machines, the
//! ops in flight and the inboxes.

use std::hash::{Hash, Hasher};

use stateright::Representative;
use zklab_recipes::symmetry::{RenameSessions, SessionRenaming};

use crate::model::{Client, State};
use crate::shared::Shared;

impl<M: RenameSessions + Clone + Hash, N: RenameSessions + Clone + Hash> Representative
    for State<M, N>
{
    fn representative(&self) -> Self {
        // Clients go in the order of a hash that ignores which session they have; only clients
        // that tie need every ordering tried, so most states cost one renaming, not n!.
        let anonymous = SessionRenaming::new(self.clients.iter().map(|client| (client.session, 0)));
        let keys: Vec<u64> = self
            .clients
            .iter()
            // The client itself, not its `Shared`: a key needs no shareable copy.
            .map(|client| hash(&Client::rename_sessions(client, &anonymous)))
            .collect();
        let orders = orders_by_key(&keys);
        if let [order] = orders.as_slice() {
            if order
                .iter()
                .enumerate()
                .all(|(slot, &client)| slot == client)
            {
                return self.clone();
            }
        }
        let mut best: Option<(u64, State<M, N>)> = None;
        for order in orders {
            let mut permutation = vec![0; order.len()];
            for (slot, &client) in order.iter().enumerate() {
                permutation[client] = slot;
            }
            let candidate = self.permuted(&permutation);
            let candidate_hash = hash(&candidate);
            if best
                .as_ref()
                .is_none_or(|(lowest, _)| candidate_hash < *lowest)
            {
                best = Some((candidate_hash, candidate));
            }
        }
        best.map_or_else(|| self.clone(), |(_, state)| state)
    }
}

fn hash(value: &impl Hash) -> u64 {
    let mut hasher = FxHasher(0);
    value.hash(&mut hasher);
    hasher.finish()
}

/// `Hasher` methods that write a whole number as one word, each `name(type as unsigned)`.
macro_rules! whole_numbers {
    ($($name:ident($type:ty as $unsigned:ty)),*) => {
        $(
            #[inline]
            fn $name(&mut self, i: $type) {
                self.write_u64(i as $unsigned as u64);
            }
        )*
    };
}

/// A fast, fixed (so deterministic) hash: the representative is chosen by it for every state.
struct FxHasher(u64);

impl Hasher for FxHasher {
    /// Eight bytes at a time, the last word padded with zeros.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.write_u64(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    // A whole number is one word: its bytes, padded with zeros, as `write` takes them (so the
    // hash is the same), without the loop. A signed number is first taken as the unsigned one of
    // its width, whose bytes are the same.
    whole_numbers!(
        write_u8(u8 as u8),
        write_u16(u16 as u16),
        write_u32(u32 as u32),
        write_usize(usize as u64),
        write_i8(i8 as u8),
        write_i16(i16 as u16),
        write_i32(i32 as u32),
        write_i64(i64 as u64),
        write_isize(isize as u64)
    );

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Every ordering of the indices of `keys` sorted by key, with ties in every order.
fn orders_by_key(keys: &[u64]) -> Vec<Vec<usize>> {
    let mut sorted: Vec<usize> = (0..keys.len()).collect();
    sorted.sort_by_key(|&i| keys[i]);
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
    /// The state in which client `i` takes slot `permutation[i]` and the session of the client
    /// that had that slot.
    pub fn permuted(&self, permutation: &[usize]) -> Self {
        let renaming = SessionRenaming::new(
            permutation
                .iter()
                .enumerate()
                .map(|(from, &to)| (self.clients[from].session, self.clients[to].session)),
        );
        let mut clients: Vec<Option<Shared<Client<M>>>> = vec![None; self.clients.len()];
        for (from, &to) in permutation.iter().enumerate() {
            clients[to] = Some(self.clients[from].rename_sessions(&renaming));
        }
        State {
            server: self.server.rename_sessions(&renaming),
            clients: clients.into_iter().flatten().collect(),
            budget: self.budget,
            monitors: self.monitors.rename_sessions(&renaming),
            broken: self.broken.clone(),
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
    fn a_whole_number_hashes_as_its_bytes() {
        let hashed = |write: &dyn Fn(&mut FxHasher)| {
            let mut hasher = FxHasher(7);
            write(&mut hasher);
            hasher.finish()
        };
        type Write<'a> = &'a dyn Fn(&mut FxHasher);
        let cases: [(Write, Vec<u8>); 9] = [
            (&|h| h.write_u8(0xab), vec![0xab]),
            (&|h| h.write_i8(-2), (-2i8).to_le_bytes().to_vec()),
            (&|h| h.write_u16(0xabcd), 0xabcd_u16.to_le_bytes().to_vec()),
            (&|h| h.write_i16(-3), (-3i16).to_le_bytes().to_vec()),
            (
                &|h| h.write_u32(7 << 20),
                (7u32 << 20).to_le_bytes().to_vec(),
            ),
            (&|h| h.write_i32(-5), (-5i32).to_le_bytes().to_vec()),
            (&|h| h.write_i64(-9), (-9i64).to_le_bytes().to_vec()),
            (&|h| h.write_usize(99), 99usize.to_le_bytes().to_vec()),
            (&|h| h.write_isize(-1), (-1isize).to_le_bytes().to_vec()),
        ];
        for (number, bytes) in cases {
            assert_eq!(hashed(number), hashed(&|h| h.write(&bytes)), "{bytes:?}");
        }
        let words = |h: &mut FxHasher| {
            h.write_u64(u64::from_le_bytes(*b"01234567"));
            h.write_u64(u64::from_le_bytes(*b"89\0\0\0\0\0\0"));
        };
        assert_eq!(hashed(&|h| h.write(b"0123456789")), hashed(&words));
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
