//! `zklab shell` on the simulated ZooKeeper prints what the real zkCli printed for the same
//! script: each `tests/shell/NAME.zk` against `NAME.out`, which `tests/shell/record.sh` recorded
//! from zkCli on a fresh ZooKeeper 3.8.
//!
//! Only the values no two servers share are masked: the clocks (`ctime`, `mtime`) and the
//! session id of an ephemeral node's `ephemeralOwner`. The real zkCli runs the same scripts on
//! `zklab serve` too, where a ZooKeeper is installed.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use zklab::launcher::installed_or_skip;

#[path = "support/served.rs"]
#[allow(
    dead_code,
    reason = "judged runs and kazoo serve tests/serve.rs and tests/serve_claims.rs"
)]
mod served;
use served::Served;

#[test]
fn every_command_prints_what_zkcli_prints() {
    assert_same_as_zkcli("commands");
}

#[test]
fn containers_and_ttl_nodes_are_made_and_refused_as_zkcli_makes_and_refuses_them() {
    assert_same_as_zkcli("extended_types");
}

#[test]
fn subtree_counts_ephemerals_and_deleteall_print_what_zkcli_prints() {
    assert_same_as_zkcli("subtree_commands");
}

#[test]
fn persistent_watches_and_their_removal_print_what_zkcli_prints() {
    assert_same_as_zkcli("persistent_watches");
}

#[test]
fn acls_authentication_and_whoami_print_what_zkcli_prints() {
    assert_same_as_zkcli("acls");
}

#[test]
fn an_uncaught_java_exception_ends_the_shell_as_it_ends_zkcli() {
    assert_same_as_zkcli("number_format");
}

#[test]
fn help_lists_only_the_commands_the_shell_supports() {
    let mut shell = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .arg("shell")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("zklab runs");
    let mut input = shell.stdin.take().expect("its stdin");
    input.write_all(b"help\nquit\n").expect("the script");
    drop(input);
    let output = shell.wait_with_output().expect("zklab ends");
    let text = String::from_utf8_lossy(&output.stdout);
    let listed: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix('\t'))
        .filter_map(|usage| usage.split(' ').next())
        .collect();
    assert_eq!(
        listed,
        [
            "addWatch",
            "addauth",
            "create",
            "delete",
            "deleteall",
            "get",
            "getAcl",
            "getAllChildrenNumber",
            "getEphemerals",
            "help",
            "ls",
            "quit",
            "removewatches",
            "set",
            "setAcl",
            "stat",
            "sync",
            "whoami"
        ],
        "{text}"
    );
}

/// Runs the binary on the script with stdout and stderr in one file, as a terminal shows them.
fn assert_same_as_zkcli(name: &str) {
    let script = File::open(scripts().join(format!("{name}.zk"))).expect("the script");
    let output_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("shell-{name}.out"));
    let output = File::create(&output_path).expect("an output file");
    let status = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .arg("shell")
        .stdin(script)
        .stdout(Stdio::from(output.try_clone().expect("a second handle")))
        .stderr(output)
        .status()
        .expect("zklab runs");
    assert!(status.success(), "zklab shell exited with {status}");
    let actual = std::fs::read_to_string(&output_path).expect("the output");
    assert_recorded(name, "zklab shell", &actual);
}

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shell")
}

/// `actual`, what `who` printed for script `name`, is what zkCli printed on a real server.
fn assert_recorded(name: &str, who: &str, actual: &str) {
    let expected =
        std::fs::read_to_string(scripts().join(format!("{name}.out"))).expect("the recording");
    let (actual, expected) = (mask(actual), mask(&expected));
    if let Some(line) = actual
        .iter()
        .zip(&expected)
        .position(|(a, e)| a != e)
        .or((actual.len() != expected.len()).then(|| actual.len().min(expected.len())))
    {
        // The lines around the first difference, which is marked `>`.
        let context = |lines: &[String]| {
            let shown = line.saturating_sub(5)..(line + 3).min(lines.len());
            let marked: Vec<String> = shown
                .map(|at| format!("{} {}", if at == line { ">" } else { " " }, lines[at]))
                .collect();
            marked.join("\n")
        };
        panic!(
            "{name}: line {} differs from zkCli's on a real server\n--- {who}:\n{}\n--- zkCli:\n{}",
            line + 1,
            context(&actual),
            context(&expected)
        );
    }
}

/// The real zkCli runs the scripts on `zklab serve`, each on a fresh one, and prints what it
/// printed on a real server, watch notifications and nodes of null data included. One script is
/// left out: `subtree_commands`'s refused `deleteall` says so only now and then on any server:
/// zkCli's `ZKUtil.deleteInBatch` releases its semaphore before its callback records the
/// failure, so a reply that comes quickly enough is read as a success.
#[test]
fn zkcli_prints_on_zklab_serve_what_it_prints_on_a_real_server() {
    if installed_or_skip("zkCli on zklab serve").is_none() {
        return;
    }
    for name in [
        "persistent_watches",
        "acls",
        "number_format",
        "commands",
        "extended_types",
    ] {
        let served = Served::start();
        let actual = zkcli(&served.address, name);
        assert_recorded(name, "zkCli on zklab serve", &actual);
    }
}

/// zkCli's script, as `tests/shell/record.sh` runs it: `$ZOOKEEPER_HOME/bin/zkCli.sh`, Debian's
/// by default.
fn zkcli_script() -> PathBuf {
    let home = std::env::var_os("ZOOKEEPER_HOME").unwrap_or_else(|| "/usr/share/zookeeper".into());
    Path::new(&home).join("bin/zkCli.sh")
}

/// What zkCli prints for script `name` on the server at `address`, its noise dropped as
/// `tests/shell/record.sh` drops it. The lines go in one every tenth of a second, as typed, so
/// each notification zkCli prints from its other thread comes before the next command's output.
fn zkcli(address: &str, name: &str) -> String {
    // stdout and stderr in one file, as a terminal shows them.
    let output_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("zkcli-{name}.out"));
    let output = File::create(&output_path).expect("an output file");
    let mut child = Command::new(zkcli_script())
        .args(["-waitforconnection", "-server", address])
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(output.try_clone().expect("a second handle")))
        .stderr(output)
        .spawn()
        .expect("zkCli runs");
    let mut input = child.stdin.take().expect("its stdin");
    let script = std::fs::read_to_string(scripts().join(format!("{name}.zk"))).expect("the script");
    for line in script.lines() {
        if writeln!(input, "{line}").is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(input);
    child.wait().expect("zkCli ends");
    let text = std::fs::read_to_string(&output_path).expect("the output");
    let noise = |line: &&str| {
        line.starts_with("SLF4J: ")
            || line.starts_with("Connecting to ")
            || *line == "Welcome to ZooKeeper!"
            || *line == "JLine support is disabled"
            || line.starts_with("\tat ")
    };
    let kept: Vec<&str> = text.split('\n').filter(|line| !noise(line)).collect();
    kept.join("\n")
}

/// The output's lines with the clocks and the session ids masked.
fn mask(output: &str) -> Vec<String> {
    output
        .split('\n')
        .map(|line| {
            let masked = ["ctime = ", "mtime = ", "ephemeralOwner = "]
                .into_iter()
                .find(|field| line.starts_with(field) && line != "ephemeralOwner = 0x0");
            match masked {
                Some(field) => format!("{field}<masked>"),
                None => line.to_owned(),
            }
        })
        .collect()
}
