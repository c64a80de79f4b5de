//! `zklab shell [--zk HOST:PORT]`: the shell on stdin, stdout and stderr, on a fresh simulated
//! ZooKeeper or on a session with a real server.

use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::time::Duration;

use crate::recipes::client::ZkClient;
use crate::recipes::real_zk::RealZk;
use crate::shell::{run, Terminal};
use crate::sim::local::LocalZk;

/// The session timeout zkCli asks for unless told otherwise (`-timeout`).
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the shell: exit 0 (a closed pipe too), 1 when it could not write its output otherwise,
/// 2 when no server can be used.
/// On a terminal it prompts and edits lines, with a history of the session's commands.
pub fn run_stdio(zk: Option<&str>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::cli::usage_error(&format!("no async runtime: {error}")),
    };
    let result = match zk {
        None => runtime.block_on(on_stdio(&LocalZk::new().connect(), "simulated")),
        Some(hosts) => match runtime.block_on(RealZk::connect(hosts, SESSION_TIMEOUT)) {
            Ok(client) => runtime.block_on(on_stdio(&client, hosts)),
            Err(error) => return crate::cli::unusable_server(hosts, error),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader closed the pipe (`zklab shell < script | head`): nothing more to say.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}

/// The shell on `client`, reading a terminal through a line editor (prompting with `server`)
/// or a script as it is.
async fn on_stdio(client: &impl ZkClient, server: &str) -> io::Result<()> {
    let (out, err) = (io::stdout().lock(), io::stderr().lock());
    if io::stdin().is_terminal() {
        run(client, Terminal::new(server)?, out, err).await
    } else {
        run(client, io::stdin().lock(), out, err).await
    }
}
