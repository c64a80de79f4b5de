//! Shared counter truth: every increment is counted once, none acknowledged is lost, and the
//! count is the increments acknowledged.
//!
//! Judged from the server's applied writes of the counter's node (each a [`Tally`]: the value,
//! and every writer's entry) and from what the writers were told (`Counted`). An increment is
//! named by the entry that brings it in, its writer's name and its number; a write brings in
//! the increments of its entries that no write brought in before.
//!
//! - **Counted once.** A write that adds more to the value than it brings in increments counts
//!   one again; so does a write that brings in none, even if it adds nothing (each write of
//!   the counter is one increment).
//! - **Nothing lost.** A write that adds less than it brings in overwrote an increment; an
//!   increment told counted that no write brought in was never counted; two increments told
//!   the same value were counted as one (each value is reached by one increment).
//! - **The count is what was acknowledged.** A client that finishes was told of every
//!   increment its writes brought in (unless its recipe gave up, which its application was
//!   told). With the rules above, the counter's value once every client has finished is then
//!   the number of increments acknowledged. A crashed client never finishes: its last
//!   increment may be in, untold.
//!
//! A real server's trace has no applied ops: there only the rule of two increments told one
//! value judges (the others wait for the first applied op). The model has no end of a client,
//! so the last rule judges simulated runs only.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_recipes::shared_counter::Tally;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::{changes, Change};

/// No increment is counted twice: broken when a write of a shared counter added more than the
/// increments it brought in, or brought in none.
pub static COUNTED_TWICE: Property =
    Property::new("counted-twice", "no increment is counted twice");

/// No acknowledged increment is lost: broken when a write of a shared counter added less than
/// the increments it brought in, an increment was told counted that no write brought in, or two
/// increments were told the same value.
pub static INCREMENT_LOST: Property =
    Property::new("increment-lost", "no acknowledged increment is lost");

/// The count is the increments acknowledged: broken when a client finished while the counter
/// held an increment its writes brought in that it was never told counted.
pub static INCREMENT_UNTOLD: Property = Property::new(
    "increment-untold",
    "the count is the increments acknowledged",
);

/// An increment: its writer's name's digest, and its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Increment {
    #[rename(keep)]
    writer: i64,
    #[rename(keep)]
    seq: i64,
}

/// Who brought an increment in, and whether it was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct BroughtIn {
    #[rename(client)]
    by: ClientId,
    #[rename(keep)]
    told: bool,
}

/// The shared-counter monitor of one counter node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct CountedOnce {
    #[rename(keep)]
    path: String,
    /// Whether the trace has shown an applied op: without them (a real server's trace) the
    /// node is unknown, and nothing is judged by it.
    #[rename(keep)]
    sees_server: bool,
    /// The counter's value now.
    #[rename(keep)]
    value: i64,
    /// Every increment a write brought in.
    brought: BTreeMap<Increment, BroughtIn>,
    /// Each value told, and the increment it was told of.
    #[rename(keep)]
    told_values: BTreeMap<i64, Increment>,
    /// The clients whose recipe gave up.
    #[rename(client)]
    gave_up: BTreeSet<ClientId>,
    /// The writers' names, by digest.
    #[rename(keep)]
    names: BTreeMap<i64, String>,
}

impl CountedOnce {
    /// A monitor of the counter in the node `path`, which does not exist yet (its value 0).
    pub fn new(path: &str) -> Self {
        CountedOnce {
            path: path.to_owned(),
            sees_server: false,
            value: 0,
            brought: BTreeMap::new(),
            told_values: BTreeMap::new(),
            gave_up: BTreeSet::new(),
            names: BTreeMap::new(),
        }
    }

    /// An increment as the messages name it.
    fn name(&self, increment: Increment) -> String {
        let writer = self.names.get(&increment.writer).cloned();
        let writer = writer.unwrap_or_else(|| format!("#{:016x}", increment.writer as u64));
        format!("{writer}'s increment {}", increment.seq)
    }

    fn names(&self, increments: &[Increment]) -> String {
        let names: Vec<String> = increments.iter().map(|i| self.name(*i)).collect();
        names.join(", ")
    }

