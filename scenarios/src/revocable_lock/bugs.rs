//! The known bugs only the revocable lock has, as mutations of its correct machine.

use zklab_recipes::client::OpResult;
use zklab_recipes::machine::{Input, Recipe, Step};
use zklab_recipes::parts::contender::UNLOCK;
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

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
