//! Group membership, as ZooKeeper's recipes document and the ZooKeeper chapter of "Hadoop: The
//! Definitive Guide" build it: a member joins with an ephemeral node named after it under the
//! group's node, so it leaves the group when it leaves or when its session ends; anyone may
//! follow the membership, the group node's children, reading it again on every change.
//!
//! ```no_run
//! # async fn demo(worker: &impl zklab_recipes::client::ZkClient,
//! #               monitor: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::group::GroupError> {
//! use zklab_recipes::group::Group;
//!
//! let group = Group::new("/services/workers");
//! let mut member = group.join(worker, "worker-1").await?;
//! let mut view = group.watch(monitor);
//! let members = view.changed().await?; // the members now, then each change
//! # let _ = members;
//! member.leave().await?;
//! # Ok(()) }
//! ```
//!
//! A create whose reply was lost is sent again; NodeExists then means the first landed if the
//! node's ephemeral owner is the member's own session (another owner is another member of the
//! same name, a failure). A member whose session ended is no longer in the group: join again in
//! a new session.

use crate::acl::Acls;
use crate::client::ZkError;
use crate::client::{CreateMode, Op, OpReply, OpResult, SessionId, ZkClient};
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::follow::{Follow, Followed, Heard, Reading};
use crate::parts::link::{Delivery, Link, RecipeError};
use crate::parts::parents::Parents;
use crate::session_renaming::RenameSessions;
use crate::subtree::child_path;

/// What a group machine tells its application.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GroupOutcome {
    /// The member's node is made: it is in the group.
    Joined,
    /// The members now (sorted names): the first view, then each change.
    View(Vec<String>),
    /// The member's node is gone: it left the group.
    Left,
    /// The session ended first.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle (NodeExists: another member
    /// of the same name).
    Failed(ZkError),
}

