//! The `zklab` command line: list the scenarios, sweep seeds, replay one seed, check a model.
//!
//! Exit status: 0 when every seed (or state) holds, 1 when a property is violated, 2 on bad usage,
//! 3 when `check` stopped at its timeout without finding a violation.

mod check;
mod conform_command;
mod progress;
mod real_command;
mod server;
mod shell_command;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};
use zklab::scenarios::catalogue;
use zklab::scenarios::runner::{self, RunOptions, SweepReport, SCENARIO_SERVERS};
use zklab::scenarios::scenario::Scenario;
use zklab::sim::fault::{FaultCounts, FaultKind, FaultRates};

use crate::check::CheckArgs;
use crate::progress::{seed_bar, StatusLine};

/// The model checker clones and drops states by the million: with the system allocator it
/// spends a third of its time allocating, and mimalloc makes a check about 15% faster.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Deterministic simulation and model checking for ZooKeeper recipes.
#[derive(Parser)]
#[command(name = "zklab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the scenarios: each runs in the simulator, in the model checker and on a real server.
    List,
    /// Run a scenario over many seeds with injected faults.
    Run {
        /// The scenario (see `zklab list`), or `all` for every scenario that is not a known bug.
        scenario: String,
        /// How many seeds.
        #[arg(long, default_value_t = 100)]
        seeds: u64,
        /// The first seed.
        #[arg(long, default_value_t = 0)]
        start_seed: u64,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        setup: Setup,
    },
    /// Model-check a recipe exhaustively for a few clients, with a budget of each fault.
    Check(CheckArgs),
    /// Compare the simulated ZooKeeper with a real one on generated operation sequences.
    Conform(conform_command::ConformArgs),
    /// Run a scenario's workload against a real ZooKeeper, judged by the same oracles.
    Real(real_command::RealArgs),
    /// An interactive shell that speaks zkCli's commands, on the simulated ZooKeeper or a real one.
    Shell {
        /// A real ZooKeeper (`host:port[,host:port...]`) instead of the simulated one.
        #[arg(long)]
        zk: Option<String>,
    },
    /// Run one seed and print its whole trace.
    Replay {
        /// The scenario (see `zklab list`).
        scenario: String,
        /// The seed.
        #[arg(long)]
        seed: u64,
        #[command(flatten)]
        setup: Setup,
    },
}

/// The options that fix what a seed does: a replay needs the same ones as the run.
#[derive(Args, Clone)]
struct Setup {
    /// Number of clients.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=64))]
    clients: u32,
    /// Rounds of work per client (for a lock: acquisitions; for an election: terms as leader).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rounds: u32,
    /// Faults: `none`, or a comma-separated list of `all` and kinds
    /// (connection-loss, lost-reply, lost-create-reply, session-expiry, reorder, partition, pause, crash,
    /// and on an ensemble stale-read, server-crash and leader-change), each at its default rate
    /// or as `kind=rate`: a probability per message (0 to 1) for the first four, a frequency per
    /// second of sim time (0 to 100) for the rest; later items win (`all,crash=0.05`).
    #[arg(long, default_value = "all", value_parser = parse_faults)]
    faults: String,
    /// Servers in the simulated ensemble: 1 (standalone, every read up to date), 3 or 5
    /// (sessions spread over them; a follower's reads can lag behind the leader's writes).
    #[arg(long, default_value_t = SCENARIO_SERVERS, value_parser = parse_servers)]
    servers: usize,
}

fn parse_servers(count: &str) -> Result<usize, String> {
    match count.parse::<usize>() {
        Ok(n @ (1 | 3 | 5)) => Ok(n),
        _ => Err(format!("{count:?} is not an ensemble size: use 1, 3 or 5")),
    }
}

fn parse_faults(spec: &str) -> Result<String, String> {
    FaultRates::parse(spec).map(|_| spec.to_owned())
}

impl Setup {
    fn options(&self) -> RunOptions {
        RunOptions {
            clients: self.clients,
            rounds: self.rounds,
            faults: FaultRates::parse(&self.faults).expect("validated by clap"),
            ..RunOptions::default()
        }
        .on_servers(self.servers)
    }

