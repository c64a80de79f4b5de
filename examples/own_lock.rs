//! Bring your own recipe: a lock written outside zklab, on zklab's whole command line (`run`,
//! `replay`, `shrink`, `check`, `real`, `merge`, `list`), judged by zklab's monitors.
//!
//! The lock checks that its node is missing, then creates it. Its known bug is one real code
//! has: it believes it holds the lock even when its create fails with NodeExists (someone got
//! there in between). The correct lock looks again.
//!
//! ```sh
//! cargo run --example own_lock -- run my-lock                  # holds
//! cargo run --example own_lock -- run my-lock-bug-node-exists  # two holders; prints the replay
//! cargo run --example own_lock -- shrink my-lock-bug-node-exists --seed 0
//! cargo run --example own_lock -- check my-lock-bug-node-exists --faults none
//! ```

use zklab::models::workload::Workload;
use zklab::recipes::client::{
    CreateMode, EventType, Op, OpResult, SessionEvent, SessionId, ZkError, ZkEvent,
};
use zklab::recipes::machine::{Input, Recipe, Step};
use zklab::recipes::outcome::Outcome;
use zklab::recipes::session_renaming::RenameSessions;
use zklab::scenarios::kit::Kit;
use zklab::scenarios::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use zklab::scenarios::monitor::failure::NoFailures;
use zklab::scenarios::scenario::{KnownBug, Scenario};
use zklab_recipes::acl::Acls;

/// The lock's one ephemeral node.
const NODE: &str = "/my/lock";

/// The lock, as a pure machine: the one thing zklab asks of a recipe. The model checker renames
/// sessions in its states (for symmetry reduction); the derive does it for every field.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
#[rename(crate = zklab::recipes)]
struct CheckThenCreate {
    /// Its session: a node its create made before the reply was lost is its own.
    #[rename(session)]
    session: SessionId,
    /// The known bug: NodeExists on create taken for holding the lock.
    trusts_node_exists: bool,
    phase: Phase,
}

/// Where the machine is; the op in flight, if any, is the phase's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
#[rename(crate = zklab::recipes)]
enum Phase {
    Idle,
    /// `exists` with a watch, in flight; `again` once the node went meanwhile.
    Checking {
        again: bool,
    },
    /// Another holds the node; its watch will say when it goes.
    Waiting,
    /// `create`, in flight.
    Creating,
    /// The node may be its own (a create's reply was lost, or the node was there): `sync`, so
    /// that its server has the node if it was made, then `exists`, to learn whose it is.
    Finding {
        synced: bool,
    },
    Held,
    /// `delete`, in flight.
    Releasing,
    /// A delete's reply was lost: `sync`, then `exists`, to learn whether the node is its own.
    Confirming {
        synced: bool,
    },
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
    /// A machine for `session`; `trusts_node_exists` for the known bug.
    fn new(session: SessionId, trusts_node_exists: bool) -> Self {
        let phase = Phase::Idle;
        CheckThenCreate {
            session,
            trusts_node_exists,
            phase,
        }
    }

    fn sending(&mut self, phase: Phase, op: Op) -> Step<MyOutcome> {
        self.phase = phase;
        Step::send(op)
    }

    fn check(&mut self) -> Step<MyOutcome> {
        let (path, watch) = (NODE.to_owned(), true);
        self.sending(Phase::Checking { again: false }, Op::Exists { path, watch })
    }

    /// The next look at whose the node is: `sync` first, then `exists` without a watch (the
    /// node may be its own, which it does not wait for).
    fn whose(&mut self, phase: Phase) -> Step<MyOutcome> {
        let path = NODE.to_owned();
        match phase {
            Phase::Finding { synced: false } | Phase::Confirming { synced: false } => {
                self.sending(phase, Op::Sync { path })
            }
            _ => self.sending(phase, Op::Exists { path, watch: false }),
        }
    }

    fn delete(&mut self) -> Step<MyOutcome> {
        let (path, version) = (NODE.to_owned(), -1);
        self.sending(Phase::Releasing, Op::Delete { path, version })
    }

    fn hold(&mut self, token: i64) -> Step<MyOutcome> {
        self.phase = Phase::Held;
        Step::wait().telling(MyOutcome::Holds { token })
    }

    fn end(&mut self, outcome: MyOutcome) -> Step<MyOutcome> {
        self.phase = Phase::Done;
        Step::done(outcome)
    }
}

impl Recipe for CheckThenCreate {
    type Request = ();
    type Outcome = MyOutcome;

