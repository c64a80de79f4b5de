//! The `zklab` command line as a user meets it: exit codes, JSON, replay commands, usage errors.

#[path = "support/zklab_command.rs"]
mod zklab_command;

use std::process::{Command, Output};

use zklab_command::{zklab, zklab_logging};

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs zklab, expects exit status `code`, and parses its stdout as one JSON object.
fn json_of(args: &[&str], code: i32) -> serde_json::Value {
    let output = zklab(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(stderr.is_empty(), "--json must keep stderr quiet: {stderr}");
    serde_json::from_str(&stdout(&output)).expect("one JSON object")
}

#[test]
fn list_names_every_scenario_and_marks_known_bugs() {
    let output = zklab(&["list"]);
    assert!(output.status.success());
    let text = stdout(&output);
    let names: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split(' ').next())
        .collect();
    for name in ["lock", "lock-bug-blind-retry", "lock-bug-herd"] {
        assert!(names.contains(&name), "{name} missing from:\n{text}");
    }
    // One line per scenario, its name first; a known bug is `<recipe>-bug-<what>` of a listed
    // recipe, and says it is expected to fail.
    for line in text.lines() {
        let name = line.split(' ').next().unwrap_or_default();
        let bug = line.ends_with("(known bug: expected to fail)");
        match name.split_once("-bug-") {
            Some((recipe, _)) => assert!(bug && names.contains(&recipe), "{line}"),
            None => assert!(!bug, "{line}"),
        }
    }
    assert!(text.contains("known bug"), "{text}");
}

#[test]
fn run_json_reports_seeds_failures_faults_and_rate() {
    let json = json_of(
        &["run", "lock", "--seeds", "40", "--faults", "all", "--json"],
        0,
    );
    assert_eq!(json["scenario"], "lock");
    assert_eq!(json["seeds"], 40);
    assert_eq!(json["failures"].as_array().map(Vec::len), Some(0));
    for key in [
        "connection_loss",
        "lost_reply",
        "session_expiry",
        "reorder",
        "partition",
        "pause",
        "crash",
        "stale_read",
        "server_crash",
        "leader_change",
    ] {
        assert!(
            json["faults_injected"][key].is_u64(),
            "faults_injected.{key} missing: {json}"
        );
        // A kind strikes no more seeds than it strikes times, and some seed if any time.
        let (struck, injected) = (&json["seeds_struck"][key], &json["faults_injected"][key]);
        assert!(
            struck.as_u64() <= injected.as_u64().map(|n| n.min(40)),
            "{key}: {json}"
        );
        assert_eq!(
            struck.as_u64() > Some(0),
            injected.as_u64() > Some(0),
            "{key}"
        );
    }
    assert!(json["faults_injected"]["lost_reply"].as_u64() > Some(0));
    assert!(json["max_wakeups_per_deletion"].as_u64() <= Some(1));
    assert!(json["seeds_per_sec"].as_f64() > Some(0.0));
}

