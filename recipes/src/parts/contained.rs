//! A role whose directory is a container, as Curator 5 keeps the directories of its locks and
//! elections: the server's reaper deletes the directory once its last contender has gone, and
//! a contender that finds it gone makes it, and any missing ancestor, as containers again.

use crate::parts::contender::Line;
use crate::parts::exclusive::{Hold, Revoking, Role};

/// Role `R` with its directory a container: the same role in every other way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Contained<R>(pub R);

impl<R: Role> Role for Contained<R> {
    type Request = R::Request;
    type Outcome = R::Outcome;

    fn line(&self) -> Line {
        self.0.line().in_containers()
    }

    fn tell(&self, hold: Hold) -> R::Outcome {
        self.0.tell(hold)
    }

    fn let_go() -> R::Request {
        R::let_go()
    }

    fn tell_revoking(&self, revoking: Revoking) -> Option<R::Outcome> {
        self.0.tell_revoking(revoking)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{CreateMode, Op, OpResult, Stat, ZkError};
    use crate::lock::{LockMachine, LockOutcome, LockRole};
    use crate::machine::{Input, Recipe};
    use crate::parts::exclusive::Exclusive;
    use crate::test_steps::{children, op};

    const DIR: &str = "/locks/x";

    fn created(path: &str) -> Input<crate::lock::LockRequest> {
        Input::Reply(Ok(OpResult::Created {
            path: path.to_owned(),
            stat: Stat {
                czxid: 5,
                ..Stat::default()
            },
        }))
    }

    #[test]
    fn a_contender_whose_directory_went_makes_it_again_as_containers_and_contends() {
        let mut m = Exclusive::new(DIR, "g1".to_owned(), Contained(LockRole));
        m.step(Input::Start);
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(
            matches!(op(&step), Op::Create { path, mode: CreateMode::Container, .. } if path == "/locks")
        );
        // The top one went too while the next was made: start again from the top.
        let step = m.step(Input::Reply(Err(ZkError::NodeExists)));
        assert!(
            matches!(op(&step), Op::Create { path, mode: CreateMode::Container, .. } if path == DIR)
        );
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(op(&step), Op::Create { path, .. } if path == "/locks"));
        m.step(created("/locks"));
        m.step(created(DIR));
        let step = m.step(created(&format!("{DIR}/g1-lock-0000000000")));
        assert!(matches!(op(&step), Op::GetChildren { .. }));
        let step = m.step(children(&["g1-lock-0000000000"]));
        assert_eq!(step.outcome, Some(LockOutcome::Acquired { token: 5 }));
    }

    #[test]
    fn a_plain_lock_makes_its_directory_persistent() {
        let mut m: LockMachine = Exclusive::new(DIR, "g1".to_owned(), LockRole);
        m.step(Input::Start);
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(
            op(&step),
            Op::Create {
                mode: CreateMode::Persistent,
                ..
            }
        ));
    }
}
