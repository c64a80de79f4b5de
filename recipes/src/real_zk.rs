//! `RealZk`: a session on a real ZooKeeper server, through the `zookeeper-client` crate, as a
//! [`ZkClient`], so the recipes that run in the simulator run in production unchanged.
//!
//! The crate hands out one watcher per watching call and reports session states on a separate
//! channel; this adapter merges both into each handle's ordered event stream, in the order the
//! crate received them: a watcher's event to the handle whose call set it, a state to every
//! handle. It takes what has fired whenever a reply arrives, before handing the reply over: the
//! crate's session task fills a watcher before it completes any later reply, so an event is seen
//! before a reply that reflects its change, as ZooKeeper promises.
//!
//! The crate runs its session on the ambient tokio runtime: connect from inside one.
//!
//! The adapter's body (`real_zk/over_the_api.rs`) uses nothing but the crate's API, so zklab
//! compiles it a second time over the drop-in `zookeeper-client` and runs the conformance cases
//! through that.

use zookeeper_client as zk;

/// The client crate under [`RealZk`], for building a client of one's own to wrap
/// ([`RealZk::from_client`]) with the very version zklab uses.
pub use zookeeper_client;

include!("real_zk/over_the_api.rs");

/// How the adapter waits: on the ambient tokio runtime's clock.
fn pause(duration: Duration) -> impl Future<Output = ()> + Send {
    tokio::time::sleep(duration)
}

/// The crate's errors as ZooKeeper's codes, for `?` on its calls (the drop-in's are the same
/// type, so this serves both copies of the adapter).
impl From<zk::Error> for ZkError {
    fn from(error: zk::Error) -> Self {
        zk_error(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    /// An error holding its source behind an `Arc`, as the crate's custom errors do.
    #[derive(Debug)]
    struct Wrapped(Arc<dyn std::error::Error + Send + Sync>);

    impl fmt::Display for Wrapped {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "wrapped")
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_connection_reset_behind_the_crates_arc_is_io() {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(is_io(&Wrapped(Arc::new(reset))));
        let other = std::fmt::Error;
        assert!(!is_io(&Wrapped(Arc::new(other))));
    }
}
