//! Running a case on one server, and what it saw there, in a form two servers can be compared
//! in: zxids by order, sessions by index, no clock.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use futures::FutureExt;

use crate::recipes::acl::Acls;
use crate::recipes::client::{
    CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId, Stat, ZkClient, ZkError,
    ZkEvent,
};

use crate::recipes::subtree::{delete_tree, read_tree, Znode};
use crate::sim::acl::SUPER_USER;
use crate::sim::packet::too_long;
use crate::sim::path::validate_op;

use super::case::{Step, CONFIG};

/// What a step got back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The reply to a call.
    Reply(OpReply),
    /// The result of a close.
    Close(Result<(), ZkError>),
    /// A fault struck the session.
    Struck,
    /// A fault was to strike a session that had ended: nothing happened.
    Ended,
    /// The replies to calls sent together, in the calls' order.
    Together(Vec<OpReply>),
}

/// How a server is made to misbehave on purpose, for a case's fault steps. A server that cannot
/// strike a kind leaves its method as it is: the step fails with `Unimplemented`.
pub trait Faults<C: ZkClient> {
    /// The server expires `session`.
    fn expire(&self, _session: &C) -> impl Future<Output = Result<(), ZkError>> {
        async { Err(ZkError::Unimplemented) }
    }

    /// The server drops `session`'s connection.
    fn disconnect(&self, _session: &C) -> impl Future<Output = Result<(), ZkError>> {
        async { Err(ZkError::Unimplemented) }
    }

    /// `session` sends `op`; the server applies it, loses the reply and drops the connection.
    fn lose_reply(&self, _session: &C, _op: Op) -> impl Future<Output = OpReply> {
        async { Err(ZkError::Unimplemented) }
    }

    /// In an ensemble, the follower `session` is attached to dies; the session cannot reach
    /// another.
    fn away(&self, _session: &C) -> impl Future<Output = Result<(), ZkError>> {
        async { Err(ZkError::Unimplemented) }
    }

    /// The follower that [`Faults::away`] killed restarts.
    fn back(&self, _session: &C) -> impl Future<Output = Result<(), ZkError>> {
        async { Err(ZkError::Unimplemented) }
    }
}

/// A server that cannot be made to misbehave: every fault step fails with `Unimplemented`.
pub struct NoFaults;

impl<C: ZkClient> Faults<C> for NoFaults {}

/// How long a fault step waits for its session to hear the outcome, on the session's clock.
pub(super) const SETTLE_BOUND: Duration = Duration::from_secs(10);

/// One step as a session saw it: its answer, then the events that session had received by the
/// time the answer came (a watch event comes before any reply that reflects its change). An
/// answer the client gave without asking the server orders nothing: its events stay for later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The answer.
    pub answer: Answer,
    /// The stepping session's events, taken right after the answer.
    pub events: Vec<ZkEvent>,
}

/// Everything a case showed on one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// One entry per step.
    pub steps: Vec<Seen>,
    /// Each session's events still untaken at the end (after a sync, for an open session).
    pub last_events: Vec<Vec<ZkEvent>>,
    /// The case's nodes and `/zookeeper/config`, parents first, at the end of the case.
    pub tree: Vec<Znode>,
    /// The ACL each of those nodes holds then, as the observer (the super user) reads it.
    pub acls: Vec<(String, Acls)>,
}

