//! A counter shared by many writers, kept in one znode (Curator's `SharedCount` and
//! `DistributedAtomicLong` keep theirs so), that counts every increment exactly once, also
//! through ConnectionLoss and session expiry.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::shared_counter::CounterError> {
//! use zklab_recipes::shared_counter::SharedCounter;
//!
//! let hits = SharedCounter::new("/app/hits", "worker-7");
//! let reached = hits.increment(client, 1).await?; // the counter's value by this increment
//! let next = hits.increment(client, 2).await?;
//! let now = hits.get(client).await?;
//! # let _ = (reached, next, now);
//! # Ok(()) }
//! ```
//!
//! An increment reads the node and writes it back one higher with `setData` at the version it
//! read, so that a write made meanwhile by another writer is never overwritten (the set fails
//! with BadVersion, and the writer reads again). That alone cannot count exactly once: when the
//! reply to a set is lost, the set may have landed or not, and trying it again is either a
//! second count or the first, while a BadVersion on the second try is either its own first set
//! or another writer's.
//!
//! So the node names what it counts. Each writer has a name of its own, which the application
//! gives and keeps across sessions (not the session id), and numbers its increments 1, 2, ...;
//! the node holds, beside the value, each writer's **entry**: the number of its last increment
//! counted and the value the counter reached by it. A writer that counts copies every other
//! writer's entry forward and sets its own. After ConnectionLoss on its set, it reads the node
//! again, and its own entry tells whether the increment is in, whatever others wrote since: an
//! entry at the increment's number is the increment counted (and gives the value it reached);
//! one below is not, and the writer counts it over what it read. A session that ends first
//! tells `SessionLost`: the application asks for the same increment, by the same number, in a
//! new session, whose first read tells the same way. An increment numbered below the writer's
//! last entry is refused (BadArguments): its value is no longer known.
//!
//! The node's data is text: the value on the first line, then one line per writer that ever
//! counted, in the order of their names, `<writer> <number> <value reached>`, each line ended
//! by a newline:
//!
//! ```text
//! 7
//! worker-2 3 5
//! worker-7 4 7
//! ```
//!
//! Empty data counts as 0 with no entries. A writer's name is not empty and holds no
//! whitespace. The node keeps one line per writer for good, so writers should be few and
//! long-lived (a service's instances, not each request); ZooKeeper's `jute.maxbuffer` (1 MiB)
//! bounds them at some tens of thousands. The first increment creates the node, and its
//! directory if missing; a create that finds the node made meanwhile reads it, and counts as
//! above. ZooKeeper's data version is a 32-bit count that wraps: a node set 2^32 times is at
//! version -1 again, which a set takes for any version, so that one set is not conditional.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::acl::Acls;
use crate::client::{CreateMode, Op, OpReply, OpResult, ZkClient, ZkError, ZkEvent};
use crate::config::ConfigSettings;
use crate::handle::{Handle, Plays};
use crate::machine::{Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::link::{Connection, Delivery, Link, RecipeError};
use crate::parts::parents::{dir_of, Parents};
use crate::session_renaming::RenameSessions;

/// A writer's entry in the counter's node: its last increment counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    /// The increment's number, as its writer numbers its increments (1, 2, ...).
    pub seq: i64,
    /// The counter's value by that increment.
    pub value: i64,
}

/// The counter's node data: the value and every writer's entry, by the writer's name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tally {
    /// The counter's value.
    pub value: i64,
    /// Each writer's last increment counted.
    pub entries: BTreeMap<String, Entry>,
}

impl Tally {
    /// The tally in a node's data (see the module documentation), or `None` if the data is not
    /// one. Empty data is 0, with no entries.
    pub fn decode(data: &[u8]) -> Option<Tally> {
        if data.is_empty() {
            return Some(Tally::default());
        }
        let text = std::str::from_utf8(data).ok()?;
        let mut lines = text.strip_suffix('\n')?.split('\n');
        let value = lines.next()?.parse().ok()?;
        let mut entries = BTreeMap::new();
        for line in lines {
            let mut fields = line.split(' ');
            let (Some(writer), Some(seq), Some(reached), None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                return None;
            };
            let entry = Entry {
                seq: seq.parse().ok()?,
                value: reached.parse().ok()?,
            };
            if !is_writer_name(writer) || entries.insert(writer.to_owned(), entry).is_some() {
                return None;
            }
        }
        Some(Tally { value, entries })
    }

    /// The tally as node data.
    pub fn encode(&self) -> Vec<u8> {
        let mut text = format!("{}\n", self.value);
        for (writer, entry) in &self.entries {
            // Writing to a String cannot fail.
            let _ = writeln!(text, "{writer} {} {}", entry.seq, entry.value);
        }
        text.into_bytes()
    }

