//! Testing a workload's claim to be symmetric before symmetry reduction trusts it.
//!
//! The reduction explores one state of each set that differ only by which client plays which
//! role ([`crate::symmetry`]). That is sound only if renaming sessions commutes with every step:
//! a machine that orders contenders by the guids in their names decides differently once two
//! clients swap sessions, and the reduction would merge states whose futures differ, hiding
//! violations. A workload says whether it is symmetric ([`Workload::symmetric`]); this module
//! checks the claim on the states a search meets first.
//!
//! On each of those states, two neighbouring clients are swapped (each takes the other's slot
//! and session). The claim holds there when the swap changes no verdict and no enabled step, and
//! when taking each step and then swapping gives the same state as swapping and then taking the
//! swapped step. The monitors are left out of that last comparison: they travel in the state
//! only to give verdicts, which are compared, and their bookkeeping may list sessions in another
//! order once renamed. So are the orders of listings waiting in an inbox: the server lists
//! children in name order, the names hold guids, and ZooKeeper promises no order anyway.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::hash::{Hash, Hasher};

use stateright::Model;
use zklab_recipes::client::OpResult;
use zklab_recipes::session_renaming::StableHasher;

use crate::budget::Budget;
use crate::check::replay;
use crate::model::{Action, ActionOf, Client, Inbound, RecipeModel, StateOf};
use crate::render;
use crate::workload::Workload;

/// How many states, found breadth first, the claim is tested on, once without faults and once
/// with the check's budget: enough to pass every recipe's first contention, wake-up and retry.
pub const CLAIM_STATES: usize = 1_000;

/// A symmetry claim that a state refutes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymmetryRefused {
    /// The machine's type.
    pub machine: &'static str,
    /// The clients swapped.
    pub swapped: (usize, usize),
    /// What the swap changed: a verdict, the steps enabled, or a part of a successor.
    pub broken: String,
    /// The step after which it differs, when it is a successor.
    pub step: Option<String>,
    /// Where the two sides first differ, as each side prints.
    pub sides: Option<(String, String)>,
    /// The path from the initial state to the state that refutes the claim, one trace line a
    /// step.
    pub path: Vec<String>,
}

impl fmt::Display for SymmetryRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, b) = self.swapped;
        writeln!(
            f,
            "{} is claimed symmetric (Workload::symmetric) but is not: swapping c{a} and c{b} \
             changes {}",
            self.machine, self.broken
        )?;
        if let Some(step) = &self.step {
            writeln!(f, "  after the step: {step}")?;
        }
        if let Some((stepped_then_swapped, swapped_then_stepped)) = &self.sides {
            writeln!(f, "  stepped, then swapped: {stepped_then_swapped}")?;
            writeln!(f, "  swapped, then stepped: {swapped_then_stepped}")?;
        }
        if self.path.is_empty() {
            writeln!(f, "  in the initial state")?;
        } else {
            writeln!(f, "  in the state reached by:")?;
            for line in &self.path {
                writeln!(f, "    {line}")?;
            }
        }
        write!(
            f,
            "symmetry reduction would hide what that difference leads to; check with \
             --no-symmetry, or make the workload say it is not symmetric"
        )
    }
}

/// Tests `workload`'s claim to be symmetric with `clients` clients, on the first
/// [`CLAIM_STATES`] states without faults and the first with `budget`.
pub fn test_claim<W: Workload>(
    workload: &W,
    clients: usize,
    budget: Budget,
) -> Result<(), Box<SymmetryRefused>> {
    if clients < 2 {
        return Ok(());
    }
    let budgets = if budget == Budget::NONE {
        vec![budget]
    } else {
        vec![Budget::NONE, budget]
    };
    for budget in budgets {
        let model = RecipeModel::new(workload.clone(), clients, budget);
        let found = breadth_first(&model, CLAIM_STATES);
        for (index, state) in found.iter().enumerate() {
            for first in 0..clients - 1 {
                if let Err(mut refused) = test_swap(&model, &state.state, first) {
                    let steps = replay(&model, path_to(&found, index));
                    refused.path = render::lines::<W>(&steps);
                    return Err(refused);
                }
            }
        }
    }
    Ok(())
}

