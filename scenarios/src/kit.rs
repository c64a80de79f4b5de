//! Kits: everything the harness needs to know about one recipe, in one place.
//!
//! A kit is the recipe's model behaviour (a [`Workload`]: its machine, what the application asks
//! of it, its znode directory, the monitors that judge it) plus its client loop over a [`Host`]. The catalogue holds kits
//! behind [`AnyKit`], so `run`, `replay`, `check` and `real` take any recipe, a user's own too,
//! without knowing its types.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

#[cfg(feature = "check")]
use zklab_models::check::{check, CheckOptions, CheckReport};
#[cfg(feature = "check")]
use zklab_models::symmetry_claim::SymmetryRefused;
use zklab_models::workload::Workload;
use zklab_recipes::client::Op;
use zklab_sim::sim_client::SimClient;
use zklab_sim::trace::Trace;

use crate::host::{ClientContext, Host};
use crate::model_round;
use crate::oracle::{self, Judgement, Property, Violation};
#[cfg(feature = "real")]
use crate::real::{RealHost, TracedSession};

/// One recipe's kit.
pub trait Kit: Workload {
    /// What one client does over a run: `rounds` rounds of the recipe's workload, starting over
    /// in a new session whenever its session is lost. Returns its last session, still open, or
    /// `None` if the recipe gave up (the outcome in the trace says why).
    ///
    /// By default, the model's round, `rounds` times ([`model_round::play_rounds`]): the client
    /// makes the directory, then each round runs its part's machine, and on each hold presents
    /// the token to the protected resource, works a while and asks what the model asks of a
    /// holder. A recipe whose model says all its clients do needs no more: `impl Kit for MyKit
    /// {}`. A kit whose clients do more than the model's (a queue's puts, a barrier's
    /// controller), or whose runs need what [`Workload::setup`] makes for the model, writes its
    /// own loop.
    fn client<H: Host>(
        &self,
        host: &H,
        rounds: u32,
    ) -> impl Future<Output = Option<H::Session>> + Send {
        model_round::play_rounds(self, host, rounds)
    }
}

/// A client loop, boxed.
pub type ClientRun<S> = Pin<Box<dyn Future<Output = Option<S>> + Send>>;

/// A kit with its types erased, as the catalogue holds it.
pub trait AnyKit: Sync {
    /// The recipe's znode directory: nothing may be left in it once every client has finished,
    /// but what [`AnyKit::may_remain`] allows.
    fn root(&self) -> &str;

    /// Whether the child `child` of the directory may stay once every client is done (see
    /// [`Workload::may_remain`]).
    fn may_remain(&self, child: &str) -> bool;

    /// Whether the child `child` of the directory may stay once a client has crashed (see
    /// [`Workload::crash_may_leave`]).
    fn crash_may_leave(&self, child: &str) -> bool;

    /// The fewest clients its workload can finish with.
    fn min_clients(&self) -> usize;

    /// How many clients must still be working for those still working to finish
    /// ([`Workload::quorum_to_finish`]).
    fn quorum_to_finish(&self) -> usize;

    /// What its model makes before any client starts ([`Workload::initial_ops`]).
    fn initial_ops(&self, clients: usize) -> Vec<Op>;

    /// One simulated client's loop.
    fn simulate(&'static self, context: ClientContext, rounds: u32) -> ClientRun<SimClient>;

    /// One simulated client playing the model's round from `session` on, for a run forced
    /// through a counterexample ([`crate::model_round`]).
    fn follow(&'static self, context: ClientContext, session: SimClient) -> ClientRun<SimClient>;

    /// One client's loop against a real ZooKeeper.
    #[cfg(feature = "real")]
    fn real(&'static self, host: RealHost, rounds: u32) -> ClientRun<TracedSession>;

    /// Checks the recipe's model; `progress` hears the states generated and unique so far. A
    /// false claim to be symmetric is refused when symmetry reduction is asked for.
    #[cfg(feature = "check")]
    fn check(
        &self,
        options: &CheckOptions,
        progress: &dyn Fn(usize, usize),
    ) -> Result<CheckReport, Box<SymmetryRefused>>;

    /// Judges a simulated run's trace by the kit's monitors and the simulator's own.
    fn judge(&self, trace: &Trace, session_timeout: Duration) -> Judgement;

    /// Judges a real run's trace by the kit's monitors.
    fn judge_real(&self, trace: &Trace) -> Vec<Violation>;

    /// Every property its runs are judged by ([`oracle::properties`]).
    fn properties(&self) -> Vec<&'static Property>;
}

impl<K: Kit> AnyKit for K {
    fn root(&self) -> &str {
        Workload::root(self)
    }

    fn may_remain(&self, child: &str) -> bool {
        Workload::may_remain(self, child)
    }

    fn crash_may_leave(&self, child: &str) -> bool {
        Workload::crash_may_leave(self, child)
    }

    fn min_clients(&self) -> usize {
        Workload::min_clients(self)
    }

    fn quorum_to_finish(&self) -> usize {
        Workload::quorum_to_finish(self)
    }

    fn initial_ops(&self, clients: usize) -> Vec<Op> {
        Workload::initial_ops(self, clients)
    }

    fn simulate(&'static self, context: ClientContext, rounds: u32) -> ClientRun<SimClient> {
        Box::pin(async move { self.client(&context, rounds).await })
    }

    fn follow(&'static self, context: ClientContext, session: SimClient) -> ClientRun<SimClient> {
        Box::pin(async move { Some(model_round::play(self, &context, session).await) })
    }

    #[cfg(feature = "real")]
    fn real(&'static self, host: RealHost, rounds: u32) -> ClientRun<TracedSession> {
        Box::pin(async move { self.client(&host, rounds).await })
    }

    #[cfg(feature = "check")]
    fn check(
        &self,
        options: &CheckOptions,
        progress: &dyn Fn(usize, usize),
    ) -> Result<CheckReport, Box<SymmetryRefused>> {
        check(self.clone(), options, progress)
    }

    fn judge(&self, trace: &Trace, session_timeout: Duration) -> Judgement {
        oracle::judge(self.monitors(), trace, session_timeout)
    }

    fn judge_real(&self, trace: &Trace) -> Vec<Violation> {
        oracle::judge_real(self.monitors(), trace)
    }

    fn properties(&self) -> Vec<&'static Property> {
        oracle::properties(&self.monitors())
    }
}
