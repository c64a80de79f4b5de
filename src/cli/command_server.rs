//! The real ZooKeeper a command talks to: the one `--zk` names, or one zklab starts from the
//! installed ZooKeeper for the command's run (a standalone server, a controller server with a
//! command port, or an ensemble) and stops when it ends.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::launcher::{Controller, Ensemble, Installation, Standalone};

/// The members of an ensemble zklab starts.
const ENSEMBLE_SIZE: usize = 3;

/// A real server for one command.
pub enum CommandServer {
    /// A server someone else runs, by its connect string.
    Given(String),
    /// A standalone server started for this run.
    Started(Standalone),
    /// A controller server started for this run: faults through its command port.
    Controller(Controller),
    /// An ensemble of [`ENSEMBLE_SIZE`] started for this run: its members can be killed.
    Ensemble(Mutex<Ensemble>),
}

impl CommandServer {
    /// The server `--zk` names, else a fresh standalone one, whose reaper looks for emptied
    /// containers and idle TTL nodes every `reaping` if given (else once an hour); the error
    /// says why none can be had (and how to install ZooKeeper when it is missing).
    pub fn given_or_started(
        zk: Option<&str>,
        reaping: Option<Duration>,
    ) -> Result<CommandServer, String> {
        let installation = match zk {
            Some(hosts) => return Ok(CommandServer::Given(hosts.to_owned())),
            None => installation()?,
        };
        let started = match reaping {
            Some(every) => Standalone::start_reaping(&installation, every),
            None => Standalone::start(&installation),
        };
        started
            .map(CommandServer::Started)
            .map_err(|error| format!("could not start a ZooKeeper server: {error}"))
    }

    /// A fresh controller server.
    pub fn controller() -> Result<CommandServer, String> {
        Controller::start(&installation()?)
            .map(CommandServer::Controller)
            .map_err(|error| format!("could not start a ZooKeeper controller server: {error}"))
    }

    /// The server at `hosts` whose command port is `port`.
    pub fn attached(hosts: &str, port: u16) -> Result<CommandServer, String> {
        Controller::attach(hosts, port)
            .map(CommandServer::Controller)
            .map_err(|error| format!("no command port at 127.0.0.1:{port}: {error}"))
    }

    /// A fresh ensemble of [`ENSEMBLE_SIZE`] members.
    pub fn ensemble() -> Result<CommandServer, String> {
        Ensemble::start(&installation()?, ENSEMBLE_SIZE)
            .map(|ensemble| CommandServer::Ensemble(Mutex::new(ensemble)))
            .map_err(|error| format!("could not start a ZooKeeper ensemble: {error}"))
    }

    /// The connect string.
    pub fn hosts(&self) -> String {
        match self {
            CommandServer::Given(hosts) => hosts.clone(),
            CommandServer::Started(standalone) => standalone.connect_string(),
            CommandServer::Controller(controller) => controller.connect_string(),
            CommandServer::Ensemble(ensemble) => ensemble
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .connect_string(),
        }
    }
}

/// The installed ZooKeeper, or how to install it.
fn installation() -> Result<Installation, String> {
    Installation::find().map_err(|error| error.to_string())
}
