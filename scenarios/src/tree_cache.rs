//! The tree cache's kit. Client 0 writes under `/tree`, round after round: it makes `n<round>`,
//! sets it, makes a leaf under it and deletes the leaf again, working a while between writes;
//! every other client keeps a copy of `/tree` until its copy is the tree the writer leaves, or
//! until it has heard nothing for [`IDLE`] (so a cache that missed a change ends, stale, for
//! the monitor to judge). The model's writer plays round 0 once; its caches follow until their
//! copy is that round's tree.
//!
//! Herd-freedom is not asked: every write is meant to reach every cache. Its known bugs: a
//! cache that applies a change of data without reading the node ([`TrustChangeEvent`]), and
//! one that reads nothing again after a reconnection ([`NoRereadAfterReconnect`]), which only
//! the simulator shows.
//!
//! [`TrustChangeEvent`]: crate::tree_cache::bugs::TrustChangeEvent
//! [`NoRereadAfterReconnect`]: crate::tree_cache::bugs::NoRereadAfterReconnect

pub mod bugs;
pub mod monitor;
pub mod writer;

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::time::Duration;

use zklab_models::workload::{directory_creates, Workload};
use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, SessionId, ZkClient};
use zklab_recipes::machine::{Driver, Input, Recipe, Step};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::parts::link::run_until;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_recipes::tree_cache::{CacheOutcome, CacheRequest, TreeCache, TreeCacheMachine};

use crate::host::{first_of, in_sessions, rounds_in_sessions, Host};
use crate::kit::Kit;
use crate::monitor::failure::NoFailures;
use crate::mutation::{Mutated, Mutation};
use crate::tree_cache::monitor::CacheTruth;
use crate::tree_cache::writer::{SubtreeWriter, WriterOutcome};

/// The cached subtree.
pub const TREE: &str = "/tree";

/// How long a cache hears nothing before it ends: longer than any pause or partition leaves a
/// correct cache behind.
pub const IDLE: Duration = Duration::from_secs(30);

/// How many pieces of work the writer does between writes: long enough that faults which
/// strike per second of sim time find caches following.
const HOLD_WORKS: u32 = 10;

/// The model's and the run's writer: client 0.
const WRITER: u8 = 0;

/// The tree cache's kit, its caches' machine under mutation `X`.
#[derive(Clone, Debug)]
pub struct TreeCacheKit<X>(PhantomData<X>);

impl<X> TreeCacheKit<X> {
    /// The kit.
    pub const KIT: Self = TreeCacheKit(PhantomData);
}

/// A client's machine: the writer's, or a cache's under mutation `X`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum TreeRole<X> {
    /// Client 0: writes round after round.
    Writer(SubtreeWriter),
    /// Every other client: keeps a copy.
    Cache(Mutated<TreeCacheMachine, X>),
}

/// What a client tells: the writer's news, or a cache's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TreeOutcome {
    /// The writer's.
    Writer(WriterOutcome),
    /// A cache's.
    Cache(CacheOutcome),
}

impl From<TreeOutcome> for Outcome {
    fn from(outcome: TreeOutcome) -> Self {
        match outcome {
            TreeOutcome::Writer(outcome) => outcome.into(),
            TreeOutcome::Cache(outcome) => outcome.into(),
        }
    }
}

impl<X: Mutation> Recipe for TreeRole<X> {
    type Request = CacheRequest;
    type Outcome = TreeOutcome;

    fn step(&mut self, input: Input<CacheRequest>) -> Step<TreeOutcome> {
        match self {
            TreeRole::Writer(writer) => writer.step(input).map_outcome(TreeOutcome::Writer),
            TreeRole::Cache(cache) => cache.step(input).map_outcome(TreeOutcome::Cache),
        }
    }
}

/// The node round `round` makes.
fn node(round: u32) -> String {
    format!("{TREE}/n{round}")
}

