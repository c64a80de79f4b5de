//! The numbers of ZooKeeper's wire (`ZooDefs.OpCode`, `ClientCnxn`'s xids, `CreateMode`,
//! `Watcher.Event`), and zklab's types for them.

use zklab_recipes::client::{AddWatchMode, CreateMode, EventType, WatcherKind, ZkError};

use super::archive::Malformed;

/// A request's type (`ZooDefs.OpCode`).
pub mod op_code {
    /// A notification's type in a reply header's place (never sent as a request).
    pub const NOTIFICATION: i32 = 0;
    /// `create`: the reply carries the path alone.
    pub const CREATE: i32 = 1;
    /// `delete`.
    pub const DELETE: i32 = 2;
    /// `exists`.
    pub const EXISTS: i32 = 3;
    /// `getData`.
    pub const GET_DATA: i32 = 4;
    /// `setData`.
    pub const SET_DATA: i32 = 5;
    /// `getACL`.
    pub const GET_ACL: i32 = 6;
    /// `setACL`.
    pub const SET_ACL: i32 = 7;
    /// `getChildren`: the names alone.
    pub const GET_CHILDREN: i32 = 8;
    /// `sync`.
    pub const SYNC: i32 = 9;
    /// `ping`.
    pub const PING: i32 = 11;
    /// `getChildren2`: the names and the parent's stat.
    pub const GET_CHILDREN2: i32 = 12;
    /// `check` (a version check, in a multi).
    pub const CHECK: i32 = 13;
    /// `multi`.
    pub const MULTI: i32 = 14;
    /// `create2`: the reply carries the path and the stat.
    pub const CREATE2: i32 = 15;
    /// `checkWatches`.
    pub const CHECK_WATCHES: i32 = 17;
    /// `removeWatches`.
    pub const REMOVE_WATCHES: i32 = 18;
    /// `createContainer`.
    pub const CREATE_CONTAINER: i32 = 19;
    /// `createTTL`.
    pub const CREATE_TTL: i32 = 21;
    /// `multiRead`.
    pub const MULTI_READ: i32 = 22;
    /// `auth` (addAuth).
    pub const AUTH: i32 = 100;
    /// `setWatches`: one-time watches set again on a new connection.
    pub const SET_WATCHES: i32 = 101;
    /// `getEphemerals`.
    pub const GET_EPHEMERALS: i32 = 103;
    /// `getAllChildrenNumber`.
    pub const GET_ALL_CHILDREN_NUMBER: i32 = 104;
    /// `setWatches2`: persistent watches too.
    pub const SET_WATCHES2: i32 = 105;
    /// `addWatch`.
    pub const ADD_WATCH: i32 = 106;
    /// `whoAmI`.
    pub const WHO_AM_I: i32 = 107;
    /// `closeSession`.
    pub const CLOSE_SESSION: i32 = -11;
    /// In a multi's reply: the op failed, or was rolled back.
    pub const ERROR: i32 = -1;
}

/// The xids a client gives the requests that are not its own calls (`ClientCnxn`).
pub mod xid {
    /// A notification, in a reply header.
    pub const NOTIFICATION: i32 = -1;
    /// A ping and its reply.
    pub const PING: i32 = -2;
    /// An auth packet and its reply.
    pub const AUTH: i32 = -4;
    /// A setWatches and its reply.
    pub const SET_WATCHES: i32 = -8;
}

/// A create's flags on the wire (`CreateMode.toFlag`); the TTL of a TTL mode goes apart.
pub fn create_flags(mode: CreateMode) -> i32 {
    match mode {
        CreateMode::Persistent => 0,
        CreateMode::Ephemeral => 1,
        CreateMode::PersistentSequential => 2,
        CreateMode::EphemeralSequential => 3,
        CreateMode::Container => 4,
        CreateMode::PersistentWithTtl { .. } => 5,
        CreateMode::PersistentSequentialWithTtl { .. } => 6,
    }
}

/// The mode of a create's flags, and of its TTL for the TTL modes.
pub fn create_mode(flags: i32, ttl_ms: i64) -> Result<CreateMode, Malformed> {
    Ok(match flags {
        0 => CreateMode::Persistent,
        1 => CreateMode::Ephemeral,
        2 => CreateMode::PersistentSequential,
        3 => CreateMode::EphemeralSequential,
        4 => CreateMode::Container,
        5 => CreateMode::PersistentWithTtl { ttl_ms },
        6 => CreateMode::PersistentSequentialWithTtl { ttl_ms },
        value => return Err(unknown("create flag", value)),
    })
}

/// An event type's number (`Watcher.Event.EventType`).
pub fn event_type_code(event_type: EventType) -> i32 {
    match event_type {
        EventType::NodeCreated => 1,
        EventType::NodeDeleted => 2,
        EventType::NodeDataChanged => 3,
        EventType::NodeChildrenChanged => 4,
        EventType::DataWatchRemoved => 5,
        EventType::ChildWatchRemoved => 6,
        EventType::PersistentWatchRemoved => 7,
    }
}

/// The event type of a number; the state-only `None` (-1) is none of zklab's.
pub fn event_type(code: i32) -> Result<EventType, Malformed> {
    Ok(match code {
        1 => EventType::NodeCreated,
        2 => EventType::NodeDeleted,
        3 => EventType::NodeDataChanged,
        4 => EventType::NodeChildrenChanged,
        5 => EventType::DataWatchRemoved,
        6 => EventType::ChildWatchRemoved,
        7 => EventType::PersistentWatchRemoved,
        value => return Err(unknown("event type", value)),
    })
}

/// The keeper state a server's notifications carry: `SyncConnected`.
pub const SYNC_CONNECTED_STATE: i32 = 3;

/// The watcher kind of a number (`WatcherType`).
pub fn watcher_kind(code: i32) -> Result<WatcherKind, Malformed> {
    Ok(match code {
        1 => WatcherKind::Children,
        2 => WatcherKind::Data,
        3 => WatcherKind::Any,
        value => return Err(unknown("watcher type", value)),
    })
}

/// The addWatch mode of a number.
pub fn add_watch_mode(code: i32) -> Result<AddWatchMode, Malformed> {
    Ok(match code {
        0 => AddWatchMode::Persistent,
        1 => AddWatchMode::PersistentRecursive,
        value => return Err(unknown("addWatch mode", value)),
    })
}

/// The error of a nonzero code; a code zklab does not know is refused, not guessed.
pub fn error(code: i32) -> Result<ZkError, Malformed> {
    ZkError::from_code(code).ok_or(unknown("error code", code))
}

/// A number that names nothing known as `what`.
pub fn unknown(what: &'static str, value: i32) -> Malformed {
    Malformed::Unknown {
        what,
        value: value.into(),
    }
}
