//! Following a node: read it with a watch, and read it again on every event, as a
//! configuration's reader follows its value and a group member follows the membership.
//!
//! An event that comes while a read is in flight makes the part read once more when the answer
//! comes, since that answer may predate the change. A missing node is watched with `exists`
//! until it is made.

use crate::client::{Op, OpReply, OpResult, SessionEvent, ZkError, ZkEvent};
use crate::parts::link::{Connection, Link};
use crate::session_renaming::RenameSessions;

/// What is read of the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum Reading {
    /// Its data (`getData`).
    Data,
    /// Its children (`getChildren`).
    Children,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// A read (with a watch) is in flight; `again` once news came meanwhile.
    Reading {
        again: bool,
    },
    /// The node is missing: an `exists` watch is being set; `again` as for a read.
    Missing {
        again: bool,
    },
    /// The watch is set: waiting for news.
    Watching,
}

/// What the part makes of a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Followed {
    /// Send this op (through the recipe's link).
    Send(Op),
    /// The node as read now; the part is watching it.
    Read(OpResult),
    /// Nothing to do until news comes.
    Wait,
    /// ZooKeeper answered with an error the part cannot handle (`MarshallingError` for an
    /// answer of the wrong kind).
    Failed(ZkError),
}

/// What a following recipe hears in an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// The session ended: the recipe is done.
    Lost,
    /// Send this read (already through the recipe's link).
    Send(Op),
    /// Nothing to do.
    Nothing,
}

/// Follows one node.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Follow {
    #[rename(keep)]
    path: String,
    reading: Reading,
    phase: Phase,
}

impl Follow {
    /// Follows the node `path`, reading `reading`; nothing is sent until [`Follow::read`].
    pub fn new(path: &str, reading: Reading) -> Self {
        Follow {
            path: path.to_owned(),
            reading,
            phase: Phase::Idle,
        }
    }

    /// The node followed: a watch event on it is news.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Reads the node now, with a watch: the op to send.
    pub fn read(&mut self) -> Op {
        self.phase = Phase::Reading { again: false };
        let path = self.path.clone();
        match self.reading {
            Reading::Data => Op::GetData { path, watch: true },
            Reading::Children => Op::GetChildren { path, watch: true },
        }
    }

    /// The reply to the part's op.
    pub fn on_reply(&mut self, reply: OpReply) -> Followed {
        match (std::mem::replace(&mut self.phase, Phase::Idle), reply) {
            (Phase::Reading { again: true } | Phase::Missing { again: true }, Ok(_)) => {
                Followed::Send(self.read())
            }
            (Phase::Reading { .. }, Ok(result)) => {
                self.phase = Phase::Watching;
                Followed::Read(result)
            }
            (Phase::Reading { .. }, Err(ZkError::NoNode)) => {
                self.phase = Phase::Missing { again: false };
                Followed::Send(Op::Exists {
                    path: self.path.clone(),
                    watch: true,
                })
            }
            (Phase::Missing { .. }, Ok(OpResult::Exists(Some(_)))) => Followed::Send(self.read()),
            (Phase::Missing { .. }, Ok(OpResult::Exists(None))) => {
                self.phase = Phase::Watching;
                Followed::Wait
            }
            (_, Err(error)) => Followed::Failed(error),
            (_, Ok(_)) => Followed::Failed(ZkError::MarshallingError),
        }
    }

    /// A watch on the node fired: the op to send now, if any (a read in flight is sent again
    /// once answered).
    pub fn on_news(&mut self) -> Option<Op> {
        match self.phase {
            Phase::Watching => Some(self.read()),
            Phase::Reading { .. } => {
                self.phase = Phase::Reading { again: true };
                None
            }
            Phase::Missing { .. } => {
                self.phase = Phase::Missing { again: true };
                None
            }
            Phase::Idle => None,
        }
    }

    /// Back in the same session after a disconnection: an event may have gone unheard while
    /// away, so a watching part reads again; the op to send, if any.
    pub fn on_reconnected(&mut self) -> Option<Op> {
        (self.phase == Phase::Watching).then(|| self.read())
    }

    /// An event while following: a watch on the node fired ([`Follow::on_news`]), or the client
    /// is back in its session ([`Follow::on_reconnected`]); the op to send, if any.
    pub fn on_event(&mut self, event: &ZkEvent) -> Option<Op> {
        match event {
            ZkEvent::Watch(watched) if watched.path == self.path => self.on_news(),
            ZkEvent::Session(SessionEvent::SyncConnected) => self.on_reconnected(),
            _ => None,
        }
    }

    /// An event for a recipe whose connection is `link`: the link hears of the session first
    /// (one that ended ends the recipe), then, while the recipe is `following`, the part.
    pub fn hear(&mut self, link: &mut Link, following: bool, event: &ZkEvent) -> Heard {
        if let ZkEvent::Session(state) = event {
            if link.on_session(*state, false) == Some(Connection::Lost) {
                return Heard::Lost;
            }
        }
        match following.then(|| self.on_event(event)).flatten() {
            Some(read) => Heard::Send(link.send(read)),
            None => Heard::Nothing,
        }
    }

    /// Stops following: news is no longer read (and the part keeps nothing of its last read).
    pub fn stop(&mut self) {
        self.phase = Phase::Idle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn follow() -> Follow {
        Follow::new("/group", Reading::Children)
    }

    fn children(names: &[&str]) -> OpResult {
        OpResult::Children {
            children: names.iter().map(|name| (*name).to_owned()).collect(),
            stat: Default::default(),
        }
    }

    #[test]
    fn news_during_a_read_reads_once_more_before_telling() {
        let mut part = follow();
        assert!(matches!(part.read(), Op::GetChildren { watch: true, .. }));
        assert_eq!(part.on_news(), None);
        assert!(matches!(
            part.on_reply(Ok(children(&["a"]))),
            Followed::Send(Op::GetChildren { .. })
        ));
        assert_eq!(
            part.on_reply(Ok(children(&["a", "b"]))),
            Followed::Read(children(&["a", "b"]))
        );
        assert!(matches!(part.on_news(), Some(Op::GetChildren { .. })));
    }

    #[test]
    fn a_missing_node_is_watched_until_made_and_a_reconnect_reads_again_only_when_watching() {
        let mut part = follow();
        part.read();
        assert_eq!(part.on_reconnected(), None);
        assert!(matches!(
            part.on_reply(Err(ZkError::NoNode)),
            Followed::Send(Op::Exists { watch: true, .. })
        ));
        assert_eq!(part.on_reply(Ok(OpResult::Exists(None))), Followed::Wait);
        assert!(matches!(
            part.on_reconnected(),
            Some(Op::GetChildren { .. })
        ));
        assert_eq!(
            part.on_reply(Err(ZkError::NoAuth)),
            Followed::Failed(ZkError::NoAuth)
        );
    }
}
