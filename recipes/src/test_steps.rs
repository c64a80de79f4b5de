//! What the recipes' unit tests share: reading the op (or the multi) a step sends, and a listing
//! reply.

use std::fmt::Debug;

use crate::client::{Op, OpResult, Stat};
use crate::machine::{Action, Input, Step};

/// The op `step` sends; panics if it sends none.
pub(crate) fn op<O: Debug>(step: &Step<O>) -> &Op {
    match &step.action {
        Action::Send(op) => op,
        other => panic!("expected an op, got {other:?}"),
    }
}

/// The ops of the multi `step` sends; panics if it sends another op, or none.
pub(crate) fn multi_ops<O: Debug>(step: &Step<O>) -> &[Op] {
    match op(step) {
        Op::Multi(ops) => ops,
        other => panic!("expected a multi, got {other:?}"),
    }
}

/// The reply to a listing of `names`.
pub(crate) fn children<R>(names: &[&str]) -> Input<R> {
    let children = names.iter().map(|n| n.to_string()).collect();
    Input::Reply(Ok(OpResult::Children {
        children,
        stat: Stat::default(),
    }))
}
