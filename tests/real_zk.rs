//! zklab against a real ZooKeeper: the differential conformance cases (on a standalone server,
//! with faults on a controller server, and with a follower killed on an ensemble), and every
//! recipe's workload on a standalone server and on an ensemble whose leader is killed mid-run,
//! the lock's while faults strike a controller server and an ensemble, the test harness's
//! closures on a controller server, and a run out of time stopping its clients.
//!
//! Each test starts its own servers from the installed ZooKeeper. Without one, the tests say
//! loudly that they were skipped; with `ZKLAB_REQUIRE_REAL_ZK=1` (as in CI) they fail instead.

#[path = "../examples/config_watcher/watcher.rs"]
#[allow(dead_code, reason = "the planted bug is hunted in the simulator")]
mod watcher;
#[path = "../examples/config_watcher/workload.rs"]
mod workload;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zklab::conform::case::{Case, Step};
use zklab::conform::observe::Answer;
use zklab::conform::{compare, conform, ConformOptions, ConformReport, RealServer};
use zklab::launcher::{installed_or_skip, Controller, Ensemble, Standalone};
use zklab::real_faults::{RealFaults, Striker, Struck};
use zklab::recipes::client::{CreateMode, Op, SessionEvent, ZkClient, ZkError, ZkEvent};
use zklab::recipes::real_zk::RealZk;
use zklab::scenarios::catalogue;
use zklab::scenarios::real::{self, RealOptions, RealReport, RealTrace};
use zklab::sim::trace::TraceEvent;
use zklab::testing::{Harness, ServerControl};
use zklab_recipes::acl::Acls;

/// Differential cases per run: enough to meet every kind of op many times over.
const CONFORMANCE_CASES: u64 = 300;

/// Cases with faults per run: a real server takes a fifth of a second per lost reply.
const FAULT_CASES: u64 = 100;

/// Cases on a real ensemble per run: each kills and restarts a member, about a second.
const ENSEMBLE_CASES: u64 = 40;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Every property held and the clients finished at least as many rounds as they were asked for
/// (a barrier's controller sets a barrier again after losing its session). The configuration's
/// followers read values until the last one, and may skip some that came while they were away:
/// there, the writer's rounds and one read per follower. A broken property is told with the end
/// of the trace: a real run does not replay.
fn assert_holds(name: &str, report: &RealReport, options: &RealOptions, trace: &RealTrace) {
    let violations: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    assert!(
        violations.is_empty(),
        "{name}: {}\nthe trace's last {TRACE_TAIL} lines:\n{}",
        violations.join("\n"),
        tail(&report.trace.render(), TRACE_TAIL)
    );
    let asked = match name {
        "config" => (options.rounds + options.clients - 1) as usize,
        _ => (options.clients * options.rounds) as usize,
    };
    assert!(
        trace.completions() >= asked,
        "{name}: {}",
        trace.completions()
    );
}

/// How much of a failed real run's trace its test prints.
const TRACE_TAIL: usize = 200;

/// The last `lines` lines of `text`.
fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[test]
fn generated_cases_behave_the_same_on_the_simulated_and_a_real_server() {
    let Some(installation) = installed_or_skip("conformance") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let hosts = server.connect_string();
    let exercised = [
        "multiRead",
        "counted",
        "ephemerals",
        "event NodeDataChanged",
        "createContainer",
        "createTTL persistent",
        "createTTL persistent sequential",
        "addWatch persistent",
        "addWatch persistent recursive",
        "removeWatches",
        "checkWatches",
        "watches removed",
        "watches held",
        "NoWatcher",
        "event DataWatchRemoved",
        "event ChildWatchRemoved",
        "event PersistentWatchRemoved",
    ];
    agree_on(RealServer::Hosts(&hosts), CONFORMANCE_CASES, &exercised);
}

/// The same generated cases through the drop-in `zookeeper-client` on the simulated service, and
/// through the real crate on a real server: the drop-in answers, and its watchers and state
/// watchers fire, as the real client does there.
#[test]
fn generated_cases_through_the_drop_in_behave_as_through_the_real_client_on_a_real_server() {
    let Some(installation) = installed_or_skip("conformance through the drop-in") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let hosts = server.connect_string();
    let exercised = [
        "multiRead",
        "counted",
        "ephemerals",
        "event Closed",
        "createContainer",
        "createTTL persistent sequential",
        "addWatch persistent recursive",
    ];
    agree_on(
        RealServer::ThroughDropIn(&hosts),
        CONFORMANCE_CASES,
        &exercised,
    );
}

