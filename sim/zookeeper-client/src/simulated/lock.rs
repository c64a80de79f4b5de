//! zookeeper-client's `Client::lock`: the lock of ZooKeeper's recipes document (an ephemeral
//! sequential node each; the lowest holds; each waiter watches the node just before its own),
//! with the real client's three ways to name the nodes, its search for a node whose create reply
//! was lost, and its clean-up of a node it gives up on. What it grants is written into the run's
//! trace (granted when `lock` returns, released when the [`LockClient`] goes), so a harness that
//! judges mutual exclusion judges code that uses it without that code recording anything.
//!
//! One difference: a sibling whose name ends in a character of several bytes is passed over,
//! where the real client panics slicing it.

use std::collections::BTreeSet;
use std::fmt;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::sync::{Mutex, PoisonError};

use zklab_recipes::outcome::Outcome;
use zookeeper_client::{Acls, CheckWriteError, Error, MultiReadResult, MultiWriteResult, Stat};

use super::client::Client;
use super::multi::CheckWriter;
use super::options::{CreateMode, CreateOptions, CreateSequence};
use super::paths;

/// How a lock's nodes are named: where they are made, which of their siblings contend for the
/// same lock, and how a node whose create reply was lost is found again. Not `Clone`, as the
/// real one: a custom prefix names one contender.
#[derive(Debug)]
pub struct LockPrefix<'a> {
    naming: Naming<'a>,
}

#[derive(Debug)]
enum Naming<'a> {
    /// Nodes `{dir}/_c_{uuid}-{name}{sequence}`: contenders have `name` in their names, and a
    /// contender finds its own node by its UUID.
    Curator { dir: &'a str, name: &'a str },
    /// Nodes `{prefix}{sequence}`: contenders' names start as the prefix's last component does,
    /// and a contender finds its own node by its owner.
    Shared { prefix: &'a str },
    /// This contender's node `{prefix}{sequence}`: contenders have `name` in their names, and
    /// a contender finds its own node by its owner.
    Custom { prefix: String, name: &'a str },
}

impl<'a> LockPrefix<'a> {
    /// Curator's naming, `{dir}/_c_{uuid}-{name}{sequence}` (its `InterProcessMutex` and
    /// `LeaderSelector` use the name `lock-`, its `LeaderLatch` `latch-`). The UUID is drawn
    /// from the run's seed.
    pub fn new_curator(dir: &'a str, name: &'a str) -> Result<Self, Error> {
        paths::check(dir, false)?;
        if name.contains('/') {
            return Err(Error::BadArguments(&"lock name must not contain /"));
        }
        let naming = Naming::Curator { dir, name };
        Ok(LockPrefix { naming })
    }

    /// Every contender's node is `{prefix}{sequence}` (ZooKeeper's `LeaderElectionSupport`
    /// uses `{dir}/n-`). Contenders must not share a session: after a lost create reply, a
    /// node is told from the others by its owner only.
    pub fn new_shared(prefix: &'a str) -> Result<Self, Error> {
        paths::check(prefix, true)?;
        Ok(LockPrefix {
            naming: Naming::Shared { prefix },
        })
    }

    /// This contender's node is `{prefix}{sequence}`, and its contenders are the nodes beside
    /// it with `name` in their names (every node, for an empty name); ZooKeeper's `WriteLock`
    /// uses `{dir}/x-{session id}-` and `x-`. As with a shared prefix, contenders must not
    /// share a session.
    pub fn new_custom(prefix: String, name: &'a str) -> Result<Self, Error> {
        paths::check(&prefix, true)?;
        if !name.is_empty() && !last_component(&prefix).contains(name) {
            return Err(Error::BadArguments(
                &"lock path prefix must contain lock name",
            ));
        }
        Ok(LockPrefix {
            naming: Naming::Custom { prefix, name },
        })
    }

    /// The contention of a new node of `client`'s named this way.
    fn contention(self, client: &Client) -> Contention {
        let (prefix, contenders, unique) = match self.naming {
            Naming::Curator { dir, name } => {
                let prefix = format!("{dir}/_c_{}-{name}", uuid(client.unique_id()));
                (prefix, Contenders::Containing(name.to_owned()), true)
            }
            Naming::Shared { prefix } => {
                let starting = Contenders::StartingWith(last_component(prefix).to_owned());
                (prefix.to_owned(), starting, false)
            }
            Naming::Custom { prefix, name } => {
                (prefix, Contenders::Containing(name.to_owned()), false)
            }
        };
        Contention {
            prefix,
            contenders,
            unique,
        }
    }
}

/// The options of a lock: the ACL of its node, and how to make its missing ancestors, if it
/// should.
#[derive(Clone, Debug)]
pub struct LockOptions<'a> {
    acls: Acls<'a>,
    ancestors: Option<CreateOptions<'a>>,
}

