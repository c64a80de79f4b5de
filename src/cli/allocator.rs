//! The command line's allocator: mimalloc, which the model checker's millions of cloned and
//! dropped states want, asked through its cheapest entry points and keeping what it frees, and
//! counted per thread so that `--memory` can hold a seed to its share. A library cannot install
//! a global allocator for the program that uses it (a test of its own may install another), so
//! the program's `main` does: `zklab`'s, and each that calls [`super::main`].

use std::alloc::{GlobalAlloc, Layout};

use crate::scenarios::heap::CountingAllocator;

/// The allocator of a program that runs the command line: install it with
/// `#[global_allocator] static ALLOCATOR: zklab::cli::Allocator = zklab::cli::Allocator::NEW;`.
/// The model checker clones and drops states by the million: with the system allocator it
/// spends a third of its time allocating, and mimalloc makes a check about 15% faster.
pub struct Allocator(CountingAllocator<Mimalloc>);

impl Allocator {
    /// The allocator, for a `static`.
    pub const NEW: Allocator = Allocator(CountingAllocator(Mimalloc));
}

// SAFETY: every call is passed on to the counting allocator around mimalloc unchanged.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

/// mimalloc, asked for a block of the usual alignment through its plain entry points. The
/// `mimalloc` crate asks for every block through the aligned ones, whose alignment arithmetic
/// is about a third of a small allocation's instructions (1.2% of a lock sweep's); `mi_malloc`
/// aligns a block to 16 bytes, or to its size if smaller, which is all the standard library's
/// own allocator counts on from `malloc` too.
struct Mimalloc;

/// The alignment `mi_malloc` gives every block at least as large (`MI_MAX_ALIGN_SIZE`).
const PLAIN_ALIGN: usize = 16;

impl Mimalloc {
    /// Whether a block of `size` bytes aligned to `align` can come from the plain entry points.
    fn plain(size: usize, align: usize) -> bool {
        align <= PLAIN_ALIGN && align <= size
    }
}

// SAFETY: every block comes from mimalloc and goes back to it (`mi_free` takes any of its
// blocks, and `mi_realloc` any block whose new size `plain` accepts); a plain block is aligned
// as `plain` requires, the others as mimalloc's aligned entry points guarantee.
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::plain(layout.size(), layout.align()) {
            // SAFETY: a size mimalloc may be asked for; any pointer it returns is the block's.
            unsafe { libmimalloc_sys::mi_malloc(layout.size()).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::plain(layout.size(), layout.align()) {
            // SAFETY: as in `alloc`.
            unsafe { libmimalloc_sys::mi_zalloc(layout.size()).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on; `mi_free` takes a block of either kind.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if Self::plain(new_size, layout.align()) {
            // SAFETY: `ptr` is a live mimalloc block (the caller's contract); the new block is
            // aligned as `plain` requires.
            unsafe { libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast() }
        } else {
            // SAFETY: the caller's contract, passed on.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

/// mimalloc's `mi_option_purge_delay` (its place in `mi_option_e`, mimalloc.h), which
/// libmimalloc-sys gives no name.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// A sweep builds and drops a runtime for every seed. mimalloc gives freed memory back to the
/// system 10 ms later by default, and the kernel then clears the same pages again for the next
/// seed: kept, a lock sweep runs about 5% faster. A run's memory is its peak either way.
pub(crate) fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's options, which it reads at each purge; no memory is touched.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}
