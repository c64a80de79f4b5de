//! Differential conformance: the same generated cases on the pure server and on a real
//! ZooKeeper, whose results, watch events and final trees must be equal.
//!
//! Every case runs under a fresh node of its own on both servers, so cases never see one
//! another and a long-lived real server can serve any number of them. A mismatching case is
//! shrunk (by proptest) to a small case that still mismatches.
//!
//! With faults, cases also expire sessions, drop connections and lose replies: on the
//! simulated service (`SimZk`, whose faults are the simulator's own) and on a real server with a
//! command port ([`Controller`]), which carries out the same faults.

pub mod case;
pub mod case_faults;
pub mod observe;
pub mod through_drop_in;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use crate::recipes::client::{ZkClient, ZkError};
use crate::recipes::real_zk::RealZk;
use crate::sim::local::LocalZk;
use crate::sim::service::SimConfig;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use self::case::{cases, ensemble_cases, orderings, Case, RealClient, Step, CONFIG};
use self::case_faults::{simulate, ControllerFaults, EnsembleFaults, Simulated};
use self::through_drop_in::simulate_through_drop_in;
use crate::launcher::{Controller, Ensemble};
use crate::recipes::subtree::delete_tree;
use crate::wire_zk::WireZk;

use self::observe::{observe, prepare_root, NoFaults, Observation};

/// Longest case the generator makes.
const MAX_STEPS: usize = 24;

/// Runs of a case on the real server before a lost reply that missed, or a connection the
/// observation itself lost, stands.
const REAL_ATTEMPTS: u32 = 3;

/// Most case runs spent shrinking one mismatch.
const SHRINK_RUNS: u32 = 400;

/// The session timeout asked of the real server: long enough that nothing expires mid-case.
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the simulated reaper looks for containers and TTL nodes to delete: once an hour,
/// as on the servers zklab launches, so that no case meets it on one side alone.
const REAPER_INTERVAL: Duration = Duration::from_secs(3600);

