//! Code written on `zookeeper-client` runs under the simulator through `zklab-zookeeper-client`
//! unchanged: a leader flag (tests/zookeeper_client_dropin/leader_flag.rs), written as its
//! author would against the real crate, holds under every fault over 500 seeds; its twin with
//! the classic bug (a create that failed with ConnectionLoss taken for a win) lets two lead, a
//! failure the harness replays; and the same code on the real crate holds on a real ZooKeeper.

use std::time::Duration;

use zklab::launcher::{installed_or_skip, Standalone};
use zklab::prelude::{Harness, Outcome, TestClient, ZkClient};
use zklab::scenarios::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use zklab::testing::SEED_VARIABLE;

/// The program where `zookeeper_client` is the drop-in, as a `package =` rename makes it in a
/// user's crate: under the simulator (the workspace builds with `--cfg madsim`).
mod simulated {
    use super::*;
    use zklab_zookeeper_client as zookeeper_client;
    include!("zookeeper_client_dropin/leader_flag.rs");
}

/// The same program on the real crate.
mod real {
    use super::*;
    include!("zookeeper_client_dropin/leader_flag.rs");
}

fn harness() -> Harness<MutualExclusion> {
    Harness::new()
        .clients(3)
        .seeds(0..500)
        .monitors(MutualExclusion::default())
}

#[test]
fn a_leader_flag_on_zookeeper_client_holds_under_every_fault() {
    harness().run(|client| simulated::leads_once(client, false));
}

#[test]
fn its_twin_that_takes_connection_loss_for_a_win_lets_two_lead_and_replays() {
    let failure = harness()
        .try_run(|client| simulated::leads_once(client, true))
        .expect_err("two lead in some seed");
    assert_eq!(
        failure.violations[0].property, &MUTUAL_EXCLUSION,
        "{failure}"
    );
    let replay = failure.replay.clone().expect("a replay command");
    let seed = failure.seed.expect("a failing seed");
    assert!(
        replay.starts_with(&format!("{SEED_VARIABLE}={seed} ")),
        "{replay}"
    );
    let again = harness()
        .seeds(seed..seed + 1)
        .try_run(|client| simulated::leads_once(client, true))
        .expect_err("the seed fails again");
    assert_eq!(again.trace.digest(), failure.trace.digest(), "{again}");
}

#[test]
fn the_same_leader_flag_on_the_real_crate_holds_on_a_real_zookeeper() {
    let Some(zookeeper) = installed_or_skip("the leader flag on a real server") else {
        return;
    };
    let server = Standalone::start(&zookeeper).unwrap_or_else(|error| panic!("{error}"));
    let hosts = server.connect_string();
    let run = harness().run_real(&hosts, None, |client| real::leads_once(client, false));
    run.unwrap_or_else(|failure| panic!("{failure}"));
}
