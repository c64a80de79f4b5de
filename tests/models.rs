//! The model checker on the real lock machine and the real pure server: the lock holds every
//! property for 2 and 3 clients under one of each fault; the known bugs fail the property that
//! names them, with a short counterexample that is a real path; the reductions pay.

use stateright::Model;
use zklab::models::budget::Budget;
use zklab::models::check::{
    check, shortest_counterexample, CheckOptions, CheckReport, PropertyReport,
};
use zklab::models::model::RecipeModel;
use zklab::models::workload::Workload;
use zklab::scenarios::lock::LockKit;
use zklab::scenarios::mutation::{BlindRetry, Documented, WatchParent};

/// Options with both reductions (symmetry and partial order) on or off.
fn options(clients: usize, budget: Budget, reduced: bool) -> CheckOptions {
    CheckOptions {
        clients,
        budget,
        threads: 2,
        symmetry: reduced,
        partial_order: reduced,
        forget_zxids: reduced,
        timeout: None,
    }
}

fn quiet(_: usize, _: usize) {}

/// Checks `kit` for `clients` clients within `budget`, reduced or not, quietly.
fn checked<W: Workload>(kit: W, clients: usize, budget: Budget, reduced: bool) -> CheckReport {
    check(kit, &options(clients, budget, reduced), &quiet)
        .unwrap_or_else(|refused| panic!("{refused}"))
}

/// The report of the property called `name`.
fn property<'r>(report: &'r CheckReport, name: &str) -> &'r PropertyReport {
    let found = report.properties.iter().find(|p| p.name == name);
    found.expect("the property")
}

#[test]
fn the_lock_holds_every_property_for_two_and_three_clients_with_one_of_each_fault() {
    for clients in [2, 3] {
        let report = checked(
            LockKit::<Documented>::KIT,
            clients,
            Budget::ONE_OF_EACH,
            true,
        );
        assert_eq!(report.properties.len(), 5);
        for property in &report.properties {
            assert!(
                property.holds,
                "{clients} clients: {} fails:\n{}",
                property.name,
                property.counterexample.join("\n")
            );
        }
        assert!(
            report.unique_states > 10_000,
            "{clients} clients: only {} states",
            report.unique_states
        );
    }
}

/// Asserts the shortest counterexample of `property` is a real path of 1 to 20 steps ending in
/// a state that breaks it.
fn assert_counterexample<W: Workload>(
    kit: W,
    clients: usize,
    budget: Budget,
    property: &'static str,
) {
    let model = RecipeModel::new(kit.clone(), clients, budget).with_partial_order(true);
    let path = shortest_counterexample(&model, &options(clients, budget, true), property);
    assert!(
        (1..=20).contains(&path.len()),
        "{kit:?}: {property} counterexample of {} steps",
        path.len()
    );
    let (_, _, last) = path.last().expect("a step");
    let condition = model
        .properties()
        .into_iter()
        .find(|p| p.name == property)
        .expect("the property")
        .condition;
    assert!(
        !condition(&model, last),
        "the counterexample's last state satisfies {property}"
    );
    assert!(
        path.windows(2).all(|pair| pair[0].2 == pair[1].0),
        "the steps do not chain"
    );
}

#[test]
fn blind_retry_gets_stuck_after_a_lost_create_reply() {
    let report = checked(LockKit::<BlindRetry>::KIT, 2, Budget::ONE_OF_EACH, true);
    let failing: Vec<&str> = report
        .properties
        .iter()
        .filter(|p| !p.holds)
        .map(|p| p.name)
        .collect();
    assert!(
        failing.contains(&"no stuck state") || failing.contains(&"no orphans"),
        "{failing:?}"
    );
    assert!(!failing.contains(&"mutual exclusion"), "{failing:?}");
    let stuck = property(&report, "no stuck state");
    assert!(
        stuck
            .counterexample
            .iter()
            .any(|line| line.contains("fault lost-reply")),
        "{:?}",
        stuck.counterexample
    );
    assert!(stuck.mermaid.starts_with("sequenceDiagram"));
    assert_counterexample(
        LockKit::<BlindRetry>::KIT,
        2,
        Budget::ONE_OF_EACH,
        "no stuck state",
    );
}

