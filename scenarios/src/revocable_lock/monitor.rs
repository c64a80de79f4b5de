//! Revocation: a contender that received an ask to give up ([`UNLOCK`] written to its node)
//! gives up at once, holding or not, so the one that asked never has to force it out. Deciding
//! to force out a node ([`Outcome::Forcing`] its token) after its owner received the ask and
//! before it said it gave up is a violation, unless a fault struck meanwhile: the owner or the
//! asker may have been cut off or slow (a paused process, a partition, a lost reply), and
//! forcing a holder out is then what the grace period is for.
//!
//! Faults excuse every ask received before them or while they last (a paused process receives
//! messages it acts on only once it resumes), not only those of the clients they struck: the
//! monitor names nodes and sessions only, so a model checker can rename its state. An ask
//! received within the grace after the owner could hear again (see [`Hearing`]) is excused
//! too: the asker's grace period may have run out while the owner could not hear it, and the
//! owner's answer and the asker's forcing may then cross.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{CreateMode, Op, OpReply, OpResult, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::parts::contender::UNLOCK;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::path::parent;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::monitor::hearing::Hearing;
use crate::monitor::{changes, Change};

/// Revocation heeded: broken when a holder that read an ask to give up kept what it held until it
/// was forced out.
pub static REVOCATION_IGNORED: Property = Property::new("revocation-ignored", "revocation heeded");

/// The revocation monitor of the contender nodes under one directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Revocation {
    /// The directory.
    dir: &'static str,
    /// Its ephemeral nodes: whose they are, and their czxid (their holder's token).
    owners: BTreeMap<String, (Owner, Token)>,
    /// The nodes whose owner received an ask to give up and has not said it gave up, with no
    /// fault since.
    heard: BTreeSet<String>,
    /// When each client could hear the server: a paused or cut-off process receives messages
    /// it cannot act on. (The model tells monitors no session states and no lasting faults, so a
    /// model checker never carries a client here.)
    hearing: Hearing,
}

/// The session that made a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Owner(#[rename(session)] SessionId);

/// A node's czxid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct Token(#[rename(keep)] i64);

impl Revocation {
    /// A monitor of the nodes under `dir`.
    pub fn new(dir: &'static str) -> Self {
        Revocation {
            dir,
            owners: BTreeMap::new(),
            heard: BTreeSet::new(),
            hearing: Hearing::default(),
        }
    }

    fn gone(&mut self, path: &str) {
        self.owners.remove(path);
        self.heard.remove(path);
    }

