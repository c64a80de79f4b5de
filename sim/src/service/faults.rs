//! The fault plan carried out: message faults drawn per request or message (connection loss
//! before apply, a lost reply after apply, a reorder), process, session and server faults drawn
//! per second of sim time against a random live client, scripted faults at their times, and the
//! faults a test strikes on purpose. Every fault struck is a trace line, a count, and a line of
//! the script that strikes it again ([`Service::take_struck`]).

use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::{Op, SessionId};

use super::streams::draw_interval;
use super::wire::{Delivery, Response};
use super::{Output, Service};
use crate::fault::{FaultKind, ScriptedFault, ELECTION};
use crate::trace::{ClientId, OpText, TraceEvent};

/// How much further behind than usual a follower falls under a stale-read fault.
const STALE_READ_LAG: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(1));

/// The plan's faults still to strike: its script, latest first, and when each kind drawn per
/// second strikes next (each kind is a Poisson process of its own, drawn from its own stream).
#[derive(Debug, Default)]
pub(super) struct Striking {
    script: Vec<ScriptedFault>,
    next_random: Vec<(FaultKind, Duration)>,
}

impl Service {
    /// The per-second rate of a process, session or server fault here: a standalone server has
    /// no follower to strike.
    fn rate(&self, kind: FaultKind) -> f64 {
        if kind.needs_followers() && self.servers.len() == 1 {
            return 0.0;
        }
        self.plan.rates.per_second(kind)
    }

    /// Begins carrying out the plan's process, session and server faults: each kind's first
    /// is drawn now.
    pub(crate) fn start_faults(&mut self) {
        let mut script = self.plan.script.clone();
        script.sort_by_key(|fault| std::cmp::Reverse(fault.at));
        let mut next_random = Vec::new();
        for kind in FaultKind::ALL {
            let rate = self.rate(kind);
            if let Some(at) = draw_interval(self.streams.fault(kind), rate) {
                next_random.push((kind, at));
            }
        }
        self.striking = Striking {
            script,
            next_random,
        };
    }

    /// When the next of the plan's faults strikes, and which: the script's (`None`) or a random
    /// one of a kind (its index in the kinds drawn); `None` when none is left.
    fn next_fault(&self) -> Option<(Duration, Option<usize>)> {
        let scripted = self.striking.script.last().map(|fault| (fault.at, None));
        let random = (self.striking.next_random.iter().enumerate())
            .min_by_key(|(index, (_, at))| (*at, *index))
            .map(|(index, &(_, at))| (at, Some(index)));
        match (scripted, random) {
            (Some(s), Some(r)) if s.0 <= r.0 => Some(s),
            (_, Some(r)) => Some(r),
            (s, None) => s,
        }
    }

    /// When the driver should call [`Service::strike_next_fault`]: `None` when no fault is
    /// left to strike.
    pub(crate) fn next_fault_at(&self) -> Option<Duration> {
        self.next_fault().map(|(at, _)| at)
    }

    /// Strikes the plan's next fault, whose time has come (a random one is drawn now from its
    /// kind's stream: its client and length, and when the kind strikes next). False once faults
    /// are stopped, or none is left.
    pub(crate) fn strike_next_fault(&mut self) -> bool {
        if self.faults_stopped {
            return false;
        }
        let Some((_, which)) = self.next_fault() else {
            return false;
        };
        let fault = match which {
            None => self.striking.script.pop(),
            Some(index) => {
                let (kind, at) = self.striking.next_random[index];
                let rate = self.rate(kind);
                match draw_interval(self.streams.fault(kind), rate) {
                    Some(interval) => self.striking.next_random[index].1 = at + interval,
                    None => {
                        self.striking.next_random.remove(index);
                    }
                }
                self.draw_fault(kind)
            }
        };
        if let Some(fault) = fault {
            self.inject(fault);
        }
        true
    }

    /// Picks a live client for a fault of `kind`, and its length.
    fn draw_fault(&mut self, kind: FaultKind) -> Option<ScriptedFault> {
        let live: Vec<ClientId> = self
            .processes
            .iter()
            .filter(|(_, p)| !p.crashed)
            .map(|(&c, _)| c)
            .collect();
        if live.is_empty() {
            return None;
        }
        let timeout = self.config.session_timeout;
        let stream = self.streams.fault(kind);
        let client = live[stream.gen_range(0..live.len())];
        let duration = stream.gen_range(timeout / 3..=timeout * 2);
        Some(ScriptedFault {
            at: self.now(),
            kind,
            client,
            duration,
        })
    }

