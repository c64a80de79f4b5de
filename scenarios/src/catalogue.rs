//! The catalogue: every scenario `zklab`'s `list`, `run`, `replay`, `check` and `real` know, by
//! name, in one table: each recipe's kit under its documented machine, then under each of its
//! known bugs, with how the bug is caught and the model's pinned state count. Known bugs stay in
//! it for good, so the harness keeps proving it catches them. A [`Catalogue`] looks scenarios up
//! by name: this table's, or a user's own on the same command line.

use zklab_models::general_properties::{NO_STUCK_STATE, ORPHAN};
use zklab_recipes::election::ElectionRole;
use zklab_recipes::lock::LockRole;
use zklab_recipes::revocable_lock::RevocableAccess;
use zklab_recipes::rw_lock::Access;
use zklab_recipes::semaphore::Lease;

use crate::barrier::bugs::TrustAnyEvent;
use crate::barrier::monitor::BARRIER_PASSED;
use crate::barrier::BarrierKit;
use crate::config::monitor::CONFIG_STALE;
use crate::config::ConfigKit;
use crate::contained::DirectoryTakenForGranted;
use crate::double_barrier::monitor::{ENTERED_EARLY, LEFT_EARLY};
use crate::double_barrier::DoubleBarrierKit;
use crate::election::bugs::WatchLowest;
use crate::election::{ContainedElectionKit, ElectionKit};
use crate::exclusive::ExclusiveKit;
use crate::group::bugs::PersistentMember;
use crate::group::monitor::{GROUP_GHOST, GROUP_STALE};
use crate::group::GroupKit;
use crate::lock::bugs::{GiveUp, SortByName};
use crate::lock::{ContainedLockKit, LockKit};
use crate::monitor::exclusion::MUTUAL_EXCLUSION;
use crate::monitor::failure::RECIPE_FAILED;
use crate::monitor::herd::HERD;
use crate::monitor::shared_line::HELD_BACK;
use crate::monitor::stuck_waiter::STUCK_WAITER;
use crate::monitor::unowned_node::UNOWNED_NODE;
use crate::monitor::wait_for::DEADLOCK;
use crate::mutation::{
    BlindRetry, Documented, IgnoresNews, LostWakeup, SkipSync, TrustDeletion, WatchParent,
};
use crate::names::bugs::CreateOnly;
use crate::names::monitor::NAME_STALE;
use crate::names::NamesKit;
use crate::queue::bugs::{FirstByName, PersistentClaim, PlainDelete, PutBlindly, StaleListing};
use crate::queue::monitor::{DEAD_CLAIM, ITEM_LOST, ITEM_TWICE};
use crate::queue::take_order::{OUT_OF_SEQUENCE, PRIORITY_INVERTED};
use crate::queue::QueueKit;
use crate::revocable_lock::bugs::IgnoresUnlock;
use crate::revocable_lock::monitor::REVOCATION_IGNORED;
use crate::runner::LIVENESS;
use crate::rw_lock::{Miswired, SerialReaders, WriterIgnoresReaders};
use crate::scenario::BeyondTheModel::{LaggingFollower, WatchesLostWithTheConnection};
use crate::scenario::{KnownBug, ModelFault, Scenario};
use crate::semaphore::bugs::ListFirst;
use crate::shared_counter::bugs::BlindSetRetry;
use crate::shared_counter::monitor::COUNTED_TWICE;
use crate::shared_counter::SharedCounterKit;
use crate::tree_cache::bugs::{NoRereadAfterReconnect, TrustChangeEvent};
use crate::tree_cache::monitor::{CACHE_INVENTED, CACHE_STALE};
use crate::tree_cache::TreeCacheKit;
use crate::two_phase_commit::bugs::PresumeCommit;
use crate::two_phase_commit::monitor::DISAGREEMENT;
use crate::two_phase_commit::TwoPhaseCommitKit;

