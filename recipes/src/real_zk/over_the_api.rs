// RealZk's body, written against zookeeper-client's API alone, named `zk`: recipes/src/real_zk.rs
// includes it over the real crate, and src/conform/through_drop_in.rs over the drop-in
// zookeeper-client, whose conformance it checks. The includer names the crate `zk` and says
// how to wait (`pause`).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use zklab_recipes::acl::Acls;
use zklab_recipes::client::{
    AddWatchMode, ClientInfo, CreateMode, EventType, Op, OpReply, OpResult, SessionEvent,
    SessionId, Stat, WatchedEvent, ZkClient, ZkError, ZkEvent,
};
use zklab_recipes::listeners::{ListenerId, Listeners};

/// A watcher the server may still fire, and for a persistent one the watcher to wait on next.
type PendingWatch =
    Pin<Box<dyn Future<Output = (zk::WatchedEvent, Option<zk::PersistentWatcher>)> + Send>>;

/// The watcher a call set: one event, or every event until the session ends.
enum Watching {
    Once(zk::OneshotWatcher),
    Always(zk::PersistentWatcher),
}

impl Watching {
    fn pending(self) -> PendingWatch {
        match self {
            Watching::Once(watcher) => Box::pin(async move { (watcher.changed().await, None) }),
            Watching::Always(mut watcher) => Box::pin(async move {
                let event = watcher.changed().await;
                // The crate's persistent watcher panics if asked again after the session's end.
                let ended = event.event_type == zk::EventType::Session
                    && event.session_state.is_terminated();
                (event, (!ended).then_some(watcher))
            }),
        }
    }
}

/// The next session state change, with the watcher to wait on after it.
type PendingState = Pin<Box<dyn Future<Output = (zk::StateWatcher, zk::SessionState)> + Send>>;

/// A handle on one session on a real ZooKeeper server or ensemble.
pub struct RealZk {
    session: Arc<RealSession>,
    listener: ListenerId,
    /// The ACL of every node this handle creates open (as Curator's `ACLProvider` gives one).
    acls: Arc<[zk::Acl]>,
}

/// The session every handle shares.
struct RealSession {
    /// The crate's client; `None` once closed.
    client: Mutex<Option<zk::Client>>,
    id: SessionId,
    events: Mutex<EventStream>,
    listeners: Listeners,
}

impl RealZk {
    /// Opens a session on `hosts` ("host:port,host:port"), asking for `session_timeout`. Fails
    /// with ConnectionLoss once every host has refused, rather than waiting out the timeout.
    pub async fn connect(hosts: &str, session_timeout: Duration) -> Result<RealZk, ZkError> {
        let client = zk::Client::connector()
            .with_session_timeout(session_timeout)
            .with_fail_eagerly()
            .connect(hosts)
            .await
            .map_err(zk_error)?;
        Ok(RealZk::from_client(client))
    }

    /// The session of a client the application connected itself, with what it chose there:
    /// authentication, TLS, SASL, a chroot, a read-only server. A create's ACL is sent as it
    /// is; one left open (`world:anyone:cdrwa`, as every recipe's) stays so unless
    /// [`RealZk::with_acls`] says otherwise.
    pub fn from_client(client: zk::Client) -> RealZk {
        let listeners = Listeners::default();
        let listener = listeners.add();
        let session = RealSession {
            id: client.session_id().0,
            events: Mutex::new(EventStream::new(client.state_watcher())),
            client: Mutex::new(Some(client)),
            listeners,
        };
        RealZk {
            session: Arc::new(session),
            listener,
            acls: zk::Acls::anyone_all().to_vec().into(),
        }
    }

    /// The same handle, creating with `acls` every node whose create leaves its ACL open (the
    /// session must be authenticated as they require to use the nodes afterwards).
    pub fn with_acls(mut self, acls: &[zk::Acl]) -> RealZk {
        self.acls = acls.into();
        self
    }

    fn client(&self) -> Result<zk::Client, ZkError> {
        lock(&self.session.client).clone().ok_or(ZkError::Closed)
    }

