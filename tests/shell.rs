//! `zklab shell` on the simulated ZooKeeper prints what the real zkCli printed for the same
//! script: each `tests/shell/NAME.zk` against `NAME.out`, which `tests/shell/record.sh` recorded
//! from zkCli on a fresh ZooKeeper 3.8.
//!
//! Only the values no two servers share are masked: the clocks (`ctime`, `mtime`) and the
//! session id of an ephemeral node's `ephemeralOwner`.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

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
    use std::io::Write as _;
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
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shell");
    let script = File::open(scripts.join(format!("{name}.zk"))).expect("the script");
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
    let expected =
        std::fs::read_to_string(scripts.join(format!("{name}.out"))).expect("the recording");
    let (actual, expected) = (mask(&actual), mask(&expected));
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
            "{name}: line {} differs from zkCli's\n--- zklab shell:\n{}\n--- zkCli:\n{}",
            line + 1,
            context(&actual),
            context(&expected)
        );
    }
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
