//! `zklab run`: sweep a scenario (or every one) over many seeds, whole or one shard of it.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::ops::ControlFlow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use crate::scenarios::catalogue::{Catalogue, EVERY_SCENARIO};
use crate::scenarios::runner::{RunOptions, SweepReport};
use crate::scenarios::scenario::Scenario;
use crate::scenarios::{regressions, runner};
use crate::sim::fault::FaultKind;
use clap::Args;

use crate::cli::interrupt;
use crate::cli::memory_budget;
use crate::cli::progress::bar;
use crate::cli::sweep_summary::{json_key, shard_of, Regression, SweepSummary};
use crate::cli::{script_replay_command, usage_error, Setup};

/// What `zklab run` takes.
#[derive(Args)]
pub struct RunArgs {
    /// The scenario (see `list`), or `all` for every scenario that is not a known bug.
    scenario: String,
    /// How many seeds (1 or more).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
    /// The first seed (the last one, start + seeds - 1, must stay below 18446744073709551615).
    #[arg(long, default_value_t = 0)]
    start_seed: u64,
    /// Run only shard K of N of the seeds (K from 1 to N): contiguous, near-equal parts, so that
    /// N machines run a sweep between them; `zklab merge` joins their `--json` outputs.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,
    /// Worker threads, 1 to 256 (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: Option<u64>,
    /// Print JSON instead of text: one object, or an array of them for `all`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    setup: Setup,
    /// Replay the scenario's schedules kept in DIR (see `shrink`) before the seeds; a
    /// sweep split in shards replays them in its first.
    #[arg(long, value_name = "DIR", default_value = regressions::DIRECTORY)]
    regressions: PathBuf,
    /// Write every seed's trace digest to FILE, one `scenario seed digest` line each, in seed
    /// order: two builds that write the same file ran every seed the same, byte for byte.
    #[arg(long, value_name = "FILE")]
    digests: Option<PathBuf>,
    /// Stop at the first failing seed: `--max-failures 1`. The kept schedules replayed first
    /// are reported whatever they show.
    #[arg(long, conflicts_with = "max_failures")]
    fail_fast: bool,
    /// Stop once N seeds have failed, counted over every scenario run. Seeds already under way
    /// on other threads finish, and are reported too.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_failures: Option<u64>,
}

/// `K/N` with 1 <= K <= N.
fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if (1..=n).contains(&k) => Ok((k, n)),
        _ => Err(format!(
            "`{text}` is not a shard: write K/N, with K from 1 to N (2/8 is the second of eight)"
        )),
    }
}

/// The scenarios of `catalogue` a `run` argument names.
fn select(name: &str, catalogue: &Catalogue) -> Result<Vec<&'static Scenario>, String> {
    if name != EVERY_SCENARIO {
        return catalogue.find(name).map(|scenario| vec![scenario]);
    }
    let recipes: Vec<&'static Scenario> = catalogue
        .scenarios()
        .filter(|scenario| scenario.bug.is_none())
        .collect();
    if recipes.is_empty() {
        return Err(format!(
            "`run {EVERY_SCENARIO}` runs every scenario that is not a known bug, and each here is \
             one: name it"
        ));
    }
    Ok(recipes)
}

