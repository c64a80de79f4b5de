//! Waking and waiting in a line where more than one may go at once: a read/write lock's readers,
//! a semaphore's leases. The exclusive lock's rules (one holder, one waiter woken per deletion)
//! do not fit them; these do.
//!
//! - Herd-freedom. A read/write lock, as the recipes document words it: a writer's deletion may
//!   wake every reader waiting behind it (they can all proceed together: no herd), but otherwise
//!   a deletion wakes at most one session, and never more than one that is not a reader. A
//!   semaphore: a deletion wakes at most one session that held no lease before it. A holder
//!   still watching a node it waited on is no waiter woken, nor is a session notified through a
//!   watch that its earlier node, now gone, left behind (its machine for that node is done; the
//!   one waiting now ignores the event).
//! - No waiter held back. A reader never waits on a node while no writer is ahead of its own (a
//!   reader that watches its immediate predecessor even when that is a reader is serialised
//!   behind it, which no exclusion or herd monitor sees). A semaphore's waiter whose node is
//!   among the first N is told it holds a lease within a bound.
//!
//! The monitor follows the line from the server's side of the trace (nodes made and deleted,
//! `exists` watches set on nodes that stood), by sequence number, so a model checker carries
//! little that the state of the world does not already determine.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, OpResult, SessionId};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::fault::FaultKind;
use zklab_sim::property::{Monitor, Property, Violation};
use zklab_sim::trace::{ClientId, TraceEntry, TraceEvent};

use crate::monitor::hearing::Hearing;
use crate::monitor::herd::{Herd, HERD};
use crate::monitor::{changes, take_overdue, Change};

/// No waiter held back: broken when a client kept waiting where it could go: a reader with no
/// writer ahead, a semaphore's waiter whose lease is free.
pub static HELD_BACK: Property = Property::new("held-back", "no waiter held back");

/// A node's sequence number, which places it in line.
type Sequence = i32;

/// Who may go together, and how long a waiter that may go can take to be told.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum Rule {
    /// A read/write lock whose readers' nodes carry the marker `read` and writers' `write`.
    Readers {
        /// The readers' marker.
        read: &'static str,
        /// The writers' marker.
        write: &'static str,
    },
    /// A semaphore of `leases` leases whose nodes carry `marker`.
    Leases {
        /// The leases' marker.
        marker: &'static str,
        /// How many leases.
        leases: usize,
        /// How long a waiter whose node is among the first `leases` may wait to be told.
        bound: Duration,
    },
}

/// The shared-line monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct SharedLine {
    /// The line's directory.
    dir: &'static str,
    rule: Rule,
    /// The nodes in line.
    line: BTreeMap<Sequence, InLine>,
    /// The `exists` watches each session's current node waits on, set while the node stood.
    watches: BTreeMap<Client, BTreeSet<Sequence>>,
    /// The watches left behind (under the read/write rule: the semaphore's counts only the
    /// watches that fired) by each session's earlier nodes, now gone.
    left: BTreeMap<Client, BTreeSet<Sequence>>,
    /// Per deleted node, until the server tells whom its deletion notified: the sessions
    /// whose watches the monitor saw it fire. On an ensemble that is told once every server has
    /// applied the deletion, when other nodes may have come and gone.
    fired: BTreeMap<Sequence, Fired>,
    /// The sessions told they hold a lease (under the semaphore's rule only).
    holders: BTreeSet<Client>,
    /// Sessions whose lease node is among the first, not yet told: since when, and the node.
    free: BTreeMap<Client, (Duration, Sequence)>,
    /// Clients whose process died: nothing holds their nodes back, they wait for nothing, and
    /// their nodes go once the server expires their sessions.
    #[rename(client)]
    dead: BTreeSet<ClientId>,
    /// When each client could not hear the server: a waiter is told only once it can.
    hearing: Hearing,
}

