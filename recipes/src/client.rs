//! The client API every recipe is written against: ZooKeeper's operations, results, errors and
//! events, and the [`ZkClient`] trait that the simulator, the model checker and a real server
//! each implement.
//!
//! The names and error codes are ZooKeeper's own, so that a trace reads like a ZooKeeper log.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use crate::acl::Acls;
use crate::session_renaming::RenameSessions;

/// A session id, as the server assigns it.
pub type SessionId = i64;

/// A ZooKeeper transaction id. Compare zxids by order, never by value: a real server and the
/// simulated one number them differently.
pub type Zxid = i64;

/// How a znode is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CreateMode {
    /// Lives until deleted.
    Persistent,
    /// Lives until deleted; the server appends a 10-digit sequence number to its name.
    PersistentSequential,
    /// Deleted when its session ends; cannot have children.
    Ephemeral,
    /// Ephemeral, with a server-assigned sequence number appended to its name.
    EphemeralSequential,
    /// Persistent, until the server deletes it once it has had a child and has none left
    /// (ZooKeeper 3.5's container node, reaped on the server's own schedule).
    Container,
    /// Persistent, until the server deletes it once it has had no child and no change of its
    /// data for `ttl_ms` (ZooKeeper 3.5's TTL node; the server needs its extended types on).
    PersistentWithTtl {
        /// How long it may stand idle, in milliseconds: from 1 to [`CreateMode::MAX_TTL_MS`].
        ttl_ms: i64,
    },
    /// A TTL node with a server-assigned sequence number appended to its name.
    PersistentSequentialWithTtl {
        /// How long it may stand idle, in milliseconds: from 1 to [`CreateMode::MAX_TTL_MS`].
        ttl_ms: i64,
    },
}

impl CreateMode {
    /// Whether the node dies with its session.
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }

    /// Whether the server appends a sequence number.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTtl { .. }
        )
    }

    /// The longest TTL a server accepts: it keeps a TTL in the low 40 bits of the stat's
    /// `ephemeral_owner`.
    pub const MAX_TTL_MS: i64 = (1 << 40) - 1;

    /// Whether the server deletes such a node on its own: a container or a TTL node.
    pub fn is_reaped(self) -> bool {
        self == CreateMode::Container || self.ttl_ms().is_some()
    }

    /// A TTL mode's time to live, in milliseconds.
    pub fn ttl_ms(self) -> Option<i64> {
        match self {
            CreateMode::PersistentWithTtl { ttl_ms }
            | CreateMode::PersistentSequentialWithTtl { ttl_ms } => Some(ttl_ms),
            _ => None,
        }
    }
}

/// The metadata of a znode, field for field as ZooKeeper reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Stat {
    /// The zxid of the transaction that created the node.
    pub czxid: Zxid,
    /// The zxid of the transaction that last modified the node's data.
    pub mzxid: Zxid,
    /// The zxid of the transaction that last created or deleted a child.
    pub pzxid: Zxid,
    /// Creation time, milliseconds since the epoch (server clock).
    pub ctime: i64,
    /// Last modification time, milliseconds since the epoch (server clock).
    pub mtime: i64,
    /// Number of changes to the data.
    pub version: i32,
    /// The child version as the server reports it (`2 * child-creation counter - numChildren`).
    pub cversion: i32,
    /// Number of changes to the ACL.
    pub aversion: i32,
    /// The owning session of an ephemeral node, 0 for a persistent one.
    pub ephemeral_owner: SessionId,
    /// Length of the data in bytes.
    pub data_length: i32,
    /// Number of children.
    pub num_children: i32,
}

impl Stat {
    /// The stat of a node created inside a multi: ZooKeeper (3.8 and earlier) answers such a
    /// create with the path alone, and a client reports this stat for it (zxids and versions -1).
    pub const UNKNOWN: Stat = Stat {
        czxid: -1,
        mzxid: -1,
        pzxid: -1,
        ctime: 0,
        mtime: 0,
        version: -1,
        cversion: -1,
        aversion: -1,
        ephemeral_owner: 0,
        data_length: 0,
        num_children: 0,
    };
}