/// A state found by the breadth-first search, with the step that found it.
struct Found<W: Workload> {
    state: StateOf<W>,
    /// The state it was found from, by index, and the step.
    from: Option<(usize, ActionOf<W>)>,
}

/// The first `limit` distinct states reachable from the initial one, breadth first, in the
/// order the model lists its steps (so the same every time).
fn breadth_first<W: Workload>(model: &RecipeModel<W>, limit: usize) -> Vec<Found<W>> {
    // States are told apart by a 64-bit hash, as the checker tells them apart.
    let fingerprint = |state: &StateOf<W>| {
        let mut hasher = StableHasher::default();
        state.hash(&mut hasher);
        hasher.finish()
    };
    let initial = model.init_states().remove(0);
    let mut seen = HashSet::from([fingerprint(&initial)]);
    let mut found = vec![Found {
        state: initial,
        from: None,
    }];
    let mut frontier = VecDeque::from([0]);
    while let Some(index) = frontier.pop_front() {
        let mut actions = Vec::new();
        model.actions(&found[index].state, &mut actions);
        for action in actions {
            if found.len() >= limit {
                return found;
            }
            let Some(next) = model.next_state(&found[index].state, action.clone()) else {
                continue;
            };
            if seen.insert(fingerprint(&next)) {
                frontier.push_back(found.len());
                found.push(Found {
                    state: next,
                    from: Some((index, action)),
                });
            }
        }
    }
    found
}

/// The steps from the initial state to the `index`th state found.
fn path_to<W: Workload>(found: &[Found<W>], mut index: usize) -> Vec<ActionOf<W>> {
    let mut steps = Vec::new();
    while let Some((from, action)) = &found[index].from {
        steps.push(action.clone());
        index = *from;
    }
    steps.reverse();
    steps
}

/// Tests the claim on `state`, swapping clients `first` and `first + 1`.
fn test_swap<W: Workload>(
    model: &RecipeModel<W>,
    state: &StateOf<W>,
    first: usize,
) -> Result<(), Box<SymmetryRefused>> {
    let mut order: Vec<usize> = (0..model.clients).collect();
    order.swap(first, first + 1);
    // One renaming for the state and its successors: a session a step opens keeps its name.
    let renaming = state.renaming(&order);
    let swapped = state.reordered(&order, &renaming);
    let refused = |broken: String| SymmetryRefused {
        machine: std::any::type_name::<W::Machine>(),
        swapped: (first, first + 1),
        broken,
        step: None,
        sides: None,
        path: Vec::new(),
    };
    for property in model.properties() {
        if (property.condition)(model, state) != (property.condition)(model, &swapped) {
            return Err(Box::new(refused(format!(
                "the verdict of \"{}\"",
                property.name
            ))));
        }
    }
    // A swap is its own inverse: client `c` takes slot `order[c]`.
    let rename_action = |action: &ActionOf<W>| rename_client(action, |c| order[c]);
    let mut steps = Vec::new();
    model.actions(state, &mut steps);
    let mut swapped_steps = Vec::new();
    model.actions(&swapped, &mut swapped_steps);
    let renamed_steps: Vec<ActionOf<W>> = steps.iter().map(rename_action).collect();
    if let Some(step) = (renamed_steps.iter())
        .find(|step| !swapped_steps.contains(step))
        .or_else(|| {
            swapped_steps
                .iter()
                .find(|step| !renamed_steps.contains(step))
        })
    {
        return Err(Box::new(refused(format!(
            "the steps enabled: {step:?} is enabled on one side only"
        ))));
    }
    for step in steps {
        let renamed = rename_action(&step);
        let (Some(stepped), Some(swapped_stepped)) = (
            model.next_state(state, step.clone()),
            model.next_state(&swapped, renamed),
        ) else {
            continue;
        };
        let stepped_swapped = stepped.reordered(&order, &renaming);
        if let Some((part, sides)) = first_difference::<W>(&stepped_swapped, &swapped_stepped) {
            let step_line = render::lines::<W>(&[(state.clone(), step, stepped)]);
            return Err(Box::new(SymmetryRefused {
                step: step_line.into_iter().next(),
                sides: Some(sides),
                ..refused(part)
            }));
        }
    }
    Ok(())
}

