//! A conformance case: operations from a few sessions, and the proptest strategy that generates
//! (and shrinks) them.
//!
//! Paths in a case are written as the case sees them: the runner places each case under a fresh
//! node of its own, so `/a` means `<case root>/a` on both servers and no case sees another's
//! nodes. Paths under `/zookeeper` stay absolute (the reserved tree is the same on every server),
//! and so does `/` itself (the ops on it are those every server answers alike); a path that does
//! not start with `/` is malformed anyway and is sent as is.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use crate::recipes::acl::{Acl, Acls, Id, Perms};
use crate::recipes::client::{AddWatchMode, CreateMode, Op, WatcherKind};
use crate::sim::digest::digest_id;
use proptest::collection::vec;
use proptest::prelude::*;

/// Most sessions a case opens.
pub const MAX_SESSIONS: usize = 3;

/// One step of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A session sends an op and waits for the reply.
    Call {
        /// Index of the session (0-based).
        session: usize,
        /// The op, with case-relative paths.
        op: Op,
    },
    /// A session closes: its ephemerals go; its later calls fail with `Closed`.
    Close {
        /// Index of the session.
        session: usize,
    },
    /// The server expires a session: its ephemerals go, and the watches on them fire. The step
    /// ends once the session has heard it.
    Expire {
        /// Index of the session.
        session: usize,
    },
    /// The server drops a session's connection. The step ends once the session is back.
    Disconnect {
        /// Index of the session.
        session: usize,
    },
    /// The server applies a session's write, but the reply is lost and the connection drops.
    /// The step ends once the session is back.
    LoseReply {
        /// Index of the session.
        session: usize,
        /// A create, delete or setData, with case-relative paths.
        op: Op,
    },
    /// In an ensemble, the follower a session is attached to dies, and the session, which
    /// knows no other server, is away until [`Step::Back`].
    Away {
        /// Index of the session.
        session: usize,
    },
    /// The follower restarts. The step ends once the session is back, its watches re-registered.
    Back {
        /// Index of the session.
        session: usize,
    },
    /// Several sessions send a call each, none waiting for another's answer: the server
    /// applies them in an order of its own. The step ends once every answer is in; the events
    /// the calls caused are taken at each session's next step.
    Together {
        /// Each session's call (distinct sessions), with case-relative paths.
        calls: Vec<(usize, Op)>,
        /// `None`: sent at once. A simulated server, which would always pick the same order,
        /// is given each order in turn instead (indexes into `calls`, see [`orderings`]).
        order: Option<Vec<usize>>,
    },
}

impl Step {
    /// The session that takes the step (the first one, for calls sent together).
    pub fn session(&self) -> usize {
        match self {
            Step::Call { session, .. }
            | Step::Close { session }
            | Step::Expire { session }
            | Step::Disconnect { session }
            | Step::LoseReply { session, .. }
            | Step::Away { session }
            | Step::Back { session } => *session,
            Step::Together { calls, .. } => calls.first().map_or(0, |(session, _)| *session),
        }
    }

    /// The step's ops.
    fn ops(&self) -> Vec<&Op> {
        match self {
            Step::Call { op, .. } | Step::LoseReply { op, .. } => vec![op],
            Step::Together { calls, .. } => calls.iter().map(|(_, op)| op).collect(),
            _ => Vec::new(),
        }
    }
}

impl Case {
    /// Counts the requests the case sends into `counts`, by the name of the request a client
    /// sends for each (`create2`, `createContainer`, `createTTL` with the mode, `getData`, ...),
    /// the ops inside a multi or a multiRead among them.
    pub fn tally_requests(&self, counts: &mut BTreeMap<String, u64>) {
        fn tally(op: &Op, counts: &mut BTreeMap<String, u64>) {
            *counts.entry(request_name(op)).or_default() += 1;
            if let Op::Multi(ops) | Op::MultiRead(ops) = op {
                ops.iter().for_each(|op| tally(op, counts));
            }
        }
        for op in self.steps.iter().flat_map(Step::ops) {
            tally(op, counts);
        }
    }
}

