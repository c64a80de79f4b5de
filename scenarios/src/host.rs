//! Where a kit's clients run: the [`Host`] seam, and the simulator's side of it.
//!
//! A kit's client loop is written once over a `Host`, so the very same loop runs in the
//! simulator and against a real ZooKeeper (`crate::real`).

use std::future::{ready, Future};
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{select, Either};
use madsim::rand::{thread_rng, Rng};
use zklab_recipes::client::ZkClient;
use zklab_recipes::outcome::Recorder;
use zklab_recipes::parts::exclusive::Fence;
use zklab_sim::service::SimZk;
use zklab_sim::sim_client::{SimClient, TraceRecorder};
use zklab_sim::trace::ClientId;

use crate::resource::FencedResource;

/// What a client loop needs from where it runs.
pub trait Host: Sync {
    /// A session of this host's ZooKeeper.
    type Session: ZkClient + Sync + Send;

    /// Which client this is (0, 1, ...): a kit whose clients play different parts picks by it.
    fn index(&self) -> usize;

    /// How many clients the run has (a two-phase commit's coordinator counts its sites by it).
    fn clients(&self) -> usize;

    /// Opens a new session for this client.
    fn connect(&self) -> impl Future<Output = Self::Session> + Send;

    /// Spends a short random while working with what the recipe granted.
    fn work(&self) -> impl Future<Output = ()> + Send;

    /// Time since the run began, on this host's clock.
    fn elapsed(&self) -> Duration;

    /// Writes to the protected resource, presenting `token`; returns whether it accepted it.
    fn write(&self, token: i64) -> bool;

    /// Reads the protected resource, presenting `token` (of a lock held shared); returns whether
    /// it accepted it.
    fn read(&self, token: i64) -> bool;

    /// Where the recipes of this client write down what they tell it.
    fn recorder(&self) -> Option<Arc<dyn Recorder>>;

    /// What makes the protected resource refuse a token for good (a holder forced out).
    fn fence(&self) -> Fence;
}

/// How long one piece of work takes, in milliseconds.
pub const WORK_MS: std::ops::RangeInclusive<u64> = 1..=20;

/// One simulated client: its place in the simulated service and the resource the run shares.
pub struct ClientContext {
    /// The simulated ZooKeeper service: connect to it for a session.
    pub zk: SimZk,
    /// Which client this is.
    pub client: ClientId,
    /// How many clients the run has.
    pub clients: ClientId,
    /// The resource the recipe protects.
    pub resource: FencedResource,
}

impl Host for ClientContext {
    type Session = SimClient;

    fn index(&self) -> usize {
        self.client as usize
    }

    fn clients(&self) -> usize {
        self.clients as usize
    }

    fn connect(&self) -> impl Future<Output = SimClient> + Send {
        ready(self.zk.connect(self.client))
    }

    fn work(&self) -> impl Future<Output = ()> + Send {
        madsim::time::sleep(Duration::from_millis(thread_rng().gen_range(WORK_MS)))
    }

    fn elapsed(&self) -> Duration {
        self.zk.elapsed()
    }

    fn write(&self, token: i64) -> bool {
        self.resource.write(self.client, token)
    }

    fn read(&self, token: i64) -> bool {
        self.resource.read(self.client, token)
    }

    fn recorder(&self) -> Option<Arc<dyn Recorder>> {
        Some(Arc::new(TraceRecorder::new(self.zk.clone(), self.client)))
    }

    fn fence(&self) -> Fence {
        let resource = self.resource.clone();
        Arc::new(move |token| resource.refuse(token))
    }
}

/// What `work` gives, or `None` if `timer` goes off first: how a follower waits for news no
/// longer than it must.
pub async fn first_of<T>(
    work: impl Future<Output = T>,
    timer: impl Future<Output = ()>,
) -> Option<T> {
    match select(pin!(work), pin!(timer)).await {
        Either::Left((done, _)) => Some(done),
        Either::Right(((), _)) => None,
    }
}

/// Runs `$attempt`, an async block over the client's current session `$session`, and again in
/// a new session, which takes its place, each time the attempt ends by losing its session: how a
/// kit's client starts over whenever its session is lost. Gives how the first attempt that kept
/// its session ended; an error there the recipe has reported in the trace, where a monitor
/// judges it, so the client gives up. A macro, not a function over an async closure: rustc cannot
/// yet tell that such a closure's future is `Send`, which a kit's client loop must be.
macro_rules! in_sessions {
    ($host:expr, $session:expr, $attempt:expr) => {
        loop {
            match $attempt.await {
                Err(::zklab_recipes::parts::link::RecipeError::SessionLost) => {
                    $session = $crate::host::Host::connect($host).await;
                }
                ended => break ended,
            }
        }
    };
}

pub(crate) use in_sessions;

/// A client's rounds, `0..$rounds`, in one session after another: each round is the async block
/// `$attempt` over the session `$session` and the round `$round`, run as [`in_sessions!`] runs
/// it. Gives the client's last session, or `None` once a round ended in the recipe's error.
macro_rules! rounds_in_sessions {
    ($host:expr, $rounds:expr, |$session:ident, $round:ident| $attempt:expr) => {
        'rounds: {
            let mut $session = $crate::host::Host::connect($host).await;
            for $round in 0..$rounds {
                if $crate::host::in_sessions!($host, $session, $attempt).is_err() {
                    break 'rounds None;
                }
            }
            Some($session)
        }
    };
}

pub(crate) use rounds_in_sessions;
