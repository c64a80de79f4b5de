//! zookeeper-client's API over a session of zklab's simulated ensemble. The plain data types
//! (what a call returns, its errors, the ACL types) are the real crate's own; the client, its
//! options and its watchers are written here over [`zklab_sim::sim_client::SimClient`].

mod client;
mod conversions;
mod lock;
mod multi;
mod options;
mod paths;
mod watchers;

pub use self::client::{Client, Connector};
pub use self::lock::{LockClient, LockOptions, LockPrefix, OwnedLockClient};
pub use self::multi::{CheckWriter, MultiReader, MultiWriter};
pub use self::options::{CreateMode, CreateOptions, CreateSequence};
pub use self::watchers::{OneshotWatcher, PersistentWatcher, StateWatcher};
pub use zookeeper_client::{
    Acl, Acls, AddWatchMode, AuthId, AuthUser, CheckWriteError, Error, EventType, MultiReadResult,
    MultiWriteError, MultiWriteResult, Permission, SessionId, SessionState, Stat, WatchedEvent,
};
