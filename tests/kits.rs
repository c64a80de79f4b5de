//! Every scenario of the catalogue, in the simulator and in the model checker: each recipe holds
//! every property under every fault, and each known bug is caught by both (but for a bug that
//! needs what the model lacks, a lagging follower or watches lost with a broken connection),
//! with the violation that names it. How each known bug is caught is stated in its catalogue entry (`KnownBug`).

mod support;

use zklab::models::budget::Budget;
use zklab::models::check::{CheckOptions, CheckReport};
use zklab::scenarios::catalogue::{self, Catalogue};
use zklab::scenarios::runner::{run_every_seed, run_seed, sweep, RunOptions};
use zklab::scenarios::scenario::{KnownBug, Scenario};
use zklab::scenarios::schedule::Schedule;
use zklab::sim::fault::FaultKind;
use zklab::sim::forced;

/// A budget of each fault kind: connection loss, lost reply, session expiry (and no pause).
const fn budget(connection_loss: u8, lost_reply: u8, session_expiry: u8) -> Budget {
    Budget {
        connection_loss,
        lost_reply,
        session_expiry,
        pause: 0,
    }
}

const NO_FAULTS: Budget = budget(0, 0, 0);

/// Every known bug of the catalogue, with how it is caught (stated in its catalogue entry).
fn known_bugs() -> impl Iterator<Item = (&'static Scenario, &'static KnownBug)> {
    catalogue::scenarios().filter_map(|scenario| Some((scenario, scenario.bug.as_ref()?)))
}

/// Which reductions a check uses.
#[derive(Clone, Copy)]
struct Reductions {
    symmetry: bool,
    partial_order: bool,
    forget_zxids: bool,
}

const NONE: Reductions = Reductions {
    symmetry: false,
    partial_order: false,
    forget_zxids: false,
};

const SYMMETRY: Reductions = Reductions {
    symmetry: true,
    ..NONE
};

const ALL: Reductions = Reductions {
    symmetry: true,
    partial_order: true,
    forget_zxids: true,
};

fn check(name: &str, clients: usize, budget: Budget) -> CheckReport {
    check_with(name, clients, budget, ALL)
}

/// One checker thread: with partial-order reduction the number of states explored depends on the
/// order they are visited in, which more threads make vary from run to run (the tests run in
/// parallel anyway).
fn check_with(name: &str, clients: usize, budget: Budget, reductions: Reductions) -> CheckReport {
    let options = CheckOptions {
        clients,
        budget,
        threads: 1,
        symmetry: reductions.symmetry,
        partial_order: reductions.partial_order,
        forget_zxids: reductions.forget_zxids,
        timeout: None,
    };
    let checked = support::scenario(name).kit.check(&options, &|_, _| {});
    checked.unwrap_or_else(|refused| panic!("{refused}"))
}

#[test]
fn every_recipe_holds_over_1000_seeds_with_every_fault_injected() {
    for scenario in catalogue::scenarios().filter(|s| s.bug.is_none()) {
        let report = sweep(
            scenario,
            0,
            1000,
            &RunOptions::default(),
            2,
            &run_every_seed,
        );
        let failures: Vec<String> = report
            .failures
            .iter()
            .map(|(seed, v)| format!("seed {seed}: {v}"))
            .collect();
        let name = scenario.name;
        assert!(failures.is_empty(), "{name}:\n{}", failures.join("\n"));
        // The reaper strikes only where there are containers: in the kits named for them.
        let strikable =
            |kind: &FaultKind| *kind != FaultKind::ContainerReaped || name.contains("containers");
        for kind in FaultKind::ALL.into_iter().filter(strikable) {
            assert!(report.faults.get(kind) > 0, "{name}: never injected {kind}");
        }
        // A recipe's own herd rule is its kit's monitor (which found nothing above); every
        // recipe wakes somebody with a deletion, but a configuration, a name service and a
        // shared counter, whose nodes are only written.
        assert!(
            report.max_wakeups_per_deletion >= 1
                || ["config", "names", "shared-counter"].contains(&name),
            "{name}"
        );
    }
}

#[test]
fn every_known_bug_is_caught_by_the_sweep_within_1000_seeds_and_replays() {
    for (scenario, bug) in known_bugs() {
        let options = RunOptions::default();
        let (seed, violation) = (0..1000)
            .find_map(|seed| {
                let first = run_seed(scenario, seed, &options)
                    .violations
                    .into_iter()
                    .next();
                first.map(|v| (seed, v))
            })
            .unwrap_or_else(|| panic!("{}: no violation in 1,000 seeds", scenario.name));
        assert!(
            bug.shows.contains(&violation.property),
            "{} seed {seed}: {violation}",
            scenario.name
        );
        let replayed = run_seed(scenario, seed, &options);
        assert_eq!(
            replayed.violations.first(),
            Some(&violation),
            "{}",
            scenario.name
        );
    }
}

