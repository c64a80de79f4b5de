//! A run written down: the scenario, the seed, the workload's size and every fault at its time,
//! with no fault drawn at random. `zklab shrink` writes one, `zklab replay --script FILE` runs it,
//! and a regression directory keeps them (`crate::regressions`).
//!
//! The text form, one item per line, `#` starting a comment:
//!
//! ```text
//! scenario lock-bug-blind-retry
//! seed 7
//! clients 2
//! rounds 1
//! servers 3
//! violation deadlock
//! fault 0.012027000 lost-create-reply c1
//! fault 1.500000000 partition c0 2.000000000
//! ```
//!
//! A fault line gives its sim time in seconds, its kind and client, and for a partition, a
//! pause, a stale read or a server crash how long it lasts. `violation` says what the run
//! showed when it was written (none: it held): a property the scenario is judged by, checked
//! once the scenario is found ([`Schedule::find_scenario`]), so that a directory of schedules
//! may hold those of several programs' scenarios. A harness test's schedule
//! ([`crate::testing`]) names the test as its scenario and has 0 rounds: its closure is the
//! workload. A model checker's counterexample adds `forced`
//! (the run starts from the model's initial tree, each client plays the model's round) and its
//! path, one `step <kind> c<client>` a line: the server's steps (`apply`, `connection-loss`,
//! `lost-reply`, `session-expiry`) and the client's (`deliver`, `request`, `timeout`).

use std::fmt::Write as _;
use std::time::Duration;

#[cfg(feature = "check")]
use zklab_models::check::PropertyReport;
use zklab_models::general_properties::{NO_STUCK_STATE, ORPHAN};
use zklab_sim::fault::{FaultKind, FaultRates, ScriptedFault};
use zklab_sim::forced::{ForcedKind, ForcedStep};

use crate::catalogue::Catalogue;
use crate::monitor::stuck_waiter::STUCK_WAITER;
use crate::monitor::unowned_node::UNOWNED_NODE;
use crate::monitor::wait_for::DEADLOCK;
use crate::oracle::Property;
use crate::runner::{self, RunOptions, SeedReport, LIVENESS};
use crate::scenario::Scenario;

/// One run with every fault scripted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// The scenario's name (see `zklab list`).
    pub scenario: String,
    /// The seed: it still draws latencies, reconnect delays and the like, not faults.
    pub seed: u64,
    /// How many clients.
    pub clients: u32,
    /// Rounds of work per client.
    pub rounds: u32,
    /// Servers in the simulated ensemble.
    pub servers: usize,
    /// The faults, in time order.
    pub faults: Vec<ScriptedFault>,
    /// What the run showed when the schedule was written, if anything broke: the
    /// [`Property::violation`] name of a property its scenario is judged by.
    pub violation: Option<String>,
    /// The order forced on the server, from the model's initial tree, if any
    /// ([`RunOptions::forced`]).
    pub forced: Option<Vec<ForcedStep>>,
}

/// The fault kinds whose script line says how long they last.
fn lasts(kind: FaultKind) -> bool {
    matches!(
        kind,
        FaultKind::Partition | FaultKind::Pause | FaultKind::StaleRead | FaultKind::ServerCrash
    )
}

