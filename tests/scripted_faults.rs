//! Faults placed by script rather than drawn at random: each test tells one known story and
//! checks the recipe and the oracles end it the right way.

mod support;

use std::time::Duration;

use zklab::recipes::client::{Op, OpResult};
use zklab::recipes::outcome::Outcome;
use zklab::scenarios::monitor::wait_for::DEADLOCK;
use zklab::scenarios::oracle::Property;
use zklab::scenarios::runner::{run_seed, RunOptions, SeedReport};
use zklab::sim::fault::{FaultKind, FaultRates, ScriptedFault};
use zklab::sim::trace::{TraceEntry, TraceEvent};

/// A run with only `script`'s faults, on a standalone server: each story is timed for one.
fn scripted(clients: u32, rounds: u32, script: Vec<ScriptedFault>) -> RunOptions {
    RunOptions {
        clients,
        rounds,
        faults: FaultRates::none(),
        script,
        ..RunOptions::default()
    }
    .on_servers(1)
}

fn strike(kind: FaultKind, client: u32, at_ms: u64, duration: Duration) -> ScriptedFault {
    ScriptedFault {
        at: Duration::from_millis(at_ms),
        kind,
        client,
        duration,
    }
}

/// How many lock nodes the server created for a client.
fn nodes_created(report: &SeedReport, client: u32) -> usize {
    let created = |entry: &&TraceEntry| {
        matches!(&entry.event, TraceEvent::Applied { client: c, op: Op::Create { path, .. }, reply: Ok(OpResult::Created { .. }), .. }
            if *c == client && path.contains("-lock-"))
    };
    report.trace.entries().iter().filter(created).count()
}

fn faults_of(report: &SeedReport, kind: FaultKind) -> usize {
    let matching = |entry: &&TraceEntry| matches!(&entry.event, TraceEvent::Fault { kind: k, .. } if *k == kind);
    report.trace.entries().iter().filter(matching).count()
}

/// Strikes client 0's first create after the lock directory exists (30 ms in).
fn lose_a_create_reply() -> Vec<ScriptedFault> {
    vec![strike(FaultKind::LostCreateReply, 0, 30, Duration::ZERO)]
}

#[test]
fn a_lost_create_reply_is_adopted_not_orphaned() {
    let script = lose_a_create_reply();
    let report = run_seed(support::scenario("lock"), 1, &scripted(2, 2, script));
    assert_eq!(
        faults_of(&report, FaultKind::LostCreateReply),
        1,
        "{}",
        report.trace.render()
    );
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert_eq!(
        nodes_created(&report, 0),
        2,
        "one node per round, the lost one adopted:\n{}",
        report.trace.render()
    );
    // The reply lost was the contender node's, and the client then read that very node back.
    let entries = report.trace.entries();
    let fault = entries
        .iter()
        .position(|e| matches!(&e.event, TraceEvent::Fault { kind: FaultKind::LostCreateReply, client: 0, detail, .. } if detail.contains("EphemeralSequential")))
        .expect("the lost reply of an ephemeral sequential create");
    let orphan = entries[..fault]
        .iter()
        .rev()
        .find_map(|e| match &e.event {
            TraceEvent::Applied {
                client: 0,
                reply: Ok(OpResult::Created { path, .. }),
                ..
            } => Some(path.clone()),
            _ => None,
        })
        .expect("the node the lost reply named");
    let adopted = entries[fault..].iter().any(|e| {
        matches!(&e.event, TraceEvent::Request { client: 0, op: Op::Exists { path, watch: false }, .. } if *path == orphan)
    });
    assert!(
        adopted,
        "{orphan} was never read back:\n{}",
        report.trace.render()
    );
}

#[test]
fn the_same_lost_create_reply_deadlocks_the_blind_retry_lock() {
    let script = lose_a_create_reply();
    let report = run_seed(
        support::scenario("lock-bug-blind-retry"),
        1,
        &scripted(2, 2, script),
    );
    assert_eq!(
        nodes_created(&report, 0),
        2,
        "the orphan and the blind retry"
    );
    let kinds: Vec<&'static Property> = report.violations.iter().map(|v| v.property).collect();
    assert!(kinds.contains(&&DEADLOCK), "{:?}", report.violations);
}

#[test]
fn a_paused_holders_late_write_is_refused_by_its_fencing_token() {
    // Pause client 0 for longer than the session timeout at several moments: in some seeds it
    // holds the lock when the pause strikes, its session expires, client 1 takes over, and the
    // paused client's write after waking must be refused.
    let lock = support::scenario("lock");
    let mut refused_after_pause = 0;
    for seed in 0..40 {
        let script = vec![strike(
            FaultKind::Pause,
            0,
            5 + seed % 20,
            Duration::from_secs(20),
        )];
        let report = run_seed(lock, seed, &scripted(2, 2, script));
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
        let refused = report.trace.entries().iter().any(|entry| {
            matches!(
                entry.event,
                TraceEvent::Resource {
                    client: 0,
                    accepted: false,
                    ..
                }
            ) && entry.at > Duration::from_secs(6)
        });
        let lost = report.trace.entries().iter().any(|entry| {
            matches!(
                entry.event,
                TraceEvent::Outcome {
                    client: 0,
                    outcome: Outcome::Lost,
                    ..
                }
            )
        });
        if refused {
            assert!(
                lost,
                "seed {seed}: a refused write but the client never learned it lost the lock"
            );
            refused_after_pause += 1;
        }
    }
    assert!(
        refused_after_pause > 0,
        "no seed paused a holder mid-work: the test proves nothing"
    );
}

#[test]
fn a_partition_longer_than_the_session_timeout_expires_the_session() {
    let script = vec![strike(FaultKind::Partition, 0, 3, Duration::from_secs(10))];
    let report = run_seed(support::scenario("lock"), 3, &scripted(2, 2, script));
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let entries = report.trace.entries();
    let expired = entries.iter().any(|e| {
        matches!(
            e.event,
            TraceEvent::SessionEnded {
                client: 0,
                expired: true,
                ..
            }
        )
    });
    let saw_expired = entries.iter().any(|e| {
        matches!(
            e.event,
            TraceEvent::Session {
                client: 0,
                event: zklab::recipes::client::SessionEvent::Expired,
                ..
            }
        )
    });
    assert!(expired && saw_expired, "{}", report.trace.render());
}

#[test]
fn a_long_fault_free_workload_is_not_taken_for_starvation() {
    // About 800 s of sim time: past the base bound of 600 s, well inside the workload's own.
    let options = scripted(8, 5000, Vec::new());
    let report = run_seed(support::scenario("lock"), 1, &options);
    assert_eq!(report.violations, Vec::new());
    let finished = report.trace.entries().last().map(|entry| entry.at);
    assert!(finished > Some(options.time_bound), "{finished:?}");
}

/// A double barrier's round needs two: once the other of two participants has crashed, the one
/// left waits for good, as the recipe says it must. The run strands it, rather than calling it
/// deadlocked; its node goes with its session.
#[test]
fn a_participant_left_alone_by_a_crash_is_stranded_not_deadlocked() {
    let script = vec![strike(FaultKind::Crash, 1, 500, Duration::ZERO)];
    let report = run_seed(
        support::scenario("double-barrier"),
        1,
        &scripted(2, 10, script),
    );
    assert_eq!(report.violations, Vec::new());
    let events: Vec<&TraceEvent> = report.trace.entries().iter().map(|e| &e.event).collect();
    assert!(
        events.contains(&&TraceEvent::Stranded { client: 0 })
            && !events.contains(&&TraceEvent::Finished { client: 0 }),
        "{}",
        report.trace.render()
    );
}
