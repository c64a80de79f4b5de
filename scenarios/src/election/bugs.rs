//! The known bugs only the leader election has, as mutations of its correct machine.

use zklab_recipes::client::{EventType, Op, WatchedEvent, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{parent, sequence, Mutation, Traffic};

/// Every waiter watches the lowest node in line (the holder) instead of its predecessor: the
/// holder's deletion wakes every waiter at once (the herd effect).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct WatchLowest {
    traffic: Traffic,
    /// The lowest node it watches, and the predecessor the inner machine asked to watch.
    watched: Option<(String, String)>,
}

impl Mutation for WatchLowest {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Event(ZkEvent::Watch(event))
                if event.event_type == EventType::NodeDeleted
                    && self.watched.as_ref().map(|(lowest, _)| lowest) == Some(&event.path) =>
            {
                let (_, predecessor) = self.watched.take().unwrap_or_default();
                Input::Event(ZkEvent::Watch(WatchedEvent {
                    event_type: EventType::NodeDeleted,
                    path: predecessor,
                }))
            }
            other => other,
        };
        self.traffic.take(&input);
        let mut step = inner.step(input);
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            let lowest = self
                .traffic
                .listing
                .iter()
                .min_by_key(|name| sequence(name));
            if let Some(lowest) = lowest {
                let lowest = format!("{}/{lowest}", parent(path));
                self.watched = Some((lowest.clone(), path.clone()));
                step.action = Action::Send(Op::Exists {
                    path: lowest,
                    watch: true,
                });
            }
        }
        self.traffic.sent(&step);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mutation::lock_steps::{children, op, third_in_line, OWN};

    #[test]
    fn watch_lowest_watches_the_holder_not_the_predecessor() {
        let mut m = third_in_line::<WatchLowest>();
        let step = m.step(children(&["a-lock-0000000001", "b-lock-0000000002", OWN]));
        let watch = Op::Exists {
            path: "/l/a-lock-0000000001".to_owned(),
            watch: true,
        };
        assert_eq!(op(&step), &watch);
    }
}
