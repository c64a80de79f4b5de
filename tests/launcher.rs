//! Real ZooKeeper servers through `zklab::launcher`: a standalone server, and an ensemble that
//! loses its leader, elects another and takes the old one back as a follower.
//!
//! Skipped with a loud line when ZooKeeper is not installed; `ZKLAB_REQUIRE_REAL_ZK=1` turns the
//! skip into a failure.

use std::path::Path;
use std::time::Instant;

use zklab::launcher::{installed_or_skip, srvr, Ensemble, Installation, Mode, Standalone};

/// Whether the process `pid` is gone (reaped, so no `/proc` entry is left).
fn gone(pid: u32) -> bool {
    !Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn a_standalone_server_reports_standalone_and_dies_with_its_launcher() {
    let Some(zookeeper) = installed_or_skip("standalone server") else {
        return;
    };
    let started = Instant::now();
    let mut server = Standalone::start(&zookeeper).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("standalone serving after {:?}", started.elapsed());

    let reply = srvr(server.client_port()).expect("srvr answers");
    assert!(reply.contains("Mode: standalone"), "{reply}");
    assert_eq!(server.mode(), Some(Mode::Standalone));
    let port = server.client_port();
    assert_eq!(server.connect_string(), format!("127.0.0.1:{port}"));

    let pid = server.pid().expect("a running server has a pid");
    server.stop().expect("stops");
    assert!(gone(pid), "pid {pid} survived stop");
    assert_eq!(server.pid(), None);
    assert_eq!(server.mode(), None);
    server.stop().expect("stopping twice does nothing");
    assert!(srvr(port).is_err(), "port {port} still answers");
}

#[test]
fn an_ensemble_elects_a_new_leader_and_takes_the_old_one_back_as_a_follower() {
    let Some(zookeeper) = installed_or_skip("ensemble") else {
        return;
    };
    let started = Instant::now();
    let mut ensemble = Ensemble::start(&zookeeper, 3).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("3-member ensemble settled after {:?}", started.elapsed());
    assert_eq!(ensemble.connect_string().split(',').count(), 3);
    let pids: Vec<u32> = (0..3)
        .map(|i| ensemble.pid(i).unwrap().expect("every member runs"))
        .collect();

    let old = ensemble.leader().expect("a settled ensemble has a leader");
    let followers = (0..3)
        .filter(|&i| ensemble.mode(i).unwrap() == Some(Mode::Follower))
        .count();
    assert_eq!(followers, 2);

    ensemble.kill(old).expect("kills the leader");
    assert!(gone(pids[old]), "killed leader {old} still runs");
    assert_eq!(ensemble.mode(old).unwrap(), None);
    let elected = Instant::now();
    let new = ensemble.wait_for_leader().unwrap_or_else(|e| panic!("{e}"));
    eprintln!("new leader after {:?}", elected.elapsed());
    assert_ne!(new, old);
    assert_eq!(ensemble.leader(), Some(new));

    let restarted = Instant::now();
    let leader = ensemble.restart(old).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("old leader rejoined after {:?}", restarted.elapsed());
    assert_eq!(leader, new, "a rejoining member does not unseat the leader");
    assert_eq!(ensemble.mode(old).unwrap(), Some(Mode::Follower));

    let pids: Vec<u32> = (0..3).filter_map(|i| ensemble.pid(i).unwrap()).collect();
    assert_eq!(pids.len(), 3);
    drop(ensemble);
    for pid in pids {
        assert!(gone(pid), "pid {pid} survived the ensemble's drop");
    }
}

#[test]
fn a_zookeeper_home_without_jars_says_how_to_install() {
    let empty = std::env::temp_dir().join(format!("zklab-empty-home-{}", std::process::id()));
    std::fs::create_dir_all(&empty).expect("temp dir");
    let error = Installation::in_home(&empty).expect_err("no jars, no installation");
    std::fs::remove_dir_all(&empty).expect("cleanup");
    let message = error.to_string();
    assert!(
        message.contains("apt-get install -y zookeeper"),
        "{message}"
    );
    assert!(message.contains("ZOOKEEPER_HOME"), "{message}");
}

#[test]
fn a_one_member_ensemble_leads_itself() {
    let Some(zookeeper) = installed_or_skip("one-member ensemble") else {
        return;
    };
    let ensemble = Ensemble::start(&zookeeper, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ensemble.leader(), Some(0));
    assert!(Ensemble::start(&zookeeper, 0).is_err());
}

#[test]
fn a_server_that_cannot_start_shows_its_log() {
    if installed_or_skip("broken server").is_none() {
        return;
    }
    // A release whose server jar is empty: java starts, finds no main class and exits.
    let home = std::env::temp_dir().join(format!("zklab-broken-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("temp dir");
    std::fs::write(home.join("zookeeper-3.0.0.jar"), b"").expect("fake jar");
    let broken = Installation::in_home(&home).expect("looks like a release");
    let error = Standalone::start(&broken).expect_err("cannot serve");
    std::fs::remove_dir_all(&home).expect("cleanup");
    let message = error.to_string();
    assert!(message.contains("exited"), "{message}");
    assert!(message.contains("ZooKeeperServerMain"), "{message}");
}
