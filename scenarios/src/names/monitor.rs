//! Name resolution: a resolved name gives the value most recently registered before the read.
//!
//! Judged from the clients' requests, the server's applied writes and what the clients were
//! told: a `Wrote` is the registration of the name its client last asked to write; a lookup
//! (`getData` of a name without a watch, after the `sync` of that name that begins it, if any)
//! begun after a registration of that name was told must read that value or one applied after
//! it. A lookup without a sync begins with its read, and on a follower may read an older value.
//! A registration told but never applied (a write that did not land) is missed by every later
//! lookup. A unique name told made (`Put`) is registered with the value of the sequential node
//! its client made last. A real server's trace has neither requests nor applied ops: nothing is
//! judged there.

use std::collections::BTreeMap;

use zklab_recipes::client::{CreateMode, Op};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::{changes, child_of, Change};

/// A name resolves to its latest registration: broken when a lookup read an older value of a name
/// than one registered before it was sent.
pub static NAME_STALE: Property =
    Property::new("name-stale", "a name resolves to its latest registration");

/// A client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Client(#[rename(client)] ClientId);

/// What a lookup must read at least: the value registered last before it was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Floor {
    /// Nothing was registered yet: anything goes.
    None,
    /// That value, applied at this place among the name's values, or one applied after it.
    Place(#[rename(keep)] usize, #[rename(keep)] i64),
    /// A value that was told registered but never applied: no read can give it.
    Unapplied(#[rename(keep)] i64),
}

/// A lookup in flight: the name, and what it must read at least.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Lookup {
    #[rename(keep)]
    name: String,
    floor: Floor,
}

/// The name-resolution monitor of one name service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct NameResolution {
    #[rename(keep)]
    dir: String,
    /// Each name's values (digests), in the order the server applied them.
    #[rename(keep)]
    applied: BTreeMap<String, Vec<i64>>,
    /// The value of each name registered (told) last.
    #[rename(keep)]
    registered: BTreeMap<String, i64>,
    /// The name each client last asked to write.
    writing: BTreeMap<Client, String>,
    /// Each client's lookup in flight.
    looking: BTreeMap<Client, Lookup>,
    /// The sequential name each client made last (a unique name, until told).
    made: BTreeMap<Client, String>,
}

impl NameResolution {
    /// A monitor of the names that are the children of `dir`.
    pub fn new(dir: &str) -> Self {
        NameResolution {
            dir: dir.to_owned(),
            ..NameResolution::default()
        }
    }

    fn name<'p>(&self, path: &'p str) -> Option<&'p str> {
        child_of(&self.dir, path)
    }

    fn requested(&mut self, client: ClientId, op: &Op) {
        match op {
            Op::Create { path, .. } | Op::SetData { path, .. } => {
                if let Some(name) = self.name(path) {
                    self.writing.insert(Client(client), name.to_owned());
                }
            }
            Op::Sync { path } | Op::GetData { path, watch: false } => {
                if let Some(name) = self.name(path) {
                    let begun = self.looking.get(&Client(client));
                    if matches!(op, Op::GetData { .. }) && begun.is_some_and(|l| l.name == name) {
                        return;
                    }
                    let floor = match self.registered.get(name) {
                        None => Floor::None,
                        Some(value) => match self.place(name, *value) {
                            Some(place) => Floor::Place(place, *value),
                            None => Floor::Unapplied(*value),
                        },
                    };
                    let name = name.to_owned();
                    self.looking.insert(Client(client), Lookup { name, floor });
                }
            }
            _ => {}
        }
    }

    /// A unique name was told made, with sequence number `item`: the one the client made last.
    fn unique_told(&mut self, client: ClientId, item: i64) {
        let Some(name) = self.made.remove(&Client(client)) else {
            return;
        };
        let numbered = name
            .get(name.len().saturating_sub(10)..)
            .and_then(|digits| digits.parse::<i64>().ok());
        let value = self.applied.get(&name).and_then(|values| values.last());
        if let (Some(value), true) = (value, numbered == Some(item)) {
            self.registered.insert(name, *value);
        }
    }

    /// Where `value` stands among the values applied to `name`, last time it was.
    fn place(&self, name: &str, value: i64) -> Option<usize> {
        self.applied.get(name)?.iter().rposition(|v| *v == value)
    }

    fn resolved(&mut self, client: ClientId, value: i64) -> Option<String> {
        let lookup = self.looking.remove(&Client(client))?;
        let (missed, floor) = match lookup.floor {
            Floor::None => return None,
            Floor::Unapplied(floor) => (true, floor),
            Floor::Place(place, floor) => {
                let values = self.applied.get(&lookup.name)?;
                (!values[place..].contains(&value), floor)
            }
        };
        missed.then(|| {
            format!(
                "c{client} resolved {} to #{:016x}, older than #{:016x} registered before it \
                 asked",
                lookup.name, value as u64, floor as u64
            )
        })
    }
}

