//! The known bugs only the queues have, as mutations of its correct machine.

use zklab_recipes::client::{CreateMode, EventType, Op, OpResult, WatchedEvent, ZkError, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::queue::{item_sequence, CLAIM};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{Mutation, Traffic};

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