    /// Routes every event that has arrived by now, then watches `new` too, for this handle.
    fn settle(&self, new: Option<Watching>) {
        let mut events = lock(&self.session.events);
        events.collect(&self.session.listeners);
        if let Some(watcher) = new {
            events.watch(self.listener, watcher.pending(), &self.session.listeners);
        }
    }
}

impl Drop for RealZk {
    fn drop(&mut self) {
        self.session.listeners.remove(self.listener);
    }
}

impl ZkClient for RealZk {
    async fn call(&self, op: Op) -> OpReply {
        let client = self.client()?;
        let (reply, watcher) = execute(&client, &self.acls, op).await;
        self.settle(watcher);
        reply
    }

    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send {
        futures::future::poll_fn(move |cx| {
            let listeners = &self.session.listeners;
            let mut events = lock(&self.session.events);
            events.wake_on_news(cx.waker());
            events.collect(listeners);
            listeners.poll_next(self.listener, cx)
        })
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        let listeners = &self.session.listeners;
        lock(&self.session.events).collect(listeners);
        listeners.try_next(self.listener)
    }

    fn session_id(&self) -> SessionId {
        self.session.id
    }

    fn listener(&self) -> Self {
        RealZk {
            session: self.session.clone(),
            listener: self.session.listeners.add(),
            acls: self.acls.clone(),
        }
    }

    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        let client = lock(&self.session.client).take();
        async move {
            let client = client.ok_or(ZkError::Closed)?;
            let mut states = client.state_watcher();
            // The crate closes the session when its last handle goes; the state then says how.
            drop(client);
            let mut state = states.peek_state();
            while !state.is_terminated() {
                state = states.changed().await;
            }
            match state {
                zk::SessionState::Closed => Ok(()),
                // The crate gave the session up on a refused authentication, and sends no close.
                zk::SessionState::AuthFailed => Err(ZkError::AuthFailed),
                _ => Err(ZkError::SessionExpired),
            }
        }
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        pause(duration)
    }
}

/// The session's watchers and state changes still to come.
///
/// The crate fills each watcher through its own channel, so which one the server fired first is
/// lost by the time several are ready. Each pending watcher is therefore polled with a waker of
/// its own that notes, when the crate fills it, its place in the order: the server's order.
struct EventStream {
    /// Pending watchers, by the id their waker notes, with the handle whose call set each.
    watches: BTreeMap<u64, (ListenerId, PendingWatch, Waker)>,
    next_id: u64,
    /// The next session state change and its waker; `None` once the session has ended.
    state: Option<(PendingState, Waker)>,
    /// The state last queued: the crate's state channel keeps only the newest state, so a
    /// connection that drops and comes back at once shows as the same state twice.
    last_state: zk::SessionState,
    fired: Arc<Mutex<Fired>>,
}

/// Which pending futures the crate has completed, in order, and who waits for events.
#[derive(Default)]
struct Fired {
    order: Vec<u64>,
    /// The tasks waiting in `next_event` on any handle, woken whenever something fires: the
    /// first to run routes it.
    waiting: Vec<Waker>,
}

impl Fired {
    fn wake_all(&mut self) {
        for waiting in self.waiting.drain(..) {
            waiting.wake();
        }
    }
}

/// The id the state future's waker notes.
const STATE: u64 = u64::MAX;

/// Notes that the future `id` fired, then wakes the waiting task.
struct FiredWaker {
    id: u64,
    fired: Arc<Mutex<Fired>>,
}

impl Wake for FiredWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let waiting = {
            let mut fired = lock(&self.fired);
            fired.order.push(self.id);
            std::mem::take(&mut fired.waiting)
        };
        for waiting in waiting {
            waiting.wake();
        }
    }
}

impl EventStream {
    fn new(mut states: zk::StateWatcher) -> Self {
        let mut stream = EventStream {
            watches: BTreeMap::new(),
            next_id: 0,
            state: None,
            last_state: states.state(),
            fired: Arc::default(),
        };
        stream.arm_state(next_state(states));
        stream
    }

    fn waker(&self, id: u64) -> Waker {
        Waker::from(Arc::new(FiredWaker {
            id,
            fired: self.fired.clone(),
        }))
    }