/// An application's own client, authenticated, wrapped as it is: the nodes its recipes and calls
/// make carry the ACL it asks for, which another session without the credentials cannot read,
/// and two handles on its one session each hear only the watches they set.
#[test]
fn a_wrapped_client_keeps_its_credentials_and_its_nodes_their_acl() {
    use zklab::recipes::real_zk::zookeeper_client as zk;
    let Some(installation) = installed_or_skip("a wrapped client") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let hosts = server.connect_string();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let client = zk::Client::connector()
            .with_auth("digest", b"app:secret")
            .connect(&hosts)
            .await
            .expect("an authenticated session");
        let own = RealZk::from_client(client).with_acls(&zk::Acls::creator_all());
        own.create("/guarded", b"mine", CreateMode::Persistent)
            .await
            .expect("created");
        assert_eq!(
            own.get_data("/guarded", false).await.map(|(data, _)| data),
            Ok(b"mine".to_vec())
        );
        let stranger = RealZk::connect(&hosts, Duration::from_secs(10))
            .await
            .expect("a session");
        assert_eq!(
            stranger.get_data("/guarded", false).await,
            Err(ZkError::NoAuth)
        );

        let other = own.listener();
        own.exists("/first", true).await.expect("a watch");
        other.exists("/second", true).await.expect("a watch");
        stranger
            .create("/second", b"", CreateMode::Persistent)
            .await
            .expect("created");
        stranger
            .create("/first", b"", CreateMode::Persistent)
            .await
            .expect("created");
        let heard = |event: Option<ZkEvent>| match event {
            Some(ZkEvent::Watch(watched)) => watched.path,
            other => panic!("{other:?}"),
        };
        assert_eq!(heard(own.next_event().await), "/first");
        assert_eq!(heard(other.next_event().await), "/second");
        assert_eq!(own.try_next_event(), None);
        assert_eq!(other.try_next_event(), None);
    });
}

/// Three sessions create the same node at once, then two delete it at once while the third
/// reads it: whichever order the real server chose, the simulated server agrees in one, and
/// only one create and one delete succeed.
#[test]
fn calls_sent_at_once_agree_with_the_simulated_server_in_the_order_the_real_one_chose() {
    let Some(installation) = installed_or_skip("calls sent at once") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let hosts = server.connect_string();
    let create = Op::Create {
        path: "/n".to_owned(),
        data: Vec::new(),
        mode: CreateMode::Persistent,
        acl: Acls::OPEN,
    };
    let delete = Op::Delete {
        path: "/n".to_owned(),
        version: -1,
    };
    let read = Op::GetData {
        path: "/n".to_owned(),
        watch: true,
    };
    let steps = vec![
        Step::Together {
            calls: (0..3).map(|session| (session, create.clone())).collect(),
            order: None,
        },
        Step::Together {
            calls: vec![(0, delete.clone()), (1, delete), (2, read)],
            order: None,
        },
    ];
    let case = Case { sessions: 3, steps };
    let (simulated, difference) =
        compare(RealServer::Hosts(&hosts), &case, 0).expect("a usable server");
    assert_eq!(difference, None, "{case}");
    let succeeded = |step: usize| match &simulated.steps[step].answer {
        Answer::Together(replies) => replies.iter().filter(|reply| reply.is_ok()).count(),
        other => panic!("{other:?}"),
    };
    assert_eq!(succeeded(0), 1);
    assert!(
        (1..=2).contains(&succeeded(1)),
        "one delete, and the read if it came first"
    );
}

/// Every case ran, and agreed.
fn assert_agree(report: &ConformReport, cases: u64) {
    assert_eq!(report.cases, cases);
    if let Some(mismatch) = &report.first_mismatch {
        panic!(
            "{} of {} cases mismatch; the first, shrunk:\n{}{}",
            report.mismatches, report.cases, mismatch.case, mismatch.difference
        );
    }
}

