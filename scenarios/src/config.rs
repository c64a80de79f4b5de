//! The configuration's kit. Client 0 writes a value per round (`value 0`, `value 1`, ...),
//! working a while between writes; every other client follows the configuration until it reads the last
//! value, or until it has heard nothing for [`IDLE`] (so a reader that missed the last change
//! ends, stale, for the monitor to judge). The model starts with `value 0` written; its client 0
//! writes `value 1` once, and the others follow until they read it.
//!
//! Herd-freedom is not asked: a write is meant to wake every reader. Its known bug: a reader
//! that takes no news after its first read ([`IgnoresNews`]).
//!
//! [`IgnoresNews`]: crate::mutation::IgnoresNews

pub mod monitor;

use std::marker::PhantomData;
use std::time::Duration;

use zklab_models::workload::Workload;
use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::config::{Config, ConfigMachine, ConfigPart, ConfigRequest};

use crate::config::monitor::ConfigFreshness;
use crate::host::{first_of, in_sessions, rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};

/// Where the configuration lives.
pub const CONFIG_DIR: &str = "/config";

/// The configuration's node.
pub const CONFIG_NODE: &str = "setting";

/// How long a reader hears nothing before it ends: longer than any pause or partition leaves
/// a correct reader behind.
pub const IDLE: Duration = Duration::from_secs(30);

/// How many pieces of work the writer does between writes: long enough that faults which
/// strike per second of sim time (expiry, partition, pause, crash) find readers following.
const HOLD_WORKS: u32 = 25;

/// The configuration's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct ConfigKit<X>(PhantomData<X>);

impl<X> ConfigKit<X> {
    /// The kit.
    pub const KIT: Self = ConfigKit(PhantomData);
}

/// The value written in round `round`.
fn value(round: u32) -> Vec<u8> {
    format!("value {round}").into_bytes()
}

fn config_path() -> String {
    format!("{CONFIG_DIR}/{CONFIG_NODE}")
}

/// The model's and the run's writer: client 0.
const WRITER: u8 = 0;

impl<X: Mutation> ConfigKit<X> {
    fn mutated(part: ConfigPart) -> Mutated<ConfigMachine, X> {
        Mutated::new(ConfigMachine::new(&config_path(), part))
    }

    /// Writes each round's value, in as many sessions as it takes.
    async fn write<H: Host>(host: &H, config: &Config, rounds: u32) -> Option<H::Session> {
        rounds_in_sessions!(host, rounds, |session, round| async {
            let part = ConfigPart::Writer {
                data: value(round),
                version: -1,
            };
            config.write_with(&session, Self::mutated(part)).await?;
            for _ in 0..HOLD_WORKS {
                host.work().await;
            }
            Ok(())
        })
    }

    /// Follows the configuration until it reads `last`, or hears nothing for [`IDLE`].
    async fn follow<H: Host>(host: &H, config: &Config, last: &[u8]) -> Option<H::Session> {
        let mut session = host.connect().await;
        in_sessions!(host, session, async {
            let reader = ConfigPart::Reader { until: None };
            let mut follower = config.follow_with(&session, Self::mutated(reader));
            loop {
                let idle = session.sleep(IDLE);
                match first_of(follower.changed(), idle).await {
                    None => return Ok(()),
                    Some(Ok(setting)) if setting.data == last => return Ok(()),
                    Some(Ok(_)) => {}
                    Some(Err(error)) => return Err(error),
                }
            }
        })
        .ok()?;
        Some(session)
    }
}

impl<X: Mutation> Workload for ConfigKit<X> {
    type Machine = Mutated<ConfigMachine, X>;
    type Monitors = (ConfigFreshness, NoFailures);

    fn part(&self, client: usize, _: usize) -> u8 {
        u8::from(client != 0)
    }

    /// A writer and a reader.
    fn min_clients(&self) -> usize {
        2
    }

    /// The configuration's first value.
    fn setup(&self, _: usize) -> Vec<Op> {
        vec![Op::Create {
            path: config_path(),
            data: value(0),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        }]
    }

    fn machine(&self, part: u8, _: SessionId) -> Self::Machine {
        match part {
            WRITER => Self::mutated(ConfigPart::Writer {
                data: value(1),
                version: -1,
            }),
            _ => Self::mutated(ConfigPart::Reader {
                until: Some(value(1)),
            }),
        }
    }

    fn request_when_holding(&self) -> ConfigRequest {}

    /// Never back, ending with the last value; no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        (ConfigFreshness::new(), NoFailures)
    }

    /// The configuration itself.
    fn may_remain(&self, child: &str) -> bool {
        child == CONFIG_NODE
    }

    fn root(&self) -> &str {
        CONFIG_DIR
    }

    fn symmetric(&self) -> bool {
        X::SYMMETRIC
    }

    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for ConfigKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let config = Config::new(&config_path()).recording(host.recorder());
        match host.index() as u8 {
            WRITER => Self::write(host, &config, rounds).await,
            _ => Self::follow(host, &config, &value(rounds.saturating_sub(1))).await,
        }
    }
}