impl From<GroupOutcome> for Outcome {
    fn from(outcome: GroupOutcome) -> Self {
        match outcome {
            GroupOutcome::Joined => Outcome::Joined,
            GroupOutcome::View(members) => Outcome::Viewed {
                members: Outcome::digest_names(&members),
                count: members.len() as i64,
            },
            GroupOutcome::Left => Outcome::Departed,
            GroupOutcome::Lost => Outcome::Lost,
            GroupOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// What an application asks of its group machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum GroupRequest {
    /// Leave the group.
    Leave,
}

/// What the machine does.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum GroupPart {
    /// Joins as `name`, and follows the membership until asked to leave.
    Member {
        /// The member's name: its node's.
        #[rename(keep)]
        name: String,
    },
    /// Joins as `name`, and is done: its node stays until its session ends (a process that
    /// only makes itself known).
    Announcer {
        /// The member's name: its node's.
        #[rename(keep)]
        name: String,
    },
    /// Follows the membership without joining, until the membership has changed `until`
    /// times (members joined or gone, as the group node's child version counts them), if given.
    Watcher {
        /// How many changes to stop at.
        #[rename(keep)]
        until: Option<i32>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// The member's create is in flight.
    Joining,
    /// The create found the node there: reading whose it is.
    Checking,
    /// The group node is missing: creating it and its ancestors.
    CreatingParent(Parents),
    /// Following the membership.
    Following,
    /// The member's delete is in flight.
    Leaving,
    Done,
}

/// A group member or watcher, as a pure state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct GroupMachine {
    #[rename(keep)]
    dir: String,
    part: GroupPart,
    #[rename(session)]
    session: SessionId,
    phase: Phase,
    /// The view told last.
    #[rename(keep)]
    view: Option<Vec<String>>,
    follow: Follow,
    link: Link,
}

impl GroupMachine {
    /// A machine playing `part` in the group whose node is `dir`, for session `session`.
    pub fn new(dir: &str, part: GroupPart, session: SessionId) -> Self {
        GroupMachine {
            dir: dir.to_owned(),
            part,
            session,
            phase: Phase::Idle,
            view: None,
            follow: Follow::new(dir, Reading::Children),
            link: Link::default(),
        }
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<GroupOutcome> {
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: GroupOutcome) -> Step<GroupOutcome> {
        self.phase = Phase::Done;
        self.follow.stop();
        Step::done(outcome)
    }

    /// The member's node, for a member.
    fn node(&self) -> Option<String> {
        match &self.part {
            GroupPart::Member { name } | GroupPart::Announcer { name } => {
                Some(child_path(&self.dir, name))
            }
            GroupPart::Watcher { .. } => None,
        }
    }

    fn join(&mut self) -> Step<GroupOutcome> {
        let Some(path) = self.node() else {
            return self.follow_now();
        };
        let create = Op::Create {
            path,
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
            acl: Acls::OPEN,
        };
        self.send(Phase::Joining, create)
    }

    fn joined(&mut self) -> Step<GroupOutcome> {
        match self.part {
            GroupPart::Announcer { .. } => {
                self.phase = Phase::Done;
                Step::stop().telling(GroupOutcome::Joined)
            }
            _ => self.follow_now().telling(GroupOutcome::Joined),
        }
    }

    fn follow_now(&mut self) -> Step<GroupOutcome> {
        let read = self.follow.read();
        self.send(Phase::Following, read)
    }

    /// The membership as read now, after `changes` changes: tells it if it changed, and stops
    /// at the watcher's goal.
    fn viewed(&mut self, mut members: Vec<String>, changes: i32) -> Step<GroupOutcome> {
        members.sort_unstable();
        let reached = matches!(self.part, GroupPart::Watcher { until: Some(n) } if changes >= n);
        let news = self.view.as_ref() != Some(&members);
        self.view = Some(members.clone());
        let step = match reached {
            true => {
                self.phase = Phase::Done;
                self.follow.stop();
                Step::stop()
            }
            false => {
                self.phase = Phase::Following;
                Step::wait()
            }
        };
        match news {
            true => step.telling(GroupOutcome::View(members)),
            false => step,
        }
    }

    fn leave(&mut self) -> Step<GroupOutcome> {
        self.follow.stop();
        // A watcher was never in the group: it only stops.
        let Some(path) = self.node() else {
            self.phase = Phase::Done;
            return Step::stop();
        };
        self.send(Phase::Leaving, Op::Delete { path, version: -1 })
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<GroupOutcome> {
        match (std::mem::replace(&mut self.phase, Phase::Idle), reply) {
            (Phase::Joining, Ok(OpResult::Created { .. })) => self.joined(),
            // Made by this create sent before, or by another member of the same name.
            (Phase::Joining, Err(ZkError::NodeExists)) => {
                let path = self.node().unwrap_or_default();
                self.send(Phase::Checking, Op::Exists { path, watch: false })
            }
            (Phase::Joining, Err(ZkError::NoNode)) => {
                let (parents, op) = Parents::start(&self.dir, CreateMode::Persistent);
                self.send(Phase::CreatingParent(parents), op)
            }
            (Phase::CreatingParent(parents), Ok(_) | Err(ZkError::NodeExists)) => {
                match parents.next(&self.dir) {
                    Some((next, op)) => self.send(Phase::CreatingParent(next), op),
                    None => self.join(),
                }
            }
            (Phase::Checking, Ok(OpResult::Exists(Some(stat)))) => {
                match stat.ephemeral_owner == self.session {
                    true => self.joined(),
                    false => self.done(GroupOutcome::Failed(ZkError::NodeExists)),
                }
            }
            // Gone meanwhile (the other member of the same name left): join again.
            (Phase::Checking, Ok(OpResult::Exists(None))) => self.join(),
            (Phase::Following, reply) => match self.follow.on_reply(reply) {
                Followed::Send(op) => self.send(Phase::Following, op),
                Followed::Read(OpResult::Children { children, stat }) => {
                    self.viewed(children, stat.cversion)
                }
                Followed::Wait => {
                    self.phase = Phase::Following;
                    Step::wait()
                }
                Followed::Read(_) => self.done(GroupOutcome::Failed(ZkError::MarshallingError)),
                Followed::Failed(error) => self.done(GroupOutcome::Failed(error)),
            },
            // Gone already: deleted by this delete sent before.
            (Phase::Leaving, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => {
                self.done(GroupOutcome::Left)
            }
            (_, Err(error)) => self.done(GroupOutcome::Failed(error)),
            (_, Ok(_)) => self.done(GroupOutcome::Failed(ZkError::MarshallingError)),
        }
    }
}

impl Recipe for GroupMachine {
    type Request = GroupRequest;
    type Outcome = GroupOutcome;

    fn step(&mut self, input: Input<GroupRequest>) -> Step<GroupOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => self.join(),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                Delivery::Resend(op) => Step::send(op),
                Delivery::SessionLost => self.done(GroupOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::Event(event) => {
                let following = self.phase == Phase::Following;
                match self.follow.hear(&mut self.link, following, &event) {
                    Heard::Lost => self.done(GroupOutcome::Lost),
                    Heard::Send(read) => Step::send(read),
                    Heard::Nothing => Step::wait(),
                }
            }
            // A read in flight is let go: the driver asks only between ops.
            Input::App(GroupRequest::Leave) if self.phase == Phase::Following => self.leave(),
            Input::App(_) | Input::Timeout => Step::wait(),
        }
    }
}

/// Why a group operation did not complete: the session ended first, or ZooKeeper answered with
/// an error the recipe cannot handle (NodeExists: another member has the name).
pub type GroupError = RecipeError;

/// What a group keeps besides its node's path: nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupSettings;

/// A group: the children of one znode.
pub type Group = Handle<GroupSettings>;

impl Group {
    /// The group whose members are the children of `dir` (created, with its ancestors, by the
    /// first member).
    pub fn new(dir: &str) -> Self {
        Handle::at(dir, GroupSettings)
    }

    /// Joins as `name`; the membership returned follows the group's members too.
    pub async fn join<'c, C: ZkClient>(
        &self,
        client: &'c C,
        name: &str,
    ) -> Result<Membership<'c, C, GroupMachine>, GroupError> {
        let part = GroupPart::Member {
            name: name.to_owned(),
        };
        let machine = GroupMachine::new(&self.path, part, client.session_id());
        self.join_with(client, machine).await
    }

