//! A tree cache, as Curator's `CuratorCache` and kazoo's `TreeCache` keep one: a local copy of
//! a subtree, kept by one persistent recursive watch (ZooKeeper 3.6's `addWatch`).
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::tree_cache::CacheError> {
//! use zklab_recipes::tree_cache::{CacheChange, TreeCache};
//!
//! let cache = TreeCache::new("/app/services");
//! let mut copy = cache.follow(client);
//! loop {
//!     match copy.changed().await? {
//!         CacheChange::Cached { path, data, .. } => println!("{path} = {data:?}"),
//!         CacheChange::Dropped { path } => println!("{path} and all under it are gone"),
//!     }
//!     let _everything_now = copy.nodes();
//! }
//! # }
//! ```
//!
//! The cache sets its watch first, then reads the subtree from the top, a node at a time: its
//! data and its children in one multiRead, so that both come from one state of the server. A
//! child it did not hold is read next; a child it held and no longer listed is read again, to
//! learn that it is gone. An event carries no data, so every creation or change marks its node
//! to be read again (a copy that applied the event without reading would show a value the node
//! never had); a deletion drops the node, and everything under it, at once: ZooKeeper deletes
//! only nodes without children, so nothing under it stood then. Back from a disconnection the
//! cache sets its watch again itself, as a client library may not (zookeeper-client 0.11 sets
//! only one-time watches again), and then reads the top and every node it holds again: nothing
//! fired for what changed meanwhile.
//!
//! A deletion's event may be handed over ahead of the answer to a read served before it: a
//! node under the deleted one whose read is in flight is read once more.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::client::{
    AddWatchMode, EventType, Op, OpReply, OpResult, SessionEvent, ZkClient, ZkError, ZkEvent,
};
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::link::{Connection, Delivery, Link, RecipeError};
use crate::parts::parents::{at_or_under, dir_of};
use crate::session_renaming::RenameSessions;

/// A node as the copy holds it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct CachedNode {
    /// Its data version when read.
    pub version: i32,
    /// Its data when read.
    #[rename(keep)]
    pub data: Vec<u8>,
}

/// A change of the copy, as the cache tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CacheChange {
    /// The node is in the copy, with this data at this version (new, or changed).
    Cached {
        /// The node's path.
        path: String,
        /// Its data version.
        version: i32,
        /// Its data.
        data: Vec<u8>,
    },
    /// The node, and every node under it, left the copy: it was deleted.
    Dropped {
        /// The node's path.
        path: String,
    },
}

/// What a tree cache machine tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CacheOutcome {
    /// The copy changed.
    Changed(CacheChange),
    /// The session ended: the copy is no longer kept.
    Lost,
    /// ZooKeeper answered with an error the cache cannot handle.
    Failed(ZkError),
}