impl Schedule {
    /// The options that run it: its workload and its faults, none drawn at random.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            clients: self.clients,
            rounds: self.rounds,
            faults: FaultRates::none(),
            script: self.faults.clone(),
            forced: self.forced.clone(),
            ..RunOptions::default()
        }
        .on_servers(self.servers)
    }

    /// A model checker's counterexample to `property`, found with `clients` clients, as a run of
    /// the real recipe code in the simulator: the model's round for each client, one server
    /// (the model's), no fault drawn, the model's initial tree, and every step of the
    /// counterexample forced in its order ([`crate::model_round`], [`zklab_sim::forced`]). It names
    /// the violation of the property, if it is a declared one (the model's own "no stuck state"
    /// is not).
    #[cfg(feature = "check")]
    pub fn of_counterexample(scenario: &str, clients: usize, property: &PropertyReport) -> Self {
        Schedule {
            scenario: scenario.to_owned(),
            seed: 0,
            clients: clients as u32,
            rounds: 1,
            servers: 1,
            faults: Vec::new(),
            violation: property
                .declared
                .map(|declared| declared.violation.to_owned()),
            forced: Some(property.forced_order.clone()),
        }
    }

    /// Whether `shown`, the property of the first violation of a run in the simulator, breaks
    /// the model's `property`: itself, or for the model's "no stuck state" a deadlock, a client that
    /// never finished or a waiter stuck for good, and for "no orphans" a node left behind or
    /// one nobody knows it owns.
    pub fn breaks(shown: &Property, property: &str) -> bool {
        let one_of = |properties: &[&Property]| properties.contains(&shown);
        match property {
            NO_STUCK_STATE => one_of(&[&DEADLOCK, &LIVENESS, &STUCK_WAITER]),
            orphans if orphans == ORPHAN.name => one_of(&[&ORPHAN, &UNOWNED_NODE]),
            property => shown.name == property,
        }
    }

    /// The scenario of `catalogue` it runs, or why it is not one: no such scenario, too few
    /// clients for it, no rounds (a harness test's schedule), or a violation it is not judged by.
    pub fn find_scenario(&self, catalogue: &Catalogue) -> Result<&'static Scenario, String> {
        let scenario = catalogue.find_fitting(&self.scenario, self.clients as usize)?;
        if self.rounds == 0 {
            return Err(format!(
                "rounds 0: a schedule of {} needs at least one (0 is a harness test's)",
                scenario.name
            ));
        }
        if let Some(violation) = &self.violation {
            let properties = scenario.kit.properties();
            if !properties.iter().any(|p| p.violation == violation) {
                let names: Vec<&str> = properties.iter().map(|p| p.violation).collect();
                return Err(format!(
                    "violation {violation}: {} is judged by {}",
                    scenario.name,
                    names.join(", ")
                ));
            }
        }
        Ok(scenario)
    }

    /// Runs it, as a run of its scenario in `catalogue`.
    pub fn run(&self, catalogue: &Catalogue) -> Result<SeedReport, String> {
        let scenario = self.find_scenario(catalogue)?;
        Ok(runner::run_seed(scenario, self.seed, &self.options()))
    }

    /// Its text form, which [`Schedule::parse`] reads back.
    pub fn to_text(&self) -> String {
        let mut text = String::from(
            "# zklab schedule: `replay --script FILE` runs a scenario's, `ZKLAB_SCHEDULE=FILE \
             cargo test` a harness test's\n",
        );
        let _ = writeln!(text, "scenario {}", self.scenario);
        let _ = writeln!(text, "seed {}", self.seed);
        let _ = writeln!(text, "clients {}", self.clients);
        let _ = writeln!(text, "rounds {}", self.rounds);
        let _ = writeln!(text, "servers {}", self.servers);
        if let Some(violation) = &self.violation {
            let _ = writeln!(text, "violation {violation}");
        }
        for fault in &self.faults {
            let _ = write!(
                text,
                "fault {} {} c{}",
                seconds(fault.at),
                fault.kind,
                fault.client
            );
            if lasts(fault.kind) {
                let _ = write!(text, " {}", seconds(fault.duration));
            }
            text.push('\n');
        }
        if let Some(steps) = &self.forced {
            text.push_str("forced\n");
            for step in steps {
                let _ = writeln!(text, "step {} c{}", step.kind.name(), step.client);
            }
        }
        text
    }

    /// Reads the text form; an error names the line and what is wrong with it.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let mut scenario = None;
        let (mut seed, mut clients, mut rounds, mut servers) = (None, None, None, None);
        let mut violation = None;
        let mut faults = Vec::new();
        let mut forced: Option<Vec<ForcedStep>> = None;
        for (index, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at_line = |message: String| format!("line {}: {message}", index + 1);
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            let value = value.trim();
            match key {
                "scenario" => scenario = Some(value.to_owned()),
                "seed" => seed = Some(number(value, "seed").map_err(at_line)?),
                "clients" => clients = Some(number(value, "clients").map_err(at_line)?),
                "rounds" => rounds = Some(number(value, "rounds").map_err(at_line)?),
                "servers" => servers = Some(number(value, "servers").map_err(at_line)?),
                "violation" => violation = Some(word(value, "violation").map_err(at_line)?),
                "fault" => faults.push(fault(value).map_err(at_line)?),
                "forced" => {
                    forced.get_or_insert_with(Vec::new);
                }
                "step" => forced
                    .get_or_insert_with(Vec::new)
                    .push(step(value).map_err(at_line)?),
                _ => {
                    return Err(at_line(format!(
                        "`{key}` is not an item of a schedule (scenario, seed, clients, rounds, \
                         servers, violation, fault, forced, step)"
                    )))
                }
            }
        }
        let missing = |item: &str| format!("the schedule has no `{item}` line");
        let schedule = Schedule {
            scenario: scenario.ok_or_else(|| missing("scenario"))?,
            seed: seed.ok_or_else(|| missing("seed"))?,
            clients: clients.ok_or_else(|| missing("clients"))?,
            rounds: rounds.ok_or_else(|| missing("rounds"))?,
            servers: servers.ok_or_else(|| missing("servers"))?,
            faults,
            violation,
            forced,
        };
        schedule.check()?;
        Ok(schedule)
    }

    /// Refuses what no run can be: no client, more rounds than a run takes, an ensemble of a
    /// size the simulator has not, a fault for a client the run does not have or at a time past
    /// the run's end.
    fn check(&self) -> Result<(), String> {
        if !(1..=64).contains(&self.clients) {
            return Err(format!("clients {}: 1 to 64", self.clients));
        }
        if self.rounds > 10_000 {
            return Err(format!(
                "rounds {}: 1 to 10000 (0 for a harness test's schedule)",
                self.rounds
            ));
        }
        if ![1, 3, 5].contains(&self.servers) {
            return Err(format!("servers {}: 1, 3 or 5", self.servers));
        }
        let steps = self.forced.iter().flatten();
        if let Some(step) = steps.clone().find(|step| step.client >= self.clients) {
            return Err(format!(
                "a step names c{}, but the run has clients c0 to c{}",
                step.client,
                self.clients - 1
            ));
        }
        if let Some(fault) = self.faults.iter().find(|f| f.client >= self.clients) {
            return Err(format!(
                "a {} fault strikes c{}, but the run has clients c0 to c{}",
                fault.kind,
                fault.client,
                self.clients - 1
            ));
        }
        // Nothing strikes past the run's liveness bound; a time past it is a typo (and one too
        // large for the simulator's clock would stop the run).
        let bound = self.options().liveness_bound();
        let late = |time: Duration| time > bound;
        if let Some(fault) = self.faults.iter().find(|f| late(f.at) || late(f.duration)) {
            return Err(format!(
                "a {} fault at {} s lasting {} s: a run of this workload ends within {} s",
                fault.kind,
                seconds(fault.at),
                seconds(fault.duration),
                bound.as_secs()
            ));
        }
        if let Some(fault) = self.faults.iter().find(|f| f.kind.needs_followers()) {
            if self.servers == 1 {
                return Err(format!(
                    "a {} fault needs followers: servers 3 or 5",
                    fault.kind
                ));
            }
        }
        Ok(())
    }
}

