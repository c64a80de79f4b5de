//! The tree cache kit's writer: a fixed list of writes under the cached subtree, each sent
//! again after ConnectionLoss until the server has it.

use zklab_recipes::client::{Op, ZkError, ZkEvent};
use zklab_recipes::machine::{Input, Recipe, Step};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::parts::link::{Connection, Delivery, Link};
use zklab_recipes::session_renaming::RenameSessions;
use zklab_recipes::tree_cache::CacheRequest;

/// What the writer tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WriterOutcome {
    /// Every write is in: the round is over (the data of its last set, if it had one).
    Wrote(Vec<u8>),
    /// The session ended before the last write.
    Lost,
    /// ZooKeeper refused a write.
    Failed(ZkError),
}

impl From<WriterOutcome> for Outcome {
    fn from(outcome: WriterOutcome) -> Self {
        match outcome {
            WriterOutcome::Wrote(data) => Outcome::Wrote {
                value: Outcome::digest(&data),
            },
            WriterOutcome::Lost => Outcome::Lost,
            WriterOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// Writes `ops` in order. A create that finds its node there, or a delete that finds it gone,
/// counts as done: a round played again in a new session meets its own earlier writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct SubtreeWriter {
    #[rename(keep)]
    ops: Vec<Op>,
    next: usize,
    link: Link,
}

impl SubtreeWriter {
    /// A writer of `ops` (creates, sets and deletes of nodes that are no sequential ones).
    pub fn new(ops: Vec<Op>) -> Self {
        SubtreeWriter {
            ops,
            next: 0,
            link: Link::default(),
        }
    }

    /// Sends the next write, or ends the round after the last.
    fn write_next(&mut self) -> Step<WriterOutcome> {
        match self.ops.get(self.next).cloned() {
            Some(op) => {
                self.next += 1;
                Step::send(self.link.send(op))
            }
            None => {
                let last_set = self.ops.iter().rev().find_map(|op| match op {
                    Op::SetData { data, .. } => Some(data.clone()),
                    _ => None,
                });
                Step::done(WriterOutcome::Wrote(last_set.unwrap_or_default()))
            }
        }
    }
}

impl Recipe for SubtreeWriter {
    type Request = CacheRequest;
    type Outcome = WriterOutcome;

    fn step(&mut self, input: Input<CacheRequest>) -> Step<WriterOutcome> {
        match input {
            Input::Start => self.write_next(),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => Step::done(WriterOutcome::Lost),
                Delivery::Reply(Ok(_)) => self.write_next(),
                Delivery::Reply(Err(error)) => {
                    let written = matches!(
                        (&self.ops[self.next - 1], error),
                        (Op::Create { .. }, ZkError::NodeExists)
                            | (Op::Delete { .. }, ZkError::NoNode)
                    );
                    match written {
                        true => self.write_next(),
                        false => Step::done(WriterOutcome::Failed(error)),
                    }
                }
            },
            Input::Event(ZkEvent::Session(state)) => match self.link.on_session(state, false) {
                Some(Connection::Lost) => Step::done(WriterOutcome::Lost),
                _ => Step::wait(),
            },
            Input::Event(ZkEvent::Watch(_)) | Input::App(()) | Input::Timeout => Step::wait(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::acl::Acls;
    use zklab_recipes::client::{CreateMode, OpResult};
    use zklab_recipes::machine::Action;

    fn create(path: &str) -> Op {
        Op::Create {
            path: path.to_owned(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        }
    }

    #[test]
    fn it_writes_in_order_again_after_connection_loss_and_takes_its_own_earlier_write_as_done() {
        let delete = Op::Delete {
            path: "/t/a".to_owned(),
            version: -1,
        };
        let mut w = SubtreeWriter::new(vec![create("/t/a"), delete.clone()]);
        assert_eq!(w.step(Input::Start).action, Action::Send(create("/t/a")));
        let lost = w.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert_eq!(lost.action, Action::Send(create("/t/a")));
        let exists = w.step(Input::Reply(Err(ZkError::NodeExists)));
        assert_eq!(exists.action, Action::Send(delete));
        let deleted = w.step(Input::Reply(Ok(OpResult::Deleted)));
        assert_eq!(deleted.action, Action::Done);
        assert_eq!(deleted.outcome, Some(WriterOutcome::Wrote(Vec::new())));
        let mut w = SubtreeWriter::new(vec![create("/t/a")]);
        w.step(Input::Start);
        let refused = w.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(
            refused.outcome,
            Some(WriterOutcome::Failed(ZkError::NoNode))
        );
    }
}
