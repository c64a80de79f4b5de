//! zookeeper-client's `Client` and `Connector` over a session of the simulated ensemble that
//! runs on this thread. Each call is one op of zklab's client, traced as the client made it;
//! each watch is set through a handle of its own (see [`super::watchers`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use zklab_recipes::client::{AddWatchMode, Op, OpResult, ZkClient};
use zklab_recipes::outcome::{Outcome, Recorder};
use zklab_sim::connect_string;
use zklab_sim::service::SimZk;
use zklab_sim::sim_client::{SimClient, TraceRecorder};
use zookeeper_client::{Acl, AuthUser, Error, SessionId, SessionState, Stat};

use super::conversions::{acls_of, error, stat, zk_acls};
use super::multi::{CheckWriter, MultiReader, MultiWriter};
use super::options::{not_yet, CreateOptions, CreateSequence};
use super::paths;
use super::watchers::{OneshotWatcher, PersistentWatcher, StateWatcher};

/// A session of the simulated ensemble, as zookeeper-client's `Client` is one of a real one.
/// Clones share the session; it closes when the last is dropped.
#[derive(Clone, Debug)]
pub struct Client {
    session: Arc<Session>,
}

/// What the clones of a client share.
struct Session {
    /// The session's state, over the handle calls go through: that handle sets no watch (each
    /// watch takes a handle of its own), so all it hears is the session's changes.
    states: StateWatcher,
    timeout: Duration,
    /// The node of the client process the session belongs to.
    node: madsim::task::NodeId,
    /// The simulated ensemble it is a session of.
    zk: SimZk,
    /// Where what the client's recipes grant is written, for the monitors.
    recorder: TraceRecorder,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (f.debug_struct("Session")
            .field("id", &self.states.handle().session_id()))
        .field("state", &self.states.peek_state())
        .finish()
    }
}

/// Closes the session once no clone of its client is left, as the real client does, unless its
/// process was killed (a crashed process closes nothing: its session expires on the server).
impl Drop for Session {
    fn drop(&mut self) {
        let ended = matches!(
            self.states.peek_state(),
            SessionState::Expired | SessionState::Closed | SessionState::AuthFailed
        );
        if !ended && running(self.node) {
            let calls = self.states.handle().listener();
            std::mem::drop(madsim::task::spawn(async move {
                let _ = calls.close().await;
            }));
        }
    }
}

impl Client {
    /// Opens a session of the simulated ensemble named by `cluster` (the harness's
    /// `TestClient::connect_string`, or one of its servers alone, to stay on that server).
    pub async fn connect(cluster: &str) -> Result<Client, Error> {
        Client::connector().connect(cluster).await
    }

    /// A builder of a connection with options.
    pub fn connector() -> Connector {
        Connector {
            detached: false,
            authes: Vec::new(),
        }
    }

    /// The session's id.
    pub fn session_id(&self) -> SessionId {
        SessionId(self.session.states.handle().session_id())
    }

    /// The session timeout the ensemble granted.
    pub fn session_timeout(&self) -> Duration {
        self.session.timeout
    }

    /// The session's latest state.
    pub fn state(&self) -> SessionState {
        self.session.states.peek_state()
    }

    /// A watcher of the session's state from now on.
    pub fn state_watcher(&self) -> StateWatcher {
        let mut watcher = self.session.states.clone();
        watcher.state();
        watcher
    }

