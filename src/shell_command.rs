//! `zklab shell [--zk HOST:PORT]`: the shell on stdin, stdout and stderr, on a fresh simulated
//! ZooKeeper or on a session with a real server.

use std::io;
use std::process::ExitCode;
use std::time::Duration;

use zklab::recipes::real::RealZk;
use zklab::shell::run;
use zklab::sim::local::LocalZk;

/// The session timeout zkCli asks for unless told otherwise (`-timeout`).
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs the shell: exit 0, 1 when it could not write its output, 2 when no server can be used.
pub fn run_stdio(zk: Option<&str>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::usage_error(&format!("no async runtime: {error}")),
    };
    let (input, out, err) = (io::stdin().lock(), io::stdout().lock(), io::stderr().lock());
    let result = match zk {
        None => runtime.block_on(run(&LocalZk::new().connect(), input, out, err)),
        Some(hosts) => match runtime.block_on(RealZk::connect(hosts, SESSION_TIMEOUT)) {
            Ok(client) => runtime.block_on(run(&client, input, out, err)),
            Err(error) => return crate::unusable_server(hosts, error),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}
