//! A double barrier, as ZooKeeper's recipes document describes it: a group of processes enter
//! together once `x` of them are there, compute, and leave together once all of them are done.
//!
//! ```no_run
//! # async fn demo(client: &impl zklab_recipes::client::ZkClient)
//! # -> Result<(), zklab_recipes::double_barrier::DoubleBarrierError> {
//! use zklab_recipes::double_barrier::DoubleBarrier;
//!
//! let barrier = DoubleBarrier::new("/barriers/step", 3);
//! let inside = barrier.enter(client).await?; // once 3 processes are there
//! // ... compute ...
//! inside.leave().await?; // once every process inside is done
//! # Ok(()) }
//! ```
//!
//! **Enter.** A participant lists the directory, creates its own ephemeral sequential node
//! `<dir>/<guid>-p-<seq>` (adopted by guid after a lost create reply: see
//! [`crate::parts::own_node`]), and lists again. Once `x` participant nodes stand (`ready` is not
//! one of them), the participant that sees it creates `ready`; the others read `<dir>/ready` with
//! an `exists` watch, and its creation says the round has begun with them inside (their node
//! stood before it: `ready` is only ever created at the round's count, which they are part of).
//!
//! **Leave.** The document's efficient leave: the lowest participant node is the flag. A
//! participant that is not the lowest deletes its node and waits for the lowest to go; the lowest
//! waits for the highest node in the current listing to go, lists again, and deletes its node
//! once it is alone. Every wait lists again afterwards: an event is news, not a verdict. A
//! listing without the round's `ready` says everyone has left, whatever participant nodes it
//! shows: they are the next round's (whoever left first may be back already, waiting for the
//! others), not some of this one still inside.
//!
//! **Reconnects.** A watch event moves no last-seen zxid, so a client whose connection broke
//! may resume on a server that has not applied what an event told it (that the round began,
//! with the others inside). Once its connection has broken, a participant syncs the directory
//! before it lists it, a listing lost with the connection included.
//!
//! **Rounds.** The barrier is reusable, so every round must start clean, and the round after
//! cannot pass on this round's `ready`:
//! - The last participant deletes `ready` with its own node, in one `multi`; if it failed (its
//!   session ended), whoever then finds no participant node left deletes `ready` instead. A
//!   process that asks again for a round whose `ready` stands with some of it still inside (its
//!   session ended as it left) waits for them to go as a leaver does, so that someone is left
//!   to clear `ready`, and tells that it missed the round only then.
//! - A round admits only those that gathered before it began. A process that finds `ready`
//!   standing when it comes to enter waits until it is gone before it creates its node; one
//!   whose node was made only after the round began (its czxid is higher than the zxid that
//!   last set the directory's data), or only after the round ended, deletes it and misses the
//!   round.
//! - Rounds are counted in the directory's data version: `ready` is created in one `multi` with a
//!   `setData` of the directory at the version that names the round. So a process whose session
//!   ended mid-enter can ask for that round again ([`DoubleBarrier::enter_round`]) and learn that
//!   it began without it ([`DoubleBarrierOutcome::Missed`]) rather than wait for a round nobody
//!   else will come to; and a stale `ready` is only ever deleted by a `multi` that checks that
//!   version, so it never takes a newer round's.

use crate::acl::Acls;
use crate::client::{CreateMode, EventType, Op, OpReply, OpResult, SessionEvent, SessionId, Stat};
use crate::client::{ZkClient, ZkError, ZkEvent};
use crate::declaration::Declared;
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::Outcome;
use crate::parts::link::{ask_until, Connection, Delivery, Link, RecipeError};
use crate::parts::own_node::{Making, OwnNode};
use crate::session_renaming::{session_guid, RenameSessions};
use crate::subtree::child_path;

/// What a double barrier is called in outcomes.
pub const GATE: &str = "double barrier";

/// The name of the node whose existence says the round has begun.
pub const READY: &str = "ready";

/// The marker between a participant's guid and its sequence number.
pub const MARKER: &str = "-p-";

/// What a double barrier machine tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DoubleBarrierOutcome {
    /// Round `round` has begun with this participant inside.
    Entered {
        /// Which round (the directory's data version before it began).
        round: i64,
    },
    /// Round `round` began without this participant: its node went with an ended session.
    Missed {
        /// Which round.
        round: i64,
    },
    /// Everyone inside has left.
    Left,
    /// The session ended: its node went with it, and the others go on without it.
    Lost,
    /// ZooKeeper answered with an error the recipe cannot handle.
    Failed(ZkError),
}

