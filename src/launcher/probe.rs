//! Asking a server what it is, with the `srvr` four-letter word.
//!
//! `srvr` answers with a `Mode:` line only once the server serves: during leader election it
//! says "not currently serving requests". `ruok` answers `imok` earlier than that, so it cannot
//! tell a test that the server is ready.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long one probe may take; a healthy server on loopback answers in milliseconds.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// A serving server's role, as `srvr` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A single server outside any quorum.
    Standalone,
    /// The quorum's leader.
    Leader,
    /// A voting member that follows the leader.
    Follower,
    /// A non-voting member that follows the leader.
    Observer,
    /// A member cut off from its quorum that serves reads only.
    ReadOnly,
}

impl Mode {
    /// The mode in a `srvr` reply, if it has one.
    fn of_reply(reply: &str) -> Option<Mode> {
        let word = reply.lines().find_map(|line| line.strip_prefix("Mode:"))?;
        match word.trim() {
            "standalone" => Some(Mode::Standalone),
            "leader" => Some(Mode::Leader),
            "follower" => Some(Mode::Follower),
            "observer" => Some(Mode::Observer),
            "read-only" => Some(Mode::ReadOnly),
            _ => None,
        }
    }
}

/// The whole `srvr` reply of the server whose client port is `port` on 127.0.0.1.
pub fn srvr(port: u16) -> io::Result<String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT))?;
    stream.write_all(b"srvr")?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(reply)
}

/// The mode of the server at client port `port`, or `None` when it does not answer or does not
/// serve yet.
pub fn probe_mode(port: u16) -> Option<Mode> {
    Mode::of_reply(&srvr(port).ok()?)
}