/// The simulated service a case runs on: `servers` of them, the reaper as on a launched server.
fn case_config(servers: usize) -> SimConfig {
    SimConfig {
        servers,
        container_check_interval: REAPER_INTERVAL,
        ..SimConfig::default()
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ConformOptions {
    /// How many generated cases.
    pub cases: u64,
    /// The generator's seed: the same seed makes the same cases.
    pub seed: u64,
}

/// The real server cases run on.
#[derive(Clone, Copy, Debug)]
pub enum RealServer<'a> {
    /// Any server, at these hosts: cases without faults.
    Hosts(&'a str),
    /// A server with a command port: cases with faults, against the simulated service.
    Controller(&'a Controller),
    /// An ensemble of three: cases in which the follower a session is attached to dies and
    /// restarts, against a simulated ensemble. The cases kill and restart its members.
    Ensemble(&'a Mutex<Ensemble>),
    /// Any server, at these hosts: cases without faults, against the simulated service reached
    /// through the drop-in `zookeeper-client` ([`through_drop_in`]) rather than the pure server.
    ThroughDropIn(&'a str),
}

/// A case whose two observations differ.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The case, shrunk.
    pub case: Case,
    /// The first difference, in words, with case-relative paths.
    pub difference: String,
}

/// The outcome of a conformance run.
#[derive(Clone, Debug)]
pub struct ConformReport {
    /// Cases run (not counting shrinking).
    pub cases: u64,
    /// Cases whose observations differ.
    pub mismatches: u64,
    /// The first mismatching case, shrunk.
    pub first_mismatch: Option<Mismatch>,
    /// How often each kind of answer and event came up (on the simulated side), to show what
    /// the cases exercised.
    pub outcomes: BTreeMap<String, u64>,
    /// How often the cases sent each kind of request (see [`Case::tally_requests`]).
    pub requests: BTreeMap<String, u64>,
}

/// Runs the cases against `real`; `progress(done, mismatches)` after each.
///
/// An error means the real server could not be used (refused the connection, or a case's root
/// could not be made or removed), not that it disagreed.
pub fn conform(
    real: RealServer<'_>,
    options: &ConformOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<ConformReport, ZkError> {
    let runtime = runtime()?;
    let mut differ = Differ {
        side: Side::of(real)?,
        runtime: &runtime,
        next_root: 0,
        seed: options.seed,
    };
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&options.seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = match real {
        RealServer::Hosts(_) => cases(MAX_STEPS, false, RealClient::Wire).boxed(),
        RealServer::ThroughDropIn(_) => cases(MAX_STEPS, false, RealClient::Crate).boxed(),
        RealServer::Controller(_) => cases(MAX_STEPS, true, RealClient::Wire).boxed(),
        RealServer::Ensemble(_) => ensemble_cases(MAX_STEPS).boxed(),
    };
    let mut report = ConformReport {
        cases: 0,
        mismatches: 0,
        first_mismatch: None,
        outcomes: BTreeMap::new(),
        requests: BTreeMap::new(),
    };
    for _ in 0..options.cases {
        let mut tree = strategy
            .new_tree(&mut runner)
            .map_err(|_| ZkError::SystemError)?;
        let case = tree.current();
        case.tally_requests(&mut report.requests);
        let (simulated, difference) = differ.run(&case)?;
        simulated.tally(&mut report.outcomes);
        if let Some(difference) = difference {
            report.mismatches += 1;
            if report.first_mismatch.is_none() {
                report.first_mismatch = Some(differ.shrink(&mut tree, difference)?);
            }
        }
        report.cases += 1;
        progress(report.cases, report.mismatches);
    }
    Ok(report)
}

/// Runs one given case on both sides, under `/zklab-conform-SEED-0`: what the simulated side
/// showed (paths under that root), and the first difference from the real side, or `None`.
pub fn compare(
    real: RealServer<'_>,
    case: &Case,
    seed: u64,
) -> Result<(Observation, Option<String>), ZkError> {
    let runtime = runtime()?;
    let mut differ = Differ {
        side: Side::of(real)?,
        runtime: &runtime,
        next_root: 0,
        seed,
    };
    differ.run(case)
}

fn runtime() -> Result<tokio::runtime::Runtime, ZkError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|_| ZkError::SystemError)
}

/// The real side of a run, with the hosts its sessions connect to.
enum Side<'a> {
    /// Any server: cases without faults, against the pure server.
    Plain { hosts: String },
    /// Any server: cases without faults, against the simulated service through the drop-in.
    DropIn { hosts: String },
    /// A server with a command port.
    Controller(&'a Controller),
    /// An ensemble: session 0 knows only `follower`, the others and the observer only the
    /// leader, as in the simulated ensemble.
    Ensemble {
        ensemble: &'a Mutex<Ensemble>,
        leader: usize,
        follower: usize,
        follower_hosts: String,
        leader_hosts: String,
    },
}

impl<'a> Side<'a> {
    fn of(real: RealServer<'a>) -> Result<Self, ZkError> {
        Ok(match real {
            RealServer::Hosts(hosts) => Side::Plain {
                hosts: hosts.to_owned(),
            },
            RealServer::ThroughDropIn(hosts) => Side::DropIn {
                hosts: hosts.to_owned(),
            },
            RealServer::Controller(controller) => Side::Controller(controller),
            RealServer::Ensemble(ensemble) => {
                let mut members = ensemble.lock().unwrap_or_else(|e| e.into_inner());
                // A quorum must survive the follower's death.
                if members.size() < 3 {
                    return Err(ZkError::BadArguments);
                }
                let leader = members
                    .wait_for_leader()
                    .map_err(|_| ZkError::ConnectionLoss)?;
                let follower = (leader + 1) % members.size();
                let address = |member| {
                    let port = members
                        .client_port(member)
                        .map_err(|_| ZkError::BadArguments)?;
                    Ok::<_, ZkError>(format!("127.0.0.1:{port}"))
                };
                let (leader_hosts, follower_hosts) = (address(leader)?, address(follower)?);
                drop(members);
                Side::Ensemble {
                    ensemble,
                    leader,
                    follower,
                    follower_hosts,
                    leader_hosts,
                }
            }
        })
    }

    /// The hosts the observer and session `index` connect to.
    fn hosts(&self, index: Option<usize>) -> String {
        match self {
            Side::Plain { hosts } | Side::DropIn { hosts } => hosts.clone(),
            Side::Controller(controller) => controller.connect_string(),
            Side::Ensemble {
                follower_hosts,
                leader_hosts,
                ..
            } => match index {
                Some(0) => follower_hosts.clone(),
                _ => leader_hosts.clone(),
            },
        }
    }
}

/// Runs cases on both servers and compares.
struct Differ<'a> {
    side: Side<'a>,
    runtime: &'a tokio::runtime::Runtime,
    next_root: u64,
    /// The generator's seed, which names the case roots: a run is the same, paths and all
    /// (a real server's order of ephemeral deletions hangs on them), every time.
    seed: u64,
}

impl Differ<'_> {
    /// What the simulated server showed for `case`, and the first difference from the real
    /// server's, or `None` when they agree.
    fn run(&mut self, case: &Case) -> Result<(Observation, Option<String>), ZkError> {
        let root = format!("/zklab-conform-{}-{}", self.seed, self.next_root);
        self.next_root += 1;
        let steps = case.rooted(&root);
        let mut attempts = 0;
        let mut real = loop {
            attempts += 1;
            match self.observe_real(case.sessions, &steps, &root) {
                Ok((observation, missed)) if !missed || attempts == REAL_ATTEMPTS => {
                    break observation
                }
                // The real server swallowed another reply than the lost one's (a ping's): again.
                Ok(_) => {}
                // The observer, or a session before the steps, lost its connection to a server
                // slowed by the machine's other work: the case was not observed, so again.
                Err(ZkError::ConnectionLoss) if attempts < REAL_ATTEMPTS => {}
                Err(error) => return Err(error),
            }
        };
        self.leave_out_config(&mut real);
        // The real server applied calls sent together in an order of its own: the simulated
        // one is given each order in turn until one agrees.
        let mut first = None;
        for steps in orderings(&steps) {
            let mut simulated = self.simulate(case.sessions, &steps, &root)?;
            self.leave_out_config(&mut simulated);
            let difference =
                first_difference(&simulated, &real).map(|text| text.replace(&root, ""));
            let agreed = difference.is_none();
            if agreed || first.is_none() {
                first = Some((simulated, difference));
            }
            if agreed {
                break;
            }
        }
        Ok(first.expect("every case has an ordering"))
    }

    /// Runs the steps on the side's simulated counterpart, under `root`.
    fn simulate(
        &self,
        sessions: usize,
        steps: &[Step],
        root: &str,
    ) -> Result<Observation, ZkError> {
        match self.side {
            Side::Controller(_) => simulate(Simulated::Standalone, sessions, steps, root),
            Side::Ensemble { .. } => simulate(Simulated::Ensemble, sessions, steps, root),
            Side::DropIn { .. } => simulate_through_drop_in(sessions, steps, root),
            Side::Plain { .. } => self.runtime.block_on(async {
                let local = LocalZk::new();
                let observer = local.connect();
                prepare_root(&observer, root).await?;
                let sessions: Vec<_> = (0..sessions).map(|_| local.connect()).collect();
                observe(&sessions, &observer, steps, root, &NoFaults).await
            }),
        }
    }

    /// Leaves the configuration node out of an observation on a side whose real server is a
    /// quorum peer (which lists the quorum there, as no simulated server does).
    fn leave_out_config(&self, observation: &mut Observation) {
        if !matches!(self.side, Side::Plain { .. } | Side::DropIn { .. }) {
            observation.tree.retain(|node| node.path != CONFIG);
            observation.acls.retain(|(path, _)| path != CONFIG);
        }
    }

    /// Runs the steps on the real server, under `root`; says too whether a lost reply missed.
    /// zklab's own wire client speaks to a plain server and to one with a command port; the
    /// `zookeeper-client` crate to an ensemble and where the simulated side is its drop-in.
    fn observe_real(
        &self,
        sessions: usize,
        steps: &[Step],
        root: &str,
    ) -> Result<(Observation, bool), ZkError> {
        self.runtime.block_on(async {
            match self.side {
                Side::Plain { .. } | Side::Controller(_) => {
                    let connect = |hosts: String| async move {
                        WireZk::connect(&hosts, SESSION_TIMEOUT).await
                    };
                    self.observe_on(connect, sessions, steps, root).await
                }
                Side::DropIn { .. } | Side::Ensemble { .. } => {
                    let connect = |hosts: String| async move {
                        RealZk::connect(&hosts, SESSION_TIMEOUT).await
                    };
                    self.observe_on(connect, sessions, steps, root).await
                }
            }
        })
    }

    /// Runs the steps on sessions that `connect` opens.
    async fn observe_on<C: ZkClient + Sync, F: Future<Output = Result<C, ZkError>>>(
        &self,
        connect: impl Fn(String) -> F,
        count: usize,
        steps: &[Step],
        root: &str,
    ) -> Result<(Observation, bool), ZkError> {
        let observer = connect(self.side.hosts(None)).await?;
        prepare_root(&observer, root).await?;
        let mut sessions = Vec::with_capacity(count);
        for index in 0..count {
            sessions.push(connect(self.side.hosts(Some(index))).await?);
        }
        let (observation, missed) = match &self.side {
            Side::Controller(controller) => {
                let faults = ControllerFaults::new(controller);
                let observation = observe(&sessions, &observer, steps, root, &faults).await?;
                (observation, faults.missed())
            }
            Side::Ensemble {
                ensemble,
                leader,
                follower,
                ..
            } => {
                let faults = EnsembleFaults::new(ensemble, *follower, *leader);
                let observation = observe(&sessions, &observer, steps, root, &faults).await?;
                if faults.broken() {
                    return Err(ZkError::SystemError);
                }
                (observation, false)
            }
            Side::Plain { .. } | Side::DropIn { .. } => {
                let observation = observe(&sessions, &observer, steps, root, &NoFaults).await?;
                (observation, false)
            }
        };
        for session in &sessions {
            let _ = session.close().await;
        }
        // Leave the server as the case found it.
        delete_tree(&observer, root).await?;
        let _ = observer.close().await;
        Ok((observation, missed))
    }

    /// Shrinks a mismatching case to a small one that still mismatches.
    fn shrink(
        &mut self,
        tree: &mut impl ValueTree<Value = Case>,
        difference: String,
    ) -> Result<Mismatch, ZkError> {
        let mut smallest = Mismatch {
            case: tree.current(),
            difference,
        };
        let mut runs = 0;
        while runs < SHRINK_RUNS && tree.simplify() {
            loop {
                runs += 1;
                let candidate = tree.current();
                if let (_, Some(difference)) = self.run(&candidate)? {
                    smallest = Mismatch {
                        case: candidate,
                        difference,
                    };
                    break;
                }
                if runs >= SHRINK_RUNS || !tree.complicate() {
                    break;
                }
            }
        }
        Ok(smallest)
    }
}

/// The first place two observations differ, in words; `None` when they are equal.
fn first_difference(simulated: &Observation, real: &Observation) -> Option<String> {
    for (i, (sim, real)) in simulated.steps.iter().zip(&real.steps).enumerate() {
        if sim != real {
            return Some(format!(
                "step {i}:\n  simulated: {sim:?}\n  real:      {real:?}"
            ));
        }
    }
    for (session, (sim, real)) in simulated
        .last_events
        .iter()
        .zip(&real.last_events)
        .enumerate()
    {
        if sim != real {
            return Some(format!(
                "events of s{session} at the end:\n  simulated: {sim:?}\n  real:      {real:?}"
            ));
        }
    }
    if simulated.tree != real.tree {
        let sim = simulated.tree.iter();
        let differing = sim
            .zip(&real.tree)
            .find(|(sim, real)| sim != real)
            .map(|(sim, real)| format!("\n  simulated: {sim:?}\n  real:      {real:?}"))
            .unwrap_or_else(|| {
                format!(
                    "\n  simulated has {} nodes, real has {}",
                    simulated.tree.len(),
                    real.tree.len()
                )
            });
        return Some(format!("final tree:{differing}"));
    }
    let differing = (simulated.acls.iter().zip(&real.acls)).find(|(sim, real)| sim != real);
    if let Some((sim, real)) = differing {
        return Some(format!(
            "final ACLs:\n  simulated: {sim:?}\n  real:      {real:?}"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::case::Step;
    use super::observe::observe;
    use super::*;
    use crate::recipes::acl::Acls;
    use crate::recipes::client::{CreateMode, EventType, Op, WatchedEvent, ZkEvent};

    /// Session 0 creates the ephemeral `/r/a` holding `data`.
    fn create_a(data: &[u8]) -> Op {
        Op::Create {
            path: "/r/a".into(),
            data: data.to_vec(),
            mode: CreateMode::Ephemeral,
            acl: Acls::OPEN,
        }
    }

    /// Two runs of a case on fresh pure servers, the second with one step changed.
    fn observations(changed: Op) -> (Observation, Observation) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let run = |steps: Vec<Step>| {
            runtime.block_on(async {
                let local = LocalZk::new();
                let observer = local.connect();
                prepare_root(&observer, "/r").await.expect("a fresh root");
                let sessions = vec![local.connect(), local.connect()];
                observe(&sessions, &observer, &steps, "/r", &NoFaults)
                    .await
                    .expect("a local server answers every read")
            })
        };
        let watch = Step::Call {
            session: 1,
            op: Op::Exists {
                path: "/r/a".into(),
                watch: true,
            },
        };
        let create = |op| Step::Call { session: 0, op };
        (
            run(vec![watch.clone(), create(create_a(b"x"))]),
            run(vec![watch, create(changed)]),
        )
    }

    #[test]
    fn equal_runs_agree_and_a_different_reply_or_event_is_found() {
        let (first, second) = observations(create_a(b"x"));
        assert_eq!(first_difference(&first, &second), None);
        // Different data: the replies agree, the final trees do not.
        let (first, second) = observations(create_a(b"y"));
        let difference = first_difference(&first, &second).expect("a difference");
        assert!(difference.starts_with("final tree"), "{difference}");
        // No create: no NodeCreated for the watching session.
        let (first, second) = observations(Op::Exists {
            path: "/r/a".into(),
            watch: false,
        });
        let difference = first_difference(&first, &second).expect("a difference");
        assert!(difference.starts_with("step 1"), "{difference}");
    }

    #[test]
    fn observations_compare_zxids_by_order_and_owners_by_session_index() {
        let (observation, _) = observations(create_a(b"x"));
        let node = &observation.tree[1];
        assert_eq!(node.path, "/r/a");
        // Ranks: the config node's zxid 0, the root's creation, then /r/a's.
        assert_eq!((node.stat.czxid, node.stat.ephemeral_owner), (3, 1));
        assert_eq!(observation.tree[0].stat.czxid, 2);
        assert_eq!(node.stat.ctime, 0);
        assert_eq!(
            observation.last_events[1],
            vec![ZkEvent::Watch(WatchedEvent {
                event_type: EventType::NodeCreated,
                path: "/r/a".into(),
            })]
        );
    }
}