impl From<DoubleBarrierOutcome> for Outcome {
    fn from(outcome: DoubleBarrierOutcome) -> Self {
        match outcome {
            DoubleBarrierOutcome::Entered { round } => Outcome::Entered { gate: GATE, round },
            DoubleBarrierOutcome::Missed { round } => Outcome::Missed { gate: GATE, round },
            DoubleBarrierOutcome::Left => Outcome::Left { gate: GATE },
            DoubleBarrierOutcome::Lost => Outcome::Lost,
            DoubleBarrierOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

/// What the application may ask of its machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DoubleBarrierRequest {
    /// The computation is done: leave.
    Leave,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    Idle,
    /// Listing the directory to count participants (and read the round).
    Counting,
    /// A `sync` of the directory is in flight before the listing of the leave (`leaving`) or of
    /// the count.
    Syncing {
        leaving: bool,
    },
    /// `exists(ready)` with a watch is in flight, to wait for what `want` says.
    Arming {
        want: Want,
    },
    /// Its own node is being made.
    Joining,
    /// The `multi` that creates `ready` and counts the round is in flight.
    Beginning,
    /// The `multi` that deletes a stale `ready` nobody is inside of is in flight.
    Clearing,
    /// Its node came after the round began: deleting it.
    Withdrawing,
    /// Waiting for news of `ready`, as `want` says.
    Waiting {
        want: Want,
    },
    /// Inside the round, until the application asks to leave.
    Inside,
    /// Listing the directory to see who is still inside.
    Listing,
    /// Deleting its own node; then it watches `lowest`.
    Deleting {
        lowest: String,
    },
    /// Watching a participant node: the `exists` is in flight (`asked`), or set.
    Watching {
        /// The child name of the node watched.
        node: String,
        asked: bool,
    },
    /// The last one inside: the `multi` that deletes its node and `ready` is in flight.
    Finishing,
    /// Nobody is inside any more: the delete that makes sure `ready` is gone is in flight.
    Tidying,
    Done,
}

/// What an entering participant waits for `ready` to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Want {
    /// To be created: its node is counted, and the round begins with it inside.
    Made,
    /// To go: it is a round before's, whose participants are still inside.
    Gone,
    /// Anything: a round before the one it asked for has yet to begin.
    News,
}

/// A double barrier participant as a pure state machine: it enters, and leaves when asked.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct DoubleBarrierMachine {
    own: OwnNode,
    threshold: u32,
    /// The round it is for; `None` until its first listing, when it means "the next one".
    #[rename(keep)]
    round: Option<i64>,
    phase: Phase,
    /// News of `ready`, or of the node watched, came while a read was in flight: read again.
    again: bool,
    /// The connection broke since its last `sync`: the server it is on now may not have applied
    /// what watch events told it (they move no last-seen zxid), so it syncs before it lists.
    behind: bool,
    /// It sees out the round that began without it (its node went with an ended session),
    /// so that `ready` is cleared: everyone leaving ends in `Missed`, not `Left`.
    missed: bool,
    link: Link,
}

/// The listing of the leave (`leaving`) or of the count.
fn listing(leaving: bool) -> Phase {
    match leaving {
        true => Phase::Listing,
        false => Phase::Counting,
    }
}

impl DoubleBarrierMachine {
    /// A participant in the double barrier whose nodes live in `dir`, entering once `threshold`
    /// participants are there, in round `round` (or the next one), with `guid` at the start of
    /// its node's name (unique to this attempt and stable for its session).
    pub fn new(dir: &str, threshold: u32, round: Option<i64>, guid: String) -> Self {
        DoubleBarrierMachine {
            own: OwnNode::new(dir, guid, MARKER),
            threshold,
            round,
            phase: Phase::Idle,
            again: false,
            behind: false,
            missed: false,
            link: Link::default(),
        }
    }

    fn dir(&self) -> &str {
        self.own.dir()
    }

    fn ready(&self) -> String {
        child_path(self.dir(), READY)
    }

    fn send(&mut self, phase: Phase, op: Op) -> Step<DoubleBarrierOutcome> {
        self.behind &= !matches!(op, Op::Sync { .. });
        self.phase = phase;
        Step::send(self.link.send(op))
    }

