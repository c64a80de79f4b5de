//! The own-node part: one ephemeral sequential node `<dir>/<guid><marker><seq>` that a recipe
//! knows for its own even when the reply of its create was lost.
//!
//! A sequential create is not idempotent (each makes a new node), so after ConnectionLoss on it
//! the part syncs (the client may now talk to another server, which has not applied the create
//! yet), lists the children and adopts the node carrying its guid, or creates again if there is
//! none: a lost create reply never leaves a node nobody owns. It creates missing ancestors of
//! `dir` level by level, and reads an adopted node's stat for its czxid. The contender of a lock
//! or an election and the participant of a double barrier are made of it.
//!
//! The guid names one attempt, not a session; it must come from the machine's own deterministic
//! source so replays and symmetry reduction still work.

use crate::acl::Acls;
use crate::client::{CreateMode, Op, OpReply, OpResult, ZkError};
use crate::parts::parents::Parents;
use crate::session_renaming::RenameSessions;
use crate::subtree::child_path;

/// What the part asks of its owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Making {
    /// Send this op and feed its reply to [`OwnNode::on_reply`].
    Send(Op),
    /// The node is there: its path is [`OwnNode::path`], its czxid [`OwnNode::czxid`].
    Made,
    /// An error the part cannot handle.
    Failed(ZkError),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The create is in flight.
    Creating,
    /// The directory is missing: creating its ancestors.
    CreatingParent(Parents),
    /// After ConnectionLoss on create: bringing the server up to date (on an ensemble the
    /// client may now talk to a server that has not applied the create yet).
    Syncing,
    /// Then listing the children to find the node with our guid.
    Finding,
    /// Reading the stat of an adopted node, for its czxid.
    ReadingStat,
    Made,
}

/// One ephemeral sequential node of one attempt.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct OwnNode {
    #[rename(keep)]
    dir: String,
    #[rename(guid)]
    guid: String,
    marker: &'static str,
    phase: Phase,
    /// The node's full path, once known.
    path: Option<String>,
    #[rename(keep)]
    czxid: i64,
    /// How a missing directory is made: its ancestors as this mode, or (`None`) not at all, a
    /// missing directory being an error.
    parents: Option<CreateMode>,
}

impl OwnNode {
    /// The node `<dir>/<guid><marker><seq>` of one attempt. The marker (such as `-lock-`) tells
    /// these nodes from anything else in the directory.
    pub fn new(dir: &str, guid: String, marker: &'static str) -> Self {
        OwnNode {
            dir: dir.to_owned(),
            guid,
            marker,
            phase: Phase::Idle,
            path: None,
            czxid: 0,
            parents: Some(CreateMode::Persistent),
        }
    }

    /// The same node, its missing directory made with ancestors of mode `parents` (a container,
    /// as Curator 5 makes them), or with `None`, not made: then NoNode on the create is an error.
    pub fn making_parents(self, parents: Option<CreateMode>) -> Self {
        OwnNode { parents, ..self }
    }

    /// The directory the node lives in.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The node's full path, once created or adopted.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The node's child name, once created or adopted.
    pub fn name(&self) -> Option<&str> {
        self.path()?.rsplit('/').next()
    }

    /// The node's czxid, once created or adopted.
    pub fn czxid(&self) -> i64 {
        self.czxid
    }

    /// The server's sequence number of a child of the directory made by this part's kind, or
    /// `None` for a child without the marker.
    pub fn sequence_of(&self, name: &str) -> Option<i32> {
        let (_, sequence) = name.rsplit_once(self.marker)?;
        sequence.parse::<i32>().ok()
    }

    /// Creates the node (again, if the one it had is gone).
    pub fn create(&mut self) -> Making {
        self.phase = Phase::Creating;
        let mut path = child_path(&self.dir, &self.guid);
        path.push_str(self.marker);
        Making::Send(Op::Create {
            path,
            data: Vec::new(),
            mode: CreateMode::EphemeralSequential,
            acl: Acls::OPEN,
        })
    }

    fn create_parent(&mut self, (parents, op): (Parents, Op)) -> Making {
        self.phase = Phase::CreatingParent(parents);
        Making::Send(op)
    }