/// A node in line: whose (session and client), and whether it is a writer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct InLine {
    #[rename(session)]
    owner: SessionId,
    #[rename(client)]
    client: ClientId,
    writer: bool,
}

/// Whether each session whose watch a deletion fired counts towards a herd if notified, judged
/// as the node went: on an ensemble the notification is told once every server has applied the
/// deletion, when the line may have moved on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
struct Fired {
    counts: BTreeMap<Client, bool>,
}

/// A session in line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Client(#[rename(session)] SessionId);

impl SharedLine {
    /// A monitor of the line under `dir`, by `rule`.
    pub fn new(dir: &'static str, rule: Rule) -> Self {
        SharedLine {
            dir,
            rule,
            line: BTreeMap::new(),
            watches: BTreeMap::new(),
            left: BTreeMap::new(),
            fired: BTreeMap::new(),
            holders: BTreeSet::new(),
            free: BTreeMap::new(),
            dead: BTreeSet::new(),
            hearing: Hearing::default(),
        }
    }

    /// The sequence number of a node in line, and whether it is a writer's.
    fn place(&self, path: &str) -> Option<(Sequence, bool)> {
        let name = path.strip_prefix(self.dir)?.strip_prefix('/')?;
        let markers = match self.rule {
            Rule::Readers { read, write } => [(read, false), (write, true)],
            Rule::Leases { marker, .. } => [(marker, false), (marker, false)],
        };
        markers.into_iter().find_map(|(marker, writer)| {
            let (_, sequence) = name.rsplit_once(marker)?;
            Some((sequence.parse().ok()?, writer))
        })
    }

    /// The node at `path` is gone: it leaves the line, the watches on it fire, and those its
    /// owner set while it stood are left behind.
    fn gone(&mut self, path: &str) {
        if let Some((sequence, _)) = self.place(path) {
            if let Some(node) = self.line.remove(&sequence) {
                let watched = self.watches.remove(&Client(node.owner));
                if let (Rule::Readers { .. }, Some(watched)) = (self.rule, watched) {
                    self.left
                        .entry(Client(node.owner))
                        .or_default()
                        .extend(watched);
                }
            }
            let deleted = self.place(path);
            let mut fired = Fired::default();
            for client in self.fire(sequence) {
                let counts = self.counts(client.0, deleted, true);
                fired.counts.insert(client, counts);
            }
            if let Rule::Readers { .. } = self.rule {
                self.left.retain(|client, watched| {
                    if watched.remove(&sequence) {
                        fired.counts.entry(*client).or_insert(false);
                    }
                    !watched.is_empty()
                });
            }
            if fired != Fired::default() {
                self.fired.insert(sequence, fired);
            }
        }
    }

    /// The watches on the node `sequence` fired: returns whose.
    fn fire(&mut self, sequence: Sequence) -> BTreeSet<Client> {
        let mut whose = BTreeSet::new();
        self.watches.retain(|client, watched| {
            if watched.remove(&sequence) {
                whose.insert(*client);
            }
            !watched.is_empty()
        });
        whose
    }

