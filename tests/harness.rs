//! The harness users test their own code with (`zklab::testing`): it catches a planted bug with a
//! replay command that reproduces the trace, passes the same code once fixed, judges by the
//! monitors a test adds, strikes the faults a test causes on purpose when it causes them,
//! shrinks a failing seed to a schedule it keeps and replays, and finds the same failing seed
//! whatever the number of threads it runs the seeds on.

#[path = "../examples/config_watcher/watcher.rs"]
mod watcher;
#[path = "../examples/config_watcher/workload.rs"]
mod workload;

use std::path::Path;
use std::time::Duration;

use zklab::recipes::client::{CreateMode, SessionEvent, ZkClient, ZkError, ZkEvent};
use zklab::recipes::lock::Lock;
use zklab::recipes::outcome::Outcome;
use zklab::scenarios::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use zklab::scenarios::monitor::failure::NoFailures;
use zklab::scenarios::regressions;
use zklab::scenarios::runner::{LIVENESS, PANIC};
use zklab::sim::fault::{FaultKind, FaultRates};
use zklab::testing::{Harness, TestClient, SCHEDULE_VARIABLE, SHRINK_VARIABLE, THREADS_VARIABLE};

use watcher::Follow;

/// The test's workload: client 0 publishes versions 1 to 3, the others follow until they
/// see 3.
async fn publish_and_follow(client: TestClient, how: Follow) {
    workload::publish_and_follow(client, how, 3).await;
}

#[test]
fn a_planted_bug_fails_a_seed_whose_replay_gives_the_same_trace() {
    let harness = Harness::new().seeds(0..500);
    let failure = harness
        .try_run(|client| publish_and_follow(client, Follow::TrustLostRead))
        .expect_err("a watcher that trusts a lost read waits for good on some seed");
    assert_eq!(failure.violations[0].property, &LIVENESS);
    let seed = failure.seed.expect("a simulated run has a seed");
    let replay = failure.replay.clone().expect("and a replay command");
    assert!(
        replay.starts_with(&format!("ZKLAB_SEED={seed} cargo test ")),
        "{replay}"
    );
    let test = "a_planted_bug_fails_a_seed_whose_replay_gives_the_same_trace";
    assert!(
        replay.ends_with(&format!("--test harness -- {test} --exact")),
        "{replay}"
    );
    let shown = failure.to_string();
    assert!(shown.contains("VIOLATION liveness"), "{shown}");
    assert!(
        shown.contains(&format!("{:016x}", failure.trace.digest())),
        "{shown}"
    );

    let again = harness
        .seeds(seed..seed + 1)
        .try_run(|client| publish_and_follow(client, Follow::TrustLostRead))
        .expect_err("the same seed fails again");
    assert_eq!(again.trace.render(), failure.trace.render());
    assert_eq!(again.violations, failure.violations);
}

/// Threads change only the speed: the failure is the lowest failing seed, with the trace, the
/// violations and the replay command one thread finds, and every seed below it holds.
#[test]
fn on_several_threads_the_failure_is_the_lowest_failing_seed_as_on_one() {
    let harness = Harness::new().seeds(0..500);
    let run = |threads| {
        harness
            .clone()
            .threads(threads)
            .try_run(|client| publish_and_follow(client, Follow::TrustLostRead))
            .expect_err("a watcher that trusts a lost read waits for good on some seed")
    };
    let alone = run(1);
    let seed = alone.seed.expect("a simulated run has a seed");
    for threads in [2, 3, 8] {
        let parallel = run(threads);
        assert_eq!(parallel.seed, Some(seed), "on {threads} threads");
        assert_eq!(parallel.violations, alone.violations);
        assert_eq!(parallel.trace.render(), alone.trace.render());
        assert_eq!(parallel.replay, alone.replay);
    }
    let below = harness
        .seeds(0..seed)
        .threads(3)
        .try_run(|client| publish_and_follow(client, Follow::TrustLostRead));
    let below = below.unwrap_or_else(|failure| panic!("a lower seed fails: {failure}"));
    assert_eq!(below.seeds_run, seed);
}

/// A sweep that holds says how many seeds it ran, on how many threads, and how fast.
#[test]
fn a_sweep_that_holds_tells_its_seeds_threads_and_speed() {
    let passed = Harness::new()
        .clients(1)
        .no_faults()
        .seeds(10..15)
        .threads(2)
        .try_run(|client| async move {
            client.exists("/", false).await.unwrap();
        })
        .expect("every seed holds");
    assert_eq!((passed.seeds.clone(), passed.seeds_run), (10..15, 5));
    assert!((1..=5).contains(&passed.threads), "{passed:?}");
    assert!(passed.seeds_per_sec() > 0.0, "{passed:?}");
    let line = passed.to_string();
    assert!(line.starts_with("zklab: 5 seeds held, "), "{line}");
    assert!(line.contains(" seeds/s on "), "{line}");
}

