//! The trace: every request, reply, watch event, session event, fault and recipe outcome of a
//! run, stamped with sim time. Oracles judge runs by reading it; a replay prints it.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::Duration;

use zklab_recipes::client::{
    EventType, Op, OpReply, OpResult, SessionEvent, SessionId, WatchedEvent, Zxid,
};
use zklab_recipes::declaration::Declared;
use zklab_recipes::outcome::Outcome;

use crate::fault::FaultKind;
use crate::server::{Notification, Server};

/// Which simulated client (process) an event belongs to; rendered `c0`, `c1`, ...
pub type ClientId = u32;

/// One thing that happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A client sent an op.
    Request {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The op.
        op: Op,
    },
    /// The server applied an op (the reply may still be lost on the way back).
    Applied {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The op's zxid (the last zxid for a read).
        zxid: Zxid,
        /// The op.
        op: Op,
        /// What the server answered, whether or not the client ever hears it.
        reply: OpReply,
    },
    /// A client received the reply to an op.
    Reply {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The reply.
        reply: OpReply,
    },
    /// A client received a watch event.
    Watch {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The event.
        event: WatchedEvent,
        /// The zxid of the change behind it.
        zxid: Zxid,
        /// The node whose change fired it.
        cause: String,
        /// Whether that change was the node's deletion.
        deletion: bool,
    },
    /// The server fired watches on one change: every session it notified, whether or not the
    /// event reaches it (a disconnected client hears it on reconnect, an expired one never).
    Notified {
        /// The session whose op or expiry made the change.
        by: SessionId,
        /// The change's zxid.
        zxid: Zxid,
        /// The node that changed.
        cause: String,
        /// Whether the change was the node's deletion.
        deletion: bool,
        /// The sessions notified, in the order the server fired their watches.
        sessions: Vec<SessionId>,
    },
    /// A client's connection or session changed state, as the client sees it.
    Session {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The new state.
        event: SessionEvent,
    },
    /// The server opened a session.
    SessionOpened {
        /// The client.
        client: ClientId,
        /// The new session.
        session: SessionId,
    },
    /// The server ended a session (closed or expired): from here on it is not live.
    SessionEnded {
        /// The client.
        client: ClientId,
        /// The session.
        session: SessionId,
        /// Whether it expired (rather than being closed).
        expired: bool,
        /// The ephemeral nodes it took with it.
        deleted: Vec<String>,
    },
    /// The server's reaper deleted a container or a TTL node: a transaction no session asked
    /// for (its watches are told as a change by session 0).
    Reaped {
        /// The deletion's zxid.
        zxid: Zxid,
        /// The node deleted.
        path: String,
    },
    /// A fault was injected.
    Fault {
        /// Which kind.
        kind: FaultKind,
        /// The client it struck.
        client: ClientId,
        /// What exactly (the op it hit, how long it lasts).
        detail: String,
        /// How long the client cannot act (a pause, a partition; a crash for ever), or zero.
        lasts: Duration,
    },
    /// A recipe told the application something.
    Outcome {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// What it learned.
        outcome: Outcome,
    },
    /// A client used the resource the recipe protects, presenting a fencing token.
    Resource {
        /// The client.
        client: ClientId,
        /// It only read (under a lock held shared), rather than wrote.
        read: bool,
        /// The token presented.
        token: i64,
        /// Whether the resource accepted it.
        accepted: bool,
    },
    /// In an ensemble, a session attached to a server (on opening, and on reconnecting to
    /// another one).
    Attached {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The server's index.
        server: usize,
        /// Whether that server leads.
        leader: bool,
    },
    /// A client finished its workload.
    Finished {
        /// The client.
        client: ClientId,
    },
    /// A client could not finish: crashes left too few working for it (a double barrier's round
    /// with fewer than its threshold), so the run stopped its process.
    Stranded {
        /// The client.
        client: ClientId,
    },
    /// What a declarer (a recipe's driver, or code of the application's own) now owns and
    /// awaits, replacing what it declared before (see `zklab_recipes::declaration`).
    Declared {
        /// The client.
        client: ClientId,
        /// Its session.
        session: SessionId,
        /// The declarer, unique in the run.
        declarer: u32,
        /// What it owns and awaits.
        declared: Declared,
    },
    /// A line the code under test wrote (a `tracing` event, or a note of a test): the replay
    /// tells its story and the run's in one stream.
    Note {
        /// The client whose code wrote it.
        client: ClientId,
        /// What it said.
        text: String,
    },
}