    fn apply(&mut self, client: ClientId, session: SessionId, op: &Op, reply: &OpReply) {
        for change in changes(op, reply) {
            match change {
                Change::Created { path, .. } => {
                    if let Some((sequence, writer)) = self.place(path) {
                        let node = InLine {
                            owner: session,
                            client,
                            writer,
                        };
                        self.line.insert(sequence, node);
                    }
                }
                Change::Deleted(path) => self.gone(path),
                Change::Set { path, .. } => {
                    if let Some((sequence, _)) = self.place(path) {
                        self.fire(sequence);
                    }
                }
            }
        }
        if let (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_)))) = (op, reply) {
            let Some((sequence, writer)) = self.place(path) else {
                return;
            };
            // A reader whose node is gone (taken away while it was disconnected, say) is no
            // longer in line: its watch is as good as left behind.
            let in_line = self.line.values().any(|node| node.owner == session);
            let left_behind = matches!(self.rule, Rule::Readers { .. }) && !in_line;
            if !self.line.contains_key(&sequence) {
                // A node already gone is still there on a follower that has not applied its
                // deletion: the waiter is woken when it does, and waits on nothing meanwhile.
                // Whether its waking counts is judged now, while it waits.
                let counts = !left_behind && self.counts(session, Some((sequence, writer)), true);
                let fired = self.fired.entry(sequence).or_default();
                fired.counts.insert(Client(session), counts);
                return;
            }
            let watched = if left_behind {
                self.left.entry(Client(session))
            } else {
                self.watches.entry(Client(session))
            };
            watched.or_default().insert(sequence);
        }
    }

    /// Whether `session`, notified of the deletion of `deleted` (`watching` it with an `exists`
    /// watch of its node in line), counts towards a herd, as the line stands now.
    fn counts(
        &self,
        session: SessionId,
        deleted: Option<(Sequence, bool)>,
        watching: bool,
    ) -> bool {
        // A session with no node in line waits for nothing here (its own node, watched for a
        // revocation, may be the one deleted): only an exists watch it left on the line counts.
        let own = self.line.iter().find(|(_, n)| n.owner == session);
        let Some((own, _)) = own else {
            return watching;
        };
        match self.rule {
            Rule::Readers { .. } => {
                let by_writer = deleted.is_some_and(|(_, writer)| writer);
                !by_writer || !self.is_reader(session)
            }
            Rule::Leases { leases, .. } => {
                let before = deleted.is_some_and(|(sequence, _)| {
                    sequence < *own && !self.line.contains_key(&sequence)
                });
                watching && self.line.range(..*own).count() + usize::from(before) >= leases
            }
        }
    }

    /// Whether `session` waits in line as a reader only.
    fn is_reader(&self, session: SessionId) -> bool {
        let mut own = self.line.values().filter(|node| node.owner == session);
        own.clone().next().is_some() && own.all(|node| !node.writer)
    }

    /// A reader that waits on a node while no writer is ahead of its own node, if any.
    fn reader_held_back(&self) -> Option<String> {
        let first_writer = self
            .line
            .iter()
            .find(|(_, node)| node.writer)
            .map(|(sequence, _)| *sequence);
        let (session, own, watched) = self
            .line
            .iter()
            .filter(|(sequence, node)| !node.writer && first_writer.is_none_or(|w| w > **sequence))
            .filter(|(_, node)| !self.dead.contains(&node.client))
            .find_map(|(own, node)| {
                let watched = self.watches.get(&Client(node.owner))?.first()?;
                Some((node.owner, *own, *watched))
            })?;
        Some(format!(
            "s{session} waits on node {watched} though no writer is ahead of its read node {own}"
        ))
    }

    /// A waiter whose lease node has been among the first `leases` for longer than `bound`
    /// without its being told, if any.
    fn lease_held_back(&mut self, now: Duration, leases: usize, bound: Duration) -> Option<String> {
        let first: BTreeMap<Client, Sequence> = self
            .line
            .iter()
            .take(leases)
            .filter(|(_, node)| !self.dead.contains(&node.client))
            .map(|(sequence, node)| (Client(node.owner), *sequence))
            .filter(|(client, _)| !self.holders.contains(client))
            .collect();
        self.free
            .retain(|client, (_, node)| first.get(client) == Some(node));
        for (client, node) in first {
            self.free.entry(client).or_insert((now, node));
        }
        // A wait counts from when the waiter could hear its news.
        for (since, node) in self.free.values_mut() {
            let client = self.line.get(node).map(|n| n.client);
            let heard = client.map_or(Some(*since), |c| self.hearing.hearing_since(c, now));
            *since = heard.map_or(now, |heard| heard.max(*since));
        }
        let (Client(session), waited, node) = take_overdue(&mut self.free, now, bound)?;
        Some(format!(
            "s{session} has waited {waited:?} though its lease node {node} is among the first \
             {leases}"
        ))
    }

    /// The sessions the deletion `entry` tells of woke that count towards a herd: a session
    /// whose watch the monitor did not see fire (a child watch) is judged as the line stands.
    fn counted_woken(&self, entry: &TraceEntry) -> Option<Vec<SessionId>> {
        let TraceEvent::Notified { cause, .. } = &entry.event else {
            return None;
        };
        let mut woken = Herd::woken(&entry.event)?;
        let deleted = self.place(cause);
        let fired = deleted.and_then(|(sequence, _)| self.fired.get(&sequence));
        woken.retain(
            |session| match fired.and_then(|fired| fired.counts.get(&Client(*session))) {
                Some(counts) => *counts,
                None => self.counts(*session, deleted, false),
            },
        );
        Some(woken)
    }
}

