//! Faults struck on a real ZooKeeper while a scenario's workload runs on it (`zklab real
//! --faults`): session expiry and a dropped connection through a controller server's command
//! port, a follower's crash and the leader's by killing an ensemble's members and restarting
//! them. The same monitors judge the run as without faults.
//!
//! Rates are per second of wall time, and a seed draws the waits, the kinds and the sessions or
//! members struck; where in the workload each fault lands is up to the real server's timing, so
//! a real run is not reproducible, only its schedule is.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use tokio::runtime::Runtime;

use crate::launcher::{ControlCommand, Controller, Ensemble};
use crate::recipes::client::{SessionId, ZkError};
use crate::scenarios::real::{self, RealOptions, RealReport, RealTrace};
use crate::scenarios::scenario::Scenario;
use crate::sim::fault::{FaultCounts, FaultKind};
use crate::sim::trace::{ClientId, TraceEvent};

/// The kinds a real server can be made to suffer, with their default rates per second of wall
/// time: a real lock workload of 5 clients by 10 rounds lasts a few seconds.
const KINDS: [(FaultKind, f64); 4] = [
    (FaultKind::SessionExpiry, 0.2),
    (FaultKind::ConnectionLoss, 0.5),
    (FaultKind::ServerCrash, 0.2),
    (FaultKind::LeaderChange, 0.1),
];

/// The highest rate a kind may have, per second.
const MAX_RATE: f64 = 10.0;

/// How long a killed member stays down before its restart, in milliseconds: shorter than the
/// real run's session timeout, so sessions can survive it.
const DOWN_MS: (u64, u64) = (500, 3000);

/// How often the striker looks whether the workload is over while it waits.
const POLL: Duration = Duration::from_millis(20);

/// Faults to strike on a real server, each kind at a rate per second of wall time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RealFaults {
    rates: BTreeMap<FaultKind, f64>,
}

impl RealFaults {
    /// Reads `none`, or a comma-separated list of kinds, each at its default rate or as
    /// `kind=rate` (per second, 0 to 10); later items win. Controller kinds (session-expiry,
    /// connection-loss) and ensemble kinds (server-crash, leader-change) cannot be mixed: no
    /// server zklab starts does both.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut faults = RealFaults::default();
        if spec.trim() == "none" {
            return Ok(faults);
        }
        for item in spec.split(',').map(str::trim) {
            let (name, rate) = match item.split_once('=') {
                Some((name, rate)) => (name.trim(), Some(rate.trim())),
                None => (item, None),
            };
            let kind: FaultKind = name.parse()?;
            let Some(&(_, default)) = KINDS.iter().find(|(known, _)| *known == kind) else {
                return Err(format!(
                    "{name} cannot be struck on a real server; it takes {}",
                    Self::kinds()
                ));
            };
            let rate = match rate {
                None => default,
                Some(text) => text
                    .parse::<f64>()
                    .ok()
                    .filter(|rate| (0.0..=MAX_RATE).contains(rate))
                    .ok_or_else(|| {
                        format!("the rate of {name} must be a number from 0 to {MAX_RATE} per second, not `{text}`")
                    })?,
            };
            faults.rates.insert(kind, rate);
        }
        if faults.needs_ensemble() && faults.rates.keys().any(|kind| !kind.needs_followers()) {
            return Err(format!(
                "`{spec}` mixes kinds no one server takes: session-expiry and connection-loss \
                 need a controller server (one member with a command port), server-crash and \
                 leader-change an ensemble; run them separately"
            ));
        }
        Ok(faults)
    }

    /// Whether no fault strikes.
    pub fn is_none(&self) -> bool {
        self.rates.is_empty()
    }

    /// Whether the faults kill ensemble members (else they go through a controller's command
    /// port).
    pub fn needs_ensemble(&self) -> bool {
        self.rates.keys().any(|kind| kind.needs_followers())
    }

    /// The kinds a real server takes, with their default rates, for messages.
    fn kinds() -> String {
        let kinds: Vec<String> = KINDS
            .iter()
            .map(|(kind, rate)| format!("{kind} (default {rate}/s)"))
            .collect();
        kinds.join(", ")
    }
}

