//! The monitors every recipe may use: properties that fold over a run's trace, one entry at a
//! time, and say when an entry breaks them (the [`Monitor`](zklab_sim::property::Monitor) trait is the simulator's, so the
//! model checker can carry them in its state). A recipe's own monitor lives in its folder, beside
//! its kit (`crate::queue::monitor`, ...); these judge what recipes share: exclusion, fencing,
//! failures, herds, stuck waiters, unowned nodes, wait-for cycles, and whether a client could
//! hear the server.

pub mod exclusion;
pub mod failure;
pub mod fencing;
pub mod hearing;
pub mod herd;
pub mod shared_line;
pub mod stuck_waiter;
#[cfg(test)]
pub(crate) mod traces;
pub mod unowned_node;
pub mod wait_for;

use std::collections::BTreeMap;
use std::time::Duration;

use zklab_recipes::client::{CreateMode, Op, OpReply, OpResult};

/// A node an applied write made or took away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change<'a> {
    /// A node was made.
    Created {
        /// Its path.
        path: &'a str,
        /// Persistent or ephemeral, sequential or not.
        mode: CreateMode,
        /// Its data.
        data: &'a [u8],
    },
    /// The node at this path was deleted.
    Deleted(&'a str),
    /// A node's data was replaced.
    Set {
        /// Its path.
        path: &'a str,
        /// The new data.
        data: &'a [u8],
    },
}

/// The nodes `op` made or took away, given the server's `reply`, inside a multi too. An
/// iterator rather than a list: monitors ask this of every applied op, and most ops change one
/// node or none. A server refuses a multi inside a multi, so a multi's ops are read one level
/// deep.
pub fn changes<'a>(op: &'a Op, reply: &'a OpReply) -> impl Iterator<Item = Change<'a>> {
    let (alone, ops, results): (_, &[Op], &[OpReply]) = match (op, reply) {
        (Op::Multi(ops), Ok(OpResult::Multi(results))) => (None, ops, results),
        _ => (change(op, reply), &[], &[]),
    };
    let within = ops.iter().zip(results);
    alone
        .into_iter()
        .chain(within.filter_map(|(op, result)| change(op, result)))
}

/// The node one op (not a multi) made or took away, given its `reply`.
fn change<'a>(op: &'a Op, reply: &'a OpReply) -> Option<Change<'a>> {
    match (op, reply.as_ref().ok()?) {
        (Op::Create { mode, data, .. }, OpResult::Created { path, .. }) => Some(Change::Created {
            path,
            mode: *mode,
            data,
        }),
        (Op::Delete { path, .. }, OpResult::Deleted) => Some(Change::Deleted(path)),
        (Op::SetData { path, data, .. }, OpResult::SetData(_)) => Some(Change::Set { path, data }),
        _ => None,
    }
}

/// The name of `path` if it is a child of `dir`.
pub(crate) fn child_of<'p>(dir: &str, path: &'p str) -> Option<&'p str> {
    let (parent, name) = path.rsplit_once('/')?;
    (parent == dir).then_some(name)
}

/// Takes out the first of `pending` that has waited longer than `bound` at `now`: a monitor
/// reports each once. Keys and values say who waits and on what.
pub(crate) fn take_overdue<K: Ord + Clone, V: Clone>(
    pending: &mut BTreeMap<K, (Duration, V)>,
    now: Duration,
    bound: Duration,
) -> Option<(K, Duration, V)> {
    let (key, (since, value)) = pending
        .iter()
        .find(|(_, (since, _))| now.saturating_sub(*since) > bound)?;
    let overdue = (key.clone(), now.saturating_sub(*since), value.clone());
    pending.remove(&overdue.0);
    Some(overdue)
}
