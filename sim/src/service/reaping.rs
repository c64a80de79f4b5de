//! The leader's reaper (ZooKeeper's ContainerManager): every check interval it deletes the
//! containers that have had a child and have none, and the TTL nodes idle past their TTL; and
//! the `container-reaped` fault, which runs it the moment a client's delete empties a container.
//!
//! The reaper is scheduled once a container or TTL node is created and stops when none is
//! left, so a run that makes none draws nothing for it and its trace is unchanged.

use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::{Op, OpReply, OpResult};

use super::wire::Delivery;
use super::Service;
use crate::fault::FaultKind;
use crate::path;
use crate::trace::{ClientId, TraceEvent};

impl Service {
    /// Starts the reaper's checks if `op`, applied with `reply`, made a container or TTL node
    /// and they are not running.
    pub(super) fn start_reaper_for(&mut self, op: &Op, reply: &OpReply) {
        if self.reaper_running || !makes_reapable(op, reply) {
            return;
        }
        self.reaper_running = true;
        self.schedule_reaper_check();
    }

    /// Schedules the reaper's next check: on the seed's phase of the check interval.
    fn schedule_reaper_check(&mut self) {
        let interval = self.config.container_check_interval;
        let step = interval.as_nanos().max(1);
        let now = self.now().as_nanos();
        let phase = u128::from(self.reaper_phase) % step;
        let next = now + step - (now + step - phase) % step;
        let at = Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX));
        self.schedule(at, Delivery::ReaperCheck);
    }

    /// The reaper's periodic check: the leader deletes every candidate, by path. It keeps
    /// checking while any container or TTL node exists; it waits out an election.
    pub(super) fn check_containers(&mut self) {
        let leader = self.servers.leader();
        let now_ms = self.now().as_millis() as i64;
        let server = self.servers.server(leader);
        let (candidates, any) = (server.reap_candidates(now_ms), server.has_reaped_kinds());
        // A forced order reaps where it says, and nowhere else.
        if self.down_until[leader] <= self.now() && self.forced.is_over() {
            for path in candidates {
                self.reap(&path);
            }
        }
        match any {
            true => self.schedule_reaper_check(),
            false => self.reaper_running = false,
        }
    }

    /// After `client`'s op (or its session's end) deleted `deleted`, draws for each parent it
    /// left for the reaper to take (a container emptied; a TTL node emptied and idle past its
    /// TTL) whether the reaper runs now (an armed scripted fault first).
    pub(super) fn reap_emptied(&mut self, client: ClientId, deleted: &[String]) {
        let mut parents: Vec<&str> = deleted.iter().map(|path| path::parent(path)).collect();
        parents.sort_unstable();
        parents.dedup();
        let leader = self.servers.leader();
        let now_ms = self.now().as_millis() as i64;
        let server = self.servers.server(leader);
        let emptied: Vec<String> = (parents.into_iter())
            .filter(|parent| server.reapable(parent, now_ms))
            .map(str::to_owned)
            .collect();
        let rate = self.plan.rates.container_reaped;
        for container in emptied {
            let kind = FaultKind::ContainerReaped;
            let struck =
                self.take_armed(client, |k| k == kind) || self.streams.fault(kind).gen_bool(rate);
            if struck {
                // Struck again by a script armed before the request that emptied it.
                let process = self.processes.get(&client);
                let conn = process
                    .and_then(|p| p.session)
                    .and_then(|s| self.conns.get(&s));
                let sent = conn.map_or(self.now(), |conn| conn.client_sent);
                self.message_fault(kind, client, sent);
                let detail = format!("the reaper deletes {container} as it empties");
                self.fault(kind, client, detail);
                self.reap(&container);
            }
        }
    }

    /// The leader's reaper deletes `path`, if it would now: a transaction its followers apply
    /// after it, whose watches fire like any delete's.
    pub(super) fn reap(&mut self, path: &str) {
        let now = self.now();
        let leader = self.servers.leader();
        let before = self.servers.applied(leader);
        let Some(reaped) = self.servers.reap(path, now.as_millis() as i64) else {
            return;
        };
        self.replicate_since(before);
        let path = path.to_owned();
        let zxid = reaped.zxid;
        self.trace.push(now, TraceEvent::Reaped { zxid, path });
        let notified = self.notify(leader, 0, reaped.notifications, zxid);
        for change in self.commit_notified(zxid, notified) {
            self.trace.push(now, change);
        }
    }
}

/// Whether `op`, applied with `reply`, created a container or a TTL node.
fn makes_reapable(op: &Op, reply: &OpReply) -> bool {
    let reapable = |op: &Op| matches!(op, Op::Create { mode, .. } if mode.is_reaped());
    match (op, reply) {
        (Op::Multi(ops), Ok(OpResult::Multi(results))) => {
            results.iter().all(Result::is_ok) && ops.iter().any(reapable)
        }
        (op, Ok(_)) => reapable(op),
        _ => false,
    }
}

/// The nodes `op` deleted, applied with `reply` (a multi's only if it succeeded).
pub(super) fn deleted_by(op: &Op, reply: &OpReply) -> Vec<String> {
    match (op, reply) {
        (Op::Delete { path, .. }, Ok(_)) => vec![path.clone()],
        (Op::Multi(ops), Ok(OpResult::Multi(results))) if results.iter().all(Result::is_ok) => {
            let deletes = ops.iter().filter_map(|op| match op {
                Op::Delete { path, .. } => Some(path.clone()),
                _ => None,
            });
            deletes.collect()
        }
        _ => Vec::new(),
    }
}