/// Runs `steps` on `sessions`, with `faults` for the fault steps, then reads the tree under
/// `root` and the config node through `observer`, a session of its own that sets no watches; an
/// error is the observer's, which could not read them.
pub async fn observe<C: ZkClient>(
    sessions: &[C],
    observer: &C,
    steps: &[Step],
    root: &str,
    faults: &impl Faults<C>,
) -> Result<Observation, ZkError> {
    let mut seen = Vec::with_capacity(steps.len());
    let mut ended = BTreeSet::new();
    // Per session, whether a session has ended since its events were last taken: those may
    // hold the deletions of its ephemerals, in an order of the server's (see
    // `sort_deletion_runs`).
    let mut unordered = vec![false; sessions.len()];
    for step in steps {
        let index = step.session();
        let session = &sessions[index];
        if matches!(step, Step::Close { .. } | Step::Expire { .. }) {
            if !ended.insert(index) && !matches!(step, Step::Close { .. }) {
                seen.push(Seen {
                    answer: Answer::Ended,
                    events: Vec::new(),
                });
                continue;
            }
        } else if ended.contains(&index)
            && !matches!(step, Step::Call { .. } | Step::Together { .. })
        {
            seen.push(Seen {
                answer: Answer::Ended,
                events: Vec::new(),
            });
            continue;
        }
        let (answer, settled): (Answer, Option<Settled>) = match step {
            // The server drops the connection of a request too long for it.
            Step::Call { op, .. } if too_long(op) && validate_op(op).is_ok() => (
                Answer::Reply(session.call(op.clone()).await),
                Some(is_connected),
            ),
            Step::Call { op, .. } => (Answer::Reply(session.call(op.clone()).await), None),
            Step::Close { .. } => (Answer::Close(session.close().await), None),
            Step::Expire { .. } => (struck(faults.expire(session).await), Some(is_expired)),
            Step::Disconnect { .. } => {
                (struck(faults.disconnect(session).await), Some(is_connected))
            }
            // A client refuses a malformed path unsent: no reply to lose.
            Step::LoseReply { op, .. } if validate_op(op).is_err() => (
                Answer::Reply(Err(ZkError::BadArguments)),
                Some(is_connected),
            ),
            Step::LoseReply { op, .. } => (
                Answer::Reply(faults.lose_reply(session, op.clone()).await),
                Some(is_connected),
            ),
            // What the session hears while away it is told at `Back`.
            Step::Away { .. } => (struck(faults.away(session).await), None),
            Step::Back { .. } => (struck(faults.back(session).await), Some(is_connected)),
            Step::Together { calls, order } => (
                Answer::Together(together(sessions, calls, order.as_deref()).await),
                None,
            ),
        };
        // A client refuses a malformed path, or any call after close, without asking the
        // server: such an answer orders nothing, and events are taken at the next one.
        let unsent = matches!(
            answer,
            Answer::Reply(Err(ZkError::BadArguments
                | ZkError::Closed
                | ZkError::Unimplemented))
        );
        if matches!(step, Step::Close { .. } | Step::Expire { .. }) {
            unordered.fill(true);
        }
        // Events of calls sent together wait for each session's next step: which came before
        // which answer depends on the order the server chose.
        let later = matches!(step, Step::Away { .. } | Step::Together { .. });
        let mut events = match (unsent || later, settled) {
            (true, _) => Vec::new(),
            (false, None) => drain(session),
            (false, Some(settled)) => settle(session, settled).await,
        };
        if !events.is_empty() && std::mem::take(&mut unordered[index]) {
            sort_deletion_runs(&mut events);
        }
        if let Step::Expire { .. } = step {
            // A real server sends an expiring session the events of its own ephemerals' deletion
            // as it closes the connection: some arrive, some not, from one run to the next.
            events.retain(|event| matches!(event, ZkEvent::Session(_)));
        }
        seen.push(Seen { answer, events });
    }
    let mut last_events = Vec::with_capacity(sessions.len());
    for (session, unordered) in sessions.iter().zip(unordered) {
        // A sync's reply comes after every event the server sent the session before it.
        let _ = session.sync("/").await;
        let mut events = drain(session);
        if unordered {
            sort_deletion_runs(&mut events);
        }
        last_events.push(events);
    }
    // The observer is attached to the leader, which may apply a write a moment after the
    // follower that answered it.
    let _ = observer.sync("/").await;
    let mut tree = read_tree(observer, root).await?;
    tree.extend(read_tree(observer, CONFIG).await?);
    let mut acls = Vec::with_capacity(tree.len());
    for node in &tree {
        match observer.get_acl(&node.path).await {
            Ok((acl, _)) => acls.push((node.path.clone(), acl)),
            Err(ZkError::NoNode) => {}
            Err(error) => return Err(error),
        }
    }
    let ids: Vec<SessionId> = sessions.iter().map(ZkClient::session_id).collect();
    let mut observation = Observation {
        steps: seen,
        last_events,
        tree,
        acls,
    };
    observation.normalize(&ids);
    Ok(observation)
}