    /// `client`'s write made the node's data `data`.
    fn written(&mut self, client: ClientId, data: &[u8]) -> Option<(&'static Property, String)> {
        // Not a tally: no writer of the recipe's made it, and nothing is judged by it.
        let tally = Tally::decode(data)?;
        let added = tally.value.saturating_sub(self.value);
        self.value = tally.value;
        let mut new = Vec::new();
        for (name, entry) in &tally.entries {
            let writer = Outcome::digest(name.as_bytes());
            self.names.entry(writer).or_insert_with(|| name.clone());
            let increment = Increment {
                writer,
                seq: entry.seq,
            };
            if !self.brought.contains_key(&increment) {
                new.push(increment);
            }
        }
        let told = false;
        for increment in &new {
            self.brought
                .insert(*increment, BroughtIn { by: client, told });
        }
        let brings = new.len() as i64;
        let message = |what: &str| {
            let brought = match brings {
                0 => "no new increment".to_owned(),
                _ => format!("{brings} new ({})", self.names(&new)),
            };
            format!("c{client}'s write of the counter adds {added} and brings in {brought}: {what}")
        };
        if brings == 0 || added > brings {
            Some((&COUNTED_TWICE, message("it counts an increment again")))
        } else if added < brings {
            Some((&INCREMENT_LOST, message("it overwrote an increment")))
        } else {
            None
        }
    }

    /// `client` was told `increment` counted, the counter reaching `value` by it.
    fn told(
        &mut self,
        client: ClientId,
        increment: Increment,
        value: i64,
    ) -> Option<(&'static Property, String)> {
        let other = self.told_values.insert(value, increment);
        if let Some(other) = other.filter(|other| *other != increment) {
            let message = format!(
                "{} and {} were both told the value {value}: one was counted over the other",
                self.name(other),
                self.name(increment)
            );
            return Some((&INCREMENT_LOST, message));
        }
        if !self.sees_server {
            return None;
        }
        match self.brought.get_mut(&increment) {
            Some(brought) => {
                brought.told = true;
                None
            }
            None => Some((
                &INCREMENT_LOST,
                format!(
                    "c{client} was told {} counted, but no write brought it in",
                    self.name(increment)
                ),
            )),
        }
    }

    fn finished(&self, client: ClientId) -> Option<(&'static Property, String)> {
        if self.gave_up.contains(&client) {
            return None;
        }
        let (untold, _) = (self.brought.iter()).find(|(_, b)| b.by == client && !b.told)?;
        let message = format!(
            "c{client} finished, and the counter holds {}, which its write brought in and it \
             was never told counted",
            self.name(*untold)
        );
        Some((&INCREMENT_UNTOLD, message))
    }
}

impl Monitor for CountedOnce {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let (property, message) = match &entry.event {
            TraceEvent::Applied {
                client, op, reply, ..
            } => {
                self.sees_server = true;
                let data = changes(op, reply).find_map(|change| match change {
                    Change::Created { path, data, .. } | Change::Set { path, data }
                        if path == self.path =>
                    {
                        Some(data)
                    }
                    _ => None,
                })?;
                self.written(*client, data)?
            }
            TraceEvent::Outcome {
                client,
                outcome: Outcome::Counted { writer, seq, value },
                ..
            } => {
                let increment = Increment {
                    writer: *writer,
                    seq: *seq,
                };
                self.told(*client, increment, *value)?
            }
            TraceEvent::Outcome {
                client,
                outcome: Outcome::Failed(_),
                ..
            } => {
                self.gave_up.insert(*client);
                return None;
            }
            TraceEvent::Finished { client } => self.finished(*client)?,
            _ => return None,
        };
        Some(Violation::new(property, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&COUNTED_TWICE, &INCREMENT_LOST, &INCREMENT_UNTOLD]
    }
}

#[cfg(test)]
mod tests {
    use zklab_recipes::client::{Op, OpResult, SessionId, Stat, ZkError};
    use zklab_recipes::machine::{Action, Input, Recipe};
    use zklab_recipes::shared_counter::{Entry, SharedCounter};

    use super::*;
    use crate::monitor::traces::{first_broken_in, outcome, set_applied};

    const PATH: &str = "/counter/count";

