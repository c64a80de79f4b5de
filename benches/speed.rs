//! `cargo bench`: the lock's seeded sweep and its model check, so a change that slows either
//! shows. Figures for every recipe, from the CLI, are in reports/speed.md
//! (`bash reports/measure-speed.sh`).

use std::hint::black_box;

use zklab::models::budget::Budget;
use zklab::models::check::CheckOptions;
use zklab::scenarios::catalogue;
use zklab::scenarios::runner::{run_every_seed, sweep, RunOptions};

fn main() {
    divan::main();
}

/// 200 seeds of the lock (5 clients, 10 rounds, every fault) on one thread: per seed, the
/// simulator's whole cost.
#[divan::bench(sample_count = 10)]
fn sweep_lock_200_seeds_on_one_thread() {
    let lock = catalogue::find("lock").expect("the lock");
    let report = sweep(lock, 0, 200, &RunOptions::default(), 1, &run_every_seed);
    black_box(report);
}

/// The lock's model for two clients with one of each fault, on one thread.
#[divan::bench(sample_count = 10)]
fn check_lock_2_clients_on_one_thread() {
    let lock = catalogue::find("lock").expect("the lock");
    let options = CheckOptions {
        clients: 2,
        budget: Budget::ONE_OF_EACH,
        threads: 1,
        symmetry: true,
        partial_order: true,
        forget_zxids: true,
        timeout: None,
    };
    black_box(
        lock.kit
            .check(&options, &|_, _| {})
            .expect("the lock is symmetric"),
    );
}
