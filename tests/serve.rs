//! `zklab serve`: the simulated ZooKeeper on ZooKeeper's wire protocol, as clients of another
//! process meet it. (zkCli's scripts on it: `tests/shell.rs`.)

#[path = "support/served.rs"]
#[allow(dead_code, reason = "judged runs serve tests/serve_claims.rs")]
mod served;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;

use served::Served;
use zklab::conform::{conform, ConformOptions, RealServer};
use zklab::launcher::{installed_or_skip, Controller, Standalone};

/// The generated conformance cases through zklab's wire client on `zklab serve` agree with the
/// pure server in-process: the wire, both ways, and the sessions on real time lose nothing.
#[test]
fn generated_cases_agree_through_the_wire_with_the_server_in_process() {
    let served = Served::start();
    let options = ConformOptions {
        cases: 200,
        seed: 0,
    };
    let report = conform(RealServer::Hosts(&served.address), &options, |_, _| {})
        .expect("zklab serve answers");
    assert_eq!(report.cases, 200);
    if let Some(mismatch) = &report.first_mismatch {
        panic!("{}{}", mismatch.case, mismatch.difference);
    }
    for kind in [
        "removeWatches",
        "checkWatches",
        "multiRead",
        "createTTL persistent",
    ] {
        assert!(
            report.requests.get(kind).is_some_and(|&n| n > 0),
            "no {kind}"
        );
    }
}

/// The generated cases with faults (expiries, closed connections, lost replies) struck through
/// its command port, as on ZooKeeper's `ControllerService`, agree with the simulated service.
#[test]
fn generated_cases_with_faults_struck_through_its_command_port_agree_with_the_simulator() {
    let served = Served::start();
    let controller =
        Controller::attach(&served.address, served.side_port).expect("its command port");
    let options = ConformOptions { cases: 60, seed: 0 };
    let report = conform(RealServer::Controller(&controller), &options, |_, _| {})
        .expect("zklab serve answers");
    if let Some(mismatch) = &report.first_mismatch {
        panic!("{}{}", mismatch.case, mismatch.difference);
    }
    for kind in ["fault", "event Expired", "ConnectionLoss"] {
        assert!(
            report.outcomes.get(kind).is_some_and(|&n| n > 0),
            "no {kind}"
        );
    }
}

