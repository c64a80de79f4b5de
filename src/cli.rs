//! The `zklab` command line, over zklab's own catalogue or over yours: `list`, `run`, `merge`,
//! `replay`, `shrink`, `check` and `real` take any [`Scenario`], so a crate with recipes of its
//! own gets the same command line, flags, output and exit statuses with one call from its
//! `main`:
//!
//! ```rust,ignore
//! #[global_allocator]
//! static ALLOCATOR: zklab::cli::Allocator = zklab::cli::Allocator::NEW;
//!
//! fn main() -> std::process::ExitCode {
//!     zklab::cli::main([&MY_LOCK, &MY_LOCK_BUG])
//! }
//! ```
//!
//! `zklab` itself is that call over zklab's own scenarios ([`catalogue::scenarios`]), so the two
//! cannot drift. `conform` and `shell` are about ZooKeeper itself, not about scenarios: they work
//! the same in every program. Replay commands name the program as it was invoked, and `run`
//! replays the kept schedules of the scenarios it runs from `zklab-regressions/` (a schedule of
//! another program's scenario there is left alone).
//!
//! [`catalogue::scenarios`]: crate::scenarios::catalogue::scenarios
//!
//! Exit status: 0 when every seed (or state) holds, 1 when a property is violated, 2 on bad usage,
//! 3 when the run proves nothing (an incomplete `check`, a `real` run no fault struck), 130 when
//! Ctrl-C stopped a sweep.

#[macro_use]
mod stdout;

mod allocator;
mod check_command;
mod command_server;
mod conform_command;
mod interrupt;
mod list_command;
mod memory_budget;
mod merge_command;
mod progress;
mod real_command;
mod replay_command;
mod run_command;
mod serve_command;
mod shell_command;
mod shrink_command;
mod sweep_summary;
mod wild_command;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use self::check_command::CheckArgs;
use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::heap;
use crate::scenarios::runner::{self, RunOptions, SCENARIO_SERVERS};
use crate::scenarios::scenario::Scenario;
use crate::sim::fault::FaultRates;
use crate::testing::shell_quoted;

pub use self::allocator::Allocator;

