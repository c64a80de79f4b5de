//! `zklab check`: model-check a recipe and report each property as holds or fails, with the
//! counterexample (by iterative deepening) as trace lines and a Mermaid diagram.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::models::budget::Budget;
use crate::models::check::{CheckOptions, CheckReport};
use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::schedule::Schedule;
use crate::scenarios::{regressions, runner};
use clap::Args;
use serde::Serialize;

use crate::cli::progress::spinner;
use crate::cli::replay_command::write_pictures;
use crate::cli::{script_replay_command, usage_error};

/// Options of `zklab check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The scenario whose model to check (see `list`).
    model: String,
    /// Number of clients, 1 to 5.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=5))]
    clients: u8,
    /// Faults: `none`, `all`, or a comma-separated list of connection-loss, lost-reply (of any
    /// write; lost-create-reply names the same), session-expiry, pause (a timer goes off before
    /// the world is quiet).
    #[arg(long, default_value = "all")]
    faults: String,
    /// How many of each chosen fault may strike in one execution, 1 to 3.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=3))]
    budget: u8,
    /// Checker threads, 1 to 256 (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: Option<u64>,
    /// Explore every state rather than one per permutation of clients.
    #[arg(long)]
    no_symmetry: bool,
    /// Explore every interleaving of a client's quiet steps (replies, events and reconnections
    /// that only move its own machine) with the rest, rather than one.
    #[arg(long)]
    no_partial_order: bool,
    /// Stamp real zxids even for a recipe that reads none, rather than forgetting them (then
    /// states that differ only by zxids count as many).
    #[arg(long)]
    keep_zxids: bool,
    /// Stop after this many seconds (1 or more); an incomplete search proves nothing (exit
    /// status 3).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Draw the first failing property's counterexample into FILE as an SVG picture (nothing
    /// is written when every property holds).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Draw it into FILE as an HTML page holding that picture.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Runs `zklab check`.
