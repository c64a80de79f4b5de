//! Bring your own recipe: a lock written outside zklab, run through zklab's seeded fault-injection
//! sweep and its model checker, judged by zklab's monitors.
//!
//! The lock is deliberately broken, in a way real code is: it checks that the lock node is
//! missing, then creates it, and believes it holds the lock even when its create fails with
//! NodeExists (someone else got there in between). Both the sweep and the checker catch it.
//!
//! ```sh
//! cargo run --release --example own_lock                 # sweep 1,000 seeds, then model-check
//! cargo run --release --example own_lock -- replay 12    # one seed's whole trace
//! ```

use std::process::ExitCode;

use zklab::models::check::CheckOptions;
use zklab::models::model::Budget;
use zklab::models::workload::Workload;
use zklab::recipes::client::{
    CreateMode, EventType, Op, OpResult, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent,
};
use zklab::recipes::machine::{Driver, Input, Recipe, Step};
use zklab::recipes::outcome::Outcome;
use zklab::recipes::session_renaming::RenameSessions;
use zklab::scenarios::host::Host;
use zklab::scenarios::kit::Kit;
use zklab::scenarios::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use zklab::scenarios::monitor::failure::NoFailures;
use zklab::scenarios::runner::{run_every_seed, run_seed, sweep, RunOptions};
use zklab::scenarios::scenario::{KnownBug, Scenario};

/// Where the lock lives: one ephemeral node.
const DIR: &str = "/my";
const NODE: &str = "/my/lock";

/// The lock, as a pure machine: the one thing zklab asks of a recipe. The model checker renames
/// sessions in its states (for symmetry reduction); the derive does it for every field.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
#[rename(crate = zklab::recipes)]
enum CheckThenCreate {
    Idle,
    Checking,
    Creating,
    Held,
    Releasing,
    Done,
}

/// What it tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum MyOutcome {
    Holds { token: i64 },
    Released,
    Lost,
    Failed(ZkError),
}

/// zklab's monitors read the umbrella outcome: holding is a granted role.
impl From<MyOutcome> for Outcome {
    fn from(outcome: MyOutcome) -> Outcome {
        match outcome {
            MyOutcome::Holds { token } => Outcome::Granted {
                role: "my lock",
                token,
            },
            MyOutcome::Released => Outcome::Released { role: "my lock" },
            MyOutcome::Lost => Outcome::Lost,
            MyOutcome::Failed(error) => Outcome::Failed(error),
        }
    }
}

impl CheckThenCreate {
    fn check(&mut self) -> Step<MyOutcome> {
        *self = CheckThenCreate::Checking;
        Step::send(Op::Exists {
            path: NODE.to_owned(),
            watch: true,
        })
    }
}

impl Recipe for CheckThenCreate {
    type Request = ();
    type Outcome = MyOutcome;

    fn step(&mut self, input: Input<()>) -> Step<MyOutcome> {
        use CheckThenCreate::*;
        match (self.clone(), input) {
            (Done, _) => Step::stop(),
            (Idle, Input::Start) => self.check(),
            (_, Input::Event(ZkEvent::Session(SessionEvent::Expired | SessionEvent::Closed))) => {
                *self = Done;
                Step::done(MyOutcome::Lost)
            }
            (_, Input::Reply(Err(ZkError::SessionExpired))) => {
                *self = Done;
                Step::done(MyOutcome::Lost)
            }
            // Retry anything idempotent after ConnectionLoss: look again.
            (Checking | Creating, Input::Reply(Err(ZkError::ConnectionLoss))) => self.check(),
            (Checking, Input::Reply(Ok(OpResult::Exists(None)))) => {
                *self = Creating;
                Step::send(Op::Create {
                    path: NODE.to_owned(),
                    data: Vec::new(),
                    mode: CreateMode::Ephemeral,
                })
            }
            (Checking, Input::Reply(Ok(OpResult::Exists(Some(_))))) => Step::wait(),
            (Checking, Input::Event(ZkEvent::Watch(event)))
                if event.event_type == EventType::NodeDeleted =>
            {
                self.check()
            }
            (Creating, Input::Reply(Ok(OpResult::Created { stat, .. }))) => {
                *self = Held;
                Step::wait().telling(MyOutcome::Holds { token: stat.czxid })
            }
            // THE BUG: someone created the node between our check and our create, and we
            // believe we hold the lock anyway.
            (Creating, Input::Reply(Err(ZkError::NodeExists))) => {
                *self = Held;
                Step::wait().telling(MyOutcome::Holds { token: 0 })
            }
            (Held, Input::App(())) => {
                *self = Releasing;
                Step::send(Op::Delete {
                    path: NODE.to_owned(),
                    version: -1,
                })
                .telling(MyOutcome::Released)
            }
            (Releasing, Input::Reply(Err(ZkError::ConnectionLoss))) => Step::send(Op::Delete {
                path: NODE.to_owned(),
                version: -1,
            }),
            (Releasing, Input::Reply(Ok(_) | Err(ZkError::NoNode))) => {
                *self = Done;
                Step::stop()
            }
            (_, Input::Reply(Err(error))) => {
                *self = Done;
                Step::done(MyOutcome::Failed(error))
            }
            _ => Step::wait(),
        }
    }
}

