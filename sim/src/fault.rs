//! Faults: what can go wrong between a client and ZooKeeper, by rate or by script.
//!
//! Every draw comes from the fault kind's own stream of the run's seed, so a seed fixes every
//! fault, and a change to one kind's rate leaves the others' draws as they were; every injected
//! fault is written to the trace.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::trace::ClientId;

/// How long an election takes after the leader steps down: no server serves meanwhile.
pub const ELECTION: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(2));

/// A kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// The connection drops before the op reaches the server: it is never applied.
    ConnectionLoss,
    /// The op is applied but the connection drops before its reply arrives.
    LostReply,
    /// A create is applied but its reply is lost: the node exists and the client does not know
    /// its name. The classic case, with its own rate.
    LostCreateReply,
    /// The server expires the session: ephemerals deleted, other sessions' watches fire.
    SessionExpiry,
    /// A message is held up, so the server's order differs from send order (per-session FIFO kept).
    Reorder,
    /// No traffic to or from one client for a while; past the session timeout its session expires.
    Partition,
    /// The client process stops (a GC pause) and cannot notice its session expiring.
    Pause,
    /// The client process dies; its session lives on until the server expires it.
    Crash,
    /// The follower a client is attached to falls behind the leader for a while: its reads are
    /// staler than usual (an ensemble only).
    StaleRead,
    /// The follower a client is attached to dies and restarts a while later: its clients move
    /// to other servers, re-registering their watches there, and it catches up on restart (an
    /// ensemble only).
    ServerCrash,
    /// The leader steps down and the servers elect another: every connection drops, and no
    /// server serves until the election is over. Sessions survive: the new leader gives each a
    /// whole timeout to reconnect in (an ensemble only).
    LeaderChange,
    /// The server's reaper deletes a container (or an idle TTL node) the moment a client's
    /// delete (or its session's end) takes its last child, before anyone can put another in:
    /// the worst moment for a recipe that made the container to put its own node in.
    ContainerReaped,
}

impl FaultKind {
    /// Every kind, in a fixed order.
    pub const ALL: [FaultKind; 12] = [
        FaultKind::ConnectionLoss,
        FaultKind::LostReply,
        FaultKind::LostCreateReply,
        FaultKind::SessionExpiry,
        FaultKind::Reorder,
        FaultKind::Partition,
        FaultKind::Pause,
        FaultKind::Crash,
        FaultKind::StaleRead,
        FaultKind::ServerCrash,
        FaultKind::LeaderChange,
        FaultKind::ContainerReaped,
    ];

    /// Whether the kind needs followers, which a standalone server does not have.
    pub fn needs_followers(self) -> bool {
        matches!(
            self,
            FaultKind::StaleRead | FaultKind::ServerCrash | FaultKind::LeaderChange
        )
    }

    /// The kind's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::ConnectionLoss => "connection-loss",
            FaultKind::LostReply => "lost-reply",
            FaultKind::LostCreateReply => "lost-create-reply",
            FaultKind::SessionExpiry => "session-expiry",
            FaultKind::Reorder => "reorder",
            FaultKind::Partition => "partition",
            FaultKind::Pause => "pause",
            FaultKind::Crash => "crash",
            FaultKind::StaleRead => "stale-read",
            FaultKind::ServerCrash => "server-crash",
            FaultKind::LeaderChange => "leader-change",
            FaultKind::ContainerReaped => "container-reaped",
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FaultKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        FaultKind::ALL
            .into_iter()
            .find(|kind| kind.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown fault kind `{s}`; known kinds: {}",
                    known.join(", ")
                )
            })
    }
}

/// How often each fault strikes when faults are drawn at random.
///
/// Message faults are probabilities per message; process and session faults are expected
/// occurrences per second of sim time across the whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRates {
    /// Per request: the connection drops before the server applies it.
    pub connection_loss: f64,
    /// Per non-create request: applied, reply lost.
    pub lost_reply: f64,
    /// Per create request: applied, reply lost.
    pub lost_create_reply: f64,
    /// Per message: held up by [`FaultRates::reorder_delay`] at most.
    pub reorder: f64,
    /// The longest hold-up of a reordered message.
    pub reorder_delay: Duration,
    /// Per second: the server expires a random client's session.
    pub session_expiry: f64,
    /// Per second: a random client is cut off for a while.
    pub partition: f64,
    /// Per second: a random client's process pauses for a while.
    pub pause: f64,
    /// Per second: a random client's process dies.
    pub crash: f64,
    /// Per second: a random client's follower falls behind for a while.
    pub stale_read: f64,
    /// Per second: a random client's follower dies and restarts a while later.
    pub server_crash: f64,
    /// Per second: the leader steps down and the ensemble elects another.
    pub leader_change: f64,
    /// Per container emptied by a client: the reaper deletes it at once.
    pub container_reaped: f64,
}

