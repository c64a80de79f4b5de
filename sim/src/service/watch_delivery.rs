//! Fired watches on their way to their sessions, and the trace's record of which sessions each
//! change notified (gathered across an ensemble's servers, see [`crate::notified`]).

use zklab_recipes::client::{SessionId, Zxid};

use super::wire::Response;
use super::Service;
use crate::server::Notification;
use crate::trace::TraceEvent;

impl Service {
    /// Sends fired watches to their sessions; `zxid` is the change behind them, made by `by`.
    /// Returns the trace's record of which sessions each changed node notified.
    pub(super) fn notify(
        &mut self,
        server: usize,
        by: SessionId,
        notifications: Vec<Notification>,
        zxid: i64,
    ) -> Vec<TraceEvent> {
        let changes = TraceEvent::notified(self.servers.server(server), by, zxid, &notifications);
        for notification in notifications {
            let deletion = changes.iter().any(|change| {
                matches!(change, TraceEvent::Notified { cause, deletion: true, .. } if *cause == notification.cause)
            });
            self.send_watch(notification, zxid, deletion);
        }
        changes
    }

    /// The leader's records of the change `zxid` it committed: told now on a standalone server,
    /// with the followers' once every follower that is up has applied it in an ensemble.
    pub(super) fn commit_notified(
        &mut self,
        zxid: Zxid,
        records: Vec<TraceEvent>,
    ) -> Vec<TraceEvent> {
        let now = self.now();
        let leader = self.servers.leader();
        let followers: Vec<usize> = (0..self.servers.len())
            .filter(|&server| server != leader && self.down_until[server] <= now)
            .collect();
        self.gathering.committed(zxid, followers, records)
    }

    /// Sends a fired watch's event to its session.
    pub(super) fn send_watch(&mut self, notification: Notification, zxid: i64, deletion: bool) {
        let session = notification.session;
        self.send_to_client(session, Response::Watch(notification, zxid, deletion));
    }
}