pub fn run(args: &CheckArgs, catalogue: &Catalogue) -> ExitCode {
    let found = catalogue.find_fitting(&args.model, usize::from(args.clients));
    let model = match found {
        Ok(model) => model,
        Err(message) => return usage_error(&message),
    };
    let budget = match Budget::parse(&args.faults, args.budget) {
        Ok(budget) => budget,
        Err(message) => return usage_error(&message),
    };
    let threads = args
        .threads
        .map_or_else(runner::default_threads, |threads| threads as usize);
    let options = CheckOptions {
        clients: usize::from(args.clients),
        budget,
        threads,
        symmetry: !args.no_symmetry,
        partial_order: !args.no_partial_order,
        forget_zxids: !args.keep_zxids,
        timeout: args.timeout.map(Duration::from_secs),
    };
    let status = spinner(args.json);
    let checked = model.kit.check(&options, &|states, unique| {
        status.set_message(format!(
            "checking {}: {states} states, {unique} unique",
            model.name
        ));
        status.tick();
    });
    status.finish_and_clear();
    let report = match checked {
        Ok(report) => report,
        Err(refused) => return usage_error(&refused.to_string()),
    };
    if let Some(failing) = report.properties.iter().find(|property| !property.holds) {
        let timeline = || failing.timeline.clone();
        if let Err(message) = write_pictures(timeline, &args.svg, &args.html) {
            return usage_error(&message);
        }
    }
    let mut in_simulator = Vec::new();
    for property in report.properties.iter().filter(|property| !property.holds) {
        let schedule = Schedule::of_counterexample(model.name, options.clients, property);
        let path = Path::new(COUNTEREXAMPLES).join(format!(
            "{}-{}c-{}.schedule",
            model.name,
            options.clients,
            property.name.replace(' ', "-")
        ));
        if let Err(message) = regressions::save(&path, &schedule) {
            return usage_error(&message);
        }
        in_simulator.push(script_replay_command(&path.display().to_string()));
    }
    if args.json {
        outln!(
            "{}",
            report_json(model.name, &options, &report, &in_simulator)
        );
    } else {
        print_report(model.name, &options, &report, &in_simulator);
    }
    if report.properties.iter().any(|property| !property.holds) {
        ExitCode::from(1)
    } else if !report.complete {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

fn describe_budget(budget: &Budget) -> String {
    format!(
        "connection-loss={} lost-reply={} session-expiry={} pause={}",
        budget.connection_loss, budget.lost_reply, budget.session_expiry, budget.pause
    )
}

/// Where `check` writes each counterexample as a schedule the simulator replays, and `real` the
/// trace of a run that broke a property.
pub(crate) const COUNTEREXAMPLES: &str = "zklab-counterexamples";

fn print_report(name: &str, options: &CheckOptions, report: &CheckReport, in_simulator: &[String]) {
    let symmetry = match (report.symmetry, options.symmetry) {
        (true, _) => "on",
        (false, true) => "off (the machine is not symmetric under renaming sessions)",
        (false, false) => "off",
    };
    let partial_order = if options.partial_order { "on" } else { "off" };
    let zxids = match (report.zxids_forgotten, options.forget_zxids) {
        (true, _) => "forgotten",
        (false, true) => "kept (the recipe reads them)",
        (false, false) => "kept",
    };
    outln!(
        "{name}: {} clients, faults {}, symmetry {symmetry}, partial-order reduction {partial_order}, zxids {zxids}",
        options.clients,
        describe_budget(&options.budget)
    );
    outln!(
        "{} states, {} unique, max depth {}, {:.2} s",
        report.states,
        report.unique_states,
        report.max_depth,
        report.elapsed.as_secs_f64()
    );
    if !report.complete {
        outln!("INCOMPLETE: the search stopped at the timeout; properties without a counterexample are unrefuted, not proven");
    }
    let verdict = if report.complete {
        "holds"
    } else {
        "unrefuted"
    };
    let mut in_simulator = in_simulator.iter();
    for property in &report.properties {
        if property.holds {
            outln!("  {verdict:<9} {}", property.name);
            continue;
        }
        outln!(
            "  FAILS  {}: counterexample ({} steps, {}):",
            property.name,
            property.counterexample.len(),
            if property.deepened {
                "by iterative deepening"
            } else {
                "the exhaustive search's path: deepening would cost too much"
            }
        );
        for (i, step) in property.counterexample.iter().enumerate() {
            outln!("    {:>3}. {step}", i + 1);
        }
        outln!("  as a Mermaid sequence diagram:");
        for line in property.mermaid.lines() {
            outln!("    {line}");
        }
        if let Some(command) = in_simulator.next() {
            outln!("  replay it on the recipe's code in the simulator: {command}");
        }
    }
}

/// A check as `--json` prints it.
#[derive(Serialize)]
struct CheckJson<'r> {
    model: &'r str,
    clients: usize,
    symmetry: bool,
    partial_order: bool,
    zxids_forgotten: bool,
    faults: BudgetJson,
    states: usize,
    unique_states: usize,
    max_depth: usize,
    seconds: f64,
    complete: bool,
    properties: Vec<PropertyJson<'r>>,
}

/// The faults each execution may take, by kind.
#[derive(Serialize)]
pub(crate) struct BudgetJson {
    connection_loss: u8,
    lost_reply: u8,
    session_expiry: u8,
    pause: u8,
}

impl From<&Budget> for BudgetJson {
    fn from(budget: &Budget) -> Self {
        BudgetJson {
            connection_loss: budget.connection_loss,
            lost_reply: budget.lost_reply,
            session_expiry: budget.session_expiry,
            pause: budget.pause,
        }
    }
}

/// One property's verdict, with its counterexample when it fails.
#[derive(Serialize)]
struct PropertyJson<'r> {
    name: &'r str,
    holds: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    counterexample: Option<&'r [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deepened: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mermaid: Option<&'r str>,
    /// The command that forces the counterexample on the recipe's code in the simulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    replay_in_simulator: Option<&'r str>,
}

fn report_json(
    name: &str,
    options: &CheckOptions,
    report: &CheckReport,
    in_simulator: &[String],
) -> String {
    let mut in_simulator = in_simulator.iter();
    let properties = report
        .properties
        .iter()
        .map(|property| {
            let fails = !property.holds;
            PropertyJson {
                name: property.name,
                holds: property.holds,
                counterexample: fails.then_some(&property.counterexample[..]),
                deepened: fails.then_some(property.deepened),
                mermaid: fails.then_some(&property.mermaid[..]),
                replay_in_simulator: fails
                    .then(|| in_simulator.next().map(String::as_str))
                    .flatten(),
            }
        })
        .collect();
    let json = CheckJson {
        model: name,
        clients: options.clients,
        symmetry: report.symmetry,
        partial_order: options.partial_order,
        zxids_forgotten: report.zxids_forgotten,
        faults: BudgetJson::from(&options.budget),
        states: report.states,
        unique_states: report.unique_states,
        max_depth: report.max_depth,
        seconds: report.elapsed.as_secs_f64(),
        complete: report.complete,
        properties,
    };
    serde_json::to_string(&json).expect("a report is plain data")
}
