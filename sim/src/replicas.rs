//! The ensemble's servers: one leader and its followers, each a whole [`Server`].
//!
//! The leader applies every transaction first, in zxid order, and its answer is the answer.
//! Each follower applies the same transactions later, in the same order, each when its own lag
//! says. The pure server is deterministic, so a follower that has replayed the leader's
//! transactions up to a zxid holds the leader's tree as it was at that zxid: a read it serves
//! can be stale, never wrong. Each server keeps the watches of the sessions attached to it and
//! fires them as it applies a change, as ZooKeeper's servers do. Zab itself is not simulated.

use std::collections::VecDeque;
use std::sync::Arc;

use zklab_recipes::client::{Op, SessionId, Zxid};

use crate::acl::Identity;
use crate::server::{Applied, DeletionOrder, Ended, Notification, Server};

/// A transaction, as the leader hands it to its followers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Txn {
    /// A session was created.
    Open,
    /// A write that succeeded on the leader (shared by every follower's backlog), with the
    /// identity its session had there, which decides it on every server alike.
    Apply {
        session: SessionId,
        identity: Identity,
        op: Arc<Op>,
        now_ms: i64,
    },
    /// A write that failed on the leader: it takes a zxid all the same, and changes nothing.
    Error { session: SessionId },
    /// The leader's reaper deleted a container or TTL node.
    Reap { path: String, now_ms: i64 },
    /// A session was closed by its client or expired by the leader.
    End {
        session: SessionId,
        now_ms: i64,
        notify_self: bool,
        order: DeletionOrder,
    },
}

/// Whether a session's server hands `op` to the leader rather than serving it from its own
/// state: a write, a lone check, and an addAuth, which counts for the session's later requests
/// whichever server serves them.
pub fn goes_through_leader(op: &Op) -> bool {
    op.is_write() || matches!(op, Op::Check { .. } | Op::AddAuth { .. })
}

/// What a follower's replay of one transaction did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The session whose transaction it was.
    pub by: SessionId,
    /// Its zxid.
    pub zxid: Zxid,
    /// The watches it fired on this follower.
    pub notifications: Vec<Notification>,
}

/// The ensemble: its servers, and what each follower has still to apply.
#[derive(Clone, Debug)]
pub struct Replicas {
    servers: Vec<Server>,
    /// Per server, the transactions committed by the leader it has not applied (the leader's
    /// own is always empty).
    backlogs: Vec<VecDeque<Txn>>,
    leader: usize,
}

impl Replicas {
    /// `count` fresh servers (at least one); the first leads.
    pub fn new(count: usize) -> Self {
        let count = count.max(1);
        Replicas {
            servers: vec![Server::new(); count],
            backlogs: vec![VecDeque::new(); count],
            leader: 0,
        }
    }

    /// How many servers the ensemble has.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether the ensemble has no server (never: it has at least one).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The leader's index.
    pub fn leader(&self) -> usize {
        self.leader
    }

    /// A server's state.
    pub fn server(&self, index: usize) -> &Server {
        &self.servers[index]
    }

    /// A server's state, to serve a read (and leave its watch) or move watches.
    pub fn server_mut(&mut self, index: usize) -> &mut Server {
        &mut self.servers[index]
    }

    /// The zxid of the last transaction a server has applied.
    pub fn applied(&self, index: usize) -> Zxid {
        self.servers[index].last_zxid()
    }

    /// Whether a session is alive: the leader decides.
    pub fn session_alive(&self, session: SessionId) -> bool {
        self.servers[self.leader].session_alive(session)
    }

    /// The leader creates a session.
    pub fn open_session(&mut self) -> SessionId {
        let session = self.servers[self.leader].open_session();
        self.commit(Txn::Open);
        session
    }