/// The name of the request a client sends for `op` (ZooKeeper's `OpCode`), a create's with its
/// mode.
fn request_name(op: &Op) -> String {
    let name = match op {
        Op::Create { mode, .. } => {
            return match mode {
                CreateMode::Container => "createContainer".to_owned(),
                CreateMode::PersistentWithTtl { .. } => "createTTL persistent".to_owned(),
                CreateMode::PersistentSequentialWithTtl { .. } => {
                    "createTTL persistent sequential".to_owned()
                }
                CreateMode::Persistent => "create2 persistent".to_owned(),
                CreateMode::PersistentSequential => "create2 persistent sequential".to_owned(),
                CreateMode::Ephemeral => "create2 ephemeral".to_owned(),
                CreateMode::EphemeralSequential => "create2 ephemeral sequential".to_owned(),
            }
        }
        Op::Delete { .. } => "delete",
        Op::Exists { .. } => "exists",
        Op::GetData { .. } => "getData",
        Op::GetChildren { .. } => "getChildren2",
        Op::SetData { .. } => "setData",
        Op::Check { .. } => "check",
        Op::Sync { .. } => "sync",
        Op::Multi(_) => "multi",
        Op::MultiRead(_) => "multiRead",
        Op::CountDescendants { .. } => "getAllChildrenNumber",
        Op::GetEphemerals { .. } => "getEphemerals",
        Op::AddWatch { mode, .. } => match mode {
            AddWatchMode::Persistent => "addWatch persistent",
            AddWatchMode::PersistentRecursive => "addWatch persistent recursive",
        },
        Op::RemoveWatches { .. } => "removeWatches",
        Op::CheckWatches { .. } => "checkWatches",
        Op::GetAcl { .. } => "getACL",
        Op::SetAcl { .. } => "setACL",
        Op::AddAuth { .. } => "auth",
        Op::WhoAmI => "whoAmI",
    };
    name.to_owned()
}

/// Most orders of a case's calls sent together that a simulated server is given.
const MAX_ORDERINGS: usize = 720;

/// `steps` with every [`Step::Together`] sent at once given each order of its calls in turn
/// (the orders of the first one vary slowest): the cases a simulated server runs to find the
/// order a real one chose. The order the calls are listed in comes first; at most
/// `MAX_ORDERINGS`.
pub fn orderings(steps: &[Step]) -> Vec<Vec<Step>> {
    let mut all = vec![Vec::new()];
    for step in steps {
        let choices = match step {
            Step::Together { calls, order: None } => permutations(calls.len())
                .into_iter()
                .map(|order| Step::Together {
                    calls: calls.clone(),
                    order: Some(order),
                })
                .collect(),
            step => vec![step.clone()],
        };
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<Step>| {
                choices.iter().map(move |choice| {
                    let mut steps = prefix.clone();
                    steps.push(choice.clone());
                    steps
                })
            })
            .take(MAX_ORDERINGS)
            .collect();
    }
    all
}

/// Every order of `0..n`, `0, 1, ..` first.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let Some(last) = n.checked_sub(1) else {
        return vec![Vec::new()];
    };
    permutations(last)
        .into_iter()
        .flat_map(|shorter| {
            (0..n).rev().map(move |at| {
                let mut order = shorter.clone();
                order.insert(at, last);
                order
            })
        })
        .collect()
}

/// A sequence of steps from `sessions` sessions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// How many sessions the case opens before its first step.
    pub sessions: usize,
    /// The steps, run one after another.
    pub steps: Vec<Step>,
}

impl Case {
    /// The case with every case-relative path placed under `root`.
    pub fn rooted(&self, root: &str) -> Vec<Step> {
        self.steps
            .iter()
            .map(|step| match step {
                Step::Call { session, op } => Step::Call {
                    session: *session,
                    op: op.map_paths(&|path| rooted(path, root)),
                },
                Step::LoseReply { session, op } => Step::LoseReply {
                    session: *session,
                    op: op.map_paths(&|path| rooted(path, root)),
                },
                Step::Together { calls, order } => Step::Together {
                    calls: calls
                        .iter()
                        .map(|(session, op)| (*session, op.map_paths(&|path| rooted(path, root))))
                        .collect(),
                    order: order.clone(),
                },
                other => other.clone(),
            })
            .collect()
    }
}

impl Case {
    /// Whether a step names `/zookeeper/config` or a path under it.
    fn names_config(&self) -> bool {
        let named = std::cell::Cell::new(false);
        let visit = |path: &str| {
            named.set(named.get() || path.starts_with(CONFIG));
            path.to_owned()
        };
        for op in self.steps.iter().flat_map(Step::ops) {
            op.map_paths(&visit);
        }
        named.get()
    }
}

