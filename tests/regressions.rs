//! Stories that once broke a property, kept so the fix stays fixed. Each names what it found.

mod support;

use std::time::Duration;

use zklab::scenarios::catalogue::Catalogue;
use zklab::scenarios::regressions;
use zklab::scenarios::runner::{self, run_seed, RunOptions};
use zklab::scenarios::schedule::Schedule;
use zklab::sim::fault::{FaultKind, FaultRates, ScriptedFault};

/// The lock gave up on NoNode: after ConnectionLoss on its first create it listed the lock
/// directory to find its node before anyone had created the directory. Scripted, so the story
/// does not depend on which seed happens to draw it.
#[test]
fn connection_loss_before_the_lock_directory_exists() {
    let script = vec![ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::ConnectionLoss,
        client: 0,
        duration: Duration::ZERO,
    }];
    let options = RunOptions {
        clients: 1,
        rounds: 1,
        faults: FaultRates::none(),
        script,
        ..RunOptions::default()
    };
    let report = run_seed(support::scenario("lock"), 1, &options);
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let text = report.trace.render();
    let lost = "c0 XX fault connection-loss: before apply: create /locks/lock/";
    assert!(text.contains(lost), "{text}");
    let listing = text
        .find("c0 s1 -> getChildren /locks/lock")
        .expect("c0 looks for its node");
    let no_directory = text[listing..].find("c0 s1 <- error NoNode");
    assert!(
        no_directory.is_some(),
        "the listing found no directory:\n{text}"
    );
}

/// Replays the schedule kept as `name` in the regressions directory, asserts that every property
/// holds, and returns its story.
fn kept_story(name: &str) -> String {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(regressions::DIRECTORY)
        .join(name);
    let text = std::fs::read_to_string(&file).expect("the kept schedule");
    let report = Schedule::parse(&text)
        .unwrap()
        .run(&Catalogue::builtin())
        .unwrap();
    assert!(
        report.violations.is_empty(),
        "{name}: {:?}",
        report.violations
    );
    report.trace.render()
}

/// The seeds of the 10,000-seed sweep (on a standalone server) that first found it.
#[test]
fn the_seeds_that_found_it() {
    let standalone = RunOptions::default().on_servers(1);
    for seed in [2654, 3596, 4708, 7101, 7887, 8550] {
        let report = run_seed(support::scenario("lock"), seed, &standalone);
        assert!(
            report.violations.is_empty(),
            "seed {seed}: {:?}",
            report.violations
        );
    }
}

/// Holds `scenario` with `options` on each of `seeds`.
fn holds(scenario: &str, options: &RunOptions, seeds: impl IntoIterator<Item = u64>) {
    for seed in seeds {
        let report = run_seed(support::scenario(scenario), seed, options);
        assert!(
            report.violations.is_empty(),
            "{scenario} seed {seed} with {options:?}: {:?}",
            report.violations
        );
    }
}

/// Holds `scenario` on each of `seeds` under the fault profile `faults` (as `--faults` takes
/// it), on the default 3-server ensemble.
fn holds_under(scenario: &str, faults: &str, seeds: &[u64]) {
    let options = RunOptions {
        faults: FaultRates::parse(faults).expect("a valid profile"),
        ..RunOptions::default()
    };
    holds(scenario, &options, seeds.iter().copied());
}

/// The herd monitor counted a revoked write lock's owner, told of its own node's deletion
/// through the data watch it keeps for revocation requests (a read resent after a leader
/// change, served by a follower that had not yet applied the deletion), as a second waiter.
#[test]
fn a_revoked_owner_told_through_its_own_nodes_watch_is_no_herd() {
    let profile = "all,session-expiry=0.1,partition=0.05,pause=0.05,crash=0.01";
    holds_under("revocable-lock", profile, &[2205]);
}

/// A leader change cut every session off just after a revocable lock's waiter asked a reader to
/// give up; the waiter's grace ran out in the election, and as both reconnected the reader read
/// the ask at the very moment the waiter decided to force it out. The reader could not have
/// answered sooner, and the revocation monitor blamed it.
#[test]
fn an_ask_read_as_the_asker_forces_after_an_election_is_not_ignored() {
    let profile = "all,crash=0.02,session-expiry=0.1,partition=0.05,pause=0.05";
    holds_under("revocable-lock", profile, &[4572]);
}

