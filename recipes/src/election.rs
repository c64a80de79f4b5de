//! Leader election, as ZooKeeper's recipes document describes it, without a herd.
//!
//! Each candidate creates an ephemeral sequential node `<dir>/<guid>-n_<seq>`. The lowest
//! sequence leads; every other candidate watches only the next lower node with `exists`, and on
//! its deletion lists the children again before believing it leads (the deleted node may have
//! been a candidate whose session ended while the leader still leads). A leader whose connection
//! drops is suspended until it reconnects; one whose session ends has lost leadership. Resigning
//! deletes its node. The fencing token is the leader node's czxid. It is the exclusive-role
//! part under the election's names, so it shares the lock's fixes for lost replies.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient) -> Result<(), zklab_recipes::election::ElectionError> {
//! use zklab_recipes::election::Election;
//! let mut leadership = Election::new("/election/orders").campaign(client).await?;
//! if leadership.is_safe().await {
//!     // lead, presenting leadership.token() to whatever the leader alone may change
//! }
//! leadership.release().await?; // resign
//! # Ok(()) }
//! ```

use crate::client::ZkClient;
use crate::parts::contender::Line;
use crate::parts::exclusive::{role_outcome, Claim, Exclusive, Held, Hold, Role};
use crate::parts::link::RecipeError;

role_outcome! {
    /// What an election tells a candidate: it is elected to leadership, and resigns it.
    ElectionOutcome, role "leadership", Elected as Granted, Resigned
}

/// The marker between a contender's guid and its sequence number.
const MARKER: &str = "-n_";

/// The request a leader makes of the election.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElectionRequest {
    /// Step down.
    Resign,
}

/// The election's names for its exclusive role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ElectionRole;

impl Role for ElectionRole {
    type Request = ElectionRequest;
    type Outcome = ElectionOutcome;

    fn line(&self) -> Line {
        Line::first_in(&[MARKER])
    }

    fn tell(&self, hold: Hold) -> ElectionOutcome {
        hold.into()
    }

    fn let_go() -> ElectionRequest {
        ElectionRequest::Resign
    }
}

/// An election at a directory path, such as `/election/orders`.
pub type Election = Claim<ElectionRole>;

/// The election protocol as a pure state machine.
pub type ElectionMachine = Exclusive<ElectionRole>;

/// Leadership, held: [`Leadership::token`], [`Leadership::is_safe`], and
/// [`Leadership::release`] to resign.
pub type Leadership<'c, C, M = ElectionMachine> = Held<'c, C, M>;

/// Why a candidate could not be elected or resign cleanly.
pub type ElectionError = RecipeError;

impl Election {
    /// Waits until this session's candidate leads.
    pub async fn campaign<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<Leadership<'c, C>, ElectionError> {
        self.acquire(client).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acl::Acls;
    use crate::client::{CreateMode, EventType, Op, OpResult, Stat, WatchedEvent, ZkEvent};
    use crate::machine::{Action, Input, Recipe};
    use crate::test_steps::children;

    #[test]
    fn a_candidate_leads_only_after_listing_again_when_its_predecessor_goes() {
        let mut m = ElectionMachine::new("/e", "g".to_owned(), ElectionRole);
        let create = m.step(Input::Start);
        assert_eq!(
            create.action,
            Action::Send(Op::Create {
                path: "/e/g-n_".to_owned(),
                data: Vec::new(),
                mode: CreateMode::EphemeralSequential,
                acl: Acls::OPEN,
            })
        );
        m.step(Input::Reply(Ok(OpResult::Created {
            path: "/e/g-n_0000000003".to_owned(),
            stat: Stat::default(),
        })));
        let watch = m.step(children(&[
            "a-n_0000000001",
            "b-n_0000000002",
            "g-n_0000000003",
        ]));
        let predecessor = Op::Exists {
            path: "/e/b-n_0000000002".to_owned(),
            watch: true,
        };
        assert_eq!(watch.action, Action::Send(predecessor));
        m.step(Input::Reply(Ok(OpResult::Exists(Some(Stat::default())))));
        let gone = WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: "/e/b-n_0000000002".to_owned(),
        };
        let relist = m.step(Input::Event(ZkEvent::Watch(gone)));
        assert!(matches!(
            relist.action,
            Action::Send(Op::GetChildren { .. })
        ));
        assert_eq!(relist.outcome, None);
        // a, the leader, is still there: b's session had ended. Watch a now.
        let step = m.step(children(&["a-n_0000000001", "g-n_0000000003"]));
        assert_eq!(step.outcome, None);
        let step = m.step(Input::Reply(Ok(OpResult::Exists(None))));
        let step = match step.action {
            Action::Send(Op::GetChildren { .. }) => m.step(children(&["g-n_0000000003"])),
            other => panic!("expected a listing, got {other:?}"),
        };
        assert_eq!(step.outcome, Some(ElectionOutcome::Elected { token: 0 }));
        let resign = m.step(Input::App(ElectionRequest::Resign));
        assert_eq!(resign.outcome, Some(ElectionOutcome::Resigned));
    }
}
