//! zklab's simulated ZooKeeper.
//!
//! The pure server ([`server::Server`]) is ZooKeeper's semantics with no I/O and no clock: the
//! simulator, the model checker and the conformance tests all drive it. Around it, under
//! madsim, [`sim_client::SimClient`] adds sessions with latency, heartbeats, reconnection and
//! injected faults, and every event lands in one [`trace::Trace`]. [`local::LocalZk`] serves the
//! pure server to in-process sessions with no wire and no faults, for the shell and the
//! conformance cases.
//!
//! It builds only under `--cfg madsim` (its build script says how to give it).

pub mod acl;
pub mod connect_string;
pub mod digest;
pub mod fault;
pub mod forced;
pub mod jute;
pub mod local;
pub mod log;
pub mod notified;
pub mod packet;
pub mod path;
pub mod picture;
pub mod property;
pub mod replicas;
pub mod server;
pub mod service;
pub mod session;
#[cfg(madsim)]
pub mod sim_client;
#[cfg(test)]
mod test_ops;
pub mod trace;
pub mod tree;
pub mod watch;
pub mod wire_service;