/// Every process crashed, the coordinator before it decided: nobody was left to remove the
/// transaction node, and the orphan check blamed the recipe for it.
#[test]
fn a_transaction_left_when_every_process_died_is_no_orphan() {
    let profile = "all,session-expiry=0.1,partition=0.1,pause=0.1,crash=0.02";
    holds_under("two-phase-commit", profile, &[1177]);
}

/// Holds `scenario` with three clients on `seed`, with every fault.
fn holds_for_three_clients(scenario: &str, seed: u64) {
    let options = RunOptions {
        clients: 3,
        ..RunOptions::default()
    };
    holds(scenario, &options, [seed]);
}

/// Three double barrier participants: one left round 9 and finished, and the two still inside
/// crashed. Nobody was left to remove `ready`, and the orphan check blamed the recipe for it.
#[test]
fn a_ready_left_when_everyone_inside_crashed_is_no_orphan() {
    holds_for_three_clients("double-barrier", 12152);
}

/// A member read its view from a follower that a stale read held a second behind: the view
/// still held a member whose leaving the leader had applied a second before, and the news was
/// on its way when the member finished. A grace of one second held that against the recipe.
#[test]
fn news_held_back_by_a_lagging_follower_is_still_on_its_way() {
    holds_for_three_clients("group", 6918);
}

/// Each client could not hear the server when the news it missed was sent: the group's member
/// paused through a change (1171), the configuration's reader cut off while every later value
/// was written (4197), the semaphore's waiter cut off and paused after its lease came free
/// (8061), a double barrier's participant cut off with its create's reply lost (44997). The
/// freshness, held-back and unowned-node rules held it against them.
#[test]
fn news_sent_while_a_client_could_not_hear_is_not_held_against_it() {
    let profile = "all,session-expiry=0.1,partition=0.1,pause=0.1,crash=0.02";
    holds_under("group", profile, &[1171]);
    holds_under("config", profile, &[4197]);
    holds_under("semaphore", profile, &[8061]);
    // A double barrier's participant, its create reply lost, was cut off and paused for 20 s;
    // it claimed its node as soon as it could hear again, and the unowned-node rule counted
    // the 20 s against it.
    holds_under("double-barrier", profile, &[44997]);
}

/// Found by a 100,000-seed sweep of `zklab run all`, each a monitor's false alarm. A semaphore
/// waiter listed from a lagging follower, set its watch on a lease already gone, and crashed
/// 4 ms later, before the reply that would have sent it listing again (57901): the stuck-waiter
/// rule waited on a dead process. A group member's follower handed it a deletion's watch event
/// 270 ms into a 3.5 s pause, and the member finished as it woke (42561): the freshness rule
/// dated the news from the leader's commit, before the pause.
#[test]
fn a_dead_waiter_and_news_that_reached_a_paused_member_are_no_violations() {
    holds("semaphore", &RunOptions::default(), [57901]);
    holds("group", &RunOptions::default(), [42561]);
}

/// 64 lock clients of 1,000 rounds each failed liveness under every fault: the bound granted
/// 50 ms a round, and the holders' turns took some 75 ms each. The recipes whose clients take
/// turns must finish within half of what the bound grants for their rounds.
#[test]
fn the_liveness_bound_grants_a_large_workload_its_turns() {
    let options = RunOptions {
        clients: 64,
        rounds: 30,
        ..RunOptions::default()
    };
    let allowance = options.liveness_bound() - options.time_bound;
    for scenario in ["lock", "rw-lock", "semaphore", "election"] {
        let report = run_seed(support::scenario(scenario), 1, &options);
        assert!(
            report.violations.is_empty(),
            "{scenario}: {:?}",
            report.violations
        );
        let took = report.trace.entries().last().expect("a story").at;
        assert!(
            took * 2 <= allowance,
            "{scenario}: {took:?} for 64 clients of 30 rounds, against an allowance of \
             {allowance:?}"
        );
    }
}

/// The group's last member, alone once the others had crashed, lost a session every dozen
/// seconds to faults, and each rejoin restarted its 30 s wait for quiet: it never finished.
#[test]
fn a_last_member_whose_sessions_keep_ending_still_finishes() {
    let profile = "all,session-expiry=0.1,partition=0.05,pause=0.05,crash=0.01";
    holds_under("group", profile, &[3799]);
}

