//! Watching the parent's children instead of the predecessor: the herd effect, a bug of every
//! recipe that lines up (the lock, the read/write lock, the double barrier).

use zklab_recipes::client::{
    EventType, Op, OpReply, OpResult, Stat, WatchedEvent, ZkError, ZkEvent,
};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{parent, Mutation};

/// Instead of an `exists` watch on its predecessor, a waiter watches the children of the
/// predecessor's parent and takes any change to them as the predecessor's deletion: every
/// deletion wakes every waiter (the herd effect), which all list again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct WatchParent {
    /// The node the inner machine asked to watch.
    watched: Option<String>,
    /// The listing in flight stands for the inner machine's `exists`.
    listing: bool,
}

impl WatchParent {
    /// The inner machine's `exists` answered from a listing of the parent.
    fn exists_from_listing(&self, reply: OpReply) -> OpReply {
        let watched = self.watched.as_deref().unwrap_or_default();
        let name = watched.rsplit('/').next().unwrap_or_default();
        match reply {
            Ok(OpResult::Children { children, .. }) => Ok(OpResult::Exists(
                children.iter().any(|c| c == name).then(Stat::default),
            )),
            Err(ZkError::NoNode) => Ok(OpResult::Exists(None)),
            other => other,
        }
    }
}

impl Mutation for WatchParent {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(reply) if self.listing => {
                self.listing = false;
                Input::Reply(self.exists_from_listing(reply))
            }
            Input::Event(ZkEvent::Watch(event))
                if event.event_type == EventType::NodeChildrenChanged
                    && self.watched.as_deref().map(parent) == Some(event.path.as_str()) =>
            {
                let path = self.watched.take().unwrap_or_default();
                Input::Event(ZkEvent::Watch(WatchedEvent {
                    event_type: EventType::NodeDeleted,
                    path,
                }))
            }
            other => other,
        };
        let mut step = inner.step(input);
        if let Action::Send(Op::Exists { path, watch: true }) = &step.action {
            let listing = Op::GetChildren {
                path: parent(path).to_owned(),
                watch: true,
            };
            self.watched = Some(path.clone());
            self.listing = true;
            step.action = Action::Send(listing);
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::lock::Lock;
    use zklab_recipes::machine::Input;

    use crate::mutation::lock_steps::{children, op};
    use crate::mutation::Mutated;

    #[test]
    fn watch_parent_lists_the_parent_with_a_watch_and_wakes_on_any_change() {
        let mut m = Mutated::<_, WatchParent>::new(Lock::new("/l").machine(1));
        m.step(Input::Start);
        let own = "0000000000000001-lock-0000000002";
        m.step(Input::Reply(Ok(OpResult::Created {
            path: format!("/l/{own}"),
            stat: Stat::default(),
        })));
        let watch = m.step(children(&["a-lock-0000000001", own]));
        let expected = Op::GetChildren {
            path: "/l".to_owned(),
            watch: true,
        };
        assert_eq!(op(&watch), &expected);
        let waits = m.step(children(&["a-lock-0000000001", own]));
        assert_eq!(waits.action, Action::Wait);
        // Any change to the children, here a newcomer's create, wakes it to list again.
        let changed = WatchedEvent {
            event_type: EventType::NodeChildrenChanged,
            path: "/l".to_owned(),
        };
        let relist = m.step(Input::Event(ZkEvent::Watch(changed)));
        assert!(matches!(op(&relist), Op::GetChildren { watch: false, .. }));
    }
}
