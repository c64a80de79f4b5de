//! A sweep runs in bounded memory: whatever a seed allocates is freed when the seed ends, so a
//! shard of a million seeds needs no more than a shard of a thousand. Counted by an allocator
//! that keeps each thread's live bytes, since a seed runs wholly on the thread that asked.

mod support;

use zklab::scenarios::heap::{self, CountingAllocator};
use zklab::scenarios::runner::{run_seed, RunOptions};
use zklab::sim::fault::FaultRates;

#[global_allocator]
static ALLOCATOR: CountingAllocator<std::alloc::System> = CountingAllocator(std::alloc::System);

/// Bytes this thread still holds after running `seeds` of `scenario` with `options`.
fn live_after(scenario: &str, seeds: std::ops::Range<u64>, options: &RunOptions) -> i64 {
    let scenario = support::scenario(scenario);
    for seed in seeds {
        let report = run_seed(scenario, seed, options);
        drop(report);
    }
    heap::live_on_this_thread()
}

/// Runs 40 seeds to settle the buffers a sweep keeps for reuse, then 100 more: those may keep
/// less than a kilobyte each (a seed used to keep some 44 KB).
fn assert_seeds_free_their_memory(scenario: &str, options: &RunOptions) {
    let settled = live_after(scenario, 0..40, options);
    let after = live_after(scenario, 40..140, options);
    let kept_per_seed = (after - settled) / 100;
    assert!(
        kept_per_seed < 1024,
        "{scenario}: each seed kept {kept_per_seed} bytes ({settled} live after 40 seeds, \
         {after} after 140)"
    );
}

#[test]
fn a_passing_seed_frees_what_it_allocated_under_every_fault() {
    assert_seeds_free_their_memory("lock", &RunOptions::default());
}

#[test]
fn a_passing_seed_frees_what_it_allocated_without_faults() {
    let options = RunOptions {
        faults: FaultRates::none(),
        ..RunOptions::default()
    };
    assert_seeds_free_their_memory("lock", &options);
}

#[test]
fn a_failing_seed_frees_what_it_allocated() {
    assert_seeds_free_their_memory("lock-bug-herd", &RunOptions::default());
}

#[test]
fn a_stuck_seed_frees_what_it_allocated() {
    assert_seeds_free_their_memory("lock-bug-lost-wakeup", &RunOptions::default());
}

/// A seed that holds more heap than its budget stops, unjudged, and says so; within its budget
/// it runs the same story as without one.
#[test]
fn a_seed_past_its_memory_budget_stops_and_one_within_runs_unchanged() {
    let scenario = support::scenario("lock");
    let options = RunOptions {
        rounds: 40,
        ..RunOptions::default()
    };
    assert!(heap::counted());
    let free = run_seed(scenario, 3, &options);
    assert!(free.heap_peak > 100_000, "counted: {}", free.heap_peak);
    assert!(!free.over_budget);
    let within = RunOptions {
        memory_budget: Some(free.heap_peak * 2),
        ..options.clone()
    };
    let report = run_seed(scenario, 3, &within);
    assert!(!report.over_budget);
    assert_eq!(report.trace.digest(), free.trace.digest());
    let past = RunOptions {
        memory_budget: Some(free.heap_peak / 3),
        ..options
    };
    let report = run_seed(scenario, 3, &past);
    assert!(
        report.over_budget,
        "peak {} of {}",
        report.heap_peak, free.heap_peak
    );
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    assert!(report.trace.entries().len() < free.trace.entries().len());
}