    fn done(&mut self, outcome: DoubleBarrierOutcome) -> Step<DoubleBarrierOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }

    /// Reads `ready` with a watch, to wait for it to do what `want` says.
    fn arm(&mut self, want: Want) -> Step<DoubleBarrierOutcome> {
        self.again = false;
        let exists = Op::Exists {
            path: self.ready(),
            watch: true,
        };
        self.send(Phase::Arming { want }, exists)
    }

    /// Lists the directory for `phase` (counting or leaving), after a `sync` if it is behind.
    fn list(&mut self, phase: Phase) -> Step<DoubleBarrierOutcome> {
        self.again = false;
        if self.behind {
            let leaving = phase == Phase::Listing;
            let sync = Op::Sync {
                path: self.dir().to_owned(),
            };
            return self.send(Phase::Syncing { leaving }, sync);
        }
        let list = Op::GetChildren {
            path: self.dir().to_owned(),
            watch: false,
        };
        self.send(phase, list)
    }

    /// The listing the op in flight leads to, if it is one or the `sync` before one.
    fn next_listing(&self) -> Option<Phase> {
        match self.phase {
            Phase::Counting | Phase::Listing => Some(self.phase.clone()),
            Phase::Syncing { leaving } => Some(listing(leaving)),
            _ => None,
        }
    }

    /// Everyone inside has left: it tells `Left`, or `Missed` if it only saw the round out.
    fn all_left(&mut self) -> Step<DoubleBarrierOutcome> {
        let round = self.round.unwrap_or_default();
        match self.missed {
            true => self.done(DoubleBarrierOutcome::Missed { round }),
            false => self.done(DoubleBarrierOutcome::Left),
        }
    }

    /// Deletes `ready` if the directory's version is still `version` (that of the round after
    /// the one it began): a stale `ready` is cleared, never a newer round's.
    fn clear_ready(&self, version: i64) -> Op {
        Op::Multi(vec![
            Op::Check {
                path: self.dir().to_owned(),
                version: version as i32,
            },
            Op::Delete {
                path: self.ready(),
                version: -1,
            },
        ])
    }

    /// Takes the answer to the `exists` that armed the watch on `ready`: waits for the watch,
    /// or lists again if `ready` already did what it waits for, or news of it came meanwhile.
    fn armed(&mut self, want: Want, standing: bool) -> Step<DoubleBarrierOutcome> {
        let done = match want {
            Want::Made => standing,
            Want::Gone => !standing,
            Want::News => false,
        };
        if done || self.again {
            return self.list(Phase::Counting);
        }
        self.phase = Phase::Waiting { want };
        Step::wait()
    }

    fn joining(&mut self, making: Making) -> Step<DoubleBarrierOutcome> {
        match making {
            Making::Send(op) => self.send(Phase::Joining, op),
            Making::Made => self.list(Phase::Counting),
            Making::Failed(error) => self.done(DoubleBarrierOutcome::Failed(error)),
        }
    }

    /// The participant nodes of a listing, lowest first (sequence numbers as serial numbers
    /// from the first one's, so a wrapped counter still orders them).
    fn participants(&self, children: &[String]) -> Vec<String> {
        let mut nodes: Vec<(i32, &String)> = children
            .iter()
            .filter_map(|name| Some((self.own.sequence_of(name)?, name)))
            .collect();
        let base = self.own.name().and_then(|own| self.own.sequence_of(own));
        let base = base.or(nodes.first().map(|(seq, _)| *seq)).unwrap_or(0);
        nodes.sort_by_key(|(seq, _)| seq.wrapping_sub(base));
        nodes.into_iter().map(|(_, name)| name.clone()).collect()
    }

    /// Enter: decides from a listing of the directory and its stat (the data version counts the
    /// rounds begun, and the zxid of the data's last change is the latest round's beginning).
    fn count(&mut self, children: Vec<String>, dir: &Stat) -> Step<DoubleBarrierOutcome> {
        let version = i64::from(dir.version);
        let round = *self.round.get_or_insert(version);
        if version < round {
            // Asked for a round after the next: wait for the ones before to begin.
            return self.arm(Want::News);
        }
        let participants = self.participants(&children);
        let own = self
            .own
            .name()
            .filter(|own| participants.iter().any(|p| p == own));
        let ready = children.iter().any(|child| child == READY);
        if ready && participants.is_empty() {
            // Nobody is inside the round of this `ready`: its last participant's session ended.
            let clear = self.clear_ready(version);
            return self.send(Phase::Clearing, clear);
        }
        if version > round {
            if own.is_none() && ready && version == round + 1 {
                // Its round's `ready` stands and some of it are inside: its session may have
                // ended as it left, with nobody else left to clear `ready`. It sees them out.
                self.missed = true;
                return self.leave(children, version);
            }
            if own.is_none() {
                return self.done(DoubleBarrierOutcome::Missed { round });
            }
            // Its node stands: it is inside if its node was there when the round began. A later
            // round cannot have begun while a node of this one stood, so its node came too late
            // for this round (and a later one may have counted it): it must not hold anyone up.
            if version == round + 1 && self.own.czxid() < dir.mzxid {
                return self.entered(round);
            }
            return self.send(Phase::Withdrawing, self.delete_own());
        }
        if ready {
            // The round before is still inside: wait until its `ready` is gone.
            return self.arm(Want::Gone);
        }
        if own.is_none() {
            let making = self.own.create();
            return self.joining(making);
        }
        if participants.len() < self.threshold as usize {
            return self.arm(Want::Made);
        }
        let begin = Op::Multi(vec![
            Op::SetData {
                path: self.dir().to_owned(),
                data: Vec::new(),
                version: round as i32,
            },
            Op::Create {
                path: self.ready(),
                data: Vec::new(),
                mode: CreateMode::Persistent,
                acl: Acls::OPEN,
            },
        ]);
        self.send(Phase::Beginning, begin)
    }

    fn entered(&mut self, round: i64) -> Step<DoubleBarrierOutcome> {
        self.phase = Phase::Inside;
        Step::wait().telling(DoubleBarrierOutcome::Entered { round })
    }

    /// Leave: decides from a listing of who is still inside, and the directory's data version.
    fn leave(&mut self, children: Vec<String>, version: i64) -> Step<DoubleBarrierOutcome> {
        let participants = self.participants(&children);
        let own = self.own.name().unwrap_or_default().to_owned();
        let inside = participants.contains(&own);
        let round = self.round.unwrap_or_default();
        // `ready` goes with the round's last participant node, or once none is left, and the
        // next round begins only after that. So once the round's `ready` is gone (or the version
        // names a later round), everyone has left, and any participant node listed is a later
        // round's: waiting for it to go would wait for a round that may need this one to begin.
        let standing = version == round + 1 && children.iter().any(|child| child == READY);
        if !standing {
            if inside {
                // Only a broken protocol takes `ready` before this node: still take it away.
                return self.send(Phase::Tidying, self.delete_own());
            }
            return self.all_left();
        }
        let (Some(lowest), Some(highest)) = (participants.first(), participants.last()) else {
            // Everyone has left, but `ready` still stands: the last one's session ended before
            // it took `ready` away.
            let tidy = self.clear_ready(round + 1);
            return self.send(Phase::Tidying, tidy);
        };
        if participants.len() == 1 && inside {
            let path = child_path(self.dir(), &own);
            let delete_both = vec![
                Op::Delete { path, version: -1 },
                Op::Delete {
                    path: self.ready(),
                    version: -1,
                },
            ];
            return self.send(Phase::Finishing, Op::Multi(delete_both));
        }
        if *lowest == own {
            let highest = highest.clone();
            return self.watch(highest);
        }
        let lowest = lowest.clone();
        if inside {
            let delete = Op::Delete {
                path: child_path(self.dir(), &own),
                version: -1,
            };
            return self.send(Phase::Deleting { lowest }, delete);
        }
        self.watch(lowest)
    }

    /// Deletes its own node, whatever its version.
    fn delete_own(&self) -> Op {
        Op::Delete {
            path: self.own.path().unwrap_or_default().to_owned(),
            version: -1,
        }
    }

    fn watch(&mut self, node: String) -> Step<DoubleBarrierOutcome> {
        self.again = false;
        let exists = Op::Exists {
            path: child_path(self.dir(), &node),
            watch: true,
        };
        self.send(Phase::Watching { node, asked: true }, exists)
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<DoubleBarrierOutcome> {
        let phase = std::mem::replace(&mut self.phase, Phase::Idle);
        match (phase, reply) {
            (Phase::Arming { want }, Ok(OpResult::Exists(stat))) => {
                self.armed(want, stat.is_some())
            }
            // No directory yet: the first participant's create makes it.
            (Phase::Counting, Err(ZkError::NoNode)) => self.count(Vec::new(), &Stat::default()),
            (Phase::Counting, Ok(OpResult::Children { children, stat })) => {
                self.count(children, &stat)
            }
            (Phase::Joining, reply) => {
                let making = self.own.on_reply(reply);
                self.joining(making)
            }
            (Phase::Beginning, Ok(OpResult::Multi(results))) if succeeded(&results) => {
                self.entered(self.round.unwrap_or_default())
            }
            (Phase::Withdrawing, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => {
                let round = self.round.unwrap_or_default();
                self.done(DoubleBarrierOutcome::Missed { round })
            }
            // Another participant began the round first, or a stale `ready` went meanwhile.
            (Phase::Beginning | Phase::Clearing, Ok(OpResult::Multi(_))) => {
                self.list(Phase::Counting)
            }
            (Phase::Syncing { leaving }, Ok(OpResult::Synced)) => self.list(listing(leaving)),
            (Phase::Listing, Ok(OpResult::Children { children, stat })) => {
                self.leave(children, i64::from(stat.version))
            }
            // No directory: nothing of the round is left.
            (Phase::Listing, Err(ZkError::NoNode)) => self.all_left(),
            (Phase::Deleting { lowest }, Ok(OpResult::Deleted) | Err(ZkError::NoNode)) => {
                self.watch(lowest)
            }
            (Phase::Watching { node, .. }, Ok(OpResult::Exists(stat))) => {
                if stat.is_none() || self.again {
                    self.list(Phase::Listing)
                } else {
                    self.phase = Phase::Watching { node, asked: false };
                    Step::wait()
                }
            }
            (Phase::Finishing, Ok(OpResult::Multi(results))) if succeeded(&results) => {
                self.done(DoubleBarrierOutcome::Left)
            }
            // Its node was already gone (the multi's reply was lost, and this is its resend):
            // see who is left.
            (Phase::Finishing, Ok(OpResult::Multi(results))) if results[0].is_err() => {
                self.list(Phase::Listing)
            }
            // `ready` was gone, which only a broken protocol does: still take its own node away.
            (Phase::Finishing, Ok(OpResult::Multi(_))) => {
                self.send(Phase::Tidying, self.delete_own())
            }
            // Gone, or a newer round's: either way nothing of this round is left.
            (Phase::Tidying, Ok(_) | Err(ZkError::NoNode)) => self.all_left(),
            (_, Err(error)) => self.done(DoubleBarrierOutcome::Failed(error)),
            (_, Ok(_)) => self.done(DoubleBarrierOutcome::Failed(ZkError::MarshallingError)),
        }
    }

    fn on_watch(&mut self, event_type: EventType, path: &str) -> Step<DoubleBarrierOutcome> {
        let about_ready = path == self.ready();
        match &self.phase {
            // Created while its node was counted: the round began with it inside.
            Phase::Waiting { want: Want::Made }
                if about_ready && event_type == EventType::NodeCreated =>
            {
                self.entered(self.round.unwrap_or_default())
            }
            Phase::Waiting { .. } if about_ready => self.list(Phase::Counting),
            Phase::Counting | Phase::Arming { .. } | Phase::Joining | Phase::Beginning
                if about_ready =>
            {
                self.again = true;
                Step::wait()
            }
            Phase::Watching { node, asked } if event_type == EventType::NodeDeleted => {
                if path != child_path(self.dir(), node) {
                    return Step::wait();
                }
                if *asked {
                    self.again = true;
                    return Step::wait();
                }
                self.list(Phase::Listing)
            }
            _ => Step::wait(),
        }
    }
}

/// Whether every op of a multi succeeded.
fn succeeded(results: &[Result<OpResult, ZkError>]) -> bool {
    results.iter().all(Result::is_ok)
}

impl Recipe for DoubleBarrierMachine {
    type Request = DoubleBarrierRequest;
    type Outcome = DoubleBarrierOutcome;

    fn step(&mut self, input: Input<DoubleBarrierRequest>) -> Step<DoubleBarrierOutcome> {
        if self.phase == Phase::Done {
            return Step::stop();
        }
        match input {
            Input::Start => self.list(Phase::Counting),
            Input::Reply(reply) => match self.link.on_reply(reply) {
                // A listing lost with its connection: the next server may be behind.
                Delivery::Resend(op) => match self.next_listing() {
                    Some(listing) => {
                        self.behind = true;
                        self.list(listing)
                    }
                    None => Step::send(op),
                },
                Delivery::SessionLost => self.done(DoubleBarrierOutcome::Lost),
                Delivery::Reply(reply) => self.on_reply(reply),
            },
            Input::App(DoubleBarrierRequest::Leave) if self.phase == Phase::Inside => {
                self.list(Phase::Listing)
            }
            Input::Event(ZkEvent::Session(event)) => {
                if self.link.on_session(event, false) == Some(Connection::Lost) {
                    return self.done(DoubleBarrierOutcome::Lost);
                }
                self.behind |= event == SessionEvent::Disconnected;
                // Back in the same session: what a watch would have said may have been missed
                // while away, so read again.
                if event == SessionEvent::SyncConnected {
                    match self.phase {
                        Phase::Waiting { .. } => return self.list(Phase::Counting),
                        Phase::Watching { asked: false, .. } => {
                            return self.list(Phase::Listing);
                        }
                        _ => {}
                    }
                }
                Step::wait()
            }
            Input::Event(ZkEvent::Watch(event)) => self.on_watch(event.event_type, &event.path),
            Input::App(_) | Input::Timeout => Step::wait(),
        }
    }

    /// It owns its node, once known; leaving, it awaits the node it watches, once the watch
    /// is set. Waiting for `ready` to appear is not declared (see [`Declared::awaits_gone`]).
    fn declared(&self) -> Declared {
        let awaits_gone = match &self.phase {
            Phase::Watching { node, asked: false } => vec![child_path(self.dir(), node)],
            _ => Vec::new(),
        };
        Declared {
            owns: self.own.path().map(str::to_owned).into_iter().collect(),
            awaits_gone,
        }
    }
}

/// Why a double barrier operation did not complete: the session ended first (its node went
/// with it), or ZooKeeper answered with an error the recipe cannot handle.
pub type DoubleBarrierError = RecipeError;

/// What a double barrier keeps besides its directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoubleBarrierSettings {
    /// How many participants begin a round.
    pub threshold: u32,
}

