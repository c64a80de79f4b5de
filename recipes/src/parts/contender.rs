//! The contender part: getting in line under a directory, the way ZooKeeper's lock and election
//! recipes do, with the fixes real implementations learned the hard way.
//!
//! A contender makes its own ephemeral sequential node `<dir>/<guid><marker><seq>` (see
//! [`super::own_node`]: a lost create reply must not leave a node nobody owns). It lists the
//! children, orders contenders by sequence number (never by name: names start with
//! guids), and goes, or watches the node it waits for with `exists` and lists again once that
//! is gone (never assuming it may go). Its [`Line`] says which nodes are in line and when it may
//! go: an exclusive contender goes first in line and waits for its immediate predecessor; a
//! reader of a read/write lock goes when no writer is ahead and waits for the closest one.
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

/// The line a contender gets into: which nodes of the directory are in it, and when it may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Line {
    /// The marker of the contender's own node (such as `-lock-`).
    pub marker: &'static str,
    /// The markers of every node in line, its own among them: children with none of them are
    /// not contenders.
    pub kin: &'static [&'static str],
    /// When it may go.
    pub gate: Gate,
}

/// When a contender may go, and which node it waits for until then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gate {
    /// First in line; until then it waits for its immediate predecessor, so one deletion wakes
    /// one waiter.
    First,
    /// When no node with this marker is ahead of it; until then it waits for the closest such
    /// node ahead (the readers behind one writer all go when it goes: that is no herd).
    NoneAhead(&'static str),
}

/// What the contender asks of its owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Send this op and feed its reply to [`Contender::on_reply`].
    Send(Op),
    /// Nothing to do until a watch event.
    Wait,
    /// It may go. `token` is the node's czxid: it grows from one exclusive contender to the next.
    Go {
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
    /// It may go: the part has done its work.
    Gone,
}

/// One contender in line under a directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Contender {
    own: OwnNode,
    #[rename(keep)]
    line: Line,
    phase: Phase,
    /// The predecessor went while the exists was still in flight: list again when it returns.
    relist: bool,
}

impl Contender {
    /// A contender in `line` under `dir`, whose node is named `<guid><marker><seq>`.
    pub fn new(dir: &str, guid: String, line: Line) -> Self {
        Contender {
            own: OwnNode::new(dir, guid, line.marker),
            line,
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

    /// The sequence number and marker of a child in line, or `None` for any other child.
    fn in_line(&self, name: &str) -> Option<(i32, &'static str)> {
        self.line.kin.iter().find_map(|marker| {
            let (_, sequence) = name.rsplit_once(marker)?;
            Some((sequence.parse::<i32>().ok()?, *marker))
        })
    }

    /// Decides from a listing: go, or watch the node its gate waits for.
    fn decide(&mut self, children: Vec<String>) -> Verdict {
        let own = self.own.name().unwrap_or_default().to_owned();
        let Some((own_seq, _)) = self.in_line(&own) else {
            return self.create();
        };
        // Serial-number order from our own sequence: predecessors are behind us.
        let mut contenders: Vec<(i32, &'static str, String)> = children
            .into_iter()
            .filter_map(|name| {
                let (seq, marker) = self.in_line(&name)?;
                Some((seq.wrapping_sub(own_seq), marker, name))
            })
            .collect();
        contenders.sort();
        let Some(position) = contenders.iter().position(|(_, _, name)| *name == own) else {
            // Our node is not among the children (the directory was deleted and made again under
            // us): get in line anew.
            return self.create();
        };
        contenders.truncate(position);
        let waited = match self.line.gate {
            Gate::First => contenders.pop(),
            Gate::NoneAhead(blocker) => contenders
                .into_iter()
                .rev()
                .find(|(_, marker, _)| *marker == blocker),
        };
        let Some((_, _, predecessor)) = waited else {
            self.phase = Phase::Gone;
            return Verdict::Go {
                token: self.own.czxid(),
            };
        };
        let path = format!("{}/{}", self.own.dir(), predecessor);
        self.phase = Phase::Watching {
            predecessor,
            asked: true,
        };
        Verdict::Send(Op::Exists { path, watch: true })
    }

    /// Takes a watch event: the deletion of the node it waits for sends it to list again.
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

    const LINE: Line = Line {
        marker: "-n-",
        kin: &["-n-"],
        gate: Gate::First,
    };

    fn joined(own: &str, line: Line) -> Contender {
        let mut contender = Contender::new("/d", "g".to_owned(), line);
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
        let mut contender = joined("g-n-2147483646", LINE);
        // Created after us: the counter went past i32::MAX and wrapped to negative numbers.
        let verdict = contender.on_reply(listing(&["b-n--2147483648", "g-n-2147483646"]));
        assert_eq!(verdict, Verdict::Go { token: 0 });
        let mut later = joined("b-n--2147483648", LINE);
        let verdict = later.on_reply(listing(&["b-n--2147483648", "g-n-2147483646"]));
        let watch = Op::Exists {
            path: "/d/g-n-2147483646".to_owned(),
            watch: true,
        };
        assert_eq!(verdict, Verdict::Send(watch));
    }

    #[test]
    fn children_without_the_marker_are_not_contenders() {
        let mut contender = joined("g-n-0000000002", LINE);
        let verdict = contender.on_reply(listing(&["readme", "g-n-0000000002"]));
        assert_eq!(verdict, Verdict::Go { token: 0 });
    }

    #[test]
    fn a_reader_goes_with_no_writer_ahead_and_otherwise_waits_for_the_closest_writer() {
        let reader = Line {
            marker: "-r-",
            kin: &["-r-", "-w-"],
            gate: Gate::NoneAhead("-w-"),
        };
        let mut contender = joined("g-r-0000000004", reader);
        let verdict = contender.on_reply(listing(&[
            "a-w-0000000001",
            "b-w-0000000002",
            "c-r-0000000003",
            "g-r-0000000004",
            "d-w-0000000005",
        ]));
        let watch = Op::Exists {
            path: "/d/b-w-0000000002".to_owned(),
            watch: true,
        };
        assert_eq!(verdict, Verdict::Send(watch));
        let mut contender = joined("g-r-0000000004", reader);
        let verdict = contender.on_reply(listing(&[
            "c-r-0000000003",
            "g-r-0000000004",
            "d-w-0000000005",
        ]));
        assert_eq!(verdict, Verdict::Go { token: 0 });
    }
}
