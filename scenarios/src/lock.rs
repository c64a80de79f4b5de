//! The lock scenario: each client acquires the lock, uses the fenced resource, and releases,
//! for its number of rounds, starting a new session whenever its session expires.
//!
//! The workload is written once over a [`Host`], so the very same loop runs in the simulator and
//! against a real ZooKeeper.

use std::future::{ready, Future};
use std::pin::Pin;
use std::time::Duration;

use madsim::rand::{thread_rng, Rng};
use zklab_recipes::client::ZkClient;
use zklab_recipes::lock::{Lock, LockError, LockVariant};
use zklab_sim::client::SimClient;

use crate::scenario::ClientContext;

/// Where the lock scenarios keep their contender nodes.
pub const LOCK_DIR: &str = "/locks/lock";

/// What a lock workload needs from where it runs.
pub trait Host: Sync {
    /// A session of this host's ZooKeeper.
    type Session: ZkClient + Sync;

    /// Opens a new session for this client.
    fn connect(&self) -> impl Future<Output = Self::Session> + Send;

    /// Spends a short random while working with the lock held.
    fn work(&self) -> impl Future<Output = ()> + Send;

    /// Uses the protected resource, presenting `token`; returns whether it accepted it.
    fn write(&self, token: i64) -> bool;
}

/// How long one piece of work takes, in milliseconds.
pub const WORK_MS: std::ops::RangeInclusive<u64> = 1..=20;

impl Host for ClientContext {
    type Session = SimClient;

    fn connect(&self) -> impl Future<Output = SimClient> + Send {
        ready(self.zk.connect(self.client))
    }

    fn work(&self) -> impl Future<Output = ()> + Send {
        madsim::time::sleep(Duration::from_millis(thread_rng().gen_range(WORK_MS)))
    }

    fn write(&self, token: i64) -> bool {
        self.resource.write(self.client, token)
    }
}

/// The workload of the correct lock.
pub fn correct(ctx: ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>> {
    Box::pin(async move { contend(&ctx, ctx.rounds, LockVariant::Correct).await })
}

/// The workload of the lock that retries a create blindly after ConnectionLoss.
pub fn blind_retry(ctx: ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>> {
    Box::pin(async move { contend(&ctx, ctx.rounds, LockVariant::BlindRetry).await })
}

/// The workload of the lock whose waiters all watch the lock directory's children.
pub fn herd(ctx: ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>> {
    Box::pin(async move { contend(&ctx, ctx.rounds, LockVariant::Herd).await })
}

/// Acquires, works and releases `rounds` times; returns the last session, still open, or `None`
/// if the recipe gave up.
pub async fn contend<H: Host>(host: &H, rounds: u32, variant: LockVariant) -> Option<H::Session> {
    let lock = Lock::new(LOCK_DIR).with_variant(variant);
    let mut session = host.connect().await;
    let mut done = 0;
    while done < rounds {
        let lost = match lock.acquire(&session).await {
            Ok(mut guard) => {
                // Present the token at once: the resource learns of the new holder before any
                // older holder can come back from a pause.
                host.write(guard.token());
                if guard.is_safe().await {
                    host.work().await;
                    // A pause may have struck during the work and the session expired meanwhile:
                    // only the fencing token protects this write.
                    host.write(guard.token());
                }
                done += 1;
                guard.release().await
            }
            Err(error) => Err(error),
        };
        match lost {
            Ok(()) => {}
            Err(LockError::SessionLost) => session = host.connect().await,
            // The recipe reported the failure in the trace, where an oracle judges it.
            Err(LockError::Zk(_)) => return None,
        }
    }
    Some(session)
}
