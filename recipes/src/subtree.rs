//! Paths of children, and whole subtrees over any [`ZkClient`]: read one, delete one. ZooKeeper
//! itself has neither.

use crate::client::{Stat, ZkClient, ZkError};

/// `dir`, a '/' and `name`: the path of child `name` of `dir`, for any `dir` but the root (whose
/// children's paths are `""` joined to their names). Recipes build a child's path on almost
/// every step, and `format!` costs several times as much.
pub fn child_path(dir: &str, name: &str) -> String {
    let mut path = String::with_capacity(dir.len() + 1 + name.len());
    path.push_str(dir);
    path.push('/');
    path.push_str(name);
    path
}

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
/// it reads are left out, and a missing `path` gives an empty list. Any other error ends the
/// read: a tree read in part could hide what a caller looks for.
pub async fn read_tree(client: &impl ZkClient, path: &str) -> Result<Vec<Znode>, ZkError> {
    let mut tree = Vec::new();
    let mut pending = vec![path.to_owned()];
    while let Some(path) = pending.pop() {
        let (data, stat) = match client.get_data(&path, false).await {
            Ok(read) => read,
            Err(ZkError::NoNode) => continue,
            Err(error) => return Err(error),
        };
        match client.get_children(&path, false).await {
            Ok(mut children) => {
                children.sort();
                let base = if path == "/" { "" } else { path.as_str() };
                pending.extend(children.iter().rev().map(|child| child_path(base, child)));
            }
            Err(ZkError::NoNode) => {}
            Err(error) => return Err(error),
        }
        tree.push(Znode { path, data, stat });
    }
    Ok(tree)
}

/// Deletes `path` and everything under it, children first; nodes already gone are fine.
pub async fn delete_tree(client: &impl ZkClient, path: &str) -> Result<(), ZkError> {
    for node in read_tree(client, path).await?.iter().rev() {
        match client.delete(&node.path, -1).await {
            Ok(()) | Err(ZkError::NoNode) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