/// ZooKeeper's error codes, with their numeric values from the wire protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ZkError {
    /// A system error on the server (-1).
    SystemError,
    /// A state inside the server is inconsistent; also the code of multi ops after a failed one (-2).
    RuntimeInconsistency,
    /// Data inconsistency (-3).
    DataInconsistency,
    /// The connection to the server was lost; the operation may or may not have been applied (-4).
    ConnectionLoss,
    /// Error while marshalling or unmarshalling data (-5).
    MarshallingError,
    /// Operation is unimplemented (-6).
    Unimplemented,
    /// Operation timeout (-7).
    OperationTimeout,
    /// Invalid arguments, such as a malformed path (-8).
    BadArguments,
    /// A generic API error (-100).
    ApiError,
    /// The node does not exist (-101).
    NoNode,
    /// Not authenticated (-102).
    NoAuth,
    /// The expected version does not match (-103).
    BadVersion,
    /// Ephemeral nodes may not have children (-108).
    NoChildrenForEphemerals,
    /// The node already exists (-110).
    NodeExists,
    /// The node has children (-111).
    NotEmpty,
    /// The session has been expired by the server (-112).
    SessionExpired,
    /// Invalid callback (-113).
    InvalidCallback,
    /// Invalid ACL (-114).
    InvalidAcl,
    /// Client authentication failed (-115).
    AuthFailed,
    /// The session moved to another server (-118).
    SessionMoved,
    /// The session holds no watch of the kind asked for on the path (-121).
    NoWatcher,
    /// The client has been closed by the application; not a server code.
    Closed,
}

impl ZkError {
    /// The numeric code ZooKeeper uses on the wire (`KeeperException.Code`); `Closed` has none
    /// and reports ZooKeeper's `-1` system error code.
    pub fn code(self) -> i32 {
        match self {
            ZkError::SystemError | ZkError::Closed => -1,
            ZkError::RuntimeInconsistency => -2,
            ZkError::DataInconsistency => -3,
            ZkError::ConnectionLoss => -4,
            ZkError::MarshallingError => -5,
            ZkError::Unimplemented => -6,
            ZkError::OperationTimeout => -7,
            ZkError::BadArguments => -8,
            ZkError::ApiError => -100,
            ZkError::NoNode => -101,
            ZkError::NoAuth => -102,
            ZkError::BadVersion => -103,
            ZkError::NoChildrenForEphemerals => -108,
            ZkError::NodeExists => -110,
            ZkError::NotEmpty => -111,
            ZkError::SessionExpired => -112,
            ZkError::InvalidCallback => -113,
            ZkError::InvalidAcl => -114,
            ZkError::AuthFailed => -115,
            ZkError::SessionMoved => -118,
            ZkError::NoWatcher => -121,
        }
    }
}

impl ZkError {
    /// Every error, for looking one up by its code.
    const ALL: [ZkError; 21] = [
        ZkError::SystemError,
        ZkError::RuntimeInconsistency,
        ZkError::DataInconsistency,
        ZkError::ConnectionLoss,
        ZkError::MarshallingError,
        ZkError::Unimplemented,
        ZkError::OperationTimeout,
        ZkError::BadArguments,
        ZkError::ApiError,
        ZkError::NoNode,
        ZkError::NoAuth,
        ZkError::BadVersion,
        ZkError::NoChildrenForEphemerals,
        ZkError::NodeExists,
        ZkError::NotEmpty,
        ZkError::SessionExpired,
        ZkError::InvalidCallback,
        ZkError::InvalidAcl,
        ZkError::AuthFailed,
        ZkError::SessionMoved,
        ZkError::NoWatcher,
    ];

    /// The error a wire code stands for; `None` for 0 (OK) and codes zklab does not know.
    pub fn from_code(code: i32) -> Option<ZkError> {
        ZkError::ALL.into_iter().find(|error| error.code() == code)
    }
}

impl fmt::Display for ZkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for ZkError {}

