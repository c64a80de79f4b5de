//! The first frame each way: the client's `ConnectRequest` and the server's `ConnectResponse`.
//! A new session is asked for with session id 0; a known one is resumed with its id and
//! password. An expired or unknown session is answered with a timeout of 0.

use zklab_recipes::client::{SessionId, Zxid};

use super::archive::{JuteReader, JuteWriter, Malformed};

/// The only protocol version ZooKeeper speaks.
pub const PROTOCOL_VERSION: i32 = 0;

/// The length of the password a server hands out with a session.
pub const PASSWORD_LEN: usize = 16;

/// What a client sends to open or resume a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectRequest {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol_version: i32,
    /// The last zxid the client saw: a server behind it refuses the connection.
    pub last_zxid_seen: Zxid,
    /// The session timeout asked for, in milliseconds; the server bounds it.
    pub timeout_ms: i32,
    /// 0 for a new session, or the session to resume.
    pub session_id: SessionId,
    /// The resumed session's password; zeros for a new one.
    pub password: Vec<u8>,
    /// Whether the client accepts a read-only server. Old clients omit it.
    pub read_only: bool,
}

/// What the server answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectResponse {
    /// Always [`PROTOCOL_VERSION`].
    pub protocol_version: i32,
    /// The negotiated timeout, in milliseconds; 0 when the session is expired or unknown.
    pub timeout_ms: i32,
    /// The session's id; 0 with a timeout of 0.
    pub session_id: SessionId,
    /// The session's password.
    pub password: Vec<u8>,
    /// Whether the server is read-only.
    pub read_only: bool,
}

impl ConnectRequest {
    /// The request's bytes, without the frame's length prefix.
    pub fn encode(&self) -> Vec<u8> {
        let mut writer = JuteWriter::new();
        writer.int(self.protocol_version).long(self.last_zxid_seen);
        writer.int(self.timeout_ms).long(self.session_id);
        writer.buffer(Some(&self.password)).bool(self.read_only);
        writer.finish()
    }

    /// Reads a request; one without the read-only flag is not read-only.
    pub fn decode(bytes: &[u8]) -> Result<Self, Malformed> {
        let mut reader = JuteReader::new(bytes);
        let protocol_version = reader.int()?;
        let last_zxid_seen = reader.long()?;
        let timeout_ms = reader.int()?;
        let session_id = reader.long()?;
        let password = reader.buffer()?.unwrap_or_default();
        let read_only = !reader.is_done() && reader.bool()?;
        reader.done()?;
        Ok(ConnectRequest {
            protocol_version,
            last_zxid_seen,
            timeout_ms,
            session_id,
            password,
            read_only,
        })
    }
}

impl ConnectResponse {
    /// The response's bytes, without the frame's length prefix.
    pub fn encode(&self) -> Vec<u8> {
        let mut writer = JuteWriter::new();
        writer.int(self.protocol_version).int(self.timeout_ms);
        writer.long(self.session_id).buffer(Some(&self.password));
        writer.bool(self.read_only);
        writer.finish()
    }

    /// Reads a response; one without the read-only flag is not read-only.
    pub fn decode(bytes: &[u8]) -> Result<Self, Malformed> {
        let mut reader = JuteReader::new(bytes);
        let protocol_version = reader.int()?;
        let timeout_ms = reader.int()?;
        let session_id = reader.long()?;
        let password = reader.buffer()?.unwrap_or_default();
        let read_only = !reader.is_done() && reader.bool()?;
        reader.done()?;
        Ok(ConnectResponse {
            protocol_version,
            timeout_ms,
            session_id,
            password,
            read_only,
        })
    }
}