/// The answers to `calls` (session index, op) sent at once (`order` `None`), or one after
/// another in `order`; in the calls' own order either way.
async fn together<C: ZkClient>(
    sessions: &[C],
    calls: &[(usize, Op)],
    order: Option<&[usize]>,
) -> Vec<OpReply> {
    let call = |index: usize| {
        let (session, op) = &calls[index];
        sessions[*session].call(op.clone())
    };
    match order {
        None => futures::future::join_all((0..calls.len()).map(call)).await,
        Some(order) => {
            let mut answers: Vec<Option<OpReply>> = calls.iter().map(|_| None).collect();
            for &index in order {
                answers[index] = Some(call(index).await);
            }
            answers.into_iter().flatten().collect()
        }
    }
}

/// The event a step waits for its session to hear, as the outcome of a fault.
type Settled = fn(&ZkEvent) -> bool;

fn drain(session: &impl ZkClient) -> Vec<ZkEvent> {
    std::iter::from_fn(|| session.try_next_event()).collect()
}

fn struck(result: Result<(), ZkError>) -> Answer {
    match result {
        Ok(()) => Answer::Struck,
        Err(error) => Answer::Reply(Err(error)),
    }
}

fn is_expired(event: &ZkEvent) -> bool {
    *event == ZkEvent::Session(SessionEvent::Expired)
}

fn is_connected(event: &ZkEvent) -> bool {
    *event == ZkEvent::Session(SessionEvent::SyncConnected)
}

/// The session's events until one that `settled` accepts, for at most [`SETTLE_BOUND`], then
/// every other the server sent before the reply to a `sync`: session states in order, then
/// watch events sorted.
///
/// Two differences between the sides are left out. A disconnection the session got over at once
/// is reported as its end alone by a real client library, which tells only the state its
/// connection is in when it looks. And a real server told to swallow a reply still sends the
/// watch events before it, where a connection that breaks loses them and the reconnected
/// session's re-registered watches fire them again: the same events, in another order.
async fn settle(session: &impl ZkClient, settled: fn(&ZkEvent) -> bool) -> Vec<ZkEvent> {
    let mut events = Vec::new();
    let bound = session.sleep(SETTLE_BOUND).fuse();
    futures::pin_mut!(bound);
    loop {
        let next = session.next_event().fuse();
        futures::pin_mut!(next);
        let event = futures::select_biased! {
            event = next => event,
            () = bound => None,
        };
        let Some(event) = event else { break };
        let done = settled(&event);
        events.push(event);
        if done {
            break;
        }
    }
    let _ = session.sync("/").await;
    events.extend(drain(session));
    let disconnected = ZkEvent::Session(SessionEvent::Disconnected);
    let (mut states, mut watches) = (Vec::new(), Vec::new());
    for event in events {
        match event {
            ZkEvent::Watch(_) => watches.push(event),
            ZkEvent::Session(SessionEvent::SyncConnected | SessionEvent::Expired)
                if states.last() == Some(&disconnected) =>
            {
                states.pop();
                states.push(event);
            }
            ZkEvent::Session(_) => states.push(event),
        }
    }
    watches.sort();
    states.extend(watches);
    states
}

/// Makes the case's root node, where all its paths live, through `observer`, which first
/// authenticates as zklab's super user (the simulated servers' and the launched ones'): it
/// reads and deletes whatever a case leaves, whatever ACL the case set. What an interrupted run
/// with the same seed left there goes first.
pub async fn prepare_root(observer: &impl ZkClient, root: &str) -> Result<(), ZkError> {
    observer.add_auth("digest", SUPER_USER.as_bytes()).await?;
    delete_tree(observer, root).await?;
    observer
        .create(root, b"", CreateMode::Persistent)
        .await
        .map(|_| ())
}