#[test]
fn generated_cases_with_faults_behave_the_same_on_the_simulator_and_a_controller_server() {
    let Some(installation) = installed_or_skip("conformance with faults") else {
        return;
    };
    let controller = Controller::start(&installation).expect("a controller server");
    // The faults struck: sessions expired, and replies were lost; persistent watches stood
    // across them, and watches were removed.
    let exercised = [
        "fault",
        "event Expired",
        "ConnectionLoss",
        "createContainer",
        "addWatch persistent recursive",
        "watches removed",
    ];
    agree_on(RealServer::Controller(&controller), FAULT_CASES, &exercised);
}

/// Runs `cases` generated cases against `real`: every case agrees, and each of `exercised`
/// (an answer or event kind) came up.
fn agree_on(real: RealServer<'_>, cases: u64, exercised: &[&str]) {
    let options = ConformOptions { cases, seed: 0 };
    let report = conform(real, &options, |_, _| {}).expect("a usable server");
    assert_agree(&report, cases);
    for outcome in exercised {
        let seen = report
            .outcomes
            .get(*outcome)
            .or(report.requests.get(*outcome));
        assert!(
            seen.is_some_and(|&n| n > 0),
            "no {outcome}: {:?} {:?}",
            report.outcomes,
            report.requests
        );
    }
}

#[test]
fn generated_cases_whose_follower_dies_behave_the_same_on_a_simulated_and_a_real_ensemble() {
    let Some(installation) = installed_or_skip("conformance on an ensemble") else {
        return;
    };
    let ensemble = Mutex::new(Ensemble::start(&installation, 3).expect("a 3-member ensemble"));
    // Followers died and came back, and re-registered watches fired.
    let exercised = ["fault", "event SyncConnected", "event NodeDeleted"];
    agree_on(RealServer::Ensemble(&ensemble), ENSEMBLE_CASES, &exercised);
}

/// Session 0 watches five nodes through a follower; the follower dies, and while the session is
/// away session 1 creates and deletes one node, creates one, changes one, deletes one and adds
/// a child to the last. When the follower is back, the re-registered watches fire for the four
/// changes that show, and the exists watch misses the node that came and went: on a simulated
/// ensemble and a real one alike.
#[test]
fn re_registered_watches_fire_for_what_changed_while_away_and_miss_a_node_that_came_and_went() {
    let Some(installation) = installed_or_skip("watch re-registration on an ensemble") else {
        return;
    };
    let ensemble = Mutex::new(Ensemble::start(&installation, 3).expect("a 3-member ensemble"));
    let call = |session, op| Step::Call { session, op };
    let create = |path: &str| Op::Create {
        path: path.to_owned(),
        data: Vec::new(),
        mode: CreateMode::Persistent,
        acl: Acls::OPEN,
    };
    let delete = |path: &str| Op::Delete {
        path: path.to_owned(),
        version: -1,
    };
    let exists = |path: &str| Op::Exists {
        path: path.to_owned(),
        watch: true,
    };
    let get_data = |path: &str| Op::GetData {
        path: path.to_owned(),
        watch: true,
    };
    let mut steps: Vec<Step> = ["/p", "/y", "/w"]
        .into_iter()
        .map(|path| call(1, create(path)))
        .collect();
    steps.extend([
        call(
            0,
            Op::Sync {
                path: "/p".to_owned(),
            },
        ),
        call(0, exists("/x")),
        call(0, exists("/z")),
        call(0, get_data("/y")),
        call(0, get_data("/w")),
        call(
            0,
            Op::GetChildren {
                path: "/p".to_owned(),
                watch: true,
            },
        ),
        Step::Away { session: 0 },
        call(1, create("/x")),
        call(1, delete("/x")),
        call(1, create("/z")),
        call(
            1,
            Op::SetData {
                path: "/y".to_owned(),
                data: b"new".to_vec(),
                version: -1,
            },
        ),
        call(1, delete("/w")),
        call(1, create("/p/c")),
        Step::Back { session: 0 },
    ]);
    let back = steps.len() - 1;
    let case = Case { sessions: 2, steps };
    let (simulated, difference) =
        compare(RealServer::Ensemble(&ensemble), &case, 0).expect("a usable ensemble");
    assert_eq!(difference, None, "{case}");
    let heard: Vec<String> = simulated.steps[back]
        .events
        .iter()
        .chain(&simulated.last_events[0])
        .map(|event| match event {
            ZkEvent::Watch(watch) => {
                let name = watch.path.rsplit('/').next().unwrap_or_default();
                format!("{:?} {name}", watch.event_type)
            }
            ZkEvent::Session(state) => format!("{state:?}"),
        })
        .collect();
    // The session's state, then its watch events sorted (by type first).
    assert_eq!(
        heard,
        [
            "SyncConnected",
            "NodeCreated z",
            "NodeDeleted w",
            "NodeDataChanged y",
            "NodeChildrenChanged p",
        ]
    );
}

