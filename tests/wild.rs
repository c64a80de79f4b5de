//! `zklab wild` keeps its drivers working: a few runs of kazoo's Lock and Semaphore under lost
//! replies and connections hold and finish every round, and the planted lock (a create whose
//! reply was lost taken as the lock) is caught, and its schedule, struck again, catches it again.

#[path = "support/served.rs"]
#[allow(dead_code, reason = "the helpers of tests/serve.rs")]
mod served;

use std::process::Command;

/// `zklab wild` with `args`: its exit code and what it printed.
fn wild(args: &[&str]) -> (i32, String) {
    let ran = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .arg("wild")
        .args(args)
        .output()
        .expect("zklab runs");
    let printed = String::from_utf8_lossy(&ran.stdout).into_owned();
    (ran.status.code().expect("an exit code"), printed)
}

#[test]
fn kazoos_lock_and_semaphore_hold_and_finish_every_round_under_lost_replies() {
    if !served::kazoo_or_skip("kazoo's recipes under zklab wild") {
        return;
    }
    for driver in ["kazoo-lock", "kazoo-semaphore"] {
        let out = served::out_dir(&format!("wild-{driver}"));
        let out = out.to_str().expect("UTF-8");
        let (code, printed) = wild(&[driver, "--runs", "2", "--faults", "loss", "--out", out]);
        assert_eq!(code, 0, "{printed}");
        assert!(
            printed.contains("2 runs, 0 with a violation, 2 with every round done"),
            "{printed}"
        );
        assert!(printed.contains("lost-create-reply"), "{printed}");
    }
}

#[test]
fn the_planted_lock_is_caught_and_its_schedule_catches_it_again() {
    if !served::kazoo_or_skip("a planted lock under zklab wild") {
        return;
    }
    let out = served::out_dir("wild-planted");
    let out = out.to_str().expect("UTF-8");
    let (code, printed) = wild(&["kazoo-planted-lock", "--runs", "5", "--out", out]);
    assert_eq!(code, 1, "{printed}");
    assert!(printed.contains("VIOLATION mutual-exclusion"), "{printed}");
    let again = printed
        .lines()
        .find_map(|line| line.strip_prefix("strike its faults again: zklab wild "))
        .expect("the command that strikes it again");
    let args: Vec<&str> = again.split_whitespace().collect();
    let (code, printed) = wild(&args);
    assert_eq!(code, 1, "its schedule catches it again: {printed}");
    assert!(printed.contains("VIOLATION mutual-exclusion"), "{printed}");
}
