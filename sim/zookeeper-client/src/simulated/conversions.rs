//! zklab's client types in zookeeper-client's terms: errors, stats, events and session states,
//! as the real crate reports what a real server sends.

use zklab_recipes::client::{self as sim, SessionEvent, ZkError};
use zookeeper_client as zk;
use zookeeper_client::{Error, EventType, SessionState, Stat, WatchedEvent};

include!("../../../../recipes/src/real_zk/acl_conversions.rs");

/// The error zookeeper-client reports for what the simulated client answered.
pub(super) fn error(error: ZkError) -> Error {
    match error {
        ZkError::ConnectionLoss => Error::ConnectionLoss,
        ZkError::Closed => Error::ClientClosed,
        ZkError::RuntimeInconsistency => Error::RuntimeInconsistent,
        ZkError::MarshallingError => Error::MarshallingError,
        ZkError::Unimplemented => Error::Unimplemented,
        ZkError::OperationTimeout => Error::Timeout,
        ZkError::BadArguments => Error::BadArguments(&"server error"),
        ZkError::NoNode => Error::NoNode,
        ZkError::NoAuth => Error::NoAuth,
        ZkError::BadVersion => Error::BadVersion,
        ZkError::NoChildrenForEphemerals => Error::NoChildrenForEphemerals,
        ZkError::NodeExists => Error::NodeExists,
        ZkError::NotEmpty => Error::NotEmpty,
        ZkError::SessionExpired => Error::SessionExpired,
        ZkError::InvalidAcl => Error::InvalidAcl,
        ZkError::AuthFailed => Error::AuthFailed,
        ZkError::SessionMoved => Error::SessionMoved,
        ZkError::NoWatcher => Error::NoWatcher,
        other @ (ZkError::SystemError
        | ZkError::DataInconsistency
        | ZkError::ApiError
        | ZkError::InvalidCallback) => Error::UnexpectedErrorCode(other.code()),
    }
}

/// A node's stat as zookeeper-client holds it.
pub(super) fn stat(stat: sim::Stat) -> Stat {
    Stat {
        czxid: stat.czxid,
        mzxid: stat.mzxid,
        pzxid: stat.pzxid,
        ctime: stat.ctime,
        mtime: stat.mtime,
        version: stat.version,
        cversion: stat.cversion,
        aversion: stat.aversion,
        ephemeral_owner: stat.ephemeral_owner,
        data_length: stat.data_length,
        num_children: stat.num_children,
    }
}

/// The session state a session event moves to.
pub(super) fn state(event: SessionEvent) -> SessionState {
    match event {
        SessionEvent::Disconnected => SessionState::Disconnected,
        SessionEvent::SyncConnected => SessionState::SyncConnected,
        SessionEvent::Expired => SessionState::Expired,
        SessionEvent::Closed => SessionState::Closed,
    }
}

/// A fired watch as zookeeper-client reports it. The simulated server, like ZooKeeper before
/// 3.9, sends no zxid with it. `None` for a removal: the crate tells no watcher of one.
pub(super) fn watched(event: &sim::WatchedEvent) -> Option<WatchedEvent> {
    let event_type = match event.event_type {
        sim::EventType::NodeCreated => EventType::NodeCreated,
        sim::EventType::NodeDeleted => EventType::NodeDeleted,
        sim::EventType::NodeDataChanged => EventType::NodeDataChanged,
        sim::EventType::NodeChildrenChanged => EventType::NodeChildrenChanged,
        sim::EventType::DataWatchRemoved
        | sim::EventType::ChildWatchRemoved
        | sim::EventType::PersistentWatchRemoved => return None,
    };
    Some(WatchedEvent::new(event_type, event.path.clone()))
}
