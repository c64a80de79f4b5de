//! Taking a predecessor's deletion for one's turn without listing again: a bug of every recipe
//! that lines up behind a predecessor (the leader election, the double barrier).

use zklab_recipes::client::{EventType, Op, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{answer_listing, sequence, Mutation, Traffic};

/// After its predecessor's NodeDeleted, a waiter believes it is next without listing again: it
/// takes every node up to the deleted one as gone. When the predecessor went for another reason
/// than the holder letting go (its session expired), two contenders hold at once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct TrustDeletion {
    traffic: Traffic,
    /// The node the inner machine watches.
    watched: Option<String>,
    /// It has just gone.
    deleted: bool,
}

impl Mutation for TrustDeletion {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let Input::Event(ZkEvent::Watch(event)) = &input {
            self.deleted |= event.event_type == EventType::NodeDeleted
                && self.watched.as_deref() == Some(event.path.as_str());
        }
        self.traffic.take(&input);
        let mut step = inner.step(input);
        while let (Action::Send(Op::GetChildren { .. }), true) = (&step.action, self.deleted) {
            // Answer the listing itself: everything up to the deleted node is taken as gone.
            self.deleted = false;
            let gone = self.watched.as_deref().and_then(sequence);
            let children = self
                .traffic
                .listing
                .iter()
                .filter(|name| sequence(name) > gone)
                .cloned()
                .collect();
            step = answer_listing(inner, step, children);
        }
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            self.watched = Some(path.clone());
        }
        self.traffic.sent(&step);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::client::{EventType, OpResult, Stat, WatchedEvent, ZkEvent};
    use zklab_recipes::lock::LockOutcome;
    use zklab_recipes::machine::Input;

    use crate::mutation::lock_steps::{children, third_in_line, OWN};

    #[test]
    fn trust_deletion_takes_the_lock_when_its_predecessor_goes_without_listing() {
        let mut m = third_in_line::<TrustDeletion>();
        m.step(children(&["a-lock-0000000001", "b-lock-0000000002", OWN]));
        m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
        let gone = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: "/l/b-lock-0000000002".to_owned(),
        };
        // a still holds the lock, yet the waiter takes it at once.
        let step = m.step(Input::Event(ZkEvent::Watch(gone)));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 0 }));
    }
}
