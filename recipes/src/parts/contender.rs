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
//! A line may be revocable (ZooKeeper's revocable locks): right after its create, a contender
//! reads its own node with a watch, and reads it again whenever it changes; an [`UNLOCK`] written
//! to it, or its node deleted by another, makes it give up its place ([`Verdict::Revoked`]). A
//! waiter asks the one node in its way to give up by writing [`UNLOCK`] to it before it watches
//! it, and under [`Revocation::Force`], deletes it itself once a grace period has passed (the
//! document's forced variant; its owner asks the application to fence the holder's token first).
//! What a holder does when asked is its owner's part (see [`super::exclusive`]).
//!
//! The part is a sub-machine: its owner sends the ops it asks for and feeds back their replies
//! and the watch events, after handling ConnectionLoss on idempotent ops and session ends itself
//! (see [`super::link`]).

use std::time::Duration;

use crate::client::{CreateMode, EventType, Op, OpReply, OpResult, WatchedEvent, ZkError};
use crate::declaration::Declared;
use crate::machine::Timer;
use crate::parts::own_node::{Making, OwnNode};
use crate::session_renaming::RenameSessions;
use crate::subtree::child_path;

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
    /// Whether it asks the node in its way to give up.
    pub revocation: Revocation,
    /// How a contender makes the directory when it is missing: its ancestors as this mode, or
    /// (`None`) not at all (see [`OwnNode::making_parents`]).
    pub parents: Option<CreateMode>,
}

impl Line {
    /// The line of an exclusive role whose nodes carry the one marker in `kin`: first in line
    /// goes.
    pub const fn first_in(kin: &'static [&'static str; 1]) -> Line {
        Line {
            marker: kin[0],
            kin,
            gate: Gate::First,
            revocation: Revocation::Never,
            parents: Some(CreateMode::Persistent),
        }
    }

    /// The same line in a directory that is a container, as Curator 5 keeps its locks' and
    /// elections' directories: the server deletes it once the last contender has gone, and a
    /// contender that finds it gone makes it, and any missing ancestor, as containers again.
    pub const fn in_containers(self) -> Line {
        Line {
            parents: Some(CreateMode::Container),
            ..self
        }
    }
}

/// What a node's owner is asked to do when [`UNLOCK`] is written to it: give up its place in
/// line, or the role it holds once it has finished its current use.
pub const UNLOCK: &[u8] = b"unlock";

/// Whether a waiter asks the node in its way to give up. Only a waiter that waits for one node
/// asks (not a semaphore's first waiter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Revocation {
    /// It never asks.
    Never,
    /// It writes [`UNLOCK`] to the node it waits for.
    Ask,
    /// It asks, and deletes the node itself if it is still there after this grace period:
    /// the holder may be cut off and still believe it holds, so the application fences its
    /// token first ([`Verdict::Force`]).
    Force(Duration),
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
    /// When fewer than this many nodes are ahead of it (a semaphore's leases). The first waiter
    /// waits for any of the nodes ahead to go; a waiter behind it waits for its immediate
    /// predecessor to go or to go ahead, which a contender that goes with nodes behind it tells
    /// by writing its node's data (one that listed it as a waiter may be behind it): so one
    /// release wakes one waiter, and each grant the next in line.
    Among(u32),
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
    /// The node it asked to give up is still there after the grace period: fence `token` (the
    /// node's czxid, which its holder presents), then send `op`, which deletes it, and feed its
    /// reply to [`Contender::on_reply`].
    Force {
        /// The token of the holder forced out.
        token: i64,
        /// The delete.
        op: Op,
    },
    /// Asked to give up its place (or forced out of it), it gives up: delete its node.
    Revoked,
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
    /// Its node is made; in a revocable line, it reads it before it lists.
    Joined,
    /// Listing the children to see who is first.
    Listing,
    /// Writing [`UNLOCK`] to the one node it waits for, before it watches it (so its own ask
    /// does not fire its watch).
    Asking {
        /// The node, as a one-element list of child names.
        nodes: Vec<String>,
    },
    /// Waiting for any of `nodes` (child names) to go: an exists with a watch is set on each in
    /// turn, `armed` of them so far (the one on `nodes[armed]` is in flight until all are).
    Watching {
        /// The nodes it waits on.
        nodes: Vec<String>,
        /// How many of their watches are set.
        armed: usize,
        /// A node whose data was written has gone ahead (see [`Gate::Among`]): that frees its
        /// place as its deletion would.
        ahead_frees: bool,
        /// The czxid of the node it asked to give up, if it asked.
        #[rename(keep)]
        asked: Option<i64>,
    },
    /// Deleting the node it asked to give up, whose grace period has passed.
    Forcing,
    /// Writing its own node's data as it goes, to wake the waiter behind it (see
    /// [`Gate::Among`]).
    GoingAhead,
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
    /// A node it waits on went while an exists was still in flight: list again when it returns.
    relist: bool,
    /// What to do with the grace timer, for its owner to take with the verdict (never kept from
    /// one step to the next).
    #[rename(keep)]
    timer: Option<Timer>,
    /// The op in flight reads its own node (a revocable line).
    reading_own: bool,
    /// Its own node changed while another op was in flight: read it once that returns.
    reread: bool,
}

