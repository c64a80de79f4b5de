//! The known bugs only the tree cache has, as mutations of its correct machine.

use std::collections::BTreeMap;

use zklab_recipes::client::{EventType, Op, OpResult, SessionEvent, Stat, WatchedEvent, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

/// A cache that applies a change of data without reading the node again: it takes the event
/// for the next version of the data it holds, as if the event carried the new data.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct TrustChangeEvent {
    /// Each node's last answer: its data, its stat and its children.
    #[rename(keep)]
    read: BTreeMap<String, (Vec<u8>, Stat, Vec<String>)>,
    /// The node whose read is in flight.
    #[rename(keep)]
    reading: Option<String>,
}

impl TrustChangeEvent {
    /// Notes the node `action` reads, if it sends a read (an op in flight stays noted).
    fn note(&mut self, action: &Action) {
        if let Action::Send(op) = action {
            self.reading = match op {
                Op::MultiRead(reads) => reads.first().map(|read| read.path().to_owned()),
                _ => None,
            };
        }
    }
}

impl Mutation for TrustChangeEvent {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let Input::Reply(Ok(OpResult::MultiRead(results))) = &input {
            if let (Some(path), [Ok(OpResult::Data { data, stat }), Ok(OpResult::Listed(names))]) =
                (self.reading.clone(), results.as_slice())
            {
                self.read.insert(path, (data.clone(), *stat, names.clone()));
            }
        }
        let changed = match &input {
            Input::Event(ZkEvent::Watch(WatchedEvent {
                event_type: EventType::NodeDataChanged,
                path,
            })) => self
                .read
                .get(path)
                .cloned()
                .map(|read| (path.clone(), read)),
            _ => None,
        };
        let step = inner.step(input);
        let step = match (changed, &step.action) {
            (Some((path, (data, stat, names))), Action::Send(Op::MultiRead(reads)))
                if reads.first().map(Op::path) == Some(path.as_str()) =>
            {
                // Answer the read itself: the data it holds, one version on.
                let stat = Stat {
                    version: stat.version + 1,
                    ..stat
                };
                let data_read = Ok(OpResult::Data {
                    data: data.clone(),
                    stat,
                });
                let listed = Ok(OpResult::Listed(names.clone()));
                self.read.insert(path, (data, stat, names));
                inner.step(Input::Reply(Ok(OpResult::MultiRead(vec![
                    data_read, listed,
                ]))))
            }
            _ => step,
        };
        self.note(&step.action);
        step
    }
}

/// A cache that takes no notice of a reconnection: it counts on the client to set its watch
/// again, and reads nothing again, though nothing fired for what changed while it was away.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct NoRereadAfterReconnect;

impl Mutation for NoRereadAfterReconnect {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        match input {
            Input::Event(ZkEvent::Session(SessionEvent::SyncConnected)) => Step::wait(),
            input => inner.step(input),
        }
    }
}
