//! `zklab conform`: the differential conformance cases against a real ZooKeeper, given or
//! started for the run; with `--faults`, cases with faults against a server with a command
//! port started for the run; with `--ensemble`, cases in which a follower dies and restarts, on
//! a 3-server ensemble started for the run.

use std::process::ExitCode;
use std::sync::Mutex;

use clap::Args;
use serde_json::json;
use zklab::conform::{conform, ConformOptions, ConformReport, RealServer as Target};
use zklab::launcher::{Controller, Ensemble, Installation};

use crate::progress::StatusLine;
use crate::server::RealServer;

/// The options of `zklab conform`.
#[derive(Args)]
pub struct ConformArgs {
    /// A running ZooKeeper to compare with (`host:port[,host:port...]`); without it, zklab
    /// starts a standalone server from the installed ZooKeeper for the run.
    #[arg(long)]
    zk: Option<String>,
    /// How many generated cases.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    cases: u64,
    /// The generator's seed: the same seed makes the same cases under the same paths
    /// (`/zklab-conform-SEED-N`), so two runs at once on one server need different seeds.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Cases with faults too (session expiry, dropped connections, lost replies), compared
    /// with the simulated service rather than the pure server, on a server with a command port
    /// (ZooKeeper's `ControllerService`) that zklab starts for the run.
    #[arg(long, conflicts_with = "zk")]
    faults: bool,
    /// Cases on a 3-server ensemble that zklab starts for the run, compared with a simulated
    /// one: the follower a session is attached to dies while the others act, and restarts, so
    /// the session's watches are re-registered. Each case restarts a member: about a second.
    #[arg(long, conflicts_with_all = ["zk", "faults"])]
    ensemble: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The members of the ensemble `--ensemble` starts.
const ENSEMBLE_SIZE: usize = 3;

/// The server a run compares with.
enum Server {
    Plain(RealServer),
    Controller(Controller),
    Ensemble(Mutex<Ensemble>),
}

impl Server {
    fn for_args(args: &ConformArgs) -> Result<Server, String> {
        if !args.faults && !args.ensemble {
            return RealServer::given_or_started(args.zk.as_deref()).map(Server::Plain);
        }
        let installation = Installation::find().map_err(|error| error.to_string())?;
        if args.ensemble {
            return Ensemble::start(&installation, ENSEMBLE_SIZE)
                .map(|ensemble| Server::Ensemble(Mutex::new(ensemble)))
                .map_err(|error| format!("could not start a ZooKeeper ensemble: {error}"));
        }
        Controller::start(&installation)
            .map(Server::Controller)
            .map_err(|error| format!("could not start a ZooKeeper controller server: {error}"))
    }

    fn hosts(&self) -> String {
        match self {
            Server::Plain(server) => server.hosts(),
            Server::Controller(controller) => controller.connect_string(),
            Server::Ensemble(ensemble) => ensemble
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .connect_string(),
        }
    }

    fn target<'a>(&'a self, hosts: &'a str) -> Target<'a> {
        match self {
            Server::Plain(_) => Target::Hosts(hosts),
            Server::Controller(controller) => Target::Controller(controller),
            Server::Ensemble(ensemble) => Target::Ensemble(ensemble),
        }
    }
}

/// Runs the command: exit 0 when every case agrees, 1 on a mismatch, 2 when no server can be
/// used.
pub fn run(args: &ConformArgs) -> ExitCode {
    let server = match Server::for_args(args) {
        Ok(server) => server,
        Err(message) => return crate::usage_error(&message),
    };
    let hosts = server.hosts();
    let target = server.target(&hosts);
    let options = ConformOptions {
        cases: args.cases,
        seed: args.seed,
    };
    let status = StatusLine::new(args.json);
    let result = conform(target, &options, |done, mismatches| {
        status.show(done == options.cases, || {
            format!("{done}/{} cases, {mismatches} mismatching", options.cases)
        })
    });
    status.finish();
    let report = match result {
        Ok(report) => report,
        Err(error) => return crate::unusable_server(&hosts, error),
    };
    if args.json {
        println!("{}", report_json(&report, &options, args, status.elapsed()));
    } else {
        print_report(&report, status.elapsed());
    }
    if report.mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print_report(report: &ConformReport, elapsed: std::time::Duration) {
    println!(
        "{} cases, {} mismatching ({:.1} s)",
        report.cases,
        report.mismatches,
        elapsed.as_secs_f64()
    );
    let outcomes: Vec<String> = report
        .outcomes
        .iter()
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    println!("exercised: {}", outcomes.join(", "));
    if let Some(mismatch) = &report.first_mismatch {
        println!("first mismatch, shrunk:\n{}", mismatch.case);
        println!("{}", mismatch.difference);
    }
}

fn report_json(
    report: &ConformReport,
    options: &ConformOptions,
    args: &ConformArgs,
    elapsed: std::time::Duration,
) -> serde_json::Value {
    let first = report.first_mismatch.as_ref().map(|mismatch| {
        json!({
            "case": mismatch.case.to_string(),
            "difference": mismatch.difference,
        })
    });
    json!({
        "cases": report.cases,
        "mismatches": report.mismatches,
        "first_mismatch": first,
        "outcomes": report.outcomes,
        "seed": options.seed,
        "faults": args.faults,
        "ensemble": args.ensemble,
        "seconds": elapsed.as_secs_f64(),
    })
}
