//! Known bugs as mutations of a correct machine.
//!
//! Real recipe implementations break in a few recurring ways. Each way is written here once, as a
//! [`Mutation`]: a bug that sits between a correct recipe machine and its driver ([`Mutated`])
//! and changes only what the bug changes, so the public recipe types carry no broken variants and
//! one mutation serves every recipe it fits (the lock and the leader election both create
//! ephemeral sequential nodes and watch a predecessor). A kit names a known bug as a recipe plus
//! a mutation.

use std::fmt::Debug;
use std::hash::Hash;

use zklab_recipes::client::{CreateMode, EventType, Op, OpResult, Stat, WatchedEvent, ZkError};
use zklab_recipes::client::{OpReply, SessionEvent, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::parts::contender::UNLOCK;
use zklab_recipes::queue::{item_sequence, CLAIM};
use zklab_recipes::symmetry::RenameSessions;
use zklab_recipes::two_phase_commit::{parse_tx_data, tx_data, vote_site, ABORT, COMMIT};

/// A bug: what it remembers, and how it changes the steps of the correct machine it is put
/// into ([`Mutated`]).
pub trait Mutation:
    Clone + Debug + Default + Eq + Hash + RenameSessions + Send + Sync + 'static
{
    /// Whether the mutated machine behaves the same under any renaming of sessions, which
    /// symmetry reduction assumes. A machine whose decisions depend on the guids in node names
    /// is not.
    const SYMMETRIC: bool = true;

    /// One step of `inner`, as the bug changes it.
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome>;
}

/// A correct machine with a bug put into it: the machine a known-bug kit runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Mutated<M, X> {
    inner: M,
    bug: X,
}

impl<M, X: Mutation> Mutated<M, X> {
    /// `inner` with bug `X`.
    pub fn new(inner: M) -> Self {
        Mutated {
            inner,
            bug: X::default(),
        }
    }
}

impl<M: Recipe, X: Mutation> Recipe for Mutated<M, X> {
    type Request = M::Request;
    type Outcome = M::Outcome;

    fn step(&mut self, input: Input<M::Request>) -> Step<M::Outcome> {
        self.bug.step(&mut self.inner, input)
    }
}

/// No mutation: the recipe as documented.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct Documented;

impl Mutation for Documented {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        inner.step(input)
    }
}

/// After ConnectionLoss on the create of an ephemeral sequential node, create it again without
/// looking for the node the first create may have made: a lost create reply leaves an orphan
/// that blocks everyone behind it until its session ends.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct BlindRetry {
    traffic: Traffic,
}

impl Mutation for BlindRetry {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let (Input::Reply(Err(ZkError::ConnectionLoss)), Some(create)) =
            (&input, self.traffic.creating())
        {
            return Step::send(create.clone());
        }
        self.traffic.take(&input);
        let step = inner.step(input);
        self.traffic.sent(&step);
        step
    }
}

/// Instead of an `exists` watch on its predecessor, a waiter watches the children of the
/// predecessor's parent and takes any change to them as the predecessor's deletion: every
/// deletion wakes every waiter (the herd effect), which all list again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct WatchParent {
    /// The node the inner machine asked to watch.
    watched: Option<String>,
    /// The listing in flight stands for the inner machine's `exists`.
    listing: bool,
}

impl WatchParent {
    /// The inner machine's `exists` answered from a listing of the parent.
    fn exists_from_listing(&self, reply: OpReply) -> OpReply {
        let watched = self.watched.as_deref().unwrap_or_default();
        let name = watched.rsplit('/').next().unwrap_or_default();
        match reply {
            Ok(OpResult::Children { children, .. }) => Ok(OpResult::Exists(
                children.iter().any(|c| c == name).then(Stat::default),
            )),
            Err(ZkError::NoNode) => Ok(OpResult::Exists(None)),
            other => other,
        }
    }
}

