//! A name service, one of the recipes document's "out of the box" applications: a name is a
//! persistent node `<dir>/<name>` holding its value. Registering sets it (made, with its
//! directory, if missing; set at any version, so a write sent again through ConnectionLoss sets
//! the same value), and resolving syncs, then reads it: a resolve sees every registration
//! completed before it began, even on a follower behind the leader. Each name is a configuration node
//! ([`crate::config`]): registering is its writer, resolving its lookup.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::names::NamesError> {
//! use zklab_recipes::names::Names;
//!
//! let names = Names::new("/services/names");
//! names.register(client, "db", b"10.0.0.7:5432".to_vec()).await?;
//! let address = names.resolve(client, "db").await?; // Some(value), or None if never registered
//! let job = names.register_unique(client, "job-", b"payload".to_vec()).await?; // "job-0000000003"
//! # let _ = address;
//! # Ok(()) }
//! ```

use crate::client::{SessionId, ZkClient};
use crate::config::{Config, ConfigError, ConfigSettings};
use crate::handle::{Handle, Plays};
use crate::parts::consumer::{Order, QueueOutcome, QueueRequest};
use crate::parts::producer::PutMachine;
use crate::queue::{Queue, QueueSettings};

/// Why a name service operation did not complete: the session ended first, or ZooKeeper
/// answered with an error the recipe cannot handle.
pub type NamesError = ConfigError;

/// What a name service keeps besides its directory: a queue's settings, whose puts make its
/// unique names.
#[derive(Clone, Debug)]
pub struct NamesSettings {
    unique: QueueSettings,
}

/// A name service: the children of one znode.
pub type Names = Handle<NamesSettings>;

impl Names {
    /// The name service whose names are the children of `dir`.
    pub fn new(dir: &str) -> Self {
        let unique = QueueSettings::ordered(Order::Sequence);
        Handle::at(dir, NamesSettings { unique })
    }

    /// The queue whose puts make unique names under the caller's names: its count of puts is
    /// this service's.
    fn unique(&self) -> Queue {
        self.recipe_at(&self.path, self.settings.unique.clone())
    }

    /// The node of `name`, as a configuration: its writer registers, its lookup resolves.
    pub fn entry(&self, name: &str) -> Config {
        self.recipe_at(&format!("{}/{name}", self.path), ConfigSettings)
    }

    /// Registers `name` with `value`, replacing what it had.
    pub async fn register<C: ZkClient>(
        &self,
        client: &C,
        name: &str,
        value: Vec<u8>,
    ) -> Result<(), NamesError> {
        self.entry(name).set(client, value).await.map(|_| ())
    }

    /// The value `name` has now (after a sync); `None` if it was never registered.
    pub async fn resolve<C: ZkClient>(
        &self,
        client: &C,
        name: &str,
    ) -> Result<Option<Vec<u8>>, NamesError> {
        let setting = self.entry(name).get(client).await?;
        Ok(setting.map(|setting| setting.data))
    }

    /// Registers `value` under a new name, `<prefix><seq>`, unique in the service (ZooKeeper's
    /// sequence number, ten digits); returns the name. Made exactly once while the session
    /// lives, even when the reply is lost: see [`PutMachine`]. If the session ends first, the
    /// name may or may not have been made.
    pub async fn register_unique<C: ZkClient>(
        &self,
        client: &C,
        prefix: &str,
        value: Vec<u8>,
    ) -> Result<String, NamesError> {
        let tag = self.unique_tag(client.session_id());
        let machine = PutMachine::named(&self.path, prefix.to_owned(), tag, value);
        self.register_unique_with(client, prefix, machine).await
    }

    /// Registers a unique name with `machine`: a put named `prefix` (see
    /// [`Names::unique_tag`]), or a machine built around it.
    pub async fn register_unique_with<C: ZkClient, M: Plays<QueueRequest, QueueOutcome>>(
        &self,
        client: &C,
        prefix: &str,
        machine: M,
    ) -> Result<String, NamesError> {
        let seq = self.unique().put_with(client, machine).await?;
        Ok(unique_name(prefix, seq))
    }

    /// A tag for the next unique name registered through this handle in `session`.
    pub fn unique_tag(&self, session: SessionId) -> String {
        self.unique().next_tag(session)
    }
}

/// The unique name of sequence number `seq` under `prefix`, as ZooKeeper names it.
pub fn unique_name(prefix: &str, seq: i64) -> String {
    format!("{prefix}{seq:010}")
}
