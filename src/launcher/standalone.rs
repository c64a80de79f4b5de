//! One standalone ZooKeeper server.

use std::time::Duration;

use super::error::LaunchError;
use super::installation::Installation;
use super::ports::{free_ports, on_fresh_ports};
use super::probe::Mode;
use super::server_process::{wait_until, ServerProcess};

/// A running `ZooKeeperServerMain` on a free port of 127.0.0.1, killed when dropped.
#[derive(Debug)]
pub struct Standalone {
    server: ServerProcess,
}

impl Standalone {
    /// Starts a server and returns once `srvr` reports it `standalone`.
    pub fn start(installation: &Installation) -> Result<Self, LaunchError> {
        on_fresh_ports(|| Self::start_once(installation, None))
    }

    /// Starts a server whose reaper looks for containers and TTL nodes to delete `every` so
    /// often (a launched server otherwise looks once an hour).
    pub fn start_reaping(
        installation: &Installation,
        every: Duration,
    ) -> Result<Self, LaunchError> {
        on_fresh_ports(|| Self::start_once(installation, Some(every)))
    }

    fn start_once(
        installation: &Installation,
        reaping: Option<Duration>,
    ) -> Result<Self, LaunchError> {
        let port = free_ports(1).map_err(|e| LaunchError::io("finding a free port", e))?[0];
        let mut server = ServerProcess::prepare(
            installation,
            "standalone".into(),
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            port,
            "",
            None,
        )?;
        if let Some(every) = reaping {
            let millis = every.as_millis().max(1);
            server.add_property(format!("znode.container.checkIntervalMs={millis}"));
        }
        server.spawn()?;
        let mut servers = [server];
        wait_until(&mut servers, "standalone server", |servers| {
            servers[0].mode() == Some(Mode::Standalone)
        })?;
        let [server] = servers;
        Ok(Standalone { server })
    }

    /// `127.0.0.1:<port>`, for a client.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.server.client_port())
    }

    /// The client port on 127.0.0.1.
    pub fn client_port(&self) -> u16 {
        self.server.client_port()
    }

    /// The server's process id, until it is stopped.
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// What `srvr` says now; `None` once stopped.
    pub fn mode(&self) -> Option<Mode> {
        self.server.mode()
    }

    /// Kills the server and waits for it to exit. Stopping twice does nothing.
    pub fn stop(&mut self) -> Result<(), LaunchError> {
        self.server.kill()
    }
}
