//! Shrinking: every known bug's failing seed shrinks to a short story whose schedule file
//! replays it; the schedules kept in `zklab-regressions/` (one per known bug) still show what
//! they were kept for; `run` replays kept schedules before its seeds; `check` prints the command
//! that replays its counterexample on the recipe's code (tests/kits.rs does that for every known
//! bug).

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use zklab::scenarios::catalogue::{self, Catalogue};
use zklab::scenarios::regressions;
use zklab::scenarios::runner::{run_seed, RunOptions};
use zklab::scenarios::scenario::Scenario;
use zklab::scenarios::schedule::Schedule;
use zklab::scenarios::shrink::{shrink, story_lines};

/// The acceptance bounds of a shrunk story. The longest today is two-phase commit's
/// presume-commit bug: 82 lines (two clients, a coordinator and a site, one fault).
const MOST_FAULTS: usize = 3;
const MOST_LINES: usize = 90;

fn known_bugs() -> Vec<&'static Scenario> {
    catalogue::scenarios()
        .filter(|scenario| scenario.bug.is_some())
        .collect()
}

fn kept() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(regressions::DIRECTORY)
}

#[test]
fn every_known_bug_shrinks_from_its_first_failing_seed_to_a_short_story_its_file_replays() {
    let bugs = Mutex::new(known_bugs());
    let problems = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(bug) = bugs.lock().unwrap().pop() else {
                    return;
                };
                let options = RunOptions::default();
                let seed = (0..500)
                    .find(|&seed| !run_seed(bug, seed, &options).violations.is_empty())
                    .unwrap_or_else(|| panic!("{} fails no seed of 500", bug.name));
                let shrunk = shrink(bug, seed, &options, &|_| {})
                    .unwrap_or_else(|error| panic!("{} seed {seed}: {error}", bug.name));
                let problem = |what: String| {
                    problems
                        .lock()
                        .unwrap()
                        .push(format!("{} seed {seed}: {what}", bug.name))
                };
                if shrunk.shrunk.faults > MOST_FAULTS || shrunk.shrunk.lines > MOST_LINES {
                    problem(format!("shrunk only to {:?}", shrunk.shrunk));
                }
                // What the printed command runs: the file's text, read back.
                let written = Schedule::parse(&shrunk.schedule.to_text()).unwrap();
                let replayed = written.run(&Catalogue::builtin()).unwrap();
                let kind = replayed.violations.first().map(|v| v.property);
                if kind != Some(shrunk.property) {
                    problem(format!(
                        "its file replays {kind:?}, not {:?}",
                        shrunk.property
                    ));
                }
                if story_lines(&replayed) != shrunk.shrunk.lines {
                    problem("its file replays another story".to_owned());
                }
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_known_bug_keeps_a_short_schedule_that_still_shows_its_violation() {
    for bug in known_bugs() {
        let schedules = regressions::load(&kept(), bug.name).unwrap();
        assert!(!schedules.is_empty(), "{} keeps no schedule", bug.name);
        for (path, schedule) in schedules {
            let kept_for = schedule
                .violation
                .clone()
                .expect("a kept schedule names its violation");
            assert!(schedule.faults.len() <= MOST_FAULTS, "{}", path.display());
            let report = schedule.run(&Catalogue::builtin()).unwrap();
            let shown = report.violations.first().map(|v| v.property.violation);
            assert_eq!(shown, Some(kept_for.as_str()), "{}", path.display());
            assert!(story_lines(&report) <= MOST_LINES, "{}", path.display());
        }
    }
}

#[test]
fn a_seed_that_holds_has_nothing_to_shrink() {
    let error = shrink(
        support::scenario("lock"),
        0,
        &RunOptions::default(),
        &|_| {},
    )
    .expect_err("lock seed 0 holds");
    assert!(error.contains("holds"), "{error}");
}

fn zklab(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(args)
        .output()
        .expect("zklab runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn shrink_saves_a_schedule_that_replay_runs_and_run_replays_first() {
    let dir = std::env::temp_dir().join(format!("zklab-shrink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file = dir.join("blind-retry.schedule");
    let file_arg = file.to_str().unwrap();
    let (status, out, err) = zklab(&[
        "shrink",
        "lock-bug-blind-retry",
        "--seed",
        "1",
        "--out",
        file_arg,
    ]);
    assert_eq!(status, Some(1), "{out}{err}");
    assert!(
        out.contains("-- lock-bug-blind-retry seed 1: deadlock"),
        "{out}"
    );
    let replay = out
        .lines()
        .find_map(|line| line.strip_prefix("-- replay: "))
        .expect("a replay command");
    assert!(
        replay.ends_with(&format!("replay --script {file_arg}")),
        "{replay}"
    );

    let (status, replayed, _) = zklab(&["replay", "--script", file_arg]);
    assert_eq!(status, Some(1), "{replayed}");
    let violation = |text: &str| {
        text.lines()
            .find(|line| line.starts_with("-- VIOLATION"))
            .map(str::to_owned)
    };
    assert_eq!(violation(&replayed), violation(&out));

    // The lock holds every seed; the kept schedule of its known bug does not.
    let (status, json, err) = zklab(&[
        "run",
        "lock-bug-blind-retry",
        "--seeds",
        "1",
        "--faults",
        "none",
        "--json",
        "--regressions",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(status, Some(1), "{json}{err}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["regressions"][0]["file"], file_arg);
    let kept_violation = json["regressions"][0]["violation"].as_str().unwrap();
    assert!(kept_violation.starts_with("deadlock"), "{kept_violation}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shrink_and_script_arguments_are_refused_with_exit_2() {
    let (status, _, err) = zklab(&["shrink", "lock", "--seed", "0"]);
    assert_eq!(status, Some(2));
    assert!(err.contains("lock seed 0 holds"), "{err}");
    let (status, _, err) = zklab(&["shrink", "no-such", "--seed", "0"]);
    assert_eq!(status, Some(2));
    assert!(err.contains("unknown scenario"), "{err}");
    let (status, _, err) = zklab(&["replay", "--script", "/no/such/file"]);
    assert_eq!(status, Some(2));
    assert!(err.contains("cannot read the schedule"), "{err}");
    let (status, _, err) = zklab(&["replay", "lock", "--script", "/no/such/file"]);
    assert_eq!(status, Some(2));
    assert!(err.contains("cannot be used with"), "{err}");
    let bad = std::env::temp_dir().join(format!("zklab-bad-{}.schedule", std::process::id()));
    std::fs::write(
        &bad,
        "scenario lock\nseed 1\nclients 2\nrounds 1\nservers 2\n",
    )
    .unwrap();
    let (status, _, err) = zklab(&["replay", "--script", bad.to_str().unwrap()]);
    assert_eq!(status, Some(2));
    assert!(err.contains("servers 2: 1, 3 or 5"), "{err}");
    let _ = std::fs::remove_file(&bad);
}

#[test]
fn check_prints_a_command_that_replays_its_counterexample_in_the_simulator() {
    let dir = std::env::temp_dir().join(format!("zklab-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .current_dir(&dir)
        .args([
            "check",
            "lock-bug-blind-retry",
            "--clients",
            "2",
            "--faults",
            "all",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let command = text
        .lines()
        .find_map(|line| line.split_once("in the simulator: ").map(|(_, c)| c))
        .expect("a command");
    let file = command.rsplit(' ').next().unwrap();
    let replayed = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .current_dir(&dir)
        .args(["replay", "--script", file])
        .output()
        .unwrap();
    let story = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(1), "{story}");
    assert!(story.contains("-- VIOLATION deadlock"), "{story}");
    let _ = std::fs::remove_dir_all(&dir);
}