impl Mutation for WatchParent {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(reply) if self.listing => {
                self.listing = false;
                Input::Reply(self.exists_from_listing(reply))
            }
            Input::Event(ZkEvent::Watch(event))
                if event.event_type == EventType::NodeChildrenChanged
                    && self.watched.as_deref().map(parent) == Some(event.path.as_str()) =>
            {
                let path = self.watched.take().unwrap_or_default();
                Input::Event(ZkEvent::Watch(WatchedEvent {
                    event_type: EventType::NodeDeleted,
                    path,
                }))
            }
            other => other,
        };
        let mut step = inner.step(input);
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            let listing = Op::GetChildren {
                path: parent(path).to_owned(),
                watch: true,
            };
            self.watched = Some(path.clone());
            self.listing = true;
            step.action = Action::Send(listing);
        }
        step
    }
}

/// After its predecessor's NodeDeleted, a waiter believes it is next without listing again: it
/// takes every node up to the deleted one as gone. When the predecessor went for another reason
/// than the holder letting go (its session expired), two contenders hold at once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct TrustDeletion {
    traffic: Traffic,
    /// The node the inner machine watches.
    watched: Option<String>,
    /// It has just gone.
    deleted: bool,
}

impl Mutation for TrustDeletion {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let Input::Event(ZkEvent::Watch(event)) = &input {
            self.deleted |= event.event_type == EventType::NodeDeleted
                && self.watched.as_deref() == Some(event.path.as_str());
        }
        self.traffic.take(&input);
        let mut step = inner.step(input);
        while let (Action::Send(Op::GetChildren { .. }), true) = (&step.action, self.deleted) {
            // Answer the listing itself: everything up to the deleted node is taken as gone.
            self.deleted = false;
            let gone = self.watched.as_deref().and_then(sequence);
            let children = self
                .traffic
                .listing
                .iter()
                .filter(|name| sequence(name) > gone)
                .cloned()
                .collect();
            step = answer_listing(inner, step, children);
        }
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            self.watched = Some(path.clone());
        }
        self.traffic.sent(&step);
        step
    }
}

/// Every waiter watches the lowest node in line (the holder) instead of its predecessor: the
/// holder's deletion wakes every waiter at once (the herd effect).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct WatchLowest {
    traffic: Traffic,
    /// The lowest node it watches, and the predecessor the inner machine asked to watch.
    watched: Option<(String, String)>,
}

impl Mutation for WatchLowest {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Event(ZkEvent::Watch(event))
                if event.event_type == EventType::NodeDeleted
                    && self.watched.as_ref().map(|(lowest, _)| lowest) == Some(&event.path) =>
            {
                let (_, predecessor) = self.watched.take().unwrap_or_default();
                Input::Event(ZkEvent::Watch(WatchedEvent {
                    event_type: EventType::NodeDeleted,
                    path: predecessor,
                }))
            }
            other => other,
        };
        self.traffic.take(&input);
        let mut step = inner.step(input);
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            let lowest = self
                .traffic
                .listing
                .iter()
                .min_by_key(|name| sequence(name));
            if let Some(lowest) = lowest {
                let lowest = format!("{}/{lowest}", parent(path));
                self.watched = Some((lowest.clone(), path.clone()));
                step.action = Action::Send(Op::Exists {
                    path: lowest,
                    watch: true,
                });
            }
        }
        self.traffic.sent(&step);
        step
    }
}

/// After ConnectionLoss on the create of an ephemeral sequential node, give the attempt up as if
/// the session were gone, and let the application start over in a new session: the node the
/// create may have made stays behind in the old session, which lives on, and blocks whoever
/// waits behind it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct GiveUp {
    traffic: Traffic,
}

impl Mutation for GiveUp {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let creating = self.traffic.creating().is_some();
        self.traffic.take(&input);
        let input = match input {
            Input::Reply(Err(ZkError::ConnectionLoss)) if creating => {
                Input::Event(ZkEvent::Session(SessionEvent::Expired))
            }
            other => other,
        };
        let step = inner.step(input);
        self.traffic.sent(&step);
        step
    }
}

/// A waiter whose predecessor is already gone when its `exists` arrives takes the answer as "still
/// there" and waits on a watch that can never fire: the lost wake-up. It moves again only if its
/// session ends.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct LostWakeup {
    /// Its `exists` with a watch is in flight.
    watching: bool,
}

