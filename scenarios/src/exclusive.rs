//! The kit of every exclusive role (the lock, the leader election): each client takes the role,
//! uses the fenced resource with its token, and lets go, for its number of rounds; the model runs
//! one round per client. A recipe's kit file names its directory and its known bugs.

use std::fmt::Debug;
use std::marker::PhantomData;

use zklab_models::workload::Workload;
use zklab_recipes::client::{SessionId, ZkClient};
use zklab_recipes::parts::exclusive::{Claim, Exclusive, Role};
use zklab_recipes::parts::link::RecipeError;
use zklab_sim::monitor::exclusion::MutualExclusion;
use zklab_sim::monitor::failure::NoFailures;
use zklab_sim::monitor::herd::Herd;

use crate::host::Host;
use crate::kit::Kit;
use crate::mutation::{Mutated, Mutation};

/// An exclusive role as the harness runs it: where its nodes live.
pub trait RoleKit: Role {
    /// The directory of the role's contender nodes.
    const DIR: &'static str;
}

/// The kit of role `R`, its machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct ExclusiveKit<R, X>(PhantomData<(R, X)>);

impl<R, X> ExclusiveKit<R, X> {
    /// The kit.
    pub const KIT: Self = ExclusiveKit(PhantomData);
}

impl<R: RoleKit, X: Mutation> Workload for ExclusiveKit<R, X> {
    type Machine = Mutated<Exclusive<R>, X>;
    type Monitors = (MutualExclusion, Herd, NoFailures);

    fn machine(&self, _: u8, session: SessionId) -> Self::Machine {
        Mutated::new(Claim::<R>::new(R::DIR).machine(session))
    }

    fn request_when_holding(&self) -> R::Request {
        R::let_go()
    }

    /// At most one holder, one waiter woken per deletion, no recipe giving up.
    fn monitors(&self) -> Self::Monitors {
        (MutualExclusion::default(), Herd::new(1), NoFailures)
    }

    fn root(&self) -> &str {
        R::DIR
    }

    fn symmetric(&self) -> bool {
        X::SYMMETRIC
    }
}

impl<R: RoleKit, X: Mutation> Kit for ExclusiveKit<R, X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        let claim = Claim::<R>::new(R::DIR).recording(host.recorder());
        let mut session = host.connect().await;
        let mut done = 0;
        while done < rounds {
            let machine = self.machine(0, session.session_id());
            let lost = match claim.acquire_with(&session, machine).await {
                Ok(mut held) => {
                    // Present the token at once: the resource learns of the new holder before
                    // any older holder can come back from a pause.
                    host.write(held.token());
                    if held.is_safe().await {
                        host.work().await;
                        // A pause may have struck during the work and the session expired
                        // meanwhile: only the fencing token protects this write.
                        host.write(held.token());
                    }
                    done += 1;
                    held.release().await
                }
                Err(error) => Err(error),
            };
            match lost {
                Ok(()) => {}
                Err(RecipeError::SessionLost) => session = host.connect().await,
                // The recipe reported the failure in the trace, where an oracle judges it.
                Err(RecipeError::Zk(_)) => return None,
            }
        }
        Some(session)
    }
}