/// The configuration node: a standalone server's is empty, a quorum peer's lists the quorum.
pub const CONFIG: &str = "/zookeeper/config";

/// A case-relative path placed under `root`.
pub fn rooted(path: &str, root: &str) -> String {
    if path.starts_with('/') && path != ROOT && !is_reserved(path) {
        format!("{root}{path}")
    } else {
        path.to_owned()
    }
}

/// Whether the path lies in ZooKeeper's own `/zookeeper` tree.
fn is_reserved(path: &str) -> bool {
    path == "/zookeeper" || path.starts_with("/zookeeper/")
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} sessions", self.sessions)?;
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                Step::Call { session, op } => writeln!(f, "{i:>3}. s{session} {:?}", Shown(op))?,
                Step::Close { session } => writeln!(f, "{i:>3}. s{session} close")?,
                Step::Expire { session } => writeln!(f, "{i:>3}. s{session} expired")?,
                Step::Disconnect { session } => writeln!(f, "{i:>3}. s{session} disconnected")?,
                Step::Away { session } => writeln!(f, "{i:>3}. s{session} away: its server dies")?,
                Step::Back { session } => {
                    writeln!(f, "{i:>3}. s{session} back: its server restarts")?
                }
                Step::LoseReply { session, op } => {
                    writeln!(f, "{i:>3}. s{session} {:?}, reply lost", Shown(op))?
                }
                Step::Together { calls, order } => {
                    let calls: Vec<String> = calls
                        .iter()
                        .map(|(session, op)| format!("s{session} {:?}", Shown(op)))
                        .collect();
                    let how = match order {
                        None => "at once".to_owned(),
                        Some(order) => format!("in the order {order:?}"),
                    };
                    writeln!(f, "{i:>3}. {}, {how}", calls.join(" | "))?
                }
            }
        }
        Ok(())
    }
}

/// An op as `Debug` shows it, but long data as its length: a case may carry a megabyte.
struct Shown<'a>(&'a Op);

/// Data longer than this is shown as its length.
const SHOWN_DATA: usize = 16;

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let long = |data: &Vec<u8>| format!("<{} bytes>", data.len());
        match self.0 {
            Op::Create {
                path,
                data,
                mode,
                acl,
            } if data.len() > SHOWN_DATA => f
                .debug_struct("Create")
                .field("path", path)
                .field("data", &format_args!("{}", long(data)))
                .field("mode", mode)
                .field("acl", acl)
                .finish(),
            Op::SetData {
                path,
                data,
                version,
            } if data.len() > SHOWN_DATA => f
                .debug_struct("SetData")
                .field("path", path)
                .field("data", &format_args!("{}", long(data)))
                .field("version", version)
                .finish(),
            Op::Multi(ops) => f
                .debug_tuple("Multi")
                .field(&ops.iter().map(Shown).collect::<Vec<_>>())
                .finish(),
            op => op.fmt(f),
        }
    }
}

/// Nodes the cases create and address: few, so that ops collide often.
const NODES: [&str; 6] = ["/a", "/a/b", "/a/c", "/d", "/d/e", "/a/b/f"];

/// Prefixes for sequential creates: under a parent that may be shared, and `/a/` (a name that
/// is only the sequence number).
const SEQUENTIAL_PREFIXES: [&str; 4] = ["/a/s-", "/a/", "/d/q", "/a/b/s-"];

/// Paths ZooKeeper must refuse. `/zookeeper/config` is read-only for everyone, so no case can
/// change it; the rest of `/zookeeper` is writable and left out, as a case that changed it would
/// change what later cases see.
const ODD_PATHS: [&str; 9] = [
    "",
    "a",
    "/a/",
    "//a",
    "/a/./b",
    "/a/../d",
    "/a\u{1}",
    "/zookeeper/config",
    "/zookeeper/config/x",
];

/// Parents more often than their children, so that children can be made.
fn node() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => prop::sample::select(&NODES[..2]).prop_map(str::to_owned),
        2 => prop::sample::select(&NODES[..]).prop_map(str::to_owned),
    ]
}

/// Mostly well-formed nodes, sometimes an odd path.
fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => node(),
        1 => prop::sample::select(&ODD_PATHS[..]).prop_map(str::to_owned),
    ]
}