    /// The leader applies an op of a session: a write is a transaction its followers apply
    /// later, as the session was known when the leader did; a read is served from the
    /// leader's state; an addAuth it accepts makes the session known so on every server at
    /// once, as a client sends its authentication again to whichever server it moves to.
    pub fn apply(&mut self, session: SessionId, op: &Op, now_ms: i64) -> Applied {
        let leader = &mut self.servers[self.leader];
        let before = leader.last_zxid();
        let identity = leader.identity(session);
        let applied = leader.apply(session, op, now_ms);
        if let (Op::AddAuth { .. }, Ok(_)) = (op, &applied.reply) {
            let identity = leader.identity(session);
            for server in &mut self.servers {
                server.set_identity(session, identity.clone());
            }
        }
        if applied.zxid != before {
            self.commit(match applied.reply {
                Ok(_) => Txn::Apply {
                    session,
                    identity,
                    op: Arc::new(op.clone()),
                    now_ms,
                },
                Err(_) => Txn::Error { session },
            });
        }
        applied
    }

    /// The leader ends a session, telling it of its own ephemerals' deletion with
    /// `notify_self` (see [`Server::end_session`]), its ephemerals deleted in `order` on every
    /// server. `None` if it was not alive.
    pub fn end_session(
        &mut self,
        session: SessionId,
        now_ms: i64,
        notify_self: bool,
        order: DeletionOrder,
    ) -> Option<Ended> {
        let leader = &mut self.servers[self.leader];
        let ended = leader.end_session(session, now_ms, notify_self, order)?;
        self.commit(Txn::End {
            session,
            now_ms,
            notify_self,
            order,
        });
        Some(ended)
    }

    /// The leader's reaper deletes the node at `path` if it would at `now_ms` (see
    /// [`Server::reap`]), and its followers after it.
    pub fn reap(&mut self, path: &str, now_ms: i64) -> Option<Applied> {
        let applied = self.servers[self.leader].reap(path, now_ms)?;
        self.commit(Txn::Reap {
            path: path.to_owned(),
            now_ms,
        });
        Some(applied)
    }

    fn commit(&mut self, txn: Txn) {
        let leader = self.leader;
        for (index, backlog) in self.backlogs.iter_mut().enumerate() {
            if index != leader {
                backlog.push_back(txn.clone());
            }
        }
    }

    /// `server`, a follower that has applied every committed transaction, leads from now on;
    /// the leader before follows, with nothing left to apply.
    pub fn hand_over(&mut self, server: usize) {
        assert!(
            self.backlogs[server].is_empty(),
            "a new leader holds every committed transaction"
        );
        self.leader = server;
    }