    /// The tally with increment `seq` of `writer` counted: one higher, the writer's entry
    /// saying so, every other entry as it was; `None` past `i64::MAX`.
    pub fn counting(&self, writer: &str, seq: i64) -> Option<Tally> {
        let value = self.value.checked_add(1)?;
        let mut entries = self.entries.clone();
        entries.insert(writer.to_owned(), Entry { seq, value });
        Some(Tally { value, entries })
    }
}

/// Whether `name` may name a writer: not empty, no whitespace (the data's separators).
pub fn is_writer_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(char::is_whitespace)
}

/// An increment counted, as the counter tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Counted {
    /// The writer's name.
    pub writer: String,
    /// The increment's number.
    pub seq: i64,
    /// The counter's value by it.
    pub value: i64,
}

/// What a counter's increment tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CounterOutcome {
    /// The increment is counted, once.
    Counted(Counted),
    /// The session ended first: the increment may be counted or not; ask for it again, by the
    /// same number, in a new session.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle, the node holds no tally
    /// (`MarshallingError`), or the increment is not one it can count (`BadArguments`: a
    /// writer's name that is empty or holds whitespace, a number below 1 or below the
    /// writer's last, a value past `i64::MAX`).
    Failed(ZkError),
}

impl From<CounterOutcome> for Outcome {
    fn from(outcome: CounterOutcome) -> Self {
        match outcome {
            CounterOutcome::Counted(counted) => Outcome::Counted {
                writer: Outcome::digest(counted.writer.as_bytes()),
                seq: counted.seq,
                value: counted.value,
            },
            CounterOutcome::Lost => Outcome::Lost,
            CounterOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// A counter's machine asks nothing of its application.
pub type CounterRequest = ();

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The node's read is in flight.
    Reading,
    /// The set that counts the increment, reaching `value`, is in flight.
    Setting {
        #[rename(keep)]
        value: i64,
    },
    /// The node is missing: creating it with the increment counted.
    Creating,
    /// Its directory is missing: creating its ancestors.
    CreatingParent(Parents),
    Done,
}

/// One increment of a shared counter, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct CounterMachine {
    #[rename(keep)]
    path: String,
    #[rename(keep)]
    writer: String,
    #[rename(keep)]
    seq: i64,
    phase: Phase,
    link: Link,
}

impl CounterMachine {
    /// A machine counting increment `seq` of `writer` in the counter node `path`.
    pub fn new(path: &str, writer: &str, seq: i64) -> Self {
        CounterMachine {
            path: path.to_owned(),
            writer: writer.to_owned(),
            seq,
            phase: Phase::Idle,
            link: Link::default(),
        }
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<CounterOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: CounterOutcome) -> Step<CounterOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    fn failed(&mut self, error: ZkError) -> Step<CounterOutcome> {
        self.done(CounterOutcome::Failed(error))
    }

    fn counted(&mut self, value: i64) -> Step<CounterOutcome> {
        let counted = Counted {
            writer: self.writer.clone(),
            seq: self.seq,
            value,
        };
        self.done(CounterOutcome::Counted(counted))
    }

    fn read(&mut self) -> Step<CounterOutcome> {
        let read = Op::GetData {
            path: self.path.clone(),
            watch: false,
        };
        self.send(Phase::Reading, read)
    }

    /// The counter's `data`, at `version`, is read: the increment is in already, or is
    /// counted over it.
    fn count(&mut self, data: &[u8], version: i32) -> Step<CounterOutcome> {
        let Some(tally) = Tally::decode(data) else {
            return self.failed(ZkError::MarshallingError);
        };
        match tally.entries.get(&self.writer) {
            Some(entry) if entry.seq == self.seq => return self.counted(entry.value),
            Some(entry) if entry.seq > self.seq => return self.failed(ZkError::BadArguments),
            _ => {}
        }
        let Some(next) = tally.counting(&self.writer, self.seq) else {
            return self.failed(ZkError::BadArguments);
        };
        let set = Op::SetData {
            path: self.path.clone(),
            data: next.encode(),
            version,
        };
        // Sent once: after ConnectionLoss the node is read again, and the entry tells.
        self.phase = Phase::Setting { value: next.value };
        Step::send(self.link.send_once(set))
    }

