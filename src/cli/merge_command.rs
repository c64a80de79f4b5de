//! `zklab merge`: join the `run --json` outputs of a sweep's shards into the report of the
//! whole, with every failing seed and its replay command.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde::Deserialize;

use crate::cli::run_command::{print_json, print_summary};
use crate::cli::sweep_summary::{merge, SweepSummary};
use crate::cli::usage_error;
use crate::scenarios::catalogue::Catalogue;

/// What `zklab merge` takes.
#[derive(Args)]
pub struct MergeArgs {
    /// The files `run --json` wrote, one per shard (a file may hold the array `run all` prints).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// One file: a sweep, or the sweeps of `run all`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    One(Box<SweepSummary>),
    Many(Vec<SweepSummary>),
}

/// Runs `zklab merge`: exit 0 when no seed failed, 1 when one did, 2 on a file it cannot use.
pub fn run(args: &MergeArgs, catalogue: &Catalogue) -> ExitCode {
    let mut parts = Vec::new();
    for file in &args.files {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(error) => return usage_error(&format!("{}: {error}", file.display())),
        };
        match serde_json::from_str::<Written>(&text) {
            Ok(Written::One(sweep)) => parts.push(*sweep),
            Ok(Written::Many(sweeps)) if sweeps.is_empty() => {
                return usage_error(&format!("{}: holds no sweep", file.display()))
            }
            Ok(Written::Many(sweeps)) => parts.extend(sweeps),
            Err(error) => {
                return usage_error(&format!(
                    "{}: not the JSON of `run --json`: {error}",
                    file.display()
                ))
            }
        }
    }
    let merged = match merge(parts, catalogue) {
        Ok(merged) => merged,
        Err(message) => return usage_error(&message),
    };
    if args.json {
        print_json(&merged);
    } else {
        for sweep in &merged {
            print_summary(sweep);
            for failure in sweep.failures.iter().skip(1) {
                outln!("failing seed {}: {}", failure.seed, failure.violation);
                outln!("  replay: {}", failure.replay);
            }
        }
    }
    if merged.iter().any(SweepSummary::failed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