/// Every scenario, in listing order.
pub static SCENARIOS: &[Scenario] = &[
    // The lock (`lock.rs`).
    Scenario {
        name: "lock",
        about: "exclusive lock: acquire, use a fenced resource, release",
        bug: None,
        kit: &LockKit::<Documented>::KIT,
        states: Some(13_872),
    },
    Scenario {
        name: "lock-bug-blind-retry",
        about: "after ConnectionLoss on create, create again without looking for the guid",
        bug: Some(
            KnownBug::new(&[&DEADLOCK, &LIVENESS, &ORPHAN], 2)
                .breaking(NO_STUCK_STATE)
                .with_one(ModelFault::ConnectionLoss)
                .with_one(ModelFault::LostReply)
                .with_one(ModelFault::SessionExpiry)
                .with_one(ModelFault::Pause),
        ),
        kit: &LockKit::<BlindRetry>::KIT,
        states: Some(23_554),
    },
    Scenario {
        name: "lock-bug-give-up",
        about:
            "after ConnectionLoss on create, start over in a new session, leaving the node behind",
        bug: Some(
            KnownBug::new(&[&UNOWNED_NODE], 2)
                .breaking(NO_STUCK_STATE)
                .with_one(ModelFault::LostReply),
        ),
        kit: &LockKit::<GiveUp>::KIT,
        states: Some(604),
    },
    Scenario {
        name: "lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        bug: Some(KnownBug::new(&[&HERD], 3)),
        kit: &LockKit::<WatchParent>::KIT,
        states: Some(477),
    },
    Scenario {
        name: "lock-bug-sort-by-name",
        about: "contenders ordered by full name (so by guid) instead of by sequence number",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 2)),
        kit: &LockKit::<SortByName>::KIT,
        states: Some(162),
    },
    Scenario {
        name: "lock-bug-lost-wakeup",
        about: "a waiter whose predecessor is gone before its exists arrives waits anyway",
        bug: Some(KnownBug::new(&[&STUCK_WAITER], 3).breaking(NO_STUCK_STATE)),
        kit: &LockKit::<LostWakeup>::KIT,
        states: Some(369),
    },
    // The lock in a container directory (`lock.rs`), as Curator 5 keeps it.
    Scenario {
        name: "lock-containers",
        about: "exclusive lock whose directory is a container the server reaps when it empties",
        bug: None,
        kit: &ContainedLockKit::<Documented>::KIT,
        states: Some(43_434),
    },
    Scenario {
        name: "lock-containers-bug-no-parents",
        about: "a contender that finds the reaped directory gone fails instead of making it again",
        bug: Some(KnownBug::new(&[&RECIPE_FAILED], 2)),
        kit: &ExclusiveKit::<DirectoryTakenForGranted<LockRole>, Documented>::KIT,
        states: Some(68),
    },
    // The election (`election.rs`).
    Scenario {
        name: "election",
        about: "leader election: lead with a fenced resource, resign, run again",
        bug: None,
        kit: &ElectionKit::<Documented>::KIT,
        states: Some(13_872),
    },
    Scenario {
        name: "election-bug-trust-deletion",
        about: "a candidate leads on its predecessor's deletion without listing again",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 3).with_one(ModelFault::SessionExpiry)),
        kit: &ElectionKit::<TrustDeletion>::KIT,
        states: Some(85_523),
    },
    Scenario {
        name: "election-bug-herd",
        about: "every candidate watches the leader's node (herd effect)",
        bug: Some(KnownBug::new(&[&HERD], 3)),
        kit: &ElectionKit::<WatchLowest>::KIT,
        states: Some(2_161),
    },
    // The election in a container directory (`election.rs`), as Curator 5 keeps it.
    Scenario {
        name: "election-containers",
        about: "leader election whose directory is a container the server reaps when it empties",
        bug: None,
        kit: &ContainedElectionKit::<Documented>::KIT,
        states: Some(43_434),
    },
    Scenario {
        name: "election-containers-bug-no-parents",
        about: "a candidate that finds the reaped directory gone fails instead of making it again",
        bug: Some(KnownBug::new(&[&RECIPE_FAILED], 2)),
        kit: &ExclusiveKit::<DirectoryTakenForGranted<ElectionRole>, Documented>::KIT,
        states: Some(68),
    },
    // The read/write lock (`rw_lock.rs`).
    Scenario {
        name: "rw-lock",
        about:
            "read/write lock: readers share it, a writer holds it alone; fenced reads and writes",
        bug: None,
        kit: &ExclusiveKit::<Access, Documented>::KIT,
        states: Some(26_977),
    },
    Scenario {
        name: "rw-lock-bug-serial-readers",
        about: "a reader waits on its immediate predecessor even when that one is a reader",
        bug: Some(KnownBug::new(&[&HELD_BACK], 3)),
        kit: &ExclusiveKit::<Miswired<SerialReaders>, Documented>::KIT,
        states: Some(1_518),
    },
    Scenario {
        name: "rw-lock-bug-writer-ignores-readers",
        about: "a writer counts only writers' nodes as in line, so it writes while readers read",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 2)),
        kit: &ExclusiveKit::<Miswired<WriterIgnoresReaders>, Documented>::KIT,
        states: Some(136),
    },
    Scenario {
        name: "rw-lock-bug-herd",
        about: "every waiter watches the lock node's children (herd effect)",
        bug: Some(KnownBug::new(&[&HERD], 3)),
        kit: &ExclusiveKit::<Access, WatchParent>::KIT,
        states: Some(1_590),
    },
    // The revocable lock (`revocable_lock.rs`).
    Scenario {
        name: "revocable-lock",
        about: "revocable read/write lock: waiters ask the holder in their way to give up, and \
                force it out (fenced) after a grace period",
        bug: None,
        kit: &ExclusiveKit::<RevocableAccess, Documented>::KIT,
        states: Some(477_265),
    },
    Scenario {
        name: "revocable-lock-bug-ignores-unlock",
        about: "a holder that never heeds the ask to give up, until it is forced out",
        bug: Some(KnownBug::new(&[&REVOCATION_IGNORED], 2)),
        kit: &ExclusiveKit::<RevocableAccess, IgnoresUnlock>::KIT,
        states: Some(437),
    },
    // The semaphore (`semaphore.rs`).
    Scenario {
        name: "semaphore",
        about: "semaphore of 2 leases: at most 2 hold at once, one release wakes one waiter",
        bug: None,
        kit: &ExclusiveKit::<Lease, Documented>::KIT,
        states: Some(23_837),
    },
    Scenario {
        name: "semaphore-bug-list-first",
        about: "counts the leases from a listing taken before its own create",
        bug: Some(KnownBug::new(&[&MUTUAL_EXCLUSION], 3)),
        kit: &ExclusiveKit::<Lease, ListFirst>::KIT,
        states: Some(946),
    },
    Scenario {
        name: "semaphore-bug-lost-wakeup",
        about: "a waiter whose node ahead is gone before its exists arrives waits on it anyway",
        bug: Some(KnownBug::new(&[&STUCK_WAITER, &HELD_BACK], 3).breaking(NO_STUCK_STATE)),
        kit: &ExclusiveKit::<Lease, LostWakeup>::KIT,
        states: Some(4_644),
    },
    // The barrier (`barrier.rs`).
    Scenario {
        name: "barrier",
        about: "a controller sets each round's barrier and lifts it; the others wait at it",
        bug: None,
        kit: &BarrierKit::<Documented>::KIT,
        states: Some(5_815),
    },
    Scenario {
        name: "barrier-bug-trust-any-event",
        about: "a waiter takes any event for the barrier's removal, without reading it again",
        bug: Some(KnownBug::new(&[&BARRIER_PASSED], 2).with_one(ModelFault::SessionExpiry)),
        kit: &BarrierKit::<TrustAnyEvent>::KIT,
        states: Some(390),
    },
    // The double barrier (`double_barrier.rs`).
    Scenario {
        name: "double-barrier",
        about: "rounds of a reusable double barrier: enter once 2 are there, work, leave together",
        bug: None,
        kit: &DoubleBarrierKit::<Documented>::KIT,
        states: Some(262_766),
    },
    Scenario {
        name: "double-barrier-bug-blind-retry",
        about:
            "a participant makes a second node after a lost create reply, and counts itself twice",
        bug: Some(
            KnownBug::new(
                &[&DEADLOCK, &ENTERED_EARLY, &UNOWNED_NODE, &LIVENESS, &ORPHAN],
                2,
            )
            .breaking(ENTERED_EARLY.name)
            .with_one(ModelFault::LostReply),
        ),
        kit: &DoubleBarrierKit::<BlindRetry>::KIT,
        states: Some(8_734),
    },
    Scenario {
        name: "double-barrier-bug-trust-deletion",
        about: "the lowest participant takes the deletion of the node it waits on as everyone gone",
        bug: Some(
            KnownBug::new(
                &[
                    &ENTERED_EARLY,
                    &LEFT_EARLY,
                    &DEADLOCK,
                    &LIVENESS,
                    &ORPHAN,
                    &UNOWNED_NODE,
                ],
                3,
            )
            .breaking(LEFT_EARLY.name),
        ),
        kit: &DoubleBarrierKit::<TrustDeletion>::KIT,
        states: Some(196_893),
    },
    Scenario {
        name: "double-barrier-bug-herd",
        about: "leavers watch the whole directory: every deletion wakes them all",
        bug: Some(KnownBug::new(&[&HERD], 3)),
        kit: &DoubleBarrierKit::<WatchParent>::KIT,
        states: Some(54_271),
    },
    // The two-phase commit (`two_phase_commit.rs`).
    Scenario {
        name: "two-phase-commit",
        about: "a coordinator and its sites decide transaction after transaction",
        bug: None,
        kit: &TwoPhaseCommitKit::<Documented>::KIT,
        states: Some(582_791),
    },
    Scenario {
        name: "two-phase-commit-bug-presume-commit",
        about: "a site that voted commit takes the transaction, still undecided, as committed",
        bug: Some(KnownBug::new(&[&DISAGREEMENT], 2).with_one(ModelFault::LostReply)),
        kit: &TwoPhaseCommitKit::<PresumeCommit>::KIT,
        states: Some(2_724),
    },
    // The queue (`queue.rs`).
    Scenario {
        name: "queue",
        about: "every client puts an item and takes one, round after round; a take is recorded",
        bug: None,
        kit: &QueueKit::<Documented>::TAKE,
        states: Some(14_881),
    },
    Scenario {
        name: "queue-bug-delete-mine",
        about: "a take by plain delete reads NoNode on its retry as its own take",
        bug: Some(KnownBug::new(&[&ITEM_TWICE], 3).with_one(ModelFault::ConnectionLoss)),
        kit: &QueueKit::<PlainDelete<true>>::TAKE,
        states: Some(18_897),
    },
    Scenario {
        name: "queue-bug-delete-not-mine",
        about: "a take by plain delete reads NoNode on its retry as another's take",
        bug: Some(KnownBug::new(&[&ITEM_LOST, &LIVENESS], 2).with_one(ModelFault::LostReply)),
        kit: &QueueKit::<PlainDelete<false>>::TAKE,
        states: Some(567),
    },
    Scenario {
        name: "queue-bug-put-blindly",
        about: "a put whose reply was lost is made again without looking: two items of one put",
        bug: Some(KnownBug::new(&[&ITEM_TWICE], 2).with_one(ModelFault::LostReply)),
        kit: &QueueKit::<PutBlindly>::TAKE,
        states: Some(639),
    },
    Scenario {
        name: "queue-bug-name-order",
        about: "a consumer takes items by name, not by sequence number: a later item first",
        bug: Some(KnownBug::new(&[&OUT_OF_SEQUENCE], 2)),
        kit: &QueueKit::<FirstByName>::TAKE,
        states: Some(104),
    },
    Scenario {
        name: "priority-queue",
        about: "every client puts an item of some priority and takes the highest, round after round",
        bug: None,
        kit: &QueueKit::<Documented>::PRIORITY,
        states: Some(14_763),
    },
    Scenario {
        name: "priority-queue-bug-stale-listing",
        about: "a consumer works through its listing though the watch fired: it may pass over an item of higher priority",
        bug: Some(KnownBug::new(&[&PRIORITY_INVERTED], 2)),
        kit: &QueueKit::<StaleListing>::PRIORITY,
        states: Some(115),
    },
    Scenario {
        name: "locked-queue",
        about: "every client puts an item, then claims one, works on it and acknowledges it",
        bug: None,
        kit: &QueueKit::<Documented>::LOCKED,
        states: Some(23_139),
    },
    Scenario {
        name: "locked-queue-bug-persistent-claim",
        about: "a claim is a persistent node, so it outlives a consumer whose session ended",
        bug: Some(KnownBug::new(&[&DEAD_CLAIM, &ORPHAN, &LIVENESS], 2).with_one(ModelFault::SessionExpiry)),
        kit: &QueueKit::<PersistentClaim>::LOCKED,
        states: Some(955),
    },
    // The configuration (`config.rs`).
    Scenario {
        name: "config",
        about: "client 0 writes a value per round; the others follow it to the last",
        bug: None,
        kit: &ConfigKit::<Documented>::KIT,
        states: Some(1_023),
    },
    Scenario {
        name: "config-bug-no-reread",
        about: "a reader takes no news after its first read: it misses every change",
        bug: Some(KnownBug::new(&[&CONFIG_STALE], 2).breaking(NO_STUCK_STATE)),
        kit: &ConfigKit::<IgnoresNews>::KIT,
        states: Some(15),
    },
    // The tree cache (`tree_cache.rs`).
    Scenario {
        name: "tree-cache",
        about: "client 0 makes, sets and deletes nodes each round; the others keep a copy of the subtree",
        bug: None,
        kit: &TreeCacheKit::<Documented>::KIT,
        states: Some(43_211),
    },
    Scenario {
        name: "tree-cache-bug-trust-change-event",
        about: "a cache applies a change of data without reading the node: a value it never had",
        bug: Some(KnownBug::new(&[&CACHE_INVENTED], 2)),
        kit: &TreeCacheKit::<TrustChangeEvent>::KIT,
        states: Some(383),
    },
    Scenario {
        name: "tree-cache-bug-no-reread",
        about: "back from a disconnection, a cache reads nothing again: it misses what changed meanwhile",
        bug: Some(
            KnownBug::new(&[&CACHE_STALE], 2)
                .with_one(ModelFault::ConnectionLoss)
                .beyond_the_model(WatchesLostWithTheConnection),
        ),
        kit: &TreeCacheKit::<NoRereadAfterReconnect>::KIT,
        states: Some(785),
    },
    // The shared counter (`shared_counter.rs`).
    Scenario {
        name: "shared-counter",
        about: "every client counts increments into one node, each exactly once through lost replies and expiries",
        bug: None,
        kit: &SharedCounterKit::<Documented>::KIT,
        states: Some(1_780),
    },
    Scenario {
        name: "shared-counter-bug-blind-retry",
        about: "after ConnectionLoss on its set, a writer counts its increment again as if the set had not landed",
        bug: Some(KnownBug::new(&[&COUNTED_TWICE], 2).with_one(ModelFault::LostReply)),
        kit: &SharedCounterKit::<BlindSetRetry>::KIT,
        states: Some(186),
    },
    // Group membership (`group.rs`).
    Scenario {
        name: "group",
        about: "members join and leave each round, then stay and follow the membership",
        bug: None,
        kit: &GroupKit::<Documented>::KIT,
        states: Some(1_224),
    },
    Scenario {
        name: "group-bug-no-reread",
        about: "a member takes no news after its first read: its view misses every change",
        bug: Some(KnownBug::new(&[&GROUP_STALE], 2).breaking(NO_STUCK_STATE)),
        kit: &GroupKit::<IgnoresNews>::KIT,
        states: Some(15),
    },
    Scenario {
        name: "group-bug-persistent-member",
        about:
            "a member joins with a persistent node: it stays in every view once its session ends",
        bug: Some(
            KnownBug::new(&[&RECIPE_FAILED, &GROUP_GHOST], 2)
                .breaking(GROUP_GHOST.name)
                .with_one(ModelFault::SessionExpiry),
        ),
        kit: &GroupKit::<PersistentMember>::KIT,
        states: Some(113),
    },
    // The name service (`names.rs`).
    Scenario {
        name: "names",
        about: "each client registers a name, resolves the next, and registers a unique name",
        bug: None,
        kit: &NamesKit::<Documented>::KIT,
        states: Some(834),
    },
    Scenario {
        name: "names-bug-create-only",
        about: "a name is registered by create alone: a name registered before keeps its value",
        bug: Some(KnownBug::new(&[&NAME_STALE], 2).with_one(ModelFault::ConnectionLoss)),
        kit: &NamesKit::<CreateOnly>::KIT,
        states: Some(45),
    },
    Scenario {
        name: "names-bug-no-sync",
        about:
            "a name is resolved without a sync: a lagging follower gives a value replaced before",
        bug: Some(KnownBug::new(&[&NAME_STALE], 2).beyond_the_model(LaggingFollower)),
        kit: &NamesKit::<SkipSync>::KIT,
        states: Some(11),
    },
];