impl<'a> LockOptions<'a> {
    /// The lock's node gets `acls`; a missing ancestor is `NoNode`.
    pub fn new(acls: Acls<'a>) -> Self {
        LockOptions {
            acls,
            ancestors: None,
        }
    }

    /// Makes the lock's missing ancestors with `options`, which must suit a directory (neither
    /// ephemeral nor sequential), containers as Curator makes them among them. ACLs beyond
    /// `Acls::anyone_all()`, which the simulated ZooKeeper lacks yet, are taken here and
    /// refused when an ancestor is made.
    pub fn with_ancestor_options(mut self, options: CreateOptions<'a>) -> Result<Self, Error> {
        options.validate(true)?;
        self.ancestors = Some(options);
        Ok(self)
    }
}

impl<'a> From<Acls<'a>> for LockOptions<'a> {
    fn from(acls: Acls<'a>) -> Self {
        LockOptions::new(acls)
    }
}

/// Which siblings of a lock's node contend for the same lock.
#[derive(Clone, Debug)]
enum Contenders {
    Containing(String),
    StartingWith(String),
}

impl Contenders {
    fn include(&self, name: &str) -> bool {
        match self {
            Contenders::Containing(part) => name.contains(part.as_str()),
            Contenders::StartingWith(start) => name.starts_with(start.as_str()),
        }
    }
}

impl fmt::Display for Contenders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Contenders::Containing(part) => write!(f, "names containing {part:?}"),
            Contenders::StartingWith(start) => write!(f, "names starting {start:?}"),
        }
    }
}

/// One contender's view of a lock: where its node is made and who it contends with.
#[derive(Clone, Debug)]
struct Contention {
    /// The path its node is made at, before the server appends the sequence number.
    prefix: String,
    contenders: Contenders,
    /// The prefix is this contender's alone (Curator's UUID): a node whose create reply was
    /// lost is found by its name, not by its owner.
    unique: bool,
}

impl Contention {
    /// The node the lock's nodes are made under.
    fn parent(&self) -> &str {
        parent(&self.prefix)
    }