impl Contender {
    /// A contender in `line` under `dir`, whose node is named `<guid><marker><seq>`.
    pub fn new(dir: &str, guid: String, line: Line) -> Self {
        Contender {
            own: OwnNode::new(dir, guid, line.marker).making_parents(line.parents),
            line,
            phase: Phase::Idle,
            relist: false,
            timer: None,
            reading_own: false,
            reread: false,
        }
    }

    /// Whether a holder of this line must heed an [`UNLOCK`] written to its node.
    pub fn is_revocable(&self) -> bool {
        self.line.revocation != Revocation::Never
    }

    /// Whether its own node changed since it last read it (it must read it before it holds).
    pub fn take_reread(&mut self) -> bool {
        std::mem::take(&mut self.reread)
    }

    /// What the last verdict asks of the grace timer, if anything.
    pub fn take_timer(&mut self) -> Option<Timer> {
        self.timer.take()
    }

    /// The path of the contender node, once created or adopted.
    pub fn node(&self) -> Option<&str> {
        self.own.path()
    }

    /// What it owns (its node, once known) and awaits (the nodes ahead of it, once every watch
    /// on them is set).
    pub fn declared(&self) -> Declared {
        let awaits_gone = match &self.phase {
            Phase::Watching { nodes, .. } if self.is_waiting() => (nodes.iter())
                .map(|name| format!("{}/{name}", self.own.dir()))
                .collect(),
            _ => Vec::new(),
        };
        Declared {
            owns: self.node().map(str::to_owned).into_iter().collect(),
            awaits_gone,
        }
    }