impl Mutation for LostWakeup {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(Ok(OpResult::Exists(None))) if self.watching => {
                Input::Reply(Ok(OpResult::Exists(Some(Stat::default()))))
            }
            other => other,
        };
        if matches!(input, Input::Reply(_)) {
            self.watching = false;
        }
        let step = inner.step(input);
        if let Action::Send(Op::Exists { watch: true, .. }) = &step.action {
            self.watching = true;
        }
        step
    }
}

/// A waiter takes any event while its watch is set (a disconnect, its session's expiry, a stale
/// watch) as the watched node's deletion, and believes it gone without reading it again: it goes
/// on while the node still stands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct TrustAnyEvent {
    /// The node of the `exists` with a watch in flight.
    asking: Option<String>,
    /// The node the inner machine waits on, its watch set.
    watched: Option<String>,
}

impl Mutation for TrustAnyEvent {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        match (&input, self.watched.take()) {
            (Input::Event(_), Some(path)) => {
                // Hand the inner machine the deletion it believes in, and the answer it believes
                // to the `exists` it sends about it, without asking the server.
                let deleted = Input::Event(ZkEvent::Watch(WatchedEvent {
                    event_type: EventType::NodeDeleted,
                    path,
                }));
                let step = inner.step(deleted);
                if let Action::Send(Op::Exists { .. }) = step.action {
                    return inner.step(Input::Reply(Ok(OpResult::Exists(None))));
                }
                return step;
            }
            (_, watched) => self.watched = watched,
        }
        if let Input::Reply(reply) = &input {
            if let (Ok(OpResult::Exists(Some(_))), Some(path)) = (reply, self.asking.take()) {
                self.watched = Some(path);
            }
        }
        let step = inner.step(input);
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            self.asking = Some(path.clone());
        }
        step
    }
}

/// A two-phase-commit site that has voted commit presumes the transaction commits: it reads the
/// transaction at once rather than waiting for the decision's news, and takes it, still
/// undecided, as committed. Whenever another site votes abort, or the coordinator gives up
/// waiting, the sites disagree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct PresumeCommit {
    traffic: Traffic,
    /// The transaction node, once it has voted commit in it.
    voted: Option<String>,
}

impl Mutation for PresumeCommit {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match (input, &self.traffic.sent, &self.voted) {
            (
                Input::Reply(Ok(OpResult::Data { data, stat })),
                Some(Op::GetData { path, .. }),
                Some(tx),
            ) if path == tx => {
                let data = match parse_tx_data(&data) {
                    Some((n, state)) if state != COMMIT && state != ABORT => tx_data(n, COMMIT),
                    _ => data,
                };
                Input::Reply(Ok(OpResult::Data { data, stat }))
            }
            (input, ..) => input,
        };
        let voting = match &self.traffic.sent {
            Some(Op::SetData { path, data, .. })
                if parse_tx_data(data).is_some_and(|(_, vote)| vote == COMMIT) =>
            {
                path.rsplit_once('/')
                    .and_then(|(tx, name)| vote_site(name).map(|_| tx.to_owned()))
            }
            _ => None,
        };
        let voted_now =
            matches!(&input, Input::Reply(Ok(OpResult::SetData(_)))) && voting.is_some();
        self.traffic.take(&input);
        let mut step = inner.step(input);
        if voted_now && step.action == Action::Wait {
            // No waiting for the decision's news: read the transaction now.
            self.voted = voting;
            let news = Input::Event(ZkEvent::Watch(WatchedEvent {
                event_type: EventType::NodeDataChanged,
                path: self.voted.clone().unwrap_or_default(),
            }));
            step = inner.step(news);
        }
        self.traffic.sent(&step);
        step
    }
}

/// Orders contenders by their full names, so by guid, instead of by sequence number: a contender
/// first by name holds even when an older node stands, and two hold at once. Its decisions depend
/// on the guids, so it is not symmetric under renaming sessions.
///
/// The inner machine still orders by sequence; the mutation answers its listings with only the
/// nodes that make it decide as ordering by name would (itself, and its predecessor by name when
/// that one is older), and waits itself on a predecessor by name that is younger, listing again
/// for the inner machine once it is gone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct SortByName {
    traffic: Traffic,
    /// The inner machine's node.
    own: Option<String>,
    /// The op the mutation sent on its own, while the inner machine awaits a listing.
    mine: Option<Op>,
    /// The younger predecessor by name it waits on.
    awaited: Option<String>,
    /// That predecessor went while the exists on it was in flight.
    relist: bool,
}

