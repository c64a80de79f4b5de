//! `zklab serve` as a test starts it: on a free port, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A `zklab serve` process on a free port, killed when dropped.
pub struct Served {
    child: Child,
    /// Where it listens: `127.0.0.1:PORT`.
    pub address: String,
}

impl Served {
    /// Starts one, and returns once it listens.
    pub fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zklab"))
            .args([
                "serve",
                "--port",
                "0",
                "--container-check",
                "3600",
                "--for",
                "300",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("zklab serve runs");
        let stdout = child.stdout.take().expect("its stdout");
        let mut address = String::new();
        BufReader::new(stdout)
            .read_line(&mut address)
            .expect("the address it listens on");
        let address = address.trim().to_owned();
        assert!(address.starts_with("127.0.0.1:"), "{address}");
        Served { child, address }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