/// Runs `zklab run`: exit 0 when every seed holds, 1 on a violation, 2 on bad usage.
pub fn run(args: &RunArgs, catalogue: &Catalogue) -> ExitCode {
    let fitting = select(&args.scenario, catalogue).and_then(|scenarios| {
        for scenario in &scenarios {
            scenario.fits(args.setup.clients as usize)?;
        }
        Ok(scenarios)
    });
    let (scenarios, options) = match fitting.and_then(|found| Ok((found, args.setup.options()?))) {
        Ok(usable) => usable,
        Err(message) => return usage_error(&message),
    };
    let Some(end) = args.start_seed.checked_add(args.seeds) else {
        return usage_error(&format!(
            "--start-seed {} --seeds {}: the seeds would pass {}, the last seed",
            args.start_seed,
            args.seeds,
            u64::MAX
        ));
    };
    let seeds: Range<u64> = match args.shard {
        Some((k, n)) => shard_of(args.start_seed..end, k, n),
        None => args.start_seed..end,
    };
    let shard = args.shard.map(|(k, n)| format!("{k}/{n}"));
    let threads = args
        .threads
        .map_or_else(runner::default_threads, |threads| threads as usize);
    // Every scenario is fitted to the memory budget before any runs.
    let count = seeds.end - seeds.start;
    let threads = threads
        .min(usize::try_from(count).unwrap_or(usize::MAX))
        .max(1);
    let mut fitted = Vec::new();
    for scenario in scenarios {
        let mut options = options.clone();
        let memory = args.setup.memory;
        let fit = match memory_budget::fit(scenario, seeds.start, &mut options, threads, memory) {
            Ok(fit) => fit,
            Err(message) => return usage_error(&message),
        };
        if fit.threads < threads {
            eprintln!(
                "{}: a seed would take about {}, so {} run at once, not {threads}, within --memory {}",
                scenario.name,
                memory_budget::shown(fit.need.unwrap_or_default()),
                fit.threads,
                memory_budget::shown(memory)
            );
        }
        fitted.push((scenario, options, fit.threads));
    }
    // Opened before the sweep, so that a path it cannot write is told at once.
    let digests_file = match args
        .digests
        .as_deref()
        .map(|path| (File::create(path), path))
    {
        Some((Ok(file), path)) => Some((file, path)),
        Some((Err(error), path)) => {
            return usage_error(&format!("cannot write {}: {error}", path.display()))
        }
        None => None,
    };
    let max_failures = match args.fail_fast {
        true => Some(1),
        false => args.max_failures,
    };
    let limit_reached = |failures: u64| max_failures.is_some_and(|limit| failures >= limit);
    interrupt::stop_on_ctrl_c();
    let mut failures_so_far = 0;
    let mut over_budget = false;
    let mut summaries = Vec::new();
    let mut digest_lines = String::new();
    let replays_kept = args.shard.is_none_or(|(k, _)| k == 1);
    let scenario_count = fitted.len();
    for (scenario, options, threads) in fitted {
        if interrupt::interrupted() || limit_reached(failures_so_far) {
            // Named in the report, so that a stopped `run all` says what it left undone.
            let not_run = SweepSummary {
                stopped: Some(format!("{NOT_RUN} {}", asked_to_stop(args))),
                ..SweepSummary::new(
                    scenario,
                    &SweepReport::default(),
                    seeds.clone(),
                    shard.clone(),
                    &args.setup,
                )
            };
            if !args.json {
                outln!(
                    "{}: {}",
                    scenario.name,
                    not_run.stopped.as_deref().unwrap_or_default()
                );
            }
            summaries.push(not_run);
            continue;
        }
        let kept = match replays_kept {
            true => replay_kept(&args.regressions, scenario, catalogue),
            false => Ok(Vec::new()),
        };
        let kept = match kept {
            Ok(kept) => kept,
            Err(message) => return usage_error(&message),
        };
        let status = bar(count, "seeds", args.json);
        let digests = Mutex::new(Vec::new());
        let report = runner::sweep(
            scenario,
            seeds.start,
            count,
            &options,
            threads,
            &|report, done, failures| {
                if args.digests.is_some() {
                    let digest = (report.seed, report.trace.digest());
                    digests.lock().expect("no panic holds it").push(digest);
                }
                status.set_position(done);
                if interrupt::interrupted() {
                    status.set_message("stopping after the seeds under way (Ctrl-C quits now)");
                    return ControlFlow::Break(());
                }
                status.set_message(format!("{failures} failing"));
                match limit_reached(failures_so_far + failures) {
                    true => ControlFlow::Break(()),
                    false => ControlFlow::Continue(()),
                }
            },
        );
        status.finish_and_clear();
        failures_so_far += report.failures.len() as u64;
        let mut digests = digests.into_inner().expect("no panic holds it");
        digests.sort_unstable();
        for (seed, digest) in digests {
            let _ = writeln!(digest_lines, "{} {seed} {digest:016x}", scenario.name);
        }
        let mut summary = SweepSummary {
            regressions: kept,
            ..SweepSummary::new(scenario, &report, seeds.clone(), shard.clone(), &args.setup)
        };
        if report.seeds < count {
            summary.stopped = Some(why_stopped(args, &report, count, &options));
        }
        over_budget |= !report.left_out.is_empty();
        if !args.json {
            print_summary(&summary);
        }
        summaries.push(summary);
    }
    if let Some((mut file, path)) = digests_file {
        if let Err(error) = file.write_all(digest_lines.as_bytes()) {
            return usage_error(&format!("cannot write {}: {error}", path.display()));
        }
    }
    if args.json {
        print_json(&summaries);
    } else if scenario_count > 1 {
        print_total(&summaries, scenario_count);
    }
    if over_budget {
        return ExitCode::from(2);
    }
    let failed = summaries.iter().any(SweepSummary::failed);
    interrupt::status_of_run(ExitCode::from(u8::from(failed)))
}

/// Why a sweep ran only some of its `count` seeds.
fn why_stopped(args: &RunArgs, report: &SweepReport, count: u64, options: &RunOptions) -> String {
    let cause = match report.left_out.first() {
        Some(seed) => format!(
            "seed {seed} was stopped unjudged, its heap past its share of the memory budget, {} \
             (run fewer --threads, or raise --memory),",
            memory_budget::shown(options.memory_budget.unwrap_or_default())
        ),
        None => asked_to_stop(args),
    };
    format!("{cause} after {} of {count} seeds", report.seeds)
}