/// The test below, run again in a process of its own with `ZKLAB_THREADS` set to `value`: its
/// exit status and what it printed.
fn with_threads_variable(value: &str) -> (Option<i32>, String) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "faults_caused_on_purpose_strike_when_caused"])
        .args(["--nocapture", "--test-threads", "1"])
        .env(THREADS_VARIABLE, value)
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code(), format!("{stdout}{stderr}"))
}

/// `ZKLAB_THREADS=N` sets the threads of every harness of the run; a value that is no thread
/// count fails the test, naming the variable, rather than being ignored.
#[test]
fn the_threads_variable_is_honoured_or_refused_by_name() {
    let (status, told) = with_threads_variable("3");
    assert_eq!(status, Some(0), "{told}");
    assert!(told.contains("zklab: 3 seeds held, "), "{told}");
    assert!(told.contains(" seeds/s on 3 threads\n"), "{told}");
    let (status, told) = with_threads_variable("1");
    assert_eq!(status, Some(0), "{told}");
    assert!(told.contains(" seeds/s on 1 thread\n"), "{told}");
    for bad in ["0", "many"] {
        let (status, told) = with_threads_variable(bad);
        assert_eq!(status, Some(101), "{told}");
        let refused = format!(
            "zklab: ZKLAB_THREADS=`{bad}`: the number of threads is a whole number from 1 to "
        );
        assert!(told.contains(&refused), "{told}");
    }
}

#[test]
fn the_same_code_fixed_holds_on_every_seed() {
    Harness::new()
        .seeds(0..300)
        .run(|client| publish_and_follow(client, Follow::ReadAgain));
}

#[test]
fn a_panic_in_the_code_under_test_fails_its_seed() {
    let failure = Harness::new()
        .no_faults()
        .seeds(0..1)
        .try_run(|client| async move {
            assert!(client.index() != 1, "client 1 does not like its number");
        })
        .expect_err("client 1 panics");
    assert_eq!(failure.violations[0].property, &PANIC);
    assert!(failure.violations[0]
        .message
        .contains("does not like its number"));
}

#[test]
fn the_monitors_a_test_adds_judge_its_runs() {
    let exclusion = (MutualExclusion::default(), NoFailures);
    Harness::new()
        .seeds(0..40)
        .monitors(exclusion.clone())
        .run(|client| async move {
            let lock = Lock::new("/locks/mine").recording(Some(client.recorder()));
            for _ in 0..3 {
                if let Ok(mut guard) = lock.acquire(&client).await {
                    client.sleep(Duration::from_millis(5)).await;
                    let _ = guard.is_safe().await;
                    let _ = guard.release().await;
                }
            }
        });
    // Everyone takes the "lock" at once: the monitor the test added sees two holders.
    let failure = Harness::new()
        .no_faults()
        .seeds(0..1)
        .monitors(exclusion)
        .try_run(|client| async move {
            let granted = Outcome::Granted {
                role: "lock",
                token: i64::from(client.index()),
            };
            client.recorder().record(client.session_id(), granted);
        })
        .expect_err("three holders at once");
    assert_eq!(failure.violations[0].property, &MUTUAL_EXCLUSION);
}

#[test]
fn faults_caused_on_purpose_strike_when_caused() {
    Harness::new()
        .clients(1)
        .servers(1)
        .no_faults()
        .seeds(0..3)
        .run(|mut client| async move {
            // An expired session takes its ephemeral node with it.
            client
                .create("/e", b"", CreateMode::Ephemeral)
                .await
                .unwrap();
            client.expire_session();
            let expired = Some(ZkEvent::Session(SessionEvent::Expired));
            while client.next_event().await != expired {}
            assert_eq!(
                client.exists("/e", false).await,
                Err(ZkError::SessionExpired)
            );
            client.reconnect().await;
            assert_eq!(client.exists("/e", false).await, Ok(None));

            // A lost reply: the create took effect, its caller heard ConnectionLoss.
            client.lose_next_reply();
            let lost = client.create("/x", b"", CreateMode::Persistent).await;
            assert_eq!(lost, Err(ZkError::ConnectionLoss));
            assert!(client.exists("/x", false).await.unwrap().is_some());

            // A dropped connection: the session lives on.
            client.disconnect();
            let event = client.next_event().await;
            assert_eq!(event, Some(ZkEvent::Session(SessionEvent::Disconnected)));
            assert!(client.exists("/x", false).await.unwrap().is_some());

            // A partition holds the client's calls until it heals.
            let before = client.elapsed();
            client.partition(Duration::from_millis(900)).await;
            assert!(client.elapsed() - before < Duration::from_millis(1));
            client.exists("/x", false).await.unwrap();
            assert!(client.elapsed() - before >= Duration::from_millis(900));

            // A paused process runs again after the pause.
            let before = client.elapsed();
            client.pause(Duration::from_secs(2)).await;
            assert!(client.elapsed() - before >= Duration::from_secs(2));
        });
}

