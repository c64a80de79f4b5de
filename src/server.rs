//! The real ZooKeeper a command talks to: the one `--zk` names, or a standalone server started
//! from the installed ZooKeeper for the command's run and stopped when it ends.

use zklab::launcher::{Installation, Standalone};

/// A real server for one command.
pub enum RealServer {
    /// A server someone else runs, by its connect string.
    Given(String),
    /// A server started for this run.
    Started(Standalone),
}

impl RealServer {
    /// The server `--zk` names, else a fresh standalone one; the error says why none can be had
    /// (and how to install ZooKeeper when it is missing).
    pub fn given_or_started(zk: Option<&str>) -> Result<RealServer, String> {
        match zk {
            Some(hosts) => Ok(RealServer::Given(hosts.to_owned())),
            None => {
                let installation = Installation::find().map_err(|error| error.to_string())?;
                let standalone = Standalone::start(&installation)
                    .map_err(|error| format!("could not start a ZooKeeper server: {error}"))?;
                Ok(RealServer::Started(standalone))
            }
        }
    }

    /// The connect string.
    pub fn hosts(&self) -> String {
        match self {
            RealServer::Given(hosts) => hosts.clone(),
            RealServer::Started(standalone) => standalone.connect_string(),
        }
    }
}