/// `secs.nanos`, exactly.
fn seconds(duration: Duration) -> String {
    format!("{}.{:09}", duration.as_secs(), duration.subsec_nanos())
}

/// A time written as [`seconds`] writes it (fewer decimals are fine).
fn parse_seconds(text: &str) -> Result<Duration, String> {
    let bad = || format!("`{text}` is not a time in seconds such as 1.250000000");
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 9 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let secs: u64 = whole.parse().map_err(|_| bad())?;
    let nanos: u32 = format!("{fraction:0<9}").parse().map_err(|_| bad())?;
    Ok(Duration::new(secs, nanos))
}

fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{what} `{text}` is not a number"))
}

/// `text`, one word (a violation's name, such as `mutual-exclusion`).
fn word(text: &str, what: &str) -> Result<String, String> {
    match text.split_whitespace().collect::<Vec<_>>()[..] {
        [word] => Ok(word.to_owned()),
        _ => Err(format!("{what} `{text}` is not one word")),
    }
}

/// `<kind> c<client>`, a step of a forced order.
fn step(text: &str) -> Result<ForcedStep, String> {
    let usage = || {
        let kinds: Vec<&str> = ForcedKind::ALL.iter().map(|kind| kind.name()).collect();
        format!(
            "`step {text}`: a step is `step <{}> c<client>`",
            kinds.join("|")
        )
    };
    let (kind, client) = text.split_once(' ').ok_or_else(usage)?;
    let kind = ForcedKind::ALL
        .into_iter()
        .find(|k| k.name() == kind.trim())
        .ok_or_else(usage)?;
    let client = client
        .trim()
        .strip_prefix('c')
        .and_then(|n| n.parse().ok())
        .ok_or_else(usage)?;
    Ok(ForcedStep { client, kind })
}