    /// The lock's name in the trace, the role the monitors judge: its directory and which of
    /// its nodes contend. Interned for the life of the process (a trace's roles are
    /// `&'static str`): one string per lock a test names, however many seeds it runs.
    fn role(&self) -> &'static str {
        static ROLES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
        let name = format!("lock {} ({})", self.parent(), self.contenders);
        let mut roles = ROLES.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = roles.get(name.as_str()) {
            return known;
        }
        let role: &'static str = Box::leak(name.into_boxed_str());
        roles.insert(role);
        role
    }

    /// Makes this contender's node (and the missing ancestors, if `options` say so); returns
    /// its path. A lost create reply sends it looking for the node, and making it again if it
    /// is not there. `cleanup` is told whether a failure surely left no node.
    async fn make_node(
        &self,
        client: &Client,
        data: &[u8],
        options: &LockOptions<'_>,
        cleanup: &mut Cleanup,
    ) -> Result<String, Error> {
        let node = CreateMode::EphemeralSequential.with_acls(options.acls);
        loop {
            let made = client.create(&self.prefix, data, &node).await;
            if let (Err(Error::NoNode), Some(ancestors)) = (&made, &options.ancestors) {
                match until_answered(|| client.mkdir(self.parent(), ancestors)).await {
                    Ok(()) => continue,
                    Err(Error::NoNode) => {}
                    Err(error) => return Err(error),
                }
            }
            match made {
                Ok((_, sequence)) => return Ok(format!("{}{sequence}", self.prefix)),
                Err(Error::ConnectionLoss) => {
                    if let Some(own) = self.find_own(client).await? {
                        return Ok(own);
                    }
                }
                Err(error) => {
                    if made_nothing(&error) {
                        cleanup.disarm();
                    }
                    return Err(error);
                }
            }
        }
    }

    /// This contender's node, if the server made it: after a lost create reply, the client
    /// cannot know.
    async fn find_own(&self, client: &Client) -> Result<Option<String>, Error> {
        let (parent, start) = (self.parent(), last_component(&self.prefix));
        let children = until_answered(|| client.list_children(parent)).await?;
        let mut candidates = children.iter().filter(|name| name.starts_with(start));
        if self.unique {
            return Ok(candidates.next().map(|name| child(parent, name)));
        }
        let paths: Vec<String> = candidates.map(|name| child(parent, name)).collect();
        if paths.is_empty() {
            return Ok(None);
        }
        // The candidates' owners, in one multiRead; a read that fails alone is passed over.
        let read_all = || {
            let mut reader = client.new_multi_reader();
            let added = paths.iter().try_for_each(|path| reader.add_get_data(path));
            let commit = reader.commit();
            async move {
                added?;
                commit.await
            }
        };
        let owners = until_answered(read_all).await?;
        let own = client.session_id().0;
        let found = paths.into_iter().zip(owners).find(|(_, read)| {
            matches!(read, MultiReadResult::Data { stat, .. } if stat.ephemeral_owner == own)
        });
        Ok(found.map(|(path, _)| path))
    }

    /// Waits until `own` (whose last `digits` characters are its sequence number) is the first
    /// of the contenders, watching the one just before it each time; returns its sequence
    /// number. `RuntimeInconsistent` if `own` is gone.
    async fn wait_first(&self, client: &Client, own: &str, digits: usize) -> Result<i64, Error> {
        let parent = self.parent();
        let number = |name: &str| {
            let digits = name.get(name.len().checked_sub(digits)?..)?;
            let parsed = digits.parse::<i32>().ok()?;
            Some((digits.to_owned(), i64::from(parsed)))
        };
        let Some((own_digits, own_number)) = number(own) else {
            return Err(Error::RuntimeInconsistent);
        };
        loop {
            let children = until_answered(|| client.list_children(parent)).await?;
            let mut queue: Vec<(String, &str)> = (children.iter())
                .filter(|name| self.contenders.include(name))
                .filter_map(|name| Some((number(name)?.0, name.as_str())))
                .collect();
            queue.sort_unstable();
            let ahead = match queue.iter().position(|(digits, _)| *digits == own_digits) {
                None => return Err(Error::RuntimeInconsistent),
                Some(0) => return Ok(own_number),
                Some(place) => child(parent, queue[place - 1].1),
            };
            match until_answered(|| client.get_and_watch_data(&ahead)).await {
                Ok((_, _, watcher)) => {
                    watcher.changed().await;
                }
                Err(Error::NoNode) => {}
                Err(error) => return Err(error),
            }
        }
    }
}

