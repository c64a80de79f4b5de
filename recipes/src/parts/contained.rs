//! A role whose directory is a container, as Curator 5 keeps the directories of its locks and
//! elections: the server's reaper deletes the directory once its last contender has gone, and
//! a contender that finds it gone makes it, and any missing ancestor, as containers again.

use crate::parts::contender::Line;
use crate::parts::exclusive::{Hold, Revoking, Role};

/// Role `R` with its directory a container: the same role in every other way. With
/// `MAKES_DIRECTORY` false, a contender takes the directory for granted, and NoNode on its
/// create is an error for its application (as a Curator recipe built without
/// `creatingParentContainersIfNeeded` has it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Contained<R, const MAKES_DIRECTORY: bool = true>(pub R);

impl<R> Contained<R> {
    /// `role` in a container directory that its contenders make again when it is gone.
    pub fn new(role: R) -> Self {
        Contained(role)
    }
}

impl<R: Role, const MAKES_DIRECTORY: bool> Role for Contained<R, MAKES_DIRECTORY> {
    type Request = R::Request;
    type Outcome = R::Outcome;

    fn line(&self) -> Line {
        let line = self.0.line().in_containers();
        match MAKES_DIRECTORY {
            true => line,
            false => Line {
                parents: None,
                ..line
            },
        }
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
        let mut m = Exclusive::new(DIR, "g1".to_owned(), Contained::new(LockRole));
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
    fn a_contender_taking_its_directory_for_granted_reports_it_gone() {
        let role = Contained::<LockRole, false>(LockRole);
        let mut m = Exclusive::new(DIR, "g1".to_owned(), role);
        m.step(Input::Start);
        let step = m.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(step.outcome, Some(LockOutcome::Failed(ZkError::NoNode)));
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
