//! Standard output that a closed pipe ends quietly instead of crashing: `zklab list | head -1`
//! reads one line and closes the pipe. What is left to print is dropped, the command finishes
//! (so a server it started is stopped), and it exits with its own status. Any other failure to
//! write is told on stderr and fails the command, so that a report cut short never passes for a
//! whole one.

use std::fmt;
use std::io::{self, ErrorKind, Write};
use std::process::ExitCode;
use std::sync::Mutex;

/// What became of standard output, once a write to it failed.
static FAILED: Mutex<Option<io::Error>> = Mutex::new(None);

/// Prints to standard output, as `print!` does, unless it can no longer be written to.
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::stdout::write(format_args!($($arg)*)) };
}

/// Prints a line to standard output, as `println!` does, unless it can no longer be written to.
macro_rules! outln {
    () => { $crate::cli::stdout::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::stdout::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// Writes `text`; after the first failure, nothing more.
pub(crate) fn write(text: fmt::Arguments) {
    let mut failed = FAILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if failed.is_none() {
        if let Err(error) = io::stdout().lock().write_fmt(text) {
            *failed = Some(error);
        }
    }
}

/// The command's exit status once standard output is flushed: its own when everything was
/// written or the reader closed the pipe; 2 when output was lost otherwise.
pub(crate) fn finish(status: ExitCode) -> ExitCode {
    let mut failed = FAILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if failed.is_none() {
        if let Err(error) = io::stdout().lock().flush() {
            *failed = Some(error);
        }
    }
    match failed.take() {
        Some(error) if error.kind() != ErrorKind::BrokenPipe => {
            eprintln!("error: could not write to standard output: {error}");
            if status == ExitCode::SUCCESS {
                ExitCode::from(2)
            } else {
                status
            }
        }
        _ => status,
    }
}
