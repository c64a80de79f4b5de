//! `zklab real <scenario>`: a scenario's workload against a real ZooKeeper, given or started for
//! the run, judged by the simulator's oracles; with `--faults`, on a server zklab starts and
//! strikes meanwhile.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use crate::real_faults::{RealFaults, Striker, Struck};
use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::real::{self, RealOptions, RealTrace};
use crate::scenarios::regressions;
use crate::sim::fault::FaultCounts;
use crate::sim::service::SimConfig;
use crate::sim::trace::Trace;
use clap::Args;
use serde::Serialize;

use crate::cli::check_command::COUNTEREXAMPLES;
use crate::cli::command_server::CommandServer;

/// The options of `zklab real`.
#[derive(Args)]
pub struct RealArgs {
    /// The scenario (see `list`).
    scenario: String,
    /// A running ZooKeeper (`host:port[,host:port...]`); without it, zklab starts a standalone
    /// server from the installed ZooKeeper for the run.
    #[arg(long)]
    zk: Option<String>,
    /// Faults to strike meanwhile: `none`, or a comma-separated list of kinds, each at its
    /// default rate or as `kind=rate` (per second of wall time, 0 to 10; later items win).
    /// session-expiry and connection-loss run on a controller server zklab starts and strike
    /// through its command port; server-crash and leader-change run on a 3-server ensemble
    /// zklab starts and kill a follower or the leader, restarting it 0.5 to 3 s later.
    #[arg(long, default_value = "none", value_parser = RealFaults::parse, conflicts_with = "zk")]
    faults: RealFaults,
    /// Draws the faults' waits and which session or member each strikes. Where a fault lands in
    /// the workload is up to the server's timing: a real run does not replay.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Number of clients, 1 to 64.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=64))]
    clients: u32,
    /// Rounds of work (for a lock: acquisitions) per client, 1 to 10000.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rounds: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// A real run as `--json` prints it.
#[derive(Serialize)]
struct RealJson<'r> {
    scenario: &'r str,
    zk: &'r str,
    clients: u32,
    rounds: u32,
    seed: u64,
    faults_struck: BTreeMap<String, u64>,
    violations: &'r [String],
    /// Where the trace of a run that broke a property was written.
    trace: Option<&'r str>,
    seconds: f64,
}

/// Runs the command: exit 0 when every property holds, 1 on a violation, 2 when the scenario is
/// unknown or no server can be used or struck.
pub fn run(args: &RealArgs, catalogue: &Catalogue) -> ExitCode {
    let found = catalogue.find_fitting(&args.scenario, args.clients as usize);
    let scenario = match found {
        Ok(scenario) => scenario,
        Err(message) => return crate::cli::usage_error(&message),
    };
    let server = if args.faults.is_none() {
        // The reaper looks as often as the simulated one does by default.
        let reaping = SimConfig::default().container_check_interval;
        CommandServer::given_or_started(args.zk.as_deref(), Some(reaping))
    } else if args.faults.needs_ensemble() {
        CommandServer::ensemble()
    } else {
        CommandServer::controller()
    };
    let server = match server {
        Ok(server) => server,
        Err(message) => return crate::cli::usage_error(&message),
    };
    let options = RealOptions {
        clients: args.clients,
        rounds: args.rounds,
        ..RealOptions::default()
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return crate::cli::usage_error(&format!("no async runtime: {error}")),
    };
    let hosts = server.hosts();
    let striker = struck_by(&server).map(|server| Striker {
        server,
        faults: &args.faults,
        seed: args.seed,
    });
    let (report, struck) = match striker {
        Some(striker) => {
            let run = striker.run(&runtime, scenario, &hosts, &options, RealTrace::new());
            (run.report, run.struck)
        }
        None => {
            let run = real::run(scenario, &hosts, &options, RealTrace::new());
            (runtime.block_on(run), Ok(FaultCounts::default()))
        }
    };
    let report = match report {
        Ok(report) => report,
        Err(error) => return crate::cli::unusable_server(&hosts, error),
    };
    let struck = match struck {
        Ok(struck) => struck,
        Err(message) => return crate::cli::usage_error(&message),
    };
    let struck: Vec<(String, u64)> = struck
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(kind, count)| (kind.to_string(), count))
        .collect();
    let violations: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    let kept = match violations.is_empty() {
        true => None,
        false => match keep_trace(scenario.name, args.seed, &report.trace) {
            Ok(path) => Some(path),
            Err(message) => return crate::cli::usage_error(&message),
        },
    };
    if args.json {
        let summary = RealJson {
            scenario: scenario.name,
            zk: &hosts,
            clients: args.clients,
            rounds: args.rounds,
            seed: args.seed,
            faults_struck: struck.iter().cloned().collect(),
            violations: &violations,
            trace: kept.as_deref(),
            seconds: report.elapsed.as_secs_f64(),
        };
        let summary = serde_json::to_string(&summary).expect("a report is plain data");
        outln!("{summary}");
    } else {
        outln!(
            "{} on {hosts}: {} clients x {} rounds in {:.3} s, {} violations",
            scenario.name,
            args.clients,
            args.rounds,
            report.elapsed.as_secs_f64(),
            violations.len()
        );
        if !args.faults.is_none() {
            let struck: Vec<String> = struck.iter().map(|(k, n)| format!("{k} {n}")).collect();
            let struck = if struck.is_empty() {
                "none".to_owned()
            } else {
                struck.join(", ")
            };
            outln!("faults struck: {struck}");
        }
        for violation in &violations {
            outln!("VIOLATION {violation}");
        }
        if let Some(path) = &kept {
            outln!("the run's trace, as its clients saw it: {path}");
        }
    }
    if !violations.is_empty() {
        return ExitCode::from(1);
    }
    if !args.faults.is_none() && struck.is_empty() {
        eprintln!(
            "the workload ended before any fault struck: the run says nothing about faults \
             (give it more --rounds)"
        );
        return ExitCode::from(3);
    }
    ExitCode::SUCCESS
}

/// Writes the trace of a run that broke a property to
/// `zklab-counterexamples/real-<scenario>-seed<seed>.trace`, and says where: a real run does not
/// replay, so what its clients saw is all there is to read.
fn keep_trace(scenario: &str, seed: u64, trace: &Trace) -> Result<String, String> {
    let path = Path::new(COUNTEREXAMPLES).join(format!("real-{scenario}-seed{seed}.trace"));
    regressions::save_text(&path, &trace.render())?;
    Ok(path.display().to_string())
}

/// How faults reach `server`: none for a server zklab did not start with a way to strike it.
fn struck_by(server: &CommandServer) -> Option<Struck<'_>> {
    match server {
        CommandServer::Controller(controller) => Some(Struck::Controller(controller)),
        CommandServer::Ensemble(ensemble) => Some(Struck::Ensemble(ensemble)),
        CommandServer::Given(_) | CommandServer::Started(_) => None,
    }
}
