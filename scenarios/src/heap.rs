//! The heap a seed uses, counted by the allocator, so that a run can be held to a memory
//! budget. A seed runs wholly on the thread that asked for it (madsim is single-threaded), so
//! each thread counts the bytes it holds and the most it held since its seed began.
//!
//! Counting needs [`CountingAllocator`] as the program's global allocator (the `zklab`
//! command installs it around its own). Without it every figure reads zero and no budget is
//! ever passed.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;

/// An allocator (`std::alloc::System`, or any other) counting the bytes each thread holds:
/// install it with `#[global_allocator]` to give
/// [`RunOptions::memory_budget`](crate::runner::RunOptions) and
/// [`SeedReport::heap_peak`](crate::runner::SeedReport) their figures.
pub struct CountingAllocator<A>(pub A);

/// One thread's count.
#[derive(Clone, Copy)]
struct Count {
    /// Bytes allocated on this thread and not freed on it (a thread that frees what another
    /// allocated may go below zero).
    live: i64,
    /// The most `live` has been since the seed began.
    peak: i64,
    /// `live` when the seed began.
    start: i64,
    /// Whether the seed was stopped for passing its budget.
    stopped: bool,
}

thread_local! {
    static COUNT: Cell<Count> = const {
        Cell::new(Count { live: 0, peak: 0, start: 0, stopped: false })
    };
}

fn count(bytes: i64) {
    let _ = COUNT.try_with(|count| {
        let mut now = count.get();
        now.live += bytes;
        now.peak = now.peak.max(now.live);
        count.set(now);
    });
}

// SAFETY: every call is passed on to the inner allocator unchanged.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as i64);
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as i64);
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as i64));
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as i64 - layout.size() as i64);
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

/// Whether the program's allocator counts (is a [`CountingAllocator`]): a block allocated shows
/// in this thread's count.
pub fn counted() -> bool {
    let before = live_on_this_thread();
    let block = std::hint::black_box(vec![0_u8; 64]);
    let counted = live_on_this_thread() != before;
    drop(block);
    counted
}

/// Bytes this thread holds now, counted since it started (zero without [`CountingAllocator`]).
pub fn live_on_this_thread() -> i64 {
    COUNT.with(|count| count.get().live)
}

/// Starts counting a seed on this thread, which holds `held` bytes already (a buffer kept from
/// the last seed): its peak from here.
pub(crate) fn begin_seed(held: u64) {
    COUNT.with(|count| {
        let now = count.get();
        count.set(Count {
            peak: now.live,
            start: now.live - i64::try_from(held).unwrap_or(i64::MAX),
            stopped: false,
            ..now
        });
    });
}

/// The most this thread's seed has held at once so far, in bytes.
pub(crate) fn seed_peak() -> u64 {
    COUNT.with(|count| {
        let now = count.get();
        u64::try_from(now.peak - now.start).unwrap_or(0)
    })
}

/// Whether this thread's seed has held more than `budget` bytes; if so, the seed is marked
/// stopped for it ([`seed_stopped`]).
pub(crate) fn stop_if_over(budget: u64) -> bool {
    let over = seed_peak() > budget;
    if over {
        COUNT.with(|count| {
            count.set(Count {
                stopped: true,
                ..count.get()
            })
        });
    }
    over
}

/// Whether this thread's seed was stopped by [`stop_if_over`].
pub(crate) fn seed_stopped() -> bool {
    COUNT.with(|count| count.get().stopped)
}

#[cfg(test)]
mod tests {
    /// The library's own tests run on the system allocator, which counts nothing
    /// (tests/memory.rs installs a counting one, and sees it counted).
    #[test]
    fn an_allocator_that_does_not_count_is_told_apart() {
        assert!(!super::counted());
    }
}