impl Observation {
    /// Counts each answer by kind (result or error code) and each event by type.
    pub fn tally(&self, counts: &mut BTreeMap<String, u64>) {
        let mut count = |key: String| *counts.entry(key).or_default() += 1;
        for seen in &self.steps {
            match &seen.answer {
                Answer::Reply(reply) => count(reply_kind(reply)),
                Answer::Close(_) => count("close".to_owned()),
                Answer::Struck => count("fault".to_owned()),
                Answer::Ended => count("fault on an ended session".to_owned()),
                Answer::Together(replies) => {
                    count("calls sent together".to_owned());
                    replies.iter().for_each(|reply| count(reply_kind(reply)));
                }
            }
        }
        let events = self.steps.iter().flat_map(|seen| &seen.events);
        for event in events.chain(self.last_events.iter().flatten()) {
            count(match event {
                ZkEvent::Watch(watch) => format!("event {:?}", watch.event_type),
                ZkEvent::Session(state) => format!("event {state:?}"),
            });
        }
    }

    /// Makes the observation comparable with another server's: zxids become their rank among
    /// the zxids it shows, times vanish (the servers' clocks differ), sessions become their index
    /// plus one (0 stays "no owner"), children are sorted (a server lists them in no set order).
    fn normalize(&mut self, sessions: &[SessionId]) {
        let mut zxids = Vec::new();
        self.for_each_stat(&mut |stat| zxids.extend([stat.czxid, stat.mzxid, stat.pzxid]));
        zxids.sort_unstable();
        zxids.dedup();
        let rank: BTreeMap<i64, i64> = zxids.into_iter().zip(1..).collect();
        self.for_each_stat(&mut |stat| {
            stat.czxid = rank[&stat.czxid];
            stat.mzxid = rank[&stat.mzxid];
            stat.pzxid = rank[&stat.pzxid];
            stat.ctime = 0;
            stat.mtime = 0;
            if stat.ephemeral_owner != 0 {
                stat.ephemeral_owner = sessions
                    .iter()
                    .position(|id| *id == stat.ephemeral_owner)
                    .map_or(-1, |index| index as i64 + 1);
            }
        });
        for result in self.results() {
            sort_children(result);
        }
    }

    /// The successful results among the answers.
    fn results(&mut self) -> impl Iterator<Item = &mut OpResult> {
        self.steps
            .iter_mut()
            .flat_map(|seen| match &mut seen.answer {
                Answer::Reply(reply) => std::slice::from_mut(reply),
                Answer::Together(replies) => replies.as_mut_slice(),
                _ => &mut [],
            })
            .filter_map(|reply| reply.as_mut().ok())
    }

    fn for_each_stat(&mut self, visit: &mut impl FnMut(&mut Stat)) {
        for result in self.results() {
            result_stats(result, visit);
        }
        for node in &mut self.tree {
            visit(&mut node.stat);
        }
    }
}

fn result_stats(result: &mut OpResult, visit: &mut impl FnMut(&mut Stat)) {
    match result {
        OpResult::Created { stat, .. }
        | OpResult::Data { stat, .. }
        | OpResult::Children { stat, .. }
        | OpResult::SetData(stat)
        | OpResult::Exists(Some(stat))
        | OpResult::Acl { stat, .. }
        | OpResult::AclSet(stat) => visit(stat),
        OpResult::Multi(results) | OpResult::MultiRead(results) => {
            for result in results.iter_mut().flatten() {
                result_stats(result, visit);
            }
        }
        OpResult::Listed(_)
        | OpResult::Counted(_)
        | OpResult::Ephemerals(_)
        | OpResult::Exists(None)
        | OpResult::Deleted
        | OpResult::Checked
        | OpResult::Synced
        | OpResult::RolledBack
        | OpResult::WatchAdded
        | OpResult::WatchesRemoved
        | OpResult::WatchesHeld
        | OpResult::Authenticated
        | OpResult::Identities(_) => {}
    }
}