#[test]
fn every_recipe_holds_on_a_real_standalone_server() {
    let Some(installation) = installed_or_skip("recipes on a standalone server") else {
        return;
    };
    // Its reaper looks every second, as the simulated one does: a container recipe's
    // directory goes and comes back under it.
    let server = Standalone::start_reaping(&installation, Duration::from_secs(1))
        .expect("a standalone server");
    for scenario in catalogue::scenarios().filter(|s| s.bug.is_none()) {
        let options = RealOptions::default();
        let trace = RealTrace::new();
        let report = runtime()
            .block_on(real::run(
                scenario,
                &server.connect_string(),
                &options,
                trace.clone(),
            ))
            .expect("a reachable server");
        assert_holds(scenario.name, &report, &options, &trace);
    }
}

#[test]
fn every_recipe_holds_on_a_real_ensemble_whose_leader_is_killed_mid_run() {
    let Some(installation) = installed_or_skip("recipes on an ensemble") else {
        return;
    };
    for scenario in catalogue::scenarios().filter(|s| s.bug.is_none()) {
        // An ensemble of its own: a member that has just come back may still be catching up.
        let mut ensemble = Ensemble::start(&installation, 3).expect("a 3-member ensemble");
        let leader = ensemble.leader().expect("an elected leader");
        let options = RealOptions::default();
        let runtime = runtime();
        let trace = RealTrace::new();
        let run = runtime.spawn({
            let (hosts, options, trace) =
                (ensemble.connect_string(), options.clone(), trace.clone());
            async move { real::run(scenario, &hosts, &options, trace).await }
        });
        // Strike once the workload is under way, well before it is done.
        let waiting = Instant::now();
        while trace.completions() < 5 {
            assert!(waiting.elapsed() < Duration::from_secs(60), "no progress");
            std::thread::sleep(Duration::from_millis(5));
        }
        ensemble.kill(leader).expect("the leader killed");
        let at_kill = trace.completions();
        let new_leader = ensemble.wait_for_leader().expect("a new leader");
        assert_ne!(new_leader, leader);
        ensemble.restart(leader).expect("the old leader back");
        let report = runtime
            .block_on(run)
            .expect("the run's task")
            .expect("a reachable ensemble");
        let name = scenario.name;
        assert!(
            at_kill < (options.clients * options.rounds) as usize,
            "{name}: the leader died after the workload was done"
        );
        // Followers drop their clients while they elect a new leader: the kill reached the
        // clients, as a session state change or as a request that lost its connection.
        let disconnects = report
            .trace
            .entries()
            .iter()
            .filter(|entry| {
                matches!(
                    entry.event,
                    TraceEvent::Session {
                        event: SessionEvent::Disconnected,
                        ..
                    }
                )
            })
            .count();
        assert!(
            disconnects + trace.connection_losses() > 0,
            "{name}: no client noticed the leader's death"
        );
        assert_holds(name, &report, &options, &trace);
    }
}

