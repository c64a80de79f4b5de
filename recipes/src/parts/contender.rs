//! The contender part: getting in line under a directory, the way ZooKeeper's lock and election
//! recipes do, with the fixes real implementations learned the hard way.
//!
//! A contender makes its own ephemeral sequential node `<dir>/<guid><marker><seq>` (see
//! [`super::own_node`]: a lost create reply must not leave a node nobody owns). It lists the
//! children, orders contenders by sequence number (never by name: names start with
//! guids), and is first in line, or watches its immediate predecessor with `exists` and lists
//! again once that is gone (never assuming it is next).
//!
//! Sequence numbers are compared as serial numbers from the contender's own (RFC 1982): a directory's 32-bit counter that wrapped
//! past `i32::MAX` still sorts the newer nodes after the older ones, as long as the live
//! contenders span less than 2^31 creations.
//!
//! The part is a sub-machine: its owner sends the ops it asks for and feeds back their replies
//! and the watch events, after handling ConnectionLoss on idempotent ops and session ends itself
//! (see [`super::link`]).

use crate::client::{EventType, Op, OpReply, OpResult, WatchedEvent, ZkError};
use crate::parts::own_node::{Making, OwnNode};
use crate::symmetry::RenameSessions;

/// What the contender asks of its owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Send this op and feed its reply to [`Contender::on_reply`].
    Send(Op),
    /// Nothing to do until a watch event.
    Wait,
    /// First in line. `token` is the node's czxid: it grows from one first contender to the next.
    First {
        /// The fencing token.
        token: i64,
    },
    /// An error the part cannot handle.
    Failed(ZkError),
}

/// Where the contender is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    /// Not started.
    Idle,
    /// Its node is being made (see [`OwnNode`]).
    Joining,
    /// Listing the children to see who is first.
    Listing,
    /// Watching the predecessor: the exists is in flight (`asked`), or set and waiting.
    Watching {
        /// The predecessor's child name.
        predecessor: String,
        /// The exists is still in flight.
        asked: bool,
    },
    /// First in line: the part has done its work.
    First,
}

/// One contender in line under a directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Contender {
    own: OwnNode,
    phase: Phase,
    /// The predecessor went while the exists was still in flight: list again when it returns.
    relist: bool,
}

impl Contender {
    /// A contender under `dir` whose node is named `<guid><marker><seq>`. The marker (such as
    /// `-lock-`) tells contender nodes from anything else in the directory.
    pub fn new(dir: &str, guid: String, marker: &'static str) -> Self {
        Contender {
            own: OwnNode::new(dir, guid, marker),
            phase: Phase::Idle,
            relist: false,
        }
    }

    /// The path of the contender node, once created or adopted.
    pub fn node(&self) -> Option<&str> {
        self.own.path()
    }

    /// Whether it waits, its watch set, for its predecessor to go.
    pub fn is_waiting(&self) -> bool {
        matches!(self.phase, Phase::Watching { asked: false, .. })
    }

    /// Gets in line: creates the contender node.
    pub fn start(&mut self) -> Verdict {
        self.create()
    }

    fn create(&mut self) -> Verdict {
        let making = self.own.create();
        self.joining(making)
    }

    /// Does what the own-node part asks; once the node is there, lists.
    fn joining(&mut self, making: Making) -> Verdict {
        match making {
            Making::Send(op) => {
                self.phase = Phase::Joining;
                Verdict::Send(op)
            }
            Making::Made => self.list(),
            Making::Failed(error) => Verdict::Failed(error),
        }
    }

    fn list(&mut self) -> Verdict {
        self.relist = false;
        self.phase = Phase::Listing;
        Verdict::Send(Op::GetChildren {
            path: self.own.dir().to_owned(),
            watch: false,
        })
    }