/// The server faults strike, started by zklab for the run.
#[derive(Clone, Copy)]
pub enum Struck<'a> {
    /// A controller server: sessions are expired and connections closed through its command
    /// port.
    Controller(&'a Controller),
    /// An ensemble: members are killed and restarted.
    Ensemble(&'a Mutex<Ensemble>),
}

/// A real run's faults: what strikes, on which server, drawn from which seed.
#[derive(Clone, Copy)]
pub struct Striker<'a> {
    /// The server, which zklab started.
    pub server: Struck<'a>,
    /// The kinds and their rates.
    pub faults: &'a RealFaults,
    /// Draws the waits, the kinds and the sessions or members struck.
    pub seed: u64,
}

/// What a real run with faults gave.
pub struct StruckRun {
    /// The run's report, or why the server could not be reached to prepare or inspect it.
    pub report: Result<RealReport, ZkError>,
    /// How many of each kind struck, or why the server could not be struck.
    pub struck: Result<FaultCounts, String>,
}

impl Striker<'_> {
    /// Runs `scenario`'s workload on the server (its connect string `hosts`) on `runtime`,
    /// recording into `trace`, and strikes meanwhile from another thread until every client
    /// has finished.
    pub fn run(
        &self,
        runtime: &Runtime,
        scenario: &'static Scenario,
        hosts: &str,
        options: &RealOptions,
        trace: RealTrace,
    ) -> StruckRun {
        let stop = AtomicBool::new(false);
        thread::scope(|scope| {
            let striker = {
                let (trace, stop) = (trace.clone(), &stop);
                let clients = options.clients as usize;
                scope.spawn(move || self.strike(&trace, clients, stop))
            };
            let report = runtime.block_on(real::run(scenario, hosts, options, trace));
            stop.store(true, Ordering::Relaxed);
            let struck = striker
                .join()
                .unwrap_or_else(|_| Err("the fault striker stopped by a panic".to_owned()));
            StruckRun { report, struck }
        })
    }

    /// Strikes until each of `clients` has finished in `trace`, or `stop` is set; every fault
    /// is a trace line (an ensemble's names client 0 as struck, as the simulator's does).
    fn strike(
        &self,
        trace: &RealTrace,
        clients: usize,
        stop: &AtomicBool,
    ) -> Result<FaultCounts, String> {
        let mut rng = Draws(self.seed);
        let rates = &self.faults.rates;
        let total: f64 = rates.values().sum();
        let mut counts = FaultCounts::default();
        if total <= 0.0 {
            return Ok(counts);
        }
        let over = || stop.load(Ordering::Relaxed) || trace.finished() >= clients;
        loop {
            // Exponential waits: faults arrive as a Poisson process of the summed rate.
            let wait = Duration::from_secs_f64(-(1.0 - rng.unit()).ln() / total);
            let until = Instant::now() + wait;
            while !over() && Instant::now() < until {
                thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
            }
            if over() {
                return Ok(counts);
            }
            let mut pick = rng.unit() * total;
            let mut kind = FaultKind::ConnectionLoss;
            for (&candidate, &rate) in rates.iter().filter(|(_, rate)| **rate > 0.0) {
                kind = candidate;
                pick -= rate;
                if pick < 0.0 {
                    break;
                }
            }
            let struck = match self.server {
                Struck::Controller(controller) => {
                    strike_session(controller, kind, &mut rng, trace)?
                }
                Struck::Ensemble(ensemble) => strike_member(ensemble, kind, &mut rng, trace)?,
            };
            if struck {
                counts.add(kind);
            }
        }
    }
}

/// Expires a working client's session or closes its connection; false when no client is
/// working with a session the trace has named yet.
fn strike_session(
    controller: &Controller,
    kind: FaultKind,
    rng: &mut Draws,
    trace: &RealTrace,
) -> Result<bool, String> {
    let working = working_sessions(trace);
    if working.is_empty() {
        return Ok(false);
    }
    let (client, session) = working[rng.below(working.len() as u64) as usize];
    let command = match kind {
        FaultKind::SessionExpiry => ControlCommand::ExpireSession(session),
        _ => ControlCommand::CloseConnection(session),
    };
    trace.push(TraceEvent::Fault {
        kind,
        client,
        detail: format!("the controller's {command}"),
        lasts: Duration::ZERO,
    });
    // The server ends the session as the command arrives, and only then deletes its ephemerals
    // and lets another client take what it held; its own client learns of it only when it
    // reconnects. So the trace ends it as the command goes out.
    if kind == FaultKind::SessionExpiry {
        trace.end_session(client, session);
    }
    controller
        .send(command)
        .map_err(|error| format!("the controller refused {command}: {error}"))?;
    Ok(true)
}

