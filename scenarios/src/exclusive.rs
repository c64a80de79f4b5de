//! The kit of every role (the lock, the leader election, the read/write lock, the revocable lock,
//! the semaphore): each client takes its role, uses the fenced resource with its token (reading it
//! under a role held shared, writing it otherwise), checking in between uses, and lets go, for its
//! number of rounds; the model runs one round per client. A
//! recipe's kit file names its directory and its known bugs, and, unless its role is a
//! [`SoleRole`], which role each client plays and its monitors.

use std::fmt::Debug;
use std::marker::PhantomData;

use zklab_models::workload::{directory_creates, Workload};
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::parts::exclusive::{Claim, Exclusive, Role};
use zklab_recipes::parts::link::RecipeError;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::property::Monitor;

use crate::host::{in_sessions, Host};
use crate::kit::Kit;
use crate::model_round::with_directory;
use crate::monitor::exclusion::MutualExclusion;
use crate::monitor::failure::NoFailures;
use crate::monitor::herd::Herd;
use crate::mutation::{Mutated, Mutation};

/// A role as the harness runs it: where its nodes live, who plays what, what judges it.
pub trait RoleKit: Role {
    /// The directory of the role's contender nodes.
    const DIR: &'static str;

    /// The monitors that judge the recipe.
    type Monitors: Monitor + RenameSessions + Send + Sync;

    /// Fresh monitors.
    fn monitors() -> Self::Monitors;

    /// Which part client `client` of `clients` plays; by default all play the same.
    fn part(client: usize, clients: usize) -> u8 {
        let _ = (client, clients);
        0
    }

    /// The role a client playing `part` contends for.
    fn playing(part: u8) -> Self;

    /// Whether its holder only reads the resource (a role held shared).
    fn reads(&self) -> bool {
        false
    }

    /// How many pieces of work a holder does after its first use, checking in before each.
    const USES: u32 = 1;

    /// Whether the directory is a container (see `zklab_recipes::parts::contained`).
    const CONTAINER: bool = false;
}

/// A role one client holds at a time, every client contending for it alike (the lock, the
/// leader election): its kit needs nothing but its directory.
pub trait SoleRole: Role + Default {
    /// The directory of the role's contender nodes.
    const DIR: &'static str;

    /// Whether the directory is a container.
    const CONTAINER: bool = false;
}

/// The monitors of a [`SoleRole`]: at most one holder, one waiter woken per deletion, no recipe
/// giving up.
pub type ExclusiveMonitors = (MutualExclusion, Herd, NoFailures);

impl<R: SoleRole> RoleKit for R {
    const DIR: &'static str = <R as SoleRole>::DIR;
    const CONTAINER: bool = <R as SoleRole>::CONTAINER;
    type Monitors = ExclusiveMonitors;

    fn monitors() -> ExclusiveMonitors {
        (MutualExclusion::default(), Herd::new(1), NoFailures)
    }

    fn playing(_: u8) -> R {
        R::default()
    }
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
    type Monitors = R::Monitors;

    fn part(&self, client: usize, clients: usize) -> u8 {
        R::part(client, clients)
    }

    fn machine(&self, part: u8, session: SessionId) -> Self::Machine {
        Mutated::new(Claim::with_role(R::DIR, R::playing(part)).machine(session))
    }

    fn request_when_holding(&self) -> R::Request {
        R::let_go()
    }

    /// The directory, level by level; a container directory is one from the start (made by a
    /// contender that has gone) and has never had a child.
    fn initial_ops(&self, _clients: usize) -> Vec<Op> {
        let mut ops = directory_creates(R::DIR);
        if let (true, Some(Op::Create { mode, .. })) = (R::CONTAINER, ops.last_mut()) {
            *mode = CreateMode::Container;
        }
        ops
    }

    fn monitors(&self) -> Self::Monitors {
        R::monitors()
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
        let part = R::part(host.index(), host.clients());
        let role = R::playing(part);
        let use_resource = |token| {
            if role.reads() {
                host.read(token)
            } else {
                host.write(token)
            }
        };
        // The fence is called only by a role that forces a holder out (a revocable lock's).
        let claim = Claim::with_role(R::DIR, role.clone())
            .recording(host.recorder())
            .fencing(host.fence());
        let mut session = host.connect().await;
        // A container directory is there when the clients start, as in the model: made by the
        // application, never used yet, for the reaper to take once it has been.
        if R::CONTAINER {
            session = with_directory(host, session, &self.initial_ops(host.clients())).await?;
        }
        let mut done = 0;
        in_sessions!(host, session, async {
            while done < rounds {
                let machine = self.machine(part, session.session_id());
                let ended = match claim.acquire_with(&session, machine).await {
                    Ok(mut held) => {
                        // Present the token at once: the resource learns of the new holder
                        // before any older holder can come back from a pause.
                        use_resource(held.token());
                        for _ in 0..R::USES {
                            if !held.is_safe().await {
                                break;
                            }
                            host.work().await;
                            // A pause may have struck during the work and the session expired
                            // meanwhile: only the fencing token protects this use.
                            use_resource(held.token());
                        }
                        done += 1;
                        held.release().await
                    }
                    Err(error) => Err(error),
                };
                match ended {
                    // Asked to give up its place before it held: that round is over.
                    Err(RecipeError::Revoked) => done += 1,
                    ended => ended?,
                }
            }
            Ok(())
        })
        .ok()?;
        Some(session)
    }
}
