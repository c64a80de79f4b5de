//! A recipe of one's own on zklab's whole command line: examples/own_lock.rs puts its lock and
//! the lock's known bug on `zklab::cli::main`, and its program lists, runs, replays, shrinks,
//! checks, merges and runs on a real ZooKeeper them as `zklab` does its own, with the same
//! output and exit statuses.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use zklab::launcher::installed_or_skip;

/// The example's program, built once as a user builds it (`cargo build --example own_lock`).
fn program() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let built = Command::new(env!("CARGO"))
            .args(["build", "--example", "own_lock", "--message-format=json"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&built.stdout);
        let stderr = String::from_utf8_lossy(&built.stderr);
        assert!(built.status.success(), "{stderr}");
        let executable = stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|message| message["target"]["name"] == "own_lock")
            .find_map(|message| message["executable"].as_str().map(PathBuf::from));
        executable.unwrap_or_else(|| panic!("cargo names no executable:\n{stdout}"))
    })
}

/// A directory of its own for one test: the program writes its schedules under it.
fn directory(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zklab-own-lock-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Runs the program with `args` in `dir`: its exit status, stdout and stderr.
fn own_lock(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(program())
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .expect("the example runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The rest of the line of `text` that starts with `prefix`.
fn after<'t>(text: &'t str, prefix: &str) -> &'t str {
    text.lines()
        .find_map(|line| line.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?}:\n{text}"))
}

/// Runs a command the program printed, word by word (none of its words is quoted).
fn run_printed(dir: &Path, command: &str) -> (Option<i32>, String, String) {
    let words: Vec<&str> = command.split(' ').collect();
    let (program_word, args) = words.split_first().expect("a command");
    assert_eq!(Path::new(program_word), program(), "{command}");
    own_lock(dir, args)
}

#[test]
fn the_users_scenarios_are_listed_swept_and_merged_and_no_others() {
    let dir = directory("sweep");
    let (status, out, _) = own_lock(&dir, &["list"]);
    assert_eq!(status, Some(0));
    let names: Vec<&str> = out.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(names, ["my-lock", "my-lock-bug-node-exists"], "{out}");

    let (status, out, err) = own_lock(&dir, &["run", "all", "--seeds", "40"]);
    assert_eq!(status, Some(0), "{out}{err}");
    assert!(out.starts_with("my-lock: 40 seeds, 0 failing,"), "{out}");

    let (status, _, err) = own_lock(&dir, &["run", "lock"]);
    assert_eq!(status, Some(2));
    assert!(
        err.contains("unknown scenario `lock`; the recipes are my-lock,"),
        "{err}"
    );
    let (status, _, err) = own_lock(&dir, &["run", "my-lokc"]);
    assert_eq!(status, Some(2));
    assert!(err.contains("did you mean `my-lock`?"), "{err}");

    let mut shards = Vec::new();
    for shard in ["1/2", "2/2"] {
        let args = [
            "run", "my-lock", "--seeds", "20", "--shard", shard, "--json",
        ];
        let (status, json, err) = own_lock(&dir, &args);
        assert_eq!(status, Some(0), "{err}");
        let file = dir.join(format!("shard-{}.json", &shard[..1]));
        std::fs::write(&file, json).expect("a shard's file");
        shards.push(file.display().to_string());
    }
    let (status, out, err) = own_lock(&dir, &["merge", &shards[0], &shards[1]]);
    assert_eq!(status, Some(0), "{err}");
    assert!(out.starts_with("my-lock: 20 seeds, 0 failing,"), "{out}");
    let zklabs = dir.join("zklab-shard.json");
    std::fs::write(
        &zklabs,
        std::fs::read_to_string(&shards[0])
            .unwrap()
            .replace("my-lock", "lock"),
    )
    .unwrap();
    let (status, _, err) = own_lock(&dir, &["merge", zklabs.to_str().unwrap()]);
    assert_eq!(status, Some(2));
    assert!(err.contains("unknown scenario `lock`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_known_bug_is_found_replayed_by_the_programs_own_command_and_shrunk_to_a_kept_schedule() {
    let dir = directory("bug");
    let (status, out, err) = own_lock(&dir, &["run", "my-lock-bug-node-exists", "--seeds", "20"]);
    assert_eq!(status, Some(1), "{out}{err}");
    let first = after(&out, "first failing seed ");
    let (seed, violation) = first.split_once(": ").expect("a seed and its violation");
    assert!(violation.starts_with("mutual-exclusion at "), "{out}");
    let replay = after(&out, "replay it with: ");
    let expected = format!(
        "{} replay my-lock-bug-node-exists --seed {seed} --clients 5 --rounds 10 --faults all",
        program().display()
    );
    assert_eq!(replay, expected);
    let (status, story, _) = run_printed(&dir, replay);
    assert_eq!(status, Some(1), "{story}");
    assert_eq!(after(&story, "-- VIOLATION "), violation);

    let (status, out, err) = own_lock(&dir, &["shrink", "my-lock-bug-node-exists", "--seed", seed]);
    assert_eq!(status, Some(1), "{out}{err}");
    assert_eq!(
        after(&out, "-- my-lock-bug-node-exists seed "),
        format!("{seed}: mutual-exclusion")
    );
    let shrunk = after(&out, "-- to   ");
    assert!(
        shrunk.starts_with("0 faults, 2 clients, 1 round, 1 server,"),
        "{out}"
    );
    let kept = format!("zklab-regressions/my-lock-bug-node-exists-seed{seed}.schedule");
    assert_eq!(after(&out, "-- saved to "), kept);
    let schedule = std::fs::read_to_string(dir.join(&kept)).expect("the kept schedule");
    assert!(
        schedule.contains("\nviolation mutual-exclusion\n"),
        "{schedule}"
    );
    let replay = after(&out, "-- replay: ");
    let (status, story, _) = run_printed(&dir, replay);
    assert_eq!(status, Some(1), "{story}");
    assert!(after(&story, "-- VIOLATION ").starts_with("mutual-exclusion at "));

    // Without a fault, a seed may hold; the kept schedule, replayed first, still fails.
    let args = [
        "run",
        "my-lock-bug-node-exists",
        "--seeds",
        "1",
        "--faults",
        "none",
        "--json",
    ];
    let (status, json, err) = own_lock(&dir, &args);
    assert_eq!(status, Some(1), "{err}");
    let json: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(json["regressions"][0]["file"], kept.as_str());
    let kept_violation = json["regressions"][0]["violation"]
        .as_str()
        .unwrap_or_default();
    assert!(kept_violation.starts_with("mutual-exclusion at "), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_model_checker_proves_the_lock_and_its_counterexample_to_the_bug_replays_on_the_code() {
    let dir = directory("check");
    let (status, out, err) = own_lock(&dir, &["check", "my-lock", "--clients", "2"]);
    assert_eq!(status, Some(0), "{out}{err}");
    assert!(out.contains("\n  holds     mutual exclusion\n"), "{out}");

    let args = ["check", "my-lock-bug-node-exists", "--faults", "none"];
    let (status, out, err) = own_lock(&dir, &args);
    assert_eq!(status, Some(1), "{out}{err}");
    assert!(
        out.contains("\n  FAILS  mutual exclusion: counterexample"),
        "{out}"
    );
    let replay = after(&out, "  replay it on the recipe's code in the simulator: ");
    let (status, story, _) = run_printed(&dir, replay);
    assert_eq!(status, Some(1), "{story}");
    assert!(after(&story, "-- VIOLATION ").starts_with("mutual-exclusion at "));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn on_a_real_zookeeper_the_lock_holds_and_its_bug_shows_two_holders() {
    if installed_or_skip("own_lock real").is_none() {
        return;
    }
    let dir = directory("real");
    let args = ["real", "my-lock", "--clients", "3", "--rounds", "5"];
    let (status, out, err) = own_lock(&dir, &args);
    assert_eq!(status, Some(0), "{out}{err}");
    assert!(out.contains(": 3 clients x 5 rounds in "), "{out}");
    assert!(out.contains(", 0 violations"), "{out}");

    let args = ["real", "my-lock-bug-node-exists", "--rounds", "50"];
    let (status, out, err) = own_lock(&dir, &args);
    assert_eq!(status, Some(1), "{out}{err}");
    assert!(
        after(&out, "VIOLATION ").starts_with("mutual-exclusion at "),
        "{out}"
    );
    let trace = "zklab-counterexamples/real-my-lock-bug-node-exists-seed0.trace";
    assert!(out.contains(trace), "{out}");
    assert!(dir.join(trace).is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