impl Client {
    /// Takes the lock `prefix` names, as ZooKeeper's recipes document's lock, waiting as long
    /// as it takes: makes an ephemeral sequential node with `data`, and holds once no contender
    /// is ahead. `RuntimeInconsistent` if its node is deleted meanwhile, `SessionExpired` if the
    /// session ends, `InvalidAcl` for an empty ACL, `NoChildrenForEphemerals` under an ephemeral
    /// directory, `NoNode` if the directory is missing and `options` do not make it, and, as
    /// with the real client, also when they do but the reply of the first create (refused for
    /// want of the directory) is lost. A lost reply is retried (a lost create reply looks for
    /// the node first). Dropping the future cleans up in the background, as dropping the
    /// [`LockClient`] does.
    pub async fn lock(
        &self,
        prefix: LockPrefix<'_>,
        data: &[u8],
        options: impl Into<LockOptions<'_>>,
    ) -> Result<LockClient<'_>, Error> {
        let options = options.into();
        if options.acls.is_empty() {
            return Err(Error::InvalidAcl);
        }
        let contention = prefix.contention(self);
        paths::check(&contention.prefix, true)?;
        let mut cleanup = Cleanup {
            client: self.clone(),
            contention: contention.clone(),
            node: None,
            armed: true,
        };
        let own = contention
            .make_node(self, data, &options, &mut cleanup)
            .await?;
        cleanup.node = Some(own.clone());
        let digits = own.len() - contention.prefix.len();
        let sequence = match contention.wait_first(self, &own, digits).await {
            Ok(sequence) => sequence,
            Err(error @ (Error::RuntimeInconsistent | Error::SessionExpired)) => {
                cleanup.disarm();
                return Err(error);
            }
            Err(error) => return Err(error),
        };
        cleanup.disarm();
        let role = contention.role();
        // The lock node's creation zxid, as zklab's own recipes give: unique in the run, and
        // growing from one holder to the next.
        let token = self.created_at(&own).unwrap_or(sequence);
        self.record(Outcome::Granted { role, token });
        Ok(LockClient {
            client: self,
            held: Held { lock: own, role },
        })
    }
}

/// What a lock that is held is: its node, and its name in the trace.
#[derive(Clone, Debug)]
struct Held {
    lock: String,
    role: &'static str,
}

impl Held {
    /// Lets go: says so in the trace and deletes the node in the background (a lost reply is
    /// retried; a node already gone, or a session already over, ends it).
    fn release(&mut self, client: &Client) {
        if !client.is_running() {
            // A killed process lets nothing go: its node stays until its session expires.
            return;
        }
        client.record(Outcome::Released { role: self.role });
        let lock = std::mem::take(&mut self.lock);
        let deleting = client.clone();
        client.in_background(async move {
            let client = deleting;
            let _ = until_answered(|| client.delete(&lock, None)).await;
        });
    }

    /// A transaction that applies only while the lock's node is there.
    fn check_writer<'c>(&self, client: &'c Client) -> CheckWriter<'c> {
        let writer = client.new_check_writer(&self.lock, None);
        writer.expect("the lock's node has a path the server made")
    }

    /// Creates a node while the lock is held, as [`Client::create`] does.
    fn create<'c>(
        &self,
        client: &'c Client,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> impl Future<Output = Result<(Stat, CreateSequence), Error>> + Send + 'c {
        let mut writer = self.check_writer(client);
        let added = writer.add_create(path, data, options);
        let asked = path.len();
        async move {
            added?;
            match only_write(writer.commit()).await? {
                MultiWriteResult::Create { path, stat } => {
                    Ok((stat, CreateSequence::appended(&path, asked)?))
                }
                other => Err(unexpected(&other)),
            }
        }
    }

    /// Sets a node's data while the lock is held, as [`Client::set_data`] does.
    fn set_data<'c>(
        &self,
        client: &'c Client,
        path: &str,
        data: &[u8],
        expected_version: Option<i32>,
    ) -> impl Future<Output = Result<Stat, Error>> + Send + 'c {
        let mut writer = self.check_writer(client);
        let added = writer.add_set_data(path, data, expected_version);
        async move {
            added?;
            match only_write(writer.commit()).await? {
                MultiWriteResult::SetData { stat } => Ok(stat),
                other => Err(unexpected(&other)),
            }
        }
    }

    /// Deletes a node while the lock is held, as [`Client::delete`] does.
    fn delete<'c>(
        &self,
        client: &'c Client,
        path: &str,
        expected_version: Option<i32>,
    ) -> impl Future<Output = Result<(), Error>> + Send + 'c {
        let mut writer = self.check_writer(client);
        let added = writer.add_delete(path, expected_version);
        async move {
            added?;
            match only_write(writer.commit()).await? {
                MultiWriteResult::Delete => Ok(()),
                other => Err(unexpected(&other)),
            }
        }
    }
}

