//! `zklab real <scenario>`: a scenario's workload against a real ZooKeeper, given or started for
//! the run, judged by the simulator's oracles.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use zklab::scenarios::catalogue;
use zklab::scenarios::real::{self, RealOptions, RealTrace};

use crate::server::RealServer;

/// The options of `zklab real`.
#[derive(Args)]
pub struct RealArgs {
    /// The scenario (see `zklab list`).
    scenario: String,
    /// A running ZooKeeper (`host:port[,host:port...]`); without it, zklab starts a standalone
    /// server from the installed ZooKeeper for the run.
    #[arg(long)]
    zk: Option<String>,
    /// Number of clients.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=64))]
    clients: u32,
    /// Rounds of work (for a lock: acquisitions) per client.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rounds: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the command: exit 0 when every property holds, 1 on a violation, 2 when the scenario is
/// unknown or no server can be used.
pub fn run(args: &RealArgs) -> ExitCode {
    let found = catalogue::find(&args.scenario)
        .and_then(|scenario| scenario.fits(args.clients as usize).map(|()| scenario));
    let scenario = match found {
        Ok(scenario) => scenario,
        Err(message) => return crate::usage_error(&message),
    };
    let server = match RealServer::given_or_started(args.zk.as_deref()) {
        Ok(server) => server,
        Err(message) => return crate::usage_error(&message),
    };
    let options = RealOptions {
        clients: args.clients,
        rounds: args.rounds,
        ..RealOptions::default()
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::usage_error(&format!("no async runtime: {error}")),
    };
    let hosts = server.hosts();
    let report = match runtime.block_on(real::run(scenario, &hosts, &options, RealTrace::new())) {
        Ok(report) => report,
        Err(error) => return crate::unusable_server(&hosts, error),
    };
    let violations: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    if args.json {
        let summary = json!({
            "scenario": scenario.name,
            "zk": hosts,
            "clients": args.clients,
            "rounds": args.rounds,
            "violations": violations,
            "seconds": report.elapsed.as_secs_f64(),
        });
        println!("{summary}");
    } else {
        println!(
            "{} on {hosts}: {} clients x {} rounds in {:.3} s, {} violations",
            scenario.name,
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