/// Each known bug's counterexample is also forced, step by step, on the recipe's own code in
/// the simulator (the schedule `zklab check` writes, read back from its text), which must take
/// every step and break the same property: the model and the simulator agree on the bug.
#[test]
fn every_known_bug_fails_its_property_in_the_model_and_its_counterexample_forced_on_the_recipes_code_fails_it_too(
) {
    for (scenario, bug) in known_bugs().filter(|(_, bug)| bug.beyond_the_model.is_none()) {
        let report = check(scenario.name, bug.clients, bug.budget);
        assert_pinned(scenario, &report);
        let property = report
            .properties
            .iter()
            .find(|p| p.name == bug.breaks)
            .expect("the property");
        assert!(!property.holds, "{}: {} holds", scenario.name, bug.breaks);
        assert!(
            (1..=40).contains(&property.counterexample.len()),
            "{}: a counterexample of {} steps",
            scenario.name,
            property.counterexample.len()
        );
        let schedule = Schedule::of_counterexample(scenario.name, bug.clients, property);
        let run = Schedule::parse(&schedule.to_text())
            .unwrap()
            .run(&Catalogue::builtin())
            .unwrap();
        let story = run.trace.render();
        assert!(
            story.contains(forced::DONE),
            "{}: left the path:\n{story}",
            scenario.name
        );
        let shown = run.violations.first().map(|v| v.property);
        assert!(
            shown.is_some_and(|kind| Schedule::breaks(kind, bug.breaks)),
            "{}: the simulator shows {shown:?}, the model broke {}:\n{story}",
            scenario.name,
            bug.breaks
        );
    }
}

#[test]
fn a_bug_beyond_the_model_holds_in_it() {
    for (scenario, bug) in known_bugs().filter(|(_, bug)| bug.beyond_the_model.is_some()) {
        // In its own model, and with one of each fault on top.
        for budget in [bug.budget, Budget::ONE_OF_EACH] {
            let report = check(scenario.name, bug.clients, budget);
            assert!(report.complete, "{}", scenario.name);
            if budget == bug.budget {
                assert_pinned(scenario, &report);
            }
            let property = report.properties.iter().find(|p| p.name == bug.breaks);
            assert!(property.expect("the property").holds, "{}", scenario.name);
        }
    }
}

/// Two clients with one of each fault, every reduction sound for the kit (the checker's
/// default): a recipe holds every property, in the number of states its catalogue entry pins.
#[test]
fn every_recipe_holds_every_property_in_the_model_in_its_pinned_number_of_states() {
    for scenario in catalogue::scenarios().filter(|s| s.bug.is_none()) {
        let report = check(scenario.name, 2, Budget::ONE_OF_EACH);
        assert!(report.complete, "{}", scenario.name);
        if let Some(broken) = report.properties.iter().find(|p| !p.holds) {
            let steps = broken.counterexample.join("\n");
            panic!("{}: {} fails:\n{steps}", scenario.name, broken.name);
        }
        assert_pinned(scenario, &report);
    }
}

/// The check explored the number of states the scenario's catalogue entry pins.
fn assert_pinned(scenario: &Scenario, report: &CheckReport) {
    assert_eq!(
        Some(report.unique_states),
        scenario.states,
        "{}: the pinned number of states",
        scenario.name
    );
}

/// The small cases on which every kit's reductions are compared with none: two clients with no
/// fault, and with one fault of each kind alone. (The same comparison with one of each fault at
/// once is reports/reductions.md, by reports/measure-reductions.sh.)
const SMALL_CASES: [Budget; 5] = [
    NO_FAULTS,
    budget(1, 0, 0),
    budget(0, 1, 0),
    budget(0, 0, 1),
    Budget {
        pause: 1,
        ..NO_FAULTS
    },
];

/// Each reduction gives the verdicts of none, and explores fewer states, for every kit on the
/// small cases.
#[test]
fn every_kit_gives_the_same_verdicts_with_and_without_each_reduction_on_small_cases() {
    for scenario in catalogue::scenarios() {
        let name = scenario.name;
        let mut counts = [0; 3];
        let mut symmetry_used = false;
        for budget in SMALL_CASES {
            let verdicts = |reductions, count: &mut usize| {
                let report = check_with(name, 2, budget, reductions);
                assert!(report.complete, "{name}");
                *count += report.unique_states;
                let verdicts: Vec<(&str, bool)> = report
                    .properties
                    .iter()
                    .map(|p| (p.name, p.holds))
                    .collect();
                (verdicts, report.symmetry)
            };
            let [full_states, symmetric_states, reduced_states] = &mut counts;
            let (full, _) = verdicts(NONE, full_states);
            let (symmetric, used) = verdicts(SYMMETRY, symmetric_states);
            let (reduced, _) = verdicts(ALL, reduced_states);
            symmetry_used = used;
            assert_eq!(symmetric, full, "{name} {budget:?}: symmetry reduction");
            assert_eq!(
                reduced, symmetric,
                "{name} {budget:?}: partial-order reduction and forgotten zxids"
            );
        }
        let [full_states, symmetric_states, reduced_states] = counts;
        assert!(reduced_states < symmetric_states, "{name}");
        if symmetry_used && symmetric_states == full_states {
            // Two clients playing different parts (a barrier's controller and a waiter) have
            // nobody to swap with: a third client does.
            let three = |reductions| check_with(name, 3, NO_FAULTS, reductions).unique_states;
            assert!(three(SYMMETRY) < three(NONE), "{name}");
        } else if symmetry_used {
            assert!(symmetric_states < full_states, "{name}");
        } else {
            assert_eq!(symmetric_states, full_states, "{name}: symmetry is off");
        }
    }
}