    /// Whether it waits, its watches set, for a node ahead of it to go.
    pub fn is_waiting(&self) -> bool {
        matches!(&self.phase, Phase::Watching { nodes, armed, .. } if *armed == nodes.len())
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
            Making::Made if self.is_revocable() => {
                self.phase = Phase::Joined;
                self.read_own()
            }
            Making::Made => self.list(),
            Making::Failed(error) => Verdict::Failed(error),
        }
    }

    fn list(&mut self) -> Verdict {
        self.relist = false;
        self.cancel_grace();
        self.phase = Phase::Listing;
        Verdict::Send(Op::GetChildren {
            path: self.own.dir().to_owned(),
            watch: false,
        })
    }

    /// Reads its own node, leaving a watch for the next change.
    fn read_own(&mut self) -> Verdict {
        self.reading_own = true;
        let path = self.own.path().unwrap_or_default().to_owned();
        Verdict::Send(Op::GetData { path, watch: true })
    }

    /// No longer waits for a node it asked to give up: the grace period, if any, is over.
    fn cancel_grace(&mut self) {
        if let Revocation::Force(_) = self.line.revocation {
            self.timer = Some(Timer::Cancel);
        }
    }

    /// Gives up its place.
    fn revoked(&mut self) -> Verdict {
        self.cancel_grace();
        self.phase = Phase::Gone;
        Verdict::Revoked
    }

    /// Takes the read of its own node: an ask to give up, or its node gone, ends its wait.
    fn on_own_data(&mut self, reply: OpReply) -> Verdict {
        match reply {
            Ok(OpResult::Data { data, .. }) if data == UNLOCK => self.revoked(),
            Err(ZkError::NoNode) => self.revoked(),
            Ok(OpResult::Data { .. }) if self.phase == Phase::Joined || self.relist => self.list(),
            Ok(OpResult::Data { .. }) => self.settle(Verdict::Wait),
            Err(error) => Verdict::Failed(error),
            Ok(_) => Verdict::Failed(ZkError::MarshallingError),
        }
    }

    /// Once it only waits, reads its own node if it changed meanwhile.
    fn settle(&mut self, verdict: Verdict) -> Verdict {
        if verdict == Verdict::Wait && std::mem::take(&mut self.reread) {
            return self.read_own();
        }
        verdict
    }

    /// Takes the reply to the op it asked for.
    pub fn on_reply(&mut self, reply: OpReply) -> Verdict {
        if std::mem::take(&mut self.reading_own) {
            return self.on_own_data(reply);
        }
        let verdict = self.on_line_reply(reply);
        self.settle(verdict)
    }

    fn on_line_reply(&mut self, reply: OpReply) -> Verdict {
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        match (phase, reply) {
            (Phase::Joining, reply) => {
                let making = self.own.on_reply(reply);
                self.joining(making)
            }
            // The directory is gone, and our node with it: start over.
            (Phase::Listing, Err(ZkError::NoNode)) => self.create(),
            (Phase::Listing, Ok(OpResult::Children { children, .. })) => self.decide(children),
            (Phase::Asking { nodes }, Ok(OpResult::SetData(stat))) => {
                if let Revocation::Force(grace) = self.line.revocation {
                    self.timer = Some(Timer::Set(grace));
                }
                self.watch(nodes, 0, false, Some(stat.czxid))
            }
            // The node in its way is gone already.
            (Phase::Asking { .. }, Err(ZkError::NoNode)) => self.list(),
            (
                Phase::Watching {
                    nodes,
                    armed,
                    ahead_frees,
                    asked,
                },
                Ok(OpResult::Exists(stat)),
            ) => {
                let freed = stat.is_none_or(|stat| ahead_frees && stat.version > 0);
                if freed || self.relist {
                    return self.list();
                }
                self.watch(nodes, armed + 1, ahead_frees, asked)
            }
            // NoNode: its holder gave up meanwhile.
            (Phase::Forcing, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => self.list(),
            (Phase::GoingAhead, Ok(OpResult::SetData(_))) => self.go(),
            // Our node is gone with the directory: get in line anew.
            (Phase::GoingAhead, Err(ZkError::NoNode)) => self.create(),
            (_, Err(error)) => Verdict::Failed(error),
            (_, Ok(_)) => Verdict::Failed(ZkError::MarshallingError),
        }
    }

    /// The sequence number and marker of a child in line, or `None` for any other child.
    fn in_line(&self, name: &str) -> Option<(i32, &'static str)> {
        // A sequence ends in a digit: most names that do not are told apart without a search.
        if !name.ends_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        self.line
            .kin
            .iter()
            .find_map(|marker| Some((sequence_after(name, marker)?, *marker)))
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
        // Under `Among`, a contender that goes tells those behind it (see `Gate::Among`).
        let tells = matches!(self.line.gate, Gate::Among(_)) && position + 1 < contenders.len();
        let ahead = &contenders[..position];
        let name = |(_, _, name): &(i32, &str, String)| name.clone();
        let (waited, ahead_frees): (Vec<String>, bool) = match self.line.gate {
            Gate::First => (ahead.last().map(name).into_iter().collect(), false),
            Gate::NoneAhead(blocker) => {
                let closest = ahead.iter().rev().find(|(_, marker, _)| *marker == blocker);
                (closest.map(name).into_iter().collect(), false)
            }
            Gate::Among(leases) => match position.checked_sub(leases as usize) {
                None => (Vec::new(), false),
                Some(0) => (ahead.iter().map(name).collect(), false),
                Some(_) => (ahead.last().map(name).into_iter().collect(), true),
            },
        };
        if waited.is_empty() && tells {
            self.phase = Phase::GoingAhead;
            let path = self.own.path().unwrap_or_default().to_owned();
            return Verdict::Send(Op::SetData {
                path,
                data: Vec::new(),
                version: -1,
            });
        }
        if waited.is_empty() {
            return self.go();
        }
        if let ([node], true) = (waited.as_slice(), self.is_revocable()) {
            let path = child_path(self.own.dir(), node);
            self.phase = Phase::Asking { nodes: waited };
            return Verdict::Send(Op::SetData {
                path,
                data: UNLOCK.to_vec(),
                version: -1,
            });
        }
        self.watch(waited, 0, ahead_frees, None)
    }

    /// It may go.
    fn go(&mut self) -> Verdict {
        self.cancel_grace();
        self.phase = Phase::Gone;
        Verdict::Go {
            token: self.own.czxid(),
        }
    }

    /// Sets the watch on `nodes[armed]`, or waits once all are set.
    fn watch(
        &mut self,
        nodes: Vec<String>,
        armed: usize,
        ahead_frees: bool,
        asked: Option<i64>,
    ) -> Verdict {
        let next = nodes
            .get(armed)
            .map(|name| child_path(self.own.dir(), name));
        self.phase = Phase::Watching {
            nodes,
            armed,
            ahead_frees,
            asked,
        };
        match next {
            Some(path) => Verdict::Send(Op::Exists { path, watch: true }),
            None => Verdict::Wait,
        }
    }

    /// Takes a watch event: a node it waits on gone (or its data written under
    /// [`Gate::Among`]: it may have gone ahead) sends it to list again. Data written to it
    /// otherwise (another waiter asked it to give up) only used up the watch: it sets it again.
    pub fn on_watch(&mut self, event: &WatchedEvent) -> Verdict {
        if Some(event.path.as_str()) == self.own.path() {
            return self.on_own_watch();
        }
        let in_flight = self.reading_own;
        let Phase::Watching {
            nodes,
            armed,
            ahead_frees,
            asked,
        } = &self.phase
        else {
            return Verdict::Wait;
        };
        let name = event
            .path
            .strip_prefix(self.own.dir())
            .and_then(|p| p.strip_prefix('/'));
        let Some(index) = nodes.iter().position(|node| Some(node.as_str()) == name) else {
            return Verdict::Wait;
        };
        let moved = match event.event_type {
            EventType::NodeDeleted => true,
            // Under `Among`, a node ahead whose data was written has gone ahead.
            EventType::NodeDataChanged => matches!(self.line.gate, Gate::Among(_)),
            _ => return Verdict::Wait,
        };
        if *armed < nodes.len() || in_flight {
            // An op is in flight: list again once it returns (its watch may need setting again).
            self.relist |= moved || in_flight;
            Verdict::Wait
        } else if moved {
            self.list()
        } else {
            let (nodes, ahead_frees, asked) = (nodes.clone(), *ahead_frees, *asked);
            self.watch(nodes, index, ahead_frees, asked)
        }
    }

    /// Takes a watch event on its own node (set in a revocable line): it reads it now, or once
    /// the op in flight returns.
    fn on_own_watch(&mut self) -> Verdict {
        if self.is_waiting() && !self.reading_own {
            self.read_own()
        } else {
            self.reread = true;
            Verdict::Wait
        }
    }

    /// Takes the grace timer going off: the node it asked to give up, if still in its way with
    /// its watch set, is forced out.
    pub fn on_timeout(&mut self) -> Verdict {
        let Phase::Watching {
            nodes,
            armed,
            asked: Some(token),
            ..
        } = &self.phase
        else {
            return Verdict::Wait;
        };
        let forces = matches!(self.line.revocation, Revocation::Force(_));
        if *armed < nodes.len() || self.reading_own || !forces {
            return Verdict::Wait;
        }
        let path = child_path(self.own.dir(), &nodes[0]);
        let token = *token;
        self.phase = Phase::Forcing;
        Verdict::Force {
            token,
            op: Op::Delete { path, version: -1 },
        }
    }
}