/// A lock held: writes through it apply only while its node is there (`RuntimeInconsistent`
/// once it is gone). Dropping it lets the lock go, deleting the node in the background.
#[derive(Debug)]
pub struct LockClient<'a> {
    client: &'a Client,
    held: Held,
}

impl<'a> LockClient<'a> {
    /// The client that holds the lock.
    pub fn client(&self) -> &'a Client {
        self.client
    }

    /// The lock's node: watch it to learn that someone else deleted it.
    pub fn lock_path(&self) -> &str {
        &self.held.lock
    }

    /// As [`Client::create`], while the lock is held.
    pub fn create(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> impl Future<Output = Result<(Stat, CreateSequence), Error>> + Send + 'a {
        self.held.create(self.client, path, data, options)
    }

    /// As [`Client::set_data`], while the lock is held.
    pub fn set_data(
        &self,
        path: &str,
        data: &[u8],
        expected_version: Option<i32>,
    ) -> impl Future<Output = Result<Stat, Error>> + Send + 'a {
        self.held
            .set_data(self.client, path, data, expected_version)
    }

    /// As [`Client::delete`], while the lock is held.
    pub fn delete(
        &self,
        path: &str,
        expected_version: Option<i32>,
    ) -> impl Future<Output = Result<(), Error>> + Send + 'a {
        self.held.delete(self.client, path, expected_version)
    }

    /// As [`Client::new_check_writer`] on the lock's node.
    pub fn new_check_writer(&self) -> CheckWriter<'a> {
        self.held.check_writer(self.client)
    }

    /// The same lock, owning a clone of its client.
    pub fn into_owned(self) -> OwnedLockClient {
        let mut this = ManuallyDrop::new(self);
        let held = Held {
            lock: std::mem::take(&mut this.held.lock),
            role: this.held.role,
        };
        OwnedLockClient {
            client: this.client.clone(),
            held,
        }
    }
}

impl Drop for LockClient<'_> {
    fn drop(&mut self) {
        self.held.release(self.client);
    }
}

/// A [`LockClient`] that owns its client. Its clones are the same lock: dropping any one lets
/// it go, as with the real client.
#[derive(Clone, Debug)]
pub struct OwnedLockClient {
    client: Client,
    held: Held,
}

impl OwnedLockClient {
    /// The client that holds the lock.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// As [`LockClient::lock_path`].
    pub fn lock_path(&self) -> &str {
        &self.held.lock
    }

    /// As [`LockClient::create`].
    pub fn create(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> impl Future<Output = Result<(Stat, CreateSequence), Error>> + Send + '_ {
        self.held.create(&self.client, path, data, options)
    }

    /// As [`LockClient::set_data`].
    pub fn set_data(
        &self,
        path: &str,
        data: &[u8],
        expected_version: Option<i32>,
    ) -> impl Future<Output = Result<Stat, Error>> + Send + '_ {
        self.held
            .set_data(&self.client, path, data, expected_version)
    }

    /// As [`LockClient::delete`].
    pub fn delete(
        &self,
        path: &str,
        expected_version: Option<i32>,
    ) -> impl Future<Output = Result<(), Error>> + Send + '_ {
        self.held.delete(&self.client, path, expected_version)
    }

    /// As [`LockClient::new_check_writer`].
    pub fn new_check_writer(&self) -> CheckWriter<'_> {
        self.held.check_writer(&self.client)
    }
}

impl Drop for OwnedLockClient {
    fn drop(&mut self) {
        self.held.release(&self.client);
    }
}

/// Deletes a contender's node in the background if `lock` ends without holding (an error, or
/// its future dropped), unless disarmed: the node is known, or looked for as after a lost
/// create reply.
struct Cleanup {
    client: Client,
    contention: Contention,
    node: Option<String>,
    armed: bool,
}