    /// Has `waker` woken when something fires, unless it will be already.
    fn wake_on_news(&self, waker: &Waker) {
        let mut fired = lock(&self.fired);
        if !fired.waiting.iter().any(|waiting| waiting.will_wake(waker)) {
            fired.waiting.push(waker.clone());
        }
    }

    /// Waits on a new watcher of `listener`'s: polled once now, so that its waker is in place
    /// before it fires.
    fn watch(&mut self, listener: ListenerId, mut watch: PendingWatch, listeners: &Listeners) {
        let id = self.next_id;
        self.next_id += 1;
        let waker = self.waker(id);
        match watch.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready((event, again)) => {
                if let Some(event) = watched_event(event) {
                    listeners.deliver_to(listener, ZkEvent::Watch(event));
                }
                lock(&self.fired).wake_all();
                if let Some(watcher) = again {
                    self.watch(listener, Watching::Always(watcher).pending(), listeners);
                }
            }
            Poll::Pending => {
                self.watches.insert(id, (listener, watch, waker));
            }
        }
    }

    fn arm_state(&mut self, pending: PendingState) {
        let waker = self.waker(STATE);
        self.state = Some((pending, waker));
        lock(&self.fired).order.push(STATE);
    }

    /// Routes what has fired, in the order it fired. The server sends one notification per
    /// session and change, which the crate hands to every watcher of that path it fires; a
    /// handle holding several such watchers hears it once.
    fn collect(&mut self, listeners: &Listeners) {
        let mut order = std::mem::take(&mut lock(&self.fired).order);
        // Then everything else, in case a waker was not called: late rather than lost.
        order.extend(self.watches.keys().copied());
        order.push(STATE);
        let mut routed: Vec<(ListenerId, WatchedEvent)> = Vec::new();
        for id in order {
            if id == STATE {
                self.poll_state(listeners);
                continue;
            }
            let Some((listener, watch, waker)) = self.watches.get_mut(&id) else {
                continue;
            };
            let Poll::Ready((event, again)) = watch.as_mut().poll(&mut Context::from_waker(waker))
            else {
                continue;
            };
            let listener = *listener;
            self.watches.remove(&id);
            if let Some(event) = watched_event(event) {
                if !routed.contains(&(listener, event.clone())) {
                    routed.push((listener, event.clone()));
                    listeners.deliver_to(listener, ZkEvent::Watch(event));
                }
            }
            if let Some(watcher) = again {
                self.watch(listener, Watching::Always(watcher).pending(), listeners);
            }
        }
    }

    fn poll_state(&mut self, listeners: &Listeners) {
        let Some((pending, waker)) = self.state.as_mut() else {
            return;
        };
        let Poll::Ready((states, state)) = pending.as_mut().poll(&mut Context::from_waker(waker))
        else {
            return;
        };
        // The crate changes state only to a different one: the same state again means the
        // connection dropped in between, and its Disconnected was overwritten before it was read.
        if state == self.last_state {
            let dropped = session_event(zk::SessionState::Disconnected);
            listeners.deliver(ZkEvent::Session(dropped));
        }
        self.last_state = state;
        listeners.deliver(ZkEvent::Session(session_event(state)));
        if state.is_terminated() {
            self.state = None;
            listeners.end();
        } else {
            self.arm_state(next_state(states));
        }
    }
}

