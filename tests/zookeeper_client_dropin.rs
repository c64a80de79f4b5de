//! Code written on `zookeeper-client` runs under the simulator through `zklab-zookeeper-client`
//! unchanged: a small service (tests/zookeeper_client_dropin/service.rs: a registry, a leader
//! flag, a configuration follower, a job under `Client::lock` written in a transaction, a state
//! watcher), written as its author would against the real crate, holds under every fault over
//! 300 seeds; its twin with the classic bug (a create that failed with ConnectionLoss taken for
//! a win) lets two lead, a failure the harness replays; and the same code on the real crate
//! holds on a real ZooKeeper. The lock's grants are judged without the code saying anything.
//! A walk through the client's contract (tests/zookeeper_client_dropin/contract.rs) answers the
//! same through the drop-in under the simulator as through the real crate on a real server.

use std::time::Duration;

use zklab::launcher::{installed_or_skip, Standalone};
use zklab::prelude::{Harness, Outcome, TestClient, ZkClient};
use zklab::scenarios::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use zklab::testing::SEED_VARIABLE;

/// The program where `zookeeper_client` is the drop-in, as a `package =` rename makes it in a
/// user's crate: under the simulator (the workspace builds with `--cfg madsim`).
mod simulated {
    use super::*;
    use zklab_zookeeper_client as zookeeper_client;
    include!("zookeeper_client_dropin/service.rs");
}

/// The same program on the real crate.
mod real {
    use super::*;
    include!("zookeeper_client_dropin/service.rs");
}

/// Judged for mutual exclusion: of the leadership the service records, and of the lock
/// `Client::lock` grants (which it records itself).
fn harness() -> Harness<MutualExclusion> {
    Harness::new()
        .clients(3)
        .seeds(0..300)
        .monitors(MutualExclusion::default())
}

#[test]
fn a_service_on_zookeeper_client_holds_under_every_fault() {
    harness().run(|client| simulated::member(client, false));
}

#[test]
fn its_twin_that_takes_connection_loss_for_a_win_lets_two_lead_and_replays() {
    let failure = harness()
        .try_run(|client| simulated::member(client, true))
        .expect_err("two lead in some seed");
    assert_eq!(
        failure.violations[0].property, &MUTUAL_EXCLUSION,
        "{failure}"
    );
    let replay = failure.replay.clone().expect("a replay command");
    let seed = failure.seed.expect("a failing seed");
    assert!(
        replay.starts_with(&format!("{SEED_VARIABLE}={seed} ")),
        "{replay}"
    );
    let again = harness()
        .seeds(seed..seed + 1)
        .try_run(|client| simulated::member(client, true))
        .expect_err("the seed fails again");
    assert_eq!(again.trace.digest(), failure.trace.digest(), "{again}");
}

/// Where the shrinking test's own run keeps what it shrinks: set, the test is that run.
const SHRINK_DIR_VARIABLE: &str = "ZKLAB_DROPIN_SHRINK_DIR";

const SHRINK_TEST: &str = "its_twin_shrinks_to_the_faults_that_let_two_lead";