impl TraceEvent {
    /// The client and the session the event is about, where it names them.
    pub fn actors(&self) -> (Option<ClientId>, Option<SessionId>) {
        match self {
            TraceEvent::Request {
                client, session, ..
            }
            | TraceEvent::Applied {
                client, session, ..
            }
            | TraceEvent::Reply {
                client, session, ..
            }
            | TraceEvent::Watch {
                client, session, ..
            }
            | TraceEvent::Session {
                client, session, ..
            }
            | TraceEvent::SessionOpened { client, session }
            | TraceEvent::SessionEnded {
                client, session, ..
            }
            | TraceEvent::Outcome {
                client, session, ..
            }
            | TraceEvent::Attached {
                client, session, ..
            }
            | TraceEvent::Declared {
                client, session, ..
            } => (Some(*client), Some(*session)),
            TraceEvent::Notified { by, .. } => (None, Some(*by)),
            TraceEvent::Reaped { .. } => (None, None),
            TraceEvent::Fault { client, .. }
            | TraceEvent::Resource { client, .. }
            | TraceEvent::Finished { client }
            | TraceEvent::Stranded { client }
            | TraceEvent::Note { client, .. } => (Some(*client), None),
        }
    }

    /// The [`TraceEvent::Notified`] entries for the watches one change fired (one per changed
    /// node, in the order the server fired them), read off `server` just after the change: a node
    /// counts as deleted when some watch said so or it is gone.
    pub fn notified(
        server: &Server,
        by: SessionId,
        zxid: Zxid,
        notifications: &[Notification],
    ) -> Vec<TraceEvent> {
        let mut changes: Vec<TraceEvent> = Vec::new();
        for notification in notifications {
            let position = changes.iter().position(
                |change| matches!(change, TraceEvent::Notified { cause, .. } if *cause == notification.cause),
            );
            let change = match position {
                Some(i) => &mut changes[i],
                None => {
                    changes.push(TraceEvent::Notified {
                        by,
                        zxid,
                        cause: notification.cause.clone(),
                        deletion: server.node(&notification.cause).is_none(),
                        sessions: Vec::new(),
                    });
                    changes.last_mut().expect("just pushed")
                }
            };
            if let TraceEvent::Notified {
                deletion, sessions, ..
            } = change
            {
                *deletion |= notification.event.event_type == EventType::NodeDeleted;
                if !sessions.contains(&notification.session) {
                    sessions.push(notification.session);
                }
            }
        }
        changes
    }
}

/// One trace line: when, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// Sim time since the run began.
    pub at: Duration,
    /// What happened.
    pub event: TraceEvent,
}

/// The log of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    entries: Vec<TraceEntry>,
}

thread_local! {
    /// The emptied buffer of the last trace dropped on this thread. A sweep runs one seed after
    /// another on each thread, and each trace grows to a few hundred kilobytes: reusing the buffer
    /// spares the allocator growing, freeing and page-faulting one that size for every seed.
    static SPARE: RefCell<Vec<TraceEntry>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Trace {
    fn drop(&mut self) {
        let mut entries = std::mem::take(&mut self.entries);
        entries.clear();
        let _ = SPARE.try_with(|spare| {
            let mut spare = spare.borrow_mut();
            if entries.capacity() > spare.capacity() {
                *spare = entries;
            }
        });
    }
}

impl Trace {
    /// An empty trace, in the buffer of the last one dropped on this thread if there is one.
    pub fn new() -> Self {
        let entries = SPARE
            .try_with(|spare| std::mem::take(&mut *spare.borrow_mut()))
            .unwrap_or_default();
        Trace { entries }
    }

    /// The bytes of the buffer the next trace on this thread will take over: the memory a seed
    /// holds from its start.
    pub fn spare_bytes() -> u64 {
        let capacity = SPARE
            .try_with(|spare| spare.borrow().capacity())
            .unwrap_or(0);
        (capacity * std::mem::size_of::<TraceEntry>()) as u64
    }

    /// Appends an event at sim time `at`, and tells it as a `tracing` event too.
    pub fn push(&mut self, at: Duration, event: TraceEvent) {
        crate::log::tell(at, &event);
        self.entries.push(TraceEntry { at, event });
    }

    /// Keeps only the entries `keep` accepts (a part of the story to show).
    pub fn retain(&mut self, keep: impl FnMut(&TraceEntry) -> bool) {
        self.entries.retain(keep);
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[TraceEntry] {
        &self.entries
    }

    /// The trace as text, one line per event.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for entry in &self.entries {
            let _ = writeln!(out, "{entry}");
        }
        out
    }

    /// A 64-bit FNV-1a digest of the rendered trace: equal digests, equal runs.
    pub fn digest(&self) -> u64 {
        self.render()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
                (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
            })
    }
}

impl fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", SimTime(self.at), self.event)
    }
}