    /// Creates a node; returns its stat and, for a sequential node, its sequence number (else
    /// `-1`).
    pub async fn create(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> Result<(Stat, CreateSequence), Error> {
        let op = options.create_op(path, data, false)?;
        if path == "/" {
            return Err(Error::BadArguments(&"can not create root node"));
        }
        match self.send(op).await? {
            OpResult::Created {
                path: made,
                stat: made_stat,
            } => Ok((
                stat(made_stat),
                CreateSequence::appended(&made, path.len())?,
            )),
            other => Err(unexpected(&other)),
        }
    }

    /// Makes `path` and every missing ancestor (as `mkdir -p`), as the real client does: it
    /// tries the whole path, an ancestor after NoNode, and the next one down after it is made.
    /// Not atomic, and a node already there is no error.
    pub async fn mkdir(&self, path: &str, options: &CreateOptions<'_>) -> Result<(), Error> {
        options.validate(true)?;
        if path == "/" {
            return Err(Error::BadArguments(&"can not create root node"));
        }
        let mut end = path.len();
        loop {
            let op = options.create_op(&path[..end], b"", true)?;
            match self.send(op).await {
                Ok(_) | Err(Error::NodeExists) if end == path.len() => return Ok(()),
                Ok(_) | Err(Error::NodeExists) => {
                    end += 1 + path[end + 1..].find('/').unwrap_or(path.len() - end - 1);
                }
                Err(Error::NoNode) => match path[..end].rfind('/') {
                    Some(parent) if parent > 0 => end = parent,
                    _ => return Err(Error::NoNode),
                },
                Err(error) => return Err(error),
            }
        }
    }

    /// Deletes a node, if its version is `expected_version` (any, for `None`).
    pub async fn delete(&self, path: &str, expected_version: Option<i32>) -> Result<(), Error> {
        if path == "/" {
            return Err(Error::BadArguments(&"can not delete root node"));
        }
        let op = Op::Delete {
            path: path.to_owned(),
            version: expected_version.unwrap_or(-1),
        };
        self.send(op).await.map(drop)
    }

    /// A node's data and stat.
    pub async fn get_data(&self, path: &str) -> Result<(Vec<u8>, Stat), Error> {
        let op = Op::GetData {
            path: path.to_owned(),
            watch: false,
        };
        data(self.send(op).await?)
    }

    /// A node's data and stat, and a watch for its next change or deletion.
    pub async fn get_and_watch_data(
        &self,
        path: &str,
    ) -> Result<(Vec<u8>, Stat, OneshotWatcher), Error> {
        let op = Op::GetData {
            path: path.to_owned(),
            watch: true,
        };
        let (reply, watcher) = self.watching(op).await?;
        let (data, stat) = data(reply)?;
        Ok((data, stat, watcher))
    }

    /// A node's stat, or `None` if it does not exist.
    pub async fn check_stat(&self, path: &str) -> Result<Option<Stat>, Error> {
        let op = Op::Exists {
            path: path.to_owned(),
            watch: false,
        };
        found(self.send(op).await?)
    }

    /// A node's stat, or `None` if it does not exist, and a watch for its creation, change or
    /// deletion.
    pub async fn check_and_watch_stat(
        &self,
        path: &str,
    ) -> Result<(Option<Stat>, OneshotWatcher), Error> {
        let op = Op::Exists {
            path: path.to_owned(),
            watch: true,
        };
        let (reply, watcher) = self.watching(op).await?;
        Ok((found(reply)?, watcher))
    }

    /// Sets a node's data, if its version is `expected_version` (any, for `None`); returns its
    /// new stat.
    pub async fn set_data(
        &self,
        path: &str,
        data: &[u8],
        expected_version: Option<i32>,
    ) -> Result<Stat, Error> {
        let op = Op::SetData {
            path: path.to_owned(),
            data: data.to_vec(),
            version: expected_version.unwrap_or(-1),
        };
        match self.send(op).await? {
            OpResult::SetData(node) => Ok(stat(node)),
            other => Err(unexpected(&other)),
        }
    }

    /// A node's children's names.
    pub async fn list_children(&self, path: &str) -> Result<Vec<String>, Error> {
        let (children, _) = self.get_children(path).await?;
        Ok(children)
    }

    /// A node's children's names, and a watch for a child's creation or deletion, or the
    /// node's.
    pub async fn list_and_watch_children(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, OneshotWatcher), Error> {
        let (children, _, watcher) = self.get_and_watch_children(path).await?;
        Ok((children, watcher))
    }

    /// A node's children's names and its stat.
    pub async fn get_children(&self, path: &str) -> Result<(Vec<String>, Stat), Error> {
        let op = Op::GetChildren {
            path: path.to_owned(),
            watch: false,
        };
        children(self.send(op).await?)
    }

    /// A node's children's names and its stat, and a watch as
    /// [`Client::list_and_watch_children`] sets.
    pub async fn get_and_watch_children(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, Stat, OneshotWatcher), Error> {
        let op = Op::GetChildren {
            path: path.to_owned(),
            watch: true,
        };
        let (reply, watcher) = self.watching(op).await?;
        let (children, stat) = children(reply)?;
        Ok((children, stat, watcher))
    }

    /// How many nodes are under `path`, at every depth; `NoNode` if it does not exist.
    pub async fn count_descendants_number(&self, path: &str) -> Result<usize, Error> {
        let op = Op::CountDescendants {
            path: path.to_owned(),
        };
        match self.send(op).await? {
            OpResult::Counted(count) => Ok(usize::try_from(count).unwrap_or_default()),
            other => Err(unexpected(&other)),
        }
    }

    /// This session's ephemeral nodes whose paths start with `path` (matched as text; `/`:
    /// all of them), in an order of the server's; no `NoNode` when `path` does not exist.
    pub async fn list_ephemerals(&self, path: &str) -> Result<Vec<String>, Error> {
        let op = Op::GetEphemerals {
            prefix: path.to_owned(),
        };
        match self.send(op).await? {
            OpResult::Ephemerals(paths) => Ok(paths),
            other => Err(unexpected(&other)),
        }
    }

    /// The node's ACL and stat.
    pub async fn get_acl(&self, path: &str) -> Result<(Vec<Acl>, Stat), Error> {
        let op = Op::GetAcl {
            path: path.to_owned(),
        };
        match self.send(op).await? {
            OpResult::Acl { acl, stat: node } => Ok((zk_acls(&acl), stat(node))),
            other => Err(unexpected(&other)),
        }
    }

    /// Replaces the node's ACL if its ACL version is `expected_acl_version` (any, for `None`);
    /// returns its new stat. An empty ACL is the server's to refuse, as the real client leaves it.
    pub async fn set_acl(
        &self,
        path: &str,
        acl: &[Acl],
        expected_acl_version: Option<i32>,
    ) -> Result<Stat, Error> {
        let op = Op::SetAcl {
            path: path.to_owned(),
            acl: acls_of(acl),
            version: expected_acl_version.unwrap_or(-1),
        };
        match self.send(op).await? {
            OpResult::AclSet(node) => Ok(stat(node)),
            other => Err(unexpected(&other)),
        }
    }

    /// Adds an identity to the session (`digest` with `user:password`, say). On AuthFailed the
    /// client gives the session up, as the real one does (the server keeps it until it
    /// expires).
    pub async fn auth(&self, scheme: &str, auth: &[u8]) -> Result<(), Error> {
        let op = Op::AddAuth {
            scheme: scheme.to_owned(),
            auth: Some(auth.to_vec()),
        };
        self.send(op).await.map(drop)
    }

    /// The identities the session is known by.
    pub async fn list_auth_users(&self) -> Result<Vec<AuthUser>, Error> {
        match self.send(Op::WhoAmI).await? {
            OpResult::Identities(identities) => Ok(identities
                .iter()
                .map(|identity| AuthUser::new(&identity.scheme, &identity.user))
                .collect()),
            other => Err(unexpected(&other)),
        }
    }

    /// Sends `op`, which sets a watch, through a handle of its own: the watch's event goes to
    /// its watcher alone.
    /// Leaves a persistent watch on `path` (on the node alone, or on it and every node under
    /// it, by `mode`), whose events its watcher gives.
    pub async fn watch(
        &self,
        path: &str,
        mode: zookeeper_client::AddWatchMode,
    ) -> Result<PersistentWatcher, Error> {
        let mode = match mode {
            zookeeper_client::AddWatchMode::Persistent => AddWatchMode::Persistent,
            zookeeper_client::AddWatchMode::PersistentRecursive => {
                AddWatchMode::PersistentRecursive
            }
        };
        let op = Op::AddWatch {
            path: path.to_owned(),
            mode,
        };
        let handle = self.session.states.handle().listener();
        self.call(&handle, op).await?;
        Ok(PersistentWatcher::new(handle))
    }

    async fn watching(&self, op: Op) -> Result<(OpResult, OneshotWatcher), Error> {
        let handle = self.session.states.handle().listener();
        let reply = self.call(&handle, op).await?;
        Ok((reply, OneshotWatcher::new(handle)))
    }

    /// A writer of ops applied all or nothing, in one transaction.
    pub fn new_multi_writer(&self) -> MultiWriter<'_> {
        MultiWriter::new(self)
    }