/// Mostly short data, sometimes longer.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop_oneof![
            Just(Vec::new()),
            Just(b"x".to_vec()),
            Just(b"data".to_vec())
        ],
        2 => vec(any::<u8>(), 5..300),
    ]
}

/// A create or setData with data about as long as a server takes: a few dozen bytes either
/// side of the limit for a case's paths. A request over it costs the connection, so such steps
/// come with the faults.
fn oversized_write() -> impl Strategy<Value = Op> {
    let data = (1_048_470..1_048_560usize).prop_map(|len| vec![b'z'; len]);
    (node(), data, any::<bool>()).prop_map(|(path, data, create)| match create {
        true => Op::Create {
            path,
            data,
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        },
        false => Op::SetData {
            path,
            data,
            version: -1,
        },
    })
}

/// Versions around the ones nodes reach in a short case, and `-1` (any).
fn version() -> impl Strategy<Value = i32> {
    prop_oneof![2 => Just(-1), 1 => 0..3i32]
}

/// Every mode; a TTL mostly long enough to outlive the case, now and then one a client refuses.
fn mode() -> impl Strategy<Value = CreateMode> {
    let ttl_ms = prop_oneof![
        6 => Just(60_000),
        1 => Just(0),
        1 => Just(CreateMode::MAX_TTL_MS + 1),
    ];
    prop_oneof![
        8 => prop::sample::select(
            &[
                CreateMode::Persistent,
                CreateMode::PersistentSequential,
                CreateMode::Ephemeral,
                CreateMode::EphemeralSequential,
            ][..],
        ),
        2 => Just(CreateMode::Container),
        1 => ttl_ms.clone().prop_map(|ttl_ms| CreateMode::PersistentWithTtl { ttl_ms }),
        1 => ttl_ms.prop_map(|ttl_ms| CreateMode::PersistentSequentialWithTtl { ttl_ms }),
    ]
}

fn create() -> impl Strategy<Value = Op> {
    (
        mode(),
        path(),
        data(),
        prop::sample::select(&SEQUENTIAL_PREFIXES[..]),
        prop_oneof![6 => Just(Acls::OPEN), 1 => acl()],
    )
        .prop_map(|(mode, path, data, prefix, acl)| Op::Create {
            path: if mode.is_sequential() {
                prefix.to_owned()
            } else {
                path
            },
            data,
            mode,
            acl,
        })
}

/// The users the cases authenticate as, `user:password`.
const USERS: [&str; 2] = ["alice:secret", "bob:pw"];

/// Any permissions, all of them more often: a node a case may not touch ends most of what it
/// does with it.
fn perms() -> impl Strategy<Value = Perms> {
    prop_oneof![2 => Just(Perms::ALL), 3 => (0..=31i32).prop_map(Perms)]
}

/// An ACL entry a server takes, or now and then one it refuses: anyone, the creating
/// session's own identities (`auth`), a user's digest, the loopback address or a network
/// without it; an unknown scheme, a digest without its hash, another world than anyone's, an
/// address of three parts.
fn acl_entry() -> impl Strategy<Value = Acl> {
    let id = prop_oneof![
        4 => Just(Id::ANYONE),
        1 => Just(Id::new("auth", "")),
        2 => prop::sample::select(&USERS[..]).prop_map(|user| Id::new("digest", digest_id(user))),
        1 => prop::sample::select(&["127.0.0.1", "127.0.0.0/8", "10.0.0.0/8"][..])
            .prop_map(|address| Id::new("ip", address)),
        1 => prop::sample::select(&[("foo", "bar"), ("digest", "alice"), ("world", "bob"), ("ip", "1.2.3")][..])
            .prop_map(|(scheme, id)| Id::new(scheme, id)),
    ];
    (perms(), id).prop_map(|(perms, id)| Acl::new(perms, id))
}

/// An ACL of one or two entries (duplicates now and then).
fn acl() -> impl Strategy<Value = Acls> {
    vec(acl_entry(), 1..=2).prop_map(Acls::new)
}

