//! `zklab replay`: one seed's whole story, as text with a legend of its symbols, and as a
//! picture; or the story of a schedule that `zklab shrink` wrote.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::regressions;
use crate::scenarios::runner::{self, RunOptions, SeedReport};
use crate::scenarios::scenario::Scenario;
use crate::sim::picture::Timeline;
use crate::sim::trace::LEGEND;
use clap::Args;

use crate::cli::memory_budget;
use crate::cli::{usage_error, Setup};

/// What `zklab replay` takes.
#[derive(Args)]
pub struct ReplayArgs {
    /// The scenario (see `list`).
    #[arg(required_unless_present = "script")]
    scenario: Option<String>,
    /// The seed (0 to 18446744073709551615).
    #[arg(long, required_unless_present = "script")]
    seed: Option<u64>,
    #[command(flatten)]
    setup: Setup,
    /// Run the schedule in FILE (written by `shrink`): it gives the scenario, the seed,
    /// the workload and every fault, so none of those is given here.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["scenario", "seed", "clients", "rounds", "faults", "servers"]
    )]
    script: Option<PathBuf>,
    /// Stop the story at the first violation.
    #[arg(long)]
    until_violation: bool,
    /// Show only this client's lines (0 to clients - 1).
    #[arg(long, value_name = "N")]
    client: Option<u32>,
    /// Also draw the run into FILE as an SVG picture: a sequence diagram with a lane per server
    /// and per client, holds as bars, faults and the violation marked.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Also draw the run into FILE as an HTML page holding that picture.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Runs `zklab replay`: exit 0 when every property holds, 1 when one is violated, 2 on bad usage.
pub fn run(args: &ReplayArgs, catalogue: &Catalogue) -> ExitCode {
    let (scenario, seed, mut options) = match what_to_run(args, catalogue) {
        Ok(run) => run,
        Err(message) => return usage_error(&message),
    };
    if let Some(client) = args.client.filter(|&client| client >= options.clients) {
        return usage_error(&format!(
            "--client {client}: the run has clients 0 to {}",
            options.clients - 1
        ));
    }
    let memory = args.setup.memory;
    if let Err(message) = memory_budget::fit(scenario, seed, &mut options, 1, memory) {
        return usage_error(&message);
    }
    let report = runner::run_seed(scenario, seed, &options);
    if report.over_budget {
        return usage_error(&format!(
            "{} seed {seed} held more than the memory budget, {} (--memory), and was stopped \
             at {:.1} s of sim time; raise --memory to replay it",
            scenario.name,
            memory_budget::shown(memory),
            report
                .trace
                .entries()
                .last()
                .map_or(0.0, |entry| entry.at.as_secs_f64())
        ));
    }
    let title = format!("{} seed {seed}", scenario.name);
    let abandoned = report.abandoned_order.clone();
    let told = tell(
        &title,
        report,
        args.until_violation,
        args.client,
        &args.svg,
        &args.html,
    );
    match abandoned {
        // Whatever the free run found after, the schedule itself is what is wrong.
        Some(why) => usage_error(&format!(
            "the schedule's forced order could not be followed: {why}. What the run did after \
             is no replay of it; the order does not describe a run of {} as it is now",
            scenario.name
        )),
        None => told,
    }
}

/// The scenario of `catalogue`, seed and options to run: from the schedule file, or from the
/// arguments.
fn what_to_run(
    args: &ReplayArgs,
    catalogue: &Catalogue,
) -> Result<(&'static Scenario, u64, RunOptions), String> {
    let Some(path) = &args.script else {
        let (Some(scenario), Some(seed)) = (&args.scenario, args.seed) else {
            return Err("give a scenario and --seed, or --script FILE".to_owned());
        };
        let options = args.setup.options()?;
        let scenario = catalogue.find_fitting(scenario, options.clients as usize)?;
        return Ok((scenario, seed, options));
    };
    let schedule = regressions::read(path)?;
    let in_file = |error: String| format!("{}: {error}", path.display());
    let scenario = schedule.find_scenario(catalogue).map_err(in_file)?;
    Ok((scenario, schedule.seed, schedule.options()))
}

/// Prints a run's story (up to its first violation, or one client's lines, if asked) with the
/// legend, draws it if asked, and gives the exit status: 0 when every property holds, 1 when
/// one is violated, 2 when a picture cannot be written.
pub fn tell(
    title: &str,
    report: SeedReport,
    until_violation: bool,
    client: Option<u32>,
    svg: &Option<PathBuf>,
    html: &Option<PathBuf>,
) -> ExitCode {
    let (events, digest) = (report.trace.entries().len(), report.trace.digest());
    let mut shown = report.trace;
    if let Some(first) = report.violations.first().filter(|_| until_violation) {
        shown.retain(|entry| entry.at <= first.at);
    }
    if let Some(client) = client {
        shown.retain(|entry| entry.event.actors().0 == Some(client));
    }
    let timeline = || Timeline::of_trace(title, &shown, &report.violations);
    if let Err(message) = write_pictures(timeline, svg, html) {
        return usage_error(&message);
    }
    for (symbol, meaning) in LEGEND {
        outln!("-- {symbol} {meaning}");
    }
    out!("{}", shown.render());
    let part = match shown.entries().len() {
        all if all == events => String::new(),
        some => format!(" ({some} shown)"),
    };
    outln!("-- {title}: {events} events{part}, digest {digest:016x}",);
    if report.violations.is_empty() {
        outln!("-- every property holds");
        ExitCode::SUCCESS
    } else {
        for violation in &report.violations {
            outln!("-- VIOLATION {violation}");
        }
        ExitCode::from(1)
    }
}

/// Draws the timeline `timeline` makes as an SVG picture into `svg` and as an HTML page into
/// `html`, each if asked for (the timeline is made only then), or says why it could not.
pub fn write_pictures(
    timeline: impl FnOnce() -> Timeline,
    svg: &Option<PathBuf>,
    html: &Option<PathBuf>,
) -> Result<(), String> {
    if svg.is_none() && html.is_none() {
        return Ok(());
    }
    let timeline = timeline();
    let write = |path: &Path, picture: String| {
        std::fs::write(path, picture)
            .map_err(|error| format!("cannot write the picture to {}: {error}", path.display()))
    };
    if let Some(path) = svg {
        write(path, timeline.svg())?;
    }
    if let Some(path) = html {
        write(path, timeline.html())?;
    }
    Ok(())
}