    /// A [`MultiWriter`] whose transaction applies only while `path` is at `version` (any, for
    /// `None`).
    pub fn new_check_writer(
        &self,
        path: &str,
        version: Option<i32>,
    ) -> Result<CheckWriter<'_>, Error> {
        CheckWriter::new(self, path, version)
    }

    /// A reader of several nodes in one request.
    pub fn new_multi_reader(&self) -> MultiReader<'_> {
        MultiReader::new(self)
    }

    /// Waits until the server this session is attached to has applied every write the leader
    /// had committed when it asked.
    pub async fn sync(&self, path: &str) -> Result<(), Error> {
        let op = Op::Sync {
            path: path.to_owned(),
        };
        self.send(op).await.map(drop)
    }

    /// Writes into the run's trace that this session's recipe told the application `outcome`.
    pub(super) fn record(&self, outcome: Outcome) {
        let session = self.session.states.handle().session_id();
        self.session.recorder.record(session, outcome);
    }

    /// Runs `task` beside the caller, as the real client runs its clean-ups, while the
    /// session's process runs.
    pub(super) fn in_background(
        &self,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        if self.is_running() {
            std::mem::drop(madsim::task::spawn(task));
        }
    }

    /// Whether the session's client process still runs.
    pub(super) fn is_running(&self) -> bool {
        running(self.session.node)
    }

    /// The creation zxid of the node at `path`, as the ensemble's leader has it: what a
    /// recipe's grant carries as its fencing token.
    pub(super) fn created_at(&self, path: &str) -> Option<i64> {
        let server =
            |server: &zklab_sim::server::Server| server.node(path).map(|(_, stat)| stat.czxid);
        self.session.zk.with_server(server)
    }

    /// A random id of the run's own (see [`SimZk::unique_id`]).
    pub(super) fn unique_id(&self) -> u128 {
        self.session.zk.unique_id()
    }

    /// Sends `op` through the client's own handle, which sets no watch.
    pub(super) async fn send(&self, op: Op) -> Result<OpResult, Error> {
        self.call(self.session.states.handle(), op).await
    }

    /// Sends `op` through `handle`; a path the real client refuses, or a session that has
    /// ended, is answered at once, as the real client does.
    async fn call(&self, handle: &SimClient, op: Op) -> Result<OpResult, Error> {
        paths::check_op(&op)?;
        match self.session.states.peek_state() {
            SessionState::Expired => return Err(Error::SessionExpired),
            SessionState::Closed => return Err(Error::ClientClosed),
            SessionState::AuthFailed => return Err(Error::AuthFailed),
            _ => {}
        }
        handle.call(op).await.map_err(error)
    }
}