/// An op of the ACLs and the session's identities: a read or a change of a node's ACL (an
/// empty one, which the server refuses, among them), an authentication (now and then in a
/// scheme the server has no provider for, which ends the session), a whoAmI.
fn acl_op() -> impl Strategy<Value = Op> {
    let auth = prop_oneof![
        12 => prop::sample::select(&USERS[..]).prop_map(|user| ("digest", user.as_bytes().to_vec())),
        2 => Just(("ip", b"anything".to_vec())),
        1 => Just(("foo", b"bar".to_vec())),
    ];
    prop_oneof![
        2 => path().prop_map(|path| Op::GetAcl { path }),
        3 => set_acl(),
        2 => auth.prop_map(|(scheme, auth)| Op::AddAuth { scheme: scheme.to_owned(), auth: Some(auth) }),
        1 => Just(Op::WhoAmI),
    ]
}

fn delete() -> impl Strategy<Value = Op> {
    (path(), version()).prop_map(|(path, version)| Op::Delete { path, version })
}

fn set_data() -> impl Strategy<Value = Op> {
    (path(), data(), version()).prop_map(|(path, data, version)| Op::SetData {
        path,
        data,
        version,
    })
}

/// A write that may sit inside a multi, or stand alone.
fn write() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => create(),
        2 => delete(),
        2 => set_data(),
        1 => (node(), version()).prop_map(|(path, version)| Op::Check { path, version }),
    ]
}

/// A write inside a multi: now and then one on the root.
fn write_in_multi() -> impl Strategy<Value = Op> {
    let on_root = prop_oneof![
        check_root(),
        (prop::sample::select(&ROOT_MODES[..]), data()).prop_map(|(mode, data)| Op::Create {
            path: ROOT.to_owned(),
            data,
            mode,
            acl: Acls::OPEN,
        }),
    ];
    prop_oneof![16 => write(), 1 => on_root]
}

/// The root, which stays out of every case's own tree. The ops on it the cases make are those
/// whose answer does not depend on what else a server holds: a check of its version (no case
/// changes its data, so it stays 0), a create of it in a multi (it always exists), a sync.
/// Reads of it are left out: its children and stat are every case's.
///
/// Creating or deleting it alone, and a multi that deletes it, are left out as a limit of the
/// client library: it refuses them unsent (BadArguments, whatever the session's state), where
/// ZooKeeper's Java client sends them (the server answers NodeExists or BadArguments, among a
/// multi's results for a multi; an ended session's client, SessionExpired or Closed) and the
/// simulated client answers as that one does.
const ROOT: &str = "/";

/// The modes a create of the root is tried with in a multi (a sequential one would make a node
/// there).
const ROOT_MODES: [CreateMode; 2] = [CreateMode::Persistent, CreateMode::Ephemeral];

fn check_root() -> impl Strategy<Value = Op> {
    version().prop_map(|version| Op::Check {
        path: ROOT.to_owned(),
        version,
    })
}

/// The real side's client, whose reach the cases stay within.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RealClient {
    /// zklab's own client of the wire protocol (`WireZk`): every op, and persistent watches
    /// set again on reconnection, as ZooKeeper's Java client and the simulated one do.
    Wire,
    /// The `zookeeper-client` crate (`RealZk`): it cannot send removeWatches or checkWatches,
    /// and 0.11 never sets a persistent watch again on reconnection (its `resend_watches`
    /// computes `index.max(index)`, so it always sends SetWatches, without the persistent
    /// lists): a case where a fault may break a connection leaves none, or it would compare
    /// the two clients, not the two servers.
    Crate,
}

/// Which ops beyond the common ones a case may send.
#[derive(Clone, Copy)]
struct Reach {
    persistent_watches: bool,
    watch_removal: bool,
}

impl Reach {
    fn of(client: RealClient, faults: bool) -> Reach {
        Reach {
            persistent_watches: client == RealClient::Wire || !faults,
            watch_removal: client == RealClient::Wire,
        }
    }
}

fn op(reach: Reach) -> BoxedStrategy<Op> {
    let add_watch = (path(), add_watch_mode()).prop_map(|(path, mode)| Op::AddWatch { path, mode });
    // Of the nodes the cases make most, where watches stand most often.
    let removal = node().prop_flat_map(watch_removal);
    match (reach.persistent_watches, reach.watch_removal) {
        (true, true) => prop_oneof![
            19 => op_without_persistent_watches(),
            2 => add_watch,
            2 => removal
        ]
        .boxed(),
        (true, false) => prop_oneof![19 => op_without_persistent_watches(), 2 => add_watch].boxed(),
        (false, true) => prop_oneof![19 => op_without_persistent_watches(), 2 => removal].boxed(),
        (false, false) => op_without_persistent_watches().boxed(),
    }
}