/// Every scenario of zklab's own catalogue, in listing order.
pub fn scenarios() -> impl Iterator<Item = &'static Scenario> {
    SCENARIOS.iter()
}

/// The scenario of zklab's own catalogue of that name, or an error that points to the one meant
/// ([`Catalogue::find`]).
pub fn find(name: &str) -> Result<&'static Scenario, String> {
    Catalogue::builtin().find(name)
}

/// The scenarios a command line knows by name: zklab's own ([`Catalogue::builtin`]), or a
/// user's, which `zklab::cli::main` puts on the same command line. Names are looked up here, so
/// that a slip is pointed to the scenario meant.
pub struct Catalogue {
    scenarios: Vec<&'static Scenario>,
}

/// What `run` takes for every scenario that is not a known bug, so no scenario may be named so.
pub const EVERY_SCENARIO: &str = "all";

impl Catalogue {
    /// A catalogue of `scenarios`, in listing order; an error for none, or for a name that a
    /// command line, a schedule or a file name could not carry (empty, [`EVERY_SCENARIO`],
    /// other than ASCII letters, digits, `-`, `_` and `.`), or that two scenarios share.
    pub fn new(scenarios: impl IntoIterator<Item = &'static Scenario>) -> Result<Self, String> {
        let scenarios: Vec<&'static Scenario> = scenarios.into_iter().collect();
        if scenarios.is_empty() {
            return Err("a catalogue needs at least one scenario".to_owned());
        }
        for (index, scenario) in scenarios.iter().enumerate() {
            let name = scenario.name;
            let usable = |c: char| c.is_ascii_alphanumeric() || "-_.".contains(c);
            if name.is_empty() || !name.chars().all(usable) {
                return Err(format!(
                    "the scenario name `{name}` is not one a command line and a file name can \
                     carry: use ASCII letters, digits, `-`, `_` and `.`"
                ));
            }
            if name == EVERY_SCENARIO {
                return Err(format!(
                    "no scenario may be named `{EVERY_SCENARIO}`: `run {EVERY_SCENARIO}` runs \
                     every scenario that is not a known bug"
                ));
            }
            if scenarios[..index].iter().any(|other| other.name == name) {
                return Err(format!("two scenarios are named `{name}`"));
            }
        }
        Ok(Catalogue { scenarios })
    }