    /// Strikes `fault` now, if its client's process lives: a message kind waits for the
    /// client's next request.
    pub(crate) fn inject(&mut self, fault: ScriptedFault) {
        let ScriptedFault {
            kind,
            client,
            duration,
            ..
        } = fault;
        let now = self.now();
        let Some(process) = self.processes.get_mut(&client) else {
            return;
        };
        if process.crashed {
            return;
        }
        let session = process.session;
        let detail = match kind {
            FaultKind::ConnectionLoss
            | FaultKind::LostReply
            | FaultKind::LostCreateReply
            | FaultKind::Reorder
            | FaultKind::ContainerReaped => {
                process.armed.push(kind);
                return;
            }
            FaultKind::SessionExpiry => {
                let Some(session) = session.filter(|&s| self.servers.session_alive(s)) else {
                    return;
                };
                if self.down_until[self.servers.leader()] > now {
                    // No leader during an election: nobody expires a session.
                    return;
                }
                self.expire(session);
                format!("server expires s{session}")
            }
            FaultKind::Partition => {
                let Some(session) = session else { return };
                let until = now + duration;
                let conn = self.conn(session);
                conn.partitioned_until = conn.partitioned_until.max(until);
                format!("s{session} cut off for {duration:?}")
            }
            FaultKind::Pause => {
                self.outbox.push(Output::Pause { client, duration });
                format!("process paused for {duration:?}")
            }
            FaultKind::Crash => {
                self.kill(client);
                "process killed".to_owned()
            }
            FaultKind::LeaderChange => {
                let (low, high) = ELECTION;
                let election = self.streams.fault(kind).gen_range(low..=high);
                let Some(leader) = self.change_leader(election) else {
                    return;
                };
                format!("the leader steps down; server {leader} leads after {election:?}")
            }
            FaultKind::StaleRead | FaultKind::ServerCrash => {
                let Some(session) = session else { return };
                let server = self.conn(session).server;
                let until = now + duration;
                if server == self.servers.leader() || self.down_until[server] > now {
                    return;
                }
                if kind == FaultKind::ServerCrash {
                    self.crash_follower(server, until);
                    format!("server {server} down for {duration:?}")
                } else {
                    let (low, high) = STALE_READ_LAG;
                    let more = self.streams.fault(kind).gen_range(low..=high);
                    self.lag_spikes[server] = (until, more);
                    format!("server {server} falls {more:?} further behind for {duration:?}")
                }
            }
        };
        // How long the client cannot act: a lagging or crashed follower stops nobody (its
        // clients move on).
        let lasts = match kind {
            FaultKind::Partition | FaultKind::Pause => duration,
            FaultKind::Crash => Duration::MAX,
            _ => Duration::ZERO,
        };
        let at = self.now();
        self.struck.push(ScriptedFault {
            at,
            kind,
            client,
            duration,
        });
        self.lasting_fault(kind, client, detail, lasts);
    }

    /// Kills a client's process for good: its tasks stop, and its session lives until the
    /// server expires it.
    fn kill(&mut self, client: ClientId) {
        if let Some(process) = self.processes.get_mut(&client) {
            self.outbox.push(Output::Kill { client });
            process.crashed = true;
        }
    }

    /// Stops a client that crashes left too few working beside to finish (see
    /// [`TraceEvent::Stranded`]): its process dies as a crashed one does, and the server expires
    /// its session.
    pub(crate) fn strand(&mut self, client: ClientId) {
        self.kill(client);
        let now = self.now();
        self.trace.push(now, TraceEvent::Stranded { client });
    }

    /// Stops injecting faults (the workload is over; what follows is the clean-up check).
    pub(crate) fn stop_faults(&mut self) {
        self.faults_stopped = true;
    }

    /// The server expires `session` now, as a `session-expiry` fault of its client would.
    pub(crate) fn expire_session(&mut self, session: SessionId) {
        if !self.conns.contains_key(&session) || !self.servers.session_alive(session) {
            return;
        }
        self.expire(session);
        let client = self.conn(session).client;
        let detail = format!("server expires s{session}");
        self.fault(FaultKind::SessionExpiry, client, detail);
    }

    /// The server drops `session`'s connection now; the session lives, and its client
    /// reconnects.
    pub(crate) fn drop_connection(&mut self, session: SessionId) {
        let Some(conn) = self.conns.get(&session) else {
            return;
        };
        if !conn.is_connected() {
            return;
        }
        let client = conn.client;
        self.disconnect(session);
        let detail = format!("s{session} connection dropped");
        self.fault(FaultKind::ConnectionLoss, client, detail);
    }

    /// The reply to `client`'s next request is lost after the server applies it, and the
    /// connection breaks, as a `lost-reply` fault would. Panics unless the client's process was
    /// registered, where the fault waits.
    pub(crate) fn lose_next_reply(&mut self, client: ClientId) {
        let process = self.processes.get_mut(&client).unwrap_or_else(|| {
            panic!("lose_next_reply: c{client} has no process; register it with add_process")
        });
        process.armed.push(FaultKind::LostReply);
    }

    /// Follower `server` dies and restarts after `down_for`, as a `server-crash` fault does.
    /// The trace names client 0 as struck. Panics if `server` is the leader.
    pub(crate) fn crash_server(&mut self, server: usize, down_for: Duration) {
        assert_ne!(
            server,
            self.servers.leader(),
            "the leader steps down, it does not crash"
        );
        let until = self.now() + down_for;
        self.crash_follower(server, until);
        let detail = format!("server {server} down for {down_for:?}");
        self.fault(FaultKind::ServerCrash, 0, detail);
    }

