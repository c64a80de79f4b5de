//! `zklab shrink`: a failing seed cut down to its story, written to a schedule file that
//! `zklab replay --script FILE` runs.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::regressions;
use crate::scenarios::shrink::{self, Size};
use clap::Args;
use serde::Serialize;

use crate::cli::memory_budget;
use crate::cli::progress::spinner;
use crate::cli::replay_command::tell;
use crate::cli::{script_replay_command, usage_error, Setup};

/// What `zklab shrink` takes.
#[derive(Args)]
pub struct ShrinkArgs {
    /// The scenario (see `list`).
    scenario: String,
    /// The failing seed (0 to 18446744073709551615).
    #[arg(long)]
    seed: u64,
    /// The options the seed failed with.
    #[command(flatten)]
    setup: Setup,
    /// Write the shrunk schedule to FILE (default: a file of its own in
    /// `zklab-regressions/`, which `run` replays before its seeds).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also draw the shrunk run into FILE as an SVG picture.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Also draw the shrunk run into FILE as an HTML page holding that picture.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Print JSON instead of the story: the sizes before and after, the runs, the time, the
    /// schedule's file and its replay command.
    #[arg(long, conflicts_with_all = ["svg", "html"])]
    json: bool,
}

/// What `shrink --json` prints.
#[derive(Serialize)]
struct ShrinkSummary {
    scenario: String,
    seed: u64,
    kind: String,
    original: SizeSummary,
    shrunk: SizeSummary,
    runs: u64,
    seconds: f64,
    file: String,
    replay: String,
}

/// A [`Size`] in JSON.
#[derive(Serialize)]
struct SizeSummary {
    faults: usize,
    clients: u32,
    rounds: u32,
    servers: usize,
    lines: usize,
}

impl From<Size> for SizeSummary {
    fn from(size: Size) -> Self {
        SizeSummary {
            faults: size.faults,
            clients: size.clients,
            rounds: size.rounds,
            servers: size.servers,
            lines: size.lines,
        }
    }
}

/// Runs `zklab shrink`: exit 1 with the shrunk story when the seed fails, 2 when it holds,
/// cannot be shrunk, or the schedule cannot be written.
pub fn run(args: &ShrinkArgs, catalogue: &Catalogue) -> ExitCode {
    let found = catalogue.find_fitting(&args.scenario, args.setup.clients as usize);
    let (scenario, mut options) = match found.and_then(|found| Ok((found, args.setup.options()?))) {
        Ok(usable) => usable,
        Err(message) => return usage_error(&message),
    };
    // A seed too large for the budget is refused; those that fit run whole, since a seed
    // stopped for memory would read as one that holds.
    let memory = args.setup.memory;
    if let Err(message) = memory_budget::fit(scenario, args.seed, &mut options, 1, memory) {
        return usage_error(&message);
    }
    options.memory_budget = None;
    let spinner = spinner(args.json);
    let progress = |size: &Size| {
        spinner.set_message(format!("shrinking: {}", described(size)));
        spinner.tick();
    };
    let shrunk = shrink::shrink(scenario, args.seed, &options, &progress);
    spinner.finish_and_clear();
    let shrunk = match shrunk {
        Ok(shrunk) => shrunk,
        Err(message) => return usage_error(&message),
    };
    let path = args
        .out
        .clone()
        .unwrap_or_else(|| regressions::default_path(scenario.name, args.seed));
    if let Err(message) = regressions::save(&path, &shrunk.schedule) {
        return usage_error(&message);
    }
    let file = path.display().to_string();
    if args.json {
        let summary = ShrinkSummary {
            scenario: scenario.name.to_owned(),
            seed: args.seed,
            kind: shrunk.property.violation.to_owned(),
            original: shrunk.original.into(),
            shrunk: shrunk.shrunk.into(),
            runs: shrunk.runs,
            seconds: shrunk.elapsed.as_secs_f64(),
            replay: script_replay_command(&file),
            file,
        };
        let json = serde_json::to_string(&summary).expect("a summary is plain data");
        outln!("{json}");
        return ExitCode::from(1);
    }
    outln!(
        "-- {} seed {}: {}",
        scenario.name,
        args.seed,
        shrunk.property.violation
    );
    outln!("-- from {}", described(&shrunk.original));
    outln!(
        "-- to   {} ({} runs, {:.2} s)",
        described(&shrunk.shrunk),
        shrunk.runs,
        shrunk.elapsed.as_secs_f64()
    );
    for line in shrunk.schedule.to_text().lines() {
        outln!("-- {line}");
    }
    let title = format!("{} shrunk from seed {}", scenario.name, args.seed);
    let status = tell(&title, shrunk.report, true, None, &args.svg, &args.html);
    outln!("-- saved to {file}");
    outln!("-- replay: {}", script_replay_command(&file));
    status
}

/// `3 faults, 2 clients, 1 round, 1 server, 40 lines`.
fn described(size: &Size) -> String {
    let plural = |n: usize, one: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    };
    [
        plural(size.faults, "fault"),
        plural(size.clients as usize, "client"),
        plural(size.rounds as usize, "round"),
        plural(size.servers, "server"),
        plural(size.lines, "line"),
    ]
    .join(", ")
}