/// One ZooKeeper request. A machine's step names the op it wants sent; a client sends it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
pub enum Op {
    /// Create a znode.
    Create {
        /// Path; for a sequential mode, the prefix the sequence number is appended to.
        path: String,
        /// Initial data.
        #[rename(keep)]
        data: Vec<u8>,
        /// Persistent or ephemeral, sequential or not.
        mode: CreateMode,
        /// Who may do what with it; `auth` entries stand for the creating session's identities.
        #[rename(keep)]
        acl: Acls,
    },
    /// Delete a znode if its version matches (`-1` matches any).
    Delete {
        /// Path of the node.
        path: String,
        /// Expected data version, or -1.
        version: i32,
    },
    /// Read a node's stat; with `watch`, leave a one-time watch whether or not the node exists.
    Exists {
        /// Path of the node.
        path: String,
        /// Leave a data watch (fires on create, delete or set_data).
        watch: bool,
    },
    /// Read a node's data and stat; with `watch`, leave a one-time data watch if it exists.
    GetData {
        /// Path of the node.
        path: String,
        /// Leave a data watch.
        watch: bool,
    },
    /// List a node's children (names, unordered); with `watch`, leave a one-time child watch.
    GetChildren {
        /// Path of the parent.
        path: String,
        /// Leave a child watch (fires when a child is created or deleted, or the node is deleted).
        watch: bool,
    },
    /// Replace a node's data if its version matches (`-1` matches any).
    SetData {
        /// Path of the node.
        path: String,
        /// New data.
        #[rename(keep)]
        data: Vec<u8>,
        /// Expected data version, or -1.
        version: i32,
    },
    /// Fail unless the node exists at the version (`-1` matches any); only meaningful in a multi.
    Check {
        /// Path of the node.
        path: String,
        /// Expected data version, or -1.
        version: i32,
    },
    /// Bring the server this session talks to up to date with the leader.
    Sync {
        /// Path the sync is for.
        path: String,
    },
    /// Apply write ops (create, delete, set_data, check) all or nothing.
    Multi(Vec<Op>),
    /// Read nodes in one request (ZooKeeper 3.6's multiRead): `GetData` and `GetChildren`
    /// without watches, each answered on its own, all from one state of the server.
    MultiRead(Vec<Op>),
    /// Count the nodes under a node, at every depth (ZooKeeper 3.6's getAllChildrenNumber).
    CountDescendants {
        /// Path of the node.
        path: String,
    },
    /// List this session's ephemeral nodes whose paths start with `prefix` (ZooKeeper 3.6's
    /// getEphemerals; `/`: all of them).
    GetEphemerals {
        /// What the paths start with: a path, matched as text (`/a` matches `/ab`).
        prefix: String,
    },
    /// Leave a watch that stays until removed (ZooKeeper 3.6's addWatch), on a node that may
    /// not exist yet.
    AddWatch {
        /// Path of the node.
        path: String,
        /// On the node alone, or on it and every node under it.
        mode: AddWatchMode,
    },
    /// Remove this session's watches of a kind on a path (ZooKeeper 3.5's removeWatches);
    /// NoWatcher when it holds none.
    RemoveWatches {
        /// Path of the node.
        path: String,
        /// Which watches.
        kind: WatcherKind,
    },
    /// Ask whether watches of a kind stand on a path (ZooKeeper 3.5's checkWatches); NoWatcher
    /// when none does.
    CheckWatches {
        /// Path of the node.
        path: String,
        /// Which watches.
        kind: WatcherKind,
    },
    /// Read a node's ACL and stat (getACL).
    GetAcl {
        /// Path of the node.
        path: String,
    },
    /// Replace a node's ACL if its ACL version matches (`-1` matches any) (setACL).
    SetAcl {
        /// Path of the node.
        path: String,
        /// The new ACL; `auth` entries stand for this session's identities.
        #[rename(keep)]
        acl: Acls,
        /// Expected ACL version (the stat's `aversion`), or -1.
        version: i32,
    },
    /// Add an identity to this session (addAuth): `digest` with `user:password`, say.
    AddAuth {
        /// The authentication scheme.
        #[rename(keep)]
        scheme: String,
        /// What the scheme reads: for `digest`, `user:password`. `None` is the null that
        /// ZooKeeper's Java client sends when given nothing (a digest provider fails on it).
        #[rename(keep)]
        auth: Option<Vec<u8>>,
    },
    /// The identities this session is known by (ZooKeeper 3.7's whoAmI).
    WhoAmI,
}

/// How a watch left by [`Op::AddWatch`] fires. Neither is spent by firing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AddWatchMode {
    /// On the node: its creation, deletion and data changes, and changes of its children, as a
    /// data watch and a child watch that never fire out.
    Persistent,
    /// On the node and every node under it: their creations, deletions and data changes, each
    /// event naming the node that changed; never NodeChildrenChanged.
    PersistentRecursive,
}

