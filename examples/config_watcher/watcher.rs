//! The code under test: a small configuration service of one's own. A writer publishes numbered
//! versions of a setting to one znode; watchers follow it until they have seen a given version.
//!
//! It carries a planted bug, switched by [`Follow::TrustLostRead`]: after a read that failed with
//! ConnectionLoss it waits for the read's watch. But a read whose reply never came may never
//! have set its watch (the request died with the connection, or the reply was lost), so nothing
//! ever wakes the watcher: it waits for good on a setting that has long moved on.

use zklab::recipes::client::{CreateMode, SessionEvent, ZkClient, ZkError, ZkEvent};

/// The setting's node.
pub const NODE: &str = "/app/config";

/// How a watcher takes a read that failed with ConnectionLoss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// Reads again: correct.
    ReadAgain,
    /// Waits for the watch the read may have set: the planted bug.
    TrustLostRead,
}

/// Publishes `version` of the setting, making its node if need be; retries through
/// ConnectionLoss (a write of the same value at any version is safe to repeat).
pub async fn publish(zk: &impl ZkClient, version: u32) -> Result<(), ZkError> {
    let data = version.to_string().into_bytes();
    loop {
        let written = match zk.set_data(NODE, &data, -1).await {
            Err(ZkError::NoNode) => make(zk, &data).await,
            other => other.map(|_| ()),
        };
        match written {
            Err(ZkError::ConnectionLoss) => continue,
            other => return other,
        }
    }
}

/// Makes the setting's node, and its parent, holding `data`.
async fn make(zk: &impl ZkClient, data: &[u8]) -> Result<(), ZkError> {
    match zk.create("/app", b"", CreateMode::Persistent).await {
        Ok(_) | Err(ZkError::NodeExists) => {}
        Err(error) => return Err(error),
    }
    match zk.create(NODE, data, CreateMode::Persistent).await {
        // Made by someone else (or by our own create whose reply was lost): write over it.
        Err(ZkError::NodeExists) => zk.set_data(NODE, data, -1).await.map(|_| ()),
        other => other.map(|_| ()),
    }
}

/// Follows the setting until it reaches version `last`: reads it with a watch, and again each
/// time the watch fires. Fails with SessionExpired when the session ends (follow again in a new
/// one).
pub async fn follow(zk: &impl ZkClient, last: u32, how: Follow) -> Result<u32, ZkError> {
    loop {
        let read = match zk.get_data(NODE, true).await {
            Ok((data, _)) => Some(version(&data)),
            // Not published yet: the watch of an `exists` fires when it is.
            Err(ZkError::NoNode) => match zk.exists(NODE, true).await {
                Ok(Some(_)) | Err(ZkError::ConnectionLoss) => continue,
                Ok(None) => None,
                Err(error) => return Err(error),
            },
            Err(ZkError::ConnectionLoss) if how == Follow::ReadAgain => continue,
            Err(ZkError::ConnectionLoss) => None,
            Err(error) => return Err(error),
        };
        if let Some(version) = read {
            tracing::info!(version, "read the setting");
        }
        if read == Some(last) {
            return Ok(last);
        }
        wait_for_watch(zk).await?;
    }
}

/// Waits for the next watch event; the session's end is an error.
async fn wait_for_watch(zk: &impl ZkClient) -> Result<(), ZkError> {
    loop {
        match zk.next_event().await {
            Some(ZkEvent::Watch(_)) => return Ok(()),
            Some(ZkEvent::Session(SessionEvent::Expired | SessionEvent::Closed)) | None => {
                return Err(ZkError::SessionExpired)
            }
            Some(ZkEvent::Session(_)) => {}
        }
    }
}

/// The version a node's data names.
fn version(data: &[u8]) -> u32 {
    std::str::from_utf8(data)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0)
}
