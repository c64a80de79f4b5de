//! `LocalZk`: the pure server as [`ZkClient`] sessions in one process, with no wire, no
//! simulated time and no faults. Every call is applied at once, in call order.
//!
//! It serves where the simulator's network would only get in the way: the interactive shell and
//! the conformance cases, which compare the pure server's answers with a real server's.

use std::collections::BTreeMap;
use std::future::{ready, Future};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zklab_recipes::client::{Op, OpReply, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent};
use zklab_recipes::listeners::{ListenerId, Listeners};

use crate::packet;
use crate::path::validate_op;
use crate::server::{Notification, Server};

/// One pure server shared by any number of sessions.
#[derive(Clone, Default)]
pub struct LocalZk {
    shared: Arc<Mutex<Shared>>,
}

#[derive(Default)]
struct Shared {
    server: Server,
    inboxes: BTreeMap<SessionId, Inbox>,
}

/// Where a session's events go: its handles.
#[derive(Default)]
struct Inbox {
    listeners: Arc<Listeners>,
    /// Expired or closed: nothing follows what is queued.
    ended: bool,
    /// Closed by the application: calls fail with `Closed`.
    closed: bool,
    /// Given up by its client when the server refused its authentication: calls fail with
    /// `AuthFailed`, and the server keeps the session until it expires.
    auth_failed: bool,
}

impl Inbox {
    /// Tells the session's last event, and ends its stream.
    fn end(&mut self, event: SessionEvent) {
        if !self.ended {
            self.listeners.deliver(ZkEvent::Session(event));
            self.listeners.end();
            self.ended = true;
        }
    }
}

impl Shared {
    /// Hands each notification to its session, unless that session's stream has ended.
    fn deliver(&mut self, notifications: Vec<Notification>) {
        for notification in notifications {
            let inbox = self.inboxes.get(&notification.session);
            if let Some(inbox) = inbox.filter(|inbox| !inbox.ended) {
                inbox.listeners.deliver(ZkEvent::Watch(notification.event));
            }
        }
    }
}

impl LocalZk {
    /// A fresh server: only `/` and `/zookeeper`.
    pub fn new() -> Self {
        LocalZk::default()
    }

    /// Opens a session.
    pub fn connect(&self) -> LocalSession {
        let mut shared = self.lock();
        let session = shared.server.open_session();
        let listeners = Arc::new(Listeners::default());
        let inbox = Inbox {
            listeners: listeners.clone(),
            ..Inbox::default()
        };
        shared.inboxes.insert(session, inbox);
        LocalSession::new(self.clone(), session, listeners)
    }

    /// Expires a session as the server would after its timeout: its ephemerals go and other
    /// sessions' watches fire; the session itself learns `Expired`.
    pub fn expire(&self, session: SessionId) {
        let mut shared = self.lock();
        if let Some(ended) = shared.server.expire_session(session, now_ms()) {
            shared.deliver(ended.notifications);
            if let Some(inbox) = shared.inboxes.get_mut(&session) {
                inbox.end(SessionEvent::Expired);
            }
        }
    }

    /// Reads the server's state.
    pub fn with_server<R>(&self, read: impl FnOnce(&Server) -> R) -> R {
        read(&self.lock().server)
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Server time for ctime and mtime: the wall clock, as a real server's.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as i64)
}

/// A handle on one session on a [`LocalZk`].
pub struct LocalSession {
    zk: LocalZk,
    session: SessionId,
    listeners: Arc<Listeners>,
    listener: ListenerId,
}

impl LocalSession {
    fn new(zk: LocalZk, session: SessionId, listeners: Arc<Listeners>) -> Self {
        let listener = listeners.add();
        LocalSession {
            zk,
            session,
            listeners,
            listener,
        }
    }
}

impl Drop for LocalSession {
    fn drop(&mut self) {
        self.listeners.remove(self.listener);
    }
}

impl ZkClient for LocalSession {
    fn call(&self, op: Op) -> impl Future<Output = OpReply> + Send {
        let mut shared = self.zk.lock();
        let inbox = shared.inboxes.get(&self.session);
        let reply = if inbox.is_none_or(|inbox| inbox.closed) {
            Err(ZkError::Closed)
        } else if inbox.is_some_and(|inbox| inbox.auth_failed) {
            // The client still refuses a malformed path first.
            Err(validate_op(&op).err().unwrap_or(ZkError::AuthFailed))
        } else if packet::too_long(&op) {
            // The server drops the connection unanswered, as the simulated service's does; the
            // client connects again at once, its session and watches intact.
            for state in [SessionEvent::Disconnected, SessionEvent::SyncConnected] {
                self.listeners.deliver(ZkEvent::Session(state));
            }
            Err(ZkError::ConnectionLoss)
        } else {
            let applied = shared.server.apply(self.session, &op, now_ms());
            shared.deliver(applied.notifications);
            self.listeners
                .note_reply(self.listener, &op, &applied.reply);
            // As ZooKeeper's clients do, the session is given up: its code hears it closed, and
            // the server, which closed its connection, drops its watches (it never expires
            // here: a `LocalZk` has no clock).
            if applied.reply == Err(ZkError::AuthFailed) {
                shared.server.take_watches(self.session);
                if let Some(inbox) = shared.inboxes.get_mut(&self.session) {
                    inbox.auth_failed = true;
                    inbox.end(SessionEvent::Closed);
                }
            }
            applied.reply
        };
        ready(reply)
    }

    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send {
        futures::future::poll_fn(move |cx| self.listeners.poll_next(self.listener, cx))
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.listeners.try_next(self.listener)
    }

