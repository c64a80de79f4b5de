//! Waiting on a predecessor already gone: a bug of every recipe that watches one (the lock,
//! the semaphore).

use zklab_recipes::client::{Op, OpResult, Stat};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

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
