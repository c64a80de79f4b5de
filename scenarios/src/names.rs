//! The name service's kit. Each client, each round, registers one of [`NAMES`] names with a
//! value of its own (`c<client> r<round>`), works a while, resolves the next name, registers a
//! value under a unique name and resolves that. The
//! model starts with `name-0` registered; its client 0 registers it again, and the others
//! resolve it once: sent at once, so after the registration only when sent again after a lost
//! connection.
//!
//! Herd-freedom is not asked: nothing waits. Its known bug: a registration by create alone,
//! NodeExists taken as registered ([`CreateOnly`]).
//!
//! [`CreateOnly`]: bugs::CreateOnly

pub mod bugs;
pub mod monitor;

use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::config::{ConfigMachine, ConfigPart, ConfigRequest};
use zklab_recipes::names::{Names, NamesError};
use zklab_recipes::parts::producer::PutMachine;

use crate::host::{rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};
use crate::names::monitor::NameResolution;

/// Where the names live.
pub const NAMES_DIR: &str = "/names";

/// How many names the clients share.
pub const NAMES: usize = 3;

/// What unique names start with.
pub const UNIQUE: &str = "unique-";

/// The model's registering client.
const REGISTRAR: u8 = 0;

fn name(index: usize) -> String {
    format!("name-{}", index % NAMES)
}

/// The name service's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct NamesKit<X>(PhantomData<X>);

impl<X> NamesKit<X> {
    /// The kit.
    pub const KIT: Self = NamesKit(PhantomData);
}

impl<X: Mutation> NamesKit<X> {
    fn mutated(names: &Names, name: &str, part: ConfigPart) -> Mutated<ConfigMachine, X> {
        Mutated::new(ConfigMachine::new(names.entry(name).path(), part))
    }

    /// One round: registers a name, works, resolves the next, then registers a unique name and
    /// resolves it.
    async fn round<H: Host>(
        host: &H,
        names: &Names,
        session: &H::Session,
        round: u32,
    ) -> Result<(), NamesError> {
        let index = host.index() + round as usize;
        let data = format!("c{} r{round}", host.index()).into_bytes();
        let register = name(index);
        let writer = ConfigPart::Writer { data, version: -1 };
        let machine = Self::mutated(names, &register, writer);
        names.entry(&register).write_with(session, machine).await?;
        host.work().await;
        let resolve = name(index + 1);
        Self::resolve(names, session, &resolve).await?;
        let tag = names.unique_tag(session.session_id());
        let data = format!("c{} r{round} unique", host.index()).into_bytes();
        let put = Mutated::<_, X>::new(PutMachine::named(NAMES_DIR, UNIQUE.into(), tag, data));
        let unique = names.register_unique_with(session, UNIQUE, put).await?;
        Self::resolve(names, session, &unique).await
    }

    async fn resolve<S: ZkClient>(
        names: &Names,
        session: &S,
        name: &str,
    ) -> Result<(), NamesError> {
        let machine = Self::mutated(names, name, ConfigPart::Lookup);
        names.entry(name).get_with(session, machine).await?;
        Ok(())
    }
}

impl<X: Mutation> Workload for NamesKit<X> {
    type Machine = Mutated<ConfigMachine, X>;
    type Monitors = (NameResolution, NoFailures);

    fn part(&self, client: usize, _: usize) -> u8 {
        u8::from(client != 0)
    }

    /// A registrar and a resolver.
    fn min_clients(&self) -> usize {
        2
    }

    /// `name-0`, registered.
    fn setup(&self, _: usize) -> Vec<Op> {
        let dir = Op::Create {
            path: NAMES_DIR.to_owned(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        };
        let first = Op::Create {
            path: format!("{NAMES_DIR}/{}", name(0)),
            data: b"first".to_vec(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        };
        vec![dir, first]
    }

    fn machine(&self, part: u8, _: SessionId) -> Self::Machine {
        let names = Names::new(NAMES_DIR);
        let part = match part {
            REGISTRAR => ConfigPart::Writer {
                data: b"second".to_vec(),
                version: -1,
            },
            _ => ConfigPart::Lookup,
        };
        Self::mutated(&names, &name(0), part)
    }

    fn request_when_holding(&self) -> ConfigRequest {}

    /// Lookups read the latest registration; no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        (NameResolution::new(NAMES_DIR), NoFailures)
    }

    /// The names registered.
    fn may_remain(&self, child: &str) -> bool {
        child.starts_with("name-") || child.starts_with(UNIQUE)
    }

    fn root(&self) -> &str {
        NAMES_DIR
    }

    fn symmetric(&self) -> bool {
        X::SYMMETRIC
    }

    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for NamesKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let names = Names::new(NAMES_DIR).recording(host.recorder());
        rounds_in_sessions!(host, rounds, |session, round| async {
            Self::round(host, &names, &session, round).await
        })
    }
}