#[test]
fn the_lock_holds_on_real_servers_while_sessions_expire_connections_drop_and_members_die() {
    let Some(installation) = installed_or_skip("a recipe under real faults") else {
        return;
    };
    let lock = catalogue::find("lock").expect("the lock");
    let controller = Controller::start(&installation).expect("a controller server");
    let ensemble = Mutex::new(Ensemble::start(&installation, 3).expect("a 3-member ensemble"));
    let ensemble_hosts = ensemble.lock().expect("the ensemble").connect_string();
    // Expiries often enough that a holder's successor is granted before the expired holder's
    // own client hears of it: the trace must end a session when the server does.
    let strikes = [
        (
            Struck::Controller(&controller),
            controller.connect_string(),
            "session-expiry=6,connection-loss=4",
        ),
        (
            Struck::Ensemble(&ensemble),
            ensemble_hosts,
            "server-crash=2,leader-change=1",
        ),
    ];
    for (server, hosts, spec) in strikes {
        let faults = RealFaults::parse(spec).expect("a valid spec");
        let options = RealOptions {
            rounds: 20,
            ..RealOptions::default()
        };
        let trace = RealTrace::new();
        let striker = Striker {
            server,
            faults: &faults,
            seed: 1,
        };
        let run = striker.run(&runtime(), lock, &hosts, &options, trace.clone());
        let report = run.report.expect("a reachable server");
        let struck = run.struck.expect("a server that takes its faults");
        let total: u64 = struck.iter().map(|(_, count)| count).sum();
        // The seed's first fault comes well within the workload's first second.
        assert!(total > 0, "{spec}: nothing struck");
        let traced = report
            .trace
            .entries()
            .iter()
            .filter(|entry| matches!(entry.event, TraceEvent::Fault { .. }))
            .count();
        assert_eq!(traced as u64, total, "{spec}: every fault is a trace line");
        assert!(
            trace.connection_losses() > 0
                || report.trace.entries().iter().any(|entry| matches!(
                    entry.event,
                    TraceEvent::Session {
                        event: SessionEvent::Disconnected | SessionEvent::Expired,
                        ..
                    }
                )),
            "{spec}: no client noticed"
        );
        assert_holds(&format!("lock under {spec}"), &report, &options, &trace);
    }
}

#[test]
fn conform_json_reports_cases_and_no_mismatch_on_a_server_it_starts() {
    if installed_or_skip("zklab conform --json").is_none() {
        return;
    }
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(["conform", "--cases", "20", "--json"])
        .output()
        .expect("zklab runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(json["cases"], 20);
    assert_eq!(json["mismatches"], 0);
    assert!(json["first_mismatch"].is_null());
}

/// A client that has not finished by the run's time bound is stopped: once the run has cleared
/// the recipe's directory, no client of it creates anything there again.
#[test]
fn a_client_out_of_time_is_stopped_and_leaves_the_cleared_directory_alone() {
    let Some(installation) = installed_or_skip("a real run out of time") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let scenario = catalogue::find("lock").expect("the lock scenario");
    let options = RealOptions {
        clients: 3,
        rounds: 100,
        time_bound: Duration::from_millis(50),
        ..RealOptions::default()
    };
    let runtime = runtime();
    let report = runtime
        .block_on(real::run(
            scenario,
            &server.connect_string(),
            &options,
            RealTrace::new(),
        ))
        .expect("a reachable server");
    assert!(
        report
            .violations
            .iter()
            .any(|violation| violation.message.contains("did not finish")),
        "{:?}",
        report.violations
    );
    // Left working, the clients would get back in line within milliseconds.
    let left = runtime.block_on(async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let client = RealZk::connect(&server.connect_string(), Duration::from_secs(10))
            .await
            .expect("a session");
        client.get_children(scenario.kit.root(), false).await
    });
    assert!(
        matches!(&left, Err(ZkError::NoNode)) || left.as_ref().is_ok_and(Vec::is_empty),
        "{left:?}"
    );
}

/// A real run does not replay: one that breaks a property keeps what its clients saw, every
/// request and reply among it. Sorting by name puts the lock's contenders in the order of their
/// sessions, not of their sequence numbers, and five clients on a real server show it at once.
#[test]
fn real_keeps_the_trace_of_a_run_that_breaks_a_property() {
    if installed_or_skip("zklab real on a known bug").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("zklab-real-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args([
            "real",
            "lock-bug-sort-by-name",
            "--rounds",
            "3",
            "--seed",
            "7",
        ])
        .current_dir(&dir)
        .output()
        .expect("zklab runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let kept = "zklab-counterexamples/real-lock-bug-sort-by-name-seed7.trace";
    assert!(stdout.contains(kept), "{stdout}");
    let trace = std::fs::read_to_string(dir.join(kept)).expect("the kept trace");
    let _ = std::fs::remove_dir_all(&dir);
    for shown in [
        "-> create /locks/lock/",
        "<- created /locks/lock/",
        "=> granted lock",
    ] {
        assert!(trace.contains(shown), "{shown:?} in:\n{trace}");
    }
}