/// A reply's kind: its result's, or its error code.
fn reply_kind(reply: &OpReply) -> String {
    match reply {
        Ok(OpResult::Multi(results)) if results.iter().any(Result::is_err) => {
            "multi rolled back".to_owned()
        }
        Ok(result) => result_kind(result).to_owned(),
        Err(error) => format!("{error:?}"),
    }
}

/// A successful result's kind, in a word.
fn result_kind(result: &OpResult) -> &'static str {
    match result {
        OpResult::Created { .. } => "created",
        OpResult::Deleted => "deleted",
        OpResult::Exists(Some(_)) => "exists",
        OpResult::Exists(None) => "exists: none",
        OpResult::Data { .. } => "data",
        OpResult::Children { .. } => "children",
        OpResult::SetData(_) => "set",
        OpResult::Checked => "checked",
        OpResult::Synced => "synced",
        OpResult::RolledBack => "rolled back",
        OpResult::Multi(_) => "multi committed",
        OpResult::Listed(_) => "listed",
        OpResult::MultiRead(_) => "multiRead",
        OpResult::Counted(_) => "counted",
        OpResult::Ephemerals(_) => "ephemerals",
        OpResult::WatchAdded => "watching",
        OpResult::WatchesRemoved => "watches removed",
        OpResult::WatchesHeld => "watches held",
        OpResult::Acl { .. } => "acl",
        OpResult::AclSet(_) => "acl set",
        OpResult::Authenticated => "authenticated",
        OpResult::Identities(_) => "identities",
    }
}

/// Sorts each run of consecutive NodeDeleted and NodeChildrenChanged events, in events taken
/// after a session ended. A session's end deletes its ephemerals in the order of a hash set,
/// which differs from one server (and one seed) to the next, and those deletions make exactly
/// such a run; other events keep their order, and so do deletions nobody's end comes between.
fn sort_deletion_runs(events: &mut [ZkEvent]) {
    let is_deletion = |event: &ZkEvent| {
        matches!(event, ZkEvent::Watch(watch)
            if matches!(watch.event_type, EventType::NodeDeleted | EventType::NodeChildrenChanged))
    };
    for run in events.chunk_by_mut(|a, b| is_deletion(a) && is_deletion(b)) {
        run.sort();
    }
}

/// Sorts a listing's names (of a multiRead's listings too) and a session's ephemerals: servers
/// list them in an order of their own.
fn sort_children(result: &mut OpResult) {
    match result {
        OpResult::Children { children, .. }
        | OpResult::Listed(children)
        | OpResult::Ephemerals(children) => children.sort(),
        OpResult::MultiRead(results) => results.iter_mut().flatten().for_each(sort_children),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipes::client::WatchedEvent;

    fn watch(event_type: EventType, path: &str) -> ZkEvent {
        ZkEvent::Watch(WatchedEvent {
            event_type,
            path: path.to_owned(),
        })
    }

    #[test]
    fn deletion_runs_are_sorted_and_other_events_keep_their_place() {
        let changed = watch(EventType::NodeDataChanged, "/z");
        let disconnected = ZkEvent::Session(SessionEvent::Disconnected);
        let mut events = vec![
            watch(EventType::NodeDeleted, "/d/e"),
            watch(EventType::NodeChildrenChanged, "/a"),
            changed.clone(),
            watch(EventType::NodeDeleted, "/y"),
            watch(EventType::NodeDeleted, "/b"),
            disconnected.clone(),
            watch(EventType::NodeDeleted, "/c"),
        ];
        sort_deletion_runs(&mut events);
        let mut first = vec![
            watch(EventType::NodeDeleted, "/d/e"),
            watch(EventType::NodeChildrenChanged, "/a"),
        ];
        first.sort();
        let mut second = vec![
            watch(EventType::NodeDeleted, "/y"),
            watch(EventType::NodeDeleted, "/b"),
        ];
        second.sort();
        let expected: Vec<ZkEvent> = first
            .into_iter()
            .chain([changed])
            .chain(second)
            .chain([disconnected, watch(EventType::NodeDeleted, "/c")])
            .collect();
        assert_eq!(events, expected);
    }
}