/// `<seconds> <kind> c<client> [<seconds>]`.
fn fault(text: &str) -> Result<ScriptedFault, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let usage = || {
        format!("`fault {text}`: a fault is `fault <seconds> <kind> c<client>`, and a partition, pause, stale-read or server-crash adds how long it lasts in seconds")
    };
    let (at, kind, client) = match words[..] {
        [at, kind, client] | [at, kind, client, _] => (at, kind, client),
        _ => return Err(usage()),
    };
    let kind: FaultKind = kind.parse()?;
    if lasts(kind) != (words.len() == 4) {
        return Err(usage());
    }
    let client = client
        .strip_prefix('c')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("`{client}` is not a client such as c0"))?;
    Ok(ScriptedFault {
        at: parse_seconds(at)?,
        kind,
        client,
        duration: match words.get(3) {
            Some(duration) => parse_seconds(duration)?,
            None => Duration::ZERO,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Schedule {
        Schedule {
            scenario: "lock-bug-blind-retry".into(),
            seed: 7,
            clients: 2,
            rounds: 1,
            servers: 3,
            faults: vec![
                ScriptedFault {
                    at: Duration::from_micros(12_027),
                    kind: FaultKind::LostCreateReply,
                    client: 1,
                    duration: Duration::ZERO,
                },
                ScriptedFault {
                    at: Duration::from_millis(1500),
                    kind: FaultKind::Partition,
                    client: 0,
                    duration: Duration::from_nanos(2_000_000_001),
                },
            ],
            violation: Some(DEADLOCK.violation.to_owned()),
            forced: Some(vec![
                ForcedStep {
                    client: 1,
                    kind: ForcedKind::Apply,
                },
                ForcedStep {
                    client: 0,
                    kind: ForcedKind::LostReply,
                },
            ]),
        }
    }

    #[test]
    fn a_schedule_reads_back_what_it_wrote() {
        let schedule = sample();
        assert_eq!(Schedule::parse(&schedule.to_text()), Ok(schedule));
    }

    #[test]
    fn a_schedule_runs_only_a_scenario_that_fits_and_is_judged_by_its_violation() {
        let catalogue = Catalogue::builtin();
        let found = |schedule: Schedule| schedule.find_scenario(&catalogue).map(|s| s.name);
        assert_eq!(found(sample()), Ok("lock-bug-blind-retry"));
        let item_lost = Schedule {
            violation: Some("item-lost".to_owned()),
            ..sample()
        };
        let error = found(item_lost).unwrap_err();
        assert!(
            error.starts_with("violation item-lost: lock-bug-blind-retry is judged by "),
            "{error}"
        );
        assert!(error.contains("mutual-exclusion"), "{error}");
        let harness_test = Schedule {
            rounds: 0,
            ..sample()
        };
        assert!(found(harness_test).unwrap_err().starts_with("rounds 0:"));
        let stranger = Schedule {
            scenario: "tests::readers_see_the_last_value".to_owned(),
            ..sample()
        };
        assert!(found(stranger).unwrap_err().starts_with("unknown scenario"));
    }

    #[test]
    fn a_bad_line_is_refused_with_its_number_and_what_is_wrong() {
        let text = sample().to_text();
        for (bad, expected) in [
            (
                "fault 1.5 partition c0",
                "line 13: `fault 1.5 partition c0`",
            ),
            (
                "fault 1.5 crash c9",
                "strikes c9, but the run has clients c0 to c1",
            ),
            ("fault x crash c0", "line 13: `x` is not a time"),
            (
                "fault 18446744073709551615.999999999 crash c0",
                "a crash fault at 18446744073709551615.999999999 s lasting 0.000000000 s: a run \
                 of this workload ends within 600 s",
            ),
            (
                "fault 1 partition c0 99999999",
                "a run of this workload ends within 600 s",
            ),
            ("fault 1.5 bogus c0", "line 13: unknown fault kind `bogus`"),
            ("colour blue", "line 13: `colour` is not an item"),
            (
                "violation two words",
                "line 13: violation `two words` is not one word",
            ),
        ] {
            let error = Schedule::parse(&format!("{text}{bad}\n")).expect_err(bad);
            assert!(error.contains(expected), "{bad}: {error}");
        }
        let error = Schedule::parse("seed 1\n").expect_err("no scenario");
        assert!(error.contains("no `scenario` line"), "{error}");
        let one_server = text.replace("servers 3", "servers 1");
        let stale = format!("{one_server}fault 1 stale-read c0 1\n");
        assert!(Schedule::parse(&stale)
            .expect_err("needs followers")
            .contains("needs followers"));
    }
}