/// `ZKLAB_SHRINK=1` shrinks the twin's failing seed, as for code on zklab's own client: the
/// faults that struck, cut to the fewest that still let two lead (one), kept as a schedule. The test
/// runs its harness in a process of its own, where it sets the variables.
#[test]
fn its_twin_shrinks_to_the_faults_that_let_two_lead() {
    use zklab::scenarios::regressions;
    use zklab::testing::SHRINK_VARIABLE;
    if let Some(dir) = std::env::var_os(SHRINK_DIR_VARIABLE) {
        let twin = harness().regressions(dir);
        return twin.run(|client| simulated::member(client, true));
    }
    let dir = std::env::temp_dir().join(format!("zklab-dropin-shrunk-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", SHRINK_TEST, "--nocapture"])
        .env(SHRINK_DIR_VARIABLE, &dir)
        .env(SHRINK_VARIABLE, "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let text = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(101), "{text}");
    assert!(text.contains("ZKLAB_SHRINK shrank it"), "{text}");
    let kept: Vec<_> = std::fs::read_dir(&dir)
        .expect("the kept directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "schedule"))
        .collect();
    assert_eq!(kept.len(), 1, "{text}");
    let schedule = regressions::read(&kept[0]).expect("the shrunk schedule is kept");
    assert_eq!(
        schedule.violation.as_deref(),
        Some(MUTUAL_EXCLUSION.violation),
        "{text}"
    );
    // One connection lost under the flag's create is all the twin needs to let two lead.
    assert_eq!(schedule.faults.len(), 1, "{}", schedule.to_text());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_same_service_on_the_real_crate_holds_on_a_real_zookeeper() {
    let Some(zookeeper) = installed_or_skip("the service on a real server") else {
        return;
    };
    let server = Standalone::start(&zookeeper).unwrap_or_else(|error| panic!("{error}"));
    let hosts = server.connect_string();
    let run = harness().run_real(&hosts, None, |client| real::member(client, false));
    run.unwrap_or_else(|failure| panic!("{failure}"));
}

/// The drop-in's watchers and states as zookeeper-client documents them: a watch set before a
/// partition fires after it for a change made meanwhile (no Disconnected reaches it), a watch
/// ends with its session's expiry, and the state watcher hears each change.
#[test]
fn a_watch_outlives_a_partition_and_ends_with_its_session() {
    use zklab::sim::fault::{FaultKind, ScriptedFault};
    use zklab_zookeeper_client::{Acls, Client, CreateMode, EventType, SessionState};
    let strike = |at_millis, kind, duration| ScriptedFault {
        at: Duration::from_millis(at_millis),
        kind,
        client: 0,
        duration,
    };
    let script = vec![
        // Long enough for the client to give the connection up (two thirds of the 6 s session
        // timeout), short enough for the session to live.
        strike(50, FaultKind::Partition, Duration::from_secs(5)),
        strike(8000, FaultKind::SessionExpiry, Duration::ZERO),
    ];
    let harness = Harness::new().clients(2).no_faults().script(script);
    harness.run(|client| async move {
        let zk = Client::connect(&client.connect_string()).await.unwrap();
        let flag = "/flag";
        if client.index() == 1 {
            client.sleep(Duration::from_millis(500)).await;
            let options = CreateMode::Persistent.with_acls(Acls::anyone_all());
            zk.create(flag, b"", &options).await.unwrap();
            return;
        }
        let mut states = zk.state_watcher();
        let (none, watcher) = zk.check_and_watch_stat(flag).await.unwrap();
        assert_eq!(none, None);
        let created = watcher.changed().await;
        assert_eq!(
            (created.event_type, created.path.as_str()),
            (EventType::NodeCreated, flag)
        );
        assert_eq!(
            states.changed().await,
            SessionState::SyncConnected,
            "back after the partition"
        );
        // A watcher made now hears what comes from now on, not the reconnection before.
        let mut fresh = zk.state_watcher();
        let quiet = Box::pin(client.sleep(Duration::from_millis(100)));
        let changed = Box::pin(fresh.changed());
        let quiet_first = matches!(
            futures::future::select(changed, quiet).await,
            futures::future::Either::Right(_)
        );
        assert!(quiet_first, "no change yet");
        let (_, watcher) = zk.check_and_watch_stat(flag).await.unwrap();
        let ended = watcher.changed().await;
        assert_eq!(
            (ended.event_type, ended.session_state),
            (EventType::Session, SessionState::Expired)
        );
        assert_eq!(states.changed().await, SessionState::Expired);
        assert_eq!(fresh.changed().await, SessionState::Expired);
        assert_eq!(zk.state(), SessionState::Expired);
        let error = zk.check_stat(flag).await.unwrap_err();
        assert_eq!(error, zklab_zookeeper_client::Error::SessionExpired);
    });
}

/// What the simulated ZooKeeper does not have is an error saying so, never ignored; a sequential
/// node's number comes back; mkdir makes every missing ancestor; ACLs and authentication answer
/// as the real client's, AuthFailed ending the session; dropping a client closes its session; a
/// bad path is refused before anything is sent.
#[test]
fn what_the_simulator_lacks_is_an_error_and_what_it_has_answers_as_the_real_client() {
    use zklab_zookeeper_client::{Acls, Client, CreateMode, Error};
    let harness = Harness::new().clients(1).no_faults();
    harness.run(|client| async move {
        let refused = Client::connect("127.0.0.1:2181").await.unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("not a server of the simulated ensemble"),
            "{refused}"
        );
        let chroot = format!("{}/app", client.connect_string());
        let refused = Client::connect(&chroot).await.unwrap_err();
        assert!(refused.to_string().contains("a chroot"), "{refused}");
        // A connector's authentication is sent once the session is established.
        let with_auth = Client::connector().with_auth("digest", b"u:p");
        let authenticated = with_auth.connect(&client.connect_string()).await.unwrap();
        let users = authenticated.list_auth_users().await.unwrap();
        assert!(users
            .iter()
            .any(|user| user.scheme() == "digest" && user.user() == "u"));
        let creator = CreateMode::Persistent.with_acls(Acls::creator_all());
        authenticated.create("/u", b"", &creator).await.unwrap();
        drop(authenticated);

        let zk = Client::connect(&client.connect_string()).await.unwrap();
        let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
        zk.mkdir("/a/b/c", &open).await.unwrap();
        assert!(zk.check_stat("/a/b/c").await.unwrap().is_some());
        // /a has had one child, b: the next sequence number under it is 1.
        let sequential = CreateMode::PersistentSequential.with_acls(Acls::anyone_all());
        let (_, first) = zk.create("/a/n-", b"", &sequential).await.unwrap();
        let (_, second) = zk.create("/a/n-", b"", &sequential).await.unwrap();
        assert_eq!(
            (first.into_i64(), second.to_string()),
            (1, "0000000002".to_owned())
        );
        let (_, plain) = zk.create("/a/p", b"", &open).await.unwrap();
        assert_eq!(plain.into_i64(), -1);

        // Its creator's ACL needs an authenticated creator; the node it made lets no one else in.
        let creator = CreateMode::Persistent.with_acls(Acls::creator_all());
        let acl = zk.create("/x", b"", &creator).await.unwrap_err();
        assert_eq!(acl, Error::InvalidAcl);
        assert_eq!(zk.get_data("/u").await.unwrap_err(), Error::NoAuth);
        let refused = zk.auth("nosuchscheme", b"").await.unwrap_err();
        assert_eq!(refused, Error::AuthFailed);
        assert_eq!(zk.state(), zklab_zookeeper_client::SessionState::AuthFailed);
        assert_eq!(zk.get_data("/a").await.unwrap_err(), Error::AuthFailed);
        let zk = Client::connect(&client.connect_string()).await.unwrap();
        // A container and a TTL node are made, and look persistent.
        let container = CreateMode::Container.with_acls(Acls::anyone_all());
        let (stat, _) = zk.create("/box", b"", &container).await.unwrap();
        assert_eq!(stat.ephemeral_owner, 0);
        let ttl = open.clone().with_ttl(Duration::from_secs(1));
        let (stat, _) = zk.create("/idle", b"", &ttl).await.unwrap();
        assert_eq!(stat.ephemeral_owner, 0);
        let ephemeral = CreateMode::Ephemeral
            .with_acls(Acls::anyone_all())
            .with_ttl(Duration::from_secs(1));
        let bad = zk.create("/x", b"", &ephemeral).await.unwrap_err();
        assert_eq!(
            bad,
            Error::BadArguments(&"ttl can only be specified with persistent node")
        );
        let directory = CreateMode::EphemeralSequential.with_acls(Acls::anyone_all());
        let bad = zk.mkdir("/d", &directory).await.unwrap_err();
        assert_eq!(
            bad,
            Error::BadArguments(&"directory node must not be ephemeral")
        );
        assert_eq!(
            zk.check_stat("/x").await.unwrap(),
            None,
            "nothing refused was made"
        );

        // The last clone dropped closes the session; a detached one the simulator cannot
        // leave to expire yet, so it is refused.
        let hosts = client.connect_string();
        let ephemeral = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
        let closing = Client::connect(&hosts).await.unwrap();
        closing.create("/closed", b"", &ephemeral).await.unwrap();
        drop((closing.clone(), closing));
        client.sleep(Duration::from_secs(1)).await;
        assert_eq!(zk.check_stat("/closed").await.unwrap(), None);
        let detached = Client::connector().with_detached().connect(&hosts).await;
        let refused = detached.unwrap_err();
        assert!(
            refused.to_string().contains("no detached sessions yet"),
            "{refused}"
        );
        let bad = zk.create("/a/", b"", &open).await.unwrap_err();
        assert_eq!(bad, Error::BadArguments(&"path must not end with '/'"));
        let bad = zk.mkdir("/", &open).await.unwrap_err();
        assert_eq!(bad, Error::BadArguments(&"can not create root node"));
    });
}

/// Transactions as zookeeper-client reports them: all applied, or none with the index of the op
/// that failed; a check writer's failed check; a multiRead's reads, each answered on its own.
#[test]
fn a_transaction_applies_all_or_nothing_and_names_what_failed() {
    use zklab_zookeeper_client::{
        Acls, CheckWriteError, Client, CreateMode, Error, MultiReadResult, MultiWriteError,
        MultiWriteResult,
    };
    let harness = Harness::new().clients(1).no_faults();
    harness.run(|client| async move {
        let zk = Client::connect(&client.connect_string()).await.unwrap();
        let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
        let mut writer = zk.new_multi_writer();
        assert_eq!(writer.commit().await, Ok(Vec::new()), "nothing to send");
        writer.add_create("/a", b"1", &open).unwrap();
        writer.add_create("/b", b"2", &open).unwrap();
        let made = writer.commit().await.unwrap();
        assert!(matches!(&made[..], [MultiWriteResult::Create { path, .. }, MultiWriteResult::Create { .. }] if path == "/a"), "{made:?}");

        writer.add_set_data("/a", b"3", None).unwrap();
        writer.add_create("/b", b"", &open).unwrap();
        let failed = writer.commit().await.unwrap_err();
        let expected = MultiWriteError::OperationFailed { index: 1, source: Error::NodeExists };
        assert_eq!(failed, expected);
        assert_eq!(zk.get_data("/a").await.unwrap().0, b"1", "rolled back");

        let mut checked = zk.new_check_writer("/a", Some(7)).unwrap();
        checked.add_delete("/b", None).unwrap();
        let refused = checked.commit().await.unwrap_err();
        let expected = CheckWriteError::CheckFailed { source: Error::BadVersion };
        assert_eq!(refused, expected);
        assert_eq!(Error::from(refused), Error::RuntimeInconsistent);
        let mut checked = zk.new_check_writer("/a", Some(0)).unwrap();
        checked.add_delete("/b", None).unwrap();
        assert_eq!(checked.commit().await, Ok(vec![MultiWriteResult::Delete]));

        let mut reader = zk.new_multi_reader();
        let nothing = reader.commit().await.unwrap();
        assert!(nothing.is_empty(), "nothing to send");
        reader.add_get_data("/a").unwrap();
        reader.add_get_children("/").unwrap();
        reader.add_get_data("/gone").unwrap();
        let read = reader.commit().await.unwrap();
        assert!(matches!(&read[..], [
            MultiReadResult::Data { data, .. },
            MultiReadResult::Children { children },
            MultiReadResult::Error { err: Error::NoNode },
        ] if data == b"1" && children.contains(&"a".to_owned())), "{read:?}");
    });
}

/// zookeeper-client's contract, walked through the drop-in under the simulator.
mod simulated_contract {
    use zklab_zookeeper_client as zookeeper_client;
    include!("zookeeper_client_dropin/contract.rs");
}

/// The same walk through the real crate.
mod real_contract {
    include!("zookeeper_client_dropin/contract.rs");
}

/// The drop-in answers every call of the walk as the real crate does on a real ZooKeeper:
/// results, errors (of transactions too) and watch events.
#[test]
fn the_drop_in_answers_as_the_real_crate_does_on_a_real_zookeeper() {
    let Some(zookeeper) = installed_or_skip("the drop-in's contract on a real server") else {
        return;
    };
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let simulated = seen.clone();
    Harness::new()
        .clients(1)
        .no_faults()
        .seeds(0..1)
        .run(move |client| {
            let simulated = simulated.clone();
            async move {
                let zk = zklab_zookeeper_client::Client::connect(&client.connect_string())
                    .await
                    .unwrap();
                *simulated.lock().unwrap() = simulated_contract::transcript(&zk, "/contract").await;
            }
        });
    let simulated = std::mem::take(&mut *seen.lock().unwrap());

    let server = Standalone::start(&zookeeper).unwrap_or_else(|error| panic!("{error}"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let real = runtime.block_on(async {
        let zk = zookeeper_client::Client::connect(&server.connect_string())
            .await
            .unwrap();
        real_contract::transcript(&zk, "/contract").await
    });

    real_contract::assert_same_as_real("simulated", &simulated, &real);
    println!("{} calls, 0 mismatches", real.len());
}

/// A client that connects while the ensemble elects a leader gets its session once there is
/// one, connected, as the real client returns only with a session established.
#[test]
fn connect_returns_a_connected_session_even_during_an_election() {
    use zklab::sim::fault::{FaultKind, ScriptedFault};
    use zklab_zookeeper_client::{Client, SessionState};
    let election = ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::LeaderChange,
        client: 0,
        duration: Duration::ZERO,
    };
    let harness = Harness::new().clients(1).servers(3).no_faults();
    harness.script(vec![election]).run(|client| async move {
        client.sleep(Duration::from_millis(10)).await; // the election is under way
        let zk = Client::connect(&client.connect_string()).await.unwrap();
        assert_eq!(zk.state(), SessionState::SyncConnected);
        assert!(
            client.elapsed() > Duration::from_millis(100),
            "waited for the election"
        );
        assert_eq!(
            zk.check_stat("/").await.map(|stat| stat.is_some()),
            Ok(true)
        );
    });
}

/// `Client::lock` tells the monitors what it grants, so a lock broken under its holder is found
/// without the code recording anything: a janitor that deletes the oldest lock node, taking it
/// for stale, lets the next contender be granted the lock while its holder still holds it.
#[test]
fn a_lock_node_deleted_under_its_holder_is_two_holders_and_the_harness_says_so() {
    use zklab_zookeeper_client::{Acls, Client, CreateMode, LockPrefix};
    let harness = Harness::new().clients(3).no_faults().seeds(0..1);
    let run = harness
        .monitors(MutualExclusion::default())
        .try_run(|client| async move {
            let zk = Client::connect(&client.connect_string()).await.unwrap();
            let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
            zk.mkdir("/locks", &open).await.unwrap();
            if client.index() == 2 {
                client.sleep(Duration::from_millis(500)).await;
                let mut nodes = zk.list_children("/locks").await.unwrap();
                nodes.sort_by(|a, b| a[a.len() - 10..].cmp(&b[b.len() - 10..]));
                zk.delete(&format!("/locks/{}", nodes[0]), None)
                    .await
                    .unwrap();
                return;
            }
            client
                .sleep(Duration::from_millis(100 * u64::from(client.index())))
                .await;
            let prefix = LockPrefix::new_curator("/locks", "lock-").unwrap();
            let lock = zk.lock(prefix, b"", Acls::anyone_all()).await.unwrap();
            client.sleep(Duration::from_secs(1)).await;
            drop(lock);
        });
    let failure = run.expect_err("two hold the lock");
    let violation = &failure.violations[0];
    assert_eq!(violation.property, &MUTUAL_EXCLUSION, "{failure}");
    let role = r#"lock /locks (names containing "lock-")"#;
    assert!(violation.message.contains(role), "{failure}");
}

/// zookeeper-client 0.11's lock, told to make its directory, returns NoNode when the reply of
/// its first create (refused: no directory yet) is lost: it looks for its node in the directory,
/// which is not there, and gives up on the NoNode it gets. The drop-in does as the real client
/// does, so code on it meets that under the lost-create-reply fault.
#[test]
fn a_lost_reply_of_the_locks_first_create_is_no_node_though_told_to_make_the_directory() {
    use zklab::sim::fault::{FaultKind, ScriptedFault};
    use zklab_zookeeper_client::{Acls, Client, CreateMode, Error, LockOptions, LockPrefix};
    let lost = ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::LostCreateReply,
        client: 0,
        duration: Duration::ZERO,
    };
    let harness = Harness::new().clients(1).no_faults().script(vec![lost]);
    harness.run(|client| async move {
        let zk = Client::connect(&client.connect_string()).await.unwrap();
        let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
        let making = LockOptions::new(Acls::anyone_all()).with_ancestor_options(open.clone());
        let prefix = || LockPrefix::new_curator("/app/locks", "lock-").unwrap();
        let refused = zk.lock(prefix(), b"", making.clone().unwrap()).await;
        assert_eq!(refused.map(drop), Err(Error::NoNode));
        // With no reply lost, the same call makes the directory and takes the lock.
        let lock = zk.lock(prefix(), b"", making.unwrap()).await.unwrap();
        assert!(lock.lock_path().starts_with("/app/locks/_c_"));
    });
}

/// After a lost create reply, a lock named by a shared prefix finds its node by its owner (in
/// one multiRead, as the real client does) rather than making a second one. On one server: on
/// three, the client may list from a follower that has not applied its create yet, make a
/// second node and wait on its first forever, as the real client (which lists without a sync)
/// would where it reconnects to a lagging server.
#[test]
fn a_shared_prefix_lock_finds_its_node_after_a_lost_create_reply() {
    use zklab::sim::fault::{FaultKind, ScriptedFault};
    use zklab_zookeeper_client::{Acls, Client, CreateMode, LockPrefix};
    let lost = ScriptedFault {
        at: Duration::from_millis(500),
        kind: FaultKind::LostCreateReply,
        client: 0,
        duration: Duration::ZERO,
    };
    let harness = Harness::new().clients(1).servers(1).no_faults();
    harness.script(vec![lost]).run(|client| async move {
        let zk = Client::connect(&client.connect_string()).await.unwrap();
        let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
        zk.mkdir("/locks", &open).await.unwrap();
        client.sleep(Duration::from_secs(1)).await;
        let prefix = LockPrefix::new_shared("/locks/n-").unwrap();
        let lock = zk.lock(prefix, b"", Acls::anyone_all()).await.unwrap();
        assert_eq!(lock.lock_path(), "/locks/n-0000000000");
        let nodes = zk.list_children("/locks").await.unwrap();
        assert_eq!(nodes, ["n-0000000000"]);
    });
}
