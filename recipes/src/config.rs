//! Configuration in one znode, as the ZooKeeper chapter of "Hadoop: The Definitive Guide" builds
//! it: a writer sets the value, retrying through ConnectionLoss (a `setData` at version -1 is
//! idempotent), and readers read it with a watch and read it again on every event.
//!
//! ```no_run
//! # async fn demo(admin: &impl zklab_recipes::client::ZkClient,
//! #               worker: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::config::ConfigError> {
//! use zklab_recipes::config::Config;
//!
//! let config = Config::new("/app/config");
//! config.set(admin, b"threads=8".to_vec()).await?;
//! let mut follower = config.follow(worker);
//! let setting = follower.changed().await?; // the value now, then each change
//! # let _ = setting;
//! config.set_if(admin, b"threads=16".to_vec(), 1).await?; // only over version 1
//! # Ok(()) }
//! ```
//!
//! A conditional write ([`Config::set_if`]) is sent once: if its reply is lost and the write
//! sent again finds another version, the node is read to tell its own landed write from
//! another writer's. A reader that was disconnected reads again when it is back, since the
//! event may have been missed; an event that comes while a read is in flight makes it read
//! once more, since the answer may predate the change.

use crate::acl::Acls;
use crate::client::{CreateMode, Op, OpReply, OpResult, ZkClient, ZkError};
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::follow::{Follow, Followed, Heard, Reading};
use crate::parts::link::{run_until, Delivery, Link, RecipeError};
use crate::parts::parents::{dir_of, Parents};
use crate::session_renaming::RenameSessions;

/// The configuration's value at one version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Setting {
    /// The node's data version: it grows with every write.
    pub version: i32,
    /// The value.
    pub data: Vec<u8>,
}

/// What a configuration machine tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConfigOutcome {
    /// The writer's value is set, at this version.
    Written(Setting),
    /// The reader read this value (a newer version than it last told).
    Read(Setting),
    /// A lookup found no node: nothing was ever written.
    Absent,
    /// The session ended first.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle (a conditional write over
    /// another version: `BadVersion`).
    Failed(ZkError),
}