/// A removeWatches or a checkWatches of `path`.
fn watch_removal(path: String) -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        Just(WatcherKind::Children),
        Just(WatcherKind::Data),
        Just(WatcherKind::Any)
    ];
    (kind, any::<bool>()).prop_map(move |(kind, remove)| match remove {
        true => Op::RemoveWatches {
            path: path.clone(),
            kind,
        },
        false => Op::CheckWatches {
            path: path.clone(),
            kind,
        },
    })
}

/// A session leaves a watch of any kind on a node, then removes or checks watches there: most
/// removals elsewhere find none.
fn watched_then_asked(sessions: usize) -> impl Strategy<Value = Vec<Step>> {
    (0..sessions, node())
        .prop_flat_map(|(session, path)| {
            let persistent = add_watch_mode().prop_map({
                let path = path.clone();
                move |mode| Op::AddWatch {
                    path: path.clone(),
                    mode,
                }
            });
            let watching = prop_oneof![3 => watching_read_of(path.clone()), 1 => persistent];
            (Just(session), watching, watch_removal(path))
        })
        .prop_map(|(session, watching, asked)| {
            vec![
                Step::Call {
                    session,
                    op: watching,
                },
                Step::Call { session, op: asked },
            ]
        })
}

fn op_without_persistent_watches() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => write(),
        1 => check_root(),
        2 => (path(), watch()).prop_map(|(path, watch)| Op::Exists { path, watch }),
        2 => (path(), watch()).prop_map(|(path, watch)| Op::GetData { path, watch }),
        2 => (path(), watch()).prop_map(|(path, watch)| Op::GetChildren { path, watch }),
        1 => prop_oneof![4 => node(), 1 => Just(ROOT.to_owned())]
            .prop_map(|path| Op::Sync { path }),
        2 => vec(write_in_multi(), 1..4).prop_map(Op::Multi),
        1 => vec(read_in_multi(), 1..4).prop_map(Op::MultiRead),
        1 => path().prop_map(|path| Op::CountDescendants { path }),
        1 => path().prop_map(|prefix| Op::GetEphemerals { prefix }),
        2 => acl_op(),
    ]
}

fn add_watch_mode() -> impl Strategy<Value = AddWatchMode> {
    prop_oneof![
        Just(AddWatchMode::Persistent),
        Just(AddWatchMode::PersistentRecursive)
    ]
}

/// A read a multiRead may hold: of a node's data or of its children, without a watch.
fn read_in_multi() -> impl Strategy<Value = Op> {
    let watch = false;
    prop_oneof![
        path().prop_map(move |path| Op::GetData { path, watch }),
        path().prop_map(move |path| Op::GetChildren { path, watch }),
    ]
}

/// Reads leave a watch more often than not: watches are what the cases are after.
fn watch() -> impl Strategy<Value = bool> {
    prop_oneof![2 => Just(true), 1 => Just(false)]
}

fn step(sessions: usize, reach: Reach) -> impl Strategy<Value = Step> {
    step_of(0..sessions, reach)
}

/// A step of one of `sessions`.
fn step_of(sessions: Range<usize>, reach: Reach) -> impl Strategy<Value = Step> {
    prop_oneof![
        40 => (sessions.clone(), op(reach)).prop_map(|(session, op)| Step::Call { session, op }),
        1 => sessions.prop_map(|session| Step::Close { session }),
    ]
}

/// Calls of two or more of `sessions` (at least two) sent at once.
///
/// A setACL is not among them. ZooKeeper checks a write against the record of the pending
/// changes, and the record a setACL leaves there keeps the ACL from before it
/// (`PrepRequestProcessor`: `nodeRecord.duplicate(zxid)` with only its aversion changed), so a
/// write sent with it may pass the old ACL until the setACL is committed: a race of a real
/// server's pipeline, which the simulated server, applying each request at once, has not.
fn together(sessions: usize, reach: Reach) -> impl Strategy<Value = Step> {
    let no_set_acl = op(reach).prop_filter("a setACL sent with other calls", |op| {
        !matches!(op, Op::SetAcl { .. })
    });
    prop::sample::subsequence((0..sessions).collect::<Vec<_>>(), 2..=sessions)
        .prop_flat_map(move |chosen| {
            let ops = vec(no_set_acl.clone(), chosen.len());
            (Just(chosen), ops)
        })
        .prop_map(|(chosen, ops)| Step::Together {
            calls: chosen.into_iter().zip(ops).collect(),
            order: None,
        })
}