    /// Joins with `machine`: a member's machine, or one built around it.
    pub async fn join_with<'c, C: ZkClient, M: Plays<GroupRequest, GroupOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<Membership<'c, C, M>, GroupError> {
        let mut membership = self.membership(client, machine);
        membership.start().await?;
        while !membership.joined {
            membership.next().await?;
        }
        Ok(membership)
    }

    /// Follows the members without joining.
    pub fn watch<'c, C: ZkClient>(&self, client: &'c C) -> Membership<'c, C, GroupMachine> {
        let part = GroupPart::Watcher { until: None };
        self.watch_with(
            client,
            GroupMachine::new(&self.path, part, client.session_id()),
        )
    }

    /// Follows with `machine`: a watcher's machine, or one built around it.
    pub fn watch_with<'c, C: ZkClient, M: Plays<GroupRequest, GroupOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Membership<'c, C, M> {
        self.membership(client, machine)
    }

    fn membership<'c, C: ZkClient, M: Plays<GroupRequest, GroupOutcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Membership<'c, C, M> {
        Membership {
            driver: self.driver(client, machine),
            started: false,
            joined: false,
            view: None,
            fresh: false,
        }
    }
}

/// A member's place in a group (or a watcher's), and its view of the members.
#[derive(Debug)]
pub struct Membership<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    started: bool,
    joined: bool,
    /// The members as last read (sorted names).
    view: Option<Vec<String>>,
    /// The view changed since the application last asked.
    fresh: bool,
}