impl Monitor for SharedLine {
    fn herd_count(&self, entry: &TraceEntry) -> Option<usize> {
        self.counted_woken(entry).map(|woken| woken.len())
    }

    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        self.hearing.observe(entry);
        match &entry.event {
            TraceEvent::Applied {
                client,
                session,
                op,
                reply,
                ..
            } => self.apply(*client, *session, op, reply),
            TraceEvent::Fault {
                kind: FaultKind::Crash,
                client,
                ..
            } => {
                self.dead.insert(*client);
                return None;
            }
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                for path in deleted {
                    self.gone(path);
                }
                self.watches.remove(&Client(*session));
                self.left.remove(&Client(*session));
                self.holders.remove(&Client(*session));
            }
            // Only a semaphore's rule reads who was told it holds.
            TraceEvent::Outcome { .. } if matches!(self.rule, Rule::Readers { .. }) => return None,
            TraceEvent::Outcome {
                session, outcome, ..
            } => match outcome {
                Outcome::Shared { .. } | Outcome::Granted { .. } => {
                    self.holders.insert(Client(*session));
                }
                Outcome::Released { .. } | Outcome::Lost | Outcome::Failed(_) => {
                    self.holders.remove(&Client(*session));
                }
                _ => {}
            },
            TraceEvent::Notified { cause, .. } => {
                let woken = self.counted_woken(entry)?;
                if let Some((sequence, _)) = self.place(cause) {
                    self.fired.remove(&sequence);
                }
                if woken.len() <= 1 {
                    return None;
                }
                return Herd::violation(entry, &woken);
            }
            _ => return None,
        }
        let message = match self.rule {
            Rule::Readers { .. } => self.reader_held_back(),
            Rule::Leases { leases, bound, .. } => self.lease_held_back(entry.at, leases, bound),
        }?;
        Some(Violation::new(&HELD_BACK, entry.at, message))
    }

    fn properties(&self) -> Vec<&'static Property> {
        vec![&HERD, &HELD_BACK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::traces::*;

    fn readers() -> SharedLine {
        let rule = Rule::Readers {
            read: "-read-",
            write: "-write-",
        };
        SharedLine::new("/rw", rule)
    }

    fn leases() -> SharedLine {
        let rule = Rule::Leases {
            marker: "-lease-",
            leases: 2,
            bound: Duration::from_millis(10),
        };
        SharedLine::new("/rw", rule)
    }

    /// The server deleted the node at `path` for `by`.
    fn delete(by: SessionId, path: &str) -> TraceEvent {
        TraceEvent::Applied {
            client: 0,
            session: by,
            zxid: 9,
            op: Op::Delete {
                path: path.to_owned(),
                version: -1,
            },
            reply: Ok(OpResult::Deleted),
        }
    }

    fn deleted(by: SessionId, path: &str, woken: &[SessionId]) -> TraceEvent {
        TraceEvent::Notified {
            by,
            zxid: 9,
            cause: path.to_owned(),
            deletion: true,
            sessions: woken.to_vec(),
        }
    }

    #[test]
    fn a_writer_going_may_wake_every_reader_behind_it_but_a_reader_going_wakes_one() {
        let line = vec![
            created(0, 1, "/rw/a-write-0000000001"),
            created(1, 2, "/rw/b-read-0000000002"),
            created(2, 3, "/rw/c-read-0000000003"),
        ];
        let mut readers_woken = line.clone();
        readers_woken.push(deleted(1, "/rw/a-write-0000000001", &[2, 3]));
        assert_eq!(readers().first_in(&trace(readers_woken)), None);
        let mut herd = line;
        herd.push(deleted(2, "/rw/b-read-0000000002", &[1, 3]));
        let violation = readers().first_in(&trace(herd)).expect("a herd");
        assert_eq!(violation.property, &HERD);
    }

    #[test]
    fn a_reader_waiting_with_no_writer_ahead_is_held_back() {
        let held_back = trace(vec![
            created(0, 1, "/rw/a-read-0000000001"),
            created(1, 2, "/rw/b-read-0000000002"),
            watches(1, 2, "/rw/a-read-0000000001"),
        ]);
        let violation = readers().first_in(&held_back).expect("held back");
        assert_eq!(violation.property, &HELD_BACK);
        let behind_a_writer = trace(vec![
            created(0, 1, "/rw/a-write-0000000001"),
            created(1, 2, "/rw/b-read-0000000002"),
            watches(1, 2, "/rw/a-write-0000000001"),
            ended(0, 1, &["/rw/a-write-0000000001"]),
        ]);
        assert_eq!(readers().first_in(&behind_a_writer), None);
    }

    #[test]
    fn a_reader_watching_a_writer_its_lagging_server_still_shows_is_not_held_back() {
        // The writer's node is gone at the leader; the reader's follower has not applied that
        // yet, so its exists finds the node and the reader waits to hear of the deletion.
        let lagging = trace(vec![
            created(0, 1, "/rw/a-write-0000000001"),
            created(1, 2, "/rw/b-read-0000000002"),
            delete(1, "/rw/a-write-0000000001"),
            watches(1, 2, "/rw/a-write-0000000001"),
        ]);
        assert_eq!(readers().first_in(&lagging), None);
    }

    #[test]
    fn a_waiter_whose_node_was_taken_away_is_not_counted_in_a_herd() {
        let mut line = vec![
            created(0, 1, "/rw/a-read-0000000001"),
            created(1, 2, "/rw/b-write-0000000002"),
            created(2, 3, "/rw/c-write-0000000003"),
            watches(1, 2, "/rw/a-read-0000000001"),
        ];
        // Session 3's node is deleted by another (revoked); not knowing, it watches node 1.
        let mut taken_away = line.clone();
        taken_away.push(delete(1, "/rw/c-write-0000000003"));
        taken_away.push(watches(2, 3, "/rw/a-read-0000000001"));
        taken_away.push(delete(1, "/rw/a-read-0000000001"));
        taken_away.push(deleted(1, "/rw/a-read-0000000001", &[2, 3]));
        assert_eq!(readers().first_in(&trace(taken_away)), None);
        // Still in line, the same watch makes a herd.
        line.push(watches(2, 3, "/rw/a-read-0000000001"));
        line.push(delete(1, "/rw/a-read-0000000001"));
        line.push(deleted(1, "/rw/a-read-0000000001", &[2, 3]));
        let violation = readers().first_in(&trace(line)).expect("a herd");
        assert_eq!(violation.property, &HERD);
    }

    #[test]
    fn an_owner_forced_out_and_told_through_its_own_nodes_watch_is_not_counted_in_a_herd() {
        let a = "/rw/a-read-0000000001";
        let mut events = vec![
            created(0, 1, a),
            created(1, 2, "/rw/b-write-0000000002"),
            watches(1, 2, a),
            // Another client revokes session 1's lock by deleting its node; session 1 hears of
            // it through the data watch it keeps on its own node, session 2 as the waiter.
            delete(9, a),
            deleted(9, a, &[1, 2]),
        ];
        assert_eq!(readers().first_in(&trace(events.clone())), None);
        // A second waiter watching the same node is a herd all the same.
        events.insert(2, created(2, 3, "/rw/c-write-0000000003"));
        events.insert(4, watches(2, 3, a));
        let last = events.len() - 1;
        events[last] = deleted(9, a, &[1, 2, 3]);
        let violation = readers().first_in(&trace(events)).expect("a herd");
        assert_eq!(violation.property, &HERD);
    }

    #[test]
    fn a_lease_release_wakes_one_waiter_not_counting_holders_or_watches_left_behind() {
        let a = "/rw/a-lease-0000000001";
        let line = vec![
            created(0, 1, a),
            created(1, 2, "/rw/b-lease-0000000002"),
            created(2, 3, "/rw/c-lease-0000000003"),
            created(3, 4, "/rw/d-lease-0000000004"),
            // Session 2 holds and still watches a; session 3 is the first waiter.
            watches(1, 2, a),
            watches(2, 3, a),
        ];
        let released = |mut events: Vec<TraceEvent>, woken: &[SessionId]| {
            events.push(delete(1, a));
            events.push(deleted(1, a, woken));
            leases().first_in(&trace(events))
        };
        assert_eq!(released(line.clone(), &[2, 3]), None);
        // Session 4 watches a too: a herd.
        let mut herd = line.clone();
        herd.push(watches(3, 4, a));
        let violation = released(herd, &[2, 3, 4]).expect("a herd");
        assert_eq!(violation.property, &HERD);
        // Its watch was left behind by a node it gave back: nothing is woken.
        let mut left_behind = line;
        left_behind.push(watches(3, 4, a));
        left_behind.push(delete(4, "/rw/d-lease-0000000004"));
        left_behind.push(created(3, 4, "/rw/d-lease-0000000005"));
        assert_eq!(released(left_behind, &[2, 3, 4]), None);
    }

    #[test]
    fn a_waiter_whose_lease_is_free_must_be_told_within_the_bound() {
        let told = Outcome::Shared {
            role: "lease",
            token: 1,
        };
        let mut events = vec![created(0, 1, "/rw/a-lease-0000000001"), outcome(0, 1, told)];
        events.extend((0..20).map(|_| created(1, 9, "/rw/other")));
        assert_eq!(leases().first_in(&trace(events.clone())), None);
        events.remove(1);
        let violation = leases().first_in(&trace(events)).expect("held back");
        assert_eq!(violation.property, &HELD_BACK);
    }

    #[test]
    fn a_waiter_that_cannot_hear_waits_from_a_grace_after_it_can() {
        let cut_off = TraceEvent::Fault {
            kind: FaultKind::Partition,
            client: 0,
            detail: "cut off".to_owned(),
            lasts: Duration::from_millis(5),
        };
        let waiting = |entries: u64| {
            let mut events = vec![created(0, 1, "/rw/a-lease-0000000001"), cut_off.clone()];
            events.extend((0..entries).map(|_| created(1, 9, "/rw/other")));
            leases().first_in(&trace(events))
        };
        // Entries are a millisecond apart: the bound is 10 ms, the grace two seconds.
        assert_eq!(waiting(20), None);
        let violation = waiting(2_100).expect("held back");
        assert_eq!(violation.property, &HELD_BACK);
    }

    #[test]
    fn a_waiter_whose_process_died_is_not_held_back() {
        let mut events = vec![created(0, 1, "/rw/a-lease-0000000001"), crashed(0)];
        events.extend((0..20).map(|_| created(1, 9, "/rw/other")));
        assert_eq!(leases().first_in(&trace(events.clone())), None);
        // Another client's death does not excuse it.
        events[1] = crashed(1);
        let violation = leases().first_in(&trace(events)).expect("held back");
        assert_eq!(violation.property, &HELD_BACK);
    }
}
