//! `zklab serve`: the simulated ZooKeeper on ZooKeeper's wire protocol, for clients of any
//! library and language.

use std::process::ExitCode;
use std::time::Duration;

use crate::serve::{serve, ServeOptions};
use crate::sim::wire_service::Ticks;

/// `zklab serve`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The port on 127.0.0.1 (0: any free one); the connect string is printed once it listens.
    #[arg(long, default_value_t = 2181)]
    port: u16,
    /// The seed the sessions' passwords come from.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How often, in seconds, the server deletes emptied containers and idle TTL nodes (as
    /// ZooKeeper's `znode.container.checkIntervalMs`).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    container_check: u64,
    /// Stop after this many seconds; without it, serve until stopped.
    #[arg(long = "for", value_parser = clap::value_parser!(u64).range(1..))]
    run_for: Option<u64>,
    /// Also listen on this port of 127.0.0.1 (0: any free one) for the commands of ZooKeeper's
    /// `ControllerService` (`GET /command/EXPIRESESSION/<session>`, `CLOSECONNECTION`,
    /// `NORESPONSE`, `RESET`, `PING`); its address is printed on a second line.
    #[arg(long)]
    command_port: Option<u16>,
}

/// Serves: exit 0 when `--for` has passed, 2 when the port cannot be had.
pub fn run(args: &ServeArgs) -> ExitCode {
    let options = ServeOptions {
        port: args.port,
        seed: args.seed,
        ticks: Ticks {
            container_check: Duration::from_secs(args.container_check),
            ..Ticks::default()
        },
        run_for: args.run_for.map(Duration::from_secs),
        command_port: args.command_port,
    };
    let ready = |address, commands: Option<std::net::SocketAddr>| {
        outln!("{address}");
        if let Some(commands) = commands {
            outln!("{commands}");
        }
    };
    match serve(&options, ready) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            crate::cli::usage_error(&format!("cannot serve on 127.0.0.1:{}: {error}", args.port))
        }
    }
}
