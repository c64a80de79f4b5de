//! Whole subtrees over any [`ZkClient`]: read one, delete one. ZooKeeper itself has neither.

use crate::client::{Stat, ZkClient, ZkError};

/// A node as read: its path, data and stat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Znode {
    /// Its path.
    pub path: String,
    /// Its data.
    pub data: Vec<u8>,
    /// Its stat.
    pub stat: Stat,
}

/// `path` and its descendants, parents first, children in name order; nodes that vanish while
/// it reads are left out, and a missing `path` gives an empty list.
pub async fn read_tree(client: &impl ZkClient, path: &str) -> Vec<Znode> {
    let mut tree = Vec::new();
    let mut pending = vec![path.to_owned()];
    while let Some(path) = pending.pop() {
        let Ok((data, stat)) = client.get_data(&path, false).await else {
            continue;
        };
        if let Ok(mut children) = client.get_children(&path, false).await {
            children.sort();
            let base = if path == "/" { "" } else { path.as_str() };
            pending.extend(children.iter().rev().map(|child| format!("{base}/{child}")));
        }
        tree.push(Znode { path, data, stat });
    }
    tree
}

/// Deletes `path` and everything under it, children first; nodes already gone are fine.
pub async fn delete_tree(client: &impl ZkClient, path: &str) -> Result<(), ZkError> {
    for node in read_tree(client, path).await.iter().rev() {
        match client.delete(&node.path, -1).await {
            Ok(()) | Err(ZkError::NoNode) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
