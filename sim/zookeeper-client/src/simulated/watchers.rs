//! zookeeper-client's watchers over handles of a simulated session: a watch is set through a
//! handle of its own, so its events reach its watcher alone; a state watcher is a handle that
//! sets no watch and hears only the session's changes.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use zklab_recipes::client::{SessionEvent, ZkClient, ZkEvent};
use zklab_sim::sim_client::SimClient;
use zookeeper_client::{SessionState, WatchedEvent};

use super::conversions::{state, watched};

/// A one-time watch: [`OneshotWatcher::changed`] gives its event, or the session's end.
pub struct OneshotWatcher {
    handle: SimClient,
}

impl OneshotWatcher {
    pub(super) fn new(handle: SimClient) -> Self {
        OneshotWatcher { handle }
    }

    /// Waits for the node's event, or for the session to end (an event of type `Session`,
    /// `Expired` or `Closed`). A broken connection is no event: the client sets the watch again
    /// when it reconnects, and the server fires it then if the node changed meanwhile.
    pub async fn changed(self) -> WatchedEvent {
        loop {
            match self.handle.next_event().await {
                Some(ZkEvent::Watch(event)) => {
                    if let Some(event) = watched(&event) {
                        return event;
                    }
                }
                Some(ZkEvent::Session(
                    SessionEvent::Disconnected | SessionEvent::SyncConnected,
                )) => {}
                Some(ZkEvent::Session(ended)) => return WatchedEvent::new_session(state(ended)),
                None => return WatchedEvent::new_session(SessionState::Closed),
            }
        }
    }
}

/// A persistent or persistent recursive watch: [`PersistentWatcher::changed`] gives each of
/// its events, and each change of the session's state, as the real crate does.
pub struct PersistentWatcher {
    handle: SimClient,
    /// The session has ended: the real crate panics when asked again.
    ended: bool,
}

impl PersistentWatcher {
    pub(super) fn new(handle: SimClient) -> Self {
        PersistentWatcher {
            handle,
            ended: false,
        }
    }

    /// Waits for the next event of the watch or of the session. Events of a change made
    /// while the connection was down are lost: the server sets a persistent watch again on
    /// reconnection without firing it for what it missed, so read again after `SyncConnected`.
    ///
    /// # Panics
    /// When asked again after the session's end, as the real crate does.
    pub async fn changed(&mut self) -> WatchedEvent {
        assert!(
            !self.ended,
            "a persistent watcher asked for an event after its session ended"
        );
        loop {
            let event = match self.handle.next_event().await {
                Some(ZkEvent::Watch(event)) => match watched(&event) {
                    Some(event) => return event,
                    None => continue,
                },
                Some(ZkEvent::Session(event)) => state(event),
                None => SessionState::Closed,
            };
            self.ended = is_terminal(event);
            return WatchedEvent::new_session(event);
        }
    }
}

/// Follows the session's state: each change once, the last one always.
pub struct StateWatcher {
    handle: SimClient,
    /// The latest state heard, and how many changes have been heard.
    latest: Mutex<(SessionState, u64)>,
    /// How many changes [`StateWatcher::state`] or [`StateWatcher::changed`] has given.
    taken: u64,
}

impl StateWatcher {
    /// A watcher over `handle`, a handle that sets no watch, whose session is in `state`.
    pub(super) fn new(handle: SimClient, state: SessionState) -> Self {
        StateWatcher {
            handle,
            latest: Mutex::new((state, 0)),
            taken: 0,
        }
    }

    /// The handle it hears the session on.
    pub(super) fn handle(&self) -> &SimClient {
        &self.handle
    }

    /// Takes what the handle has heard so far; returns the latest state and its count.
    fn heard(&self) -> (SessionState, u64) {
        while let Some(event) = self.handle.try_next_event() {
            self.hear(event);
        }
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `event` as one more change; a handle that sets no watch hears only the session.
    /// A session its client gave up on an AuthFailed ends as the real client's does, in
    /// AuthFailed.
    fn hear(&self, event: ZkEvent) {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        if let ZkEvent::Session(event) = event {
            latest.0 = match event {
                SessionEvent::Closed if self.handle.auth_failed() => SessionState::AuthFailed,
                event => state(event),
            };
        }
        latest.1 += 1;
    }

    /// The latest state, taken: [`StateWatcher::changed`] waits for a later one.
    pub fn state(&mut self) -> SessionState {
        let (state, count) = self.heard();
        self.taken = count;
        state
    }

    /// Waits for a state not taken yet and takes it (the latest, if several came). After a
    /// terminal state (expired, closed) has been taken, it waits for ever.
    pub async fn changed(&mut self) -> SessionState {
        loop {
            let (state, count) = self.heard();
            if count > self.taken {
                self.taken = count;
                return state;
            }
            if is_terminal(state) {
                std::future::pending::<()>().await;
            }
            // A stream that ends is a closed session.
            let event = self.handle.next_event().await;
            self.hear(event.unwrap_or(ZkEvent::Session(SessionEvent::Closed)));
        }
    }

    /// The latest state, not taken.
    pub fn peek_state(&self) -> SessionState {
        self.heard().0
    }
}

/// Another watcher of the same session, from the same state on.
impl Clone for StateWatcher {
    fn clone(&self) -> Self {
        let (state, count) = self.heard();
        StateWatcher {
            handle: self.handle.listener(),
            latest: Mutex::new((state, count)),
            taken: self.taken,
        }
    }
}

impl fmt::Debug for OneshotWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = self.handle.session_id();
        f.debug_struct("OneshotWatcher")
            .field("session", &session)
            .finish()
    }
}

impl fmt::Debug for PersistentWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = self.handle.session_id();
        f.debug_struct("PersistentWatcher")
            .field("session", &session)
            .finish()
    }
}

impl fmt::Debug for StateWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let session = self.handle.session_id();
        let state = self.peek_state();
        (f.debug_struct("StateWatcher").field("session", &session))
            .field("state", &state)
            .finish()
    }
}

fn is_terminal(state: SessionState) -> bool {
    matches!(
        state,
        SessionState::Expired | SessionState::Closed | SessionState::AuthFailed
    )
}