impl SortByName {
    /// Sends an op of the mutation's own.
    fn send_mine<O>(&mut self, op: Op) -> Step<O> {
        self.mine = Some(op.clone());
        Step::send(op)
    }

    /// Lists again on the inner machine's behalf.
    fn relist<O>(&mut self, dir: String) -> Step<O> {
        self.relist = false;
        self.send_mine(Op::GetChildren {
            path: dir,
            watch: false,
        })
    }

    /// A listing for the inner machine: answered with the nodes that make it decide by name, or
    /// kept back while the mutation waits on a younger predecessor by name.
    fn on_listing<M: Recipe>(
        &mut self,
        inner: &mut M,
        dir: &str,
        children: Vec<String>,
    ) -> Step<M::Outcome> {
        let Some(own_path) = self.own.clone() else {
            // Looking for its own node after a lost create reply: nothing to order yet.
            return self.pass(
                inner,
                Input::Reply(Ok(OpResult::Children {
                    children,
                    stat: Stat::default(),
                })),
            );
        };
        let own = own_path.rsplit('/').next().unwrap_or_default().to_owned();
        let mut contenders: Vec<&String> = children
            .iter()
            .filter(|name| sequence(name).is_some())
            .collect();
        contenders.sort();
        let before = contenders
            .iter()
            .take_while(|name| ***name != own)
            .last()
            .map(|name| (*name).clone());
        let shown = match before {
            Some(predecessor) if sequence(&predecessor) > sequence(&own) => {
                let path = format!("{dir}/{predecessor}");
                self.awaited = Some(path.clone());
                return self.send_mine(Op::Exists { path, watch: true });
            }
            Some(predecessor) => vec![predecessor, own],
            None if contenders.iter().any(|name| **name == own) => vec![own],
            // Its node is gone: the inner machine sees so itself.
            None => children,
        };
        self.traffic.listing = shown.clone();
        inner.step(Input::Reply(Ok(OpResult::Children {
            children: shown,
            stat: Stat::default(),
        })))
    }
}

impl Mutation for SortByName {
    const SYMMETRIC: bool = false;

    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let dir = self.own.as_deref().map(parent).unwrap_or("/").to_owned();
        let step = match input {
            Input::Reply(reply) => match (self.mine.take(), reply) {
                (Some(op), Err(ZkError::ConnectionLoss)) => self.send_mine(op),
                (Some(_), Ok(OpResult::Children { children, .. })) => {
                    self.on_listing(inner, &dir, children)
                }
                (Some(_), Ok(OpResult::Exists(stat))) => {
                    if stat.is_none() || self.relist {
                        self.relist(dir)
                    } else {
                        Step::wait()
                    }
                }
                // Its own op failed otherwise (the session expired, the directory went): the
                // inner machine's listing failed so.
                (Some(_), reply) => self.pass(inner, Input::Reply(reply)),
                (None, Ok(OpResult::Children { children, .. }))
                    if matches!(self.traffic.sent, Some(Op::GetChildren { .. })) =>
                {
                    self.traffic.sent = None;
                    self.on_listing(inner, &dir, children)
                }
                (None, Ok(OpResult::Created { path, stat })) => {
                    if self.traffic.creating().is_some() {
                        self.own = Some(path.clone());
                    }
                    self.pass(inner, Input::Reply(Ok(OpResult::Created { path, stat })))
                }
                (None, reply) => self.pass(inner, Input::Reply(reply)),
            },
            Input::Event(ZkEvent::Watch(event))
                if event.event_type == EventType::NodeDeleted
                    && self.awaited.as_deref() == Some(event.path.as_str()) =>
            {
                self.awaited = None;
                if self.mine.is_some() {
                    self.relist = true;
                    Step::wait()
                } else {
                    self.relist(dir)
                }
            }
            input => self.pass(inner, input),
        };
        match &step.action {
            // Reading an adopted node's stat: that node is its own.
            Action::Send(Op::Exists { path, watch: false }) => self.own = Some(path.clone()),
            Action::Send(Op::Create { mode, .. }) if mode.is_sequential() => self.own = None,
            _ => {}
        }
        if self.mine.is_none() {
            self.traffic.sent(&step);
        }
        step
    }
}