/// Why the run was asked to stop: Ctrl-C, or its limit on failures.
fn asked_to_stop(args: &RunArgs) -> String {
    if interrupt::interrupted() {
        "interrupted (Ctrl-C)".to_owned()
    } else if args.fail_fast {
        "stopped at the first failure (--fail-fast)".to_owned()
    } else {
        let limit = args.max_failures.unwrap_or_default();
        format!("stopped at {limit} failures (--max-failures {limit})")
    }
}

/// The `stopped` of a scenario the run never started.
const NOT_RUN: &str = "not run:";

/// The last line of `run all`: the scenarios swept and their seeds, and which failed.
fn print_total(summaries: &[SweepSummary], scenario_count: usize) {
    let seeds: u64 = summaries.iter().map(|summary| summary.seeds).sum();
    let swept = summaries.iter().filter(|summary| {
        let stopped = summary.stopped.as_deref().unwrap_or_default();
        !stopped.starts_with(NOT_RUN)
    });
    let failing: Vec<&str> = summaries
        .iter()
        .filter(|summary| summary.failed())
        .map(|summary| summary.scenario.as_str())
        .collect();
    let verdict = match failing.as_slice() {
        [] => "every one held".to_owned(),
        names => format!("{} failed: {}", names.len(), names.join(", ")),
    };
    outln!();
    outln!(
        "all: {} of {scenario_count} scenarios swept, {seeds} seeds in all; {verdict}",
        swept.count()
    );
}

/// Replays every schedule of `scenario` kept in `directory`.
fn replay_kept(
    directory: &Path,
    scenario: &Scenario,
    catalogue: &Catalogue,
) -> Result<Vec<Regression>, String> {
    let mut replayed = Vec::new();
    for (path, schedule) in regressions::load(directory, scenario.name)? {
        let file = path.display().to_string();
        let report = schedule
            .run(catalogue)
            .map_err(|error| format!("{file}: {error}"))?;
        replayed.push(Regression {
            violation: report.violations.first().map(ToString::to_string),
            replay: script_replay_command(&file),
            file,
        });
    }
    Ok(replayed)
}

/// Prints summaries as JSON: one object, or an array of several.
pub fn print_json(summaries: &[SweepSummary]) {
    let printed = match summaries {
        [one] => serde_json::to_string(one),
        all => serde_json::to_string(all),
    };
    outln!("{}", printed.expect("a summary is plain data"));
}

/// Prints a summary as text: the verdict and rate, the faults, and the first failing seed with
/// its replay command.
pub fn print_summary(summary: &SweepSummary) {
    let shard = summary
        .shard
        .as_ref()
        .map_or(String::new(), |shard| format!(" (shard {shard})"));
    outln!(
        "{}{shard}: {} seeds, {} failing, {:.0} seeds/s ({:.2} s)",
        summary.scenario,
        summary.seeds,
        summary.failures.len(),
        summary.seeds_per_sec,
        summary.seconds
    );
    if summary.seed_ranges.len() > 1 {
        let ranges: Vec<String> = summary
            .seed_ranges
            .iter()
            .map(|range| format!("{}..{}", range.start, range.end))
            .collect();
        outln!("seeds covered (with gaps): {}", ranges.join(", "));
    }
    let count = |counts: &std::collections::BTreeMap<String, u64>, kind: FaultKind| {
        counts.get(&json_key(kind)).copied().unwrap_or(0)
    };
    let injected: Vec<String> = FaultKind::ALL
        .iter()
        .map(|&kind| format!("{kind}={}", count(&summary.faults_injected, kind)))
        .collect();
    outln!("faults injected: {}", injected.join(" "));
    let struck: Vec<String> = FaultKind::ALL
        .iter()
        .filter(|&&kind| count(&summary.faults_injected, kind) > 0)
        .map(|&kind| {
            let share = count(&summary.seeds_struck, kind) as f64 / summary.seeds.max(1) as f64;
            format!("{kind}={:.0}%", 100.0 * share)
        })
        .collect();
    outln!("seeds struck: {}", struck.join(" "));
    outln!(
        "max wake-ups per deletion: {}",
        summary.max_wakeups_per_deletion
    );
    if !summary.regressions.is_empty() {
        let failing: Vec<&Regression> = summary
            .regressions
            .iter()
            .filter(|regression| regression.violation.is_some())
            .collect();
        outln!(
            "kept schedules replayed first: {}, {} failing",
            summary.regressions.len(),
            failing.len()
        );
        for regression in failing {
            let violation = regression.violation.as_deref().unwrap_or_default();
            outln!("{}: {violation}", regression.file);
            outln!("replay the kept schedule with: {}", regression.replay);
        }
    }
    if let Some(first) = summary.failures.first() {
        outln!("first failing seed {}: {}", first.seed, first.violation);
        outln!("replay it with: {}", first.replay);
    }
    if let Some(stopped) = &summary.stopped {
        outln!("{stopped}");
    }
}