/// A step of a case without faults: with two sessions or more, now and then calls sent at once.
fn plain_step(sessions: usize, reach: Reach) -> BoxedStrategy<Step> {
    match sessions {
        0 | 1 => step(sessions, reach).boxed(),
        _ => prop_oneof![
            20 => step(sessions, reach),
            1 => together(sessions, reach)
        ]
        .boxed(),
    }
}

/// A write whose reply a fault can lose: the server swallows every reply but those of reads.
fn lost_write() -> impl Strategy<Value = Op> {
    prop_oneof![3 => create(), 1 => delete(), 1 => set_data(), 1 => set_acl()]
}

/// A setACL, mostly of a node the case is likely to have made (an empty ACL, which the server
/// refuses, among the ACLs).
fn set_acl() -> impl Strategy<Value = Op> {
    let acl = prop_oneof![8 => acl(), 1 => Just(Acls::new(Vec::new())), 2 => Just(Acls::OPEN)];
    let path = prop_oneof![4 => node(), 1 => path()];
    // ACL versions stay low: a node's changes once or twice in a case, if at all.
    let version = prop_oneof![3 => Just(-1), 1 => 0..2i32];
    (path, acl, version).prop_map(|(path, acl, version)| Op::SetAcl { path, acl, version })
}

/// A step, or now and then a fault.
fn step_or_fault(sessions: usize, reach: Reach) -> impl Strategy<Value = Step> {
    prop_oneof![
        20 => step(sessions, reach),
        1 => (0..sessions).prop_map(|session| Step::Expire { session }),
        1 => (0..sessions).prop_map(|session| Step::Disconnect { session }),
        2 => (0..sessions, lost_write()).prop_map(|(session, op)| Step::LoseReply { session, op }),
        1 => (0..sessions, oversized_write()).prop_map(|(session, op)| Step::Call { session, op }),
    ]
}

/// The two top nodes, made by the first session: most cases start from them, so that their
/// ops meet existing nodes more often than missing ones.
fn prelude() -> Vec<Step> {
    ["/a", "/d"]
        .into_iter()
        .map(|path| Step::Call {
            session: 0,
            op: Op::Create {
                path: path.to_owned(),
                data: Vec::new(),
                mode: CreateMode::Persistent,
                acl: Acls::OPEN,
            },
        })
        .collect()
}

/// Cases for an ensemble, of 2 to [`MAX_SESSIONS`] sessions: session 0 is attached to a
/// follower, which dies while the other sessions take up to half of `max_steps` steps, and
/// restarts; up to a quarter of `max_steps` come before and after, and before those, session 0
/// leaves a few watches to re-register. Syncs keep every read up to date
/// (`synced_across_servers`).
pub fn ensemble_cases(max_steps: usize) -> impl Strategy<Value = Case> {
    let reach = Reach::of(RealClient::Crate, true);
    (2..=MAX_SESSIONS)
        .prop_flat_map(move |sessions| {
            let quarter = max_steps / 4;
            (
                vec(watching_read(), 1..=3),
                vec(step(sessions, reach), 0..=quarter),
                vec(step_of(1..sessions, reach), 1..=max_steps / 2),
                vec(step(sessions, reach), 0..=quarter),
            )
                .prop_map(move |(watches, before, away, after)| {
                    let steps = prelude()
                        .into_iter()
                        .chain(watches.into_iter().map(|op| Step::Call { session: 0, op }))
                        .chain(before)
                        .chain([Step::Away { session: 0 }])
                        .chain(away)
                        .chain([Step::Back { session: 0 }])
                        .chain(after);
                    let steps = synced_across_servers(steps);
                    Case { sessions, steps }
                })
        })
        .prop_filter("names the quorum's configuration", |case| {
            !case.names_config()
        })
}

/// A read that leaves a watch on a node.
fn watching_read() -> impl Strategy<Value = Op> {
    node().prop_flat_map(watching_read_of)
}

/// A read that leaves a watch on `path`.
fn watching_read_of(path: String) -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Exists {
            path: path.clone(),
            watch: true
        }),
        Just(Op::GetData {
            path: path.clone(),
            watch: true
        }),
        Just(Op::GetChildren { path, watch: true }),
    ]
}

