//! Free TCP ports on 127.0.0.1, asked of the kernel rather than guessed, and starting again on
//! fresh ones when another process took one first.

use std::io;
use std::net::TcpListener;

use super::error::LaunchError;

/// `count` distinct ports that were free a moment ago. All are held open together while they
/// are collected, so the kernel cannot hand out one twice; they are released on return, and a
/// server that loses one in the gap fails with a port clash that its launcher retries.
pub(crate) fn free_ports(count: usize) -> io::Result<Vec<u16>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind(("127.0.0.1", 0)))
        .collect::<io::Result<Vec<_>>>()?;
    listeners
        .iter()
        .map(|listener| listener.local_addr().map(|addr| addr.port()))
        .collect()
}

/// Attempts at starting on fresh ports when another process took one first.
const PORT_ATTEMPTS: usize = 3;

/// Runs `start` (which picks free ports) again while a server dies of a port another process
/// took between the probe and the bind: the one failure fresh ports cure.
pub(crate) fn on_fresh_ports<T>(
    mut start: impl FnMut() -> Result<T, LaunchError>,
) -> Result<T, LaunchError> {
    let mut attempt = 1;
    loop {
        match start() {
            Err(e) if e.is_port_clash() && attempt < PORT_ATTEMPTS => attempt += 1,
            result => return result,
        }
    }
}