#[test]
fn the_harness_runs_a_tests_closure_on_a_real_server_and_strikes_its_sessions_there() {
    let Some(installation) = installed_or_skip("the harness on a real server") else {
        return;
    };
    let server = Arc::new(Controller::start(&installation).expect("a controller server"));
    let hosts = server.connect_string();
    let control: Arc<dyn ServerControl> = server.clone();
    let harness = Harness::new()
        .clients(3)
        .time_bound(Duration::from_secs(60));

    // The very closure the simulated sweeps run.
    let watched = harness.run_real(&hosts, None, |client| {
        workload::publish_and_follow(client, watcher::Follow::ReadAgain, 3)
    });
    if let Err(failure) = watched {
        panic!("{failure}");
    }

    // Faults on purpose, struck by the controller.
    let struck = harness
        .clients(1)
        .run_real(&hosts, Some(control), |mut client| async move {
            client
                .create("/struck", b"", CreateMode::Ephemeral)
                .await
                .unwrap();
            client.disconnect();
            let disconnected = Some(ZkEvent::Session(SessionEvent::Disconnected));
            while client.next_event().await != disconnected {}
            assert!(client.exists("/struck", false).await.unwrap().is_some());
            client.expire_session();
            let expired = Some(ZkEvent::Session(SessionEvent::Expired));
            while client.next_event().await != expired {}
            assert_eq!(
                client.exists("/struck", false).await,
                Err(ZkError::SessionExpired)
            );
            client.reconnect().await;
            assert_eq!(client.exists("/struck", false).await, Ok(None));
        });
    if let Err(failure) = struck {
        panic!("{failure}");
    }

    // What only the simulator can cause fails the run, saying so.
    let failure = Harness::new()
        .clients(1)
        .run_real(&hosts, None, |client| async move {
            client.partition(Duration::from_secs(1)).await;
        })
        .expect_err("a partition cannot be struck on a real server");
    assert!(failure.seed.is_none() && failure.replay.is_none());
    assert!(
        failure.violations[0]
            .message
            .contains("partition is simulated only"),
        "{failure}"
    );
}

/// How often the reaper looks, on both sides of the reaper's story.
const REAPER_EVERY: Duration = Duration::from_millis(200);

/// What one session sees of the reaper: an emptied container goes and a never-used one stays;
/// a TTL node idle past its TTL goes and one with a child stays; the watch on what went fires.
/// (One watch: a real reaper that takes two nodes in one look takes them in its hash order.)
async fn reaper_story(zk: &impl ZkClient) -> Vec<String> {
    let make = |path: &'static str, mode| async move { zk.create(path, b"", mode).await.map(drop) };
    let ttl = CreateMode::PersistentWithTtl { ttl_ms: 300 };
    let mut seen = vec![
        format!("{:?}", make("/r", CreateMode::Persistent).await),
        format!("{:?}", make("/r/box", CreateMode::Container).await),
        format!("{:?}", make("/r/box/a", CreateMode::Persistent).await),
        format!("{:?}", make("/r/never", CreateMode::Container).await),
        format!("{:?}", make("/r/idle", ttl).await),
        format!("{:?}", make("/r/kept", ttl).await),
        format!("{:?}", make("/r/kept/x", CreateMode::Persistent).await),
        format!("{:?}", zk.exists("/r/box", true).await.map(|s| s.is_some())),
        format!("{:?}", zk.delete("/r/box/a", -1).await),
    ];
    zk.sleep(REAPER_EVERY * 5).await;
    for path in ["/r/box", "/r/never", "/r/idle", "/r/kept"] {
        let there = zk.exists(path, false).await.map(|stat| stat.is_some());
        seen.push(format!("{path} there: {there:?}"));
    }
    while let Some(event) = zk.try_next_event() {
        seen.push(format!("{event:?}"));
    }
    seen
}