impl SortByName {
    /// Hands an input to the inner machine as it is.
    fn pass<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        self.traffic.take(&input);
        inner.step(input)
    }
}

/// Lists the directory before it creates its sequential node, and takes that listing, with its
/// own node added, for the line instead of listing again once the node is made: it counts the
/// semaphore's leases before its create. Two that list at the same time both see a lease free
/// and both take it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct ListFirst {
    /// The create the inner machine asked for, held back while the listing is in flight.
    create: Option<Op>,
    /// The listing taken before the create.
    before: Option<Vec<String>>,
}

impl Mutation for ListFirst {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match (input, self.create.take()) {
            (Input::Reply(reply), Some(create)) => return self.listed(inner, reply, create),
            (input, held) => {
                self.create = held;
                input
            }
        };
        let own = match &input {
            Input::Reply(Ok(OpResult::Created { path, .. })) => {
                path.rsplit('/').next().map(str::to_owned)
            }
            _ => None,
        };
        let mut step = inner.step(input);
        if let (Some(own), Action::Send(Op::GetChildren { .. })) = (own, &step.action) {
            if let Some(mut children) = self.before.take() {
                children.push(own);
                step = answer_listing(inner, step, children);
            }
        }
        if let Action::Send(create @ Op::Create { mode, .. }) = &step.action {
            if mode.is_sequential() {
                step.action = Action::Send(self.list_before(create.clone()));
            }
        }
        step
    }
}

impl ListFirst {
    /// Takes the reply to the listing sent before `create`, and sends it.
    fn listed<M: Recipe>(&mut self, inner: &mut M, reply: OpReply, create: Op) -> Step<M::Outcome> {
        let before = match reply {
            Ok(OpResult::Children { children, .. }) => children,
            Err(ZkError::NoNode) => Vec::new(),
            Err(ZkError::ConnectionLoss) => return Step::send(self.list_before(create)),
            // The inner machine takes any other failure as its create's.
            failed => return inner.step(Input::Reply(failed)),
        };
        self.before = Some(before);
        Step::send(create)
    }

    /// Holds `create` back: the listing of its directory goes first.
    fn list_before(&mut self, create: Op) -> Op {
        let Op::Create { path, .. } = &create else {
            return create;
        };
        let listing = Op::GetChildren {
            path: parent(path).to_owned(),
            watch: false,
        };
        self.create = Some(create);
        listing
    }
}

/// What a mutation remembers of its inner machine's traffic: the op in flight and the last
/// listing it was answered with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
struct Traffic {
    sent: Option<Op>,
    listing: Vec<String>,
}

impl Traffic {
    /// Notes a reply (a listing is remembered) on its way to the inner machine.
    fn take<R>(&mut self, input: &Input<R>) {
        if let Input::Reply(reply) = input {
            if let (Some(Op::GetChildren { .. }), Ok(OpResult::Children { children, .. })) =
                (&self.sent, reply)
            {
                self.listing = children.clone();
            }
            self.sent = None;
        }
    }

    /// The op in flight, if it is the create of a sequential node (not safe to repeat).
    fn creating(&self) -> Option<&Op> {
        self.sent
            .as_ref()
            .filter(|op| matches!(op, Op::Create { mode, .. } if mode.is_sequential()))
    }

    /// Notes the op the inner machine sends, if any.
    fn sent<O>(&mut self, step: &Step<O>) {
        if let Action::Send(op) = &step.action {
            self.sent = Some(op.clone());
        }
    }
}

/// Answers the listing `step` asks for with `children` instead of sending it: the step the inner
/// machine takes next, still telling what `step` told.
fn answer_listing<M: Recipe>(
    inner: &mut M,
    mut step: Step<M::Outcome>,
    children: Vec<String>,
) -> Step<M::Outcome> {
    let believed = Ok(OpResult::Children {
        children,
        stat: Stat::default(),
    });
    let outcome = step.outcome.take();
    let mut next = inner.step(Input::Reply(believed));
    next.outcome = next.outcome.or(outcome);
    next
}

