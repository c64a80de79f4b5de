//! `zklab real lock`: the lock scenario's workload against a real ZooKeeper, given or started for
//! the run, judged by the simulator's oracles.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use zklab::scenarios::real::{run_lock, RealLockOptions, RealTrace};

use crate::server::RealServer;

/// The options of `zklab real`.
#[derive(Args)]
pub struct RealArgs {
    /// The scenario; only `lock` runs on a real server.
    scenario: String,
    /// A running ZooKeeper (`host:port[,host:port...]`); without it, zklab starts a standalone
    /// server from the installed ZooKeeper for the run.
    #[arg(long)]
    zk: Option<String>,
    /// Number of clients.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=64))]
    clients: u32,
    /// Lock acquisitions per client.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rounds: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the command: exit 0 when every property holds, 1 on a violation, 2 when the scenario is
/// not `lock` or no server can be used.
pub fn run(args: &RealArgs) -> ExitCode {
    if args.scenario != "lock" {
        let message = format!(
            "only the `lock` scenario runs on a real server, not `{}`",
            args.scenario
        );
        return crate::usage_error(&message);
    }
    let server = match RealServer::given_or_started(args.zk.as_deref()) {
        Ok(server) => server,
        Err(message) => return crate::usage_error(&message),
    };
    let options = RealLockOptions {
        clients: args.clients,
        rounds: args.rounds,
        ..RealLockOptions::default()
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::usage_error(&format!("no async runtime: {error}")),
    };
    let hosts = server.hosts();
    let report = match runtime.block_on(run_lock(&hosts, &options, RealTrace::new())) {
        Ok(report) => report,
        Err(error) => return crate::unusable_server(&hosts, error),
    };
    let violations: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    if args.json {
        let summary = json!({
            "scenario": "lock",
            "zk": hosts,
            "clients": args.clients,
            "rounds": args.rounds,
            "violations": violations,
            "seconds": report.elapsed.as_secs_f64(),
        });
        println!("{summary}");
    } else {
        println!(
            "lock on {hosts}: {} clients x {} rounds in {:.3} s, {} violations",
            args.clients,
            args.rounds,
            report.elapsed.as_secs_f64(),
            violations.len()
        );
        for violation in &violations {
            println!("VIOLATION {violation}");
        }
    }
    if violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
