//! A service that registers itself under `/services` while it runs: production code written on
//! zklab's client trait, with no simulator in its build.

use zklab_recipes::prelude::*;

/// Where services register.
pub const SERVICES: &str = "/services";

/// Registers `name` as an ephemeral node under [`SERVICES`], making the directory if need be, and
/// returns the node's path. A call that fails with ConnectionLoss is tried again, and NodeExists
/// after a lost create is the create that was applied.
pub async fn register(client: &impl ZkClient, name: &str) -> Result<String, ZkError> {
    loop {
        match client.create(SERVICES, b"", CreateMode::Persistent).await {
            Ok(_) | Err(ZkError::NodeExists) => break,
            Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
    }
    let path = format!("{SERVICES}/{name}");
    let mut retried = false;
    loop {
        match client.create(&path, b"up", CreateMode::Ephemeral).await {
            Ok(_) => return Ok(path),
            Err(ZkError::NodeExists) if retried => return Ok(path),
            Err(ZkError::ConnectionLoss) => retried = true,
            Err(error) => return Err(error),
        }
    }
}