    /// Takes the reply to the op it asked for.
    pub fn on_reply(&mut self, reply: OpReply) -> Verdict {
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        match (phase, reply) {
            (Phase::Joining, reply) => {
                let making = self.own.on_reply(reply);
                self.joining(making)
            }
            // The directory is gone, and our node with it: start over.
            (Phase::Listing, Err(ZkError::NoNode)) => self.create(),
            (Phase::Listing, Ok(OpResult::Children { children, .. })) => self.decide(children),
            (Phase::Watching { predecessor, .. }, Ok(OpResult::Exists(stat))) => {
                if stat.is_none() || self.relist {
                    self.list()
                } else {
                    self.phase = Phase::Watching {
                        predecessor,
                        asked: false,
                    };
                    Verdict::Wait
                }
            }
            (_, Err(error)) => Verdict::Failed(error),
            (_, Ok(_)) => Verdict::Failed(ZkError::MarshallingError),
        }
    }

    /// Decides from a listing: first in line, or watch the immediate predecessor.
    fn decide(&mut self, children: Vec<String>) -> Verdict {
        let own = self.own.name().unwrap_or_default().to_owned();
        let Some(own_seq) = self.own.sequence_of(&own) else {
            return self.create();
        };
        // Serial-number order from our own sequence: predecessors are behind us.
        let mut contenders: Vec<(i32, String)> = children
            .into_iter()
            .filter_map(|name| {
                let seq = self.own.sequence_of(&name)?;
                Some((seq.wrapping_sub(own_seq), name))
            })
            .collect();
        contenders.sort();
        let Some(position) = contenders.iter().position(|(_, name)| *name == own) else {
            // Our node is not among the children (the directory was deleted and made again under
            // us): get in line anew.
            return self.create();
        };
        if position == 0 {
            self.phase = Phase::First;
            return Verdict::First {
                token: self.own.czxid(),
            };
        }
        let predecessor = contenders[position - 1].1.clone();
        let path = format!("{}/{}", self.own.dir(), predecessor);
        self.phase = Phase::Watching {
            predecessor,
            asked: true,
        };
        Verdict::Send(Op::Exists { path, watch: true })
    }

    /// Takes a watch event: the predecessor's deletion sends it to list again.
    pub fn on_watch(&mut self, event: &WatchedEvent) -> Verdict {
        let Phase::Watching { predecessor, asked } = &self.phase else {
            return Verdict::Wait;
        };
        let gone = event.event_type == EventType::NodeDeleted
            && event
                .path
                .strip_prefix(self.own.dir())
                .and_then(|p| p.strip_prefix('/'))
                == Some(predecessor.as_str());
        if !gone {
            Verdict::Wait
        } else if *asked {
            self.relist = true;
            Verdict::Wait
        } else {
            self.list()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Stat;

    fn in_line(own: &str) -> Contender {
        let mut contender = Contender::new("/d", "g".to_owned(), "-n-");
        contender.start();
        contender.on_reply(Ok(OpResult::Created {
            path: format!("/d/{own}"),
            stat: Stat::default(),
        }));
        contender
    }

    fn listing(names: &[&str]) -> OpReply {
        Ok(OpResult::Children {
            children: names.iter().map(|n| n.to_string()).collect(),
            stat: Stat::default(),
        })
    }

    #[test]
    fn a_counter_that_wrapped_past_i32_max_still_orders_newer_nodes_last() {
        let mut contender = in_line("g-n-2147483646");
        // Created after us: the counter went past i32::MAX and wrapped to negative numbers.
        let verdict = contender.on_reply(listing(&["b-n--2147483648", "g-n-2147483646"]));
        assert_eq!(verdict, Verdict::First { token: 0 });
        let mut later = in_line("b-n--2147483648");
        let verdict = later.on_reply(listing(&["b-n--2147483648", "g-n-2147483646"]));
        let watch = Op::Exists {
            path: "/d/g-n-2147483646".to_owned(),
            watch: true,
        };
        assert_eq!(verdict, Verdict::Send(watch));
    }

    #[test]
    fn children_without_the_marker_are_not_contenders() {
        let mut contender = in_line("g-n-0000000002");
        let verdict = contender.on_reply(listing(&["readme", "g-n-0000000002"]));
        assert_eq!(verdict, Verdict::First { token: 0 });
    }
}