/// `steps`, with a sync before every call of session 0 (its follower may not have applied a
/// write that another session has seen already) and before a call of another session that
/// follows a step of session 0 (the leader may apply a write a moment after the follower that
/// answered it).
fn synced_across_servers(steps: impl Iterator<Item = Step>) -> Vec<Step> {
    let mut last_session = None;
    let mut synced_steps = Vec::new();
    for step in steps {
        if let Step::Call { session, .. } = step {
            if session == 0 || last_session == Some(0) {
                synced_steps.push(synced(session));
            }
        }
        last_session = Some(step.session());
        synced_steps.push(step);
    }
    synced_steps
}

/// A sync of `/a` by `session`.
fn synced(session: usize) -> Step {
    Step::Call {
        session,
        op: Op::Sync {
            path: "/a".to_owned(),
        },
    }
}

/// Cases of 1 to [`MAX_SESSIONS`] sessions and 1 to `max_steps` steps (plus, mostly, the
/// `prelude`, which shrinking may drop); with `faults`, some steps are faults. The ops stay
/// within what `client` can send.
pub fn cases(max_steps: usize, faults: bool, client: RealClient) -> impl Strategy<Value = Case> {
    let reach = Reach::of(client, faults);
    (1..=MAX_SESSIONS)
        .prop_flat_map(move |sessions| {
            let with_prelude = prop_oneof![4 => Just(true), 1 => Just(false)];
            let each = match faults {
                false => plain_step(sessions, reach),
                true => step_or_fault(sessions, reach).boxed(),
            }
            .prop_map(|step| vec![step]);
            let each = match reach.watch_removal {
                true => prop_oneof![12 => each, 1 => watched_then_asked(sessions)].boxed(),
                false => each.boxed(),
            };
            (with_prelude, vec(each, 1..=max_steps)).prop_map(move |(prelude_first, steps)| {
                let steps = steps.into_iter().flatten();
                let steps = if prelude_first {
                    prelude().into_iter().chain(steps).collect()
                } else {
                    steps.collect()
                };
                Case { sessions, steps }
            })
        })
        // The real side of a case with faults is a quorum peer, whose configuration node no
        // simulated server holds.
        .prop_filter("names the quorum's configuration", move |case| {
            !faults || !case.names_config()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_of_up_to_three_calls_comes_once_the_listed_one_first() {
        assert_eq!(permutations(0), vec![Vec::<usize>::new()]);
        for n in 1..=3 {
            let orders = permutations(n);
            let count = (1..=n).product::<usize>();
            assert_eq!(orders.len(), count);
            assert_eq!(orders[0], (0..n).collect::<Vec<_>>());
            let mut distinct = orders.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), count);
        }
    }

    #[test]
    fn orderings_multiply_the_orders_of_each_step_sent_together() {
        let sync = |session| {
            (
                session,
                Op::Sync {
                    path: "/a".to_owned(),
                },
            )
        };
        let together = |sessions: &[usize]| Step::Together {
            calls: sessions.iter().map(|&session| sync(session)).collect(),
            order: None,
        };
        let close = Step::Close { session: 0 };
        let steps = [together(&[0, 1]), close.clone(), together(&[0, 1, 2])];
        let all = orderings(&steps);
        assert_eq!(all.len(), 2 * 6);
        assert!(all.iter().all(|steps| steps[1] == close));
        let first_orders: Vec<_> = all[0]
            .iter()
            .filter_map(|step| match step {
                Step::Together { order, .. } => order.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(first_orders, vec![vec![0, 1], vec![0, 1, 2]]);
    }

    #[test]
    fn a_read_after_a_step_through_the_follower_syncs_first() {
        let read = |session| Step::Call {
            session,
            op: Op::GetData {
                path: "/a".to_owned(),
                watch: false,
            },
        };
        let steps = [
            read(1),
            read(0),
            read(1),
            read(2),
            Step::Close { session: 0 },
            read(2),
        ];
        let synced_steps = synced_across_servers(steps.clone().into_iter());
        let expected = [
            read(1),
            synced(0),
            read(0),
            synced(1),
            read(1),
            read(2),
            Step::Close { session: 0 },
            synced(2),
            read(2),
        ];
        assert_eq!(synced_steps, expected);
    }
}
