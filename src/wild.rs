//! `zklab wild`: recipe code nobody here wrote, run as its library's documentation says against
//! `zklab serve` under a fault profile, judged by what its clients claim. A [`Driver`] is a
//! small program in the library's own language (carried in this binary, written beside the
//! runs); a [`Profile`] is a set of faults and servers; [`judge_run`] is one seeded run of a
//! driver on a served ZooKeeper, ended when the driver ends.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use crate::serve::{serve, ServeOptions, ServeReport};
use crate::sim::fault::FaultRates;
use crate::sim::wire_service::{AnchoredFault, ServeFaults, Ticks};

/// kazoo's recipes and a lock of the recipes document on kazoo's plain calls, one program.
const KAZOO_CLIENTS: &str = include_str!("wild/kazoo_clients.py");

/// How many clients a run starts, and how many rounds each takes.
pub const CLIENTS: usize = 3;

/// How many rounds each client takes.
pub const ROUNDS: usize = 6;

/// The session timeout the clients ask for, in seconds: short, so that a story of expiry takes
/// seconds. The served tick lets a server agree to it (at least two ticks).
const SESSION_TIMEOUT: &str = "2";

/// A driver: a library's recipe, run by a program in its language.
#[derive(Clone, Copy, Debug)]
pub struct Driver {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it runs, in a line.
    pub about: &'static str,
    /// A planted mistake of the kind users make: a run must catch it.
    pub planted: bool,
    /// How many may hold a role claimed shared at once (a semaphore's leases).
    shared_by: Option<usize>,
    /// The program's arguments after the connect string and the claims port.
    args: &'static [&'static str],
}

/// Every driver `zklab wild` runs.
pub const DRIVERS: &[Driver] = &[
    Driver {
        name: "kazoo-lock",
        about: "kazoo's Lock",
        planted: false,
        shared_by: None,
        args: &["--recipe", "kazoo"],
    },
    Driver {
        name: "kazoo-semaphore",
        about: "kazoo's Semaphore of 2 leases",
        planted: false,
        shared_by: Some(2),
        args: &["--recipe", "semaphore"],
    },
    Driver {
        name: "kazoo-election",
        about: "kazoo's Election",
        planted: false,
        shared_by: None,
        args: &["--recipe", "election"],
    },
    Driver {
        name: "kazoo-own-lock",
        about: "the recipes document's lock on kazoo's plain calls",
        planted: false,
        shared_by: None,
        args: &["--recipe", "own"],
    },
    Driver {
        name: "kazoo-planted-lock",
        about: "that lock taking a create whose reply was lost as the lock (planted)",
        planted: true,
        shared_by: None,
        args: &["--recipe", "own", "--planted"],
    },
];

/// A fault profile: what the served ZooKeeper strikes, on how many servers.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// Its name on the command line.
    pub name: &'static str,
    /// How many servers.
    pub servers: usize,
    /// The faults, as `zklab serve --faults` takes them.
    pub faults: &'static str,
}

/// Every profile `zklab wild` knows.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "none",
        servers: 1,
        faults: "none",
    },
    Profile {
        name: "loss",
        servers: 1,
        faults: "connection-loss=0.05,lost-reply=0.05,lost-create-reply=0.15,reorder=0.1",
    },
    Profile {
        name: "expiry",
        servers: 1,
        faults: "session-expiry=1,partition=0.5",
    },
    Profile {
        name: "ensemble",
        servers: 3,
        faults: "stale-read=0.3,server-crash=0.2,leader-change=0.1",
    },
    Profile {
        name: "all",
        servers: 3,
        faults: "connection-loss=0.05,lost-reply=0.05,lost-create-reply=0.15,reorder=0.1,\
                 session-expiry=0.5,partition=0.2,stale-read=0.3,server-crash=0.2,\
                 leader-change=0.1",
    },
];

/// The driver named `name`.
pub fn driver_named(name: &str) -> Result<Driver, String> {
    let known = || DRIVERS.iter().map(|driver| driver.name).collect::<Vec<_>>();
    (DRIVERS.iter().find(|driver| driver.name == name).copied())
        .ok_or_else(|| format!("no driver `{name}`; drivers: {}", known().join(", ")))
}

/// The profile named `name`.
pub fn profile_named(name: &str) -> Result<Profile, String> {
    let known = || {
        PROFILES
            .iter()
            .map(|profile| profile.name)
            .collect::<Vec<_>>()
    };
    (PROFILES
        .iter()
        .find(|profile| profile.name == name)
        .copied())
    .ok_or_else(|| {
        format!(
            "no fault profile `{name}`; profiles: {}",
            known().join(", ")
        )
    })
}

