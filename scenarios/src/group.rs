//! Group membership's kit. Each client, each round, joins as `member-<client>`, works a while
//! taking in the membership's news, and leaves; after its rounds it joins for good and follows
//! the membership until its view holds every client, or until it has heard nothing for
//! [`IDLE`], and finishes a member, for the monitor to judge its view. The model: client 0
//! follows the membership until it has changed once per other client, which join and are done.
//! (Not until it holds every member: a member whose session expires after it is done never
//! joins again, but its join and its going both count as changes.)
//!
//! Herd-freedom is not asked: a change of membership is meant to reach every follower. Its
//! known bugs: a member that joins with a persistent node ([`PersistentMember`]), and one that takes
//! no news after its first read ([`IgnoresNews`]).
//!
//! [`PersistentMember`]: bugs::PersistentMember
//! [`IgnoresNews`]: crate::mutation::IgnoresNews

pub mod bugs;
pub mod monitor;

use std::marker::PhantomData;
use std::time::Duration;

use zklab_models::workload::Workload;
use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::group::{Group, GroupError, GroupMachine, GroupPart, GroupRequest};

use crate::config::IDLE;
use crate::group::monitor::GroupViews;
use crate::host::{first_of, rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};

/// The group's node.
pub const GROUP_DIR: &str = "/group";

/// How many pieces of work a member does between joining and leaving.
const HOLD_WORKS: u32 = 5;

/// In the model, the part of client 0, the watcher, carries this bit, and the number of
/// changes it waits for in the rest; a member's part is its client's index.
const WATCHER: u8 = 0x80;

/// The name client `client` joins as.
fn member_name(client: usize) -> String {
    format!("member-{client}")
}

/// Group membership's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct GroupKit<X>(PhantomData<X>);

impl<X> GroupKit<X> {
    /// The kit.
    pub const KIT: Self = GroupKit(PhantomData);
}

/// The last membership's news: the members it was last told, and since when.
#[derive(Default)]
struct Quiet {
    since: Option<Duration>,
    members: Option<Vec<String>>,
}

impl<X: Mutation> GroupKit<X> {
    fn mutated(part: GroupPart, session: SessionId) -> Mutated<GroupMachine, X> {
        Mutated::new(GroupMachine::new(GROUP_DIR, part, session))
    }

    /// One membership: joins, then works a while and leaves, or for the last one follows the
    /// membership until it holds `everyone` or it has not changed for [`IDLE`] (`quiet`, kept
    /// across sessions: a rejoin that finds the same members is no news).
    async fn membership<S: ZkClient + Sync>(
        host: &impl Host,
        group: &Group,
        session: &S,
        last: Option<usize>,
        quiet: &mut Quiet,
    ) -> Result<(), GroupError> {
        let part = GroupPart::Member {
            name: member_name(host.index()),
        };
        let machine = Self::mutated(part, session.session_id());
        let mut member = group.join_with(session, machine).await?;
        let Some(everyone) = last else {
            for _ in 0..HOLD_WORKS {
                host.work().await;
                member.catch_up().await?;
            }
            return member.leave().await;
        };
        loop {
            let since = *quiet.since.get_or_insert(host.elapsed());
            let left = IDLE.saturating_sub(host.elapsed().saturating_sub(since));
            match first_of(member.changed(), session.sleep(left)).await {
                None => return Ok(()),
                Some(Ok(view)) if view.len() >= everyone => return Ok(()),
                Some(Ok(view)) if quiet.members.as_ref() != Some(&view) => {
                    *quiet = Quiet {
                        since: Some(host.elapsed()),
                        members: Some(view),
                    };
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return Err(error),
            }
        }
    }
}

impl<X: Mutation> Workload for GroupKit<X> {
    type Machine = Mutated<GroupMachine, X>;
    type Monitors = (GroupViews, NoFailures);

    fn part(&self, client: usize, clients: usize) -> u8 {
        match client {
            0 => WATCHER | (clients - 1) as u8,
            member => member as u8,
        }
    }

    /// A watcher and a member.
    fn min_clients(&self) -> usize {
        2
    }

    /// The group's node.
    fn setup(&self, _: usize) -> Vec<Op> {
        vec![Op::Create {
            path: GROUP_DIR.to_owned(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        }]
    }

    fn machine(&self, part: u8, session: SessionId) -> Self::Machine {
        let part = match part & WATCHER {
            0 => GroupPart::Announcer {
                name: member_name(usize::from(part)),
            },
            _ => GroupPart::Watcher {
                until: Some(i32::from(part & !WATCHER)),
            },
        };
        Self::mutated(part, session)
    }

    fn request_when_holding(&self) -> GroupRequest {
        GroupRequest::Leave
    }

    /// No dead member in a view, and members end with the members' view; no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        (GroupViews::new(GROUP_DIR), NoFailures)
    }

    /// Members that are still in the group.
    fn may_remain(&self, child: &str) -> bool {
        child.starts_with("member-")
    }

    fn root(&self) -> &str {
        GROUP_DIR
    }

    /// Members have names: no two clients play the same part.
    fn symmetric(&self) -> bool {
        false
    }

    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for GroupKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let group = Group::new(GROUP_DIR).recording(host.recorder());
        let mut quiet = Quiet::default();
        // After its rounds, one more membership, for good.
        rounds_in_sessions!(host, rounds + 1, |session, round| async {
            let last = (round == rounds).then(|| host.clients());
            Self::membership(host, &group, &session, last, &mut quiet).await
        })
    }
}
