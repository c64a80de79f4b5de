//! What can go wrong when launching a real server, as values: a test decides whether to fail.

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use super::installation::INSTALL_HINT;

/// Why a real server could not be found, started, probed or stopped.
#[derive(Debug)]
pub enum LaunchError {
    /// No ZooKeeper (or no `java`) where we looked; the text says where.
    NotInstalled(String),
    /// A file, port or process step failed.
    Io {
        /// What the launcher was doing.
        doing: String,
        /// The underlying failure.
        source: io::Error,
    },
    /// A server exited before it served.
    Exited {
        /// Which server ("standalone", "member 2").
        server: String,
        /// How it ended.
        status: ExitStatus,
        /// The last lines of its log.
        log_tail: String,
    },
    /// Servers did not reach the awaited state within the bound.
    Timeout {
        /// The awaited state.
        waiting_for: String,
        /// How long the launcher waited.
        after: Duration,
        /// The last lines of the logs of the servers that were not ready.
        log_tail: String,
    },
    /// An ensemble of no members was asked for.
    EmptyEnsemble,
    /// The controller's command port did not carry out a command.
    Refused {
        /// The command's path.
        command: String,
        /// The status line it answered (empty if none).
        status: String,
    },
    /// A member index outside the ensemble.
    NoSuchMember {
        /// The index asked for.
        member: usize,
        /// The ensemble's size.
        size: usize,
    },
}

impl LaunchError {
    /// An I/O failure while `doing` something.
    pub(crate) fn io(doing: impl Into<String>, source: io::Error) -> Self {
        LaunchError::Io {
            doing: doing.into(),
            source,
        }
    }

    /// Whether a server died because one of its ports was taken between our probe and its bind:
    /// the one failure a fresh set of ports cures.
    pub(crate) fn is_port_clash(&self) -> bool {
        matches!(self, LaunchError::Exited { log_tail, .. }
            if log_tail.contains("Address already in use"))
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::NotInstalled(why) => write!(f, "{why}; {INSTALL_HINT}"),
            LaunchError::Io { doing, source } => write!(f, "{doing}: {source}"),
            LaunchError::Exited {
                server,
                status,
                log_tail,
            } => write!(
                f,
                "{server} exited ({status}) before serving; its log ends:\n{log_tail}"
            ),
            LaunchError::Timeout {
                waiting_for,
                after,
                log_tail,
            } => write!(f, "no {waiting_for} after {after:?}; logs end:\n{log_tail}"),
            LaunchError::EmptyEnsemble => write!(f, "an ensemble needs at least one member"),
            LaunchError::Refused { command, status } => {
                write!(f, "the controller refused {command}: `{status}`")
            }
            LaunchError::NoSuchMember { member, size } => {
                write!(f, "no member {member} in an ensemble of {size}")
            }
        }
    }
}

impl std::error::Error for LaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LaunchError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
