//! A name service, one of the recipes document's "out of the box" applications: a name is a
//! persistent node `<dir>/<name>` holding its value. Registering sets it (made, with its
//! directory, if missing; set at any version, so a write sent again through ConnectionLoss sets
//! the same value), and resolving reads it. Each name is a configuration node
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
//! # let _ = address;
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

use crate::client::ZkClient;
use crate::config::{Config, ConfigError};
use crate::outcome::Recorder;

/// Why a name service operation did not complete: the session ended first, or ZooKeeper
/// answered with an error the recipe cannot handle.
pub type NamesError = ConfigError;

/// A name service: the children of one znode.
#[derive(Clone)]
pub struct Names {
    dir: String,
    recorder: Option<Arc<dyn Recorder>>,
}

impl fmt::Debug for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Names")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Names {
    /// The name service whose names are the children of `dir`.
    pub fn new(dir: &str) -> Self {
        Names {
            dir: dir.to_owned(),
            recorder: None,
        }
    }

    /// The same service, writing down everything it tells the application with `recorder`.
    pub fn recording(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// The node of `name`, as a configuration: its writer registers, its lookup resolves.
    pub fn entry(&self, name: &str) -> Config {
        Config::new(&format!("{}/{name}", self.dir)).recording(self.recorder.clone())
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

    /// The value `name` has now; `None` if it was never registered.
    pub async fn resolve<C: ZkClient>(
        &self,
        client: &C,
        name: &str,
    ) -> Result<Option<Vec<u8>>, NamesError> {
        let setting = self.entry(name).get(client).await?;
        Ok(setting.map(|setting| setting.data))
    }
}
