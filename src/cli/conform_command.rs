//! `zklab conform`: the differential conformance cases against a real ZooKeeper, given or
//! started for the run; with `--faults`, cases with faults against a server with a command
//! port started for the run; with `--ensemble`, cases in which a follower dies and restarts, on
//! a 3-server ensemble started for the run; with `--drop-in`, cases through the drop-in
//! `zookeeper-client` on the simulated service.

use std::collections::BTreeMap;
use std::process::ExitCode;

use crate::conform::{conform, ConformOptions, ConformReport, RealServer as Target};
use clap::Args;
use serde::Serialize;

use crate::cli::command_server::CommandServer;
use crate::cli::progress::bar;

/// The options of `zklab conform`.
#[derive(Args)]
pub struct ConformArgs {
    /// A running ZooKeeper to compare with (`host:port[,host:port...]`); without it, zklab
    /// starts a standalone server from the installed ZooKeeper for the run.
    #[arg(long)]
    zk: Option<String>,
    /// How many generated cases (1 or more).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    cases: u64,
    /// The generator's seed: the same seed makes the same cases under the same paths
    /// (`/zklab-conform-SEED-N`), so two runs at once on one server need different seeds.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Cases with faults too (session expiry, dropped connections, lost replies), compared
    /// with the simulated service rather than the pure server, on a server with a command port
    /// (ZooKeeper's `ControllerService`) that zklab starts for the run, or the one `--zk` and
    /// `--command-port` name.
    #[arg(long)]
    faults: bool,
    /// The command port (on 127.0.0.1) of the server `--zk` names, for `--faults` against it:
    /// a `ControllerService`'s, or `zklab serve --command-port`'s.
    #[arg(long, requires_all = ["zk", "faults"])]
    command_port: Option<u16>,
    /// Cases on a 3-server ensemble that zklab starts for the run, compared with a simulated
    /// one: the follower a session is attached to dies while the others act, and restarts, so
    /// the session's watches are re-registered. Each case restarts a member: about a second.
    #[arg(long, conflicts_with_all = ["zk", "faults"])]
    ensemble: bool,
    /// Runs the simulated side through the drop-in `zookeeper-client` (zklab-zookeeper-client)
    /// on the simulated service, rather than on the pure server: the drop-in's conformance with
    /// the real client on a real server. Cases without faults.
    #[arg(long, conflicts_with_all = ["faults", "ensemble"])]
    drop_in: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The server a run compares with: the one `--zk` names or a standalone one, a controller
/// server with `--faults`, an ensemble with `--ensemble`.
fn server_for(args: &ConformArgs) -> Result<CommandServer, String> {
    if args.ensemble {
        CommandServer::ensemble()
    } else if args.faults {
        match (&args.zk, args.command_port) {
            (Some(hosts), Some(port)) => CommandServer::attached(hosts, port),
            (Some(_), None) => Err("--faults against --zk needs its --command-port".to_owned()),
            (None, _) => CommandServer::controller(),
        }
    } else {
        CommandServer::given_or_started(args.zk.as_deref(), None)
    }
}

/// How conformance reaches `server`, whose connect string is `hosts`; `drop_in`: through the
/// drop-in `zookeeper-client`.
fn target<'a>(server: &'a CommandServer, hosts: &'a str, drop_in: bool) -> Target<'a> {
    match server {
        CommandServer::Given(_) | CommandServer::Started(_) if drop_in => {
            Target::ThroughDropIn(hosts)
        }
        CommandServer::Given(_) | CommandServer::Started(_) => Target::Hosts(hosts),
        CommandServer::Controller(controller) => Target::Controller(controller),
        CommandServer::Ensemble(ensemble) => Target::Ensemble(ensemble),
    }
}

/// Runs the command: exit 0 when every case agrees, 1 on a mismatch, 2 when no server can be
/// used.
pub fn run(args: &ConformArgs) -> ExitCode {
    let server = match server_for(args) {
        Ok(server) => server,
        Err(message) => return crate::cli::usage_error(&message),
    };
    let hosts = server.hosts();
    let target = target(&server, &hosts, args.drop_in);
    let options = ConformOptions {
        cases: args.cases,
        seed: args.seed,
    };
    let status = bar(options.cases, "cases", args.json);
    let result = conform(target, &options, |done, mismatches| {
        status.set_position(done);
        status.set_message(format!("{mismatches} mismatching"));
    });
    status.finish_and_clear();
    let report = match result {
        Ok(report) => report,
        Err(error) => return crate::cli::unusable_server(&hosts, error),
    };
    if args.json {
        outln!("{}", report_json(&report, &options, args, status.elapsed()));
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
    outln!(
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
    outln!("exercised: {}", outcomes.join(", "));
    let requests: Vec<String> = (report.requests.iter())
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    outln!("requests: {}", requests.join(", "));
    if let Some(mismatch) = &report.first_mismatch {
        outln!("first mismatch, shrunk:\n{}", mismatch.case);
        outln!("{}", mismatch.difference);
    }
}

/// A conformance run as `--json` prints it.
#[derive(Serialize)]
struct ConformJson<'r> {
    cases: u64,
    mismatches: u64,
    first_mismatch: Option<MismatchJson<'r>>,
    outcomes: &'r BTreeMap<String, u64>,
    requests: &'r BTreeMap<String, u64>,
    seed: u64,
    faults: bool,
    ensemble: bool,
    seconds: f64,
}

/// The first case that disagreed, shrunk, and how.
#[derive(Serialize)]
struct MismatchJson<'r> {
    case: String,
    difference: &'r str,
}

fn report_json(
    report: &ConformReport,
    options: &ConformOptions,
    args: &ConformArgs,
    elapsed: std::time::Duration,
) -> String {
    let json = ConformJson {
        cases: report.cases,
        mismatches: report.mismatches,
        first_mismatch: report.first_mismatch.as_ref().map(|mismatch| MismatchJson {
            case: mismatch.case.to_string(),
            difference: &mismatch.difference,
        }),
        outcomes: &report.outcomes,
        requests: &report.requests,
        seed: options.seed,
        faults: args.faults,
        ensemble: args.ensemble,
        seconds: elapsed.as_secs_f64(),
    };
    serde_json::to_string(&json).expect("a report is plain data")
}
