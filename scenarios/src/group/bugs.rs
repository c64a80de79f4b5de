//! The known bugs only group membership has, as mutations of its correct machine.

use zklab_recipes::client::{CreateMode, Op};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

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
