//! Test your own ZooKeeper code with zklab: a configuration watcher of one's own (in
//! `watcher.rs`, with a planted bug) under seeded faults, in `cargo test` or a program.
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

use std::process::ExitCode;
use std::time::Duration;

use zklab::recipes::client::{ZkClient, ZkError};
use zklab::testing::{Harness, TestClient};

use watcher::{follow, publish, Follow};

/// The version the watchers wait for.
const LAST: u32 = 5;

/// Three clients, every fault kind, 200 seeds.
fn harness() -> Harness {
    Harness::new().clients(3).seeds(0..200)
}

/// What each client does: client 0 publishes, the others follow, each starting over in a new
/// session when its session expires.
async fn part(mut client: TestClient, how: Follow) {
    if client.index() == 0 {
        for version in 1..=LAST {
            loop {
                match publish(&client, version).await {
                    Ok(()) => break,
                    Err(ZkError::SessionExpired) => client.reconnect(),
                    Err(error) => panic!("publishing version {version}: {error}"),
                }
            }
            client.note(format!("published version {version}"));
            client.sleep(Duration::from_millis(50)).await;
        }
    } else {
        loop {
            match follow(&client, LAST, how).await {
                Ok(_) => break,
                Err(ZkError::SessionExpired) => client.reconnect(),
                Err(error) => panic!("following: {error}"),
            }
        }
        client.note(format!("saw version {LAST}"));
    }
}

fn main() -> ExitCode {
    match harness().try_run(|client| part(client, Follow::TrustLostRead)) {
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
        harness().run(|client| part(client, Follow::TrustLostRead));
    }

    #[test]
    fn watchers_that_read_again_see_the_last_version() {
        harness().run(|client| part(client, Follow::ReadAgain));
    }
}
