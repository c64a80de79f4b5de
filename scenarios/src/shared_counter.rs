//! The shared counter's kit. Every client is a writer named after its client (`c0`, `c1`, ...),
//! in every session; each round it counts one increment, numbered by the round from 1, asking
//! for it again by the same number in a new session whenever its session ends first, and
//! works a while once it is told the increment counted. The model's clients count one
//! increment each, from a directory without the counter's node, so their first writes race to
//! create it.
//!
//! Herd-freedom is not asked: the counter sets no watch. The writers are named by their
//! clients, so the model is not symmetric. Its known bug: a writer that takes a set whose reply
//! was lost for one that did not land, and counts its increment again ([`BlindSetRetry`]).
//!
//! [`BlindSetRetry`]: crate::shared_counter::bugs::BlindSetRetry

pub mod bugs;
pub mod monitor;

use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::client::SessionId;
use zklab_recipes::shared_counter::{CounterMachine, CounterRequest, SharedCounter};

use crate::host::{rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};
use crate::shared_counter::monitor::CountedOnce;

/// Where the counter lives.
pub const COUNTER_DIR: &str = "/counter";

/// The counter's node.
pub const COUNTER_NODE: &str = "count";

/// The shared counter's kit, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct SharedCounterKit<X>(PhantomData<X>);

impl<X> SharedCounterKit<X> {
    /// The kit.
    pub const KIT: Self = SharedCounterKit(PhantomData);
}

fn counter_path() -> String {
    format!("{COUNTER_DIR}/{COUNTER_NODE}")
}

/// The counter of client `client`, writing under its name.
fn counter(client: usize) -> SharedCounter {
    SharedCounter::new(&counter_path(), &format!("c{client}"))
}

impl<X: Mutation> Workload for SharedCounterKit<X> {
    type Machine = Mutated<CounterMachine, X>;
    type Monitors = (CountedOnce, NoFailures);

    /// Each client writes under a name of its own.
    fn part(&self, client: usize, _: usize) -> u8 {
        client as u8
    }

    fn machine(&self, part: u8, _: SessionId) -> Self::Machine {
        Mutated::new(counter(usize::from(part)).machine(1))
    }

    fn request_when_holding(&self) -> CounterRequest {}

    /// Counted once, nothing lost, the count what was acknowledged; no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        (CountedOnce::new(&counter_path()), NoFailures)
    }

    /// The counter itself.
    fn may_remain(&self, child: &str) -> bool {
        child == COUNTER_NODE
    }

    fn root(&self) -> &str {
        COUNTER_DIR
    }

    /// The node's data names the writers, which are the clients': swapping two clients
    /// changes it.
    fn symmetric(&self) -> bool {
        false
    }

    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for SharedCounterKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let counter = counter(host.index()).recording(host.recorder());
        rounds_in_sessions!(host, rounds, |session, round| async {
            let machine = Mutated::<_, X>::new(counter.machine(i64::from(round) + 1));
            counter.increment_with(&session, machine).await?;
            host.work().await;
            Ok(())
        })
    }
}
