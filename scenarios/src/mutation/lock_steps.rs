//! A lock machine's steps, for the mutations' tests.

use zklab_recipes::client::{Op, OpResult, Stat};
use zklab_recipes::lock::{Lock, LockMachine, LockRequest};
use zklab_recipes::machine::{Action, Input, Recipe, Step};

use crate::mutation::{Mutated, Mutation};

pub(crate) fn op<O>(step: &Step<O>) -> &Op {
    match &step.action {
        Action::Send(op) => op,
        other => panic!("expected an op, got {other:?}"),
    }
}

pub(crate) fn children(names: &[&str]) -> Input<LockRequest> {
    Input::Reply(Ok(OpResult::Children {
        children: names.iter().map(|n| n.to_string()).collect(),
        stat: Stat::default(),
    }))
}

/// A lock machine (node `...-lock-0000000003`) waiting behind a and b.
pub(crate) fn third_in_line<X: Mutation>() -> Mutated<LockMachine, X> {
    let mut m = Mutated::new(Lock::new("/l").machine(1));
    m.step(Input::Start);
    m.step(Input::Reply(Ok(OpResult::Created {
        path: format!("/l/{OWN}"),
        stat: Stat::default(),
    })));
    m
}

pub(crate) const OWN: &str = "0000000000000001-lock-0000000003";
