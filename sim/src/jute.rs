//! ZooKeeper's client protocol as bytes: jute records, each frame a 4-byte big-endian length then
//! the record, as `zookeeper.jute` and ZooKeeper's `ClientCnxn` and `FinalRequestProcessor`
//! write them. No I/O: a client or a server reads and writes the frames, this module turns them
//! into zklab's [`Op`](zklab_recipes::client::Op)s and replies and back.
//!
//! - [`handshake`]: the connect request and response that open (or resume) a session.
//! - [`request`]: what a client sends after it, one frame each: ops, pings, setWatches, close.
//! - [`reply`]: what a server sends back: a reply header, then the op's result; notifications.
//! - [`archive`]: jute's primitives, and why bytes are not a record ([`archive::Malformed`]).
//! - [`codes`]: the numbers on the wire (op codes, special xids, create flags, event types).
//!
//! Decoding never panics: truncated, oversized or nonsensical bytes are a [`archive::Malformed`].

pub mod archive;
pub mod codes;
pub mod handshake;
pub mod reply;
pub mod request;
#[cfg(test)]
mod tests;