    /// The nodes of `session`.
    fn own(&self, session: SessionId) -> Vec<String> {
        let owner = Owner(session);
        self.owners
            .iter()
            .filter(|(_, (node, _))| *node == owner)
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// Takes in an applied op.
    fn applied(&mut self, session: SessionId, op: &Op, reply: &OpReply) {
        if let (Op::Create { mode, .. }, Ok(OpResult::Created { path, stat })) = (op, reply) {
            let ephemeral = matches!(
                mode,
                CreateMode::Ephemeral | CreateMode::EphemeralSequential
            );
            if ephemeral && parent(path) == self.dir {
                let node = (Owner(session), Token(stat.czxid));
                self.owners.insert(path.clone(), node);
            }
        }
        for change in changes(op, reply) {
            if let Change::Deleted(path) = change {
                self.gone(path);
            }
        }
    }

    /// What is wrong with `session` forcing out the holder of `token`, if anything.
    fn forcing(&self, session: SessionId, token: i64) -> Option<String> {
        let (path, (Owner(owner), _)) = self
            .owners
            .iter()
            .find(|(_, (_, czxid))| *czxid == Token(token))?;
        self.heard.contains(path).then(|| {
            format!(
                "s{session} forces out s{owner}'s node {path}, though s{owner} had received \
                 the ask to give it up and no fault struck since"
            )
        })
    }
}

impl Monitor for Revocation {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.hearing.observe(entry);
        let message = match &entry.event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => {
                self.applied(*session, op, reply);
                return None;
            }
            TraceEvent::Outcome {
                session,
                outcome: Outcome::Forcing { token },
                ..
            } => self.forcing(*session, *token)?,
            TraceEvent::Reply {
                client,
                session,
                reply: Ok(OpResult::Data { data, .. }),
            } if data == UNLOCK
                && self
                    .hearing
                    .hearing_since(*client, entry.at)
                    .is_some_and(|since| since <= entry.at) =>
            {
                let own = self.own(*session);
                self.heard.extend(own);
                return None;
            }
            TraceEvent::Outcome {
                session,
                outcome: Outcome::Revoked { .. } | Outcome::Released { .. },
                ..
            } => {
                for path in self.own(*session) {
                    self.heard.remove(&path);
                }
                return None;
            }
            TraceEvent::SessionEnded { deleted, .. } => {
                for path in deleted {
                    self.gone(path);
                }
                return None;
            }
            TraceEvent::Fault { .. } => {
                self.heard.clear();
                return None;
            }
            _ => return None,
        };
        Some(Violation::new(&REVOCATION_IGNORED, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&REVOCATION_IGNORED]
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zklab_recipes::client::{OpResult, SessionEvent, Stat};
    use zklab_recipes::outcome::Outcome;

    use super::*;
    use crate::monitor::traces::*;
    use zklab_sim::fault::FaultKind;

    const NODE: &str = "/d/a-n-0000000001";

    /// Client 0 (session 1) receives an ask to give up its node.
    fn received_ask() -> TraceEvent {
        TraceEvent::Reply {
            client: 0,
            session: 1,
            reply: Ok(OpResult::Data {
                data: UNLOCK.to_vec(),
                stat: Stat::default(),
            }),
        }
    }

    /// Client 0 (session 1) owns NODE (token 0); then `before`, its receiving an ask to give it
    /// up, and `after`; then session 2 forces out token 0.
    fn forced(before: Vec<TraceEvent>, after: Vec<TraceEvent>) -> Option<Violation> {
        let mut events = vec![created(0, 1, NODE)];
        events.extend(before);
        events.push(received_ask());
        events.extend(after);
        events.push(outcome(1, 2, Outcome::Forcing { token: 0 }));
        Revocation::new("/d").first_in(&trace(events))
    }

    #[test]
    fn forcing_out_a_holder_that_received_the_ask_and_kept_on_is_a_violation() {
        let violation = forced(Vec::new(), Vec::new()).expect("a violation");
        assert_eq!(violation.property, &REVOCATION_IGNORED);
    }

    #[test]
    fn a_holder_that_said_it_gave_up_or_was_struck_by_a_fault_is_excused() {
        let revoked = outcome(0, 1, Outcome::Revoked { role: "lock" });
        assert_eq!(forced(Vec::new(), vec![revoked]), None);
        let fault = TraceEvent::Fault {
            kind: FaultKind::LostReply,
            client: 1,
            detail: String::new(),
            lasts: Duration::ZERO,
        };
        assert_eq!(forced(Vec::new(), vec![fault]), None);
    }

    #[test]
    fn an_ask_received_while_paused_is_not_heard_until_the_process_resumes() {
        let paused = TraceEvent::Fault {
            kind: FaultKind::Pause,
            client: 0,
            detail: String::new(),
            lasts: Duration::from_secs(1),
        };
        assert_eq!(forced(vec![paused], Vec::new()), None);
    }

    #[test]
    fn an_ask_received_just_after_a_reconnect_is_not_held_against_the_owner() {
        let session = |event| TraceEvent::Session {
            client: 0,
            session: 1,
            event,
        };
        let reconnect = vec![
            session(SessionEvent::Disconnected),
            session(SessionEvent::SyncConnected),
        ];
        assert_eq!(forced(reconnect.clone(), Vec::new()), None);
        // Entries are a millisecond apart: after the grace, an ask kept on is ignored again.
        let mut long_after = reconnect;
        long_after.extend((0..2_100).map(|_| outcome(0, 1, Outcome::Suspended)));
        let violation = forced(long_after, Vec::new()).expect("a violation");
        assert_eq!(violation.property, &REVOCATION_IGNORED);
    }
}