/// A double barrier in one directory.
pub type DoubleBarrier = Handle<DoubleBarrierSettings>;

impl DoubleBarrier {
    /// The double barrier whose nodes live in `dir` (created if missing), whose rounds begin
    /// once `threshold` participants are there.
    pub fn new(dir: &str, threshold: u32) -> Self {
        Handle::at(dir, DoubleBarrierSettings { threshold })
    }

    /// The machine a session runs for round `round`, or for the next round.
    pub fn machine(&self, session: SessionId, round: Option<i64>) -> DoubleBarrierMachine {
        let threshold = self.settings.threshold;
        DoubleBarrierMachine::new(&self.path, threshold, round, session_guid(session))
    }

    /// Enters the next round: returns once it has begun with this session inside.
    pub async fn enter<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<Inside<'c, C, DoubleBarrierMachine>, DoubleBarrierError> {
        loop {
            let machine = self.machine(client.session_id(), None);
            if let Some(inside) = self.enter_with(client, machine).await? {
                return Ok(inside);
            }
        }
    }

    /// Enters round `round` (they count from 0): `None` if it began without this session, as
    /// after the session that was counted in ended mid-enter.
    pub async fn enter_round<'c, C: ZkClient>(
        &self,
        client: &'c C,
        round: i64,
    ) -> Result<Option<Inside<'c, C, DoubleBarrierMachine>>, DoubleBarrierError> {
        let machine = self.machine(client.session_id(), Some(round));
        self.enter_with(client, machine).await
    }

    /// Enters with `machine`: this barrier's own, or one built around it.
    pub async fn enter_with<
        'c,
        C: ZkClient,
        M: Plays<DoubleBarrierRequest, DoubleBarrierOutcome>,
    >(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<Option<Inside<'c, C, M>>, DoubleBarrierError> {
        let entered = self.start_until(client, machine, |outcome| match outcome {
            DoubleBarrierOutcome::Entered { round } => Some(Some(*round)),
            DoubleBarrierOutcome::Missed { .. } => Some(None),
            _ => None,
        });
        let (driver, round) = entered.await?;
        Ok(round.map(|round| Inside { driver, round }))
    }
}