    /// zklab's own catalogue, [`SCENARIOS`].
    pub fn builtin() -> Self {
        Catalogue {
            scenarios: scenarios().collect(),
        }
    }

    /// Its scenarios, in listing order.
    pub fn scenarios(&self) -> impl Iterator<Item = &'static Scenario> + '_ {
        self.scenarios.iter().copied()
    }

    /// The scenario of that name, or an error that points to the one meant: the nearest name
    /// when one is a slip of a few letters away, else the recipes (the `list` command names every
    /// scenario).
    pub fn find(&self, name: &str) -> Result<&'static Scenario, String> {
        self.scenarios()
            .find(|scenario| scenario.name == name)
            .ok_or_else(|| match self.nearest(name) {
                Some(meant) => format!(
                    "unknown scenario `{name}`; did you mean `{meant}`? (`list` names them all)"
                ),
                None => {
                    let recipes: Vec<&str> = self
                        .scenarios()
                        .filter(|scenario| scenario.bug.is_none())
                        .map(|scenario| scenario.name)
                        .collect();
                    match recipes.as_slice() {
                        [] => format!("unknown scenario `{name}`; `list` names them all"),
                        recipes => format!(
                            "unknown scenario `{name}`; the recipes are {}, and `list` names \
                             their known bugs too",
                            recipes.join(", ")
                        ),
                    }
                }
            })
    }

    /// The scenario of that name, if its workload can run with `clients` clients; else why not.
    pub fn find_fitting(&self, name: &str, clients: usize) -> Result<&'static Scenario, String> {
        let scenario = self.find(name)?;
        scenario.fits(clients)?;
        Ok(scenario)
    }

    /// The scenario name nearest to `name`, if it is a slip away: at most a quarter of its
    /// letters (and at least two: a swap of two letters) added, dropped or changed.
    fn nearest(&self, name: &str) -> Option<&'static str> {
        let allowed = (name.chars().count() / 4).max(2);
        self.scenarios()
            .map(|scenario| (edits(name, scenario.name), scenario.name))
            .filter(|(distance, _)| *distance <= allowed)
            .min()
            .map(|(_, nearest)| nearest)
    }
}

