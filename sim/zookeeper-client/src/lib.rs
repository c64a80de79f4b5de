//! `zookeeper-client`'s API for code that zklab tests: a crate depends on this one under the name
//! `zookeeper-client` (`zookeeper-client = { package = "zklab-zookeeper-client", .. }`) and its
//! code compiles unchanged. Built without `--cfg madsim` (production) it is the real crate, re-
//! exported. Built with it (`cargo simtest`), [`Client::connect`] with the connect string a zklab
//! harness gives (`TestClient::connect_string`) opens a session of the simulated ensemble, with
//! every fault, the trace and the monitors, and a connect string of real servers is refused.
//!
//! Under the simulator, what it does not have fails to compile (it is not there), and what the
//! simulated ZooKeeper does not have yet returns an [`Error::UnexpectedError`] saying so. The
//! session and connection timeouts asked for are the ensemble's own (each option's docs say
//! so). A request goes out when its future is first polled (the real
//! client sends it at the call); `Client::lock` differs as its documentation says.

#[cfg(not(madsim))]
pub use zookeeper_client::*;

#[cfg(madsim)]
mod simulated;
#[cfg(madsim)]
pub use simulated::*;