#[test]
fn a_crashed_client_runs_no_further_and_its_session_expires() {
    Harness::new()
        .clients(2)
        .no_faults()
        .seeds(0..3)
        .run(|client| async move {
            if client.index() == 0 {
                client
                    .create("/mine", b"", CreateMode::Ephemeral)
                    .await
                    .unwrap();
                client.crash().await;
                panic!("a crashed client ran on");
            }
            // The other waits until the crashed client's node goes with its session.
            loop {
                match client.exists("/mine", true).await {
                    Ok(None) => client.sleep(Duration::from_millis(10)).await,
                    Ok(Some(_)) => break,
                    Err(error) => panic!("{error}"),
                }
            }
            while client.exists("/mine", true).await.unwrap().is_some() {
                while !matches!(client.next_event().await, Some(ZkEvent::Watch(_))) {}
            }
        });
}

#[test]
fn the_codes_own_tracing_events_and_notes_land_in_the_trace_beside_its_calls() {
    let failure = Harness::new()
        .clients(1)
        .no_faults()
        .seeds(0..1)
        .try_run(|client| async move {
            client.exists("/", false).await.unwrap();
            tracing::info!(answer = 42, "looked at the root");
            tracing::debug!("finer than the trace keeps");
            client.note("a note by hand");
            panic!("stop here, with the trace");
        })
        .expect_err("the client stops the run");
    let events: Vec<String> = failure
        .trace
        .entries()
        .iter()
        .map(|entry| entry.event.to_string())
        .collect();
    assert_eq!(
        events[events.len() - 3..],
        [
            "c0 s1 <- exists czxid=0",
            "c0 // INFO looked at the root answer=42",
            "c0 // a note by hand"
        ]
    );
}

/// Fails on about one seed in twenty: client 0 draws from the seed.
async fn fails_now_and_then(client: TestClient) {
    if client.index() == 0 {
        let draw: u8 = madsim::rand::random();
        assert!(draw >= 13, "drew {draw}");
    }
}

