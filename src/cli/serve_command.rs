//! `zklab serve`: the simulated ZooKeeper on ZooKeeper's wire protocol, for clients of any
//! library and language, with seeded server-side faults, judged by what clients claim.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::interrupt;
use crate::serve::{serve, Listening, ServeOptions, ServeReport};
use crate::sim::fault::{FaultKind, FaultRates};
use crate::sim::wire_service::{AnchoredFault, ServeFaults, Ticks};

/// `zklab serve`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The port on 127.0.0.1 (0: any free one); with `--servers N`, the servers listen on it
    /// and the N-1 ports after it. The connect string is printed once they listen.
    #[arg(long, default_value_t = 2181)]
    port: u16,
    /// How many servers: 1 is a standalone server; 3 or 5 an ensemble, whose followers serve
    /// reads that may be stale, and where a client moves between servers as on a real one.
    #[arg(long, default_value_t = 1, value_parser = parse_servers)]
    servers: usize,
    /// The seed the sessions' passwords and the random faults come from.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Faults the server strikes: `none`, or a comma-separated list of `all` and kinds
    /// (connection-loss, lost-reply, lost-create-reply and reorder per request, session-expiry
    /// and partition per second, container-reaped per emptied container; on an ensemble also
    /// stale-read, server-crash and leader-change per second), each at its default rate or as
    /// `kind=rate`, as `zklab run --faults` takes them. `all` is every kind the servers can
    /// strike at clients they do not run.
    #[arg(long, default_value = "none", value_parser = parse_serve_faults)]
    faults: String,
    /// A schedule of faults anchored to what the server saw (a fault a line, as
    /// `lost-create-reply c1 create 3`): the `schedule.txt` a run wrote strikes its faults again.
    #[arg(long)]
    script: Option<PathBuf>,
    /// How often, in seconds, the server deletes emptied containers and idle TTL nodes (as
    /// ZooKeeper's `znode.container.checkIntervalMs`).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    container_check: u64,
    /// Stop after this many seconds; without it, serve until Ctrl-C, SIGTERM or `--idle`.
    #[arg(long = "for", value_parser = clap::value_parser!(u64).range(1..))]
    run_for: Option<u64>,
    /// Stop once no client has been connected, nor tried to connect, for this many seconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    idle: Option<u64>,
    /// Also listen on this port of 127.0.0.1 (0: any free one) for the commands of ZooKeeper's
    /// `ControllerService` (`GET /command/EXPIRESESSION/<session>`, `CLOSECONNECTION`,
    /// `NORESPONSE`, `FAILREQUESTS`, `ADDDELAY`, `REJECTCONNECTIONS`, `ELECTNEWLEADER` on an
    /// ensemble, `RESET`, `PING`).
    #[arg(long)]
    command_port: Option<u16>,
    /// Also listen on this port of 127.0.0.1 (0: any free one) for clients' claims, a line
    /// each: `<session> granted|shared <role> [<token>]`, `<session> released <role>`,
    /// `<session> suspended|resumed|lost`, each answered `ok` or `error: ...`.
    #[arg(long)]
    claims_port: Option<u16>,
    /// How many clients may hold a role claimed `shared` at once, as a semaphore's leases
    /// allow (without it, any number: read locks).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    shared_by: Option<u64>,
    /// The most client connections open at once; more are closed as they come.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// Where the run's trace, picture and schedule go.
    #[arg(long, default_value = "zklab-serve")]
    out: PathBuf,
}

/// Faults as `--faults` takes them, refusing a kind `zklab serve` cannot strike by name.
fn parse_serve_faults(spec: &str) -> Result<String, String> {
    for kind in named_kinds(spec)? {
        AnchoredFault::moment(kind)?;
    }
    Ok(spec.to_owned())
}

/// The kinds `--faults` names, at a rate above zero.
fn named_kinds(spec: &str) -> Result<Vec<FaultKind>, String> {
    let rates = FaultRates::parse(spec)?;
    let named = |kind: &FaultKind| {
        let mut names = spec.split(',').filter_map(|item| item.split('=').next());
        names.any(|name| name.trim() == kind.name())
    };
    let kinds = FaultKind::ALL.into_iter().filter(named);
    Ok(kinds.filter(|&kind| rates.rate(kind) > 0.0).collect())
}