/// The server's sequence number at the end of a sequential node's name (`%010d`).
fn sequence(name: &str) -> Option<i32> {
    name.get(name.len().checked_sub(10)?..)?.parse().ok()
}

/// The parent of an absolute path (`/` for a top-level node).
fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((parent, _)) => parent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::lock::{Lock, LockMachine, LockOutcome, LockRequest};

    fn op<O>(step: &Step<O>) -> &Op {
        match &step.action {
            Action::Send(op) => op,
            other => panic!("expected an op, got {other:?}"),
        }
    }

    fn children(names: &[&str]) -> Input<LockRequest> {
        Input::Reply(Ok(OpResult::Children {
            children: names.iter().map(|n| n.to_string()).collect(),
            stat: Stat::default(),
        }))
    }

    #[test]
    fn blind_retry_creates_again_after_connection_loss_without_looking() {
        let mut m = Mutated::<_, BlindRetry>::new(Lock::new("/l").machine(1));
        let create = op(&m.step(Input::Start)).clone();
        let again = m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert_eq!(op(&again), &create);
    }

    #[test]
    fn watch_parent_lists_the_parent_with_a_watch_and_wakes_on_any_change() {
        let mut m = Mutated::<_, WatchParent>::new(Lock::new("/l").machine(1));
        m.step(Input::Start);
        let own = "0000000000000001-lock-0000000002";
        m.step(Input::Reply(Ok(OpResult::Created {
            path: format!("/l/{own}"),
            stat: Stat::default(),
        })));
        let watch = m.step(children(&["a-lock-0000000001", own]));
        let expected = Op::GetChildren {
            path: "/l".to_owned(),
            watch: true,
        };
        assert_eq!(op(&watch), &expected);
        let waits = m.step(children(&["a-lock-0000000001", own]));
        assert_eq!(waits.action, Action::Wait);
        // Any change to the children, here a newcomer's create, wakes it to list again.
        let changed = WatchedEvent {
            event_type: EventType::NodeChildrenChanged,
            path: "/l".to_owned(),
        };
        let relist = m.step(Input::Event(ZkEvent::Watch(changed)));
        assert!(matches!(op(&relist), Op::GetChildren { watch: false, .. }));
    }

    /// A lock machine (node `...-lock-0000000003`) waiting behind a and b.
    fn third_in_line<X: Mutation>() -> Mutated<LockMachine, X> {
        let mut m = Mutated::new(Lock::new("/l").machine(1));
        m.step(Input::Start);
        m.step(Input::Reply(Ok(OpResult::Created {
            path: format!("/l/{OWN}"),
            stat: Stat::default(),
        })));
        m
    }

    const OWN: &str = "0000000000000001-lock-0000000003";

    #[test]
    fn trust_deletion_takes_the_lock_when_its_predecessor_goes_without_listing() {
        let mut m = third_in_line::<TrustDeletion>();
        m.step(children(&["a-lock-0000000001", "b-lock-0000000002", OWN]));
        m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
        let gone = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: "/l/b-lock-0000000002".to_owned(),
        };
        // a still holds the lock, yet the waiter takes it at once.
        let step = m.step(Input::Event(ZkEvent::Watch(gone)));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 0 }));
    }

    #[test]
    fn watch_lowest_watches_the_holder_not_the_predecessor() {
        let mut m = third_in_line::<WatchLowest>();
        let step = m.step(children(&["a-lock-0000000001", "b-lock-0000000002", OWN]));
        let watch = Op::Exists {
            path: "/l/a-lock-0000000001".to_owned(),
            watch: true,
        };
        assert_eq!(op(&step), &watch);
    }

    #[test]
    fn trust_any_event_passes_a_standing_barrier_on_a_disconnect() {
        use zklab_recipes::barrier::{BarrierMachine, BarrierOutcome, Part};
        let mut m = Mutated::<_, TrustAnyEvent>::new(BarrierMachine::new("/b/x", Part::Waiter, 1));
        assert!(matches!(op(&m.step(Input::Start)), Op::Sync { .. }));
        assert!(matches!(
            op(&m.step(Input::Reply(Ok(OpResult::Synced)))),
            Op::Exists { watch: true, .. }
        ));
        let standing = Ok(OpResult::Exists(Some(Stat::default())));
        assert_eq!(m.step(Input::Reply(standing)).action, Action::Wait);
        let disconnected = Input::Event(ZkEvent::Session(SessionEvent::Disconnected));
        let step = m.step(disconnected);
        assert_eq!(step.outcome, Some(BarrierOutcome::Passed));
        assert_eq!(step.action, Action::Done);
    }

    #[test]
    fn the_parent_of_a_path() {
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
    }
}

