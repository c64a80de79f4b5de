//! The launcher of real ZooKeeper servers: a standalone server, and an ensemble that survives
//! its leader's death and takes the old leader back as a follower; nothing left running.

use std::path::Path;

use zklab::launcher::{installed_or_skip, probe_mode, Ensemble, Mode, Standalone};

/// Whether a process with this id still runs.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn a_standalone_server_serves_until_stopped() {
    let Some(installation) = installed_or_skip("launcher: standalone") else {
        return;
    };
    let mut server = Standalone::start(&installation).expect("a standalone server");
    assert_eq!(server.mode(), Some(Mode::Standalone));
    let pid = server.pid().expect("a running server");
    let port = server.client_port();
    server.stop().expect("stopped");
    assert!(!alive(pid), "pid {pid} still runs");
    assert_eq!(probe_mode(port), None);
}

#[test]
fn an_ensemble_elects_a_new_leader_and_takes_the_old_one_back() {
    let Some(installation) = installed_or_skip("launcher: ensemble") else {
        return;
    };
    let mut ensemble = Ensemble::start(&installation, 3).expect("a 3-member ensemble");
    let leader = ensemble.leader().expect("a leader");
    let pids: Vec<u32> = (0..3)
        .map(|member| ensemble.pid(member).expect("a member").expect("running"))
        .collect();
    ensemble.kill(leader).expect("killed");
    assert!(!alive(pids[leader]));
    let new_leader = ensemble.wait_for_leader().expect("a new leader");
    assert_ne!(new_leader, leader);
    ensemble.restart(leader).expect("restarted");
    assert_eq!(
        ensemble.mode(leader).expect("a member"),
        Some(Mode::Follower)
    );
    let pids: Vec<u32> = (0..3)
        .map(|member| ensemble.pid(member).expect("a member").expect("running"))
        .collect();
    drop(ensemble);
    for pid in pids {
        assert!(!alive(pid), "pid {pid} outlived its launcher");
    }
}