impl AddWatchMode {
    /// The mode's number on the wire (`AddWatchMode` in ZooKeeper's client).
    pub fn code(self) -> i32 {
        match self {
            AddWatchMode::Persistent => 0,
            AddWatchMode::PersistentRecursive => 1,
        }
    }
}

/// Which watches [`Op::RemoveWatches`] and [`Op::CheckWatches`] name (ZooKeeper's
/// `WatcherType`). The server keeps a persistent watch both as a data and as a child watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WatcherKind {
    /// Child watches.
    Children,
    /// Data and exists watches.
    Data,
    /// Both.
    Any,
}

impl WatcherKind {
    /// The kind's number on the wire.
    pub fn code(self) -> i32 {
        match self {
            WatcherKind::Children => 1,
            WatcherKind::Data => 2,
            WatcherKind::Any => 3,
        }
    }
}

impl Op {
    /// Whether the op is a transaction: it costs a zxid even when it fails. A lone `Check` is a
    /// read; inside a multi it is part of the transaction.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Op::Create { .. }
                | Op::Delete { .. }
                | Op::SetData { .. }
                | Op::SetAcl { .. }
                | Op::Multi(_)
        )
    }

    /// The op with every path it names, inside a multi too, passed through `place` (to put
    /// an op under a root of its own, as a chroot does).
    pub fn map_paths(&self, place: &impl Fn(&str) -> String) -> Op {
        let mut op = self.clone();
        match &mut op {
            Op::Create { path, .. }
            | Op::Delete { path, .. }
            | Op::Exists { path, .. }
            | Op::GetData { path, .. }
            | Op::GetChildren { path, .. }
            | Op::SetData { path, .. }
            | Op::Check { path, .. }
            | Op::Sync { path }
            | Op::CountDescendants { path }
            | Op::GetEphemerals { prefix: path }
            | Op::AddWatch { path, .. }
            | Op::RemoveWatches { path, .. }
            | Op::CheckWatches { path, .. }
            | Op::GetAcl { path }
            | Op::SetAcl { path, .. } => *path = place(path),
            Op::Multi(ops) | Op::MultiRead(ops) => {
                *ops = ops.iter().map(|op| op.map_paths(place)).collect()
            }
            Op::AddAuth { .. } | Op::WhoAmI => {}
        }
        op
    }

    /// The path the op names; a multi names its first op's path, or "/" when empty, and an op
    /// on the session rather than a node (addAuth, whoAmI) "/".
    pub fn path(&self) -> &str {
        match self {
            Op::Create { path, .. }
            | Op::Delete { path, .. }
            | Op::Exists { path, .. }
            | Op::GetData { path, .. }
            | Op::GetChildren { path, .. }
            | Op::SetData { path, .. }
            | Op::Check { path, .. }
            | Op::Sync { path }
            | Op::CountDescendants { path }
            | Op::GetEphemerals { prefix: path }
            | Op::AddWatch { path, .. }
            | Op::RemoveWatches { path, .. }
            | Op::CheckWatches { path, .. }
            | Op::GetAcl { path }
            | Op::SetAcl { path, .. } => path,
            Op::Multi(ops) | Op::MultiRead(ops) => ops.first().map_or("/", Op::path),
            Op::AddAuth { .. } | Op::WhoAmI => "/",
        }
    }
}

