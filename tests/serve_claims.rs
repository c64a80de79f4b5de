//! `zklab serve` judging code it does not run: Python clients on kazoo take turns at a lock
//! under server-side faults and tell its claims port what they believe; the mutual-exclusion
//! monitor judges the claims against what the server did. kazoo's own Lock holds; a lock with
//! a planted mistake (a create whose reply was lost taken as the lock) is caught, and the
//! schedule the run wrote strikes it again.

#[path = "support/served.rs"]
#[allow(dead_code, reason = "its command port serves tests/serve.rs")]
mod served;

use std::path::Path;
use std::process::Command;

use served::{out_dir, Served};

/// One judged run of `src/wild/kazoo_clients.py` with `clients` arguments on a `zklab serve`
/// given `serve` arguments: its exit code and what it printed.
fn judged_run(serve: &[&str], clients: &[&str], out: &Path) -> (i32, String) {
    let served = Served::judged(serve, out);
    let claims = format!("127.0.0.1:{}", served.side_port);
    let status = Command::new("python3")
        .arg(served::wild_driver())
        .args([&served.address, &claims])
        .args(["--clients", "3", "--rounds", "6", "--idle", "5"])
        .args(clients)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "the clients failed: {status}");
    let (status, printed) = served.verdict();
    (status.code().expect("an exit code"), printed)
}

/// The figure `label` printed in the verdict's first line (`3 sessions`).
fn figure(printed: &str, label: &str) -> u64 {
    let line = printed
        .lines()
        .find(|line| line.starts_with("zklab serve ended"));
    let words: Vec<&str> = line.expect("a verdict").split_whitespace().collect();
    let at = words
        .iter()
        .position(|word| word.trim_end_matches(',') == label);
    let number = at.and_then(|at| words.get(at - 1)).expect("the figure");
    number.parse().expect("a number")
}

/// The verdict's line of the faults struck.
fn struck(printed: &str) -> &str {
    let line = printed
        .lines()
        .find(|line| line.starts_with("faults struck:"));
    line.expect("the faults struck")
}

#[test]
fn kazoos_lock_holds_under_lost_replies_lost_connections_and_reordering() {
    if !served::kazoo_or_skip("kazoo's Lock judged on zklab serve") {
        return;
    }
    let faults = "lost-create-reply=0.2,lost-reply=0.05,connection-loss=0.05,reorder=0.1";
    let out = out_dir("kazoo-lock");
    let (code, printed) = judged_run(&["--faults", faults], &["--recipe", "kazoo"], &out);
    assert_eq!(code, 0, "{printed}");
    assert_eq!(figure(&printed, "violations"), 0, "{printed}");
    assert!(
        figure(&printed, "claims") >= 36,
        "every round claimed: {printed}"
    );
    assert!(struck(&printed).contains("lost-create-reply"), "{printed}");
    assert!(
        printed.contains("the most sessions one deletion woke: "),
        "{printed}"
    );
    let trace = std::fs::read_to_string(out.join("trace.txt")).expect("the trace");
    assert!(trace.contains("=> granted"), "claims in the trace");
}

#[test]
fn both_locks_hold_and_finish_on_an_ensemble_whose_followers_lag_crash_and_change_leader() {
    if !served::kazoo_or_skip("locks judged on a zklab serve ensemble") {
        return;
    }
    let faults = "lost-create-reply=0.15,stale-read=0.3,server-crash=0.2,leader-change=0.1";
    for recipe in ["kazoo", "own"] {
        let out = out_dir(&format!("ensemble-{recipe}"));
        // Seed 2 strikes every ensemble kind within the first seconds.
        let serve = ["--servers", "3", "--faults", faults, "--seed", "2"];
        // A follower may stand still for up to twice the session timeout (8 s): the clients
        // wait longer than that for a round.
        let clients = ["--recipe", recipe, "--idle", "12"];
        let (code, printed) = judged_run(&serve, &clients, &out);
        assert_eq!(code, 0, "{recipe}: {printed}");
        assert_eq!(figure(&printed, "violations"), 0, "{recipe}: {printed}");
        assert!(
            figure(&printed, "claims") >= 36,
            "{recipe}: every round claimed: {printed}"
        );
        let trace = std::fs::read_to_string(out.join("trace.txt")).expect("the trace");
        assert!(
            trace.contains("(follower)"),
            "sessions on followers: {trace}"
        );
        let ensemble = ["stale-read", "server-crash", "leader-change"];
        assert!(
            ensemble.iter().any(|kind| struck(&printed).contains(kind)),
            "{recipe}: an ensemble fault struck: {printed}"
        );
    }
}

#[test]
fn an_election_longer_than_idle_does_not_end_the_run_under_clients_trying_to_reconnect() {
    if !served::kazoo_or_skip("an election on a judged zklab serve") {
        return;
    }
    // Every server refuses connections for 1.9 s, more than the run's `--idle 1`.
    let text = "leader-change c0 create 1 under /locks/the-lock for 1.9s\n";
    let schedule = served::schedule_file("election", text);
    let script = schedule.to_str().expect("UTF-8");
    let serve = ["--servers", "3", "--script", script];
    let (code, printed) = judged_run(&serve, &["--recipe", "kazoo"], &out_dir("election"));
    assert_eq!(code, 0, "{printed}");
    assert_eq!(
        struck(&printed),
        "faults struck: leader-change 1",
        "{printed}"
    );
    assert!(
        figure(&printed, "claims") >= 36,
        "every round claimed: {printed}"
    );
}

#[test]
fn a_lock_taken_on_a_lost_create_reply_is_caught_and_its_schedule_strikes_it_again() {
    if !served::kazoo_or_skip("a planted lock bug judged on zklab serve") {
        return;
    }
    let planted = ["--recipe", "own", "--planted"];
    // Whether a run catches it depends on the clients' timing too (another client must hold
    // the lock when the mistaken one takes it): a few seeds.
    let caught = (1..=5).find_map(|seed| {
        let out = out_dir(&format!("planted-{seed}"));
        let seed = seed.to_string();
        let faults = ["--faults", "lost-create-reply=0.15", "--seed", &seed];
        let (code, printed) = judged_run(&faults, &planted, &out);
        (code == 1).then_some((out, printed))
    });
    let (out, printed) = caught.expect("the planted mistake caught within 5 runs");
    assert!(printed.contains("VIOLATION mutual-exclusion"), "{printed}");
    let schedule = out.join("schedule.txt");
    let written = std::fs::read_to_string(&schedule).expect("the schedule");
    assert!(written.contains("lost-create-reply c"), "{written}");
    let script = ["--script", schedule.to_str().expect("UTF-8")];
    let again = (1..=6).find_map(|attempt| {
        let again = out_dir(&format!("planted-again-{attempt}"));
        let (code, printed) = judged_run(&script, &planted, &again);
        (code == 1).then_some(printed)
    });
    let printed = again.expect("its schedule strikes it again within 6 runs");
    assert!(printed.contains("VIOLATION mutual-exclusion"), "{printed}");
    let faults = ["--faults", "lost-create-reply=0.15", "--seed", "1"];
    // The same lock without the mistake, under the same faults, holds.
    let (code, printed) = judged_run(&faults, &["--recipe", "own"], &out_dir("unplanted"));
    assert_eq!(code, 0, "no false alarm: {printed}");
}
