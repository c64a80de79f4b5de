//! The lock scenario: each client acquires the lock, uses the fenced resource, and releases,
//! for its number of rounds, starting a new session whenever its session expires.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use madsim::rand::{thread_rng, Rng};
use zklab_recipes::lock::{Lock, LockError, LockVariant};
use zklab_sim::client::SimClient;

use crate::scenario::ClientContext;

/// Where the lock scenarios keep their contender nodes.
pub const LOCK_DIR: &str = "/locks/lock";

/// The workload of the correct lock.
pub fn correct(ctx: ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>> {
    Box::pin(contend(ctx, LockVariant::Correct))
}

/// The workload of the lock that retries a create blindly after ConnectionLoss.
pub fn blind_retry(ctx: ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>> {
    Box::pin(contend(ctx, LockVariant::BlindRetry))
}

/// The workload of the lock whose waiters all watch the lock directory's children.
pub fn herd(ctx: ClientContext) -> Pin<Box<dyn Future<Output = Option<SimClient>> + Send>> {
    Box::pin(contend(ctx, LockVariant::Herd))
}

async fn contend(ctx: ClientContext, variant: LockVariant) -> Option<SimClient> {
    let lock = Lock::new(LOCK_DIR).with_variant(variant);
    let mut session = ctx.zk.connect(ctx.client);
    let mut rounds = 0;
    while rounds < ctx.rounds {
        let lost = match lock.acquire(&session).await {
            Ok(mut guard) => {
                // Present the token at once: the resource learns of the new holder before any
                // older holder can come back from a pause.
                ctx.resource.write(ctx.client, guard.token());
                if guard.is_safe().await {
                    let work = Duration::from_millis(thread_rng().gen_range(1..=20));
                    madsim::time::sleep(work).await;
                    // A pause may have struck during the work and the session expired meanwhile:
                    // only the fencing token protects this write.
                    ctx.resource.write(ctx.client, guard.token());
                }
                rounds += 1;
                guard.release().await
            }
            Err(error) => Err(error),
        };
        match lost {
            Ok(()) => {}
            Err(LockError::SessionLost) => session = ctx.zk.connect(ctx.client),
            // The recipe reported the failure in the trace, where an oracle judges it.
            Err(LockError::Zk(_)) => return None,
        }
    }
    Some(session)
}