/// The successful result of an [`Op`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
pub enum OpResult {
    /// The node was created under this name (with the sequence number, if sequential).
    Created {
        /// The actual path of the new node.
        path: String,
        /// Its stat right after creation.
        stat: Stat,
    },
    /// The node was deleted.
    Deleted,
    /// The node's stat, or `None` when it does not exist.
    Exists(Option<Stat>),
    /// The node's data and stat.
    Data {
        /// The data.
        #[rename(keep)]
        data: Vec<u8>,
        /// The stat.
        stat: Stat,
    },
    /// The node's children (names only) and its stat.
    Children {
        /// Child names, in the order the server lists them (unspecified: sort by sequence).
        children: Vec<String>,
        /// The parent's stat.
        stat: Stat,
    },
    /// The node's stat after set_data.
    SetData(Stat),
    /// The check held.
    Checked,
    /// The sync completed.
    Synced,
    /// An op of a failed multi that would have succeeded: ZooKeeper reports it as OK (code 0),
    /// and it was rolled back with the rest.
    RolledBack,
    /// The per-op results of a multi: all `Ok` when it succeeded; otherwise the ops before the
    /// failing one report `Ok`, the failing one its code and later ones `RuntimeInconsistency`.
    Multi(Vec<Result<OpResult, ZkError>>),
    /// A node's children's names alone, as a multiRead's `GetChildren` gives them (no stat).
    Listed(Vec<String>),
    /// The results of a multiRead's reads, each on its own: `Data`, `Listed`, or an error.
    MultiRead(Vec<Result<OpResult, ZkError>>),
    /// How many nodes are under the node.
    Counted(i32),
    /// The session's ephemeral nodes' paths, in an order of the server's.
    Ephemerals(Vec<String>),
    /// The watch of an [`Op::AddWatch`] stands.
    WatchAdded,
    /// The watches an [`Op::RemoveWatches`] named are gone.
    WatchesRemoved,
    /// Watches of the kind an [`Op::CheckWatches`] named stand on the path.
    WatchesHeld,
    /// A node's ACL and stat.
    Acl {
        /// The ACL; without ADMIN on the node, digest entries show `user:x` for their hash.
        #[rename(keep)]
        acl: Acls,
        /// The stat.
        stat: Stat,
    },
    /// The node's stat after setACL.
    AclSet(Stat),
    /// The session now has the identity an [`Op::AddAuth`] asked for.
    Authenticated,
    /// The identities the session is known by, in the order the server keeps them.
    Identities(#[rename(keep)] Vec<ClientInfo>),
}

/// One identity of a session, as whoAmI tells it (ZooKeeper's `ClientInfo`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientInfo {
    /// The scheme: `ip`, `digest`, ...
    pub scheme: String,
    /// Who in it: the address for `ip`, the user's name for `digest`.
    pub user: String,
}

/// The outcome of sending an op: its result or ZooKeeper's error code.
pub type OpReply = Result<OpResult, ZkError>;

/// The kind of change a watch reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// A node was created where an `exists` watch waited.
    NodeCreated,
    /// A watched node was deleted.
    NodeDeleted,
    /// A watched node's data was set.
    NodeDataChanged,
    /// A child of a watched node was created or deleted.
    NodeChildrenChanged,
    /// The client removed a data or exists watch ([`Op::RemoveWatches`]); the server never
    /// sends it.
    DataWatchRemoved,
    /// The client removed a child watch.
    ChildWatchRemoved,
    /// The client removed a persistent or persistent recursive watch.
    PersistentWatchRemoved,
}

/// A fired watch, or the client's word that it removed one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
pub struct WatchedEvent {
    /// What changed.
    pub event_type: EventType,
    /// The watched path.
    pub path: String,
}

/// A change of the connection or session state, as the client library reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SessionEvent {
    /// The connection is lost; the session may still be alive. Operations fail with ConnectionLoss.
    Disconnected,
    /// Connected (again) within the same session; watches still stand.
    SyncConnected,
    /// The server expired the session: its ephemeral nodes and watches are gone for good.
    Expired,
    /// The application closed the session.
    Closed,
}

/// One item of a session's ordered event stream.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, RenameSessions)]
pub enum ZkEvent {
    /// A watch fired.
    Watch(WatchedEvent),
    /// The connection or session changed state.
    Session(SessionEvent),
}

/// A handle on a ZooKeeper session, as a recipe sees it.
///
/// One primitive, [`ZkClient::call`], sends any [`Op`]; the named methods are conveniences over it.
/// Events arrive on one ordered stream per handle: the watches set through this handle, and
/// every change of the session's state. A client delivers a watch event before any reply that
/// reflects the change behind it. [`ZkClient::listener`] makes another handle on the same
/// session with a stream of its own, so recipes and tasks sharing a session never take each
/// other's events (each recipe's driver takes one).
pub trait ZkClient {
    /// Sends one op and waits for its reply. A watch it sets is delivered to this handle.
    fn call(&self, op: Op) -> impl Future<Output = OpReply> + Send;

    /// Waits for this handle's next event; `None` once the session is closed and drained.
    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send;

    /// Takes this handle's next event that has already arrived, without waiting.
    fn try_next_event(&self) -> Option<ZkEvent>;

    /// Another handle on the same session, with an event stream of its own: the watches set
    /// through it are delivered to it alone, the session's news to it as to every handle (as
    /// ZooKeeper's client hands a fired watch to the watcher its read registered). It hears
    /// what happens from now on; dropping it drops its watches' events.
    fn listener(&self) -> Self
    where
        Self: Sized;

