//! The timing of the simulated service, in ZooKeeper's defaults.

use std::time::Duration;

/// Timing of the simulated service, in ZooKeeper's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// The negotiated session timeout. Clients ping at a third of it and declare the connection
    /// lost after two thirds without hearing from the server; the server expires a session it has
    /// not heard from for the whole of it.
    pub session_timeout: Duration,
    /// The range of a session's base one-way latency (drawn once per session, so sessions overtake
    /// each other).
    pub latency: (Duration, Duration),
    /// Extra per-message jitter, at most.
    pub jitter: Duration,
    /// The range of the pause before a client tries to reconnect.
    pub reconnect_delay: (Duration, Duration),
    /// How many servers the ensemble has. One is a standalone server, whose every read is up
    /// to date; with more, each session attaches to one of them, and a follower serves its
    /// sessions' reads from a state that can lag behind the leader's writes.
    pub servers: usize,
    /// The range of the delay after which a follower applies a transaction the leader has
    /// committed (drawn per follower and transaction, in commit order).
    pub follower_lag: (Duration, Duration),
    /// How often the leader's reaper looks for containers and TTL nodes to delete (ZooKeeper's
    /// `znode.container.checkIntervalMs`, 60 s by default there; shorter here, so that runs of
    /// a few seconds meet it).
    pub container_check_interval: Duration,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            session_timeout: Duration::from_secs(6),
            latency: (Duration::from_millis(1), Duration::from_millis(5)),
            jitter: Duration::from_millis(1),
            reconnect_delay: (Duration::from_millis(10), Duration::from_millis(200)),
            servers: 1,
            follower_lag: (Duration::from_millis(1), Duration::from_millis(20)),
            container_check_interval: Duration::from_secs(1),
        }
    }
}
