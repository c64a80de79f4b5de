//! Free TCP ports on 127.0.0.1, asked of the kernel rather than guessed.

use std::io;
use std::net::TcpListener;

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