/// Deterministic simulation and model checking for ZooKeeper recipes.
#[derive(Parser)]
#[command(
    name = "zklab",
    version,
    about,
    after_help = "Exit status: 0 when everything holds, 1 when a property is violated (or a \
                  conformance case disagrees), 2 on bad usage or a server that cannot be used, \
                  3 when `check` stopped at its timeout. `RUST_LOG=info` prints every trace \
                  event as it happens."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the scenarios: each runs in the simulator, in the model checker and on a real server.
    #[command(after_help = "Exit status: 0.")]
    List(list_command::ListArgs),
    /// Run a scenario over many seeds with injected faults.
    #[command(
        after_help = "Exit status: 0 every seed holds, 1 a property was violated, 2 bad \
                            usage, a workload too large for --memory, or a seed that passed its \
                            share of it (the seeds run so far are reported), 130 stopped by \
                            Ctrl-C (the seeds run so far are reported)."
    )]
    Run(run_command::RunArgs),
    /// Join the `run --json` outputs of a sweep's shards into one report.
    #[command(
        after_help = "Exit status: 0 no seed failed, 1 a seed failed, 2 a file that is \
                            not `run --json` output, or shards that ran a seed twice."
    )]
    Merge(merge_command::MergeArgs),
    /// Model-check a recipe exhaustively for a few clients, with a budget of each fault.
    #[command(
        after_help = "Exit status: 0 every property holds, 1 a property fails, 2 bad \
                            usage, 3 the search stopped at --timeout (incomplete: proves \
                            nothing)."
    )]
    Check(CheckArgs),
    /// Compare the simulated ZooKeeper with a real one on generated operation sequences.
    #[command(
        after_help = "Exit status: 0 every case agrees, 1 a case disagrees, 2 bad usage \
                            or no server can be used."
    )]
    Conform(conform_command::ConformArgs),
    /// Run a scenario's workload against a real ZooKeeper, judged by the same oracles.
    #[command(
        after_help = "Exit status: 0 every property holds, 1 a property was violated, \
                            2 bad usage, or no server can be used or struck, 3 faults were \
                            asked for and none struck before the workload ended (proves \
                            nothing of them)."
    )]
    Real(real_command::RealArgs),
    /// Serve the simulated ZooKeeper on ZooKeeper's wire protocol (one server), so that a
    /// client of any library or language connects to it as to a real one and meets its faults.
    #[command(
        after_help = "Prints the address it listens on (127.0.0.1) once it accepts \
                            connections. When it ends (--for, --idle, Ctrl-C or SIGTERM) it \
                            prints the verdict on what clients claimed, and writes the trace, \
                            a picture and the schedule of the faults struck to --out. Exit \
                            status: 0 every property held, 1 a claim broke one, 2 bad usage \
                            or the port cannot be had."
    )]
    Serve(serve_command::ServeArgs),
    /// Run a library's recipe (kazoo's Lock, Semaphore, Election, ...) by its driver against
    /// `zklab serve`, seed after seed under a fault profile, judged by what its clients claim.
    #[command(
        after_help = "Needs python3 with kazoo. Prints a line per run and the sum; for the \
                            first violation, its files and the command that strikes its faults \
                            again. Exit status: 0 no run broke a property, 1 one did, 2 bad \
                            usage or a driver that cannot run."
    )]
    Wild(wild_command::WildArgs),
    /// An interactive shell that speaks zkCli's commands, on the simulated ZooKeeper or a real
    /// one; on a terminal it prompts and edits lines, and `help` lists what it supports.
    #[command(
        after_help = "Exit status: 0, 1 when it could not write its output, 2 when no \
                            server can be used."
    )]
    Shell {
        /// A real ZooKeeper (`host:port[,host:port...]`) instead of the simulated one.
        #[arg(long)]
        zk: Option<String>,
    },
    /// Run one seed, or a schedule `shrink` wrote, and print its whole trace, or draw it.
    #[command(
        after_help = "Exit status: 0 every property holds, 1 a property was violated, \
                            2 bad usage, a picture that cannot be written, or a seed larger \
                            than --memory."
    )]
    Replay(replay_command::ReplayArgs),
    /// Shrink a failing seed to its story: the fewest faults, clients, rounds and servers that
    /// still break the same property, saved as a schedule that `replay --script` runs.
    #[command(
        after_help = "Exit status: 1 the seed fails and here is its story, 2 bad usage, a seed \
                            that holds or that cannot be shrunk, or a schedule that cannot be \
                            written."
    )]
    Shrink(shrink_command::ShrinkArgs),
}

/// The options that fix what a seed does: a replay needs the same ones as the run.
#[derive(Args, Clone)]
pub(crate) struct Setup {
    /// Number of clients, 1 to 64.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=64))]
    clients: u32,
    /// Rounds of work per client, 1 to 10000 (for a lock: acquisitions; for an election: terms
    /// as leader).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rounds: u32,
    /// Faults: `none`, or a comma-separated list of `all` and kinds
    /// (connection-loss, lost-reply, lost-create-reply, session-expiry, reorder, partition, pause, crash,
    /// container-reaped, and on an ensemble stale-read, server-crash and leader-change), each at
    /// its default rate or as `kind=rate`: a probability per message (0 to 1) for the first
    /// four, per emptied container (0 to 1) for container-reaped, a frequency per second of sim
    /// time (0 to 100) for the rest; later items win (`all,crash=0.05`).
    #[arg(long, default_value = "all", value_parser = parse_faults)]
    faults: String,
    /// Servers in the simulated ensemble: 1 (standalone, every read up to date), 3 or 5
    /// (sessions spread over them; a follower's reads can lag behind the leader's writes).
    #[arg(long, default_value_t = SCENARIO_SERVERS, value_parser = parse_servers)]
    servers: usize,
    /// The most heap the run may hold (`4GiB`, `512MiB`), shared among the seeds running at
    /// once: a workload one seed of which would need more is refused with the figure, fewer
    /// seeds run at once when only a few fit, and a seed that passes its share stops the run.
    #[arg(long, default_value = memory_budget::DEFAULT_MEMORY, value_parser = memory_budget::parse_memory)]
    memory: u64,
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
    /// The options a seed runs with; an error for faults none of which could strike.
    pub(crate) fn options(&self) -> Result<RunOptions, String> {
        FaultRates::check_strikable(&self.faults, self.servers)?;
        Ok(RunOptions {
            clients: self.clients,
            rounds: self.rounds,
            faults: FaultRates::parse(&self.faults).expect("validated by clap"),
            ..RunOptions::default()
        }
        .on_servers(self.servers))
    }