/// How many letters must be added, dropped or changed to turn `from` into `to`.
fn edits(from: &str, to: &str) -> usize {
    let to: Vec<char> = to.chars().collect();
    // `row[j]`: the edits from the letters of `from` seen so far to the first `j` of `to`.
    let mut row: Vec<usize> = (0..=to.len()).collect();
    for (i, letter) in from.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, other) in to.iter().enumerate() {
            let changed = diagonal + usize::from(letter != *other);
            diagonal = row[j + 1];
            row[j + 1] = changed.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[to.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_count_letters_added_dropped_or_changed() {
        assert_eq!(edits("lock", "lock"), 0);
        assert_eq!(edits("lokc", "lock"), 2);
        assert_eq!(edits("lock-bug-heard", "lock-bug-herd"), 1);
        assert_eq!(edits("", "abc"), 3);
        assert_eq!(edits("kitten", "sitting"), 3);
    }

    #[test]
    fn the_builtin_catalogue_is_a_valid_one() {
        let checked = Catalogue::new(scenarios()).map(|catalogue| catalogue.scenarios().count());
        assert_eq!(checked, Ok(SCENARIOS.len()));
    }

    #[test]
    fn a_catalogue_refuses_names_no_command_line_can_carry_or_two_share() {
        const fn named(name: &'static str) -> Scenario {
            Scenario {
                name,
                about: "",
                bug: None,
                kit: &LockKit::<Documented>::KIT,
                states: None,
            }
        }
        static NAMED_ALL: Scenario = named("all");
        static SPACED: Scenario = named("my lock");
        let lock = &SCENARIOS[0];
        let refused = |scenarios: &[&'static Scenario]| {
            Catalogue::new(scenarios.iter().copied())
                .map(|_| ())
                .unwrap_err()
        };
        assert!(refused(&[]).contains("at least one"));
        assert!(refused(&[&SPACED]).contains("`my lock` is not one"));
        assert!(refused(&[&NAMED_ALL]).contains("may be named `all`"));
        assert!(refused(&[lock, lock]).contains("two scenarios are named `lock`"));
    }

    #[test]
    fn a_slip_is_pointed_to_its_scenario_and_a_stranger_to_the_recipes() {
        let slip = find("lock-bug-heard").map(|s| s.name).unwrap_err();
        assert!(slip.contains("did you mean `lock-bug-herd`?"), "{slip}");
        let stranger = find("zookeeper").map(|s| s.name).unwrap_err();
        assert!(
            stranger.contains("the recipes are lock, lock-containers, election,"),
            "{stranger}"
        );
        assert!(!stranger.contains("-bug-"), "{stranger}");
    }
}
