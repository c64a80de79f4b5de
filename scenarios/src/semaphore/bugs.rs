//! The known bugs only the semaphore has, as mutations of its correct machine.

use zklab_recipes::client::{Op, OpReply, OpResult, ZkError};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{answer_listing, parent, Mutation};

/// Lists the directory before it creates its sequential node, and takes that listing, with its
/// own node added, for the line instead of listing again once the node is made: it counts the
/// semaphore's leases before its create. Two that list at the same time both see a lease free
/// and both take it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct ListFirst {
    /// The create the inner machine asked for, held back while the listing is in flight.
    create: Option<Op>,
    /// The listing taken before the create.
    before: Option<Vec<String>>,
}

impl Mutation for ListFirst {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match (input, self.create.take()) {
            (Input::Reply(reply), Some(create)) => return self.listed(inner, reply, create),
            (input, held) => {
                self.create = held;
                input
            }
        };
        let own = match &input {
            Input::Reply(Ok(OpResult::Created { path, .. })) => {
                path.rsplit('/').next().map(str::to_owned)
            }
            _ => None,
        };
        let mut step = inner.step(input);
        if let (Some(own), Action::Send(Op::GetChildren { .. })) = (own, &step.action) {
            if let Some(mut children) = self.before.take() {
                children.push(own);
                step = answer_listing(inner, step, children);
            }
        }
        if let Action::Send(create @ Op::Create { mode, .. }) = &step.action {
            if mode.is_sequential() {
                step.action = Action::Send(self.list_before(create.clone()));
            }
        }
        step
    }
}

impl ListFirst {
    /// Takes the reply to the listing sent before `create`, and sends it.
    fn listed<M: Recipe>(&mut self, inner: &mut M, reply: OpReply, create: Op) -> Step<M::Outcome> {
        let before = match reply {
            Ok(OpResult::Children { children, .. }) => children,
            Err(ZkError::NoNode) => Vec::new(),
            Err(ZkError::ConnectionLoss) => return Step::send(self.list_before(create)),
            // The inner machine takes any other failure as its create's.
            failed => return inner.step(Input::Reply(failed)),
        };
        self.before = Some(before);
        Step::send(create)
    }

    /// Holds `create` back: the listing of its directory goes first.
    fn list_before(&mut self, create: Op) -> Op {
        let Op::Create { path, .. } = &create else {
            return create;
        };
        let listing = Op::GetChildren {
            path: parent(path).to_owned(),
            watch: false,
        };
        self.create = Some(create);
        listing
    }
}