    /// Whether a fault has killed any client's process.
    pub(crate) fn any_crashed(&self) -> bool {
        self.processes.values().any(|process| process.crashed)
    }

    /// Whether a fault killed the client's process (or the run stopped it, stranded).
    pub(crate) fn is_crashed(&self, client: ClientId) -> bool {
        self.processes.get(&client).is_some_and(|p| p.crashed)
    }

    /// Whether the session of a client whose process a fault killed is still alive: it lives
    /// until the server expires it.
    pub(crate) fn crashed_session_alive(&self) -> bool {
        self.processes
            .values()
            .filter(|process| process.crashed)
            .filter_map(|process| process.session)
            .any(|session| self.servers.session_alive(session))
    }

    /// Every fault injected so far, in order, as a script that strikes each again in a run of
    /// the same workload: its time, kind, client and drawn duration. A message fault's time is
    /// when its client sent the request it struck (the reorder's: when the message it held up
    /// was sent), so that the scripted fault, which strikes the client's next message, strikes
    /// the same one.
    pub(crate) fn take_struck(&mut self) -> Vec<ScriptedFault> {
        std::mem::take(&mut self.struck)
    }

    pub(super) fn fault(&mut self, kind: FaultKind, client: ClientId, detail: String) {
        self.lasting_fault(kind, client, detail, Duration::ZERO);
    }

    /// Notes a message fault among those struck, at `sent`: when its client sent the message.
    pub(super) fn message_fault(&mut self, kind: FaultKind, client: ClientId, sent: Duration) {
        self.struck.push(ScriptedFault {
            at: sent,
            kind,
            client,
            duration: Duration::ZERO,
        });
    }

    fn lasting_fault(
        &mut self,
        kind: FaultKind,
        client: ClientId,
        detail: String,
        lasts: Duration,
    ) {
        self.counts.add(kind);
        let now = self.now();
        self.trace.push(
            now,
            TraceEvent::Fault {
                kind,
                client,
                detail,
                lasts,
            },
        );
    }

    /// Takes the first armed scripted fault of a client that `wanted` accepts.
    pub(super) fn take_armed(
        &mut self,
        client: ClientId,
        wanted: impl Fn(FaultKind) -> bool,
    ) -> bool {
        let Some(process) = self.processes.get_mut(&client) else {
            return false;
        };
        match process.armed.iter().position(|&kind| wanted(kind)) {
            Some(i) => {
                process.armed.remove(i);
                true
            }
            None => false,
        }
    }

    /// Draws whether the connection breaks before the server applies `client`'s request (an
    /// armed scripted fault first).
    pub(super) fn draw_connection_loss(&mut self, client: ClientId) -> bool {
        let odds = self.plan.rates.connection_loss;
        self.take_armed(client, |k| k == FaultKind::ConnectionLoss)
            || self.streams.fault(FaultKind::ConnectionLoss).gen_bool(odds)
    }

    /// Draws whether the reply to `op`, which the server has applied, is lost (an armed scripted
    /// fault first): the fault's kind and its trace line.
    pub(super) fn draw_lost_reply(
        &mut self,
        client: ClientId,
        op: &Op,
    ) -> Option<(FaultKind, String)> {
        let (kind, rate) = if matches!(op, Op::Create { .. }) {
            let rate = self.plan.rates.lost_create_reply;
            (FaultKind::LostCreateReply, rate)
        } else {
            (FaultKind::LostReply, self.plan.rates.lost_reply)
        };
        let lost = self.take_armed(client, |k| k == kind || k == FaultKind::LostReply)
            || self.streams.fault(kind).gen_bool(rate);
        lost.then(|| (kind, format!("reply lost after apply: {}", OpText(op))))
    }

    /// A reply is lost: the fault is recorded and the connection breaks.
    ///
    /// What the server sent the session ahead of the reply (`told_first`: the op's own watch
    /// events, which a server writes before its reply) still arrives: the connection breaks
    /// right behind it, where the reply would have been.
    pub(super) fn lose_reply(
        &mut self,
        session: SessionId,
        (kind, detail): (FaultKind, String),
        told_first: bool,
    ) {
        if kind == FaultKind::LostCreateReply {
            self.counts.add(FaultKind::LostReply);
        }
        let (client, sent) = (self.conn(session).client, self.conn(session).client_sent);
        self.message_fault(kind, client, sent);
        self.fault(kind, client, detail);
        if told_first {
            let conn = self.conn(session);
            let (epoch, at) = (conn.epoch, conn.to_client_floor + Duration::from_nanos(1));
            conn.to_client_floor = at;
            let response = Response::Drop;
            let delivery = Delivery::ToClient {
                session,
                epoch,
                response,
            };
            self.schedule(at, delivery);
        } else {
            self.disconnect(session);
        }
    }
}