impl FaultRates {
    /// No faults at all.
    pub fn none() -> Self {
        FaultRates {
            connection_loss: 0.0,
            lost_reply: 0.0,
            lost_create_reply: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(50),
            session_expiry: 0.0,
            partition: 0.0,
            pause: 0.0,
            crash: 0.0,
            stale_read: 0.0,
            server_crash: 0.0,
            leader_change: 0.0,
            container_reaped: 0.0,
        }
    }

    /// Every kind at its default rate: frequent enough that a sweep of a few hundred seeds
    /// meets each of them (`run` prints the share of seeds each struck), rare enough that
    /// clients still finish their work.
    pub fn all() -> Self {
        FaultRates::none().with_all(&FaultKind::ALL)
    }

    /// These rates with the given kinds switched on at their default rate.
    pub fn with_all(mut self, kinds: &[FaultKind]) -> Self {
        for &kind in kinds {
            self.set(kind, FaultRates::default_rate(kind));
        }
        self
    }

    /// The rate `all` gives a kind.
    pub fn default_rate(kind: FaultKind) -> f64 {
        match kind {
            FaultKind::ConnectionLoss | FaultKind::LostReply => 0.01,
            FaultKind::LostCreateReply => 0.03,
            FaultKind::Reorder
            | FaultKind::SessionExpiry
            | FaultKind::Partition
            | FaultKind::Pause => 0.02,
            FaultKind::Crash => 0.005,
            FaultKind::StaleRead => 0.3,
            FaultKind::ServerCrash => 0.1,
            FaultKind::LeaderChange => 0.05,
            FaultKind::ContainerReaped => 0.3,
        }
    }

    /// Sets one kind's rate.
    pub fn set(&mut self, kind: FaultKind, rate: f64) {
        *self.slot(kind) = rate;
    }

    /// One kind's rate.
    pub fn rate(&self, kind: FaultKind) -> f64 {
        *self.clone().slot(kind)
    }

    fn slot(&mut self, kind: FaultKind) -> &mut f64 {
        match kind {
            FaultKind::ConnectionLoss => &mut self.connection_loss,
            FaultKind::LostReply => &mut self.lost_reply,
            FaultKind::LostCreateReply => &mut self.lost_create_reply,
            FaultKind::Reorder => &mut self.reorder,
            FaultKind::SessionExpiry => &mut self.session_expiry,
            FaultKind::Partition => &mut self.partition,
            FaultKind::Pause => &mut self.pause,
            FaultKind::Crash => &mut self.crash,
            FaultKind::StaleRead => &mut self.stale_read,
            FaultKind::ServerCrash => &mut self.server_crash,
            FaultKind::LeaderChange => &mut self.leader_change,
            FaultKind::ContainerReaped => &mut self.container_reaped,
        }
    }

    /// Parses `none`, or a comma-separated list of `all` and kinds, each kind at its default
    /// rate or at one given as `kind=rate` (a probability per message for connection-loss,
    /// lost-reply, lost-create-reply and reorder, and per emptied container for
    /// container-reaped, at most 1; otherwise per second of sim time,
    /// at most 100). Later items override earlier ones: `all,crash=0.05` is every kind with
    /// crashes ten times as often.
    pub fn parse(spec: &str) -> Result<Self, String> {
        if spec == "none" {
            return Ok(FaultRates::none());
        }
        refuse_none_in_list(spec)?;
        let mut rates = FaultRates::none();
        for item in spec.split(',').map(str::trim) {
            if item == "all" {
                rates = rates.with_all(&FaultKind::ALL);
                continue;
            }
            let (name, rate) = match item.split_once('=') {
                Some((name, rate)) => (name.trim(), Some(rate.trim())),
                None => (item, None),
            };
            let kind: FaultKind = name.parse()?;
            let rate = match rate {
                None => FaultRates::default_rate(kind),
                Some(text) => parse_rate(kind, text)?,
            };
            rates.set(kind, rate);
        }
        Ok(rates)
    }

    /// Refuses a `spec` (as [`FaultRates::parse`] takes) that names a kind needing followers,
    /// at a rate above zero, for a standalone server (`servers` 1): no fault of that kind could
    /// strike, and a run would pass having injected none. `all` on one server is no error: it
    /// means every kind that can strike there.
    pub fn check_strikable(spec: &str, servers: usize) -> Result<(), String> {
        if servers > 1 || spec == "none" {
            return Ok(());
        }
        let named = FaultRates::parse(spec)?;
        let unstrikable: Vec<&str> = FaultKind::ALL
            .into_iter()
            .filter(|kind| kind.needs_followers() && named.rate(*kind) > 0.0)
            .filter(|kind| {
                let mut names = spec.split(',').filter_map(|item| item.split('=').next());
                names.any(|name| name.trim() == kind.name())
            })
            .map(FaultKind::name)
            .collect();
        if unstrikable.is_empty() {
            return Ok(());
        }
        Err(format!(
            "{} cannot strike a standalone server: they need followers (--servers 3 or 5)",
            unstrikable.join(", ")
        ))
    }