    /// The id of this session.
    fn session_id(&self) -> SessionId;

    /// Closes the session: its ephemeral nodes go at once and later calls fail with `Closed`.
    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send;

    /// Waits `duration` on this client's clock (sim time in the simulator, wall time on a real
    /// server): recipe timers run on it.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send;

    /// Creates a node with the open ACL (`world:anyone:cdrwa`, which a client may replace with
    /// its own default, as `RealZk::with_acls` does); returns its actual path.
    fn create(
        &self,
        path: &str,
        data: &[u8],
        mode: CreateMode,
    ) -> impl Future<Output = Result<(String, Stat), ZkError>> + Send {
        let op = Op::Create {
            path: path.to_owned(),
            data: data.to_vec(),
            mode,
            acl: Acls::OPEN,
        };
        let reply = self.call(op);
        picked(reply, |result| match result {
            OpResult::Created { path, stat } => Some((path, stat)),
            _ => None,
        })
    }

    /// Deletes a node if its version matches (`-1` for any).
    fn delete(&self, path: &str, version: i32) -> impl Future<Output = Result<(), ZkError>> + Send {
        let reply = self.call(Op::Delete {
            path: path.to_owned(),
            version,
        });
        picked(reply, |result| match result {
            OpResult::Deleted => Some(()),
            _ => None,
        })
    }

    /// The node's stat, or `None`; with `watch`, leaves a one-time watch either way.
    fn exists(
        &self,
        path: &str,
        watch: bool,
    ) -> impl Future<Output = Result<Option<Stat>, ZkError>> + Send {
        let reply = self.call(Op::Exists {
            path: path.to_owned(),
            watch,
        });
        picked(reply, |result| match result {
            OpResult::Exists(stat) => Some(stat),
            _ => None,
        })
    }

    /// The node's data and stat; with `watch`, leaves a one-time data watch.
    fn get_data(
        &self,
        path: &str,
        watch: bool,
    ) -> impl Future<Output = Result<(Vec<u8>, Stat), ZkError>> + Send {
        let reply = self.call(Op::GetData {
            path: path.to_owned(),
            watch,
        });
        picked(reply, |result| match result {
            OpResult::Data { data, stat } => Some((data, stat)),
            _ => None,
        })
    }

    /// The node's children (unordered); with `watch`, leaves a one-time child watch.
    fn get_children(
        &self,
        path: &str,
        watch: bool,
    ) -> impl Future<Output = Result<Vec<String>, ZkError>> + Send {
        let reply = self.call(Op::GetChildren {
            path: path.to_owned(),
            watch,
        });
        picked(reply, |result| match result {
            OpResult::Children { children, .. } => Some(children),
            _ => None,
        })
    }

    /// Replaces the node's data if its version matches (`-1` for any); returns the new stat.
    fn set_data(
        &self,
        path: &str,
        data: &[u8],
        version: i32,
    ) -> impl Future<Output = Result<Stat, ZkError>> + Send {
        let op = Op::SetData {
            path: path.to_owned(),
            data: data.to_vec(),
            version,
        };
        let reply = self.call(op);
        picked(reply, |result| match result {
            OpResult::SetData(stat) => Some(stat),
            _ => None,
        })
    }

    /// Waits until the server this session talks to has caught up with the leader.
    fn sync(&self, path: &str) -> impl Future<Output = Result<(), ZkError>> + Send {
        let reply = self.call(Op::Sync {
            path: path.to_owned(),
        });
        picked(reply, |result| match result {
            OpResult::Synced => Some(()),
            _ => None,
        })
    }

    /// Applies the ops all or nothing; see [`OpResult::Multi`] for the per-op results.
    fn multi(
        &self,
        ops: Vec<Op>,
    ) -> impl Future<Output = Result<Vec<Result<OpResult, ZkError>>, ZkError>> + Send {
        let reply = self.call(Op::Multi(ops));
        picked(reply, |result| match result {
            OpResult::Multi(results) => Some(results),
            _ => None,
        })
    }

    /// How many nodes are under `path`, at every depth.
    fn count_descendants(&self, path: &str) -> impl Future<Output = Result<i32, ZkError>> + Send {
        let reply = self.call(Op::CountDescendants {
            path: path.to_owned(),
        });
        picked(reply, |result| match result {
            OpResult::Counted(count) => Some(count),
            _ => None,
        })
    }