impl From<CacheOutcome> for Outcome {
    fn from(outcome: CacheOutcome) -> Self {
        match outcome {
            CacheOutcome::Changed(CacheChange::Cached {
                path,
                version,
                data,
            }) => Outcome::Cached {
                node: Outcome::digest(path.as_bytes()),
                version: i64::from(version),
                value: Outcome::digest(&data),
            },
            CacheOutcome::Changed(CacheChange::Dropped { path }) => Outcome::Dropped {
                node: Outcome::digest(path.as_bytes()),
            },
            CacheOutcome::Lost => Outcome::Lost,
            CacheOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// A tree cache asks nothing of its application.
pub type CacheRequest = ();

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The persistent recursive watch is being set.
    Watching,
    /// A node's data and children are being read.
    Reading(#[rename(keep)] String),
    /// Nothing to read: waiting for news.
    Settled,
    Done,
}

/// A tree cache, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct TreeCacheMachine {
    #[rename(keep)]
    root: String,
    phase: Phase,
    /// The copy: every node of the subtree read and not since found gone.
    #[rename(keep)]
    nodes: BTreeMap<String, CachedNode>,
    /// The nodes to read (again), in path order: a parent before its children.
    #[rename(keep)]
    stale: BTreeSet<String>,
    /// The copy to stop at (each node's data), if any.
    #[rename(keep)]
    until: Option<BTreeMap<String, Vec<u8>>>,
    /// Back from a disconnection: the watch is to be set again before the next read.
    watch_again: bool,
    link: Link,
}

impl TreeCacheMachine {
    /// A cache of the subtree at `root`, kept until its copy holds exactly `until` (each
    /// node's data, by path), or for ever.
    pub fn new(root: &str, until: Option<BTreeMap<String, Vec<u8>>>) -> Self {
        TreeCacheMachine {
            root: root.to_owned(),
            phase: Phase::Idle,
            nodes: BTreeMap::new(),
            stale: BTreeSet::new(),
            until,
            watch_again: false,
            link: Link::default(),
        }
    }

    /// The copy as it stands.
    pub fn nodes(&self) -> &BTreeMap<String, CachedNode> {
        &self.nodes
    }

    fn in_subtree(&self, path: &str) -> bool {
        at_or_under(path, &self.root)
    }

    fn done(&mut self, outcome: CacheOutcome) -> Step<CacheOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    /// Sets the persistent recursive watch on the top.
    fn watch(&mut self) -> Step<CacheOutcome> {
        let watch = Op::AddWatch {
            path: self.root.clone(),
            mode: AddWatchMode::PersistentRecursive,
        };
        self.phase = Phase::Watching;
        Step::send(self.link.send(watch))
    }

    /// Sets the watch again if it is due, else reads the next stale node, or settles (and
    /// stops, if the copy is the one awaited).
    fn next(&mut self) -> Step<CacheOutcome> {
        if std::mem::take(&mut self.watch_again) {
            return self.watch();
        }
        match self.stale.pop_first() {
            Some(path) => {
                let read = Op::MultiRead(vec![
                    Op::GetData {
                        path: path.clone(),
                        watch: false,
                    },
                    Op::GetChildren {
                        path: path.clone(),
                        watch: false,
                    },
                ]);
                self.phase = Phase::Reading(path);
                Step::send(self.link.send(read))
            }
            None => {
                let reached = self.until.as_ref().is_some_and(|until| {
                    until.len() == self.nodes.len()
                        && (until.iter()).all(|(path, data)| {
                            self.nodes.get(path).is_some_and(|node| node.data == *data)
                        })
                });
                self.phase = if reached { Phase::Done } else { Phase::Settled };
                if reached {
                    Step::stop()
                } else {
                    Step::wait()
                }
            }
        }
    }

    /// Drops `path` and everything under it from the copy; the change, if it held any.
    fn drop_subtree(&mut self, path: &str) -> Option<CacheOutcome> {
        let before = self.nodes.len();
        self.nodes.retain(|held, _| !at_or_under(held, path));
        let dropped = CacheChange::Dropped {
            path: path.to_owned(),
        };
        (self.nodes.len() != before).then_some(CacheOutcome::Changed(dropped))
    }

    /// The answer to the read of `path`.
    fn on_read(&mut self, path: String, reply: OpReply) -> Step<CacheOutcome> {
        let results = match reply {
            Ok(OpResult::MultiRead(results)) => results,
            Ok(_) => return self.done(CacheOutcome::Failed(ZkError::MarshallingError)),
            Err(error) => return self.done(CacheOutcome::Failed(error)),
        };
        let (data, stat, children) = match results.as_slice() {
            [Ok(OpResult::Data { data, stat }), Ok(OpResult::Listed(children))] => {
                (data.clone(), *stat, children.clone())
            }
            [Err(ZkError::NoNode), ..] => {
                let told = self.drop_subtree(&path);
                return tell(self.next(), told);
            }
            [Err(error), ..] | [_, Err(error)] => return self.done(CacheOutcome::Failed(*error)),
            _ => return self.done(CacheOutcome::Failed(ZkError::MarshallingError)),
        };
        let listed: BTreeSet<String> = (children.iter())
            .map(|child| child_path(&path, child))
            .collect();
        // Children it held that the listing lacks: read again, to learn that they are gone.
        let held_children: Vec<String> = (self.nodes.keys())
            .filter(|held| **held != path && dir_of(held) == path && !listed.contains(*held))
            .cloned()
            .collect();
        self.stale.extend(held_children);
        let unknown = listed
            .into_iter()
            .filter(|child| !self.nodes.contains_key(child));
        self.stale.extend(unknown.collect::<Vec<_>>());
        let node = CachedNode {
            version: stat.version,
            data,
        };
        let told = match self.nodes.insert(path.clone(), node.clone()) {
            Some(before) if before == node => None,
            _ => Some(CacheOutcome::Changed(CacheChange::Cached {
                path,
                version: node.version,
                data: node.data,
            })),
        };
        tell(self.next(), told)
    }

    /// News: a node of the subtree changed, or the session's state did.
    fn on_event(&mut self, event: ZkEvent) -> Step<CacheOutcome> {
        let mut told = None;
        match event {
            ZkEvent::Session(state) => {
                if self.link.on_session(state, false) == Some(Connection::Lost) {
                    return self.done(CacheOutcome::Lost);
                }
                if state == SessionEvent::SyncConnected && self.phase != Phase::Watching {
                    // Whatever changed while away fired nothing: watch again, then read it all
                    // again, the node in flight too (its answer may come before the watch).
                    self.watch_again = true;
                    self.stale.insert(self.root.clone());
                    self.stale.extend(self.nodes.keys().cloned());
                    if let Phase::Reading(reading) = &self.phase {
                        self.stale.insert(reading.clone());
                    }
                }
            }
            ZkEvent::Watch(watched) if self.in_subtree(&watched.path) => {
                match watched.event_type {
                    EventType::NodeCreated | EventType::NodeDataChanged => {
                        self.stale.insert(watched.path);
                    }
                    EventType::NodeDeleted => {
                        // A read in flight under it may be answered from before the deletion,
                        // and its answer handed over after this event: read it once more.
                        if let Phase::Reading(reading) = &self.phase {
                            if at_or_under(reading, &watched.path) {
                                self.stale.insert(reading.clone());
                            }
                        }
                        told = self.drop_subtree(&watched.path);
                    }
                    // A recursive watch never fires for children, and removes nothing.
                    EventType::NodeChildrenChanged
                    | EventType::DataWatchRemoved
                    | EventType::ChildWatchRemoved
                    | EventType::PersistentWatchRemoved => {}
                }
            }
            ZkEvent::Watch(_) => {}
        }
        let step = match self.phase {
            Phase::Settled => self.next(),
            _ => Step::wait(),
        };
        tell(step, told)
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<CacheOutcome> {
        match (std::mem::replace(&mut self.phase, Phase::Idle), reply) {
            (Phase::Watching, Ok(OpResult::WatchAdded)) => {
                self.stale.insert(self.root.clone());
                self.next()
            }
            (Phase::Reading(path), reply) => self.on_read(path, reply),
            (_, Err(error)) => self.done(CacheOutcome::Failed(error)),
            (_, Ok(_)) => self.done(CacheOutcome::Failed(ZkError::MarshallingError)),
        }
    }
}

impl Recipe for TreeCacheMachine {
    type Request = CacheRequest;
    type Outcome = CacheOutcome;

    fn step(&mut self, input: Input<CacheRequest>) -> Step<CacheOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => self.watch(),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.done(CacheOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::Event(event) => self.on_event(event),
            Input::App(()) | Input::Timeout => Step::wait(),
        }
    }
}

/// `step`, telling `told` too, if anything.
fn tell(step: Step<CacheOutcome>, told: Option<CacheOutcome>) -> Step<CacheOutcome> {
    match told {
        Some(outcome) => step.telling(outcome),
        None => step,
    }
}

/// The path of `parent`'s child `name`.
fn child_path(parent: &str, name: &str) -> String {
    match parent {
        "/" => format!("/{name}"),
        _ => format!("{parent}/{name}"),
    }
}

/// Why a tree cache stopped: the session ended, or ZooKeeper answered with an error it cannot
/// handle.
pub type CacheError = RecipeError;

/// What a tree cache keeps besides its subtree's path: nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSettings;

/// A cache of the subtree at one path.
pub type TreeCache = Handle<CacheSettings>;

impl TreeCache {
    /// A cache of the subtree at `root` (which need not exist yet).
    pub fn new(root: &str) -> Self {
        Handle::at(root, CacheSettings)
    }

    /// Keeps a copy of the subtree on `client`'s session, for as long as the session lives.
    pub fn follow<'c, C: ZkClient>(&self, client: &'c C) -> CopyFollower<'c, C, TreeCacheMachine> {
        self.follow_with(client, TreeCacheMachine::new(&self.path, None))
    }