    fn step(&mut self, input: Input<()>) -> Step<MyOutcome> {
        use Phase::*;
        let session = self.session;
        let mine = move |owner: SessionId| owner == session;
        let deleted = |input: &Input<()>| match input {
            Input::Event(ZkEvent::Watch(event)) => event.event_type == EventType::NodeDeleted,
            _ => false,
        };
        match (self.phase, input) {
            (Done, _) => Step::stop(),
            (Idle, Input::Start) => self.check(),
            (_, Input::Event(ZkEvent::Session(SessionEvent::Expired | SessionEvent::Closed)))
            | (_, Input::Reply(Err(ZkError::SessionExpired))) => self.end(MyOutcome::Lost),
            (Checking { .. }, Input::Reply(Err(ZkError::ConnectionLoss))) => self.check(),
            (Checking { .. }, Input::Reply(Ok(OpResult::Exists(None)))) => {
                let (path, data, mode) = (NODE.to_owned(), Vec::new(), CreateMode::Ephemeral);
                self.sending(
                    Creating,
                    Op::Create {
                        path,
                        data,
                        mode,
                        acl: Acls::OPEN,
                    },
                )
            }
            (Checking { again: false }, Input::Reply(Ok(OpResult::Exists(Some(_))))) => {
                self.phase = Waiting;
                Step::wait()
            }
            (Checking { again: true }, Input::Reply(Ok(_))) => self.check(),
            (Checking { .. }, input) if deleted(&input) => {
                self.phase = Checking { again: true };
                Step::wait()
            }
            (Waiting, input) if deleted(&input) => self.check(),
            (Creating, Input::Reply(Ok(OpResult::Created { stat, .. }))) => self.hold(stat.czxid),
            // THE BUG: someone created the node between our check and our create, and we
            // believe we hold the lock anyway.
            (Creating, Input::Reply(Err(ZkError::NodeExists))) if self.trusts_node_exists => {
                self.hold(0)
            }
            // A create whose reply was lost may have made our node, and a NodeExists may be
            // about it.
            (Creating, Input::Reply(Err(ZkError::NodeExists)))
            | (Creating | Finding { .. }, Input::Reply(Err(ZkError::ConnectionLoss))) => {
                self.whose(Finding { synced: false })
            }
            (Finding { synced: false }, Input::Reply(Ok(_))) => {
                self.whose(Finding { synced: true })
            }
            (Finding { .. }, Input::Reply(Ok(OpResult::Exists(Some(stat)))))
                if mine(stat.ephemeral_owner) =>
            {
                self.hold(stat.czxid)
            }
            (Finding { .. }, Input::Reply(Ok(_))) => self.check(),
            (Held, Input::App(())) => self.delete().telling(MyOutcome::Released),
            (Releasing | Confirming { .. }, Input::Reply(Err(ZkError::ConnectionLoss))) => {
                self.whose(Confirming { synced: false })
            }
            (Confirming { synced: false }, Input::Reply(Ok(_))) => {
                self.whose(Confirming { synced: true })
            }
            (Confirming { .. }, Input::Reply(Ok(OpResult::Exists(Some(stat)))))
                if mine(stat.ephemeral_owner) =>
            {
                self.delete()
            }
            (Releasing, Input::Reply(Ok(_) | Err(ZkError::NoNode)))
            | (Confirming { .. }, Input::Reply(Ok(_))) => {
                self.phase = Done;
                Step::stop()
            }
            (_, Input::Reply(Err(error))) => self.end(MyOutcome::Failed(error)),
            _ => Step::wait(),
        }
    }
}

// The glue: the lock's model, which is all its runs need too, its scenarios, the command line.
/// Each client takes the lock, then lets it go (`buggy`: the known bug's lock).
#[derive(Clone, Debug)]
struct MyLock {
    buggy: bool,
}

impl Workload for MyLock {
    type Machine = CheckThenCreate;
    type Monitors = (MutualExclusion, NoFailures);

    fn machine(&self, _: u8, session: SessionId) -> CheckThenCreate {
        CheckThenCreate::new(session, self.buggy)
    }

    fn request_when_holding(&self) {}

    fn monitors(&self) -> Self::Monitors {
        (MutualExclusion::default(), NoFailures)
    }

    fn root(&self) -> &str {
        "/my"
    }

    fn symmetric(&self) -> bool {
        true
    }
}

impl Kit for MyLock {}

static MY_LOCK: Scenario = Scenario {
    name: "my-lock",
    about: "check, then create the lock node; look again on NodeExists",
    bug: None,
    kit: &MyLock { buggy: false },
    states: None,
};

static MY_LOCK_BUG: Scenario = Scenario {
    name: "my-lock-bug-node-exists",
    about: "check, then create; NodeExists taken for holding the lock",
    bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 2)),
    kit: &MyLock { buggy: true },
    states: None,
};

#[global_allocator]
static ALLOCATOR: zklab::cli::Allocator = zklab::cli::Allocator::NEW;

fn main() -> std::process::ExitCode {
    zklab::cli::main([&MY_LOCK, &MY_LOCK_BUG])
}
