//! A machine's timer: set in a step, it comes back as an input, after sim time has passed in the
//! simulator, and as a step of its own in the model checker.

use std::time::Duration;

use madsim::runtime::Runtime;
use stateright::{Checker, Model};
use zklab::models::budget::Budget;
use zklab::models::model::RecipeModel;
use zklab::models::workload::Workload;
use zklab::recipes::client::{CreateMode, Op, OpResult, SessionId, ZkClient};
use zklab::recipes::machine::{Driver, Input, Recipe, Step, Timer};
use zklab::recipes::outcome::Outcome;
use zklab::recipes::session_renaming::RenameSessions;
use zklab::scenarios::monitor::failure::NoFailures;
use zklab::sim::fault::{FaultPlan, FaultRates};
use zklab::sim::service::{SimConfig, SimZk};
use zklab_recipes::acl::Acls;

const LEASE: Duration = Duration::from_secs(5);

/// Holds an ephemeral node for [`LEASE`], then deletes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
struct Lease {
    node: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum LeaseOutcome {
    Granted(i64),
    Released,
}

impl From<LeaseOutcome> for Outcome {
    fn from(outcome: LeaseOutcome) -> Outcome {
        match outcome {
            LeaseOutcome::Granted(token) => Outcome::Granted {
                role: "lease",
                token,
            },
            LeaseOutcome::Released => Outcome::Released { role: "lease" },
        }
    }
}

impl Recipe for Lease {
    type Request = ();
    type Outcome = LeaseOutcome;

    fn step(&mut self, input: Input<()>) -> Step<LeaseOutcome> {
        match input {
            Input::Start => Step::send(Op::Create {
                path: "/leases/l".to_owned(),
                data: Vec::new(),
                mode: CreateMode::Ephemeral,
                acl: Acls::OPEN,
            }),
            Input::Reply(Ok(OpResult::Created { path, stat })) => {
                self.node = Some(path);
                Step::wait()
                    .telling(LeaseOutcome::Granted(stat.czxid))
                    .timing(Timer::Set(LEASE))
            }
            Input::Timeout => {
                let path = self.node.clone().unwrap_or_default();
                Step::send(Op::Delete { path, version: -1 })
            }
            Input::Reply(Ok(OpResult::Deleted)) => Step::done(LeaseOutcome::Released),
            _ => Step::wait(),
        }
    }
}

#[test]
fn a_timer_goes_off_after_its_sim_time() {
    let runtime = Runtime::with_seed_and_config(1, madsim::Config::default());
    let (outcomes, waited) = runtime.block_on(async {
        let plan = FaultPlan {
            rates: FaultRates::none(),
            script: Vec::new(),
        };
        let zk = SimZk::start(SimConfig::default(), plan);
        let client = zk.connect(0);
        client
            .create("/leases", b"", CreateMode::Persistent)
            .await
            .expect("the lease directory");
        let started = madsim::time::Instant::now();
        let mut driver = Driver::new(&client, Lease::default());
        let mut outcomes = driver.feed(Input::Start).await;
        while !driver.is_done() {
            outcomes.extend(driver.feed_next_event().await);
        }
        (outcomes, started.elapsed())
    });
    assert!(matches!(
        outcomes.as_slice(),
        [LeaseOutcome::Granted(_), LeaseOutcome::Released]
    ));
    assert!(
        waited >= LEASE && waited < LEASE + Duration::from_secs(1),
        "{waited:?}"
    );
}

#[derive(Clone, Debug)]
struct LeaseWorkload;

impl Workload for LeaseWorkload {
    type Machine = Lease;
    type Monitors = (NoFailures,);

    fn monitors(&self) -> Self::Monitors {
        (NoFailures,)
    }

    fn machine(&self, _: u8, _: SessionId) -> Lease {
        Lease::default()
    }

    fn request_when_holding(&self) {}

    fn root(&self) -> &str {
        "/leases"
    }

    fn symmetric(&self) -> bool {
        true
    }
}

#[test]
fn the_model_lets_a_set_timer_go_off_and_the_lease_ends() {
    let model = RecipeModel::new(LeaseWorkload, 1, Budget::default());
    let checker = model.checker().spawn_bfs().join();
    checker.assert_properties();
    // Apply the create, take the reply (the lease is granted and its timer set), the timer goes
    // off (the delete is sent), apply it, take the reply: the lease ends in six states.
    assert_eq!(checker.unique_state_count(), 6);
}
