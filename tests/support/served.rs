//! `zklab serve` as a test starts it: on a free port, with a command port on another, killed
//! when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A `zklab serve` process on free ports, killed when dropped.
pub struct Served {
    child: Child,
    /// Where it listens: `127.0.0.1:PORT`.
    pub address: String,
    /// Its command port.
    pub command_port: u16,
}

impl Served {
    /// Starts one, and returns once it listens.
    pub fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zklab"))
            .args(["serve", "--port", "0", "--command-port", "0"])
            .args(["--container-check", "3600", "--for", "300"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("zklab serve runs");
        let mut stdout = BufReader::new(child.stdout.take().expect("its stdout"));
        let mut line = || {
            let mut line = String::new();
            stdout
                .read_line(&mut line)
                .expect("an address it listens on");
            let line = line.trim().to_owned();
            assert!(line.starts_with("127.0.0.1:"), "{line}");
            line
        };
        let address = line();
        let commands = line();
        let command_port = commands[10..].parse().expect("a port");
        Served {
            child,
            address,
            command_port,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
