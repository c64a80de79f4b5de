//! The known bugs only the barrier has, as mutations of its correct machine.

use zklab_recipes::client::{EventType, Op, OpResult, WatchedEvent, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::Mutation;

/// A waiter takes any event while its watch is set (a disconnect, its session's expiry, a stale
/// watch) as the watched node's deletion, and believes it gone without reading it again: it goes
/// on while the node still stands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct TrustAnyEvent {
    /// The node of the `exists` with a watch in flight.
    asking: Option<String>,
    /// The node the inner machine waits on, its watch set.
    watched: Option<String>,
}

impl Mutation for TrustAnyEvent {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        match (&input, self.watched.take()) {
            (Input::Event(_), Some(path)) => {
                // Hand the inner machine the deletion it believes in, and the answer it believes
                // to the `exists` it sends about it, without asking the server.
                let deleted = Input::Event(ZkEvent::Watch(WatchedEvent {
                    event_type: EventType::NodeDeleted,
                    path,
                }));
                let step = inner.step(deleted);
                if let Action::Send(Op::Exists { .. }) = step.action {
                    return inner.step(Input::Reply(Ok(OpResult::Exists(None))));
                }
                return step;
            }
            (_, watched) => self.watched = watched,
        }
        if let Input::Reply(reply) = &input {
            if let (Ok(OpResult::Exists(Some(_))), Some(path)) = (reply, self.asking.take()) {
                self.watched = Some(path);
            }
        }
        let step = inner.step(input);
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            self.asking = Some(path.clone());
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::client::{Op, OpResult, SessionEvent, Stat, ZkEvent};
    use zklab_recipes::machine::Input;

    use crate::mutation::lock_steps::op;
    use crate::mutation::Mutated;

    #[test]
    fn trust_any_event_passes_a_standing_barrier_on_a_disconnect() {
        use zklab_recipes::barrier::{BarrierMachine, BarrierOutcome, Part};
        let mut m = Mutated::<_, TrustAnyEvent>::new(BarrierMachine::new("/b/x", Part::Waiter, 1));
        assert!(matches!(op(&m.step(Input::Start)), Op::Sync { .. }));
        assert!(matches!(
            op(&m.step(Input::Reply(Ok(OpResult::Synced)))),
            Op::Exists { watch: true, .. }
        ));
        let standing = Ok(OpResult::Exists(Some(Stat::default())));
        assert_eq!(m.step(Input::Reply(standing)).action, Action::Wait);
        let disconnected = Input::Event(ZkEvent::Session(SessionEvent::Disconnected));
        let step = m.step(disconnected);
        assert_eq!(step.outcome, Some(BarrierOutcome::Passed));
        assert_eq!(step.action, Action::Done);
    }
}