/// The number after the last occurrence of `marker` in `name`, if what follows it parses as an
/// `i32`. A marker ending in a byte other than a digit can be followed by a number only where the
/// name's trailing digits begin, or one byte before them (a sign): a later occurrence would end
/// inside the digits, and an earlier one leaves a non-digit after the first byte of what follows
/// it, which no number parses. So two comparisons stand in for the search, run for every child of
/// every listing; only a marker ending in a digit (or an empty one) is searched for.
fn sequence_after(name: &str, marker: &str) -> Option<i32> {
    let (bytes, needle) = (name.as_bytes(), marker.as_bytes());
    let end = if needle.last().is_some_and(|last| !last.is_ascii_digit()) {
        let digits = bytes.iter().rev().take_while(|byte| byte.is_ascii_digit());
        let start = bytes.len() - digits.count();
        [start, start.checked_sub(1)?]
            .into_iter()
            .find(|&end| bytes[..end].ends_with(needle))?
    } else {
        last_occurrence(bytes, needle)? + needle.len()
    };
    name.get(end..)?.parse().ok()
}

/// Where the last occurrence of `needle` in `haystack` starts, as `str::rfind` finds it, without
/// setting up a substring searcher for a name of a few dozen bytes. An empty needle is found at
/// the end.
fn last_occurrence(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&first, _)) = needle.split_first() else {
        return Some(haystack.len());
    };
    (0..=haystack.len().checked_sub(needle.len())?)
        .rev()
        .find(|&at| haystack[at] == first && haystack[at..].starts_with(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Stat;

    const LINE: Line = Line::first_in(&["-n-"]);

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
            revocation: Revocation::Never,
            parents: Some(CreateMode::Persistent),
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
