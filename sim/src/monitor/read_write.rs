//! The read/write lock's own rules for waking and waiting, which the exclusive lock's do not fit.
//!
//! - Herd-freedom, as the recipes document words it for this recipe: a writer's deletion may wake
//!   every reader waiting behind it (they can all proceed together: no herd), but otherwise a
//!   deletion wakes at most one session, and never more than one that is not a reader.
//! - Readers proceed together: a reader never waits on a node while no writer is ahead of its
//!   own. A reader that watches its immediate predecessor even when that one is a reader is
//!   serialised behind it, which no exclusion or herd monitor sees.
//!
//! The monitor follows the lock's line from the server's side of the trace (nodes made and
//! deleted, `exists` watches set on nodes that stood), by sequence number, so a model checker
//! carries nothing that the server's state does not already determine.

use std::collections::{BTreeMap, BTreeSet};

use zklab_recipes::client::{Op, OpReply, OpResult, SessionId};
use zklab_recipes::symmetry::RenameSessions;

use super::herd::Herd;
use super::{changes, Change, Monitor, Violation, ViolationKind};
use crate::trace::{TraceEntry, TraceEvent};

/// A node's sequence number, which places it in line.
type Sequence = i32;

/// The read/write lock monitor.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct ReadWrite {
    /// The lock's directory.
    dir: &'static str,
    /// The marker of a reader's node.
    read: &'static str,
    /// The marker of a writer's node.
    write: &'static str,
    /// The nodes in line.
    line: BTreeMap<Sequence, InLine>,
    /// The nodes in line each session has an `exists` watch on, set while the node stood.
    watches: BTreeMap<Watcher, BTreeSet<Sequence>>,
}

/// A node in line: whose, and whether it is a writer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
struct InLine {
    #[rename(session)]
    owner: SessionId,
    writer: bool,
}

/// A session that watches nodes in line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
struct Watcher(#[rename(session)] SessionId);

impl ReadWrite {
    /// A monitor of the lock under `dir`, whose readers' nodes carry the marker `read` and
    /// whose writers' carry `write`.
    pub fn new(dir: &'static str, read: &'static str, write: &'static str) -> Self {
        ReadWrite {
            dir,
            read,
            write,
            line: BTreeMap::new(),
            watches: BTreeMap::new(),
        }
    }

    /// The sequence number of a node in line, and whether it is a writer's.
    fn place(&self, path: &str) -> Option<(Sequence, bool)> {
        let name = path.strip_prefix(self.dir)?.strip_prefix('/')?;
        [(self.read, false), (self.write, true)]
            .into_iter()
            .find_map(|(marker, writer)| {
                let (_, sequence) = name.rsplit_once(marker)?;
                Some((sequence.parse().ok()?, writer))
            })
    }

    /// The node at `path` is gone: it leaves the line, and the watches on it fire.
    fn gone(&mut self, path: &str) {
        if let Some((sequence, _)) = self.place(path) {
            self.line.remove(&sequence);
            self.fired(sequence);
        }
    }

    /// The watches on the node `sequence` fired.
    fn fired(&mut self, sequence: Sequence) {
        self.watches.retain(|_, watched| {
            watched.remove(&sequence);
            !watched.is_empty()
        });
    }

    fn apply(&mut self, session: SessionId, op: &Op, reply: &OpReply) {
        for change in changes(op, reply) {
            match change {
                Change::Created { path, .. } => {
                    if let Some((sequence, writer)) = self.place(path) {
                        let owner = session;
                        self.line.insert(sequence, InLine { owner, writer });
                    }
                }
                Change::Deleted(path) => self.gone(path),
                Change::Set { path, .. } => {
                    if let Some((sequence, _)) = self.place(path) {
                        self.fired(sequence);
                    }
                }
            }
        }
        if let (Op::Exists { path, watch: true }, Ok(OpResult::Exists(Some(_)))) = (op, reply) {
            if let Some((sequence, _)) = self.place(path) {
                let watched = self.watches.entry(Watcher(session)).or_default();
                watched.insert(sequence);
            }
        }
    }

    /// A reader that waits on a node while no writer is ahead of its own node, if any.
    fn held_back(&self) -> Option<(SessionId, Sequence, Sequence)> {
        let first_writer = self
            .line
            .iter()
            .find(|(_, node)| node.writer)
            .map(|(sequence, _)| *sequence);
        self.line
            .iter()
            .filter(|(sequence, node)| !node.writer && first_writer.is_none_or(|w| w > **sequence))
            .find_map(|(own, node)| {
                let watched = self.watches.get(&Watcher(node.owner))?.first()?;
                Some((node.owner, *own, *watched))
            })
    }

    /// Whether `session` waits in line as a reader only.
    fn is_reader(&self, session: SessionId) -> bool {
        let mut own = self.line.values().filter(|node| node.owner == session);
        own.clone().next().is_some() && own.all(|node| !node.writer)
    }
}

impl Monitor for ReadWrite {
    fn observe(&mut self, entry: &TraceEntry) -> Option<Violation> {
        match &entry.event {
            TraceEvent::Applied {
                session, op, reply, ..
            } => self.apply(*session, op, reply),
            TraceEvent::SessionEnded {
                session, deleted, ..
            } => {
                for path in deleted {
                    self.gone(path);
                }
                self.watches.remove(&Watcher(*session));
            }
            TraceEvent::Notified { cause, .. } => {
                let woken = Herd::woken(&entry.event)?;
                let by_writer = self.place(cause).is_some_and(|(_, writer)| writer);
                let (readers, others): (Vec<SessionId>, Vec<SessionId>) =
                    woken.iter().partition(|session| self.is_reader(**session));
                let counted = others.len() + if by_writer { 0 } else { readers.len() };
                if counted <= 1 {
                    return None;
                }
                return Herd::violation(entry, &woken);
            }
            _ => return None,
        }
        let (session, own, watched) = self.held_back()?;
        let message = format!(
            "s{session} waits on node {watched} though no writer is ahead of its read node {own}: \
             readers are held back"
        );
        Some(Violation {
            kind: ViolationKind::ReaderHeldBack,
            at: entry.at,
            message,
        })
    }

    fn kinds(&self) -> Vec<ViolationKind> {
        vec![ViolationKind::Herd, ViolationKind::ReaderHeldBack]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::testing::*;

    fn monitor() -> ReadWrite {
        ReadWrite::new("/rw", "-read-", "-write-")
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
        assert_eq!(monitor().first_in(&trace(readers_woken)), None);
        let mut herd = line;
        herd.push(deleted(2, "/rw/b-read-0000000002", &[1, 3]));
        let violation = monitor().first_in(&trace(herd)).expect("a herd");
        assert_eq!(violation.kind, ViolationKind::Herd);
    }

    #[test]
    fn a_reader_waiting_with_no_writer_ahead_is_held_back() {
        let held_back = trace(vec![
            created(0, 1, "/rw/a-read-0000000001"),
            created(1, 2, "/rw/b-read-0000000002"),
            watches(1, 2, "/rw/a-read-0000000001"),
        ]);
        let violation = monitor().first_in(&held_back).expect("held back");
        assert_eq!(violation.kind, ViolationKind::ReaderHeldBack);
        let behind_a_writer = trace(vec![
            created(0, 1, "/rw/a-write-0000000001"),
            created(1, 2, "/rw/b-read-0000000002"),
            watches(1, 2, "/rw/a-write-0000000001"),
            ended(0, 1, &["/rw/a-write-0000000001"]),
        ]);
        assert_eq!(monitor().first_in(&behind_a_writer), None);
    }
}
