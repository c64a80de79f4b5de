//! Reading once and taking no news after: a bug of every recipe that follows a value (the
//! configuration, the group's view).

use zklab_recipes::client::ZkEvent;
use zklab_recipes::machine::{Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

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
