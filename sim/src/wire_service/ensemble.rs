//! `zklab serve`'s servers on the wall clock: the ensemble's [`Replicas`], each follower applying
//! the leader's transactions after a lag drawn from the seed, as the simulator's do; a follower
//! that is down (a server crash) or stands still (a stale read) for a while; and the leader
//! stepping down, which stops every server until an election is over. A standalone server
//! draws nothing.

use std::collections::VecDeque;
use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::{Op, SessionId, Zxid};

use crate::notified::Gathering;
use crate::replicas::{Replayed, Replicas};
use crate::server::{Applied, DeletionOrder, Ended, Server};
use crate::service::streams::Stream;
use crate::service::SimConfig;
use crate::trace::TraceEvent;

/// The servers, and when each follower applies what it has still to apply.
pub(super) struct Ensemble {
    replicas: Replicas,
    /// Per server, when each transaction it has yet to apply is due, in commit order.
    due: Vec<VecDeque<Duration>>,
    /// Per server, until when it is down (crashed, or electing), since the epoch.
    down_until: Vec<Duration>,
    /// Per server, until when it applies nothing (a stale-read fault).
    still_until: Vec<Duration>,
    /// A follower's lag behind its leader, from the simulator's defaults.
    lag: (Duration, Duration),
    lags: Stream,
    gathering: Gathering,
}

impl Ensemble {
    /// `count` servers (at least one), the first leading, their lags drawn from `seed`.
    pub(super) fn new(count: usize, seed: u64) -> Self {
        let replicas = Replicas::new(count);
        let count = replicas.len();
        Ensemble {
            replicas,
            due: vec![VecDeque::new(); count],
            down_until: vec![Duration::ZERO; count],
            still_until: vec![Duration::ZERO; count],
            lag: SimConfig::default().follower_lag,
            lags: Stream::new(seed, "follower-lag"),
            gathering: Gathering::default(),
        }
    }

    /// How many servers there are.
    pub(super) fn len(&self) -> usize {
        self.replicas.len()
    }

    pub(super) fn leader(&self) -> usize {
        self.replicas.leader()
    }

    pub(super) fn server(&self, index: usize) -> &Server {
        self.replicas.server(index)
    }

    pub(super) fn server_mut(&mut self, index: usize) -> &mut Server {
        self.replicas.server_mut(index)
    }

    /// The leader's state, which decides every session and write.
    pub(super) fn leading(&self) -> &Server {
        self.replicas.server(self.leader())
    }

    /// The last zxid server `index` has applied.
    pub(super) fn applied(&self, index: usize) -> Zxid {
        self.replicas.applied(index)
    }

    /// Whether server `index` serves at `now`: not crashed, and no election under way.
    pub(super) fn is_up(&self, index: usize, now: Duration) -> bool {
        self.down_until
            .get(index)
            .is_some_and(|until| *until <= now)
    }

    /// The leader opens a session.
    pub(super) fn open_session(&mut self, now: Duration) -> SessionId {
        let before = self.committed();
        let session = self.replicas.open_session();
        self.schedule_since(before, now);
        session
    }

    /// The leader applies a session's op (see [`Replicas::apply`]).
    pub(super) fn apply(&mut self, session: SessionId, op: &Op, now: Duration) -> Applied {
        let before = self.committed();
        let applied = self.replicas.apply(session, op, millis(now));
        self.schedule_since(before, now);
        applied
    }

    /// The leader ends a session (its ephemerals by path), telling it of its own ephemerals'
    /// deletion with `notify_self`.
    pub(super) fn end_session(
        &mut self,
        session: SessionId,
        notify_self: bool,
        now: Duration,
    ) -> Option<Ended> {
        let before = self.committed();
        let order = DeletionOrder::ByPath;
        let ended = (self.replicas).end_session(session, millis(now), notify_self, order);
        self.schedule_since(before, now);
        ended
    }

    /// The leader's reaper deletes `path` if it would now.
    pub(super) fn reap(&mut self, path: &str, now: Duration) -> Option<Applied> {
        let before = self.committed();
        let reaped = self.replicas.reap(path, millis(now));
        self.schedule_since(before, now);
        reaped
    }

    fn committed(&self) -> Zxid {
        self.applied(self.leader())
    }