    /// The exact command that replays `seed` of `scenario` with these options, naming this
    /// program as it was invoked.
    pub(crate) fn replay_command(&self, scenario: &str, seed: u64) -> String {
        let program = std::env::args()
            .next()
            .unwrap_or_else(|| "zklab".to_owned());
        let mut words = vec![
            program,
            "replay".to_owned(),
            scenario.to_owned(),
            "--seed".to_owned(),
            seed.to_string(),
            "--clients".to_owned(),
            self.clients.to_string(),
            "--rounds".to_owned(),
            self.rounds.to_string(),
            "--faults".to_owned(),
            self.faults.clone(),
        ];
        if self.servers != SCENARIO_SERVERS {
            words.extend(["--servers".to_owned(), self.servers.to_string()]);
        }
        let quoted: Vec<String> = words.iter().map(|word| shell_quoted(word)).collect();
        quoted.join(" ")
    }
}

/// Runs the command line over `scenarios`, reading the program's arguments, and gives its exit
/// status: 0 everything holds, 1 a property was violated, 2 bad usage (or scenarios that make no
/// catalogue: see [`Catalogue::new`]), 3 the run proves nothing, 130 Ctrl-C stopped it.
///
/// The program's allocator must count each thread's heap, for `--memory`:
/// `#[global_allocator] static ALLOCATOR: zklab::cli::Allocator = zklab::cli::Allocator::NEW;`
/// (or a [`CountingAllocator`](crate::scenarios::heap::CountingAllocator) around another).
/// Without it every command refuses to start, with exit status 2 and what to write.
pub fn main(scenarios: impl IntoIterator<Item = &'static Scenario>) -> ExitCode {
    allocator::keep_freed_memory();
    let cli = Cli::parse();
    let catalogue = match Catalogue::new(scenarios) {
        Ok(catalogue) => catalogue,
        Err(message) => return usage_error(&message),
    };
    if !heap::counted() {
        return usage_error(
            "this program's allocator does not count each thread's heap, which `--memory` \
             needs: write `#[global_allocator] static ALLOCATOR: zklab::cli::Allocator = \
             zklab::cli::Allocator::NEW;` beside its `main`",
        );
    }
    runner::quiet_panics_inside_seeds();
    // `RUST_LOG` prints every trace event as it happens, stamped with the sim time.
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing::subscriber::set_global_default(crate::sim::log::subscriber());
    }
    let status = match cli.command {
        Command::List(args) => list_command::run(&args, &catalogue),
        Command::Run(args) => run_command::run(&args, &catalogue),
        Command::Merge(args) => merge_command::run(&args, &catalogue),
        Command::Check(args) => check_command::run(&args, &catalogue),
        Command::Conform(args) => conform_command::run(&args),
        Command::Real(args) => real_command::run(&args, &catalogue),
        Command::Serve(args) => serve_command::run(&args),
        Command::Wild(args) => wild_command::run(&args),
        Command::Shell { zk } => shell_command::run_stdio(zk.as_deref()),
        Command::Replay(args) => replay_command::run(&args, &catalogue),
        Command::Shrink(args) => shrink_command::run(&args, &catalogue),
    };
    stdout::finish(status)
}

/// Reports a real server the command could not work with; exit status 2, as for bad usage:
/// nothing was judged.
fn unusable_server(hosts: &str, error: crate::recipes::client::ZkError) -> ExitCode {
    usage_error(&format!(
        "the ZooKeeper at {hosts} could not be used: {error}"
    ))
}

/// The command that replays the schedule in `file`, naming this program as it was invoked.
pub(crate) fn script_replay_command(file: &str) -> String {
    let program = std::env::args()
        .next()
        .unwrap_or_else(|| "zklab".to_owned());
    format!(
        "{} replay --script {}",
        shell_quoted(&program),
        shell_quoted(file)
    )
}

/// Prints a usage error; exit status 2.
pub(crate) fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}