#[test]
fn a_failing_seed_kept_by_one_run_is_replayed_before_the_next_runs_sweep() {
    let dir = std::env::temp_dir().join(format!("zklab-kept-harness-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let wide = Harness::new()
        .no_faults()
        .seeds(0..1000)
        .test_name("tests::now_and_then")
        .regressions(&dir);
    let found = wide
        .try_run(fails_now_and_then)
        .expect_err("some seed draws below 13")
        .seed
        .expect("a simulated seed");
    let file = dir.join("tests-now_and_then.seeds");
    let text = std::fs::read_to_string(&file).expect("the seed is kept");
    assert!(text.contains(&format!("seed {found} # panic")), "{text}");

    // A seed that holds: swept alone it passes, unless the kept one is replayed first.
    let unkept = |seed: u64| {
        Harness::new()
            .no_faults()
            .seeds(seed..seed + 1)
            .try_run(fails_now_and_then)
    };
    let holds = (found + 1..)
        .find(|&seed| unkept(seed).is_ok())
        .expect("most seeds hold");
    assert!(unkept(holds).unwrap().kept.is_empty());
    let again = wide
        .clone()
        .seeds(holds..holds + 1)
        .try_run(fails_now_and_then)
        .expect_err("the kept seed fails");
    assert_eq!(again.seed, Some(found));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A panic of the code under test is told once, as the seed's violation: madsim's own line
/// about the task it struck ("context: node=...") is not printed before it.
#[test]
fn a_panic_in_the_code_under_test_is_told_without_the_simulators_context_line() {
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_panic_in_the_code_under_test_fails_its_seed"])
        .args(["--nocapture", "--test-threads", "1"])
        .output()
        .expect("the test binary runs");
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{stderr}");
    assert!(!stderr.contains("context: node="), "{stderr}");
}

/// Treats the end of its session as a bug: fails on a seed whose faults expire a session.
async fn trusts_its_session(client: TestClient) {
    for _ in 0..20 {
        if let Err(ZkError::SessionExpired) = client.exists("/", false).await {
            panic!("c{} lost its session", client.index());
        }
        client.sleep(Duration::from_millis(500)).await;
    }
}

/// Where the test below, run again in a process of its own, keeps its failures.
const KEPT_VARIABLE: &str = "ZKLAB_TEST_KEPT";

/// This test binary, running only the test below, in `dir`'s keeping, with `variables` set.
fn shrink_test_alone(dir: &Path, variables: &[(&str, &str)]) -> (Option<i32>, String) {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", SHRINK_TEST, "--nocapture"])
        .env(KEPT_VARIABLE, dir)
        .envs(variables.iter().copied())
        .env_remove("RUST_LOG")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code(), format!("{stdout}{stderr}"))
}

const SHRINK_TEST: &str = "a_failing_seed_shrunk_when_asked_is_kept_as_a_schedule_replayed_first";

/// `ZKLAB_SHRINK=1 cargo test ...` shrinks the failing seed's faults to the one that breaks
/// the test, keeps it as a schedule beside the kept seeds, and every later run replays it
/// before its sweep; `ZKLAB_SCHEDULE=FILE` replays it alone with its whole trace. The test runs
/// its harness in a process of its own, where it sets those variables.
#[test]
fn a_failing_seed_shrunk_when_asked_is_kept_as_a_schedule_replayed_first() {
    if let Some(dir) = std::env::var_os(KEPT_VARIABLE) {
        let faults = FaultRates::parse("connection-loss,lost-reply,session-expiry=0.1").unwrap();
        let harness = Harness::new().clients(2).faults(faults).seeds(0..100);
        return harness.regressions(dir).run(trusts_its_session);
    }
    let dir = std::env::temp_dir().join(format!("zklab-shrunk-harness-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (status, shrunk) = shrink_test_alone(&dir, &[(SHRINK_VARIABLE, "1")]);
    assert_eq!(status, Some(101), "{shrunk}");
    let seed = shrunk
        .lines()
        .find_map(|line| line.strip_prefix("zklab: seed ")?.strip_suffix(" fails"))
        .unwrap_or_else(|| panic!("a failing seed:\n{shrunk}"));
    let kept = dir.join(format!("{SHRINK_TEST}-seed{seed}.schedule"));
    let kept_name = kept.display().to_string();
    let told = format!(
        "ZKLAB_SHRINK shrank it (kept, and replayed before every later sweep):\n\
         zklab: the schedule {kept_name} fails\n  VIOLATION panic at "
    );
    assert!(shrunk.contains(&told), "{shrunk}");
    assert!(shrunk.contains("\nits faults: 1\n  fault "), "{shrunk}");
    let replay = shrunk
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("replay: "));
    let replay = replay.unwrap_or_else(|| panic!("a replay command:\n{shrunk}"));
    assert!(
        replay.starts_with(&format!("ZKLAB_SCHEDULE={kept_name} cargo test ")),
        "{replay}"
    );
    let test = format!("--test harness -- {SHRINK_TEST} --exact");
    assert!(replay.ends_with(&test), "{replay}");
    let schedule = regressions::read(&kept).expect("the shrunk schedule is kept");
    assert_eq!(schedule.scenario, SHRINK_TEST);
    assert_eq!((schedule.clients, schedule.rounds), (2, 0));
    assert_eq!(schedule.violation.as_deref(), Some("panic"));
    let kinds: Vec<FaultKind> = schedule.faults.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [FaultKind::SessionExpiry], "{}", schedule.to_text());
    let digest = |text: &str| {
        let line = text.lines().rev().find(|l| l.starts_with("trace: "));
        line.and_then(|line| line.split("digest ").nth(1))
            .map(str::to_owned)
    };
    let shrunk_digest = digest(&shrunk).expect("the shrunk run's digest");

    // The next run, which shrinks nothing, fails on the kept schedule before any seed.
    let (status, next) = shrink_test_alone(&dir, &[]);
    assert_eq!(status, Some(101), "{next}");
    let first = next.lines().find(|line| line.starts_with("zklab: "));
    assert_eq!(
        first,
        Some(format!("zklab: the schedule {kept_name} fails").as_str())
    );
    assert!(!next.contains("ZKLAB_SHRINK"), "{next}");

    // Alone, it prints its whole trace, and tells the same story.
    let (status, alone) = shrink_test_alone(&dir, &[(SCHEDULE_VARIABLE, &kept_name)]);
    assert_eq!(status, Some(101), "{alone}");
    let whole = format!("-- {kept_name}: ");
    assert!(alone.contains(&whole), "{alone}");
    assert!(
        alone.contains(&format!(" digest {shrunk_digest}\n")),
        "{alone}"
    );
    assert_eq!(digest(&alone), Some(shrunk_digest));
    let _ = std::fs::remove_dir_all(&dir);
}