#[test]
fn the_herd_lock_wakes_every_waiter_even_without_faults() {
    let report = checked(LockKit::<WatchParent>::KIT, 3, Budget::default(), true);
    let herd = property(&report, "herd-freedom");
    assert!(!herd.holds);
    assert!(report
        .properties
        .iter()
        .filter(|p| p.name != "herd-freedom")
        .all(|p| p.holds));
    assert_counterexample(
        LockKit::<WatchParent>::KIT,
        3,
        Budget::default(),
        "herd-freedom",
    );
}

#[test]
fn the_reductions_explore_fewer_states_and_agree() {
    let with = checked(LockKit::<Documented>::KIT, 2, Budget::ONE_OF_EACH, true);
    let without = checked(LockKit::<Documented>::KIT, 2, Budget::ONE_OF_EACH, false);
    assert!(
        with.unique_states < without.unique_states,
        "{} vs {}",
        with.unique_states,
        without.unique_states
    );
    assert_eq!(with.properties, without.properties);
    let herd_with = checked(LockKit::<WatchParent>::KIT, 3, Budget::default(), true);
    let herd_without = checked(LockKit::<WatchParent>::KIT, 3, Budget::default(), false);
    assert!(herd_with.unique_states < herd_without.unique_states);
    let verdicts = |r: &CheckReport| r.properties.iter().map(|p| p.holds).collect::<Vec<_>>();
    assert_eq!(verdicts(&herd_with), verdicts(&herd_without));
}

#[test]
fn a_timeout_ends_even_a_one_thread_search_early_and_says_it_is_incomplete() {
    let one_thread = CheckOptions {
        threads: 1,
        timeout: Some(std::time::Duration::ZERO),
        ..options(3, Budget::ONE_OF_EACH, true)
    };
    let report = check(LockKit::<Documented>::KIT, &one_thread, &quiet).expect("symmetric");
    assert!(!report.complete);
    assert!(!report.all_hold());
    // The whole search finds hundreds of thousands; stopped at once, it finds a few blocks.
    assert!(
        report.unique_states < 20_000,
        "the search went on to {} states",
        report.unique_states
    );
}

/// With symmetry on, every reordering of the clients of a state hashes alike, and each
/// reordering's hash, taken without building it, is the hash of the state it would build.
/// Checked on states of random walks through the 3-client lock.
#[test]
fn every_reordering_of_a_state_hashes_alike_and_as_built() {
    let model =
        RecipeModel::new(LockKit::<Documented>::KIT, 3, Budget::ONE_OF_EACH).with_symmetry(true);
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    // A fixed xorshift: the same walks every run.
    let mut bits: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut draw = |below: usize| {
        bits ^= bits << 13;
        bits ^= bits >> 7;
        bits ^= bits << 17;
        usize::try_from(bits % below as u64).expect("small")
    };
    let (mut states, mut distinct_reorderings) = (0, 0);
    for _ in 0..40 {
        let mut state = model.init_states().remove(0);
        for _ in 0..60 {
            let orbit = state.orbit_hash();
            let mut hashes = std::collections::BTreeSet::new();
            for order in &orders {
                let moved = state.in_order(order);
                assert_eq!(
                    state.hash_in_order(order),
                    moved.hash_in_order(&orders[0]),
                    "{order:?} of {state:?}"
                );
                assert_eq!(moved.orbit_hash(), orbit, "{order:?} of {state:?}");
                hashes.insert(state.hash_in_order(order));
            }
            states += 1;
            distinct_reorderings += hashes.len();
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            if actions.is_empty() {
                break;
            }
            let action = actions.swap_remove(draw(actions.len()));
            state = model.next_state(&state, action).expect("an enabled action");
        }
    }
    // Reorderings are mostly different states: the hashes tell them apart.
    assert!(
        distinct_reorderings > states * 4,
        "{distinct_reorderings} distinct reorderings of {states} states"
    );
}
