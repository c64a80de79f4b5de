//! A ZooKeeper server with a command port: ZooKeeper's own `ControllerService`, which a test
//! tells to expire a session, drop a connection or swallow replies, so the simulator's faults
//! can be checked against the real server's.
//!
//! `ControllerService` runs a quorum peer of one member, and its command port takes HTTP
//! requests `GET /command/<ACTION>[/<parameter>]`. Its own `main` returns at once (the service
//! runs on a daemon thread, so the JVM exits), so a one-class Java source file runs it in the
//! main thread instead; the JVM compiles it at launch.

use std::fmt;
use std::fs;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::recipes::client::SessionId;
use crate::testing::ServerControl;

use super::error::LaunchError;
use super::installation::Installation;
use super::ports::{free_ports, on_fresh_ports};
use super::server_process::{wait_until, ServerProcess};

/// How long one command may take; the server answers on loopback in milliseconds.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// The launcher's Java source: runs the service in the main thread.
const RUN_CONTROLLER: &str = "\
import org.apache.zookeeper.server.controller.ControllerServerConfig;
import org.apache.zookeeper.server.controller.ControllerService;

public class RunController {
    public static void main(String[] args) throws Exception {
        new ControllerService().runFromConfig(new ControllerServerConfig(args[0]));
    }
}
";

/// The servlet API the command port's Jetty needs, which Debian's `zookeeper.jar` does not name
/// in its manifest.
const SERVLET_API: &str = "servlet-api.jar";

/// A command the controller carries out at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlCommand {
    /// Expire a session, as its timeout passing would: its ephemerals go, the watches on them
    /// fire, and its client hears `Expired` once it reconnects.
    ExpireSession(SessionId),
    /// Close a session's connection; the session lives, and its client reconnects.
    CloseConnection(SessionId),
    /// Apply the next `n` requests of any session but send no reply; a ping's reply counts too.
    /// The server still sends the replies of `getData` and `getChildren` (and watch events):
    /// those go another way.
    NoResponse(u32),
    /// Behave again: no replies swallowed.
    Reset,
}

impl fmt::Display for ControlCommand {
    /// The command's path on the command port.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlCommand::ExpireSession(session) => write!(f, "EXPIRESESSION/{session:#x}"),
            ControlCommand::CloseConnection(session) => {
                write!(f, "CLOSECONNECTION/{session:#x}")
            }
            ControlCommand::NoResponse(n) => write!(f, "NORESPONSE/{n}"),
            ControlCommand::Reset => f.write_str("RESET"),
        }
    }
}

/// A running `ControllerService` on free ports of 127.0.0.1, killed when dropped; or a server
/// someone else runs with such a command port (`zklab serve --command-port`), left running.
#[derive(Debug)]
pub struct Controller {
    /// The server process, when this controller started it: held for its drop, which stops it.
    _started: Option<ServerProcess>,
    connect_string: String,
    command_port: u16,
}

impl Controller {
    /// Starts the service and returns once it serves clients and commands.
    pub fn start(installation: &Installation) -> Result<Self, LaunchError> {
        on_fresh_ports(|| Self::start_once(installation))
    }

    fn start_once(installation: &Installation) -> Result<Self, LaunchError> {
        let ports = free_ports(4).map_err(|e| LaunchError::io("finding free ports", e))?;
        let (client, peer, election, command_port) = (ports[0], ports[1], ports[2], ports[3]);
        let quorum = format!("initLimit=10\nsyncLimit=5\nserver.1=127.0.0.1:{peer}:{election}\n");
        let mut server = ServerProcess::prepare(
            installation,
            "controller".into(),
            "RunController",
            client,
            &quorum,
            Some(1),
        )?;
        let source = server.dir().join("RunController.java");
        fs::write(&source, RUN_CONTROLLER)
            .map_err(|e| LaunchError::io(format!("writing {source:?}"), e))?;
        let properties = vec![format!("zookeeper.controllerPort={command_port}")];
        server.launch_with(source, properties, &servlet_api(installation))?;
        server.spawn()?;
        let mut servers = [server];
        wait_until(&mut servers, "controller server", |servers| {
            servers[0].mode().is_some() && command(command_port, "PING").is_ok()
        })?;
        let [server] = servers;
        Ok(Controller {
            connect_string: format!("127.0.0.1:{}", server.client_port()),
            _started: Some(server),
            command_port,
        })
    }

    /// A server already running at `hosts` whose command port is `command_port` on 127.0.0.1;
    /// an error unless the port answers a `PING`.
    pub fn attach(hosts: &str, command_port: u16) -> Result<Self, LaunchError> {
        command(command_port, "PING")?;
        Ok(Controller {
            _started: None,
            connect_string: hosts.to_owned(),
            command_port,
        })
    }

    /// The connect string, for a client.
    pub fn connect_string(&self) -> String {
        self.connect_string.clone()
    }

    /// Has the server carry out `command`.
    pub fn send(&self, command: ControlCommand) -> Result<(), LaunchError> {
        self::command(self.command_port, &command.to_string())
    }
}

/// The harness's faults on purpose (`TestClient::expire_session`, `disconnect`) in a run on
/// this server. A command the server refuses panics: it fails the run that asked for it.
impl ServerControl for Controller {
    fn expire(&self, session: SessionId) {
        if let Err(error) = self.send(ControlCommand::ExpireSession(session)) {
            panic!("expiring session {session:#x}: {error}");
        }
    }

    fn disconnect(&self, session: SessionId) {
        if let Err(error) = self.send(ControlCommand::CloseConnection(session)) {
            panic!("closing session {session:#x}'s connection: {error}");
        }
    }
}

/// The servlet API jar next to the installation's jars, if it is there and not on the
/// classpath already (an unpacked release has it in `lib/`).
fn servlet_api(installation: &Installation) -> Vec<PathBuf> {
    let classpath = installation.classpath();
    let named = |path: &Path| {
        path.file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.contains("servlet-api"))
    };
    if classpath.iter().any(|path| named(path)) {
        return Vec::new();
    }
    classpath
        .iter()
        .filter_map(|jar| jar.parent())
        .map(|dir| dir.join(SERVLET_API))
        .find(|jar| jar.is_file())
        .into_iter()
        .collect()
}

/// Sends `GET /command/<path>` to the command port; an error unless it answers 200.
fn command(port: u16, path: &str) -> Result<(), LaunchError> {
    let doing = || format!("sending {path} to the controller");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, COMMAND_TIMEOUT)
        .map_err(|e| LaunchError::io(doing(), e))?;
    let mut answer = String::new();
    stream
        .set_read_timeout(Some(COMMAND_TIMEOUT))
        .and_then(|()| write!(stream, "GET /command/{path} HTTP/1.0\r\n\r\n"))
        .and_then(|()| stream.read_to_string(&mut answer))
        .map_err(|e| LaunchError::io(doing(), e))?;
    let status = answer.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) == Some("200") {
        return Ok(());
    }
    Err(LaunchError::Refused {
        command: path.to_owned(),
        status: status.to_owned(),
    })
}
