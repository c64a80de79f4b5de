//! Running a case on one server, and what it saw there, in a form two servers can be compared
//! in: zxids by order, sessions by index, no clock.

use std::collections::BTreeMap;

use crate::recipes::client::{
    CreateMode, OpReply, OpResult, SessionId, Stat, ZkClient, ZkError, ZkEvent,
};

use crate::recipes::tree::{read_tree, Znode};

use super::case::Step;

/// What a step got back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The reply to a call.
    Reply(OpReply),
    /// The result of a close.
    Close(Result<(), ZkError>),
}

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
}

/// Runs `steps` on `sessions`, then reads the tree under `root` and the config node through
/// `observer`, a session of its own that sets no watches.
pub async fn observe<C: ZkClient>(
    sessions: &[C],
    observer: &C,
    steps: &[Step],
    root: &str,
) -> Observation {
    let mut seen = Vec::with_capacity(steps.len());
    for step in steps {
        let (session, answer) = match step {
            Step::Call { session, op } => (
                *session,
                Answer::Reply(sessions[*session].call(op.clone()).await),
            ),
            Step::Close { session } => (*session, Answer::Close(sessions[*session].close().await)),
        };
        // A client refuses a malformed path, or any call after close, without asking the
        // server: such an answer orders nothing, and events are taken at the next one.
        let unsent = matches!(
            answer,
            Answer::Reply(Err(ZkError::BadArguments | ZkError::Closed))
        );
        let events = if unsent {
            Vec::new()
        } else {
            drain(&sessions[session])
        };
        seen.push(Seen { answer, events });
    }
    let mut last_events = Vec::with_capacity(sessions.len());
    for session in sessions {
        // A sync's reply comes after every event the server sent the session before it.
        let _ = session.sync("/").await;
        last_events.push(drain(session));
    }
    let mut tree = read_tree(observer, root).await;
    tree.extend(read_tree(observer, "/zookeeper/config").await);
    let ids: Vec<SessionId> = sessions.iter().map(ZkClient::session_id).collect();
    let mut observation = Observation {
        steps: seen,
        last_events,
        tree,
    };
    observation.normalize(&ids);
    observation
}

fn drain(session: &impl ZkClient) -> Vec<ZkEvent> {
    std::iter::from_fn(|| session.try_next_event()).collect()
}

/// Creates the case's root node, where all its paths live.
pub async fn create_root(observer: &impl ZkClient, root: &str) -> Result<(), ZkError> {
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
            count(match &seen.answer {
                Answer::Reply(Ok(OpResult::Multi(results)))
                    if results.iter().any(Result::is_err) =>
                {
                    "multi rolled back".to_owned()
                }
                Answer::Reply(Ok(result)) => result_kind(result).to_owned(),
                Answer::Reply(Err(error)) => format!("{error:?}"),
                Answer::Close(_) => "close".to_owned(),
            });
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
        for seen in &mut self.steps {
            if let Answer::Reply(Ok(result)) = &mut seen.answer {
                sort_children(result);
            }
        }
    }

    fn for_each_stat(&mut self, visit: &mut impl FnMut(&mut Stat)) {
        for seen in &mut self.steps {
            if let Answer::Reply(Ok(result)) = &mut seen.answer {
                result_stats(result, visit);
            }
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
        | OpResult::Exists(Some(stat)) => visit(stat),
        OpResult::Multi(results) => {
            for result in results.iter_mut().flatten() {
                result_stats(result, visit);
            }
        }
        OpResult::Exists(None)
        | OpResult::Deleted
        | OpResult::Checked
        | OpResult::Synced
        | OpResult::RolledBack => {}
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
    }
}

fn sort_children(result: &mut OpResult) {
    if let OpResult::Children { children, .. } = result {
        children.sort();
    }
}
