//! The `zklab` binary as a user runs it, for the tests of the command line.

use std::process::{Command, Output};

/// Runs zklab with `args`, with no `RUST_LOG` of the caller's to print trace lines.
pub fn zklab(args: &[&str]) -> Output {
    zklab_logging(args, None)
}

/// Runs zklab with `args` and `RUST_LOG` set to `log`, or unset.
pub fn zklab_logging(args: &[&str], log: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zklab"));
    command.args(args).env_remove("RUST_LOG");
    if let Some(log) = log {
        command.env("RUST_LOG", log);
    }
    command.output().expect("zklab runs")
}