/// A session inside a round of a double barrier, until it leaves.
#[derive(Debug)]
pub struct Inside<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    round: i64,
}

impl<C: ZkClient, M: Plays<DoubleBarrierRequest, DoubleBarrierOutcome>> Inside<'_, C, M> {
    /// Which round it is inside.
    pub fn round(&self) -> i64 {
        self.round
    }

    /// Leaves: returns once nobody it was inside with is still inside. Fails with `SessionLost`
    /// if the session ended (its node went with it; the others go on without it).
    pub async fn leave(mut self) -> Result<(), DoubleBarrierError> {
        ask_until(&mut self.driver, DoubleBarrierRequest::Leave, |outcome| {
            (*outcome == DoubleBarrierOutcome::Left).then_some(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Stat, WatchedEvent};
    use crate::machine::Action;
    use crate::test_steps::{multi_ops, op};

    const DIR: &str = "/db";
    const OWN: &str = "g-p-0000000004";

    /// What a step tells when the participant is inside round `round`.
    fn entered(round: i64) -> Option<DoubleBarrierOutcome> {
        Some(DoubleBarrierOutcome::Entered { round })
    }

    /// What a step tells when round `round` began without the participant.
    fn missed(round: i64) -> Option<DoubleBarrierOutcome> {
        Some(DoubleBarrierOutcome::Missed { round })
    }

    fn listing(names: &[&str], version: i32) -> Input<DoubleBarrierRequest> {
        Input::Reply(Ok(OpResult::Children {
            children: names.iter().map(|n| n.to_string()).collect(),
            stat: Stat {
                version,
                ..Stat::default()
            },
        }))
    }

    /// A listing whose directory's data was last set at `zxid`, when its round began.
    fn listing_at(names: &[&str], version: i32, zxid: i64) -> Input<DoubleBarrierRequest> {
        Input::Reply(Ok(OpResult::Children {
            children: names.iter().map(|n| n.to_string()).collect(),
            stat: Stat {
                version,
                mzxid: zxid,
                ..Stat::default()
            },
        }))
    }

    fn reply(result: OpResult) -> Input<DoubleBarrierRequest> {
        Input::Reply(Ok(result))
    }

    fn deleted(node: &str) -> Input<DoubleBarrierRequest> {
        Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeDeleted,
            path: format!("{DIR}/{node}"),
        }))
    }

    /// The event of an exists watch on `ready`: the round began.
    fn ready_created() -> Input<DoubleBarrierRequest> {
        Input::Event(ZkEvent::Watch(WatchedEvent {
            event_type: EventType::NodeCreated,
            path: format!("{DIR}/{READY}"),
        }))
    }

    /// A participant of a barrier of `threshold`, for `round`, whose first listing is in flight.
    fn started(threshold: u32, round: Option<i64>) -> DoubleBarrierMachine {
        let mut machine = DoubleBarrierMachine::new(DIR, threshold, round, "g".to_owned());
        let step = machine.step(Input::Start);
        assert!(matches!(op(&step), Op::GetChildren { .. }));
        machine
    }

    /// A participant of a barrier of `threshold`, for `round`, that found the directory empty
    /// and made its node [`OWN`]; the listing after it is in flight.
    fn joined(threshold: u32, round: Option<i64>) -> DoubleBarrierMachine {
        let mut machine = started(threshold, round);
        let step = machine.step(listing(&[], 0));
        assert!(matches!(op(&step), Op::Create { .. }));
        let created = OpResult::Created {
            path: format!("{DIR}/{OWN}"),
            stat: Stat::default(),
        };
        assert!(matches!(
            op(&machine.step(reply(created))),
            Op::GetChildren { .. }
        ));
        machine
    }

    /// A participant inside round 0 (a barrier of one); its leave's listing is in flight.
    fn leaving() -> DoubleBarrierMachine {
        let mut machine = joined(1, None);
        let step = machine.step(listing(&[OWN], 0));
        assert!(matches!(op(&step), Op::Multi(_)));
        let step = machine.step(reply(OpResult::Multi(vec![
            Ok(OpResult::SetData(Stat::default())),
            Ok(OpResult::Created {
                path: format!("{DIR}/{READY}"),
                stat: Stat::default(),
            }),
        ])));
        assert_eq!(step.outcome, entered(0));
        let step = machine.step(Input::App(DoubleBarrierRequest::Leave));
        assert!(matches!(op(&step), Op::GetChildren { .. }));
        machine
    }

    #[test]
    fn ready_is_never_counted_among_the_participants() {
        let mut machine = joined(2, None);
        // One participant and a `ready` left by the round before: not two participants.
        let step = machine.step(listing(&[OWN, READY], 0));
        assert!(
            matches!(op(&step), Op::Exists { watch: true, .. }),
            "{step:?}"
        );
        let step = machine.step(reply(OpResult::Exists(Some(Stat::default()))));
        assert_eq!(step.action, Action::Wait);
    }

    #[test]
    fn a_counted_participant_is_inside_once_ready_is_created() {
        let mut machine = joined(2, None);
        let step = machine.step(listing(&[OWN], 0));
        assert!(
            matches!(op(&step), Op::Exists { watch: true, .. }),
            "{step:?}"
        );
        assert_eq!(
            machine.step(reply(OpResult::Exists(None))).action,
            Action::Wait
        );
        let created = ready_created();
        let step = machine.step(created);
        assert_eq!(step.outcome, entered(0));
    }

    #[test]
    fn the_one_that_sees_enough_participants_begins_the_round_in_one_multi() {
        let mut machine = joined(2, None);
        let step = machine.step(listing(&[OWN, "h-p-0000000002"], 0));
        let ops = multi_ops(&step);
        assert!(matches!(ops[0], Op::SetData { version: 0, .. }), "{ops:?}");
        assert!(matches!(&ops[1], Op::Create { path, .. } if path == "/db/ready"));
    }

    #[test]
    fn an_entrant_that_finds_the_round_before_still_inside_waits_for_it_to_end() {
        let mut machine = started(2, None);
        // Round 0 began (version 1) and two of it are still inside.
        let inside = ["a-p-0000000001", "b-p-0000000002", READY];
        let step = machine.step(listing(&inside, 1));
        assert!(
            matches!(op(&step), Op::Exists { watch: true, .. }),
            "{step:?}"
        );
        let step = machine.step(reply(OpResult::Exists(Some(Stat::default()))));
        assert_eq!(step.action, Action::Wait);
        let step = machine.step(deleted(READY));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        // Now round 1 gathers: it makes its node.
        let step = machine.step(listing(&[], 1));
        assert!(matches!(op(&step), Op::Create { .. }), "{step:?}");
    }

    #[test]
    fn a_stale_ready_nobody_is_inside_of_is_cleared_only_at_its_rounds_version() {
        let mut machine = started(2, None);
        let step = machine.step(listing(&[READY], 1));
        let ops = multi_ops(&step);
        assert!(matches!(ops[0], Op::Check { version: 1, .. }), "{ops:?}");
        assert!(matches!(&ops[1], Op::Delete { path, .. } if path == "/db/ready"));
    }

    #[test]
    fn a_participant_whose_round_began_without_it_is_told_so() {
        // Its node of round 3 went with its ended session; round 3 began and ended meanwhile,
        // and round 4 gathers.
        let mut machine = started(2, Some(3));
        let step = machine.step(listing(&["a-p-0000000007"], 4));
        assert_eq!(step.outcome, missed(3));
        assert_eq!(step.action, Action::Done);
    }

    #[test]
    fn a_new_session_that_finds_its_round_still_inside_sees_it_out_then_misses_it() {
        // Its session ended as it left round 3; another of round 3 is still inside.
        let mut machine = started(2, Some(3));
        let step = machine.step(listing(&["a-p-0000000007", READY], 4));
        assert!(
            matches!(op(&step), Op::Exists { path, watch: true } if path == "/db/a-p-0000000007"),
            "{step:?}"
        );
        let step = machine.step(reply(OpResult::Exists(Some(Stat::default()))));
        assert_eq!(step.action, Action::Wait);
        let step = machine.step(deleted("a-p-0000000007"));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        // Nobody is left to clear `ready`: it does, checking that it is round 3's.
        let step = machine.step(listing(&[READY], 4));
        let ops = multi_ops(&step);
        assert!(matches!(ops[0], Op::Check { version: 4, .. }), "{ops:?}");
        let cleared = OpResult::Multi(vec![Ok(OpResult::Checked), Ok(OpResult::Deleted)]);
        let step = machine.step(reply(cleared));
        assert_eq!(step.outcome, missed(3));
    }

    #[test]
    fn a_later_rounds_ready_is_no_round_to_see_out() {
        let mut machine = started(2, Some(3));
        let step = machine.step(listing(&["a-p-0000000009", READY], 5));
        assert_eq!(step.outcome, missed(3));
    }

    #[test]
    fn a_listing_lost_with_its_connection_is_made_again_after_a_sync() {
        // It learned that the round began from a watch event, which moves no last-seen zxid:
        // the server it reconnects to may not have applied the others' nodes nor `ready`.
        let mut machine = joined(2, None);
        machine.step(listing(&[OWN], 0));
        machine.step(reply(OpResult::Exists(None)));
        let created = ready_created();
        machine.step(created);
        let step = machine.step(Input::App(DoubleBarrierRequest::Leave));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        let step = machine.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(
            matches!(op(&step), Op::Sync { path } if path == DIR),
            "{step:?}"
        );
        let reconnected = Input::Event(ZkEvent::Session(SessionEvent::SyncConnected));
        assert_eq!(machine.step(reconnected).action, Action::Wait);
        let step = machine.step(reply(OpResult::Synced));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        // A sync lost too is made again, then the listing.
        let step = machine.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(matches!(op(&step), Op::Sync { .. }), "{step:?}");
        let step = machine.step(reply(OpResult::Synced));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
    }

    #[test]
    fn after_a_reconnect_it_syncs_before_it_lists_again() {
        let mut machine = joined(2, None);
        machine.step(listing(&[OWN], 0));
        assert_eq!(
            machine.step(reply(OpResult::Exists(None))).action,
            Action::Wait
        );
        let disconnected = Input::Event(ZkEvent::Session(SessionEvent::Disconnected));
        assert_eq!(machine.step(disconnected.clone()).action, Action::Wait);
        let reconnected = Input::Event(ZkEvent::Session(SessionEvent::SyncConnected));
        let step = machine.step(reconnected);
        assert!(matches!(op(&step), Op::Sync { .. }), "{step:?}");
        // Its answer came before a disconnect it learned of first: it syncs again.
        machine.step(disconnected);
        let step = machine.step(reply(OpResult::Synced));
        assert!(matches!(op(&step), Op::Sync { .. }), "{step:?}");
        let step = machine.step(reply(OpResult::Synced));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        // Synced since: the next listing goes without one.
        let step = machine.step(listing(&[OWN], 0));
        assert!(matches!(op(&step), Op::Exists { .. }), "{step:?}");
        assert_eq!(
            machine.step(reply(OpResult::Exists(None))).action,
            Action::Wait
        );
        let step = machine.step(deleted(READY));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
    }

    #[test]
    fn a_node_made_after_the_round_began_is_withdrawn_and_the_round_missed() {
        // The round began (version 1, its data set at zxid 3) while its create was on its way.
        let began = |machine: &mut DoubleBarrierMachine, zxid| {
            let names = ["a-p-0000000001", OWN, READY];
            machine.step(listing_at(&names, 1, zxid))
        };
        // Its node's czxid (0 here) is lower: it was there, and is inside.
        let mut member = joined(2, None);
        let step = began(&mut member, 3);
        assert_eq!(step.outcome, entered(0));
        let mut late = joined(2, None);
        let step = began(&mut late, -1);
        withdraws_and_misses_round_0(&mut late, &step);
    }

    /// `step` deletes its node, and then it tells that it missed round 0.
    fn withdraws_and_misses_round_0(
        machine: &mut DoubleBarrierMachine,
        step: &Step<DoubleBarrierOutcome>,
    ) {
        assert!(matches!(op(step), Op::Delete { path, .. } if path == "/db/g-p-0000000004"));
        let step = machine.step(reply(OpResult::Deleted));
        assert_eq!(step.outcome, missed(0));
    }

    #[test]
    fn a_node_too_late_for_its_round_is_withdrawn_though_a_later_round_counted_it() {
        // Round 0 ended and round 1 began (version 2) after its node came, counting it: its node
        // was never round 0's, whose `ready` went while its node stood, so it misses round 0.
        let mut machine = joined(2, None);
        let step = machine.step(listing_at(&[OWN, "a-p-0000000005", READY], 2, 9));
        withdraws_and_misses_round_0(&mut machine, &step);
    }

    #[test]
    fn after_a_lost_create_reply_it_adopts_its_node_instead_of_making_a_second() {
        let mut machine = started(2, None);
        machine.step(listing(&[], 0));
        let step = machine.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(matches!(op(&step), Op::Sync { .. }), "{step:?}");
        let step = machine.step(reply(OpResult::Synced));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        let step = machine.step(listing(&["a-p-0000000003", OWN], 0));
        assert_eq!(op(&step).path(), format!("{DIR}/{OWN}"));
        let step = machine.step(reply(OpResult::Exists(Some(Stat::default()))));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        let step = machine.step(listing(&["a-p-0000000003", OWN], 0));
        assert!(
            matches!(op(&step), Op::Multi(_)),
            "two participants: {step:?}"
        );
    }

    #[test]
    fn the_lowest_waits_on_the_highest_still_inside_and_lists_again_after_each() {
        let mut machine = leaving();
        let inside = [OWN, "b-p-0000000005", "c-p-0000000009", READY];
        let step = machine.step(listing(&inside, 1));
        assert_eq!(op(&step).path(), "/db/c-p-0000000009");
        assert_eq!(
            machine
                .step(reply(OpResult::Exists(Some(Stat::default()))))
                .action,
            Action::Wait
        );
        let step = machine.step(deleted("c-p-0000000009"));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        // The highest in the new listing, not the highest there ever was.
        let step = machine.step(listing(&[OWN, "b-p-0000000005", READY], 1));
        assert_eq!(op(&step).path(), "/db/b-p-0000000005");
    }

    #[test]
    fn the_last_one_inside_deletes_its_node_and_ready_together() {
        let mut machine = leaving();
        let step = machine.step(listing(&[OWN, READY], 1));
        let ops = multi_ops(&step);
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0].path(), format!("{DIR}/{OWN}"));
        assert_eq!(ops[1].path(), "/db/ready");
        let step = machine.step(reply(OpResult::Multi(vec![
            Ok(OpResult::Deleted),
            Ok(OpResult::Deleted),
        ])));
        assert_eq!(step.outcome, Some(DoubleBarrierOutcome::Left));
    }

    #[test]
    fn one_not_lowest_deletes_its_node_then_waits_on_the_lowest() {
        let mut machine = leaving();
        let step = machine.step(listing(&["a-p-0000000001", OWN, READY], 1));
        assert!(matches!(op(&step), Op::Delete { path, .. } if path == "/db/g-p-0000000004"));
        let step = machine.step(reply(OpResult::Deleted));
        assert_eq!(op(&step).path(), "/db/a-p-0000000001");
        let step = machine.step(reply(OpResult::Exists(None)));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        // Nobody inside, and `ready` gone with the last one: it has left.
        let mut tidy = machine.clone();
        let step = machine.step(listing(&[], 1));
        assert_eq!(step.outcome, Some(DoubleBarrierOutcome::Left));
        // `ready` still there (the last one's session ended first): it deletes it, checking
        // that it is this round's.
        let step = tidy.step(listing(&[READY], 1));
        let ops = multi_ops(&step);
        assert!(matches!(ops[0], Op::Check { version: 1, .. }), "{ops:?}");
        let failed = OpResult::Multi(vec![Ok(OpResult::RolledBack), Err(ZkError::NoNode)]);
        assert_eq!(
            tidy.step(reply(failed)).outcome,
            Some(DoubleBarrierOutcome::Left)
        );
    }

    #[test]
    fn a_leaver_takes_a_listing_without_its_rounds_ready_as_everyone_gone() {
        // The lowest went with `ready`, left, and came back for the next round before this one
        // listed: its new node is the next round's, waiting for others, not one still inside.
        let mut machine = leaving();
        let step = machine.step(listing(&["a-p-0000000001", OWN, READY], 1));
        assert!(matches!(op(&step), Op::Delete { .. }), "{step:?}");
        machine.step(reply(OpResult::Deleted));
        machine.step(reply(OpResult::Exists(Some(Stat::default()))));
        let step = machine.step(deleted("a-p-0000000001"));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        let step = machine.step(listing(&["a-p-0000000007"], 1));
        assert_eq!(step.outcome, Some(DoubleBarrierOutcome::Left));
        // Nor is a later round's `ready` its own round's.
        let mut later = leaving();
        let step = later.step(listing(&["a-p-0000000007", "b-p-0000000008", READY], 2));
        assert_eq!(step.outcome, Some(DoubleBarrierOutcome::Left));
    }

    #[test]
    fn the_last_one_whose_multi_reply_was_lost_leaves_though_the_next_round_gathers() {
        let mut machine = leaving();
        machine.step(listing(&[OWN, READY], 1));
        let step = machine.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert!(matches!(op(&step), Op::Multi(_)), "{step:?}");
        // Its multi was applied: the resend finds its node gone.
        let resent = OpResult::Multi(vec![
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ]);
        let step = machine.step(reply(resent));
        assert!(matches!(op(&step), Op::GetChildren { .. }), "{step:?}");
        let step = machine.step(listing(&["a-p-0000000007"], 1));
        assert_eq!(step.outcome, Some(DoubleBarrierOutcome::Left));
    }
}