    /// Creates the node with the increment counted. Sent again after ConnectionLoss: a create
    /// that finds the node made (by this one, or by another writer) reads it.
    fn create(&mut self) -> Step<CounterOutcome> {
        let Some(first) = Tally::default().counting(&self.writer, self.seq) else {
            return self.failed(ZkError::BadArguments);
        };
        let create = Op::Create {
            path: self.path.clone(),
            data: first.encode(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        };
        self.send(Phase::Creating, create)
    }

    fn dir(&self) -> &str {
        dir_of(&self.path)
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<CounterOutcome> {
        match (std::mem::replace(&mut self.phase, Phase::Idle), reply) {
            (Phase::Reading, Ok(OpResult::Data { data, stat })) => self.count(&data, stat.version),
            (Phase::Reading, Err(ZkError::NoNode)) => self.create(),
            (Phase::Setting { value }, Ok(OpResult::SetData(_))) => self.counted(value),
            // Its reply lost, the set may have landed; another writer came first; or the node
            // went: what the node holds now tells.
            (
                Phase::Setting { .. },
                Err(ZkError::ConnectionLoss | ZkError::BadVersion | ZkError::NoNode),
            ) => self.read(),
            (Phase::Creating, Ok(OpResult::Created { .. })) => self.counted(1),
            (Phase::Creating, Err(ZkError::NodeExists)) => self.read(),
            (Phase::Creating, Err(ZkError::NoNode)) => {
                let (parents, op) = Parents::start(self.dir(), CreateMode::Persistent);
                self.send(Phase::CreatingParent(parents), op)
            }
            (Phase::CreatingParent(parents), Ok(_) | Err(ZkError::NodeExists)) => {
                match parents.next(self.dir()) {
                    Some((next, op)) => self.send(Phase::CreatingParent(next), op),
                    None => self.create(),
                }
            }
            (_, Err(error)) => self.failed(error),
            (_, Ok(_)) => self.failed(ZkError::MarshallingError),
        }
    }
}

impl Recipe for CounterMachine {
    type Request = CounterRequest;
    type Outcome = CounterOutcome;

    fn step(&mut self, input: Input<CounterRequest>) -> Step<CounterOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start if is_writer_name(&self.writer) && self.seq >= 1 => self.read(),
            Input::Start => self.failed(ZkError::BadArguments),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.done(CounterOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::Event(ZkEvent::Session(event)) => match self.link.on_session(event, false) {
                Some(Connection::Lost) => self.done(CounterOutcome::Lost),
                _ => Step::wait(),
            },
            Input::Event(_) | Input::App(()) | Input::Timeout => Step::wait(),
        }
    }
}

/// Why an increment or a read did not complete: the session ended first (ask for the same
/// increment again in a new session), or ZooKeeper answered with an error the recipe cannot
/// handle (`MarshallingError`: the node holds no tally; `BadArguments`: see
/// [`CounterOutcome::Failed`]).
pub type CounterError = RecipeError;

/// What a counter keeps besides its node's path: the name its increments are counted under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterSettings {
    writer: String,
}

/// A counter kept in one znode, incremented under one writer's name.
pub type SharedCounter = Handle<CounterSettings>;

impl SharedCounter {
    /// The counter in the node `path` (created, with its directory, by the first increment),
    /// counting increments under the name `writer`: the same in every session, and no other
    /// writer's (not empty, no whitespace).
    pub fn new(path: &str, writer: &str) -> Self {
        let writer = writer.to_owned();
        Handle::at(path, CounterSettings { writer })
    }

    /// The name its increments are counted under.
    pub fn writer(&self) -> &str {
        &self.settings.writer
    }

    /// The machine counting increment `seq` (to build another around it).
    pub fn machine(&self, seq: i64) -> CounterMachine {
        CounterMachine::new(&self.path, &self.settings.writer, seq)
    }

    /// Counts increment number `seq` of this writer (1 for its first, each next one higher),
    /// once; returns the counter's value by it. Fails with `SessionLost` if the session ended
    /// first: ask again by the same number in a new session, and it is counted once still.
    pub async fn increment<C: ZkClient>(&self, client: &C, seq: i64) -> Result<i64, CounterError> {
        self.increment_with(client, self.machine(seq)).await
    }

    /// Counts an increment with `machine`: an increment's machine, or one built around it.
    pub async fn increment_with<C: ZkClient, M: Plays<CounterRequest, CounterOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<i64, CounterError> {
        let counted = self.start_until(client, machine, |outcome| match outcome {
            CounterOutcome::Counted(counted) => Some(counted.value),
            _ => None,
        });
        Ok(counted.await?.1)
    }