impl Cleanup {
    /// Nothing to clean up: the lock is held, or no node is left.
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (client, contention) = (self.client.clone(), self.contention.clone());
        let node = self.node.take();
        self.client.in_background(async move {
            let node = match node {
                Some(node) => Some(node),
                None => contention.find_own(&client).await.ok().flatten(),
            };
            if let Some(node) = node {
                let _ = until_answered(|| client.delete(&node, None)).await;
            }
        });
    }
}

/// Calls `call` until it is answered: again after each ConnectionLoss.
async fn until_answered<T, F>(call: impl Fn() -> F) -> Result<T, Error>
where
    F: Future<Output = Result<T, Error>>,
{
    loop {
        match call().await {
            Err(Error::ConnectionLoss) => {}
            answered => return answered,
        }
    }
}

/// The result of a check writer's one write.
async fn only_write(
    commit: impl Future<Output = Result<Vec<MultiWriteResult>, CheckWriteError>>,
) -> Result<MultiWriteResult, Error> {
    let mut results = commit.await?;
    results
        .pop()
        .ok_or_else(|| Error::UnexpectedError("a transaction without its write".to_owned()))
}

/// A write's result of another kind than the write's: the simulated client never gives one.
fn unexpected(result: &MultiWriteResult) -> Error {
    Error::UnexpectedError(format!("an unexpected result: {result:?}"))
}

/// Whether a create that failed with `error` surely left no node of this session behind: the
/// server refused it, or the session is over (its ephemeral nodes go with it).
fn made_nothing(error: &Error) -> bool {
    matches!(
        error,
        Error::NoNode
            | Error::NoAuth
            | Error::BadVersion
            | Error::NoChildrenForEphemerals
            | Error::NodeExists
            | Error::NotEmpty
            | Error::InvalidAcl
            | Error::AuthFailed
            | Error::SessionMoved
            | Error::NotReadOnly
            | Error::NoWatcher
            | Error::QuotaExceeded
            | Error::Throttled
            | Error::MarshallingError
            | Error::Unimplemented
            | Error::ReconfigDisabled
            | Error::UnexpectedErrorCode(_)
            | Error::SessionExpired
            | Error::ClientClosed
    )
}

/// The parent of a path or a sequential prefix (`/` for the root's children).
fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(slash) => &path[..slash],
    }
}

/// The last component of a path or a sequential prefix.
fn last_component(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The path of `parent`'s child `name`.
fn child(parent: &str, name: &str) -> String {
    match parent {
        "/" => format!("/{name}"),
        _ => format!("{parent}/{name}"),
    }
}

/// A version 4 UUID made of `bits`, as Curator names its lock nodes with.
fn uuid(bits: u128) -> String {
    let bits = (bits & !(0xF << 76)) | (0x4 << 76);
    let bits = (bits & !(0x3 << 62)) | (0x2 << 62);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        bits >> 96,
        (bits >> 80) & 0xFFFF,
        (bits >> 64) & 0xFFFF,
        (bits >> 48) & 0xFFFF,
        bits & 0xFFFF_FFFF_FFFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uuid_is_version_4_of_the_rfc_variant() {
        for bits in [0, u128::MAX, 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef] {
            let uuid = uuid(bits);
            let groups: Vec<&str> = uuid.split('-').collect();
            let lengths: Vec<usize> = groups.iter().map(|group| group.len()).collect();
            assert_eq!(lengths, [8, 4, 4, 4, 12], "{uuid}");
            assert!(groups[2].starts_with('4'), "{uuid}");
            assert!(groups[3].starts_with(['8', '9', 'a', 'b']), "{uuid}");
        }
        assert_eq!(uuid(0), "00000000-0000-4000-8000-000000000000");
    }

    #[test]
    fn paths_split_as_the_server_keys_them() {
        assert_eq!((parent("/a"), last_component("/a")), ("/", "a"));
        assert_eq!((parent("/a/b-"), last_component("/a/b-")), ("/a", "b-"));
        assert_eq!((parent("/a/"), last_component("/a/")), ("/a", ""));
        assert_eq!(
            (child("/", "a"), child("/a", "b")),
            ("/a".into(), "/a/b".into())
        );
    }
}