impl<C: ZkClient, M: Plays<GroupRequest, GroupOutcome>> Membership<'_, C, M> {
    /// The members as last read (sorted names), if read yet.
    pub fn view(&self) -> Option<&[String]> {
        self.view.as_deref()
    }

    /// The members now, the first time; after that, the members once they change. Fails with
    /// `SessionLost` once the session ended (join again in a new one).
    pub async fn changed(&mut self) -> Result<Vec<String>, GroupError> {
        self.start().await?;
        while !self.fresh {
            self.next().await?;
        }
        Ok(self.told())
    }

    /// Takes in the news that has already come, without waiting: the members, if they changed
    /// since last asked.
    pub async fn catch_up(&mut self) -> Result<Option<Vec<String>>, GroupError> {
        self.start().await?;
        let outcomes = self.driver.feed_arrived_events().await;
        self.take(outcomes)?;
        Ok(self.fresh.then(|| self.told()))
    }

    /// Leaves the group (a watcher stops following).
    pub async fn leave(mut self) -> Result<(), GroupError> {
        if self.driver.is_done() {
            return Ok(());
        }
        let outcomes = self.driver.feed(Input::App(GroupRequest::Leave)).await;
        self.take(outcomes)?;
        while !self.driver.is_done() {
            self.next().await?;
        }
        Ok(())
    }

    fn told(&mut self) -> Vec<String> {
        self.fresh = false;
        self.view.clone().unwrap_or_default()
    }

    async fn start(&mut self) -> Result<(), GroupError> {
        if std::mem::replace(&mut self.started, true) {
            return Ok(());
        }
        let outcomes = self.driver.feed(Input::Start).await;
        self.take(outcomes)
    }

    /// Waits for the next event and takes in what it brings.
    async fn next(&mut self) -> Result<(), GroupError> {
        if self.driver.is_done() {
            return Err(RecipeError::SessionLost);
        }
        let outcomes = self.driver.feed_next_event().await;
        self.take(outcomes)
    }

    fn take(&mut self, outcomes: Vec<GroupOutcome>) -> Result<(), GroupError> {
        for outcome in outcomes {
            match outcome {
                GroupOutcome::Joined => self.joined = true,
                GroupOutcome::View(members) => (self.view, self.fresh) = (Some(members), true),
                GroupOutcome::Left => {}
                GroupOutcome::Lost => return Err(RecipeError::SessionLost),
                GroupOutcome::Failed(error) => return Err(RecipeError::Zk(error)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{EventType, Stat, WatchedEvent, ZkEvent};
    use crate::machine::Action;
    use crate::test_steps::op;

    const DIR: &str = "/group";
    const SESSION: SessionId = 7;

    fn member() -> GroupMachine {
        let part = GroupPart::Member { name: "a".into() };
        GroupMachine::new(DIR, part, SESSION)
    }

    fn children(names: &[&str]) -> Input<GroupRequest> {
        Input::Reply(Ok(OpResult::Children {
            children: names.iter().map(|name| (*name).to_owned()).collect(),
            stat: Stat {
                cversion: names.len() as i32,
                ..Stat::default()
            },
        }))
    }

    fn owned_by(owner: SessionId) -> Input<GroupRequest> {
        Input::Reply(Ok(OpResult::Exists(Some(Stat {
            ephemeral_owner: owner,
            ..Stat::default()
        }))))
    }

    #[test]
    fn a_create_sent_again_that_finds_the_node_joined_only_if_the_node_is_its_own() {
        for (owner, joined) in [(SESSION, true), (SESSION + 1, false)] {
            let mut machine = member();
            assert!(matches!(
                op(&machine.step(Input::Start)),
                Op::Create {
                    mode: CreateMode::Ephemeral,
                    ..
                }
            ));
            let step = machine.step(Input::Reply(Err(ZkError::NodeExists)));
            assert!(matches!(op(&step), Op::Exists { .. }));
            let step = machine.step(owned_by(owner));
            assert_eq!(step.outcome == Some(GroupOutcome::Joined), joined);
            if !joined {
                let failed = GroupOutcome::Failed(ZkError::NodeExists);
                assert_eq!(step.outcome, Some(failed));
            }
        }
    }

    #[test]
    fn a_member_tells_each_new_view_and_leaves_by_deleting_its_node() {
        let mut machine = member();
        machine.step(Input::Start);
        let step = machine.step(Input::Reply(Ok(OpResult::Created {
            path: "/group/a".into(),
            stat: Stat::default(),
        })));
        assert_eq!(step.outcome, Some(GroupOutcome::Joined));
        assert!(matches!(op(&step), Op::GetChildren { watch: true, .. }));
        let step = machine.step(children(&["b", "a"]));
        let view = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(step.outcome, Some(GroupOutcome::View(view)));
        let changed = Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeChildrenChanged,
            path: DIR.to_owned(),
        }));
        assert!(matches!(op(&machine.step(changed)), Op::GetChildren { .. }));
        // The same members: nothing to tell.
        assert_eq!(machine.step(children(&["a", "b"])).outcome, None);
        let step = machine.step(Input::App(GroupRequest::Leave));
        assert!(matches!(op(&step), Op::Delete { .. }));
        let step = machine.step(Input::Reply(Err(ZkError::NoNode)));
        assert_eq!(step.outcome, Some(GroupOutcome::Left));
        assert_eq!(step.action, Action::Done);
    }

    #[test]
    fn a_watcher_stops_once_the_group_changed_as_often_as_asked_and_an_announcer_once_joined() {
        let part = GroupPart::Watcher { until: Some(2) };
        let mut machine = GroupMachine::new(DIR, part, SESSION);
        assert!(matches!(
            op(&machine.step(Input::Start)),
            Op::GetChildren { .. }
        ));
        assert_eq!(machine.step(children(&["a"])).action, Action::Wait);
        let changed = Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeChildrenChanged,
            path: DIR.to_owned(),
        }));
        machine.step(changed);
        assert_eq!(machine.step(children(&["a", "b"])).action, Action::Done);

        let part = GroupPart::Announcer { name: "a".into() };
        let mut machine = GroupMachine::new(DIR, part, SESSION);
        machine.step(Input::Start);
        let step = machine.step(Input::Reply(Err(ZkError::NoNode)));
        assert!(matches!(op(&step), Op::Create { .. }));
        machine.step(Input::Reply(Ok(OpResult::Created {
            path: DIR.into(),
            stat: Stat::default(),
        })));
        let step = machine.step(Input::Reply(Ok(OpResult::Created {
            path: "/group/a".into(),
            stat: Stat::default(),
        })));
        assert_eq!(step.outcome, Some(GroupOutcome::Joined));
        assert_eq!(step.action, Action::Done);
    }
}