    /// The counter's value now (0 before its first increment): a configuration's lookup of the
    /// node, so it syncs first and is never older than an increment counted before the call.
    pub async fn get<C: ZkClient>(&self, client: &C) -> Result<i64, CounterError> {
        let setting = self
            .recipe_at(&self.path, ConfigSettings)
            .get(client)
            .await?;
        let data = setting.map(|setting| setting.data).unwrap_or_default();
        let tally = Tally::decode(&data).ok_or(RecipeError::Zk(ZkError::MarshallingError))?;
        Ok(tally.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{SessionEvent, Stat};
    use crate::machine::Action;
    use crate::test_steps::op;

    const PATH: &str = "/app/hits";

    fn machine(writer: &str, seq: i64) -> CounterMachine {
        SharedCounter::new(PATH, writer).machine(seq)
    }

    fn tally(value: i64, entries: &[(&str, i64, i64)]) -> Tally {
        let entries = entries.iter().map(|&(writer, seq, value)| {
            let entry = Entry { seq, value };
            (writer.to_owned(), entry)
        });
        Tally {
            value,
            entries: entries.collect(),
        }
    }

    fn read(tally: &Tally, version: i32) -> Input<CounterRequest> {
        Input::Reply(Ok(OpResult::Data {
            data: tally.encode(),
            stat: Stat {
                version,
                ..Stat::default()
            },
        }))
    }

    fn reply(error: ZkError) -> Input<CounterRequest> {
        Input::Reply(Err(error))
    }

    fn set_done() -> Input<CounterRequest> {
        Input::Reply(Ok(OpResult::SetData(Stat::default())))
    }

    fn counted(writer: &str, seq: i64, value: i64) -> Option<CounterOutcome> {
        let writer = writer.to_owned();
        Some(CounterOutcome::Counted(Counted { writer, seq, value }))
    }

    /// The tally a step's set writes, and the version it is conditional on.
    fn set(step: &Step<CounterOutcome>) -> (Tally, i32) {
        match op(step) {
            Op::SetData { data, version, .. } => (Tally::decode(data).expect("a tally"), *version),
            other => panic!("expected a set, got {other:?}"),
        }
    }

    /// `w`'s increment 2 has read `before` at version 4 and sent its set.
    fn setting(before: &Tally) -> (CounterMachine, Tally) {
        let mut m = machine("w", 2);
        assert!(matches!(
            op(&m.step(Input::Start)),
            Op::GetData { watch: false, .. }
        ));
        let (sent, version) = set(&m.step(read(before, 4)));
        assert_eq!(version, 4);
        (m, sent)
    }

    #[test]
    fn the_data_is_the_value_then_a_line_per_writer_in_name_order() {
        let t = tally(7, &[("worker-7", 4, 7), ("worker-2", 3, 5)]);
        assert_eq!(t.encode(), b"7\nworker-2 3 5\nworker-7 4 7\n");
        assert_eq!(Tally::decode(&t.encode()), Some(t));
        assert_eq!(Tally::decode(b""), Some(Tally::default()));
        for bad in [
            &b"7"[..],
            b"x\n",
            b"7\nw 1\n",
            b"7\nw 1 1 1\n",
            b"2\nw 1 1\nw 2 2\n",
        ] {
            assert_eq!(Tally::decode(bad), None, "{bad:?}");
        }
        assert!(!is_writer_name("a b") && !is_writer_name("") && is_writer_name("c0"));
    }

    #[test]
    fn an_increment_copies_every_other_entry_forward_and_sets_its_own() {
        let before = tally(5, &[("v", 3, 5), ("w", 1, 2)]);
        let (mut m, sent) = setting(&before);
        assert_eq!(sent, tally(6, &[("v", 3, 5), ("w", 2, 6)]));
        assert_eq!(m.step(set_done()).outcome, counted("w", 2, 6));
    }

    #[test]
    fn a_lost_reply_whose_set_landed_is_told_counted_from_the_entry_without_a_second_set() {
        let before = tally(5, &[("w", 1, 2)]);
        let (mut m, landed) = setting(&before);
        let again = m.step(reply(ZkError::ConnectionLoss));
        assert!(matches!(op(&again), Op::GetData { .. }));
        // Another writer counted on top of it meanwhile: the entry still tells.
        let later = landed.counting("v", 1).unwrap();
        let step = m.step(read(&later, 6));
        assert_eq!(step.outcome, counted("w", 2, 6));
        assert_eq!(step.action, Action::Done);
    }

    #[test]
    fn a_lost_reply_whose_set_did_not_land_counts_over_what_it_reads_then() {
        let before = tally(5, &[("w", 1, 2)]);
        let (mut m, _) = setting(&before);
        m.step(reply(ZkError::ConnectionLoss));
        let (sent, version) = set(&m.step(read(&before, 4)));
        assert_eq!((sent, version), (tally(6, &[("w", 2, 6)]), 4));
        assert_eq!(m.step(set_done()).outcome, counted("w", 2, 6));
    }

    #[test]
    fn another_writer_in_between_makes_it_read_again_and_count_over_that_writers_entry() {
        let before = tally(5, &[("w", 1, 2)]);
        let (mut m, _) = setting(&before);
        let step = m.step(reply(ZkError::BadVersion));
        assert!(matches!(op(&step), Op::GetData { .. }));
        let between = before.counting("v", 1).unwrap();
        let (sent, version) = set(&m.step(read(&between, 5)));
        assert_eq!(version, 5);
        assert_eq!(sent, tally(7, &[("v", 1, 6), ("w", 2, 7)]));
    }

    #[test]
    fn a_new_session_reads_first_and_its_entry_tells_whether_the_increment_is_in() {
        let before = tally(5, &[("w", 1, 2)]);
        let (mut m, landed) = setting(&before);
        let expired = Input::Event(ZkEvent::Session(SessionEvent::Expired));
        assert_eq!(m.step(expired).outcome, Some(CounterOutcome::Lost));
        // The same increment, in a new session: counted already, or not yet.
        let mut again = machine("w", 2);
        again.step(Input::Start);
        assert_eq!(again.step(read(&landed, 5)).outcome, counted("w", 2, 6));
        let mut again = machine("w", 2);
        again.step(Input::Start);
        assert_eq!(set(&again.step(read(&before, 4))).0, landed);
        // A number below its last entry cannot be told.
        let mut old = machine("w", 1);
        old.step(Input::Start);
        let step = old.step(read(&landed, 5));
        assert_eq!(
            step.outcome,
            Some(CounterOutcome::Failed(ZkError::BadArguments))
        );
    }

    #[test]
    fn the_first_increment_creates_the_node_and_its_directory_and_reads_one_made_meanwhile() {
        let mut m = machine("w", 1);
        m.step(Input::Start);
        let step = m.step(reply(ZkError::NoNode));
        let first = tally(1, &[("w", 1, 1)]);
        let made = first.encode();
        assert!(
            matches!(op(&step), Op::Create { path, data, .. } if path == PATH && *data == made)
        );
        let step = m.step(reply(ZkError::NoNode));
        assert!(matches!(op(&step), Op::Create { path, .. } if path == "/app"));
        let step = m.step(reply(ZkError::NodeExists));
        assert!(matches!(op(&step), Op::Create { path, .. } if path == PATH));
        // Sent again after ConnectionLoss, then made meanwhile: read, and the entry tells.
        let step = m.step(reply(ZkError::ConnectionLoss));
        assert!(matches!(op(&step), Op::Create { path, .. } if path == PATH));
        let step = m.step(reply(ZkError::NodeExists));
        assert!(matches!(op(&step), Op::GetData { .. }));
        assert_eq!(m.step(read(&first, 0)).outcome, counted("w", 1, 1));
        let mut m = machine("w", 1);
        m.step(Input::Start);
        m.step(reply(ZkError::NoNode));
        let created = Input::Reply(Ok(OpResult::Created {
            path: PATH.to_owned(),
            stat: Stat::default(),
        }));
        assert_eq!(m.step(created).outcome, counted("w", 1, 1));
    }

    #[test]
    fn a_bad_writer_name_or_number_or_data_fails_and_an_expired_session_is_lost() {
        for (writer, seq) in [("a b", 1), ("", 1), ("w", 0)] {
            let step = machine(writer, seq).step(Input::Start);
            let failed = Some(CounterOutcome::Failed(ZkError::BadArguments));
            assert_eq!(step.outcome, failed, "{writer:?} {seq}");
        }
        let mut m = machine("w", 1);
        m.step(Input::Start);
        let garbage = Input::Reply(Ok(OpResult::Data {
            data: b"many".to_vec(),
            stat: Stat::default(),
        }));
        let failed = Some(CounterOutcome::Failed(ZkError::MarshallingError));
        assert_eq!(m.step(garbage).outcome, failed);
        let mut m = machine("w", 1);
        m.step(Input::Start);
        let step = m.step(reply(ZkError::SessionExpired));
        assert_eq!(step.outcome, Some(CounterOutcome::Lost));
        let mut full = machine("w", 1);
        full.step(Input::Start);
        let step = full.step(read(&tally(i64::MAX, &[]), 0));
        assert_eq!(
            step.outcome,
            Some(CounterOutcome::Failed(ZkError::BadArguments))
        );
    }
}
