//! Running the checker: an exhaustive search (depth-first, with symmetry reduction unless asked
//! not to), then, for each property that fails, a short counterexample by iterative
//! deepening (or, when that would cost more than a bound, the exhaustive search's own path),
//! replayed from the initial state to prove it is a real path.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stateright::{Checker, HasDiscoveries, Model};
use zklab_sim::forced::{ForcedKind, ForcedStep};
use zklab_sim::picture::Timeline;
use zklab_sim::property::Property;

use crate::budget::Budget;
use crate::model::{Action, ActionOf, RecipeModel, StateOf};
use crate::symmetry_claim::{test_claim, SymmetryRefused};
use crate::workload::Workload;
use crate::{pictured, render};

/// How to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// Number of clients.
    pub clients: usize,
    /// Fault budgets.
    pub budget: Budget,
    /// Checker threads.
    pub threads: usize,
    /// Explore states up to a permutation of clients only once.
    pub symmetry: bool,
    /// Explore one interleaving of a client's quiet deliveries with everything else (sound:
    /// see [`RecipeModel::quiet_delivery`]).
    pub partial_order: bool,
    /// Forget every zxid when the workload reads none (sound: see
    /// [`RecipeModel::with_zxids_forgotten`]).
    pub forget_zxids: bool,
    /// Stop the exhaustive search after this long (the report then says it is incomplete).
    pub timeout: Option<Duration>,
}

/// One property's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyReport {
    /// The property's name.
    pub name: &'static str,
    /// The declared property it is, which names its violation in the simulator (see
    /// [`RecipeModel::declared`]); none for the model's own "no stuck state".
    pub declared: Option<&'static Property>,
    /// Whether no reachable state breaks it (of those explored, when the search is incomplete).
    pub holds: bool,
    /// When it fails: a short path to a failing state, one trace line per step.
    pub counterexample: Vec<String>,
    /// Whether the path was found by iterative deepening (short); if not, it is the path the
    /// exhaustive search found.
    pub deepened: bool,
    /// The same path as a Mermaid sequence diagram.
    pub mermaid: String,
    /// The same path laid out for a picture (no rows when the property holds).
    pub timeline: Timeline,
    /// The same path as an order to force on the simulator (`SimZk::force_order`): which
    /// client's op the server applies, drops or loses the reply of, whose session it expires,
    /// which client receives its next message, asks its machine something, or has its timer go
    /// off, in the path's order.
    pub forced_order: Vec<ForcedStep>,
}

/// The result of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// States generated (with repeats).
    pub states: usize,
    /// Distinct states (up to symmetry, when on).
    pub unique_states: usize,
    /// The longest path explored.
    pub max_depth: usize,
    /// Wall time of the exhaustive search.
    pub elapsed: Duration,
    /// Whether the search covered every reachable state; if not, a property with no
    /// counterexample is unrefuted, not proven.
    pub complete: bool,
    /// Whether symmetry reduction was used: asked for, and the workload's machine is symmetric
    /// (reducing a machine that is not would be unsound).
    pub symmetry: bool,
    /// Whether every zxid was forgotten: asked for, and the workload reads none.
    pub zxids_forgotten: bool,
    /// Every property, in the model's order.
    pub properties: Vec<PropertyReport>,
}

impl CheckReport {
    /// Whether the search was complete and every property holds.
    pub fn all_hold(&self) -> bool {
        self.complete && self.properties.iter().all(|property| property.holds)
    }
}