fn next_state(mut states: zk::StateWatcher) -> PendingState {
    Box::pin(async move {
        let state = states.changed().await;
        (states, state)
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Sends one op, creating nodes with `acls`; returns its reply and the watcher it set, if any.
async fn execute(client: &zk::Client, acls: &[zk::Acl], op: Op) -> (OpReply, Option<Watching>) {
    let once = |watcher| Some(Watching::Once(watcher));
    match op {
        Op::Exists { path, watch: true } => match client.check_and_watch_stat(&path).await {
            Ok((stat, watcher)) => (Ok(OpResult::Exists(stat.map(stat_of))), once(watcher)),
            Err(error) => (Err(zk_error(error)), None),
        },
        Op::GetData { path, watch: true } => match client.get_and_watch_data(&path).await {
            Ok((data, stat, watcher)) => {
                let stat = stat_of(stat);
                (Ok(OpResult::Data { data, stat }), once(watcher))
            }
            Err(error) => (Err(zk_error(error)), None),
        },
        Op::GetChildren { path, watch: true } => match client.get_and_watch_children(&path).await {
            Ok((children, stat, watcher)) => {
                let stat = stat_of(stat);
                (Ok(OpResult::Children { children, stat }), once(watcher))
            }
            Err(error) => (Err(zk_error(error)), None),
        },
        Op::AddWatch { path, mode } => {
            let mode = match mode {
                AddWatchMode::Persistent => zk::AddWatchMode::Persistent,
                AddWatchMode::PersistentRecursive => zk::AddWatchMode::PersistentRecursive,
            };
            match client.watch(&path, mode).await {
                Ok(watcher) => (Ok(OpResult::WatchAdded), Some(Watching::Always(watcher))),
                Err(error) => (Err(zk_error(error)), None),
            }
        }
        op => (execute_unwatched(client, acls, op).await, None),
    }
}

async fn execute_unwatched(client: &zk::Client, acls: &[zk::Acl], op: Op) -> OpReply {
    match op {
        Op::Create {
            path,
            data,
            mode,
            acl,
        } => {
            let acl = acl_to_send(&acl, acls);
            let options = create_options(mode, &acl);
            let (stat, sequence) = client.create(&path, &data, &options).await?;
            let path = if mode.is_sequential() {
                format!("{path}{sequence}")
            } else {
                path
            };
            let stat = stat_of(stat);
            Ok(OpResult::Created { path, stat })
        }
        Op::Delete { path, version } => {
            client.delete(&path, Some(version)).await?;
            Ok(OpResult::Deleted)
        }
        Op::Exists { path, .. } => Ok(OpResult::Exists(
            client.check_stat(&path).await?.map(stat_of),
        )),
        Op::GetData { path, .. } => {
            let (data, stat) = client.get_data(&path).await?;
            let stat = stat_of(stat);
            Ok(OpResult::Data { data, stat })
        }
        Op::GetChildren { path, .. } => {
            let (children, stat) = client.get_children(&path).await?;
            let stat = stat_of(stat);
            Ok(OpResult::Children { children, stat })
        }
        Op::SetData {
            path,
            data,
            version,
        } => Ok(OpResult::SetData(stat_of(
            client.set_data(&path, &data, Some(version)).await?,
        ))),
        Op::Sync { path } => {
            client.sync(&path).await?;
            Ok(OpResult::Synced)
        }
        // ZooKeeper has no lone check: a multi of one check answers the same question.
        Op::Check { path, version } => {
            match multi(client, acls, vec![Op::Check { path, version }]).await? {
                OpResult::Multi(mut results) => results.pop().unwrap_or(Ok(OpResult::Checked)),
                other => Ok(other),
            }
        }
        Op::Multi(ops) => multi(client, acls, ops).await,
        Op::MultiRead(reads) => multi_read(client, reads).await,
        Op::CountDescendants { path } => {
            let count = client.count_descendants_number(&path).await?;
            Ok(OpResult::Counted(i32::try_from(count).unwrap_or(i32::MAX)))
        }
        Op::GetEphemerals { prefix } => {
            Ok(OpResult::Ephemerals(client.list_ephemerals(&prefix).await?))
        }
        // The crate removes a watch only by dropping the watcher it handed out, and never asks
        // which watches stand.
        Op::RemoveWatches { .. } | Op::CheckWatches { .. } => Err(ZkError::Unimplemented),
        Op::GetAcl { path } => {
            let (acl, stat) = client.get_acl(&path).await?;
            let (acl, stat) = (acls_of(&acl), stat_of(stat));
            Ok(OpResult::Acl { acl, stat })
        }
        Op::SetAcl { path, acl, version } => {
            let acl = zk_acls(&acl);
            let stat = client.set_acl(&path, &acl, Some(version)).await?;
            Ok(OpResult::AclSet(stat_of(stat)))
        }
        Op::AddAuth { scheme, auth } => {
            // The crate sends bytes, never the null of ZooKeeper's Java client.
            let auth = auth.ok_or(ZkError::Unimplemented)?;
            client.auth(&scheme, &auth).await?;
            Ok(OpResult::Authenticated)
        }
        Op::WhoAmI => {
            let users = client.list_auth_users().await?;
            let identities = users.iter().map(|user| ClientInfo {
                scheme: user.scheme().to_owned(),
                user: user.user().to_owned(),
            });
            Ok(OpResult::Identities(identities.collect()))
        }
        // `execute` answered it.
        Op::AddWatch { .. } => Err(ZkError::BadArguments),
    }
}

async fn multi_read(client: &zk::Client, reads: Vec<Op>) -> OpReply {
    let mut reader = client.new_multi_reader();
    for read in &reads {
        match read {
            Op::GetData { path, watch: false } => reader.add_get_data(path)?,
            Op::GetChildren { path, watch: false } => reader.add_get_children(path)?,
            // A multiRead holds nothing else.
            _ => return Err(ZkError::BadArguments),
        }
    }
    let results = reader.commit().await?;
    Ok(OpResult::MultiRead(
        results
            .into_iter()
            .map(|result| match result {
                zk::MultiReadResult::Data { data, stat } => Ok(OpResult::Data {
                    data,
                    stat: stat_of(stat),
                }),
                zk::MultiReadResult::Children { children } => Ok(OpResult::Listed(children)),
                zk::MultiReadResult::Error { err } => Err(zk_error(err)),
                // The crate may learn new kinds of result; no read of zklab's asks for one.
                _ => Err(ZkError::MarshallingError),
            })
            .collect(),
    ))
}

async fn multi(client: &zk::Client, acls: &[zk::Acl], ops: Vec<Op>) -> OpReply {
    let mut writer = client.new_multi_writer();
    for op in &ops {
        match op {
            Op::Create {
                path,
                data,
                mode,
                acl,
            } => writer.add_create(path, data, &create_options(*mode, &acl_to_send(acl, acls)))?,
            Op::Delete { path, version } => writer.add_delete(path, Some(*version))?,
            Op::SetData {
                path,
                data,
                version,
            } => writer.add_set_data(path, data, Some(*version))?,
            Op::Check { path, version } => writer.add_check_version(path, *version)?,
            // Reads, syncs and nested multis are not transactions.
            _ => return Err(ZkError::BadArguments),
        }
    }
    match writer.commit().await {
        Ok(results) => Ok(OpResult::Multi(
            results
                .into_iter()
                .map(|result| Ok(multi_result(result)))
                .collect(),
        )),
        Err(zk::MultiWriteError::RequestFailed { source }) => Err(zk_error(source)),
        Err(zk::MultiWriteError::OperationFailed { index, source }) => {
            let failed = zk_error(source);
            Ok(OpResult::Multi(
                (0..ops.len())
                    .map(|i| match i.cmp(&index) {
                        std::cmp::Ordering::Less => Ok(OpResult::RolledBack),
                        std::cmp::Ordering::Equal => Err(failed),
                        std::cmp::Ordering::Greater => Err(ZkError::RuntimeInconsistency),
                    })
                    .collect(),
            ))
        }
    }
}

fn multi_result(result: zk::MultiWriteResult) -> OpResult {
    match result {
        zk::MultiWriteResult::Create { path, stat } => OpResult::Created {
            path,
            stat: stat_of(stat),
        },
        zk::MultiWriteResult::Delete => OpResult::Deleted,
        zk::MultiWriteResult::SetData { stat } => OpResult::SetData(stat_of(stat)),
        zk::MultiWriteResult::Check => OpResult::Checked,
        // The crate may learn new kinds of result; none of zklab's ops asks for one.
        _ => OpResult::Checked,
    }
}

fn create_options(mode: CreateMode, acls: &[zk::Acl]) -> zk::CreateOptions<'_> {
    let kind = match mode {
        CreateMode::Persistent => zk::CreateMode::Persistent,
        CreateMode::PersistentSequential => zk::CreateMode::PersistentSequential,
        CreateMode::Ephemeral => zk::CreateMode::Ephemeral,
        CreateMode::EphemeralSequential => zk::CreateMode::EphemeralSequential,
        CreateMode::Container => zk::CreateMode::Container,
        CreateMode::PersistentWithTtl { .. } => zk::CreateMode::Persistent,
        CreateMode::PersistentSequentialWithTtl { .. } => zk::CreateMode::PersistentSequential,
    };
    let options = kind.with_acls(zk::Acls::new(acls));
    // The crate takes a TTL as a duration and refuses a zero one, as it refuses a TTL out of
    // range: a TTL below one millisecond goes as zero, to be refused the same way.
    match mode.ttl_ms() {
        Some(ttl_ms) => {
            let ttl = std::time::Duration::from_millis(u64::try_from(ttl_ms).unwrap_or(0));
            options.with_ttl(ttl)
        }
        None => options,
    }
}

/// The ACL a create sends: its own, or the handle's in place of an open one.
fn acl_to_send(acl: &Acls, handle_default: &[zk::Acl]) -> Vec<zk::Acl> {
    match acl.is_open() {
        true => handle_default.to_vec(),
        false => zk_acls(acl),
    }
}

fn stat_of(stat: zk::Stat) -> Stat {
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

/// A node event as zklab reports it; `None` for the session states the crate also sends to
/// watchers (the stream reports those once, from the state channel).
fn watched_event(event: zk::WatchedEvent) -> Option<WatchedEvent> {
    let event_type = match event.event_type {
        zk::EventType::NodeCreated => EventType::NodeCreated,
        zk::EventType::NodeDeleted => EventType::NodeDeleted,
        zk::EventType::NodeDataChanged => EventType::NodeDataChanged,
        zk::EventType::NodeChildrenChanged => EventType::NodeChildrenChanged,
        zk::EventType::Session => return None,
    };
    Some(WatchedEvent {
        event_type,
        path: event.path,
    })
}

fn session_event(state: zk::SessionState) -> SessionEvent {
    match state {
        zk::SessionState::Disconnected => SessionEvent::Disconnected,
        zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {
            SessionEvent::SyncConnected
        }
        zk::SessionState::Expired => SessionEvent::Expired,
        // Failed authentication ends the session as the application closing it would.
        zk::SessionState::AuthFailed | zk::SessionState::Closed => SessionEvent::Closed,
    }
}

/// The crate's error as ZooKeeper's code.
fn zk_error(error: zk::Error) -> ZkError {
    use zk::Error as E;
    match error {
        E::NoNode => ZkError::NoNode,
        E::NoAuth => ZkError::NoAuth,
        E::BadVersion => ZkError::BadVersion,
        E::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals,
        E::NodeExists => ZkError::NodeExists,
        E::NotEmpty => ZkError::NotEmpty,
        E::SessionExpired => ZkError::SessionExpired,
        E::InvalidAcl => ZkError::InvalidAcl,
        E::AuthFailed => ZkError::AuthFailed,
        E::SessionMoved => ZkError::SessionMoved,
        E::NoWatcher => ZkError::NoWatcher,
        E::MarshallingError | E::UnmarshalError { .. } => ZkError::MarshallingError,
        E::Unimplemented => ZkError::Unimplemented,
        E::ConnectionLoss | E::NoHosts => ZkError::ConnectionLoss,
        E::Timeout => ZkError::OperationTimeout,
        E::BadArguments(_) => ZkError::BadArguments,
        E::RuntimeInconsistent => ZkError::RuntimeInconsistency,
        E::ClientClosed => ZkError::Closed,
        E::UnexpectedErrorCode(code) => ZkError::from_code(code).unwrap_or(ZkError::SystemError),
        // The crate reports a connection that broke under a request (reset by the server) as an
        // I/O error of its own: the request may or may not have been applied, which is what
        // ZooKeeper's clients call ConnectionLoss.
        E::Custom(custom) if is_io(&custom) => ZkError::ConnectionLoss,
        _ => ZkError::SystemError,
    }
}

/// Whether an error of the crate comes from the connection's I/O. The crate keeps its source
/// behind an `Arc`, which is what `source()` then shows.
fn is_io(error: &dyn std::error::Error) -> bool {
    type Shared = Arc<dyn std::error::Error + Send + Sync>;
    error.source().is_some_and(|source| {
        source.is::<std::io::Error>()
            || source
                .downcast_ref::<Shared>()
                .is_some_and(|inner| inner.is::<std::io::Error>())
    })
}

include!("acl_conversions.rs");