/// The reaper's story on a real server started to reap every `REAPER_EVERY`, and on the
/// simulated one configured so: the same nodes go, and the same watches fire.
#[test]
fn the_reaper_takes_the_same_nodes_on_a_real_server_and_in_the_simulator() {
    use zklab::sim::fault::{FaultPlan, FaultRates};
    use zklab::sim::service::{SimConfig, SimZk};
    let Some(installation) = installed_or_skip("the reaper") else {
        return;
    };
    let server = Standalone::start_reaping(&installation, REAPER_EVERY).expect("a server");
    let hosts = server.connect_string();
    let real = runtime().block_on(async {
        let zk = RealZk::connect(&hosts, Duration::from_secs(10))
            .await
            .unwrap();
        reaper_story(&zk).await
    });
    let simulated = madsim::runtime::Runtime::with_seed_and_config(1, madsim::Config::default())
        .block_on(async {
            let config = SimConfig {
                container_check_interval: REAPER_EVERY,
                ..SimConfig::default()
            };
            let plan = FaultPlan {
                rates: FaultRates::none(),
                script: Vec::new(),
            };
            let zk = SimZk::start(config, plan);
            let seen = reaper_story(&zk.connect(0)).await;
            zk.end_tasks();
            seen
        });
    assert_eq!(simulated, real);
    assert!(
        real.contains(&"/r/box there: Ok(false)".to_owned()),
        "{real:?}"
    );
    assert!(
        real.contains(&"/r/idle there: Ok(false)".to_owned()),
        "{real:?}"
    );
    let told = |what: &str| real.iter().any(|line| line.contains(what));
    assert!(told("NodeDeleted, path: \"/r/box\""), "{real:?}");
}

/// zklab's own wire client on a controller server: a persistent recursive watch and an identity
/// outlive a closed connection (the client presents the identity and sets the watch again on
/// the new one), and a removal of the watch is told to the client as ZooKeeper's client tells
/// it, after which the server holds none.
#[test]
fn the_wire_client_sets_its_identity_and_watches_again_after_a_break_and_tells_a_removal() {
    use zklab::launcher::ControlCommand;
    use zklab::recipes::client::{AddWatchMode, EventType, WatchedEvent, WatcherKind};
    use zklab::wire_zk::WireZk;
    let Some(installation) = installed_or_skip("the wire client") else {
        return;
    };
    let controller = Controller::start(&installation).expect("a controller server");
    let hosts = controller.connect_string();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let timeout = Duration::from_secs(10);
        let session = WireZk::connect(&hosts, timeout).await.expect("a session");
        let writer = WireZk::connect(&hosts, timeout).await.expect("a session");
        session
            .add_auth("digest", b"app:secret")
            .await
            .expect("authenticated");
        let mode = AddWatchMode::PersistentRecursive;
        session.add_watch("/w", mode).await.expect("a watch");
        let closed = ControlCommand::CloseConnection(session.session_id());
        controller.send(closed).expect("the connection closed");
        for state in [SessionEvent::Disconnected, SessionEvent::SyncConnected] {
            assert_eq!(session.next_event().await, Some(ZkEvent::Session(state)));
        }
        for path in ["/w", "/w/x"] {
            writer
                .create(path, b"", CreateMode::Persistent)
                .await
                .expect("created");
            let created = WatchedEvent {
                event_type: EventType::NodeCreated,
                path: path.to_owned(),
            };
            assert_eq!(session.next_event().await, Some(ZkEvent::Watch(created)));
        }
        let identities = session.who_am_i().await.expect("identities");
        assert!(
            identities
                .iter()
                .any(|id| id.scheme == "digest" && id.user == "app"),
            "{identities:?}"
        );
        session
            .remove_watches("/w", WatcherKind::Any)
            .await
            .expect("removed");
        let removed = WatchedEvent {
            event_type: EventType::PersistentWatchRemoved,
            path: "/w".to_owned(),
        };
        assert_eq!(session.next_event().await, Some(ZkEvent::Watch(removed)));
        let check = Op::CheckWatches {
            path: "/w".to_owned(),
            kind: WatcherKind::Any,
        };
        assert_eq!(session.call(check).await, Err(ZkError::NoWatcher));
        session.close().await.expect("closed");
        assert_eq!(
            session.next_event().await,
            Some(ZkEvent::Session(SessionEvent::Closed))
        );
        assert_eq!(session.next_event().await, None);
    });
}