/// A count of servers: 1, 3 or 5.
fn parse_servers(text: &str) -> Result<usize, String> {
    match text.parse() {
        Ok(servers @ (1 | 3 | 5)) => Ok(servers),
        _ => Err(format!("{text} servers: serve 1, 3 or 5")),
    }
}

/// Serves, then prints the verdict: exit 0 when every claim held, 1 when one broke a property,
/// 2 on bad usage or a port that cannot be had.
pub fn run(args: &ServeArgs) -> ExitCode {
    let schedule = match &args.script {
        None => Vec::new(),
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(error) => {
                    return crate::cli::usage_error(&format!(
                        "cannot read {}: {error}",
                        path.display()
                    ))
                }
            };
            match AnchoredFault::parse_schedule(&text) {
                Ok(schedule) => schedule,
                Err(why) => return crate::cli::usage_error(&format!("{}: {why}", path.display())),
            }
        }
    };
    let named = named_kinds(&args.faults).expect("validated by clap");
    let kinds = named
        .into_iter()
        .chain(schedule.iter().map(|fault| fault.kind));
    for kind in kinds {
        if let Err(why) = AnchoredFault::strikes_on(kind, args.servers) {
            return crate::cli::usage_error(&why);
        }
    }
    let rates = FaultRates::parse(&args.faults).expect("validated by clap");
    let asked_faults = !args.faults.eq("none") || !schedule.is_empty();
    let options = ServeOptions {
        port: args.port,
        servers: args.servers,
        seed: args.seed,
        ticks: Ticks {
            container_check: Duration::from_secs(args.container_check),
            ..Ticks::default()
        },
        run_for: args.run_for.map(Duration::from_secs),
        idle: args.idle.map(Duration::from_secs),
        command_port: args.command_port,
        claims_port: args.claims_port,
        faults: ServeFaults::new(rates, schedule, args.seed, args.servers),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        shared_by: args
            .shared_by
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        out: args.out.clone(),
    };
    let ready = |listening: Listening| {
        outln!("{}", listening.connect_string());
        if let Some(commands) = listening.commands {
            outln!("command port: {commands}");
        }
        if let Some(claims) = listening.claims {
            outln!("claims port: {claims}");
        }
    };
    interrupt::stop_on_ctrl_c();
    interrupt::stop_on_term();
    match serve(options, ready, interrupt::interrupted) {
        Ok(report) => verdict(&report, asked_faults, args.claims_port.is_some()),
        Err(error) => {
            crate::cli::usage_error(&format!("cannot serve on 127.0.0.1:{}: {error}", args.port))
        }
    }
}

/// Prints a finished run's verdict, and the command that strikes its faults again.
fn verdict(report: &ServeReport, asked_faults: bool, claims_port: bool) -> ExitCode {
    let struck: Vec<String> = (report.counts.iter())
        .filter(|(_, count)| *count > 0)
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    let count = |n: u64, what: &str| match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
    };
    outln!(
        "zklab serve ended: {}, {}, {}",
        count(report.sessions, "session"),
        count(report.claims, "claim"),
        count(report.violations.len() as u64, "violation")
    );
    outln!("the most sessions one deletion woke: {}", report.most_woken);
    if asked_faults {
        let struck = if struck.is_empty() {
            "none".to_owned()
        } else {
            struck.join(", ")
        };
        outln!("faults struck: {struck}");
    }
    for violation in &report.violations {
        outln!("VIOLATION {violation}");
    }
    outln!("trace: {}", report.trace.display());
    outln!("picture: {}", report.picture.display());
    if !struck.is_empty() {
        outln!(
            "strike them again: the same clients on zklab serve --script {}",
            report.schedule.display()
        );
    }
    if report.claims == 0 && claims_port {
        eprintln!("no client made a claim: the run judged nothing of what they believed");
    }
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