    fn first(events: Vec<TraceEvent>) -> Option<&'static Property> {
        first_broken_in(CountedOnce::new(PATH), events)
    }

    /// The counter's data: `value`, and each writer's entry (name, number, value reached).
    fn data(value: i64, entries: &[(&str, i64, i64)]) -> Vec<u8> {
        let entries = entries.iter().map(|&(writer, seq, value)| {
            let entry = Entry { seq, value };
            (writer.to_owned(), entry)
        });
        let entries = entries.collect();
        Tally { value, entries }.encode()
    }

    /// Client `client` (in session `client + 1`) sets the counter to `value` and `entries`.
    fn sets(client: ClientId, value: i64, entries: &[(&str, i64, i64)]) -> TraceEvent {
        let session = SessionId::from(client) + 1;
        set_applied(client, session, PATH, data(value, entries))
    }

    /// Client `client` is told its increment `seq` counted, reaching `value`.
    fn told(client: ClientId, seq: i64, value: i64) -> TraceEvent {
        let writer = Outcome::digest(format!("c{client}").as_bytes());
        let counted = Outcome::Counted { writer, seq, value };
        outcome(client, SessionId::from(client) + 1, counted)
    }

    fn finished(client: ClientId) -> TraceEvent {
        TraceEvent::Finished { client }
    }

    #[test]
    fn increments_brought_in_once_each_and_told_hold() {
        // The create the recipe sends for c0's first increment, to a node not there yet.
        let mut machine = SharedCounter::new(PATH, "c0").machine(1);
        machine.step(Input::Start);
        let Action::Send(op) = machine.step(Input::Reply(Err(ZkError::NoNode))).action else {
            panic!("the counter's create");
        };
        assert!(matches!(&op, Op::Create { data: made, .. } if *made == data(1, &[("c0", 1, 1)])));
        let create = TraceEvent::Applied {
            client: 0,
            session: 1,
            zxid: 1,
            op,
            reply: Ok(OpResult::Created {
                path: PATH.to_owned(),
                stat: Stat::default(),
            }),
        };
        let run = vec![
            create,
            sets(1, 2, &[("c0", 1, 1), ("c1", 1, 2)]),
            told(1, 1, 2),
            told(0, 1, 1),
            sets(0, 3, &[("c0", 2, 3), ("c1", 1, 2)]),
            told(0, 2, 3),
            finished(0),
            finished(1),
        ];
        assert_eq!(first(run), None);
    }

    #[test]
    fn a_write_that_adds_without_a_new_entry_or_changes_no_entry_counts_twice() {
        let landed = sets(0, 1, &[("c0", 1, 1)]);
        // A set whose reply was lost, made again over its own landed write.
        let again = sets(0, 2, &[("c0", 1, 2)]);
        assert_eq!(first(vec![landed.clone(), again]), Some(&COUNTED_TWICE));
        let same = sets(0, 1, &[("c0", 1, 1)]);
        assert_eq!(first(vec![landed.clone(), same]), Some(&COUNTED_TWICE));
        let two_for_one = sets(1, 3, &[("c0", 1, 1), ("c1", 1, 3)]);
        assert_eq!(first(vec![landed, two_for_one]), Some(&COUNTED_TWICE));
    }

    #[test]
    fn a_write_over_an_increment_or_a_count_told_of_no_write_or_one_value_told_twice_is_lost() {
        // c1 read before c0's increment, and wrote over it.
        let over = vec![sets(0, 1, &[("c0", 1, 1)]), sets(1, 1, &[("c1", 1, 1)])];
        assert_eq!(first(over), Some(&INCREMENT_LOST));
        let never = vec![sets(1, 1, &[("c1", 1, 1)]), told(0, 1, 2)];
        assert_eq!(first(never), Some(&INCREMENT_LOST));
        let one_value = vec![told(0, 1, 1), told(1, 1, 1)];
        assert_eq!(first(one_value), Some(&INCREMENT_LOST));
    }

    #[test]
    fn a_real_servers_trace_is_judged_by_the_values_told_alone() {
        // No applied op: no write to hold a count told against, nor a client's finish.
        let told_apart = vec![told(0, 1, 1), told(1, 1, 2), told(0, 2, 3), finished(0)];
        assert_eq!(first(told_apart), None);
        let same_value = vec![told(0, 1, 2), told(1, 1, 2)];
        assert_eq!(first(same_value), Some(&INCREMENT_LOST));
    }

    #[test]
    fn a_client_that_finishes_untold_of_an_increment_it_brought_in_breaks_the_count() {
        let landed = sets(0, 1, &[("c0", 1, 1)]);
        let untold = vec![landed.clone(), finished(1), finished(0)];
        assert_eq!(first(untold), Some(&INCREMENT_UNTOLD));
        // Its recipe gave up: its application knows the increment's fate is unknown.
        let failed = outcome(0, 1, Outcome::Failed(ZkError::MarshallingError));
        assert_eq!(first(vec![landed, failed, finished(0)]), None);
    }
}
