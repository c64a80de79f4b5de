//! A sweep runs in bounded memory: whatever a seed allocates is freed when the seed ends, so a
//! shard of a million seeds needs no more than a shard of a thousand. Counted by an allocator
//! that keeps each thread's live bytes, since a seed runs wholly on the thread that asked.

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use zklab::scenarios::runner::{run_seed, RunOptions};
use zklab::sim::fault::FaultRates;

/// The system allocator, counting the bytes each thread holds.
struct CountingAllocator;

thread_local! {
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    let _ = LIVE_BYTES.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Bytes this thread still holds after running `seeds` of `scenario` with `options`.
fn live_after(scenario: &str, seeds: std::ops::Range<u64>, options: &RunOptions) -> isize {
    let scenario = support::scenario(scenario);
    for seed in seeds {
        let report = run_seed(scenario, seed, options);
        drop(report);
    }
    LIVE_BYTES.with(Cell::get)
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