/// Checks a workload's model exhaustively; `progress` hears the states generated and the unique
/// states so far, a few times a second. With symmetry reduction asked for, a workload that
/// claims to be symmetric has the claim tested first ([`test_claim`]), and a false claim is
/// refused rather than trusted.
pub fn check<W: Workload>(
    workload: W,
    options: &CheckOptions,
    progress: &dyn Fn(usize, usize),
) -> Result<CheckReport, Box<SymmetryRefused>> {
    let options = &CheckOptions {
        symmetry: options.symmetry && workload.symmetric(),
        forget_zxids: options.forget_zxids && !workload.reads_zxids(),
        ..options.clone()
    };
    if options.symmetry {
        test_claim(&workload, options.clients, options.budget)?;
    }
    let with_budget = |budget| {
        RecipeModel::new(workload.clone(), options.clients, budget)
            .with_partial_order(options.partial_order)
            .with_zxids_forgotten(options.forget_zxids)
    };
    let model = with_budget(options.budget);
    // A story without faults is the easier one to follow: look for it first.
    let fault_free = (options.budget != Budget::default()).then(|| with_budget(Budget::default()));
    let started = Instant::now();
    let halt = Arc::new(AtomicBool::new(false));
    let checker = builder(model.clone().with_halt(Arc::clone(&halt)), options).spawn_dfs();
    // Looked at often, so that a small check ends as soon as it is done; progress is told a few
    // times a second.
    let mut told = 0;
    while !checker.is_done() {
        if options
            .timeout
            .is_some_and(|timeout| started.elapsed() >= timeout)
        {
            halt.store(true, Ordering::Relaxed);
        }
        if told % 40 == 0 {
            progress(checker.state_count(), checker.unique_state_count());
        }
        told += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let checker = checker.join();
    let elapsed = started.elapsed();
    let complete = !halt.load(Ordering::Relaxed);
    let failing: BTreeSet<&'static str> = checker.discoveries().into_keys().collect();
    let properties = model
        .properties()
        .iter()
        .map(|property| {
            let holds = !failing.contains(property.name);
            let (steps, deepened) = if holds {
                (Vec::new(), false)
            } else {
                let short = fault_free
                    .iter()
                    .map(|model| shortest_counterexample(model, options, property.name))
                    .find(|path| !path.is_empty())
                    .unwrap_or_else(|| shortest_counterexample(&model, options, property.name));
                match checker.discovery(property.name) {
                    Some(path) if short.is_empty() => (replay(&model, path.into_actions()), false),
                    _ => (short, true),
                }
            };
            PropertyReport {
                name: property.name,
                declared: model.declared(property.name),
                holds,
                counterexample: render::lines::<W>(&steps),
                deepened,
                mermaid: if holds {
                    String::new()
                } else {
                    render::mermaid::<W>(options.clients, &steps)
                },
                timeline: pictured::timeline::<W>(property.name, options.clients, &steps),
                forced_order: forced_order::<W>(&steps),
            }
        })
        .collect();
    Ok(CheckReport {
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        elapsed,
        complete,
        symmetry: options.symmetry,
        zxids_forgotten: options.forget_zxids,
        properties,
    })
}

fn builder<W: Workload>(
    model: RecipeModel<W>,
    options: &CheckOptions,
) -> stateright::CheckerBuilder<RecipeModel<W>> {
    model
        .with_symmetry(options.symmetry)
        .checker()
        .threads(options.threads.max(1))
}

/// How many states one round of iterative deepening may generate. A big model's deep
/// counterexample would cost more rounds than the check itself; past this, the check shows the
/// path its exhaustive search found instead (longer, and with several threads not always the
/// same one).
const DEEPENING_STATES: usize = 5_000_000;

/// A short path that breaks `property` (empty if none does, or if a round of the search
/// generates `DEEPENING_STATES` without finding one): depth-bounded searches of growing
/// depth, each stopping at the first discovery, on one thread so the answer is the same every
/// time. Not guaranteed minimal: stateright's depth bound shares one visited set, so a state first
/// met by a longer path hides its shorter one. The path is replayed from the initial state, so
/// every step is enabled where it is taken.
pub fn shortest_counterexample<W: Workload>(
    model: &RecipeModel<W>,
    options: &CheckOptions,
    property: &'static str,
) -> Vec<(StateOf<W>, ActionOf<W>, StateOf<W>)> {
    for depth in 2.. {
        let one_thread = CheckOptions {
            threads: 1,
            ..options.clone()
        };
        let checker = builder(model.clone(), &one_thread)
            .target_max_depth(depth)
            .target_state_count(DEEPENING_STATES)
            .finish_when(HasDiscoveries::AnyOf([property].into()))
            .spawn_dfs()
            .join();
        if let Some(path) = checker.discovery(property) {
            return replay(model, path.into_actions());
        }
        if checker.max_depth() < depth.saturating_sub(1)
            || checker.state_count() >= DEEPENING_STATES
        {
            break;
        }
    }
    Vec::new()
}

/// The path as an order to force on a run of the recipe's code: every step, whoever takes it.
fn forced_order<W: Workload>(steps: &[(StateOf<W>, ActionOf<W>, StateOf<W>)]) -> Vec<ForcedStep> {
    let forced = |action: &ActionOf<W>| {
        let kind = match action {
            Action::Apply(_) => ForcedKind::Apply,
            Action::ConnectionLoss(_) => ForcedKind::ConnectionLoss,
            Action::LostReply(_) => ForcedKind::LostReply,
            Action::SessionExpiry(_) => ForcedKind::SessionExpiry,
            Action::Deliver(_) => ForcedKind::Deliver,
            Action::Request(..) => ForcedKind::Request,
            Action::Timeout(_) => ForcedKind::Timeout,
            Action::Reap(_) => ForcedKind::Reap,
        };
        // A reap names which node of those the reaper would take.
        let client = match action {
            Action::Reap(i) => *i,
            _ => action.client().unwrap_or_default(),
        };
        ForcedStep {
            client: client as u32,
            kind,
        }
    };
    steps.iter().map(|(_, action, _)| forced(action)).collect()
}

/// Re-runs `actions` from the initial state; every action must be enabled where it is taken.
/// The server stamps real zxids on the way (actions name none, so a path found with zxids
/// forgotten is a path with them too), and the steps show them.
pub fn replay<W: Workload>(
    model: &RecipeModel<W>,
    actions: Vec<ActionOf<W>>,
) -> Vec<(StateOf<W>, ActionOf<W>, StateOf<W>)> {
    let model = model.clone().with_zxids_forgotten(false);
    let mut state = model.init_states().remove(0);
    let mut steps = Vec::new();
    for action in actions {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        assert!(
            enabled.contains(&action),
            "counterexample step {action:?} is not enabled"
        );
        let next = model
            .next_state(&state, action.clone())
            .expect("an enabled action has a next state");
        steps.push((state, action, next.clone()));
        state = next;
    }
    steps
}