/// The action with its client renumbered by `slot_of`.
fn rename_client<R: Clone>(action: &Action<R>, slot_of: impl Fn(usize) -> usize) -> Action<R> {
    match action {
        Action::Apply(c) => Action::Apply(slot_of(*c)),
        Action::Deliver(c) => Action::Deliver(slot_of(*c)),
        Action::Request(c, request) => Action::Request(slot_of(*c), request.clone()),
        Action::Timeout(c) => Action::Timeout(slot_of(*c)),
        Action::ConnectionLoss(c) => Action::ConnectionLoss(slot_of(*c)),
        Action::LostReply(c) => Action::LostReply(slot_of(*c)),
        Action::SessionExpiry(c) => Action::SessionExpiry(slot_of(*c)),
        Action::Reap(i) => Action::Reap(*i),
    }
}

/// The first part in which two states differ, monitors left out, and where the two sides'
/// printed forms first differ.
fn first_difference<W: Workload>(
    a: &StateOf<W>,
    b: &StateOf<W>,
) -> Option<(String, (String, String))> {
    if *a.server != *b.server {
        return Some(("the server".to_owned(), sides(&*a.server, &*b.server)));
    }
    for (c, (x, y)) in a.clients.iter().zip(&b.clients).enumerate() {
        if let Some((field, sides)) = client_difference::<W>(x, y) {
            return Some((format!("c{c}'s {field}"), sides));
        }
    }
    if a.budget != b.budget {
        return Some(("the fault budget".to_owned(), sides(&a.budget, &b.budget)));
    }
    if a.broken != b.broken {
        return Some((
            "the properties broken".to_owned(),
            sides(&a.broken, &b.broken),
        ));
    }
    None
}

/// The first field in which two clients differ, and where.
fn client_difference<W: Workload>(
    x: &Client<W::Machine>,
    y: &Client<W::Machine>,
) -> Option<(&'static str, (String, String))> {
    let inbox = |client: &Client<W::Machine>| -> Vec<Inbound> {
        (client.inbox.iter())
            .map(|inbound| match inbound {
                Inbound::Reply(Ok(OpResult::Children { children, stat })) => {
                    let mut children = children.clone();
                    children.sort();
                    Inbound::Reply(Ok(OpResult::Children {
                        children,
                        stat: *stat,
                    }))
                }
                other => other.clone(),
            })
            .collect()
    };
    if x.machine != y.machine {
        Some(("machine", sides(&x.machine, &y.machine)))
    } else if x.session != y.session {
        Some(("session", sides(&x.session, &y.session)))
    } else if x.outbox != y.outbox {
        Some(("op in flight", sides(&x.outbox, &y.outbox)))
    } else if inbox(x) != inbox(y) {
        Some(("inbox", sides(&inbox(x), &inbox(y))))
    } else if x.timer != y.timer {
        Some(("timer", sides(&x.timer, &y.timer)))
    } else if x.application != y.application {
        Some(("application", sides(&x.application, &y.application)))
    } else if (x.part, x.finished) != (y.part, y.finished) {
        Some((
            "part or finish",
            sides(&(x.part, x.finished), &(y.part, y.finished)),
        ))
    } else {
        None
    }
}

/// How much of each side to show around the first place they differ.
const SHOWN: usize = 120;

/// The two values' printed forms, from a little before the first place they differ.
fn sides(a: &impl fmt::Debug, b: &impl fmt::Debug) -> (String, String) {
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    let same = (a.char_indices())
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((at, _), _)| at);
    let window = |text: &str| -> String {
        let start = (0..=same.saturating_sub(SHOWN / 3))
            .rev()
            .find(|&at| text.is_char_boundary(at))
            .unwrap_or(0);
        let shown: String = text[start..].chars().take(SHOWN).collect();
        let before = if start > 0 { "..." } else { "" };
        let after = if text.len() - start > shown.len() {
            "..."
        } else {
            ""
        };
        format!("{before}{shown}{after}")
    };
    (window(&a), window(&b))
}
