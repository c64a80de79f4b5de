//! The known bugs only the name registry has, as mutations of its correct machine.

use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, OpResult, Stat, ZkError};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

/// A name registered by create alone, NodeExists taken as registered: a name registered before
/// keeps its old value, though the registration is told done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct CreateOnly {
    /// The write in flight was turned into a create: its answer is told as a write's.
    turned: bool,
}

impl Mutation for CreateOnly {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(Ok(OpResult::Created { .. }) | Err(ZkError::NodeExists))
                if self.turned =>
            {
                Input::Reply(Ok(OpResult::SetData(Stat::default())))
            }
            input => input,
        };
        if matches!(input, Input::Reply(_)) {
            self.turned = false;
        }
        let mut step = inner.step(input);
        if let Action::Send(Op::SetData { path, data, .. }) = &step.action {
            let create = Op::Create {
                path: path.clone(),
                data: data.clone(),
                mode: CreateMode::Persistent,
                acl: Acls::OPEN,
            };
            step.action = Action::Send(create);
            self.turned = true;
        }
        step
    }
}
