//! The simulated ZooKeeper service as a core that any clock can drive: the servers (one
//! standalone, or a leader and its followers, see [`crate::replicas`]), the wire between them
//! and every client, each session's connection as its client library keeps it, the leader's
//! session tracker, and the fault injector.
//!
//! `Service` is synchronous and does no I/O: every input (a client's request, a heartbeat's
//! timer, the wire's next delivery falling due, a fault) comes with the time it happens at,
//! and what it causes outside (a reply or an event for a client, a process to pause or kill,
//! when to wake the core next) comes out as `Output`s, in order. Its randomness is a stream
//! per concern, derived from the run's seed (`streams`). [`SimZk`] drives it under madsim; each
//! concern lives in its own file:
//!
//! - `wire`: messages in flight, their delivery times (latency, jitter, reorder, partitions);
//! - `connection`: a session's connection from the client's side (requests, heartbeats,
//!   breaks, reconnection, watch events reaching the code);
//! - `serving`: the server's side (requests answered in order, the session tracker, a
//!   session's end);
//! - `replication`: the followers' lag, a server's crash and a leader change, server choice;
//! - `watch_delivery`: fired watches sent, and which sessions each change notified;
//! - `faults`: drawing and striking the fault plan's faults;
//! - `forced_steps`: the order a model checker's counterexample forces on a run.

mod connection;
mod faults;
mod forced_steps;
#[cfg(madsim)]
mod madsim_driver;
mod output;
mod reaping;
mod replication;
mod serving;
pub(crate) mod streams;
mod timing;
mod watch_delivery;
mod wire;

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use madsim::rand::RngCore;
use zklab_recipes::client::SessionId;

use crate::fault::{FaultCounts, FaultKind, FaultPlan, ScriptedFault};
use crate::forced::ForcedOrder;
use crate::notified::Gathering;
use crate::replicas::Replicas;
use crate::trace::{ClientId, Trace};

use connection::Conn;
#[cfg(madsim)]
pub use madsim_driver::SimZk;
pub(crate) use output::Output;
use streams::Streams;
pub use timing::SimConfig;
use wire::{Request, Wire};

/// One simulated client process, as the service knows it.
#[derive(Debug, Default)]
struct Process {
    session: Option<SessionId>,
    crashed: bool,
    /// Scripted message faults waiting for this client's next request.
    armed: Vec<FaultKind>,
}

/// The simulated service's whole state (see the module's documentation).
pub(crate) struct Service {
    /// The service's random draws, a stream per concern.
    streams: Streams,
    /// The order a session's end deletes its ephemerals in is keyed by this and the session.
    ephemeral_order: u64,
    /// Where in its check interval the reaper looks (from the seed).
    reaper_phase: u64,
    /// Whether the reaper's checks are scheduled (while any container or TTL node exists).
    reaper_running: bool,
    /// The time of the inputs now being handled, as trace times count it (see
    /// [`Service::set_time`]).
    now: Duration,
    servers: Replicas,
    /// The changes whose notifications are told once every server has applied them.
    gathering: Gathering,
    /// Per follower, when it applies the last transaction scheduled for it.
    follower_due: Vec<Duration>,
    /// Per server, until when it is down (a crashed follower restarts then).
    down_until: Vec<Duration>,
    /// Per server, until when it lags further behind than usual, and by how much more.
    lag_spikes: Vec<(Duration, Duration)>,
    config: SimConfig,
    plan: FaultPlan,
    trace: Trace,
    counts: FaultCounts,
    /// Every fault injected, as the script that strikes it again (see [`Service::take_struck`]).
    struck: Vec<ScriptedFault>,
    /// The order forced on the run, if any ([`Service::force_order`]).
    forced: ForcedOrder,
    /// Requests that reached the server before the forced order let it apply them, in order.
    held: VecDeque<(SessionId, Request)>,
    wire: Wire,
    conns: BTreeMap<SessionId, Conn>,
    processes: BTreeMap<ClientId, Process>,
    /// The plan's faults still to strike.
    striking: faults::Striking,
    faults_stopped: bool,
    /// What the inputs handled so far caused outside the core, in order.
    outbox: Vec<Output>,
}

