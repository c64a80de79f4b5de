//! Creating a directory's missing ancestors, top down, one create at a time: what a recipe does
//! when the create of its own node fails with NoNode.

use crate::acl::Acls;
use crate::client::{CreateMode, Op};
use crate::session_renaming::RenameSessions;

/// The directory a node `path` lives in (`/` for a top-level node): what to create when the
/// node's create fails with NoNode.
pub fn dir_of(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((dir, _)) => dir,
    }
}

/// Whether `path` is `top` or a node under it (what a recursive watch on `top` reaches).
pub fn at_or_under(path: &str, top: &str) -> bool {
    top == "/"
        || path
            .strip_prefix(top)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The ancestors of a directory being created, each of `mode` (persistent, or a container as
/// Curator 5 makes them): the one in flight is `depth` components deep (1 is the top component).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Parents {
    depth: usize,
    mode: CreateMode,
}

impl Parents {
    /// Starts at the top component of `dir`, each ancestor made as `mode`; returns the create
    /// to send.
    pub fn start(dir: &str, mode: CreateMode) -> (Self, Op) {
        let parents = Parents { depth: 1, mode };
        (parents, parents.create(dir))
    }

    /// The create in flight made its node, or found it there: the next create, or `None` once
    /// `dir` itself exists.
    pub fn next(self, dir: &str) -> Option<(Self, Op)> {
        if self.depth >= dir.matches('/').count() {
            return None;
        }
        let parents = Parents {
            depth: self.depth + 1,
            ..self
        };
        Some((parents, parents.create(dir)))
    }

    fn create(self, dir: &str) -> Op {
        let end = dir
            .match_indices('/')
            .nth(self.depth)
            .map_or(dir.len(), |(i, _)| i);
        Op::Create {
            path: dir[..end].to_owned(),
            data: Vec::new(),
            mode: self.mode,
            acl: Acls::OPEN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(op: &Op) -> &str {
        op.path()
    }

    #[test]
    fn ancestors_are_created_top_down_ending_with_the_directory() {
        let (first, op) = Parents::start("/a/b/c", CreateMode::Persistent);
        assert_eq!(path(&op), "/a");
        let (second, op) = first.next("/a/b/c").expect("/a/b");
        assert_eq!(path(&op), "/a/b");
        let (third, op) = second.next("/a/b/c").expect("/a/b/c");
        assert_eq!(path(&op), "/a/b/c");
        assert_eq!(third.next("/a/b/c"), None);
        let (top, op) = Parents::start("/d", CreateMode::Container);
        assert!(matches!(
            op,
            Op::Create {
                mode: CreateMode::Container,
                ..
            }
        ));
        assert_eq!(path(&op), "/d");
        assert_eq!(top.next("/d"), None);
    }
}