/// Whether the client process of `node` still runs (a killed process does nothing more).
fn running(node: madsim::task::NodeId) -> bool {
    madsim::runtime::Handle::try_current().is_ok_and(|runtime| !runtime.is_exit(node))
}

/// A read's data and stat.
fn data(reply: OpResult) -> Result<(Vec<u8>, Stat), Error> {
    match reply {
        OpResult::Data { data, stat: node } => Ok((data, stat(node))),
        other => Err(unexpected(&other)),
    }
}

/// An exists's stat, if the node is there.
fn found(reply: OpResult) -> Result<Option<Stat>, Error> {
    match reply {
        OpResult::Exists(node) => Ok(node.map(stat)),
        other => Err(unexpected(&other)),
    }
}

/// A listing's children and the parent's stat.
fn children(reply: OpResult) -> Result<(Vec<String>, Stat), Error> {
    match reply {
        OpResult::Children {
            children,
            stat: node,
        } => Ok((children, stat(node))),
        other => Err(unexpected(&other)),
    }
}

/// A reply of another kind than the op's: the simulated client never gives one.
fn unexpected(result: &OpResult) -> Error {
    Error::UnexpectedError(format!("an unexpected reply: {result:?}"))
}

/// How to connect: zookeeper-client's connection options that the simulated ensemble has.
#[derive(Clone, Debug)]
pub struct Connector {
    detached: bool,
    /// The authentications to send, in order.
    authes: Vec<(String, Vec<u8>)>,
}