    /// Takes the reply to the op it asked for.
    pub fn on_reply(&mut self, reply: OpReply) -> Making {
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        match (phase, reply) {
            (Phase::Creating, Err(ZkError::ConnectionLoss)) => {
                self.phase = Phase::Syncing;
                Making::Send(Op::Sync {
                    path: self.dir.clone(),
                })
            }
            (Phase::Syncing, Ok(OpResult::Synced)) => {
                self.phase = Phase::Finding;
                Making::Send(Op::GetChildren {
                    path: self.dir.clone(),
                    watch: false,
                })
            }
            (Phase::Creating, Ok(OpResult::Created { path, stat })) => self.made(path, stat.czxid),
            // The directory is missing, or (a container) an ancestor went while making it.
            (Phase::Creating | Phase::CreatingParent(_), Err(ZkError::NoNode)) => {
                match self.parents {
                    Some(mode) => self.create_parent(Parents::start(&self.dir, mode)),
                    None => Making::Failed(ZkError::NoNode),
                }
            }
            // No directory, so no node of ours in it: start over, which creates the directory
            // (the first create's ConnectionLoss can come before anyone made it).
            (Phase::Finding, Err(ZkError::NoNode)) => self.create(),
            (Phase::CreatingParent(parents), Ok(_) | Err(ZkError::NodeExists)) => {
                match parents.next(&self.dir) {
                    Some(next) => self.create_parent(next),
                    None => self.create(),
                }
            }
            (Phase::Finding, Ok(OpResult::Children { children, .. })) => {
                let own = children
                    .iter()
                    .find(|c| c.starts_with(&self.guid) && c.contains(self.marker));
                match own {
                    Some(own) => {
                        let path = child_path(&self.dir, own);
                        self.path = Some(path.clone());
                        self.phase = Phase::ReadingStat;
                        Making::Send(Op::Exists { path, watch: false })
                    }
                    None => self.create(),
                }
            }
            (Phase::ReadingStat, Ok(OpResult::Exists(Some(stat)))) => {
                let path = self.path.clone().unwrap_or_default();
                self.made(path, stat.czxid)
            }
            (Phase::ReadingStat, Ok(OpResult::Exists(None))) => self.create(),
            (_, Err(error)) => Making::Failed(error),
            (_, Ok(_)) => Making::Failed(ZkError::MarshallingError),
        }
    }

    fn made(&mut self, path: String, czxid: i64) -> Making {
        self.phase = Phase::Made;
        self.path = Some(path);
        self.czxid = czxid;
        Making::Made
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Stat;

    fn op(making: Making) -> Op {
        match making {
            Making::Send(op) => op,
            other => panic!("expected an op, got {other:?}"),
        }
    }

    #[test]
    fn after_a_lost_create_reply_it_adopts_the_node_carrying_its_guid() {
        let mut node = OwnNode::new("/d", "g1".to_owned(), "-n-");
        node.create();
        let sync = op(node.on_reply(Err(ZkError::ConnectionLoss)));
        assert!(matches!(sync, Op::Sync { .. }));
        let list = op(node.on_reply(Ok(OpResult::Synced)));
        assert!(matches!(list, Op::GetChildren { .. }));
        let children = Ok(OpResult::Children {
            children: vec!["g0-n-0000000001".to_owned(), "g1-n-0000000002".to_owned()],
            stat: Stat::default(),
        });
        let read = op(node.on_reply(children));
        assert_eq!(read.path(), "/d/g1-n-0000000002");
        let stat = Stat {
            czxid: 9,
            ..Stat::default()
        };
        assert_eq!(
            node.on_reply(Ok(OpResult::Exists(Some(stat)))),
            Making::Made
        );
        assert_eq!(node.name(), Some("g1-n-0000000002"));
        assert_eq!(
            (node.czxid(), node.sequence_of("g1-n-0000000002")),
            (9, Some(2))
        );
    }

    #[test]
    fn with_no_node_of_its_own_found_it_creates_again() {
        let mut node = OwnNode::new("/d", "g1".to_owned(), "-n-");
        node.create();
        node.on_reply(Err(ZkError::ConnectionLoss));
        node.on_reply(Ok(OpResult::Synced));
        let children = Ok(OpResult::Children {
            children: vec!["g0-n-0000000001".to_owned()],
            stat: Stat::default(),
        });
        assert!(matches!(op(node.on_reply(children)), Op::Create { .. }));
    }
}
