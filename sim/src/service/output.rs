//! What the service core's inputs cause outside it, for its driver to carry out.

use std::time::Duration;

use zklab_recipes::client::{OpReply, SessionId, ZkEvent};

use crate::trace::ClientId;

/// One thing the core asks of the world around it. Its driver carries them out in the order
/// they come, which is the order they happened in.
#[derive(Debug)]
pub(crate) enum Output {
    /// The reply to a session's request `id` reaches the code that made it.
    Reply {
        session: SessionId,
        id: u64,
        reply: OpReply,
    },
    /// A watch or session event reaches the session's code.
    Event { session: SessionId, event: ZkEvent },
    /// The session's stream of events ends: it was closed or it expired.
    EventsEnd { session: SessionId },
    /// The session's heartbeat has news: its connection broke, so its timer is stale.
    Heartbeat { session: SessionId },
    /// The wire has a delivery due at this time: wake the core then
    /// ([`super::Service::deliver_due`]).
    WakeAt(Duration),
    /// A client's process stops running for `duration`, then resumes.
    Pause {
        client: ClientId,
        duration: Duration,
    },
    /// A client's process dies for good.
    Kill { client: ClientId },
}