/// A participant learned that its round began only from the watch event on `ready`, which
/// moves no last-seen zxid. Its leave's listing was lost with its connection; it reconnected
/// to a follower that had applied neither the others' nodes nor `ready`, took itself for the
/// last one inside, and left while another still was. It now syncs before listing again.
#[test]
fn a_double_barrier_listing_after_a_reconnect_is_not_behind_the_watch_events() {
    holds_under(
        "double-barrier",
        "all,session-expiry=0.1,partition=0.05,pause=0.05,crash=0.01",
        &[1093],
    );
}

/// A participant's session expired as it left a round whose other participant had crashed. Its
/// new session found the round's `ready` and the crashed one's node, and gave the round up as
/// missed at once; nobody was left to clear `ready` when the node went with the crashed one's
/// session. It now sees the round out and clears `ready`, then tells that it missed it.
#[test]
fn a_double_barrier_session_lost_while_leaving_still_clears_ready() {
    holds_under(
        "double-barrier",
        "all,session-expiry=0.1,partition=0.1,pause=0.1,crash=0.02",
        &[2498],
    );
}

/// The 3-client locked-queue model found it, and the simulator forced along that path showed
/// it too: a consumer's claim was lost to ConnectionLoss; once reconnected, it found the item
/// claimed by another (the claim node's owner) and went on with its listing, as it does when a
/// claim fails; the other's session then expired, taking its claim, and the sequence-order
/// rule blamed the consumer's next claim for passing over an item it had tried in vain. The
/// monitor now counts a claim found held by another as tried.
#[test]
fn an_item_found_claimed_by_another_after_a_lost_claim_may_be_passed_over() {
    let story = kept_story("locked-queue-model-3c-sequence-order.schedule");
    let found = "c1 s3 <- exists czxid=";
    assert!(
        story.contains(found),
        "the consumer finds the claim:\n{story}"
    );
    let claim_goes =
        r#"c2 s4 -- session expired (deleted ["/locked-queue/s1-item-0000000000-claim"])"#;
    assert!(
        story.contains(claim_goes),
        "the other's claim goes:\n{story}"
    );
}

/// Two clients of the double barrier, no fault: the last one out left, came back for the next
/// round and made its node before the other, woken by its deletion, listed the directory. The
/// other took that node for one of its round still inside and waited for it to go, while its
/// owner waited for the other to enter: both waited for ever. (On a real ensemble, a leader's
/// death lined up the same story for five clients.) A listing without the round's `ready` now
/// says that everyone has left.
#[test]
fn a_node_of_the_next_round_is_not_one_still_inside() {
    let story = kept_story("double-barrier-seed4.schedule");
    let next_round = "c0 s2 <- children [\"0000000000000001-p-0000000003\"]\n";
    let at = story.find(next_round).unwrap_or_else(|| {
        panic!("the leaver lists the next round's node:\n{story}");
    });
    // The next thing it does, past what it declares on the way.
    let after = story[at + next_round.len()..]
        .lines()
        .find(|line| !line.contains(" :: "))
        .unwrap_or_default();
    assert!(
        after.ends_with("c0 s2 => left double barrier"),
        "the leaver leaves:\n{story}"
    );
}

/// Two clients are the fewest the double barrier takes, and they line up the story above
/// without any fault, nearly every other seed before the fix: a modest sweep of them.
#[test]
fn two_double_barrier_clients_hold_without_faults() {
    let options = RunOptions {
        clients: 2,
        faults: FaultRates::none(),
        ..RunOptions::default()
    };
    holds("double-barrier", &options, 0..200);
}

/// "max wake-ups per deletion" read 4 for the semaphore and 3 for the read/write lock, whose
/// herd rules allow one waiter: it counted every session notified, a holder's leftover watch
/// and the readers a writer's release wakes together among them. It counts as the herd rule
/// does.
#[test]
fn wake_ups_per_deletion_are_counted_as_the_herd_rule_counts_them() {
    for scenario in ["semaphore", "rw-lock"] {
        let options = RunOptions::default();
        let scenario = support::scenario(scenario);
        let report = runner::sweep(scenario, 0, 300, &options, 2, &runner::run_every_seed);
        assert!(report.failures.is_empty(), "{:?}", report.failures);
        assert_eq!(report.max_wakeups_per_deletion, 1, "{}", scenario.name);
    }
}