impl Connector {
    /// The session timeout to ask for. The simulated ensemble grants every session its one
    /// timeout (as a server whose least and greatest session timeouts are equal does), which
    /// [`Client::session_timeout`] reports.
    pub fn with_session_timeout(self, _timeout: Duration) -> Self {
        self
    }

    /// How long to try a server before the next. The simulated client reconnects on the
    /// simulator's schedule, the faults' to break.
    pub fn with_connection_timeout(self, _timeout: Duration) -> Self {
        self
    }

    /// Fails a connect once every server has refused it, rather than trying again; a simulated
    /// server never refuses one (during an election, the connect waits for the leader).
    pub fn with_fail_eagerly(self) -> Self {
        self
    }

    /// Whether a read-only server will do; the simulated ensemble never goes read-only, as a
    /// real one does not unless configured to.
    pub fn with_readonly(self, _readonly: bool) -> Self {
        self
    }

    /// Authenticates the session with `scheme` and `auth` once it is established (the
    /// simulated session keeps its identities across reconnections, as the real client sends
    /// them again).
    pub fn with_auth(mut self, scheme: &str, auth: &[u8]) -> Self {
        self.authes.push((scheme.to_owned(), auth.to_vec()));
        self
    }

    /// Leaves the session open when the last clone of the client is dropped. The simulated
    /// client cannot leave a session to expire on its own yet, so connecting with it fails
    /// saying so.
    pub fn with_detached(mut self) -> Self {
        self.detached = true;
        self
    }

    /// Opens a session of the simulated ensemble that `cluster` names, from the task of a
    /// client of the run on this thread.
    pub async fn connect(self, cluster: &str) -> Result<Client, Error> {
        if self.detached {
            return Err(not_yet("detached sessions"));
        }
        let zk = SimZk::running().ok_or_else(|| {
            Error::UnexpectedError(
                "built with --cfg madsim, this client connects only inside a zklab harness run"
                    .to_owned(),
            )
        })?;
        let client = zk.client_here().ok_or_else(|| {
            Error::UnexpectedError(
                "connect from the task of one of the harness's clients".to_owned(),
            )
        })?;
        let mut servers = connect_string::servers_named(cluster, zk.server_count())
            .map_err(|what| Error::UnexpectedError(format!("the connect string names {what}")))?;
        servers.sort_unstable();
        servers.dedup();
        let calls = match servers[..] {
            [server] => zk.connect_pinned(client, server),
            _ if servers.len() == zk.server_count() => zk.connect(client),
            _ => return Err(not_yet("connect strings that name some of its servers")),
        };
        if !zk.is_connected(calls.session_id()) {
            // As the real client, return once the session is established.
            let mut waiting = StateWatcher::new(calls.listener(), SessionState::Disconnected);
            loop {
                match waiting.changed().await {
                    SessionState::SyncConnected | SessionState::ConnectedReadOnly => break,
                    SessionState::Expired => return Err(Error::SessionExpired),
                    SessionState::Closed | SessionState::AuthFailed => {
                        return Err(Error::ClientClosed)
                    }
                    _ => {}
                }
            }
        }
        let session = Session {
            states: StateWatcher::new(calls, SessionState::SyncConnected),
            timeout: zk.session_timeout(),
            node: madsim::plugin::node(),
            recorder: TraceRecorder::new(zk.clone(), client),
            zk,
        };
        let client = Client {
            session: Arc::new(session),
        };
        for (scheme, auth) in &self.authes {
            client.auth(scheme, auth).await?;
        }
        Ok(client)
    }
}