/// What each symbol of the trace means: the replay prints it above the trace.
pub const LEGEND: [(&str, &str); 13] = [
    ("->", "a request"),
    ("<-", "its reply"),
    ("..", "a server applied it"),
    ("!!", "a watch fired / whom a change notified"),
    ("**", "session and connection news"),
    ("++", "session opened"),
    ("--", "session ended"),
    ("XX", "a fault"),
    ("=>", "what a recipe told the application"),
    ("::", "what code said it owns or awaits"),
    ("$$", "a use of the protected resource"),
    ("##", "a client finished"),
    ("//", "a line of the code under test"),
];

/// A sim time as the trace writes it: seconds, to the microsecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimTime(pub Duration);

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.as_secs();
        let micros = self.0.subsec_micros();
        write!(f, "{secs:>4}.{micros:06}")
    }
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEvent::Request {
                client,
                session,
                op,
            } => {
                write!(f, "c{client} s{session} -> {}", OpText(op))
            }
            TraceEvent::Applied {
                client,
                session,
                zxid,
                op,
                reply,
            } => {
                write!(f, "c{client} s{session} .. applied zxid={zxid}")?;
                if op.is_write() {
                    write!(f, ": {}", ReplyText(reply))?;
                }
                Ok(())
            }
            TraceEvent::Reply {
                client,
                session,
                reply,
            } => {
                write!(f, "c{client} s{session} <- {}", ReplyText(reply))
            }
            TraceEvent::Watch {
                client,
                session,
                event,
                zxid,
                cause,
                deletion,
            } => {
                let change = if *deletion { "deleted" } else { "changed" };
                write!(
                    f,
                    "c{client} s{session} !! watch {:?} {} (zxid={zxid}, {cause} {change})",
                    event.event_type, event.path
                )
            }
            TraceEvent::Notified {
                by,
                zxid,
                cause,
                deletion,
                sessions,
            } => {
                let change = if *deletion { "deleting" } else { "changing" };
                write!(f, "   s{by} !! {change} {cause} (zxid={zxid}) notified")?;
                for session in sessions {
                    write!(f, " s{session}")?;
                }
                Ok(())
            }
            TraceEvent::Session {
                client,
                session,
                event,
            } => {
                write!(f, "c{client} s{session} ** {event:?}")
            }
            TraceEvent::SessionOpened { client, session } => {
                write!(f, "c{client} s{session} ++ session opened")
            }
            TraceEvent::Attached {
                client,
                session,
                server,
                leader,
            } => {
                let role = if *leader { "leader" } else { "follower" };
                write!(
                    f,
                    "c{client} s{session} ** attached to server {server} ({role})"
                )
            }
            TraceEvent::SessionEnded {
                client,
                session,
                expired,
                deleted,
            } => {
                let how = if *expired { "expired" } else { "closed" };
                write!(
                    f,
                    "c{client} s{session} -- session {how} (deleted {deleted:?})"
                )
            }
            TraceEvent::Reaped { zxid, path } => {
                write!(f, "   -- server reaps {path} (zxid={zxid})")
            }
            TraceEvent::Fault {
                kind,
                client,
                detail,
                ..
            } => {
                write!(f, "c{client} XX fault {kind}: {detail}")
            }
            TraceEvent::Outcome {
                client,
                session,
                outcome,
            } => {
                write!(f, "c{client} s{session} => {outcome}")
            }
            TraceEvent::Resource {
                client,
                read,
                token,
                accepted,
            } => {
                let verdict = if *accepted { "accepted" } else { "refused" };
                let how = if *read { " read" } else { "" };
                write!(f, "c{client} $$ resource{how} token={token} {verdict}")
            }
            TraceEvent::Finished { client } => write!(f, "c{client} ## finished"),
            TraceEvent::Stranded { client } => {
                write!(
                    f,
                    "c{client} ## stranded: too few left working to finish with"
                )
            }
            TraceEvent::Declared {
                client,
                session,
                declarer,
                declared,
            } => write!(f, "c{client} s{session} :: #{declarer} {declared}"),
            TraceEvent::Note { client, text } => write!(f, "c{client} // {text}"),
        }
    }
}

/// An op in zkCli's words.
pub struct OpText<'a>(pub &'a Op);