impl Service {
    /// A service with no session yet, whose every draw comes from `seed`.
    pub(crate) fn new(config: SimConfig, plan: FaultPlan, seed: u64) -> Self {
        let servers = config.servers.max(1);
        Service {
            streams: Streams::new(seed),
            ephemeral_order: streams::key(seed, "ephemeral-order"),
            reaper_phase: streams::key(seed, "reaper-phase"),
            reaper_running: false,
            now: Duration::ZERO,
            servers: Replicas::new(config.servers),
            gathering: Gathering::default(),
            follower_due: vec![Duration::ZERO; servers],
            down_until: vec![Duration::ZERO; servers],
            lag_spikes: vec![(Duration::ZERO, Duration::ZERO); servers],
            config,
            plan,
            trace: Trace::new(),
            counts: FaultCounts::default(),
            struck: Vec::new(),
            forced: ForcedOrder::default(),
            held: VecDeque::new(),
            wire: Wire::default(),
            conns: BTreeMap::new(),
            processes: BTreeMap::new(),
            striking: faults::Striking::default(),
            faults_stopped: false,
            outbox: Vec::new(),
        }
    }

    /// Sets the time the inputs that follow happen at (the service's own clock, counted from
    /// its start). Time never goes back.
    pub(crate) fn set_time(&mut self, now: Duration) {
        debug_assert!(now >= self.now, "time goes forward");
        self.now = now;
    }

    /// The time of the inputs now being handled.
    pub(crate) fn now(&self) -> Duration {
        self.now
    }

    /// Whether the inputs handled so far caused anything outside not yet taken out.
    pub(crate) fn has_outputs(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Takes out what the inputs handled so far caused outside, in order.
    pub(crate) fn take_outputs(&mut self, into: &mut Vec<Output>) {
        into.append(&mut self.outbox);
    }

    fn conn(&mut self, session: SessionId) -> &mut Conn {
        self.conns
            .get_mut(&session)
            .expect("every session the wire names has a connection")
    }

    /// Registers a client process; faults that strike processes act on it.
    pub(crate) fn add_process(&mut self, client: ClientId) {
        self.processes.insert(client, Process::default());
    }

    /// Whether `session`'s client believes it is connected.
    pub(crate) fn is_connected(&self, session: SessionId) -> bool {
        self.conns
            .get(&session)
            .is_some_and(|conn| conn.is_connected())
    }

    /// Whether `session`'s client gave it up on an AuthFailed (the server keeps it until it
    /// expires).
    pub(crate) fn auth_failed(&self, session: SessionId) -> bool {
        self.conns
            .get(&session)
            .is_some_and(|conn| conn.auth_failed())
    }

    /// A new random id for a client library's own use, from the run's stream of such ids.
    pub(crate) fn draw_unique_id(&mut self) -> u128 {
        let stream = &mut self.streams.unique_ids;
        u128::from(stream.next_u64()) << 64 | u128::from(stream.next_u64())
    }

    /// The servers, for reading.
    pub(crate) fn servers(&self) -> &Replicas {
        &self.servers
    }

    /// The trace and the faults injected, taken out at the end of a run without copying the
    /// trace; the service's own trace is left empty. Changes some follower has yet to apply
    /// are told with the sessions notified so far.
    pub(crate) fn take_report(&mut self) -> (Trace, FaultCounts) {
        let now = self.now();
        for record in self.gathering.unfinished() {
            self.trace.push(now, record);
        }
        (std::mem::take(&mut self.trace), self.counts)
    }

    /// Appends an event to the trace now.
    pub(crate) fn record(&mut self, event: crate::trace::TraceEvent) {
        let now = self.now();
        self.trace.push(now, event);
    }
}

#[cfg(test)]
mod tests;