#[test]
fn a_run_on_an_ensemble_says_so_and_its_replay_shows_where_each_session_is_attached() {
    let args = ["run", "lock", "--seeds", "20", "--servers", "3", "--json"];
    let json = json_of(&args, 0);
    assert_eq!(json["servers"], 3);
    let output = zklab(&["replay", "lock", "--seed", "1", "--servers", "3"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(stdout(&output).contains("attached to server"));
}

#[test]
fn a_violation_exits_1_and_prints_a_replay_command_that_reproduces_it() {
    let output = zklab(&["run", "lock-bug-herd", "--seeds", "20"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    let replay = text
        .lines()
        .find_map(|line| line.strip_prefix("replay it with: "))
        .expect("a replay command");
    let args: Vec<&str> = replay
        .strip_prefix(&format!("{} ", env!("CARGO_BIN_EXE_zklab")))
        .expect("the program as it was invoked")
        .split(' ')
        .collect();
    let first_violation = text
        .lines()
        .find(|l| l.starts_with("first failing seed"))
        .expect("the first failure");
    let replayed = zklab(&args);
    assert_eq!(replayed.status.code(), Some(1));
    let replay_text = stdout(&replayed);
    let violation = first_violation
        .split_once(": ")
        .map(|(_, v)| v)
        .unwrap_or_default();
    assert!(
        replay_text.contains(&format!("-- VIOLATION {violation}")),
        "replay did not reproduce `{violation}`"
    );
}

#[test]
fn replay_prints_the_same_bytes_twice() {
    let first = zklab(&["replay", "lock", "--seed", "42"]);
    let second = zklab(&["replay", "lock", "--seed", "42"]);
    assert_eq!(first.status.code(), Some(0));
    assert!(first.stdout.len() > 10_000);
    assert_eq!(first.stdout, second.stdout);
}

#[test]
fn run_writes_every_seeds_digest_in_seed_order_as_replay_prints_it() {
    let file = std::env::temp_dir().join(format!("zklab-digests-{}", std::process::id()));
    let path = file.to_str().expect("a UTF-8 temporary path");
    let output = zklab(&[
        "run",
        "lock",
        "--seeds",
        "4",
        "--start-seed",
        "40",
        "--threads",
        "2",
        "--digests",
        path,
    ]);
    assert_eq!(output.status.code(), Some(0));
    let written = std::fs::read_to_string(&file).expect("the digests file");
    let _ = std::fs::remove_file(&file);
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 4, "{written}");
    for (line, seed) in lines.iter().zip(40..) {
        let replay = stdout(&zklab(&["replay", "lock", "--seed", &seed.to_string()]));
        let digest = line.strip_prefix(&format!("lock {seed} ")).expect(line);
        assert!(
            replay.contains(&format!("digest {digest}")),
            "seed {seed}: {digest} is not the digest replay prints"
        );
    }
    let unwritable = zklab(&["run", "lock", "--seeds", "1", "--digests", "/no/such/dir/f"]);
    assert_eq!(unwritable.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unwritable.stderr).contains("cannot write /no/such/dir/f"));
}

#[test]
fn rust_log_tells_each_trace_event_as_a_tracing_line_at_its_sim_time() {
    let output = zklab_logging(
        &["replay", "lock", "--seed", "42"],
        Some("zklab::trace=info"),
    );
    assert!(output.status.success());
    let trace = stdout(&output);
    let told = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = told.lines().collect();
    let events = trace.lines().filter(|line| !line.starts_with("--")).count();
    assert_eq!(
        lines.len(),
        events,
        "one tracing line per trace event:\n{told}"
    );
    // The first event, as the trace has it and as `tracing` tells it: the sim time stamps the
    // line, and the client and session are fields.
    let first = trace.lines().find(|line| !line.starts_with("--")).unwrap();
    let (time, event) = first.trim_start().split_once(' ').unwrap();
    assert!(lines[0].trim_start().starts_with(time), "{}", lines[0]);
    assert!(
        lines[0].contains(&format!("zklab::trace: {event}")),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("client=") && lines[0].contains("session="),
        "{}",
        lines[0]
    );
}

#[test]
fn rust_log_warn_tells_nothing_of_a_run_that_holds() {
    let output = zklab_logging(&["run", "lock", "--seeds", "20"], Some("warn"));
    assert!(output.status.success());
    let told = String::from_utf8_lossy(&output.stderr);
    assert!(told.is_empty(), "{told}");
}

#[test]
fn replay_explains_its_symbols_and_shows_one_client_or_the_story_up_to_the_violation() {
    let whole = stdout(&zklab(&["replay", "lock-bug-herd", "--seed", "0"]));
    assert!(
        whole.starts_with("-- -> a request\n-- <- its reply\n"),
        "{whole}"
    );
    let events = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| !line.starts_with("--"))
            .map(str::to_owned)
            .collect()
    };
    let all = events(&whole);

    let output = zklab(&["replay", "lock-bug-herd", "--seed", "0", "--client", "2"]);
    assert_eq!(output.status.code(), Some(1));
    let mine = events(&stdout(&output));
    let expected: Vec<&String> = all.iter().filter(|line| line.contains(" c2 ")).collect();
    assert_eq!(mine.iter().collect::<Vec<_>>(), expected);

    let output = zklab(&[
        "replay",
        "lock-bug-herd",
        "--seed",
        "0",
        "--until-violation",
    ]);
    let text = stdout(&output);
    let until = events(&text);
    assert!(until.len() < all.len() && all.starts_with(&until));
    let violation = text
        .lines()
        .find_map(|line| line.strip_prefix("-- VIOLATION "))
        .unwrap();
    let at = violation
        .split(" at ")
        .nth(1)
        .unwrap()
        .split('s')
        .next()
        .unwrap();
    assert!(
        until.last().unwrap().trim_start().starts_with(at),
        "{at}: {text}"
    );
    assert!(
        text.contains(&format!("2541 events ({} shown)", until.len())),
        "{text}"
    );

    let output = zklab(&["replay", "lock", "--seed", "0", "--client", "5"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the run has clients 0 to 4"), "{stderr}");
}

#[test]
fn every_commands_help_gives_its_exit_statuses() {
    for command in [
        "list", "run", "merge", "check", "conform", "real", "serve", "shell", "replay",
    ] {
        let output = zklab(&[command, "--help"]);
        assert!(output.status.success(), "{command}");
        let help = stdout(&output);
        assert!(help.contains("Exit status: 0"), "{command}: {help}");
    }
    let help = stdout(&zklab(&["run", "--help"]));
    for range in ["1 to 64", "1 to 10000", "1 to 256", "K from 1 to N"] {
        assert!(help.contains(range), "{range}: {help}");
    }
}

#[test]
fn an_unknown_scenario_is_a_usage_error_pointing_to_the_one_meant() {
    let output = zklab(&["run", "lokc"]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("unknown scenario `lokc`; did you mean `lock`?"),
        "{err}"
    );
    let output = zklab(&["check", "lock-bug-heard"]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("did you mean `lock-bug-herd`?"), "{err}");
}

#[test]
fn bad_options_are_usage_errors() {
    for args in [
        &["run", "lock", "--faults", "meteor"][..],
        &["run", "lock", "--faults", "none,crash"],
        &["run", "lock", "--faults", "all,crash=500"],
        &["run", "lock", "--faults", "lost-reply=2"],
        &["run", "lock", "--seeds", "many"],
        &["run", "lock", "--seeds", "0"],
        &["run", "lock", "--clients", "0"],
        &["run", "lock", "--servers", "2"],
        &["run", "lock", "--threads", "0"],
        &["run", "lock", "--threads", "20000"],
        &[
            "run",
            "lock",
            "--start-seed",
            "18446744073709551615",
            "--seeds",
            "2",
        ],
        &["run", "lock", "--shard", "3/2"],
        &["run", "lock", "--shard", "0/2"],
        &["run", "lock", "--shard", "half"],
        &["run", "lock", "--faults", "stale-read", "--servers", "1"],
        &[
            "run",
            "lock",
            "--faults",
            "crash,leader-change=0.5",
            "--servers",
            "1",
        ],
        &[
            "replay",
            "lock",
            "--seed",
            "1",
            "--faults",
            "server-crash",
            "--servers",
            "1",
        ],
        &["merge"],
        &["check", "lock", "--threads", "0"],
        &["check", "lock", "--threads", "1000000"],
        &["replay", "lock", "--seed", "0", "--servers", "0"],
        &["replay", "lock"],
        &["frobnicate"],
    ] {
        let output = zklab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty(), "{args:?} gave no message");
    }
}

#[test]
fn check_json_reports_counts_and_each_property() {
    let json = json_of(&["check", "lock", "--clients", "2", "--json"], 0);
    assert_eq!(json["model"], "lock");
    assert_eq!(json["clients"], 2);
    for key in ["states", "unique_states", "max_depth"] {
        assert!(json[key].as_u64() > Some(0), "{key}: {json}");
    }
    assert!(json["seconds"].is_f64());
    let properties = json["properties"].as_array().expect("properties");
    assert_eq!(properties.len(), 5);
    assert!(properties
        .iter()
        .all(|p| p["holds"] == true && p.get("counterexample").is_none()));
}

#[test]
fn a_failing_model_exits_1_with_its_counterexample() {
    let args = [
        "check",
        "lock-bug-herd",
        "--clients",
        "3",
        "--faults",
        "none",
        "--json",
    ];
    let json = json_of(&args, 1);
    let herd = json["properties"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "herd-freedom")
        .expect("herd");
    assert_eq!(herd["holds"], false);
    let steps = herd["counterexample"].as_array().expect("a counterexample");
    assert!(!steps.is_empty() && steps.len() <= 20, "{steps:?}");
}

#[test]
fn a_counterexample_without_faults_is_told_when_one_exists() {
    // The shortest path to this bug loses a reply; a path as short needs no fault at all.
    let json = json_of(
        &["check", "queue-bug-name-order", "--clients", "2", "--json"],
        1,
    );
    let failing: Vec<&serde_json::Value> = json["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|property| property["holds"] == false)
        .collect();
    assert_eq!(failing.len(), 1, "{json}");
    let steps = failing[0]["counterexample"].as_array().unwrap();
    assert!(!steps.is_empty());
    assert!(
        steps
            .iter()
            .all(|step| !step.as_str().unwrap().contains(" XX ")),
        "{steps:?}"
    );
    let replay = failing[0]["replay_in_simulator"].as_str().unwrap();
    assert!(
        replay.ends_with(
            "replay --script zklab-counterexamples/queue-bug-name-order-2c-sequence-order.schedule"
        ),
        "{replay}"
    );
}

#[test]
fn shards_of_a_sweep_merge_into_the_whole_with_every_failing_seed() {
    let dir = std::env::temp_dir().join(format!("zklab-shards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let whole = json_of(&["run", "lock-bug-herd", "--seeds", "12", "--json"], 1);
    let mut files = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let args = [
            "run",
            "lock-bug-herd",
            "--seeds",
            "12",
            "--shard",
            &shard,
            "--json",
        ];
        let part = json_of(&args, 1);
        assert_eq!(part["shard"], shard.as_str());
        assert_eq!(part["seeds"], 4);
        let file = dir.join(format!("shard-{k}.json"));
        std::fs::write(&file, part.to_string()).unwrap();
        files.push(file.to_str().unwrap().to_owned());
    }
    let merge: Vec<&str> = ["merge", "--json"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    let merged = json_of(&merge, 1);
    for key in ["seeds", "failures", "faults_injected", "seeds_struck"] {
        assert_eq!(merged[key], whole[key], "{key}");
    }
    assert_eq!(
        merged["seed_ranges"],
        serde_json::json!([{"start": 0, "end": 12}])
    );

    // A shard merged twice ran its seeds twice: refused.
    let twice = zklab(&["merge", &files[0], &files[0]]);
    assert_eq!(twice.status.code(), Some(2));
    let not_json = zklab(&["merge", env!("CARGO_MANIFEST_DIR")]);
    assert_eq!(not_json.status.code(), Some(2));
    // A file that is not there is said to be missing, not to hold the wrong JSON.
    let missing = zklab(&["merge", "/nonexistent/shard.json"]);
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("No such file") && !err.contains("not the JSON"),
        "{err}"
    );
    // Files no `run --json` writes: refused, each with what is wrong.
    let edited = |key: &str, value: serde_json::Value| {
        let mut part: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        part[key] = value;
        part
    };
    for (part, says) in [
        (edited("seeds", 999.into()), "\"seeds\": 999 but"),
        (
            edited("seed_ranges", serde_json::json!([{"start": 4, "end": 0}])),
            "run backward",
        ),
        (edited("scenario", "lock-bug-heard".into()), "lock-bug-herd"),
        (serde_json::json!([]), "holds no sweep"),
    ] {
        let file = dir.join("edited.json");
        std::fs::write(&file, part.to_string()).unwrap();
        let refused = zklab(&["merge", file.to_str().unwrap()]);
        assert_eq!(refused.status.code(), Some(2), "{part}");
        let err = String::from_utf8_lossy(&refused.stderr);
        assert!(err.contains(says), "{says}: {err}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_replay_command_is_quoted_for_the_shell() {
    let output = zklab(&[
        "run",
        "lock-bug-herd",
        "--seeds",
        "1",
        "--faults",
        "reorder, crash",
    ]);
    let text = stdout(&output);
    let replay = text
        .lines()
        .find_map(|line| line.strip_prefix("replay it with: "))
        .expect("a replay command");
    assert!(replay.ends_with(" --faults 'reorder, crash'"), "{replay}");
}

#[test]
fn check_takes_the_fault_names_run_takes() {
    let json = json_of(
        &["check", "lock", "--faults", "lost-create-reply", "--json"],
        0,
    );
    assert_eq!(json["faults"]["lost_reply"], 1, "{json}");
}

#[test]
fn a_standalone_server_runs_every_fault_that_can_strike_it() {
    let output = zklab(&["run", "lock", "--seeds", "2", "--servers", "1"]);
    assert_eq!(output.status.code(), Some(0));
    let output = zklab(&["run", "lock", "--faults", "stale-read", "--servers", "1"]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("stale-read cannot strike a standalone server"),
        "{err}"
    );
}

#[test]
fn check_usage_errors() {
    for args in [
        &["check", "lokc"][..],
        &["check", "lock", "--faults", "partition"],
        &["check", "lock", "--faults", "none,pause"],
        &["check", "lock", "--clients", "9"],
    ] {
        let output = zklab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty(), "{args:?} gave no message");
    }
}

#[test]
fn real_server_commands_refuse_bad_input_with_usage_errors() {
    for args in [
        &["conform", "--cases", "0"][..],
        &["real", "no-such-recipe"],
        &["real", "lock", "--clients", "0"],
        &["real", "lock", "--faults", "pause"],
        &["real", "lock", "--faults", "session-expiry,leader-change"],
        &["real", "lock", "--faults", "connection-loss=20"],
        &[
            "real",
            "lock",
            "--faults",
            "session-expiry",
            "--zk",
            "127.0.0.1:1",
        ],
    ] {
        let output = zklab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty(), "{args:?} says why");
    }
}

#[test]
fn an_unreachable_server_is_an_error_not_a_pass() {
    // Port 1 on loopback refuses at once.
    for args in [
        &["conform", "--zk", "127.0.0.1:1", "--cases", "1", "--json"][..],
        &["real", "lock", "--zk", "127.0.0.1:1", "--json"],
        &["shell", "--zk", "127.0.0.1:1"],
    ] {
        let output = zklab(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("could not be used"), "{stderr}");
        assert!(
            output.stdout.is_empty(),
            "no report for a run that never happened"
        );
    }
}

/// Runs zklab with its stdout read by nobody: the pipe is closed before zklab has written all
/// it has to (each command here prints more than a pipe holds), as `zklab ... | head -1` does.
fn with_stdout_closed(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zklab runs");
    drop(child.stdout.take());
    let mut input = child.stdin.take().expect("stdin");
    // The shell may stop reading once its output is gone: a refused write is no failure here.
    let _ = input.write_all(stdin);
    drop(input);
    let mut stderr = String::new();
    let mut err = child.stderr.take().expect("stderr");
    err.read_to_string(&mut stderr).expect("stderr read");
    let status = child.wait().expect("zklab ends");
    (status.code(), stderr)
}

#[test]
fn a_closed_pipe_ends_a_command_quietly_with_its_own_status() {
    let (code, stderr) = with_stdout_closed(&["replay", "lock", "--seed", "42"], b"");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    let (code, stderr) = with_stdout_closed(&["replay", "lock-bug-herd", "--seed", "0"], b"");
    assert_eq!(
        code,
        Some(1),
        "a violation is still told by the status: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let script = "ls /\n".repeat(20_000);
    let (code, stderr) = with_stdout_closed(&["shell"], script.as_bytes());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// A forced order the recipe never follows (a timeout the lock never takes) is the schedule's
/// fault, not the recipe's: bad input, whatever the free run after it found.
#[test]
fn a_schedule_whose_forced_order_cannot_be_followed_is_bad_input() {
    let file = std::env::temp_dir().join(format!("zklab-unfollowable-{}", std::process::id()));
    let schedule = "scenario lock\nseed 0\nclients 2\nrounds 1\nservers 1\nforced\n\
                    step timeout c1\n";
    std::fs::write(&file, schedule).unwrap();
    let output = zklab(&["replay", "--script", file.to_str().unwrap()]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("forced order could not be followed")
            && stderr.contains("step 1 of 1 (timeout c1)"),
        "{stderr}"
    );
}
