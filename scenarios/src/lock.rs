//! The lock's kit: each client acquires the lock, uses the fenced resource, and releases, for its
//! number of rounds; the model runs one round per client. Its known bugs are the lock under the
//! [`BlindRetry`] and [`WatchParent`] mutations.

use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::client::{SessionId, ZkClient};
use zklab_recipes::lock::{Lock, LockError, LockMachine, LockRequest};

use crate::host::Host;
use crate::kit::Kit;
use crate::mutation::{BlindRetry, Documented, Mutation, WatchParent};
use crate::scenario::Scenario;

/// Where the lock keeps its contender nodes.
pub const LOCK_DIR: &str = "/locks/lock";

/// The lock, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct LockKit<X>(PhantomData<X>);

impl<X> LockKit<X> {
    /// The kit.
    pub const KIT: Self = LockKit(PhantomData);
}

/// The lock's scenarios.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "lock",
        about: "exclusive lock: acquire, use a fenced resource, release",
        known_bug: false,
        kit: &LockKit::<Documented>::KIT,
    },
    Scenario {
        name: "lock-bug-blind-retry",
        about: "after ConnectionLoss on create, create again without looking for the guid",
        known_bug: true,
        kit: &LockKit::<BlindRetry>::KIT,
    },
    Scenario {
        name: "lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        known_bug: true,
        kit: &LockKit::<WatchParent>::KIT,
    },
];

impl<X: Mutation<LockMachine>> Workload for LockKit<X> {
    type Machine = X::Machine;

    fn machine(&self, session: SessionId) -> X::Machine {
        X::apply(Lock::new(LOCK_DIR).machine(session))
    }

    fn request_when_holding(&self) -> LockRequest {
        LockRequest::Release
    }

    fn root(&self) -> &str {
        LOCK_DIR
    }
}

impl<X: Mutation<LockMachine>> Kit for LockKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let lock = Lock::new(LOCK_DIR).recording(host.recorder());
        let mut session = host.connect().await;
        let mut done = 0;
        while done < rounds {
            let machine = self.machine(session.session_id());
            let lost = match lock.acquire_with(&session, machine).await {
                Ok(mut guard) => {
                    // Present the token at once: the resource learns of the new holder before
                    // any older holder can come back from a pause.
                    host.write(guard.token());
                    if guard.is_safe().await {
                        host.work().await;
                        // A pause may have struck during the work and the session expired
                        // meanwhile: only the fencing token protects this write.
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
}