    /// This session's ephemeral nodes whose paths start with `prefix` (`/`: all of them).
    fn ephemerals(
        &self,
        prefix: &str,
    ) -> impl Future<Output = Result<Vec<String>, ZkError>> + Send {
        let reply = self.call(Op::GetEphemerals {
            prefix: prefix.to_owned(),
        });
        picked(reply, |result| match result {
            OpResult::Ephemerals(paths) => Some(paths),
            _ => None,
        })
    }

    /// Leaves a watch on `path` that stays until removed: on the node alone, or on it and
    /// every node under it. Its events come to this handle.
    fn add_watch(
        &self,
        path: &str,
        mode: AddWatchMode,
    ) -> impl Future<Output = Result<(), ZkError>> + Send {
        let reply = self.call(Op::AddWatch {
            path: path.to_owned(),
            mode,
        });
        picked(reply, |result| match result {
            OpResult::WatchAdded => Some(()),
            _ => None,
        })
    }

    /// Removes the session's watches of `kind` on `path`; each handle that held one hears a
    /// removal event. NoWatcher when the session holds none.
    fn remove_watches(
        &self,
        path: &str,
        kind: WatcherKind,
    ) -> impl Future<Output = Result<(), ZkError>> + Send {
        let reply = self.call(Op::RemoveWatches {
            path: path.to_owned(),
            kind,
        });
        picked(reply, |result| match result {
            OpResult::WatchesRemoved => Some(()),
            _ => None,
        })
    }

    /// The node's ACL and stat.
    fn get_acl(&self, path: &str) -> impl Future<Output = Result<(Acls, Stat), ZkError>> + Send {
        let reply = self.call(Op::GetAcl {
            path: path.to_owned(),
        });
        picked(reply, |result| match result {
            OpResult::Acl { acl, stat } => Some((acl, stat)),
            _ => None,
        })
    }

    /// Replaces the node's ACL if its ACL version matches (`-1` for any); returns the new stat.
    fn set_acl(
        &self,
        path: &str,
        acl: Acls,
        version: i32,
    ) -> impl Future<Output = Result<Stat, ZkError>> + Send {
        let op = Op::SetAcl {
            path: path.to_owned(),
            acl,
            version,
        };
        let reply = self.call(op);
        picked(reply, |result| match result {
            OpResult::AclSet(stat) => Some(stat),
            _ => None,
        })
    }

    /// Adds an identity to the session: `add_auth("digest", b"alice:secret")`. AuthFailed when
    /// the server's scheme refuses it.
    fn add_auth(
        &self,
        scheme: &str,
        auth: &[u8],
    ) -> impl Future<Output = Result<(), ZkError>> + Send {
        let op = Op::AddAuth {
            scheme: scheme.to_owned(),
            auth: Some(auth.to_vec()),
        };
        let reply = self.call(op);
        picked(reply, |result| match result {
            OpResult::Authenticated => Some(()),
            _ => None,
        })
    }

    /// The identities the session is known by.
    fn who_am_i(&self) -> impl Future<Output = Result<Vec<ClientInfo>, ZkError>> + Send {
        let reply = self.call(Op::WhoAmI);
        picked(reply, |result| match result {
            OpResult::Identities(identities) => Some(identities),
            _ => None,
        })
    }

    /// Reads nodes in one request (`GetData`, `GetChildren`, without watches); see
    /// [`OpResult::MultiRead`] for the per-read results.
    fn multi_read(
        &self,
        ops: Vec<Op>,
    ) -> impl Future<Output = Result<Vec<Result<OpResult, ZkError>>, ZkError>> + Send {
        let reply = self.call(Op::MultiRead(ops));
        picked(reply, |result| match result {
            OpResult::MultiRead(results) => Some(results),
            _ => None,
        })
    }
}

/// What `wanted` picks out of a successful reply. A reply of another shape means the client
/// implementation is broken, not the server: reported as ZooKeeper's marshalling error rather
/// than a panic.
async fn picked<T>(
    reply: impl Future<Output = OpReply>,
    wanted: fn(OpResult) -> Option<T>,
) -> Result<T, ZkError> {
    wanted(reply.await?).ok_or(ZkError::MarshallingError)
}