/// A contender that never heeds an ask to give up: it reads the `unlock` written to its node as
/// nothing, so it keeps the lock for all its work, and the waiter that asked has to force it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct IgnoresUnlock;

impl Mutation for IgnoresUnlock {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(Ok(OpResult::Data { data, stat })) if data == UNLOCK => {
                Input::Reply(Ok(OpResult::Data {
                    data: Vec::new(),
                    stat,
                }))
            }
            input => input,
        };
        inner.step(input)
    }
}

/// A consumer that takes an item with a plain `delete` instead of the take's `multi` (which
/// records the taker), sends it again after ConnectionLoss, and reads NoNode on that second try
/// as its own take if `MINE` (but another consumer may have taken it: the item goes to two), or
/// as another's if not (but the first try may have landed: the item is lost).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct PlainDelete<const MINE: bool> {
    /// The take the inner machine asked for, while its delete stands in for it.
    taking: Option<Vec<Op>>,
    /// The delete was sent again after ConnectionLoss.
    again: bool,
}

impl<const MINE: bool> PlainDelete<MINE> {
    /// Steps the inner machine, sending the delete alone in place of any take it asks for.
    fn pass<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let mut step = inner.step(input);
        if let Action::Send(Op::Multi(ops)) = &step.action {
            if let [delete @ Op::Delete { .. }, Op::Create { path, .. }] = ops.as_slice() {
                if path.contains("-taken-") {
                    let delete = delete.clone();
                    self.taking = Some(ops.clone());
                    self.again = false;
                    step.action = Action::Send(delete);
                }
            }
        }
        step
    }
}

impl<const MINE: bool> Mutation for PlainDelete<MINE> {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let Some(ops) = self.taking.clone() else {
            return self.pass(inner, input);
        };
        let reply = match input {
            Input::Reply(reply) => reply,
            input => return self.pass(inner, input),
        };
        let landed = Ok(OpResult::Multi(vec![
            Ok(OpResult::Deleted),
            Ok(OpResult::RolledBack),
        ]));
        let believed = match reply {
            Err(ZkError::ConnectionLoss) => {
                self.again = true;
                return Step::send(ops[0].clone());
            }
            Ok(OpResult::Deleted) => landed,
            Err(ZkError::NoNode) if self.again && MINE => landed,
            Err(ZkError::NoNode) => Ok(OpResult::Multi(vec![
                Err(ZkError::NoNode),
                Err(ZkError::RuntimeInconsistency),
            ])),
            other => other,
        };
        self.taking = None;
        self.pass(inner, Input::Reply(believed))
    }
}

/// A consumer whose claim on an item is a persistent node rather than an ephemeral one: if its
/// session ends before it acknowledges the item, the claim stays, and nobody ever gets the item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct PersistentClaim;

impl Mutation for PersistentClaim {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let mut step = inner.step(input);
        if let Action::Send(Op::Multi(ops)) = &mut step.action {
            for op in ops {
                if let Op::Create { path, mode, .. } = op {
                    if path.ends_with(CLAIM) {
                        *mode = CreateMode::Persistent;
                    }
                }
            }
        }
        step
    }
}

/// A group member that joins with a persistent node: it stays in everyone's view after its
/// session ends, and blocks its own next join.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct PersistentMember;

impl Mutation for PersistentMember {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let mut step = inner.step(input);
        if let Action::Send(Op::Create { mode, .. }) = &mut step.action {
            if *mode == CreateMode::Ephemeral {
                *mode = CreateMode::Persistent;
            }
        }
        step
    }
}

/// A name registered by create alone, NodeExists taken as registered: a name registered before
/// keeps its old value, though the registration is told done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct CreateOnly {
    /// The write in flight was turned into a create: its answer is told as a write's.
    turned: bool,
}