impl From<ConfigOutcome> for Outcome {
    fn from(outcome: ConfigOutcome) -> Self {
        match outcome {
            ConfigOutcome::Written(setting) => Outcome::Wrote {
                value: Outcome::digest(&setting.data),
            },
            ConfigOutcome::Read(setting) => Outcome::Read {
                version: i64::from(setting.version),
                value: Outcome::digest(&setting.data),
            },
            ConfigOutcome::Absent => Outcome::Read {
                version: ABSENT,
                value: Outcome::digest(&[]),
            },
            ConfigOutcome::Lost => Outcome::Lost,
            ConfigOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// The version an [`Outcome::Read`] carries for a lookup that found no node.
pub const ABSENT: i64 = -1;

/// A configuration machine asks nothing of its application.
pub type ConfigRequest = ();

/// What the machine does.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum ConfigPart {
    /// Sets `data`, over version `version` only (or over any, with -1).
    Writer {
        /// The value.
        #[rename(keep)]
        data: Vec<u8>,
        /// The version it must be written over, or -1.
        version: i32,
    },
    /// Reads the value once, without a watch: a lookup. It syncs first, so that it sees every
    /// write completed before it began even when its server is a follower behind the leader.
    Lookup,
    /// Reads the value and every change, until it reads `until` (if given).
    Reader {
        /// The value to stop at.
        #[rename(keep)]
        until: Option<Vec<u8>>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The write is in flight; `again` once it is a second try of a conditional write.
    Writing {
        again: bool,
    },
    /// The node is missing: creating it with the value.
    Creating,
    /// Its directory is missing: creating its ancestors.
    CreatingParent(Parents),
    /// A conditional write tried again found another version: reading whose write it is.
    Checking,
    /// A lookup brings its server up to date.
    Syncing,
    /// A lookup's read is in flight.
    Looking,
    /// The reader follows the node.
    Following,
    Done,
}

/// A configuration writer or reader, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct ConfigMachine {
    #[rename(keep)]
    path: String,
    part: ConfigPart,
    phase: Phase,
    /// The version the reader told last.
    last: Option<i32>,
    follow: Follow,
    link: Link,
}

impl ConfigMachine {
    /// A machine playing `part` for the configuration node `path`.
    pub fn new(path: &str, part: ConfigPart) -> Self {
        ConfigMachine {
            path: path.to_owned(),
            part,
            phase: Phase::Idle,
            last: None,
            follow: Follow::new(path, Reading::Data),
            link: Link::default(),
        }
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<ConfigOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: ConfigOutcome) -> Step<ConfigOutcome> {
        self.phase = Phase::Done;
        self.follow.stop();
        Step::done(outcome)
    }

    fn dir(&self) -> &str {
        dir_of(&self.path)
    }

    fn write(&mut self, again: bool) -> Step<ConfigOutcome> {
        let ConfigPart::Writer { data, version } = &self.part else {
            return Step::stop();
        };
        let set = Op::SetData {
            path: self.path.clone(),
            data: data.clone(),
            version: *version,
        };
        self.phase = Phase::Writing { again };
        // Over any version, a write sent twice sets the same value: the link sends it again.
        // Over one version, the second try would find the first's version: it is sent once.
        match *version {
            -1 => Step::send(self.link.send(set)),
            _ => Step::send(self.link.send_once(set)),
        }
    }

    fn create(&mut self) -> Step<ConfigOutcome> {
        let ConfigPart::Writer { data, .. } = &self.part else {
            return Step::stop();
        };
        let create = Op::Create {
            path: self.path.clone(),
            data: data.clone(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        };
        self.send(Phase::Creating, create)
    }

    fn read(&mut self) -> Step<ConfigOutcome> {
        let read = self.follow.read();
        self.send(Phase::Following, read)
    }

    fn written(&mut self, version: i32) -> Step<ConfigOutcome> {
        let ConfigPart::Writer { data, .. } = &self.part else {
            return Step::stop();
        };
        let data = data.clone();
        self.done(ConfigOutcome::Written(Setting { version, data }))
    }

    /// The reader read `data` at `version`: tells it if new, and stops if it is the value it
    /// waits for.
    fn read_value(&mut self, data: Vec<u8>, version: i32) -> Step<ConfigOutcome> {
        let news = self.last != Some(version);
        self.last = Some(version);
        let reached =
            matches!(&self.part, ConfigPart::Reader { until: Some(until) } if *until == data);
        let read = news.then_some(ConfigOutcome::Read(Setting { version, data }));
        let step = match reached {
            true => {
                self.phase = Phase::Done;
                self.follow.stop();
                Step::stop()
            }
            false => {
                self.phase = Phase::Following;
                Step::wait()
            }
        };
        match read {
            Some(read) => step.telling(read),
            None => step,
        }
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<ConfigOutcome> {
        let expected = match &self.part {
            ConfigPart::Writer { version, .. } => *version,
            ConfigPart::Lookup | ConfigPart::Reader { .. } => -1,
        };
        match (std::mem::replace(&mut self.phase, Phase::Idle), reply) {
            (Phase::Writing { .. }, Ok(OpResult::SetData(stat))) => self.written(stat.version),
            (Phase::Writing { .. }, Err(ZkError::ConnectionLoss)) => self.write(true),
            (Phase::Writing { .. }, Err(ZkError::NoNode)) if expected == -1 => self.create(),
            (Phase::Writing { again: true }, Err(ZkError::BadVersion)) => {
                let read = Op::GetData {
                    path: self.path.clone(),
                    watch: false,
                };
                self.send(Phase::Checking, read)
            }
            (Phase::Checking, Ok(OpResult::Data { data, stat })) => {
                let ours =
                    matches!(&self.part, ConfigPart::Writer { data: mine, .. } if *mine == data);
                match ours && stat.version == expected + 1 {
                    true => self.written(stat.version),
                    false => self.done(ConfigOutcome::Failed(ZkError::BadVersion)),
                }
            }
            (Phase::Syncing, Ok(OpResult::Synced)) => {
                let read = Op::GetData {
                    path: self.path.clone(),
                    watch: false,
                };
                self.send(Phase::Looking, read)
            }
            (Phase::Looking, Ok(OpResult::Data { data, stat })) => {
                let version = stat.version;
                self.done(ConfigOutcome::Read(Setting { version, data }))
            }
            (Phase::Looking, Err(ZkError::NoNode)) => self.done(ConfigOutcome::Absent),
            (Phase::Creating, Ok(OpResult::Created { .. })) => self.written(0),
            // Created meanwhile by another writer (or by this create, sent again): set it.
            (Phase::Creating, Err(ZkError::NodeExists)) => self.write(false),
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
            (Phase::Following, reply) => match self.follow.on_reply(reply) {
                Followed::Send(op) => self.send(Phase::Following, op),
                Followed::Read(OpResult::Data { data, stat }) => {
                    self.read_value(data, stat.version)
                }
                Followed::Wait => {
                    self.phase = Phase::Following;
                    Step::wait()
                }
                Followed::Read(_) => self.done(ConfigOutcome::Failed(ZkError::MarshallingError)),
                Followed::Failed(error) => self.done(ConfigOutcome::Failed(error)),
            },
            (_, Err(error)) => self.done(ConfigOutcome::Failed(error)),
            (_, Ok(_)) => self.done(ConfigOutcome::Failed(ZkError::MarshallingError)),
        }
    }
}

impl Recipe for ConfigMachine {
    type Request = ConfigRequest;
    type Outcome = ConfigOutcome;

    fn step(&mut self, input: Input<ConfigRequest>) -> Step<ConfigOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => match self.part {
                ConfigPart::Writer { .. } => self.write(false),
                ConfigPart::Reader { .. } => self.read(),
                ConfigPart::Lookup => {
                    let sync = Op::Sync {
                        path: self.path.clone(),
                    };
                    self.send(Phase::Syncing, sync)
                }
            },
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.done(ConfigOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::Event(event) => {
                let following = self.phase == Phase::Following;
                match self.follow.hear(&mut self.link, following, &event) {
                    Heard::Lost => self.done(ConfigOutcome::Lost),
                    Heard::Send(read) => Step::send(read),
                    Heard::Nothing => Step::wait(),
                }
            }
            Input::App(()) | Input::Timeout => Step::wait(),
        }
    }
}

/// Why a configuration operation did not complete: the session ended first, or ZooKeeper
/// answered with an error the recipe cannot handle (`BadVersion` for a conditional write over
/// another version).
pub type ConfigError = RecipeError;

/// What a configuration keeps besides its node's path: nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConfigSettings;

/// A configuration held in one znode.
pub type Config = Handle<ConfigSettings>;

impl Config {
    /// The configuration in the node `path` (created, with its directory, by the first write).
    pub fn new(path: &str) -> Self {
        Handle::at(path, ConfigSettings)
    }

    /// Sets the value, whatever the version; returns the new one.
    pub async fn set<C: ZkClient>(&self, client: &C, data: Vec<u8>) -> Result<i32, ConfigError> {
        let part = ConfigPart::Writer { data, version: -1 };
        self.write_with(client, ConfigMachine::new(&self.path, part))
            .await
    }

    /// Sets the value only over version `version`; fails with `Zk(BadVersion)` if another
    /// write came first (or `Zk(NoNode)` if there is no value yet).
    pub async fn set_if<C: ZkClient>(
        &self,
        client: &C,
        data: Vec<u8>,
        version: i32,
    ) -> Result<i32, ConfigError> {
        let part = ConfigPart::Writer { data, version };
        self.write_with(client, ConfigMachine::new(&self.path, part))
            .await
    }

    /// Writes with `machine`: a writer's machine, or one built around it.
    pub async fn write_with<C: ZkClient, M: Plays<ConfigRequest, ConfigOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<i32, ConfigError> {
        let written = self.start_until(client, machine, |outcome| match outcome {
            ConfigOutcome::Written(setting) => Some(setting.version),
            _ => None,
        });
        Ok(written.await?.1)
    }

    /// The value now, once; `None` if nothing was ever written. It syncs first, so it is never
    /// older than a write completed before the call, whichever server answers.
    pub async fn get<C: ZkClient>(&self, client: &C) -> Result<Option<Setting>, ConfigError> {
        self.get_with(client, ConfigMachine::new(&self.path, ConfigPart::Lookup))
            .await
    }

    /// Looks up with `machine`: a lookup's machine, or one built around it.
    pub async fn get_with<C: ZkClient, M: Plays<ConfigRequest, ConfigOutcome>>(
        &self,
        client: &C,
        machine: M,
    ) -> Result<Option<Setting>, ConfigError> {
        let read = self.start_until(client, machine, |outcome| match outcome {
            ConfigOutcome::Read(setting) => Some(Some(setting.clone())),
            ConfigOutcome::Absent => Some(None),
            _ => None,
        });
        Ok(read.await?.1)
    }

    /// Follows the value: the follower tells the value now, then each change.
    pub fn follow<'c, C: ZkClient>(&self, client: &'c C) -> Follower<'c, C, ConfigMachine> {
        let part = ConfigPart::Reader { until: None };
        self.follow_with(client, ConfigMachine::new(&self.path, part))
    }

    /// Follows with `machine`: a reader's machine, or one built around it.
    pub fn follow_with<'c, C: ZkClient, M: Plays<ConfigRequest, ConfigOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Follower<'c, C, M> {
        Follower {
            driver: self.driver(client, machine),
            started: false,
        }
    }
}

/// A reader following the configuration.
#[derive(Debug)]
pub struct Follower<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    started: bool,
}

