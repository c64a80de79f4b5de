//! A long `zklab run` stops when asked and reports the seeds it ran: Ctrl-C, `--fail-fast` and
//! `--max-failures`. The seeds a stopped sweep reports are always its first ones.

#[path = "support/zklab_command.rs"]
mod zklab_command;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use zklab::scenarios::catalogue;
use zklab_command::zklab;

/// The sweep's JSON, checked to cover its first `seeds` seeds, each failing one listed.
fn stopped_sweep(output: &Output, code: i32) -> serde_json::Value {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    let sweep: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the report is whole JSON");
    let seeds = sweep["seeds"].as_u64().expect("a count of seeds");
    assert_eq!(
        sweep["seed_ranges"],
        serde_json::json!([{ "start": 0, "end": seeds }])
    );
    sweep
}

/// Runs zklab with `args`, sends it SIGINT two seconds in, and gives its output.
fn interrupted(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zklab runs");
    std::thread::sleep(Duration::from_secs(2));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    child.wait_with_output().expect("zklab ends")
}

#[test]
fn ctrl_c_reports_the_seeds_run_so_far_and_exits_130() {
    let output = interrupted(&["run", "lock-bug-herd", "--seeds", "200000", "--json"]);
    let sweep = stopped_sweep(&output, 130);
    let seeds = sweep["seeds"].as_u64().unwrap();
    assert!(seeds < 200_000, "{sweep}");
    // Every seed of this known bug fails: every one run is reported.
    assert_eq!(sweep["failures"].as_array().unwrap().len() as u64, seeds);
    let stopped = sweep["stopped"].as_str().expect("says it stopped");
    assert!(
        stopped.starts_with("interrupted (Ctrl-C) after") && stopped.ends_with("of 200000 seeds"),
        "{stopped}"
    );
}

#[test]
fn ctrl_c_during_run_all_names_the_scenarios_it_never_started() {
    let output = interrupted(&["run", "all", "--seeds", "200000", "--json"]);
    assert_eq!(output.status.code(), Some(130));
    let sweeps: Vec<serde_json::Value> =
        serde_json::from_slice(&output.stdout).expect("the report is whole JSON");
    assert_eq!(
        sweeps.len(),
        correct_recipes(),
        "every scenario has its entry"
    );
    let stopped =
        |sweep: &serde_json::Value| sweep["stopped"].as_str().unwrap_or_default().to_owned();
    assert!(stopped(&sweeps[0]).starts_with("interrupted (Ctrl-C) after"));
    for sweep in &sweeps[1..] {
        assert_eq!(stopped(sweep), "not run: interrupted (Ctrl-C)", "{sweep}");
        assert_eq!(sweep["seeds"], 0);
    }
}

#[test]
fn fail_fast_stops_at_the_first_failing_seed() {
    let run = ["run", "lock-bug-herd", "--seeds", "1000", "--threads", "1"];
    let output = zklab(&[&run[..], &["--fail-fast", "--json"]].concat());
    let sweep = stopped_sweep(&output, 1);
    assert_eq!(sweep["seeds"], 1);
    assert_eq!(
        sweep["stopped"],
        "stopped at the first failure (--fail-fast) after 1 of 1000 seeds"
    );

    let output = zklab(&[&run[..], &["--max-failures", "3", "--json"]].concat());
    let sweep = stopped_sweep(&output, 1);
    assert_eq!(sweep["seeds"], 3);
    assert_eq!(sweep["failures"].as_array().unwrap().len(), 3);

    let output = zklab(&[&run[..], &["--max-failures", "3"]].concat());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("stopped at 3 failures (--max-failures 3) after 3 of 1000 seeds"),
        "{text}"
    );
}

#[test]
fn a_sweep_that_holds_runs_every_seed_despite_a_failure_limit() {
    let output = zklab(&["run", "lock", "--seeds", "20", "--fail-fast", "--json"]);
    let sweep = stopped_sweep(&output, 0);
    assert_eq!(sweep["seeds"], 20);
    assert!(sweep.get("stopped").is_none(), "{sweep}");
}

#[test]
fn fail_fast_and_a_failure_limit_together_are_refused() {
    let output = zklab(&["run", "lock", "--fail-fast", "--max-failures", "2"]);
    assert_eq!(output.status.code(), Some(2));
    let output = zklab(&["run", "lock", "--max-failures", "0"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn run_all_ends_with_a_line_for_the_whole_run() {
    let output = zklab(&["run", "all", "--seeds", "2", "--rounds", "2"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text.lines().last().unwrap_or_default();
    let all = correct_recipes();
    let whole = format!(
        "all: {all} of {all} scenarios swept, {} seeds in all; every one held",
        2 * all
    );
    assert!(last.starts_with(&whole), "{last}");
}

/// How many scenarios `run all` sweeps: the catalogue's correct recipes.
fn correct_recipes() -> usize {
    catalogue::scenarios().filter(|s| s.bug.is_none()).count()
}

/// Its standard error, which must say every one of `words`.
fn says(output: &Output, words: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    for word in words {
        assert!(stderr.contains(word), "{word:?} missing from: {stderr}");
    }
}

#[test]
fn a_workload_too_large_for_the_memory_budget_is_refused_with_what_it_would_take() {
    let run = [
        "run",
        "lock",
        "--clients",
        "64",
        "--rounds",
        "10000",
        "--seeds",
        "1",
    ];
    let output = zklab(&run);
    assert_eq!(output.status.code(), Some(2));
    says(&output, &["would take about", "GiB", "4.0 GiB (--memory)"]);
    // The refusal names the budget it was held to.
    let output = zklab(&[&run[..], &["--memory", "1MiB"]].concat());
    says(&output, &["more than the memory budget of 1.0 MiB"]);
    for bad in ["4", "lots", "0GiB"] {
        let output = zklab(&["run", "lock", "--seeds", "1", "--memory", bad]);
        assert_eq!(output.status.code(), Some(2), "--memory {bad}");
        says(&output, &["is not a size", "4GiB"]);
    }
}

#[test]
fn a_seed_past_its_share_of_the_memory_budget_stops_the_run_and_is_left_out() {
    let run = [
        "run",
        "lock",
        "--seeds",
        "3",
        "--threads",
        "1",
        "--rounds",
        "40",
    ];
    let run = [&run[..], &["--memory", "1MiB"]].concat();
    let output = zklab(&[&run[..], &["--json"]].concat());
    assert_eq!(output.status.code(), Some(2));
    let sweep: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the report is whole JSON");
    assert_eq!(sweep["seeds"], 0, "{sweep}");
    assert_eq!(sweep["seed_ranges"], serde_json::json!([]));
    let stopped = sweep["stopped"].as_str().expect("says it stopped");
    assert!(
        stopped.starts_with("seed 0 was stopped unjudged") && stopped.contains("512 KiB"),
        "{stopped}"
    );
    let replay = [
        "replay", "lock", "--seed", "0", "--rounds", "40", "--memory", "1MiB",
    ];
    let replay = zklab(&replay);
    assert_eq!(replay.status.code(), Some(2));
    says(
        &replay,
        &["lock seed 0 held more than the memory budget, 1.0 MiB"],
    );
}