/// What `address` answers `bytes` with, until it closes the connection.
fn exchange(address: &str, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(address).expect("a connection");
    stream.write_all(bytes).expect("sent");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

/// A launch script's readiness probe finds it as it finds a ZooKeeper; a connection that sends
/// nonsense is closed, and the server goes on serving others.
#[test]
fn srvr_tells_its_mode_and_a_nonsense_connection_is_closed_alone() {
    let served = Served::start();
    let ask = |bytes: &[u8]| exchange(&served.address, bytes);
    let srvr = String::from_utf8(ask(b"srvr")).expect("text");
    assert!(
        srvr.lines().any(|line| line == "Mode: standalone"),
        "{srvr}"
    );
    // A length past the 1 MiB a server reads: closed unanswered.
    assert_eq!(ask(&[0x7f, 0, 0, 0, 1, 2, 3]), b"");
    // A frame that is no handshake: closed unanswered.
    assert_eq!(ask(&[0, 0, 0, 3, 1, 2, 3]), b"");
    let srvr = String::from_utf8(ask(b"srvr")).expect("text");
    assert!(srvr.contains("Mode: standalone"), "{srvr}");
}

/// kazoo (Python) runs its client and its Lock, Counter, Queue and Election on `zklab serve` and
/// prints what it printed on a real ZooKeeper 3.8 (`tests/serve/kazoo_smoke.out`), and on the
/// installed server too where there is one. Without kazoo the test says it was skipped; with
/// `ZKLAB_REQUIRE_KAZOO=1` (as in CI) it fails instead.
#[test]
fn kazoo_and_its_recipes_run_on_zklab_serve_as_on_a_real_server() {
    if !served::kazoo_or_skip("kazoo on zklab serve") {
        return;
    }
    let scripts = served::scripts();
    let expected = std::fs::read_to_string(scripts.join("kazoo_smoke.out")).expect("recorded");
    let smoke = |address: &str| {
        let output = Command::new("python3")
            .arg(scripts.join("kazoo_smoke.py"))
            .arg(address)
            .output()
            .expect("python3 runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("text")
    };
    let served = Served::start();
    assert_eq!(smoke(&served.address), expected, "on zklab serve");
    if let Some(installation) = installed_or_skip("kazoo on a real server") {
        let server = Standalone::start(&installation).expect("a standalone server");
        assert_eq!(
            smoke(&server.connect_string()),
            expected,
            "on a real server"
        );
    }
}

/// `--servers 3` listens once per server and prints the connect string of all three; one
/// leads, two follow, as each server's `srvr` says; kazoo given every address runs its smoke
/// test there as on one server (a client reads its own writes on a follower too); the command
/// port's ELECTNEWLEADER drops every connection and the client carries on.
#[test]
fn an_ensemble_listens_once_per_server_and_kazoo_runs_on_it_as_on_one_server() {
    let served = Served::start_with(&["--servers", "3"]);
    let addresses: Vec<&str> = served.address.split(',').collect();
    assert_eq!(addresses.len(), 3, "{}", served.address);
    let modes: Vec<String> = (addresses.iter())
        .map(|address| {
            let answer = String::from_utf8(exchange(address, b"srvr")).expect("text");
            let mode = answer.lines().find_map(|line| line.strip_prefix("Mode: "));
            mode.expect("a mode").to_owned()
        })
        .collect();
    assert_eq!(modes, ["leader", "follower", "follower"]);
    let command = format!("127.0.0.1:{}", served.side_port);
    let elected = exchange(&command, b"GET /command/ELECTNEWLEADER HTTP/1.0\r\n\r\n");
    assert!(elected.starts_with(b"HTTP/1.0 200"));
    if !served::kazoo_or_skip("kazoo on an ensemble of zklab serve") {
        return;
    }
    let scripts = served::scripts();
    let expected = std::fs::read_to_string(scripts.join("kazoo_smoke.out")).expect("recorded");
    let output = Command::new("python3")
        .arg(scripts.join("kazoo_smoke.py"))
        .arg(&served.address)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
}

/// zookeeper-client's contract, walked through the real crate.
mod contract {
    include!("zookeeper_client_dropin/contract.rs");
}

/// A program on the real `zookeeper-client` crate (its contract's walk: every call, its errors,
/// its watches and its lock) sees on `zklab serve` what it sees on a real ZooKeeper.
#[test]
fn a_zookeeper_client_program_sees_on_zklab_serve_what_it_sees_on_a_real_server() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let walk = |hosts: String| {
        runtime.block_on(async move {
            let zk = zookeeper_client::Client::connect(&hosts)
                .await
                .expect("a session");
            contract::transcript(&zk, "/contract").await
        })
    };
    let served = Served::start();
    let on_serve = walk(served.address.clone());
    assert!(on_serve.len() > 40, "{on_serve:?}");
    let Some(installation) = installed_or_skip("zookeeper-client on a real server") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let on_real = walk(server.connect_string());
    contract::assert_same_as_real("zklab serve", &on_serve, &on_real);
}

/// Faults zklab serve cannot strike, a schedule it cannot read or a bad line of one are usage
/// errors that say why, before anything listens.
#[test]
fn faults_it_cannot_strike_and_a_bad_schedule_are_refused_with_the_reason() {
    let serve = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_zklab"))
            .args(["serve", "--port", "0", "--for", "1"])
            .args(args)
            .output()
            .expect("zklab runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), stderr)
    };
    let (code, stderr) = serve(&["--faults", "all,pause"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("does not run"), "{stderr}");
    let (code, stderr) = serve(&["--faults", "stale-read"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("needs followers"), "{stderr}");
    let (code, stderr) = serve(&["--servers", "4"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("1, 3 or 5"), "{stderr}");
    let crash = served::schedule_file("crash-schedule", "server-crash c0 create 1 for 1s\n");
    let (code, stderr) = serve(&["--script", crash.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("needs followers"), "{stderr}");
    let (code, stderr) = serve(&["--script", "/no/such/schedule.txt"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("cannot read /no/such/schedule.txt"),
        "{stderr}"
    );
    let bad = served::schedule_file("bad-schedule", "lost-reply c0 create 1\nlost-reply c0\n");
    let (code, stderr) = serve(&["--script", bad.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("line 2"), "{stderr}");
}
