//! The ensemble's servers as the service runs them: each follower applies the leader's
//! transactions after a lag of its own, in commit order; a follower can crash and restart; the
//! leader can change; a session attaches to a server that is up and not behind it.

use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::{Op, SessionId, Zxid};

use super::wire::Delivery;
use super::Service;
use crate::fault::FaultKind;
use crate::server::DeletionOrder;

impl Service {
    /// Schedules every follower's apply of the transactions the leader committed after
    /// `before`, each after a lag of its own, in commit order.
    pub(super) fn replicate_since(&mut self, before: Zxid) {
        let leader = self.servers.leader();
        let committed = self.servers.applied(leader) - before;
        let now = self.now();
        let (low, high) = self.config.follower_lag;
        for server in (0..self.servers.len()).filter(|&server| server != leader) {
            let (spiked_until, more) = self.lag_spikes[server];
            let more = if now < spiked_until {
                more
            } else {
                Duration::ZERO
            };
            for _ in 0..committed {
                let lag = self.streams.follower_lag.gen_range(low..=high) + more;
                let at = (now + lag).max(self.follower_due[server] + Duration::from_nanos(1));
                self.follower_due[server] = at;
                self.schedule(at, Delivery::Replicate { server });
            }
        }
    }

    /// A follower applies its next transaction: it fires the watches left on it, then answers
    /// the requests that waited for it. A follower that is down applies it once it restarts.
    pub(super) fn replay(&mut self, server: usize) {
        let restart = self.down_until[server];
        if restart > self.now() {
            self.schedule(restart, Delivery::Replicate { server });
            return;
        }
        self.apply_next(server);
    }

    /// A follower applies its next transaction, if it has one, as [`Service::replay`] says.
    fn apply_next(&mut self, server: usize) -> bool {
        let Some(replayed) = self.servers.replay_next(server) else {
            return false;
        };
        let now = self.now();
        let changes = self.notify(server, replayed.by, replayed.notifications, replayed.zxid);
        for change in self.gathering.applied(server, replayed.zxid, changes) {
            self.trace.push(now, change);
        }
        let waiting: Vec<SessionId> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.server == server && !conn.parked.is_empty())
            .map(|(&session, _)| session)
            .collect();
        for session in waiting {
            self.release(session);
        }
        true
    }

    /// A follower dies until `until`: its clients lose their connections and move to other
    /// servers; it applies nothing meanwhile, and catches up when it restarts.
    pub(super) fn crash_follower(&mut self, server: usize, until: Duration) {
        self.down_until[server] = until;
        let attached: Vec<SessionId> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.server == server)
            .map(|(&session, _)| session)
            .collect();
        for session in attached {
            self.disconnect(session);
        }
        let now = self.now();
        for record in self.gathering.server_down(server) {
            self.trace.push(now, record);
        }
    }

    /// The leader steps down and an election of `election` picks a follower that is up (from
    /// the seed); `None` if none is. Every server stops serving while it elects, so every
    /// connection drops, and clients retry until it is over. The new leader first takes every
    /// transaction the old one committed (Zab's recovery: a committed write survives), and it
    /// gives every session a whole timeout from when it starts, as ZooKeeper's does.
    pub(super) fn change_leader(&mut self, election: Duration) -> Option<usize> {
        let now = self.now();
        let old = self.servers.leader();
        let candidates: Vec<usize> = (0..self.servers.len())
            .filter(|&server| server != old && self.down_until[server] <= now)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let stream = self.streams.fault(FaultKind::LeaderChange);
        let leader = candidates[stream.gen_range(0..candidates.len())];
        let connected: Vec<SessionId> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.is_connected())
            .map(|(&session, _)| session)
            .collect();
        for session in connected {
            self.disconnect(session);
        }
        while self.apply_next(leader) {}
        self.servers.hand_over(leader);
        let until = now + election;
        for down in &mut self.down_until {
            *down = (*down).max(until);
        }
        for conn in self.conns.values_mut() {
            conn.server_heard = conn.server_heard.max(until);
        }
        Some(leader)
    }

    /// The server a session attaches to: any that is up and has applied every zxid the client
    /// has seen (a server behind it refuses the client, which tries another), drawn from the
    /// seed; `None` if none is (the client tries again later). A standalone server, or a client
    /// pinned to one server, draws nothing.
    pub(super) fn pick_server(&mut self, seen: Zxid, pinned: Option<usize>) -> Option<usize> {
        if self.servers.len() == 1 {
            return Some(0);
        }
        let now = self.now();
        if let Some(server) = pinned {
            let ready = self.down_until[server] <= now && self.servers.applied(server) >= seen;
            return ready.then_some(server);
        }
        let ready: Vec<usize> = (0..self.servers.len())
            .filter(|&server| self.down_until[server] <= now)
            .filter(|&server| self.servers.applied(server) >= seen)
            .collect();
        if ready.is_empty() {
            return None;
        }
        Some(ready[self.streams.server_choice.gen_range(0..ready.len())])
    }

    /// Makes the tree the clients will find: `ops` applied by a session of its own, closed
    /// again, before any client connects (as a model checker's initial state has it).
    pub(crate) fn prepare(&mut self, ops: &[Op]) {
        let before = self.servers.applied(self.servers.leader());
        let session = self.servers.open_session();
        for op in ops {
            let applied = self.servers.apply(session, op, 0);
            self.start_reaper_for(op, &applied.reply);
        }
        self.servers
            .end_session(session, 0, false, DeletionOrder::ByPath);
        self.replicate_since(before);
    }
}