/// Kills a follower (server-crash) or the leader (leader-change), and restarts it a while
/// later; false when the ensemble has no leader now.
fn strike_member(
    ensemble: &Mutex<Ensemble>,
    kind: FaultKind,
    rng: &mut Draws,
    trace: &RealTrace,
) -> Result<bool, String> {
    let mut ensemble = ensemble.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(leader) = ensemble.leader() else {
        return Ok(false);
    };
    let (member, role) = if kind == FaultKind::LeaderChange {
        (leader, "the leader")
    } else {
        let followers: Vec<usize> = (0..ensemble.size()).filter(|&m| m != leader).collect();
        (
            followers[rng.below(followers.len() as u64) as usize],
            "a follower",
        )
    };
    let down_for = Duration::from_millis(DOWN_MS.0 + rng.below(DOWN_MS.1 - DOWN_MS.0 + 1));
    trace.push(TraceEvent::Fault {
        kind,
        client: 0,
        detail: format!("member {member} ({role}) killed, restarted after {down_for:?}"),
        lasts: Duration::ZERO,
    });
    ensemble
        .kill(member)
        .map_err(|error| format!("could not kill member {member}: {error}"))?;
    thread::sleep(down_for);
    ensemble
        .restart(member)
        .map_err(|error| format!("member {member} did not come back: {error}"))?;
    Ok(true)
}

/// The striker's draws: SplitMix64, so a seed gives the same schedule on any machine.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n), for a small n > 0.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Each client still working, with its session as the trace last named it, unless that session
/// has ended.
fn working_sessions(trace: &RealTrace) -> Vec<(ClientId, SessionId)> {
    let mut last = BTreeMap::new();
    let mut ended = BTreeSet::new();
    for entry in trace.snapshot().entries() {
        match &entry.event {
            TraceEvent::SessionEnded { session, .. } => {
                ended.insert(*session);
            }
            TraceEvent::Finished { client } => {
                last.insert(*client, None);
            }
            TraceEvent::Outcome {
                client, session, ..
            }
            | TraceEvent::Session {
                client, session, ..
            } => {
                last.insert(*client, Some(*session));
            }
            _ => {}
        }
    }
    last.into_iter()
        .filter_map(|(client, session)| Some((client, session?)))
        .filter(|(_, session)| !ended.contains(session))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_take_default_or_given_rates_and_later_items_win() {
        let faults = RealFaults::parse("session-expiry, connection-loss=2,session-expiry=0.5")
            .expect("valid");
        assert_eq!(faults.rates[&FaultKind::SessionExpiry], 0.5);
        assert_eq!(faults.rates[&FaultKind::ConnectionLoss], 2.0);
        assert!(!faults.needs_ensemble());
        let faults = RealFaults::parse("leader-change").expect("valid");
        assert_eq!(faults.rates[&FaultKind::LeaderChange], 0.1);
        assert!(faults.needs_ensemble());
        assert!(RealFaults::parse("none").expect("valid").is_none());
    }

    #[test]
    fn kinds_no_real_server_takes_mixed_kinds_and_bad_rates_are_refused() {
        let refused = |spec: &str, says: &str| {
            let error = RealFaults::parse(spec).expect_err(spec);
            assert!(error.contains(says), "{spec}: {error}");
        };
        refused("pause", "cannot be struck on a real server");
        refused("all", "unknown fault kind");
        refused("session-expiry,server-crash", "run them separately");
        refused("connection-loss=11", "from 0 to 10");
        refused("connection-loss=-1", "from 0 to 10");
        refused("connection-loss=NaN", "from 0 to 10");
        refused("", "unknown fault kind");
    }
}