    /// Keeps the copy with `machine`: a cache's machine, or one built around it.
    pub fn follow_with<'c, C: ZkClient, M: Plays<CacheRequest, CacheOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> CopyFollower<'c, C, M> {
        CopyFollower {
            driver: self.driver(client, machine),
            started: false,
            nodes: BTreeMap::new(),
            told: VecDeque::new(),
            ended: None,
        }
    }
}

/// The application's side of a tree cache: each change of the copy, and the copy itself.
#[derive(Debug)]
pub struct CopyFollower<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    started: bool,
    /// The copy, as the changes handed out so far make it.
    nodes: BTreeMap<String, CachedNode>,
    /// Changes the machine told that `changed` has not handed out yet.
    told: VecDeque<CacheChange>,
    /// Why the machine stopped, once it has: told after the changes before it.
    ended: Option<CacheError>,
}

impl<C: ZkClient, M: Plays<CacheRequest, CacheOutcome>> CopyFollower<'_, C, M> {
    /// The next change of the copy (the first ones load it). Fails with `SessionLost` once
    /// the session ended (follow again in a new one).
    pub async fn changed(&mut self) -> Result<CacheChange, CacheError> {
        loop {
            if let Some(change) = self.told.pop_front() {
                self.apply(&change);
                return Ok(change);
            }
            if let Some(ended) = self.ended {
                return Err(ended);
            }
            let outcomes = if !std::mem::replace(&mut self.started, true) {
                self.driver.feed(Input::Start).await
            } else if self.driver.is_done() {
                return Err(RecipeError::SessionLost);
            } else {
                self.driver.feed_next_event().await
            };
            for outcome in outcomes {
                self.take(outcome);
            }
        }
    }

    /// Every node of the copy, by path, as the changes handed out so far make it.
    pub fn nodes(&self) -> &BTreeMap<String, CachedNode> {
        &self.nodes
    }

    /// Queues the change an outcome tells, or notes the error that ends the copy.
    fn take(&mut self, outcome: CacheOutcome) {
        match outcome {
            CacheOutcome::Changed(change) => self.told.push_back(change),
            ended => {
                let error = RecipeError::ending(ended.into());
                self.ended = Some(error.unwrap_or(RecipeError::SessionLost));
            }
        }
    }

    /// Applies a change handed out to the copy.
    fn apply(&mut self, change: &CacheChange) {
        match change {
            CacheChange::Cached {
                path,
                version,
                data,
            } => {
                let node = CachedNode {
                    version: *version,
                    data: data.clone(),
                };
                self.nodes.insert(path.clone(), node);
            }
            CacheChange::Dropped { path } => {
                self.nodes.retain(|held, _| !at_or_under(held, path));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Stat, WatchedEvent};
    use crate::machine::Action;
    use crate::test_steps::op;

    /// The path a step reads, with its data and its children in one multiRead.
    fn read_of(step: &Step<CacheOutcome>) -> String {
        match op(step) {
            Op::MultiRead(reads) => match reads.as_slice() {
                [Op::GetData { path, watch: false }, Op::GetChildren {
                    path: listed,
                    watch: false,
                }] if path == listed => path.clone(),
                other => panic!("expected a read of data and children, got {other:?}"),
            },
            other => panic!("expected a multiRead, got {other:?}"),
        }
    }

    /// The answer to a read: the node's data at `version` and its children.
    fn node(data: &str, version: i32, children: &[&str]) -> Input<CacheRequest> {
        let stat = Stat {
            version,
            ..Stat::default()
        };
        let data = Ok(OpResult::Data {
            data: data.as_bytes().to_vec(),
            stat,
        });
        let listed = Ok(OpResult::Listed(
            children.iter().map(|c| c.to_string()).collect(),
        ));
        Input::Reply(Ok(OpResult::MultiRead(vec![data, listed])))
    }

    fn watch(path: &str) -> Op {
        Op::AddWatch {
            path: path.to_owned(),
            mode: AddWatchMode::PersistentRecursive,
        }
    }

    fn gone() -> Input<CacheRequest> {
        let missing = vec![Err(ZkError::NoNode), Err(ZkError::NoNode)];
        Input::Reply(Ok(OpResult::MultiRead(missing)))
    }

    fn event(event_type: EventType, path: &str) -> Input<CacheRequest> {
        Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type,
            path: path.to_owned(),
        }))
    }

    fn cached(path: &str, data: &str, version: i32) -> Option<CacheOutcome> {
        Some(CacheOutcome::Changed(CacheChange::Cached {
            path: path.to_owned(),
            version,
            data: data.as_bytes().to_vec(),
        }))
    }

    fn dropped(path: &str) -> Option<CacheOutcome> {
        let path = path.to_owned();
        Some(CacheOutcome::Changed(CacheChange::Dropped { path }))
    }

    /// A cache of `/t` that has loaded `/t` (data `top`) and `/t/a` (data `a`).
    fn loaded() -> TreeCacheMachine {
        let mut m = TreeCacheMachine::new("/t", None);
        let start = m.step(Input::Start);
        assert_eq!(op(&start), &watch("/t"));
        let step = m.step(Input::Reply(Ok(OpResult::WatchAdded)));
        assert_eq!(read_of(&step), "/t");
        let step = m.step(node("top", 0, &["a"]));
        assert_eq!(step.outcome, cached("/t", "top", 0));
        assert_eq!(read_of(&step), "/t/a");
        let step = m.step(node("a", 0, &[]));
        assert_eq!(step.outcome, cached("/t/a", "a", 0));
        assert_eq!(step.action, Action::Wait);
        m
    }

    #[test]
    fn it_sets_its_watch_then_loads_the_subtree_from_the_top() {
        let m = loaded();
        assert_eq!(m.nodes().len(), 2);
    }

    #[test]
    fn a_change_is_read_again_and_a_deletion_drops_the_node_and_all_under_it() {
        let mut m = loaded();
        let step = m.step(event(EventType::NodeDataChanged, "/t/a"));
        assert_eq!(read_of(&step), "/t/a");
        // News while a read is in flight waits for the reply, then is read.
        assert_eq!(
            m.step(event(EventType::NodeCreated, "/t/a/b")).action,
            Action::Wait
        );
        let step = m.step(node("a2", 1, &["b"]));
        assert_eq!(step.outcome, cached("/t/a", "a2", 1));
        assert_eq!(read_of(&step), "/t/a/b");
        let step = m.step(node("b", 0, &[]));
        assert_eq!(step.outcome, cached("/t/a/b", "b", 0));
        let step = m.step(event(EventType::NodeDeleted, "/t/a/b"));
        assert_eq!(
            (step.outcome, step.action),
            (dropped("/t/a/b"), Action::Wait)
        );
        // Events outside the subtree are not its business.
        let step = m.step(event(EventType::NodeDataChanged, "/tx"));
        assert_eq!((step.outcome, step.action), (None, Action::Wait));
    }

    #[test]
    fn a_deletion_told_before_the_answer_of_a_read_served_earlier_makes_it_read_once_more() {
        let mut m = loaded();
        let step = m.step(event(EventType::NodeCreated, "/t/a/b"));
        assert_eq!(read_of(&step), "/t/a/b");
        let step = m.step(event(EventType::NodeDeleted, "/t/a/b"));
        assert_eq!((step.outcome, step.action), (None, Action::Wait));
        // The answer from before the deletion: cached for a moment, then read again.
        let step = m.step(node("b", 0, &[]));
        assert_eq!(step.outcome, cached("/t/a/b", "b", 0));
        assert_eq!(read_of(&step), "/t/a/b");
        let step = m.step(gone());
        assert_eq!(
            (step.outcome, step.action),
            (dropped("/t/a/b"), Action::Wait)
        );
    }

    #[test]
    fn back_from_a_disconnection_it_watches_again_reads_everything_again_and_tells_only_what_changed(
    ) {
        let mut m = loaded();
        let away = ZkEvent::Session(SessionEvent::Disconnected);
        assert_eq!(m.step(Input::Event(away)).action, Action::Wait);
        let back = m.step(Input::Event(ZkEvent::Session(SessionEvent::SyncConnected)));
        assert_eq!(op(&back), &watch("/t"));
        let back = m.step(Input::Reply(Ok(OpResult::WatchAdded)));
        assert_eq!(read_of(&back), "/t");
        // `/t/a` went while away, and `/t/c` came.
        let step = m.step(node("top", 0, &["c"]));
        assert_eq!(
            (step.outcome.clone(), read_of(&step)),
            (None, "/t/a".to_owned())
        );
        let step = m.step(gone());
        assert_eq!(
            (step.outcome.clone(), read_of(&step)),
            (dropped("/t/a"), "/t/c".to_owned())
        );
        let step = m.step(node("c", 3, &[]));
        assert_eq!(
            (step.outcome, step.action),
            (cached("/t/c", "c", 3), Action::Wait)
        );
    }

    #[test]
    fn a_read_in_flight_across_a_disconnection_is_read_again_once_the_watch_is_set_again() {
        let mut m = loaded();
        let step = m.step(event(EventType::NodeCreated, "/t/b"));
        assert_eq!(read_of(&step), "/t/b");
        m.step(Input::Event(ZkEvent::Session(SessionEvent::Disconnected)));
        m.step(Input::Event(ZkEvent::Session(SessionEvent::SyncConnected)));
        // Its answer may come from before the watch stands again: the watch, then everything.
        let step = m.step(node("b", 0, &[]));
        assert_eq!(
            (step.outcome.clone(), op(&step)),
            (cached("/t/b", "b", 0), &watch("/t"))
        );
        let step = m.step(Input::Reply(Ok(OpResult::WatchAdded)));
        assert_eq!(read_of(&step), "/t");
        let step = m.step(node("top", 0, &["a", "b"]));
        assert_eq!(read_of(&step), "/t/a");
        let step = m.step(node("a", 0, &[]));
        assert_eq!(read_of(&step), "/t/b");
    }

    #[test]
    fn it_stops_once_its_copy_is_the_one_awaited_and_ends_with_its_session() {
        let until = BTreeMap::from([("/t".to_owned(), b"top".to_vec())]);
        let mut m = TreeCacheMachine::new("/t", Some(until));
        m.step(Input::Start);
        m.step(Input::Reply(Ok(OpResult::WatchAdded)));
        let step = m.step(node("top", 0, &[]));
        assert_eq!(
            (step.outcome, step.action),
            (cached("/t", "top", 0), Action::Done)
        );
        let mut m = loaded();
        let expired = Input::Event(ZkEvent::Session(SessionEvent::Expired));
        let step = m.step(expired);
        assert_eq!(
            (step.outcome, step.action),
            (Some(CacheOutcome::Lost), Action::Done)
        );
    }

    #[test]
    fn a_missing_top_is_cached_once_it_is_made() {
        let mut m = TreeCacheMachine::new("/t", None);
        m.step(Input::Start);
        m.step(Input::Reply(Ok(OpResult::WatchAdded)));
        let step = m.step(gone());
        assert_eq!((step.outcome, step.action), (None, Action::Wait));
        let step = m.step(event(EventType::NodeCreated, "/t"));
        assert_eq!(read_of(&step), "/t");
        assert_eq!(m.step(node("", 0, &[])).outcome, cached("/t", "", 0));
    }
}