/// What one run found.
pub struct WildRun {
    /// The served ZooKeeper's verdict.
    pub report: ServeReport,
    /// Rounds the clients finished, of [`CLIENTS`] x [`ROUNDS`].
    pub rounds: usize,
    /// Where the run's files are: the trace, the picture, the schedule, the driver's output.
    pub dir: PathBuf,
}

/// Writes the drivers' programs to `dir`; the path of the one `driver` runs.
pub fn write_programs(dir: &Path) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let program = dir.join("kazoo_clients.py");
    fs::write(&program, KAZOO_CLIENTS)?;
    Ok(program)
}

/// One run of `driver`'s `program` on a ZooKeeper served with `profile`'s servers and either
/// its faults drawn from `seed` or, given a `schedule`, those faults only; its files go to `dir`.
pub fn judge_run(
    driver: Driver,
    program: &Path,
    profile: Profile,
    seed: u64,
    schedule: Option<Vec<AnchoredFault>>,
    dir: &Path,
) -> io::Result<WildRun> {
    let (rates, schedule) = match schedule {
        Some(schedule) => (FaultRates::none(), schedule),
        None => (
            FaultRates::parse(profile.faults).map_err(invalid)?,
            Vec::new(),
        ),
    };
    let options = ServeOptions {
        port: 0,
        servers: profile.servers,
        seed,
        ticks: Ticks {
            tick: Duration::from_secs(1),
            ..Ticks::default()
        },
        run_for: None,
        idle: None,
        command_port: None,
        claims_port: Some(0),
        faults: ServeFaults::new(rates, schedule, seed, profile.servers),
        max_connections: 1024,
        shared_by: driver.shared_by,
        out: dir.to_owned(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (told, listening) = mpsc::channel();
    let served = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let ready = |listening| {
                let _ = told.send(listening);
            };
            serve(options, ready, || stop.load(Ordering::Relaxed))
        })
    };
    let Ok(listening) = listening.recv() else {
        let failed = served.join().expect("serve does not panic").err();
        return Err(failed.unwrap_or_else(|| io::Error::other("serve ended before it listened")));
    };
    let claims = listening.claims.expect("a claims port was asked for");
    // On an ensemble a follower may stand still for twice the session timeout: the clients
    // wait longer for a round there.
    let idle = if profile.servers > 1 { "12" } else { "5" };
    let ran = Command::new("python3")
        .arg(program)
        .arg(listening.connect_string())
        .arg(claims.to_string())
        .args(driver.args)
        .args([
            "--clients",
            &CLIENTS.to_string(),
            "--rounds",
            &ROUNDS.to_string(),
        ])
        .args(["--idle", idle, "--timeout", SESSION_TIMEOUT])
        .stdin(Stdio::null())
        .output();
    stop.store(true, Ordering::Relaxed);
    let report = served.join().expect("serve does not panic")?;
    let ran = ran.map_err(|error| io::Error::new(error.kind(), format!("python3: {error}")))?;
    fs::write(dir.join("driver.out"), &ran.stdout)?;
    fs::write(dir.join("driver.err"), &ran.stderr)?;
    if !ran.status.success() {
        let said = String::from_utf8_lossy(&ran.stderr);
        let last = said.lines().last().unwrap_or("");
        return Err(io::Error::other(format!(
            "the driver failed ({}): {last}; all it said is in {}",
            ran.status,
            dir.join("driver.err").display()
        )));
    }
    let rounds = rounds_told(&String::from_utf8_lossy(&ran.stdout));
    Ok(WildRun {
        report,
        rounds,
        dir: dir.to_owned(),
    })
}

/// The rounds a driver's lines `client N: R rounds` add up to.
fn rounds_told(printed: &str) -> usize {
    let told = printed.lines().filter_map(|line| {
        let (_, rounds) = line.strip_prefix("client ")?.split_once(": ")?;
        rounds.strip_suffix(" rounds")?.parse::<usize>().ok()
    });
    told.sum()
}

fn invalid(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_parses_and_strikes_only_what_its_servers_can() {
        for profile in PROFILES {
            let rates = FaultRates::parse(profile.faults).expect(profile.name);
            for kind in crate::sim::fault::FaultKind::ALL {
                if rates.rate(kind) > 0.0 {
                    AnchoredFault::strikes_on(kind, profile.servers).expect(profile.name);
                }
            }
        }
        assert!(driver_named("kazoo-lock").is_ok());
        assert!(driver_named("nope").unwrap_err().contains("kazoo-lock"));
        assert!(profile_named("nope").unwrap_err().contains("ensemble"));
    }

    #[test]
    fn the_rounds_are_the_sum_of_the_clients_lines() {
        let printed = "client 0: 6 rounds\nclient 2: 4 rounds\nConnectionLoss\n";
        assert_eq!(rounds_told(printed), 10);
    }
}