/// Round `round`'s writes: make its node, set it, make a leaf under it and delete the leaf.
fn writes(round: u32) -> Vec<Op> {
    let node = node(round);
    let leaf = format!("{node}/leaf");
    vec![
        Op::Create {
            path: node.clone(),
            data: b"made".to_vec(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        },
        Op::SetData {
            path: node,
            data: b"set".to_vec(),
            version: -1,
        },
        Op::Create {
            path: leaf.clone(),
            data: b"leaf".to_vec(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        },
        Op::Delete {
            path: leaf,
            version: -1,
        },
    ]
}

/// The tree the writer leaves after `rounds` rounds: each data by path.
fn tree_after(rounds: u32) -> BTreeMap<String, Vec<u8>> {
    let nodes = (0..rounds).map(|round| (node(round), b"set".to_vec()));
    std::iter::once((TREE.to_owned(), Vec::new()))
        .chain(nodes)
        .collect()
}

impl<X: Mutation> TreeCacheKit<X> {
    fn cache(rounds: u32) -> Mutated<TreeCacheMachine, X> {
        Mutated::new(TreeCacheMachine::new(TREE, Some(tree_after(rounds))))
    }

    /// Writes each round, in as many sessions as it takes.
    async fn write<H: Host>(host: &H, rounds: u32) -> Option<H::Session> {
        rounds_in_sessions!(host, rounds, |session, round| async {
            // The model starts with the directory; a run's writer makes it first.
            let mut ops = writes(round);
            if round == 0 {
                ops.splice(0..0, directory_creates(TREE));
            }
            let writer = SubtreeWriter::new(ops);
            let mut driver = Driver::new(&session, writer).recording(host.recorder());
            let wrote = |outcome: &WriterOutcome| matches!(outcome, WriterOutcome::Wrote(_));
            run_until(&mut driver, Input::Start, |outcome| {
                wrote(outcome).then_some(())
            })
            .await?;
            for _ in 0..HOLD_WORKS {
                host.work().await;
            }
            Ok(())
        })
    }

    /// Keeps a copy until it is the tree after `rounds` rounds, or until it hears nothing for
    /// [`IDLE`].
    async fn follow<H: Host>(host: &H, rounds: u32) -> Option<H::Session> {
        let cache = TreeCache::new(TREE).recording(host.recorder());
        let last = tree_after(rounds);
        let mut session = host.connect().await;
        in_sessions!(host, session, async {
            let mut copy = cache.follow_with(&session, Self::cache(rounds));
            loop {
                let idle = session.sleep(IDLE);
                match first_of(copy.changed(), idle).await {
                    None => return Ok(()),
                    Some(Ok(_)) => {
                        let data = copy.nodes().iter();
                        let now: BTreeMap<String, Vec<u8>> = data
                            .map(|(path, node)| (path.clone(), node.data.clone()))
                            .collect();
                        if now == last {
                            return Ok(());
                        }
                    }
                    Some(Err(error)) => return Err(error),
                }
            }
        })
        .ok()?;
        Some(session)
    }
}

impl<X: Mutation> Workload for TreeCacheKit<X> {
    type Machine = TreeRole<X>;
    type Monitors = (CacheTruth, NoFailures);

    fn part(&self, client: usize, _: usize) -> u8 {
        u8::from(client != 0)
    }

    /// A writer and a cache.
    fn min_clients(&self) -> usize {
        2
    }

    fn machine(&self, part: u8, _: SessionId) -> Self::Machine {
        match part {
            WRITER => TreeRole::Writer(SubtreeWriter::new(writes(0))),
            _ => TreeRole::Cache(Self::cache(1)),
        }
    }

    fn request_when_holding(&self) -> CacheRequest {}

    /// Nothing invented, never back, ending equal to the tree; no recipe failure.
    fn monitors(&self) -> Self::Monitors {
        (CacheTruth::new(TREE), NoFailures)
    }

    /// The rounds' nodes.
    fn may_remain(&self, child: &str) -> bool {
        child
            .strip_prefix('n')
            .is_some_and(|round| round.parse::<u32>().is_ok())
    }

    fn root(&self) -> &str {
        TREE
    }

    fn symmetric(&self) -> bool {
        X::SYMMETRIC
    }

    fn reads_zxids(&self) -> bool {
        false
    }
}

impl<X: Mutation> Kit for TreeCacheKit<X> {
    async fn client<H: Host>(&self, host: &H, rounds: u32) -> Option<H::Session> {
        match host.index() as u8 {
            WRITER => Self::write(host, rounds).await,
            _ => Self::follow(host, rounds).await,
        }
    }
}