    fn session_id(&self) -> SessionId {
        self.session
    }

    fn listener(&self) -> Self {
        LocalSession::new(self.zk.clone(), self.session, self.listeners.clone())
    }

    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        let mut shared = self.zk.lock();
        // A client that gave its session up sends no close (the session lives until it
        // expires), but is closed by its application all the same.
        if let Some(inbox) = shared.inboxes.get_mut(&self.session) {
            if inbox.auth_failed {
                inbox.closed = true;
                return ready(Err(ZkError::AuthFailed));
            }
        }
        let result = match shared.server.close_session(self.session, now_ms()) {
            Some(ended) => {
                shared.deliver(ended.notifications);
                Ok(())
            }
            None if shared.inboxes.get(&self.session).is_some_and(|i| i.closed) => {
                Err(ZkError::Closed)
            }
            None => Err(ZkError::SessionExpired),
        };
        if let Some(inbox) = shared.inboxes.get_mut(&self.session) {
            inbox.closed = true;
            inbox.end(SessionEvent::Closed);
        }
        ready(result)
    }

    /// A `LocalZk` has no clock of its own, and its sessions are driven by whatever executor
    /// the caller runs: the wait happens on the calling thread.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        std::thread::sleep(duration);
        ready(())
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use zklab_recipes::client::CreateMode;
    use zklab_recipes::subtree::{delete_tree, read_tree, Znode};

    use super::*;

    #[test]
    fn a_tree_reads_parents_first_and_an_unreadable_one_is_an_error() {
        let zk = LocalZk::new();
        let session = zk.connect();
        for path in ["/t", "/t/b", "/t/a", "/t/a/x"] {
            block_on(session.create(path, b"", CreateMode::Persistent)).expect("created");
        }
        let paths =
            |tree: Vec<Znode>| -> Vec<String> { tree.into_iter().map(|node| node.path).collect() };
        let tree = block_on(read_tree(&session, "/t")).expect("read");
        assert_eq!(paths(tree), ["/t", "/t/a", "/t/a/x", "/t/b"]);
        assert_eq!(block_on(read_tree(&session, "/missing")), Ok(Vec::new()));
        block_on(delete_tree(&session, "/t")).expect("deleted");
        assert_eq!(block_on(read_tree(&session, "/t")), Ok(Vec::new()));
        block_on(session.close()).expect("closed");
        assert_eq!(block_on(read_tree(&session, "/")), Err(ZkError::Closed));
    }

    #[test]
    fn a_request_longer_than_a_server_reads_loses_the_connection_and_applies_nothing() {
        let zk = LocalZk::new();
        let session = zk.connect();
        let big = vec![0; 2 << 20];
        let created = block_on(session.create("/big", &big, CreateMode::Persistent));
        assert_eq!(created, Err(ZkError::ConnectionLoss));
        let events: Vec<ZkEvent> = std::iter::from_fn(|| session.try_next_event()).collect();
        assert_eq!(
            events,
            [
                ZkEvent::Session(SessionEvent::Disconnected),
                ZkEvent::Session(SessionEvent::SyncConnected)
            ]
        );
        assert_eq!(block_on(session.exists("/big", false)), Ok(None));
        let fits = vec![0; packet::MAX_REQUEST_LEN - 100];
        block_on(session.create("/fits", &fits, CreateMode::Persistent)).expect("created");
    }
}