#[test]
fn zxids_are_forgotten_only_for_a_recipe_that_reads_none() {
    assert!(check("two-phase-commit", 2, NO_FAULTS).zxids_forgotten);
    assert!(!check("double-barrier", 2, NO_FAULTS).zxids_forgotten);
}

#[test]
fn symmetry_reduction_is_off_for_a_machine_that_orders_by_guid_where_it_would_hide_the_bug() {
    use stateright::{Checker, Model};
    use zklab::models::model::RecipeModel;
    use zklab::scenarios::lock::bugs::SortByName;
    use zklab::scenarios::lock::LockKit;

    let report = check("lock-bug-sort-by-name", 2, NO_FAULTS);
    assert!(
        !report.symmetry,
        "the kit says its machine is not symmetric"
    );
    // Forced on anyway, the reduction merges states that differ only by which guid sorts first,
    // and the two holders are never seen.
    let model = RecipeModel::new(LockKit::<SortByName>::KIT, 2, NO_FAULTS);
    let forced = model
        .clone()
        .with_symmetry(true)
        .checker()
        .spawn_dfs()
        .join();
    assert!(forced.discovery("mutual exclusion").is_none());
    let full = model.checker().spawn_dfs().join();
    assert!(full.discovery("mutual exclusion").is_some());
}

/// The lock that orders contenders by guid, with a kit that claims it is symmetric.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct ClaimedSymmetric(zklab::scenarios::lock::bugs::SortByName);

impl zklab::recipes::session_renaming::RenameSessions for ClaimedSymmetric {
    fn rename_sessions(
        &self,
        renaming: &zklab::recipes::session_renaming::SessionRenaming,
    ) -> Self {
        ClaimedSymmetric(self.0.rename_sessions(renaming))
    }

    fn hash_renamed(
        &self,
        renaming: &zklab::recipes::session_renaming::SessionRenaming,
        hasher: &mut zklab::recipes::session_renaming::StableHasher,
    ) {
        self.0.hash_renamed(renaming, hasher);
    }
}

impl zklab::scenarios::mutation::Mutation for ClaimedSymmetric {
    fn step<M: zklab::recipes::machine::Recipe>(
        &mut self,
        inner: &mut M,
        input: zklab::recipes::machine::Input<M::Request>,
    ) -> zklab::recipes::machine::Step<M::Outcome> {
        self.0.step(inner, input)
    }
}

#[test]
fn check_refuses_a_false_symmetry_claim_naming_the_machine_and_what_the_swap_changed() {
    use zklab::scenarios::lock::LockKit;

    let kit = || LockKit::<ClaimedSymmetric>::KIT;
    for clients in [2, 5] {
        let options = CheckOptions {
            clients,
            budget: NO_FAULTS,
            threads: 1,
            symmetry: true,
            partial_order: true,
            forget_zxids: true,
            timeout: None,
        };
        let refused = zklab::models::check::check(kit(), &options, &|_, _| {})
            .expect_err("a machine that orders by guid is not symmetric");
        let message = refused.to_string();
        assert!(message.contains("ClaimedSymmetric"), "{message}");
        assert!(message.contains("--no-symmetry"), "{message}");
        assert!(
            message.contains("machine") || message.contains("steps enabled"),
            "names what the swap changed: {message}"
        );
        assert!(
            !refused.path.is_empty() || refused.step.is_some(),
            "{message}"
        );
        // Without the reduction, the check sees what the claim would have hidden.
        let unreduced = CheckOptions {
            symmetry: false,
            ..options
        };
        if clients == 2 {
            let report = zklab::models::check::check(kit(), &unreduced, &|_, _| {})
                .expect("nothing to refuse without the reduction");
            let exclusion = report
                .properties
                .iter()
                .find(|p| p.name == "mutual exclusion");
            assert!(!exclusion.expect("judged").holds, "two hold at once");
        }
    }
}

#[test]
fn every_symmetric_catalogue_kit_passes_its_symmetry_claim_with_three_clients_and_every_fault() {
    let mut tested = 0;
    for scenario in catalogue::scenarios() {
        if scenario.kit.min_clients() > 3 {
            continue;
        }
        let options = CheckOptions {
            clients: 3,
            budget: Budget::ONE_OF_EACH,
            threads: 1,
            symmetry: true,
            partial_order: true,
            forget_zxids: true,
            // The claim is tested before the search, which stops at once.
            timeout: Some(std::time::Duration::ZERO),
        };
        let report = scenario.kit.check(&options, &|_, _| {});
        let report = report.unwrap_or_else(|refused| panic!("{}: {refused}", scenario.name));
        tested += usize::from(report.symmetry);
    }
    assert!(tested >= 30, "only {tested} kits claim symmetry");
}