    /// The exact command that replays `seed` of `scenario` with these options.
    fn replay_command(&self, scenario: &str, seed: u64) -> String {
        let mut command = format!(
            "cargo run --release -- replay {scenario} --seed {seed} --clients {} --rounds {} --faults {}",
            self.clients, self.rounds, self.faults
        );
        if self.servers != SCENARIO_SERVERS {
            command.push_str(&format!(" --servers {}", self.servers));
        }
        command
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    runner::quiet_panics_inside_seeds();
    // `RUST_LOG` prints every trace event as it happens, stamped with the sim time.
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing::subscriber::set_global_default(zklab::sim::log::subscriber());
    }
    match cli.command {
        Command::List => {
            let width = catalogue::scenarios().map(|s| s.name.len()).max();
            for scenario in catalogue::scenarios() {
                let tag = known_bug_tag(scenario.known_bug);
                let name = scenario.name;
                println!(
                    "{name:<width$}  {}{tag}",
                    scenario.about,
                    width = width.unwrap_or(0)
                );
            }
            ExitCode::SUCCESS
        }
        Command::Run {
            scenario,
            seeds,
            start_seed,
            threads,
            json,
            setup,
        } => {
            let fitting = select(&scenario).and_then(|scenarios| {
                for scenario in &scenarios {
                    scenario.fits(setup.clients as usize)?;
                }
                Ok(scenarios)
            });
            let scenarios = match fitting {
                Ok(scenarios) => scenarios,
                Err(message) => return usage_error(&message),
            };
            if seeds == 0 {
                return usage_error("--seeds must be at least 1");
            }
            let threads = threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            let mut failed = false;
            let mut objects = Vec::new();
            for scenario in scenarios {
                let status = StatusLine::new(json);
                let options = setup.options();
                let report = runner::sweep(
                    scenario,
                    start_seed,
                    seeds,
                    &options,
                    threads,
                    &|done, failures| {
                        status.show(done == seeds, || {
                            seed_bar(done, seeds, failures, status.elapsed())
                        })
                    },
                );
                status.finish();
                failed |= !report.failures.is_empty();
                if json {
                    objects.push(sweep_json(scenario, &report, &setup));
                } else {
                    print_sweep(scenario, &report, &setup);
                }
            }
            if json {
                let value = if objects.len() == 1 {
                    objects.remove(0)
                } else {
                    Value::Array(objects)
                };
                println!("{value}");
            }
            if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Command::Check(args) => check::run(&args),
        Command::Conform(args) => conform_command::run(&args),
        Command::Real(args) => real_command::run(&args),
        Command::Shell { zk } => shell_command::run_stdio(zk.as_deref()),
        Command::Replay {
            scenario,
            seed,
            setup,
        } => {
            let found = catalogue::find(&scenario)
                .and_then(|scenario| scenario.fits(setup.clients as usize).map(|()| scenario));
            let scenario = match found {
                Ok(scenario) => scenario,
                Err(message) => return usage_error(&message),
            };
            let report = runner::run_seed(scenario, seed, &setup.options());
            print!("{}", report.trace.render());
            println!(
                "-- {} seed {seed}: {} events, digest {:016x}",
                scenario.name,
                report.trace.entries().len(),
                report.trace.digest()
            );
            if report.violations.is_empty() {
                println!("-- every property holds");
                ExitCode::SUCCESS
            } else {
                for violation in &report.violations {
                    println!("-- VIOLATION {violation}");
                }
                ExitCode::from(1)
            }
        }
    }
}

/// The scenarios a `run` argument names.
fn select(name: &str) -> Result<Vec<&'static Scenario>, String> {
    if name == "all" {
        return Ok(catalogue::scenarios()
            .filter(|scenario| !scenario.known_bug)
            .collect());
    }
    catalogue::find(name).map(|scenario| vec![scenario])
}

fn known_bug_tag(known_bug: bool) -> &'static str {
    if known_bug {
        " (known bug: expected to fail)"
    } else {
        ""
    }
}

/// Reports a real server the command could not work with; exit status 2, as for bad usage:
/// nothing was judged.
fn unusable_server(hosts: &str, error: zklab::recipes::client::ZkError) -> ExitCode {
    usage_error(&format!(
        "the ZooKeeper at {hosts} could not be used: {error}"
    ))
}

/// Prints a usage error; exit status 2.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

fn print_sweep(scenario: &Scenario, report: &SweepReport, setup: &Setup) {
    println!(
        "{}: {} seeds, {} failing, {:.0} seeds/s ({:.2} s)",
        scenario.name,
        report.seeds,
        report.failures.len(),
        report.seeds_per_sec(),
        report.elapsed.as_secs_f64()
    );
    let counts: Vec<String> = report
        .faults
        .iter()
        .map(|(kind, n)| format!("{kind}={n}"))
        .collect();
    println!("faults injected: {}", counts.join(" "));
    let struck: Vec<String> = report
        .seeds_struck
        .iter()
        .filter(|(kind, _)| report.faults.get(*kind) > 0)
        .map(|(kind, n)| {
            format!(
                "{kind}={:.0}%",
                100.0 * n as f64 / report.seeds.max(1) as f64
            )
        })
        .collect();
    println!("seeds struck: {}", struck.join(" "));
    println!(
        "max wake-ups per deletion: {}",
        report.max_wakeups_per_deletion
    );
    if let Some((seed, violation)) = report.failures.first() {
        println!("first failing seed {seed}: {violation}");
        println!(
            "replay it with: {}",
            setup.replay_command(scenario.name, *seed)
        );
    }
}

fn sweep_json(scenario: &Scenario, report: &SweepReport, setup: &Setup) -> Value {
    let failures: Vec<Value> = report
        .failures
        .iter()
        .map(|(seed, violation)| {
            json!({
                "seed": seed,
                "violation": violation.to_string(),
                "kind": violation.kind.name(),
                "replay": setup.replay_command(scenario.name, *seed),
            })
        })
        .collect();
    let by_kind = |counts: &FaultCounts| -> serde_json::Map<String, Value> {
        counts
            .iter()
            .map(|(kind, n)| (json_key(kind), json!(n)))
            .collect()
    };
    json!({
        "scenario": scenario.name,
        "seeds": report.seeds,
        "clients": setup.clients,
        "rounds": setup.rounds,
        "faults": setup.faults,
        "servers": setup.servers,
        "failures": failures,
        "faults_injected": by_kind(&report.faults),
        "seeds_struck": by_kind(&report.seeds_struck),
        "max_wakeups_per_deletion": report.max_wakeups_per_deletion,
        "seeds_per_sec": report.seeds_per_sec(),
        "seconds": report.elapsed.as_secs_f64(),
    })
}

/// A fault kind's key in JSON (`lost-create-reply` becomes `lost_create_reply`).
fn json_key(kind: FaultKind) -> String {
    kind.name().replace('-', "_")
}