    /// A follower applies the oldest transaction it has not; `None` if it is up to date.
    pub fn replay_next(&mut self, follower: usize) -> Option<Replayed> {
        let txn = self.backlogs[follower].pop_front()?;
        let server = &mut self.servers[follower];
        let (by, notifications) = match txn {
            Txn::Open => (server.open_session(), Vec::new()),
            Txn::Apply {
                session,
                identity,
                op,
                now_ms,
            } => (
                session,
                server
                    .apply_write(session, &identity, &op, now_ms)
                    .notifications,
            ),
            Txn::Error { session } => {
                server.apply_error();
                (session, Vec::new())
            }
            // The follower replays what its leader decided, as a delete by no session.
            Txn::Reap { path, now_ms } => {
                let reaped = server.reap(&path, now_ms);
                (0, reaped.map(|r| r.notifications).unwrap_or_default())
            }
            Txn::End {
                session,
                now_ms,
                notify_self,
                order,
            } => {
                let ended = server.end_session(session, now_ms, notify_self, order);
                (session, ended.map(|e| e.notifications).unwrap_or_default())
            }
        };
        Some(Replayed {
            by,
            zxid: server.last_zxid(),
            notifications,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ops::{create, create_with, delete, get_data, set};
    use zklab_recipes::client::{CreateMode, EventType, OpResult};

    fn data(applied: &Applied) -> Vec<u8> {
        match &applied.reply {
            Ok(OpResult::Data { data, .. }) => data.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_follower_serves_the_leaders_state_as_of_what_it_has_applied() {
        let mut ensemble = Replicas::new(3);
        let s = ensemble.open_session();
        ensemble.apply(s, &create_with("/x", b"old", CreateMode::Persistent), 1);
        while ensemble.replay_next(1).is_some() {}
        ensemble.apply(s, &set("/x", b"new", -1), 2);
        assert_eq!(
            data(&ensemble.server_mut(1).serve_read(
                s,
                &Identity::default(),
                &get_data("/x", false)
            )),
            b"old"
        );
        assert_eq!(
            data(&ensemble.server_mut(0).serve_read(
                s,
                &Identity::default(),
                &get_data("/x", false)
            )),
            b"new"
        );
        ensemble.replay_next(1);
        assert_eq!(
            data(&ensemble.server_mut(1).serve_read(
                s,
                &Identity::default(),
                &get_data("/x", false)
            )),
            b"new"
        );
        assert_eq!(ensemble.applied(1), ensemble.applied(0));
        assert_eq!(ensemble.server(1), ensemble.server(0));
        // The other follower has applied nothing yet, and catches up to the same state.
        while ensemble.replay_next(2).is_some() {}
        assert_eq!(ensemble.server(2), ensemble.server(0));
    }

    #[test]
    fn a_follower_fires_the_watches_left_on_it_when_it_applies_the_change() {
        let mut ensemble = Replicas::new(2);
        let (a, b) = (ensemble.open_session(), ensemble.open_session());
        ensemble.apply(a, &create("/x", CreateMode::Persistent), 1);
        while ensemble.replay_next(1).is_some() {}
        ensemble
            .server_mut(1)
            .serve_read(b, &Identity::default(), &get_data("/x", true));
        let at_leader = ensemble.apply(a, &delete("/x", -1), 2);
        assert!(
            at_leader.notifications.is_empty(),
            "the watch is on the follower"
        );
        let replayed = ensemble.replay_next(1).expect("a transaction to apply");
        assert_eq!(replayed.by, a);
        assert_eq!(replayed.zxid, at_leader.zxid);
        assert_eq!(replayed.notifications.len(), 1);
        assert_eq!(replayed.notifications[0].session, b);
        assert_eq!(
            replayed.notifications[0].event.event_type,
            EventType::NodeDeleted
        );
    }

    #[test]
    fn a_write_that_failed_on_the_leader_takes_its_zxid_on_a_follower_too() {
        let mut ensemble = Replicas::new(2);
        let s = ensemble.open_session();
        ensemble.apply(s, &create("/x", CreateMode::Persistent), 1);
        let failed = ensemble.apply(s, &create("/x", CreateMode::Persistent), 2);
        assert!(failed.reply.is_err());
        while ensemble.replay_next(1).is_some() {}
        assert_eq!(ensemble.applied(1), failed.zxid);
        assert_eq!(ensemble.server(1), ensemble.server(0));
    }

    #[test]
    fn a_follower_decides_a_transaction_as_the_session_was_known_on_the_leader() {
        use crate::test_ops::{acl, add_auth, create_guarded, set};
        use zklab_recipes::acl::Perms;
        let mut ensemble = Replicas::new(2);
        let (owner, writer) = (ensemble.open_session(), ensemble.open_session());
        ensemble.apply(owner, &add_auth("digest", b"alice:secret"), 1);
        let alices = acl(&[("auth", "", Perms::ALL), ("world", "anyone", Perms::READ)]);
        ensemble.apply(owner, &create_guarded("/g", b"", alices), 1);
        // Refused on the leader: the writer is nobody yet.
        let refused = ensemble.apply(writer, &Op::Multi(vec![set("/g", b"x", -1)]), 2);
        assert!(matches!(refused.reply, Ok(OpResult::Multi(ref results)) if results[0].is_err()));
        // It authenticates before the follower replays the multi, which fails there too.
        ensemble.apply(writer, &add_auth("digest", b"alice:secret"), 3);
        while ensemble.replay_next(1).is_some() {}
        assert_eq!(ensemble.server(1), ensemble.server(0));
    }

    #[test]
    fn an_expiry_is_replayed_and_deletes_the_ephemerals_on_every_follower() {
        let mut ensemble = Replicas::new(2);
        let s = ensemble.open_session();
        ensemble.apply(s, &create("/e", CreateMode::Ephemeral), 1);
        while ensemble.replay_next(1).is_some() {}
        ensemble
            .end_session(s, 2, false, DeletionOrder::ByPath)
            .expect("a live session");
        assert!(ensemble.server(0).node("/e").is_none());
        assert!(ensemble.server(1).node("/e").is_some(), "not applied yet");
        while ensemble.replay_next(1).is_some() {}
        assert!(ensemble.server(1).node("/e").is_none());
        assert!(!ensemble.server(1).session_alive(s));
    }
}
