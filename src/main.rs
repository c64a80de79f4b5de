//! The `zklab` command line over zklab's own catalogue: [`zklab::cli`] over
//! [`zklab::scenarios::catalogue::scenarios`], the one call a crate with scenarios of its own
//! makes over them.

use std::process::ExitCode;

/// Counts each thread's heap, for `--memory`.
#[global_allocator]
static ALLOCATOR: zklab::cli::Allocator = zklab::cli::Allocator::NEW;

fn main() -> ExitCode {
    zklab::cli::main(zklab::scenarios::catalogue::scenarios())
}