impl<C: ZkClient, M: Plays<ConfigRequest, ConfigOutcome>> Follower<'_, C, M> {
    /// The value now, the first time; after that, the next value, once it changes. Fails with
    /// `SessionLost` once the session ended (follow again in a new one).
    pub async fn changed(&mut self) -> Result<Setting, ConfigError> {
        if !std::mem::replace(&mut self.started, true) {
            return run_until(&mut self.driver, Input::Start, |outcome| match outcome {
                ConfigOutcome::Read(setting) => Some(setting.clone()),
                _ => None,
            })
            .await;
        }
        loop {
            if self.driver.is_done() {
                return Err(RecipeError::SessionLost);
            }
            for outcome in self.driver.feed_next_event().await {
                if let ConfigOutcome::Read(setting) = outcome {
                    return Ok(setting);
                }
                if let Some(error) = RecipeError::ending(outcome.into()) {
                    return Err(error);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{EventType, Stat, WatchedEvent, ZkEvent};
    use crate::machine::Action;
    use crate::test_steps::op;

    const PATH: &str = "/app/config";

    fn data(bytes: &[u8], version: i32) -> Input<ConfigRequest> {
        Input::Reply(Ok(OpResult::Data {
            data: bytes.to_vec(),
            stat: Stat {
                version,
                ..Stat::default()
            },
        }))
    }

    fn changed() -> Input<ConfigRequest> {
        Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeDataChanged,
            path: PATH.to_owned(),
        }))
    }

    fn writer(version: i32) -> ConfigMachine {
        let part = ConfigPart::Writer {
            data: b"v".to_vec(),
            version,
        };
        ConfigMachine::new(PATH, part)
    }

    fn reader(until: Option<&[u8]>) -> ConfigMachine {
        let until = until.map(<[u8]>::to_vec);
        ConfigMachine::new(PATH, ConfigPart::Reader { until })
    }

    #[test]
    fn a_writer_creates_a_missing_node_and_sets_an_existing_one() {
        let mut machine = writer(-1);
        assert!(matches!(
            op(&machine.step(Input::Start)),
            Op::SetData { version: -1, .. }
        ));
        let step = machine.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(op(&step), Op::Create { .. }));
        // Created meanwhile by another writer: set it after all.
        let step = machine.step(Input::Reply(Err(ZkError::NodeExists)));
        assert!(matches!(op(&step), Op::SetData { .. }));
        let stat = Stat {
            version: 3,
            ..Stat::default()
        };
        let step = machine.step(Input::Reply(Ok(OpResult::SetData(stat))));
        let written = Setting {
            version: 3,
            data: b"v".to_vec(),
        };
        assert_eq!(step.outcome, Some(ConfigOutcome::Written(written)));
    }

    #[test]
    fn a_lookup_syncs_then_reads_once_and_a_missing_node_is_absent() {
        let mut machine = ConfigMachine::new(PATH, ConfigPart::Lookup);
        assert!(matches!(op(&machine.step(Input::Start)), Op::Sync { .. }));
        let step = machine.step(Input::Reply(Ok(OpResult::Synced)));
        assert!(matches!(op(&step), Op::GetData { watch: false, .. }));
        let step = machine.step(data(b"v", 2));
        let read = Setting {
            version: 2,
            data: b"v".to_vec(),
        };
        assert_eq!(step.outcome, Some(ConfigOutcome::Read(read)));
        let mut machine = ConfigMachine::new(PATH, ConfigPart::Lookup);
        machine.step(Input::Start);
        machine.step(Input::Reply(Ok(OpResult::Synced)));
        let step = machine.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(step.outcome, Some(ConfigOutcome::Absent));
    }

    #[test]
    fn a_conditional_write_whose_reply_was_lost_tells_its_own_landed_write_from_a_conflict() {
        for (found, version, outcome) in [(&b"v"[..], 6, true), (&b"w"[..], 6, false)] {
            let mut machine = writer(5);
            machine.step(Input::Start);
            let step = machine.step(Input::Reply(Err(ZkError::ConnectionLoss)));
            assert!(matches!(op(&step), Op::SetData { version: 5, .. }));
            let step = machine.step(Input::Reply(Err(ZkError::BadVersion)));
            assert!(matches!(op(&step), Op::GetData { watch: false, .. }));
            let step = machine.step(data(found, version));
            let landed = matches!(step.outcome, Some(ConfigOutcome::Written(_)));
            assert_eq!(landed, outcome, "{found:?}");
        }
        // Refused on the first try: another write came first.
        let mut machine = writer(5);
        machine.step(Input::Start);
        let step = machine.step(Input::Reply(Err(ZkError::BadVersion)));
        assert_eq!(
            step.outcome,
            Some(ConfigOutcome::Failed(ZkError::BadVersion))
        );
    }

    #[test]
    fn a_reader_reads_again_on_every_event_and_on_news_that_came_during_a_read() {
        let mut machine = reader(None);
        assert!(matches!(
            op(&machine.step(Input::Start)),
            Op::GetData { watch: true, .. }
        ));
        let step = machine.step(data(b"a", 1));
        assert!(matches!(
            step.outcome,
            Some(ConfigOutcome::Read(Setting { version: 1, .. }))
        ));
        assert!(matches!(
            op(&machine.step(changed())),
            Op::GetData { watch: true, .. }
        ));
        // News while the read is in flight: its answer may predate it.
        assert_eq!(machine.step(changed()).action, Action::Wait);
        let step = machine.step(data(b"b", 2));
        assert_eq!(step.outcome, None);
        assert!(matches!(op(&step), Op::GetData { .. }));
        let step = machine.step(data(b"c", 3));
        assert!(matches!(
            step.outcome,
            Some(ConfigOutcome::Read(Setting { version: 3, .. }))
        ));
    }

    #[test]
    fn a_reader_waiting_for_a_value_stops_there_and_watches_a_missing_node() {
        let mut machine = reader(Some(b"b"));
        machine.step(Input::Start);
        let step = machine.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(op(&step), Op::Exists { watch: true, .. }));
        let step = machine.step(Input::Reply(Ok(OpResult::Exists(None))));
        assert_eq!(step.action, Action::Wait);
        let created = Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeCreated,
            path: PATH.to_owned(),
        }));
        assert!(matches!(op(&machine.step(created)), Op::GetData { .. }));
        let step = machine.step(data(b"b", 0));
        assert!(matches!(step.outcome, Some(ConfigOutcome::Read(_))));
        assert_eq!(step.action, Action::Done);
    }
}
