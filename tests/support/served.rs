//! `zklab serve` as a test starts it: on free ports, killed when dropped; or judged, run until
//! its clients are gone and its verdict read. And kazoo, which the tests that drive it need.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};

/// A `zklab serve` process on free ports, killed when dropped.
pub struct Served {
    child: Child,
    stdout: BufReader<ChildStdout>,
    /// Where it listens: `127.0.0.1:PORT`, or each server's address, joined by commas.
    pub address: String,
    /// Its command port, or its claims port for a judged run.
    pub side_port: u16,
}

impl Served {
    /// Starts one with a command port, and returns once it listens; its record goes to a
    /// directory of its own under the target's.
    pub fn start() -> Self {
        Served::start_with(&[])
    }

    /// Starts one as [`Served::start`] does, given `args` too (`--servers 3`).
    pub fn start_with(args: &[&str]) -> Self {
        let out = out_dir("served");
        let out = out.to_str().expect("a path in UTF-8");
        let mut all = vec!["--command-port", "0", "--for", "300", "--out", out];
        all.extend_from_slice(args);
        Served::with(&all, "command port: ")
    }

    /// Starts one with a claims port and `args` (faults, a schedule) that ends a second after
    /// its last client left, writing its record to `out`.
    pub fn judged(args: &[&str], out: &Path) -> Self {
        let out = out.to_str().expect("a path in UTF-8");
        let mut all = vec!["--claims-port", "0", "--idle", "1", "--out", out];
        all.extend_from_slice(args);
        Served::with(&all, "claims port: ")
    }

    fn with(args: &[&str], side: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zklab"))
            .args(["serve", "--port", "0", "--container-check", "3600"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("zklab serve runs");
        let mut stdout = BufReader::new(child.stdout.take().expect("its stdout"));
        let mut line = || {
            let mut line = String::new();
            stdout.read_line(&mut line).expect("what it listens on");
            line.trim().to_owned()
        };
        let address = line();
        assert!(address.starts_with("127.0.0.1:"), "{address}");
        let side_line = line();
        let side_port = (side_line.strip_prefix(side))
            .and_then(|address| address.strip_prefix("127.0.0.1:"))
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("{side}127.0.0.1:<port>, not {side_line}"));
        Served {
            child,
            stdout,
            address,
            side_port,
        }
    }

    /// Waits for a judged run to end: its exit status and what it printed.
    pub fn verdict(mut self) -> (ExitStatus, String) {
        let mut printed = String::new();
        self.stdout
            .read_to_string(&mut printed)
            .expect("its verdict");
        (self.child.wait().expect("it ends"), printed)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A directory of its own, under the target's, for the record of one `zklab serve`.
pub fn out_dir(name: &str) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-{name}-{}-{run}", std::process::id()))
}

/// A schedule of faults `text`, written to a file of its own under the target's: its path.
pub fn schedule_file(name: &str, text: &str) -> PathBuf {
    let path = out_dir(name).with_extension("txt");
    std::fs::create_dir_all(path.parent().expect("a directory")).expect("the target's tmp");
    std::fs::write(&path, text).expect("the schedule written");
    path
}

/// The Python scripts of `tests/serve`.
pub fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serve")
}

/// The program of `zklab wild`'s kazoo drivers.
pub fn wild_driver() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/wild/kazoo_clients.py")
}

/// Whether python3 has kazoo. Without it the test says it was skipped; with
/// `ZKLAB_REQUIRE_KAZOO=1` (as in CI) it fails instead.
pub fn kazoo_or_skip(what: &str) -> bool {
    let has_kazoo = Command::new("python3")
        .args(["-c", "import kazoo"])
        .status()
        .is_ok_and(|status| status.success());
    if !has_kazoo {
        assert!(
            std::env::var_os("ZKLAB_REQUIRE_KAZOO").is_none(),
            "kazoo is required (ZKLAB_REQUIRE_KAZOO) but python3 cannot import it"
        );
        eprintln!("SKIPPED {what}: no kazoo for python3 (pip install kazoo)");
    }
    has_kazoo
}
