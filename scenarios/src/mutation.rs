//! Known bugs as mutations of a correct machine.
//!
//! Real recipe implementations break in a few recurring ways. Each way is written once, as a
//! [`Mutation`]: a bug that sits between a correct recipe machine and its driver ([`Mutated`])
//! and changes only what the bug changes, so the public recipe types carry no broken variants.
//! A mutation several recipes share is here, one file each (the lock and the double barrier both
//! retry a create blindly); one recipe's own is in its kit's folder (`<recipe>/bugs.rs`). A kit
//! names a known bug as a recipe plus a mutation.

use std::fmt::Debug;
use std::hash::Hash;

use zklab_recipes::client::{Op, OpResult, Stat};
use zklab_recipes::declaration::Declared;
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

/// A bug: what it remembers, and how it changes the steps of the correct machine it is put
/// into ([`Mutated`]).
pub trait Mutation:
    Clone + Debug + Default + Eq + Hash + RenameSessions + Send + Sync + 'static
{
    /// Whether the mutated machine behaves the same under any renaming of sessions, which
    /// symmetry reduction assumes. A machine whose decisions depend on the guids in node names
    /// is not.
    const SYMMETRIC: bool = true;

    /// One step of `inner`, as the bug changes it.
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome>;
}

/// A correct machine with a bug put into it: the machine a known-bug kit runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Mutated<M, X> {
    inner: M,
    bug: X,
}

impl<M, X: Mutation> Mutated<M, X> {
    /// `inner` with bug `X`.
    pub fn new(inner: M) -> Self {
        Mutated {
            inner,
            bug: X::default(),
        }
    }
}

impl<M: Recipe, X: Mutation> Recipe for Mutated<M, X> {
    type Request = M::Request;
    type Outcome = M::Outcome;

    fn step(&mut self, input: Input<M::Request>) -> Step<M::Outcome> {
        self.bug.step(&mut self.inner, input)
    }

    /// What the correct machine declares: a bug is in what it does, not in what it says.
    fn declared(&self) -> Declared {
        self.inner.declared()
    }
}

mod blind_retry;
mod ignores_news;
#[cfg(test)]
pub(crate) mod lock_steps;
mod lost_wakeup;
mod skip_sync;
mod trust_deletion;
mod watch_parent;

pub use blind_retry::BlindRetry;
pub use ignores_news::IgnoresNews;
pub use lost_wakeup::LostWakeup;
pub use skip_sync::SkipSync;
pub use trust_deletion::TrustDeletion;
pub use watch_parent::WatchParent;

/// No mutation: the recipe as documented.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct Documented;

impl Mutation for Documented {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        inner.step(input)
    }
}

/// What a mutation remembers of its inner machine's traffic: the op in flight and the last
/// listing it was answered with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub(crate) struct Traffic {
    pub(crate) sent: Option<Op>,
    pub(crate) listing: Vec<String>,
}

impl Traffic {
    /// Notes a reply (a listing is remembered) on its way to the inner machine.
    pub(crate) fn take<R>(&mut self, input: &Input<R>) {
        if let Input::Reply(reply) = input {
            if let (Some(Op::GetChildren { .. }), Ok(OpResult::Children { children, .. })) =
                (&self.sent, reply)
            {
                self.listing = children.clone();
            }
            self.sent = None;
        }
    }

    /// The op in flight, if it is the create of a sequential node (not safe to repeat).
    pub(crate) fn creating(&self) -> Option<&Op> {
        self.sent
            .as_ref()
            .filter(|op| matches!(op, Op::Create { mode, .. } if mode.is_sequential()))
    }

    /// Notes the op the inner machine sends, if any.
    pub(crate) fn sent<O>(&mut self, step: &Step<O>) {
        if let Action::Send(op) = &step.action {
            self.sent = Some(op.clone());
        }
    }
}

/// Answers the listing `step` asks for with `children` instead of sending it: the step the inner
/// machine takes next, still telling what `step` told.
pub(crate) fn answer_listing<M: Recipe>(
    inner: &mut M,
    mut step: Step<M::Outcome>,
    children: Vec<String>,
) -> Step<M::Outcome> {
    let believed = Ok(OpResult::Children {
        children,
        stat: Stat::default(),
    });
    let outcome = step.outcome.take();
    let mut next = inner.step(Input::Reply(believed));
    next.outcome = next.outcome.or(outcome);
    next
}

/// The server's sequence number at the end of a sequential node's name (`%010d`).
pub(crate) fn sequence(name: &str) -> Option<i32> {
    name.get(name.len().checked_sub(10)?..)?.parse().ok()
}

/// The parent of an absolute path (`/` for a top-level node).
pub(crate) fn parent(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some(("", _)) | None => "/",
        Some((parent, _)) => parent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_of_a_path() {
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
    }
}