impl Monitor for NameResolution {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        let message = match &entry.event {
            TraceEvent::Request { client, op, .. } => {
                self.requested(*client, op);
                return None;
            }
            TraceEvent::Applied {
                client, op, reply, ..
            } => {
                for change in changes(op, reply) {
                    let (Change::Created { path, data, .. } | Change::Set { path, data }) = change
                    else {
                        continue;
                    };
                    let Some(name) = child_of(&self.dir, path) else {
                        continue;
                    };
                    let values = self.applied.entry(name.to_owned()).or_default();
                    values.push(Outcome::digest(data));
                    if let Change::Created {
                        mode: CreateMode::PersistentSequential,
                        ..
                    } = change
                    {
                        self.made.insert(Client(*client), name.to_owned());
                    }
                }
                return None;
            }
            TraceEvent::Outcome {
                client,
                outcome: Outcome::Put { item },
                ..
            } => {
                self.unique_told(*client, *item);
                return None;
            }
            TraceEvent::Outcome {
                client,
                outcome: Outcome::Wrote { value },
                ..
            } => {
                if let Some(name) = self.writing.get(&Client(*client)) {
                    self.registered.insert(name.clone(), *value);
                }
                return None;
            }
            TraceEvent::Outcome {
                client,
                outcome: Outcome::Read { value, .. },
                ..
            } => self.resolved(*client, *value)?,
            _ => return None,
        };
        Some(Violation::new(&NAME_STALE, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&NAME_STALE]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::{first_broken_in, outcome};
    use zklab_recipes::acl::Acls;
    use zklab_recipes::client::{CreateMode, OpResult, Stat};

    fn request(client: ClientId, op: Op) -> TraceEvent {
        TraceEvent::Request {
            client,
            session: 1,
            op,
        }
    }

    fn set(client: ClientId, value: &[u8]) -> Vec<TraceEvent> {
        let op = Op::SetData {
            path: "/n/a".into(),
            data: value.to_vec(),
            version: -1,
        };
        let applied = TraceEvent::Applied {
            client,
            session: 1,
            zxid: 1,
            op: op.clone(),
            reply: Ok(OpResult::SetData(Stat::default())),
        };
        vec![request(client, op), applied]
    }

    fn told(client: ClientId, value: &[u8]) -> TraceEvent {
        let value = Outcome::digest(value);
        outcome(client, 1, Outcome::Wrote { value })
    }

    fn lookup(client: ClientId) -> TraceEvent {
        let op = Op::GetData {
            path: "/n/a".into(),
            watch: false,
        };
        request(client, op)
    }

    fn read(client: ClientId, value: &[u8]) -> TraceEvent {
        let value = Outcome::digest(value);
        outcome(client, 1, Outcome::Read { version: 0, value })
    }

    fn first(events: Vec<TraceEvent>) -> Option<&'static Property> {
        first_broken_in(NameResolution::new("/n"), events)
    }

    #[test]
    fn a_lookup_sent_after_a_registration_was_told_must_read_it_or_a_later_value() {
        let mut stale = set(0, b"1");
        stale.extend(set(0, b"2"));
        stale.extend([told(0, b"2"), lookup(1), read(1, b"1")]);
        assert_eq!(first(stale), Some(&NAME_STALE));
        // Sent before the registration was told: the old value is fair.
        let mut racing = set(0, b"1");
        racing.extend([lookup(1)]);
        racing.extend(set(0, b"2"));
        racing.extend([told(0, b"2"), read(1, b"1")]);
        assert_eq!(first(racing), None);
    }

    #[test]
    fn a_lookup_begins_with_its_sync() {
        let sync = request(
            1,
            Op::Sync {
                path: "/n/a".into(),
            },
        );
        // Synced before the registration was told, read after: the old value is fair.
        let mut racing = set(0, b"1");
        racing.push(sync.clone());
        racing.extend(set(0, b"2"));
        racing.extend([told(0, b"2"), lookup(1), read(1, b"1")]);
        assert_eq!(first(racing), None);
        // Synced after it: the old value is stale.
        let mut stale = set(0, b"1");
        stale.extend(set(0, b"2"));
        stale.extend([told(0, b"2"), sync, lookup(1), read(1, b"1")]);
        assert_eq!(first(stale), Some(&NAME_STALE));
    }

    #[test]
    fn a_value_registered_again_after_the_lookup_was_sent_does_not_move_its_floor() {
        let mut events = set(0, b"1");
        events.extend([told(0, b"1")]);
        events.extend(set(1, b"2"));
        events.extend([lookup(2)]);
        // The first value, registered again: the lookup read the second, applied after the
        // first's first application.
        events.extend(set(0, b"1"));
        events.extend([read(2, b"2")]);
        assert_eq!(first(events), None);
    }

    #[test]
    fn a_unique_name_told_made_resolves_to_its_value() {
        let create = Op::Create {
            path: "/n/u-".into(),
            data: b"v".to_vec(),
            mode: CreateMode::PersistentSequential,
            acl: Acls::OPEN,
        };
        let made = TraceEvent::Applied {
            client: 0,
            session: 1,
            zxid: 1,
            op: create,
            reply: Ok(OpResult::Created {
                path: "/n/u-0000000003".into(),
                stat: Stat::default(),
            }),
        };
        let told = outcome(0, 1, Outcome::Put { item: 3 });
        let lookup = request(
            1,
            Op::GetData {
                path: "/n/u-0000000003".into(),
                watch: false,
            },
        );
        let wrong = vec![made.clone(), told.clone(), lookup.clone(), read(1, b"w")];
        assert_eq!(first(wrong), Some(&NAME_STALE));
        assert_eq!(first(vec![made, told, lookup, read(1, b"v")]), None);
    }

    #[test]
    fn a_registration_told_but_never_applied_is_missed_by_every_later_lookup() {
        let create = Op::Create {
            path: "/n/a".into(),
            data: b"2".to_vec(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        };
        let mut events = set(0, b"1");
        events.extend([request(0, create), told(0, b"2"), lookup(1), read(1, b"1")]);
        assert_eq!(first(events), Some(&NAME_STALE));
    }
}