impl Mutation for CreateOnly {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(Ok(OpResult::Created { .. }) | Err(ZkError::NodeExists))
                if self.turned =>
            {
                Input::Reply(Ok(OpResult::SetData(Stat::default())))
            }
            input => input,
        };
        if matches!(input, Input::Reply(_)) {
            self.turned = false;
        }
        let mut step = inner.step(input);
        if let Action::Send(Op::SetData { path, data, .. }) = &step.action {
            let create = Op::Create {
                path: path.clone(),
                data: data.clone(),
                mode: CreateMode::Persistent,
            };
            step.action = Action::Send(create);
            self.turned = true;
        }
        step
    }
}

/// A queue's consumer that takes items in the order of their names (as a listing sorted by
/// name gives them), not of their sequence numbers: names start with the producer's tag, so
/// an item put later may come first. Each listing it is handed holds its first item by name
/// only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct FirstByName;

impl Mutation for FirstByName {
    const SYMMETRIC: bool = false;

    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(Ok(OpResult::Children { children, stat })) => {
                let first = children
                    .iter()
                    .filter(|name| item_sequence(name).is_some())
                    .filter(|name| !children.contains(&format!("{name}{CLAIM}")))
                    .min()
                    .cloned();
                let children = children
                    .into_iter()
                    .filter(|name| item_sequence(name).is_none() || Some(name) == first.as_ref())
                    .collect();
                Input::Reply(Ok(OpResult::Children { children, stat }))
            }
            input => input,
        };
        inner.step(input)
    }
}

/// A priority queue's consumer that works through its listing though the queue's watch fired
/// meanwhile: news that comes while an op is in flight is held back until it waits, as a plain
/// queue's consumer may do, so it may take an item while one of higher priority has come.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct StaleListing {
    /// An op is in flight.
    busy: bool,
    /// The news held back.
    held: Option<WatchedEvent>,
}

impl Mutation for StaleListing {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let Input::Event(ZkEvent::Watch(event)) = &input {
            if self.busy && event.event_type == EventType::NodeChildrenChanged {
                self.held = Some(event.clone());
                return Step::wait();
            }
        }
        let mut step = inner.step(input);
        self.busy = matches!(step.action, Action::Send(_));
        if step.action == Action::Wait {
            if let Some(news) = self.held.take() {
                let told = step.outcome.take();
                step = inner.step(Input::Event(ZkEvent::Watch(news)));
                step.outcome = step.outcome.or(told);
                self.busy = matches!(step.action, Action::Send(_));
            }
        }
        step
    }
}

/// A machine that reads without the `sync` its recipe puts first: it takes the answer of a
/// server that may not have applied what the machine already knows of (from elsewhere) for the
/// truth. On a standalone server nothing changes; a lagging follower answers from its past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct SkipSync;

impl Mutation for SkipSync {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let step = inner.step(input);
        if !matches!(step.action, Action::Send(Op::Sync { .. })) {
            return step;
        }
        let mut read = inner.step(Input::Reply(Ok(OpResult::Synced)));
        read.outcome = read.outcome.or(step.outcome);
        read
    }
}

/// A producer that, after ConnectionLoss on its put, puts again without looking whether the
/// first landed: a lost reply makes two items of one put.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct PutBlindly {
    traffic: Traffic,
}

impl Mutation for PutBlindly {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let (Input::Reply(Err(ZkError::ConnectionLoss)), Some(Op::Multi(ops))) =
            (&input, &self.traffic.sent)
        {
            if matches!(ops.first(), Some(Op::Create { path, .. }) if path.ends_with("-item-")) {
                return Step::send(Op::Multi(ops.clone()));
            }
        }
        self.traffic.take(&input);
        let step = inner.step(input);
        self.traffic.sent(&step);
        step
    }
}

/// A reader that never reads again after an event: it takes no news, so it keeps the value it
/// read first and misses every change after.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct IgnoresNews;

impl Mutation for IgnoresNews {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        match input {
            Input::Event(ZkEvent::Watch(_)) => Step::wait(),
            input => inner.step(input),
        }
    }
}
