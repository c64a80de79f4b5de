//! Real ZooKeeper servers on this machine, for tests that check zklab against the real thing.
//!
//! [`Standalone`] runs one `ZooKeeperServerMain`; [`Ensemble`] runs a quorum of `QuorumPeerMain`s
//! that a test can kill and restart member by member; [`Controller`] runs ZooKeeper's
//! `ControllerService`, a server a test tells to expire a session or drop a connection. Every
//! server listens on free ports of 127.0.0.1, keeps its data and its log in a temporary
//! directory, and is killed (and waited for) when its launcher is dropped. Readiness is what the
//! server itself says to `srvr`.
//!
//! Tests find the installation through [`installed_or_skip`], which skips loudly when there is
//! none, unless `ZKLAB_REQUIRE_REAL_ZK=1` makes a missing install a failure.

mod controller;
mod ensemble;
mod error;
mod installation;
mod ports;
mod probe;
mod scratch;
mod server_process;
mod standalone;

pub use controller::{ControlCommand, Controller};
pub use ensemble::Ensemble;
pub use error::LaunchError;
pub use installation::{installed_or_skip, Installation, INSTALL_HINT, REQUIRE_REAL_ZK};
pub use probe::{probe_mode, srvr, Mode};
pub use standalone::Standalone;
