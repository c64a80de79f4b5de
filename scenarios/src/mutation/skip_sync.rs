//! Reading without the recipe's `sync`: a bug of every recipe that reads what another
//! session wrote (the name registry; the ensemble tests' lagging follower).

use zklab_recipes::client::{Op, OpResult};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

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