/// The kit: what the model checker runs, and what each simulated client does.
#[derive(Clone, Debug)]
struct MyKit;

impl Workload for MyKit {
    type Machine = CheckThenCreate;
    /// zklab's own monitors: at most one holder, no recipe giving up.
    type Monitors = (MutualExclusion, NoFailures);

    fn monitors(&self) -> Self::Monitors {
        (MutualExclusion::default(), NoFailures)
    }

    fn machine(&self, _: u8, _: SessionId) -> CheckThenCreate {
        CheckThenCreate::Idle
    }

    fn request_when_holding(&self) {}

    fn root(&self) -> &str {
        DIR
    }

    fn symmetric(&self) -> bool {
        true
    }
}

impl Kit for MyKit {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let mut session = host.connect().await;
        loop {
            match session.create(DIR, b"", CreateMode::Persistent).await {
                Ok(_) | Err(ZkError::NodeExists) => break,
                Err(ZkError::ConnectionLoss) => continue,
                Err(_) => return None,
            }
        }
        let mut done = 0;
        while done < rounds {
            let machine = MyKit.machine(0, session.session_id());
            let mut driver = Driver::new(&session, machine).recording(host.recorder());
            let mut outcomes = driver.feed(Input::Start).await;
            let mut lost = false;
            loop {
                let mut release = false;
                for outcome in outcomes {
                    match outcome {
                        MyOutcome::Holds { token } => {
                            host.write(token);
                            host.work().await;
                            (done, release) = (done + 1, true);
                        }
                        MyOutcome::Lost => lost = true,
                        MyOutcome::Failed(_) => return None,
                        MyOutcome::Released => {}
                    }
                }
                if driver.is_done() {
                    break;
                }
                outcomes = if release {
                    driver.feed(Input::App(())).await
                } else {
                    driver.feed_next_event().await
                };
            }
            drop(driver);
            if lost {
                session = host.connect().await;
            }
        }
        Some(session)
    }
}

/// One scenario of its own, beside zklab's catalogue.
static MY_LOCK: Scenario = Scenario {
    name: "my-lock",
    about: "check, then create; NodeExists taken as success",
    bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 2)),
    kit: &MyKit,
    states: None,
};

fn main() -> ExitCode {
    zklab::scenarios::runner::quiet_panics_inside_seeds();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = RunOptions::default();
    if let [command, seed] = args.as_slice() {
        let Ok(seed) = seed.parse() else {
            eprintln!("error: `{seed}` is not a seed");
            return ExitCode::from(2);
        };
        if command != "replay" {
            eprintln!("error: unknown command `{command}`; try `replay <seed>`");
            return ExitCode::from(2);
        }
        let report = run_seed(&MY_LOCK, seed, &options);
        print!("{}", report.trace.render());
        for violation in &report.violations {
            println!("-- VIOLATION {violation}");
        }
        return ExitCode::SUCCESS;
    }
    let report = sweep(&MY_LOCK, 0, 1000, &options, 2, &run_every_seed);
    println!(
        "sweep: {} seeds, {} failing",
        report.seeds,
        report.failures.len()
    );
    if let Some((seed, violation)) = report.failures.first() {
        println!("first failing seed {seed}: {violation}");
        println!("replay it with: cargo run --release --example own_lock -- replay {seed}");
    }
    let options = CheckOptions {
        clients: 2,
        budget: Budget::default(),
        threads: 2,
        symmetry: true,
        partial_order: true,
        forget_zxids: true,
        timeout: None,
    };
    let check = MY_LOCK.kit.check(&options, &|_, _| {});
    for property in check.properties.iter().filter(|p| !p.holds) {
        println!("model check: {} FAILS:", property.name);
        for line in &property.counterexample {
            println!("    {line}");
        }
    }
    if report.failures.is_empty() || check.all_hold() {
        println!("the bug escaped");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
