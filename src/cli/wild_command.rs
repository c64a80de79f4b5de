//! `zklab wild`: a library's recipe, run by its driver against `zklab serve` seed after seed
//! under a fault profile, and judged by what its clients claim.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::interrupt;
use crate::sim::wire_service::AnchoredFault;
use crate::wild::{self, Driver, Profile, WildRun, CLIENTS, ROUNDS};

/// `zklab wild`'s arguments.
#[derive(clap::Args, Debug)]
pub struct WildArgs {
    /// The driver: kazoo-lock, kazoo-semaphore, kazoo-election, kazoo-own-lock, or the positive
    /// control kazoo-planted-lock.
    #[arg(value_parser = wild::driver_named)]
    driver: Driver,
    /// How many runs, each on a seed of its own.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// The first run's seed; the next runs take the seeds after it.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// The fault profile: none; loss (lost connections, replies and create replies,
    /// reordering); expiry (session expiries, partitions); ensemble (3 servers: stale reads,
    /// server crashes, leader changes); all (3 servers, every kind).
    #[arg(long, default_value = "loss", value_parser = wild::profile_named)]
    faults: Profile,
    /// Strike only the faults of this schedule (the `schedule.txt` a run wrote), on the
    /// profile's servers, in place of the profile's random ones.
    #[arg(long)]
    script: Option<PathBuf>,
    /// Where each run's trace, picture, schedule and driver output go (a folder per seed).
    #[arg(long, default_value = "zklab-wild")]
    out: PathBuf,
}

/// Runs and judges: exit 0 when no run broke a property, 1 when one did, 2 on bad usage or a
/// driver that cannot run.
pub fn run(args: &WildArgs) -> ExitCode {
    let schedule = match &args.script {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Err(error) => {
                let why = format!("cannot read {}: {error}", path.display());
                return crate::cli::usage_error(&why);
            }
            Ok(text) => match AnchoredFault::parse_schedule(&text) {
                Ok(schedule) => Some(schedule),
                Err(why) => return crate::cli::usage_error(&format!("{}: {why}", path.display())),
            },
        },
    };
    let strikes = schedule.iter().flatten().map(|fault| fault.kind);
    for kind in strikes {
        if let Err(why) = AnchoredFault::strikes_on(kind, args.faults.servers) {
            return crate::cli::usage_error(&why);
        }
    }
    let program = match wild::write_programs(&args.out) {
        Ok(program) => program,
        Err(error) => {
            let why = format!("cannot write to {}: {error}", args.out.display());
            return crate::cli::usage_error(&why);
        }
    };
    interrupt::stop_on_ctrl_c();
    let (driver, profile) = (args.driver, args.faults);
    let faults = match &args.script {
        Some(path) => format!("the schedule {}", path.display()),
        None => format!("`{}`", profile.faults),
    };
    outln!(
        "zklab wild {}: {}, {} clients x {ROUNDS} rounds, {} server(s), faults {faults}",
        driver.name,
        driver.about,
        CLIENTS,
        profile.servers
    );
    let mut runs: Vec<(u64, WildRun)> = Vec::new();
    for seed in (args.first_seed..).take(args.runs as usize) {
        if interrupt::interrupted() {
            outln!("interrupted: {} of {} runs done", runs.len(), args.runs);
            break;
        }
        let dir = args.out.join(format!("seed-{seed}"));
        match wild::judge_run(driver, &program, profile, seed, schedule.clone(), &dir) {
            Ok(run) => {
                outln!("{}", run_line(seed, &run));
                runs.push((seed, run));
            }
            Err(error) => return crate::cli::usage_error(&format!("seed {seed}: {error}")),
        }
    }
    summary(driver, &runs, args)
}

/// One run's line: its seed, its rounds, its faults and its violations.
fn run_line(seed: u64, run: &WildRun) -> String {
    let struck: Vec<String> = (run.report.counts.iter())
        .filter(|(_, count)| *count > 0)
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    let struck = if struck.is_empty() {
        "none".to_owned()
    } else {
        struck.join(", ")
    };
    let verdict = match run.report.violations.first() {
        None => "held".to_owned(),
        Some(violation) => format!("VIOLATION {violation}"),
    };
    format!(
        "seed {seed}: {}/{} rounds, {} claims, faults struck: {struck}; {verdict}",
        run.rounds,
        CLIENTS * ROUNDS,
        run.report.claims
    )
}

/// The runs added up, the first violation's files and the command that strikes it again.
fn summary(driver: Driver, runs: &[(u64, WildRun)], args: &WildArgs) -> ExitCode {
    let violating: Vec<&(u64, WildRun)> = (runs.iter())
        .filter(|(_, run)| !run.report.violations.is_empty())
        .collect();
    let finished = (runs.iter())
        .filter(|(_, run)| run.rounds == CLIENTS * ROUNDS)
        .count();
    outln!(
        "{} runs, {} with a violation, {} with every round done",
        runs.len(),
        violating.len(),
        finished
    );
    if let Some((seed, run)) = violating.first() {
        outln!(
            "first violation: seed {seed}, its files in {}",
            run.dir.display()
        );
        outln!(
            "strike its faults again: zklab wild {} --faults {} --script {} --runs 5 --out {}",
            driver.name,
            args.faults.name,
            run.report.schedule.display(),
            args.out.join("again").display()
        );
    } else if driver.planted {
        outln!("the planted mistake was not caught in these runs");
    }
    if violating.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