impl fmt::Display for OpText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let watch = |w: &bool| if *w { " watch" } else { "" };
        match self.0 {
            Op::Create {
                path,
                data,
                mode,
                acl,
            } => {
                write!(
                    f,
                    "create {path} {:?} {mode:?}",
                    String::from_utf8_lossy(data)
                )?;
                // The open ACL, every recipe's, goes unsaid.
                match acl.is_open() {
                    true => Ok(()),
                    false => write!(f, " {acl}"),
                }
            }
            Op::Delete { path, version } => write!(f, "delete {path} v={version}"),
            Op::Exists { path, watch: w } => write!(f, "exists {path}{}", watch(w)),
            Op::GetData { path, watch: w } => write!(f, "getData {path}{}", watch(w)),
            Op::GetChildren { path, watch: w } => write!(f, "getChildren {path}{}", watch(w)),
            Op::SetData {
                path,
                data,
                version,
            } => {
                write!(
                    f,
                    "setData {path} {:?} v={version}",
                    String::from_utf8_lossy(data)
                )
            }
            Op::Check { path, version } => write!(f, "check {path} v={version}"),
            Op::Sync { path } => write!(f, "sync {path}"),
            Op::Multi(ops) => write_batch(f, "multi", ops.iter().map(OpText)),
            Op::MultiRead(reads) => write_batch(f, "multiRead", reads.iter().map(OpText)),
            Op::CountDescendants { path } => write!(f, "getAllChildrenNumber {path}"),
            Op::GetEphemerals { prefix } => write!(f, "getEphemerals {prefix}"),
            Op::AddWatch { path, mode } => write!(f, "addWatch {path} {mode:?}"),
            Op::RemoveWatches { path, kind } => write!(f, "removeWatches {path} {kind:?}"),
            Op::CheckWatches { path, kind } => write!(f, "checkWatches {path} {kind:?}"),
            Op::GetAcl { path } => write!(f, "getAcl {path}"),
            Op::SetAcl { path, acl, version } => write!(f, "setAcl {path} {acl} v={version}"),
            // The secret stays out of the trace: a digest's user alone, of other schemes nothing.
            Op::AddAuth { scheme, auth } if scheme == "digest" => {
                let auth = String::from_utf8_lossy(auth.as_deref().unwrap_or_default());
                write!(f, "addAuth {scheme} {}", crate::digest::user_of(&auth))
            }
            Op::AddAuth { scheme, .. } => write!(f, "addAuth {scheme}"),
            Op::WhoAmI => write!(f, "whoAmI"),
        }
    }
}

/// A multi's or a multiRead's ops or results, in order: `multi [first; second]`.
fn write_batch<T: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    items: impl Iterator<Item = T>,
) -> fmt::Result {
    write!(f, "{name} [")?;
    for (i, item) in items.enumerate() {
        let sep = if i == 0 { "" } else { "; " };
        write!(f, "{sep}{item}")?;
    }
    write!(f, "]")
}

/// A reply, compactly.
pub struct ReplyText<'a>(pub &'a OpReply);

impl fmt::Display for ReplyText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Err(error) => write!(f, "error {error:?}"),
            Ok(result) => write!(f, "{}", ResultText(result)),
        }
    }
}

struct ResultText<'a>(&'a OpResult);

impl fmt::Display for ResultText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            OpResult::Created { path, stat } => write!(f, "created {path} czxid={}", stat.czxid),
            OpResult::Deleted => write!(f, "deleted"),
            OpResult::Exists(None) => write!(f, "exists: no node"),
            OpResult::Exists(Some(stat)) => write!(f, "exists czxid={}", stat.czxid),
            OpResult::Data { data, stat } => {
                write!(
                    f,
                    "data {:?} v={}",
                    String::from_utf8_lossy(data),
                    stat.version
                )
            }
            OpResult::Children { children, .. } | OpResult::Listed(children) => {
                let mut sorted: Vec<&String> = children.iter().collect();
                sorted.sort();
                write!(f, "children {sorted:?}")
            }
            OpResult::SetData(stat) => write!(f, "set v={}", stat.version),
            OpResult::Checked => write!(f, "checked"),
            OpResult::Synced => write!(f, "synced"),
            OpResult::RolledBack => write!(f, "rolled back"),
            OpResult::Multi(results) => write_batch(f, "multi", results.iter().map(ReplyText)),
            OpResult::MultiRead(results) => {
                write_batch(f, "multiRead", results.iter().map(ReplyText))
            }
            OpResult::Counted(count) => write!(f, "counted {count}"),
            OpResult::Ephemerals(paths) => {
                let mut sorted: Vec<&String> = paths.iter().collect();
                sorted.sort();
                write!(f, "ephemerals {sorted:?}")
            }
            OpResult::WatchAdded => write!(f, "watching"),
            OpResult::WatchesRemoved => write!(f, "watches removed"),
            OpResult::WatchesHeld => write!(f, "watches held"),
            OpResult::Acl { acl, stat } => write!(f, "acl {acl} av={}", stat.aversion),
            OpResult::AclSet(stat) => write!(f, "acl set av={}", stat.aversion),
            OpResult::Authenticated => write!(f, "authenticated"),
            OpResult::Identities(identities) => {
                let each = identities
                    .iter()
                    .map(|id| format!("{}:{}", id.scheme, id.user));
                write_batch(f, "identities", each)
            }
        }
    }
}