    /// The per-second rate of a process or session fault (zero for a message fault).
    pub fn per_second(&self, kind: FaultKind) -> f64 {
        match kind {
            FaultKind::SessionExpiry => self.session_expiry,
            FaultKind::Partition => self.partition,
            FaultKind::Pause => self.pause,
            FaultKind::Crash => self.crash,
            FaultKind::StaleRead => self.stale_read,
            FaultKind::ServerCrash => self.server_crash,
            FaultKind::LeaderChange => self.leader_change,
            _ => 0.0,
        }
    }
}

/// Refuses a list of faults (any `--faults` value but `none` itself) that names `none`: it means
/// no fault at all, so it stands alone.
pub fn refuse_none_in_list(spec: &str) -> Result<(), String> {
    match spec.split(',').any(|item| item.trim() == "none") {
        true => Err(format!(
            "`none` stands alone (no fault at all), not in a list: `{spec}`"
        )),
        false => Ok(()),
    }
}

/// A rate for `kind`: a probability for a message fault, a frequency per second otherwise.
fn parse_rate(kind: FaultKind, text: &str) -> Result<f64, String> {
    let per_message = matches!(
        kind,
        FaultKind::ConnectionLoss
            | FaultKind::LostReply
            | FaultKind::LostCreateReply
            | FaultKind::Reorder
            | FaultKind::ContainerReaped
    );
    let most = if per_message { 1.0 } else { 100.0 };
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=most).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "`{kind}={text}`: a rate must be a number from 0 to {most}"
        )),
    }
}

/// A fault at a fixed time, for a scripted run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedFault {
    /// Sim time since the run began.
    pub at: Duration,
    /// Which kind; message kinds strike the client's next request.
    pub kind: FaultKind,
    /// Which client.
    pub client: ClientId,
    /// How long a partition or pause lasts.
    pub duration: Duration,
}

/// What faults a run gets: random draws at these rates, plus any scripted ones.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultPlan {
    /// The random rates.
    pub rates: FaultRates,
    /// Faults at fixed times.
    pub script: Vec<ScriptedFault>,
}

/// How many faults of each kind a run injected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    counts: [u64; FaultKind::ALL.len()],
}

impl FaultCounts {
    /// Counts one more of `kind`.
    pub fn add(&mut self, kind: FaultKind) {
        self.counts[kind as usize] += 1;
    }

    /// How many of `kind`.
    pub fn get(&self, kind: FaultKind) -> u64 {
        self.counts[kind as usize]
    }

    /// Adds another run's counts.
    pub fn merge(&mut self, other: &FaultCounts) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
    }

    /// One for each kind that struck at least once: summed over runs, how many runs each kind
    /// struck.
    pub fn struck(&self) -> FaultCounts {
        FaultCounts {
            counts: self.counts.map(|n| n.min(1)),
        }
    }

    /// Every kind with its count, in [`FaultKind::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (FaultKind, u64)> + '_ {
        FaultKind::ALL
            .into_iter()
            .map(|kind| (kind, self.get(kind)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_kinds_at_their_default_rate_or_at_a_given_one_later_items_winning() {
        assert_eq!(FaultRates::parse("none"), Ok(FaultRates::none()));
        assert_eq!(FaultRates::parse("all"), Ok(FaultRates::all()));
        let listed = FaultRates::parse("none,crash").unwrap_err();
        assert!(listed.contains("`none` stands alone"), "{listed}");
        let mut expected = FaultRates::all();
        expected.set(FaultKind::Crash, 0.05);
        assert_eq!(FaultRates::parse("all, crash=0.05"), Ok(expected));
        let mut expected = FaultRates::none();
        expected.set(FaultKind::LostReply, 1.0);
        expected.set(FaultKind::Pause, FaultRates::default_rate(FaultKind::Pause));
        assert_eq!(FaultRates::parse("lost-reply=1,pause"), Ok(expected));
    }

    #[test]
    fn a_rate_out_of_range_or_not_a_number_is_refused_with_its_range() {
        for (spec, range) in [
            ("lost-reply=1.5", "0 to 1"),
            ("crash=-0.1", "0 to 100"),
            ("crash=101", "0 to 100"),
            ("pause=often", "0 to 100"),
            ("reorder=NaN", "0 to 1"),
        ] {
            let error = FaultRates::parse(spec).expect_err(spec);
            assert!(error.contains(range), "{spec}: {error}");
        }
        assert!(FaultRates::parse("all,bogus=1")
            .expect_err("unknown")
            .contains("unknown fault kind"));
    }
}