    /// Each follower's apply of what the leader committed after `before`, each after a lag of
    /// its own, in commit order.
    fn schedule_since(&mut self, before: Zxid, now: Duration) {
        let (leader, committed) = (self.leader(), self.committed() - before);
        let (low, high) = self.lag;
        for server in (0..self.len()).filter(|&server| server != leader) {
            for _ in 0..committed {
                let lag = self.lags.gen_range(low..=high);
                let last = self.due[server].back().copied().unwrap_or_default();
                self.due[server].push_back((now + lag).max(last));
            }
        }
    }

    /// Every transaction a follower that is up and not standing still is due to apply by
    /// `now`, as `(server, what it did)`, server by server.
    pub(super) fn replay_due(&mut self, now: Duration) -> Vec<(usize, Replayed)> {
        let mut replayed = Vec::new();
        for server in 0..self.len() {
            if !self.is_up(server, now) || self.still_until[server] > now {
                continue;
            }
            while self.due[server].front().is_some_and(|due| *due <= now) {
                self.due[server].pop_front();
                replayed.extend(self.replicas.replay_next(server).map(|r| (server, r)));
            }
        }
        replayed
    }

    /// When a follower is next due to apply a transaction.
    pub(super) fn next_due(&self) -> Option<Duration> {
        (0..self.len())
            .filter_map(|server| {
                let due = self.due[server].front()?;
                Some(
                    (*due)
                        .max(self.down_until[server])
                        .max(self.still_until[server]),
                )
            })
            .min()
    }

    /// A follower goes down until `until`: it applies nothing meanwhile and catches up once
    /// it is back. Returns the trace's records of the changes that waited only for it.
    pub(super) fn crash(&mut self, server: usize, until: Duration) -> Vec<TraceEvent> {
        self.down_until[server] = self.down_until[server].max(until);
        self.gathering.server_down(server)
    }

    /// A follower applies nothing until `until`: its reads are stale meanwhile.
    pub(super) fn stand_still(&mut self, server: usize, until: Duration) {
        self.still_until[server] = self.still_until[server].max(until);
    }

    /// The leader steps down; the next server after it that is up leads once the election is
    /// over at `until`, having first applied every transaction the old one committed (a
    /// committed write survives). Every server is down until then. `None` if no follower is up.
    /// Returns the new leader and the records of the changes it was the last to apply.
    pub(super) fn elect(
        &mut self,
        now: Duration,
        until: Duration,
    ) -> Option<(usize, Vec<TraceEvent>)> {
        let (old, count) = (self.leader(), self.len());
        let leader = (1..count)
            .map(|step| (old + step) % count)
            .find(|&server| self.is_up(server, now))?;
        let mut told = Vec::new();
        while let Some(replayed) = self.replicas.replay_next(leader) {
            told.extend(self.gathering.applied(leader, replayed.zxid, Vec::new()));
        }
        self.due[leader].clear();
        self.still_until[leader] = Duration::ZERO;
        self.replicas.hand_over(leader);
        for down in &mut self.down_until {
            *down = (*down).max(until);
        }
        Some((leader, told))
    }

    /// The leader's records of the change `zxid` it committed: told now on a standalone
    /// server, with the followers' once every follower up has applied it in an ensemble.
    pub(super) fn committed_records(
        &mut self,
        zxid: Zxid,
        records: Vec<TraceEvent>,
        now: Duration,
    ) -> Vec<TraceEvent> {
        let leader = self.leader();
        let followers: Vec<usize> = (0..self.len())
            .filter(|&server| server != leader && self.is_up(server, now))
            .collect();
        self.gathering.committed(zxid, followers, records)
    }

    /// A follower's records of the change `zxid` it applied: the change's records once it was
    /// the last server to.
    pub(super) fn replayed_records(
        &mut self,
        server: usize,
        zxid: Zxid,
        records: Vec<TraceEvent>,
    ) -> Vec<TraceEvent> {
        self.gathering.applied(server, zxid, records)
    }

    /// The records of changes some follower has yet to apply, gathered so far, at the end.
    pub(super) fn unfinished_records(&mut self) -> Vec<TraceEvent> {
        self.gathering.unfinished()
    }
}

/// The wall clock as the pure server takes it: milliseconds since the epoch.
pub(super) fn millis(now: Duration) -> i64 {
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}
