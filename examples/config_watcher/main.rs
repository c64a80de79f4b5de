//! Test your own ZooKeeper code with zklab: a configuration watcher of one's own (in
//! `watcher.rs`, with a planted bug) under seeded faults, in `cargo test` or a program
//! (`workload.rs` is what each client does with it).
//!
//! Client 0 publishes versions 1 to 5 of a setting; every other client follows it until it has
//! seen version 5. The harness runs this on the simulated ZooKeeper for 200 seeds with every
//! fault kind, and a watcher that waits for good fails its seed.
//!
//! ```sh
//! cargo run --example config_watcher                  # finds the bug, prints the replay command
//! ZKLAB_SEED=<seed> cargo run --example config_watcher  # that seed's whole trace, the same bytes
//! cargo test --example config_watcher                 # the same as tests: the fixed watcher holds
//! ```

mod watcher;
mod workload;

use std::process::ExitCode;

use zklab::testing::Harness;

use watcher::Follow;
use workload::publish_and_follow;

/// The version the watchers wait for.
const LAST: u32 = 5;

/// Three clients, every fault kind, 200 seeds.
fn harness() -> Harness {
    Harness::new().clients(3).seeds(0..200)
}

fn main() -> ExitCode {
    match harness().try_run(|client| publish_and_follow(client, Follow::TrustLostRead, LAST)) {
        Ok(passed) => {
            println!(
                "{} seeds held: the planted bug escaped",
                passed.seeds.end - passed.seeds.start
            );
            ExitCode::SUCCESS
        }
        Err(failure) => {
            println!("{failure}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails, on purpose: the planted bug leaves a watcher waiting for good.
    #[test]
    fn watchers_see_the_last_version() {
        harness().run(|client| publish_and_follow(client, Follow::TrustLostRead, LAST));
    }

    #[test]
    fn watchers_that_read_again_see_the_last_version() {
        harness().run(|client| publish_and_follow(client, Follow::ReadAgain, LAST));
    }
}
