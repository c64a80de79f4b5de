//! Small correct programs in the styles users write, each judged over 1,000 seeds with every
//! fault, and a twin of each with one planted bug, which must fail. The correct ones are the
//! false alarms zklab must not raise: an `exists` watch on one's own live node, node names that
//! end in digits, sessions idle for long with watches set, retries after ConnectionLoss. The
//! twins are the bugs those styles invite.

use std::collections::BTreeSet;
use std::future::Future;
use std::time::Duration;

use zklab::prelude::*;
use zklab::recipes::acl::Acls;
use zklab::scenarios::monitor::exclusion::{MutualExclusion, MUTUAL_EXCLUSION};
use zklab::scenarios::monitor::failure::NoFailures;
use zklab::scenarios::monitor::stuck_waiter::STUCK_WAITER;
use zklab::scenarios::runner::{LIVENESS, PANIC};
use zklab::sim::property::{Monitor, Property};

/// Whether a program runs with its planted bug.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Twin {
    Correct,
    Planted,
}

/// Runs `program` over 1,000 seeds with every fault on `clients` clients: correct, it holds;
/// with its bug planted, it fails with `broken`.
fn holds_and_its_twin_fails<N, F, Fut>(clients: u32, monitors: N, program: F, broken: &Property)
where
    N: Monitor + Send + Sync + 'static,
    F: Fn(TestClient, Twin) -> Fut + Send + Sync + Copy + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let harness = Harness::new()
        .clients(clients)
        .seeds(0..1000)
        .monitors(monitors);
    harness.run(move |client| program(client, Twin::Correct));
    let failure = harness
        .try_run(move |client| program(client, Twin::Planted))
        .expect_err("the planted bug fails some seed");
    assert_eq!(failure.violations[0].property, broken, "{failure}");
}

/// Runs `$part`, a part of a program on `$client`, again in a new session each time its session
/// ends under it; with `$declarer`, that declarer first declares it waits for nothing.
macro_rules! in_live_sessions {
    ($client:ident, $part:expr) => {
        while let Err(error) = $part.await {
            session_ended(error);
            $client.reconnect().await;
        }
    };
    ($client:ident, $part:expr, $declarer:ident) => {
        while let Err(error) = $part.await {
            $declarer.declare(&$client, &[], &[]);
            session_ended(error);
            $client.reconnect().await;
        }
    };
}

/// Takes the error that ended a part of a program: only the session's end may, and the part
/// then starts over in a new session.
fn session_ended(error: ZkError) {
    assert_eq!(error, ZkError::SessionExpired, "gave up on an error");
}

/// Makes `path`, a persistent node, unless it is there.
async fn make(client: &TestClient, path: &str) -> Result<(), ZkError> {
    make_holding(client, path, b"").await
}

/// Makes `path`, a persistent node holding `data`, unless it is there.
async fn make_holding(client: &TestClient, path: &str, data: &[u8]) -> Result<(), ZkError> {
    loop {
        match client.create(path, data, CreateMode::Persistent).await {
            Ok(_) | Err(ZkError::NodeExists) => return Ok(()),
            Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
    }
}

/// Deletes `path`, whatever its version; gone already is as good.
async fn delete(client: &TestClient, path: &str) -> Result<(), ZkError> {
    loop {
        match client.delete(path, -1).await {
            Ok(()) | Err(ZkError::NoNode) => return Ok(()),
            Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
    }
}

/// Tells the monitors the session holds `role` (`granted` says how), holds it for `millis`, and
/// tells them it let go.
async fn hold(client: &TestClient, role: &'static str, granted: Outcome, millis: u64) {
    let (recorder, session) = (client.recorder(), client.session_id());
    recorder.record(session, granted);
    client.sleep(Duration::from_millis(millis)).await;
    recorder.record(session, Outcome::Released { role });
}

/// Waits for the next watch event: `true` for one on `path`, `false` when the connection came
/// back (a watch may have been missed while away: look again). The session's end is an error.
async fn next_news(client: &TestClient, path: &str) -> Result<bool, ZkError> {
    loop {
        match client.next_event().await {
            Some(ZkEvent::Watch(event)) if event.path == path => return Ok(true),
            Some(ZkEvent::Session(SessionEvent::SyncConnected)) => return Ok(false),
            Some(ZkEvent::Session(SessionEvent::Expired | SessionEvent::Closed)) | None => {
                return Err(ZkError::SessionExpired)
            }
            Some(_) => {}
        }
    }
}

/// What a piece of the application's own code declares, for the wait-for and stuck-waiter
/// monitors: they judge nothing else.
struct Declarer {
    recorder: std::sync::Arc<dyn Recorder>,
    id: u32,
}

impl Declarer {
    fn new(client: &TestClient) -> Self {
        let recorder = client.recorder();
        let id = recorder.new_declarer();
        Declarer { recorder, id }
    }

    fn declare(&self, client: &TestClient, owns: &[&str], awaits_gone: &[&str]) {
        let paths = |paths: &[&str]| paths.iter().map(|path| (*path).to_owned()).collect();
        let declared = Declared {
            owns: paths(owns),
            awaits_gone: paths(awaits_gone),
        };
        self.recorder
            .declare(client.session_id(), self.id, &declared);
    }
}

const LEADER: &str = "/app/leader";

/// A leader flag: whoever makes the ephemeral `LEADER` node leads, for a while. After
/// NodeExists it reads the node with a watch to see whose it is: its own (a create whose reply
/// was lost) means it leads; another's, it waits for the node to go. The twin takes every
/// existing node for another's, and so waits for its own.
async fn leader_flag(mut client: TestClient, twin: Twin) {
    let declarer = Declarer::new(&client);
    in_live_sessions!(client, lead(&client, &declarer, twin));
}

/// Takes the flag `flag` (an ephemeral node in `/app`) for this session, waiting while another
/// session's stands; it declares what it awaits and, once taken, owns.
async fn take_flag(
    client: &TestClient,
    declarer: &Declarer,
    flag: &str,
    twin: Twin,
) -> Result<(), ZkError> {
    make(client, "/app").await?;
    loop {
        match client.create(flag, b"", CreateMode::Ephemeral).await {
            Ok(_) => break,
            Err(ZkError::ConnectionLoss) => continue,
            Err(ZkError::NodeExists) => {}
            Err(error) => return Err(error),
        }
        let stat = match client.exists(flag, true).await {
            Ok(Some(stat)) => stat,
            Ok(None) | Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        };
        if stat.ephemeral_owner == client.session_id() && twin == Twin::Correct {
            break;
        }
        declarer.declare(client, &[], &[flag]);
        let news = next_news(client, flag).await;
        declarer.declare(client, &[], &[]);
        news?;
    }
    declarer.declare(client, &[flag], &[]);
    Ok(())
}

/// Deletes the flag `flag` while it is this session's. A delete whose reply was lost is not
/// sent again blindly: by then the node may be another session's, made after this one's went.
async fn release_flag(client: &TestClient, flag: &str) -> Result<(), ZkError> {
    loop {
        match client.delete(flag, -1).await {
            Ok(()) | Err(ZkError::NoNode) => return Ok(()),
            Err(ZkError::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
        loop {
            match client.exists(flag, false).await {
                Ok(Some(stat)) if stat.ephemeral_owner == client.session_id() => break,
                Ok(_) => return Ok(()),
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            }
        }
    }
}

async fn lead(client: &TestClient, declarer: &Declarer, twin: Twin) -> Result<(), ZkError> {
    take_flag(client, declarer, LEADER, twin).await?;
    let role = "leadership";
    hold(client, role, Outcome::Granted { role, token: 0 }, 10).await;
    let deleted = release_flag(client, LEADER).await;
    declarer.declare(client, &[], &[]);
    deleted
}

#[test]
fn a_leader_flag_that_watches_its_own_node() {
    holds_and_its_twin_fails(3, MutualExclusion::default(), leader_flag, &LIVENESS);
}

// The watcher's planted bug is the twin's here; its publisher is not used.
#[allow(dead_code)]
#[path = "../examples/config_watcher/watcher.rs"]
mod watcher;

/// A configuration follower: every session publishes three versions of a setting, a version
/// only over an older one, and meanwhile sits with a watch on the setting, idle between
/// versions, until it has read the last (so a crashed publisher leaves the others nothing to
/// wait for). The twin waits for the watch of a read that failed with ConnectionLoss, which
/// may never have been set.
async fn config_follower(mut client: TestClient, twin: Twin) {
    let how = match twin {
        Twin::Correct => watcher::Follow::ReadAgain,
        Twin::Planted => watcher::Follow::TrustLostRead,
    };
    let mut published = 0;
    loop {
        let (publishing, following) = futures::join!(
            publish_slowly(&client, &mut published),
            watcher::follow(&client, LAST, how)
        );
        match publishing.and(following) {
            Ok(_) => return,
            Err(error) => session_ended(error),
        }
        client.reconnect().await;
    }
}

/// The last version of the setting.
const LAST: u32 = 3;

/// Publishes each version after `published` up to `LAST`, one every 300 ms, each only over an
/// older one: a versioned write after a read, again after ConnectionLoss or a race.
async fn publish_slowly(client: &TestClient, published: &mut u32) -> Result<(), ZkError> {
    while *published < LAST {
        let version = *published + 1;
        let (data, stat) = match client.get_data(watcher::NODE, false).await {
            Err(ZkError::NoNode) => {
                make(client, "/app").await?;
                match client
                    .create(watcher::NODE, b"0", CreateMode::Persistent)
                    .await
                {
                    Ok(_) | Err(ZkError::NodeExists | ZkError::ConnectionLoss) => continue,
                    Err(error) => return Err(error),
                }
            }
            Err(ZkError::ConnectionLoss) => continue,
            read => read?,
        };
        let current: u32 = String::from_utf8_lossy(&data).parse().unwrap_or(0);
        if current < version {
            let text = version.to_string();
            match client
                .set_data(watcher::NODE, text.as_bytes(), stat.version)
                .await
            {
                Ok(_) => {}
                Err(ZkError::BadVersion | ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            }
        }
        *published = version;
        client.sleep(Duration::from_millis(300)).await;
    }
    Ok(())
}

#[test]
fn a_config_follower_idle_with_a_watch_set() {
    holds_and_its_twin_fails(3, NoFailures, config_follower, &LIVENESS);
}

const COUNTER: &str = "/app/counter";
/// How many times each client adds one to the counter.
const ADDS: u32 = 3;

/// A counter: each client adds one, three times, by a versioned write of the count and the
/// tags of every add so far; after ConnectionLoss it reads again and takes its tag there for
/// its write having been applied. Every read checks that the count is the number of distinct
/// tags. The twin retries blindly, adding twice for a write whose reply was lost.
async fn counter(mut client: TestClient, twin: Twin) {
    let mut added = 0;
    in_live_sessions!(client, count(&client, &mut added, twin));
}

async fn count(client: &TestClient, added: &mut u32, twin: Twin) -> Result<(), ZkError> {
    make(client, "/app").await?;
    while *added < ADDS {
        let tag = format!("c{}-{added}", client.index());
        let (data, stat) = match client.get_data(COUNTER, false).await {
            Err(ZkError::NoNode) => {
                match client.create(COUNTER, b"0", CreateMode::Persistent).await {
                    Ok(_) | Err(ZkError::NodeExists | ZkError::ConnectionLoss) => continue,
                    Err(error) => return Err(error),
                }
            }
            Err(ZkError::ConnectionLoss) => continue,
            read => read?,
        };
        let text = String::from_utf8(data).expect("the counter is text");
        let mut words: Vec<&str> = text.split_whitespace().collect();
        let value: usize = words.remove(0).parse().expect("a count");
        let tags: BTreeSet<&str> = words.iter().copied().collect();
        assert_eq!(
            value,
            tags.len(),
            "the count is not the number of adds: {text}"
        );
        if twin == Twin::Correct && tags.contains(tag.as_str()) {
            *added += 1;
            continue;
        }
        words.push(&tag);
        let next = format!("{} {}", value + 1, words.join(" "));
        match client
            .set_data(COUNTER, next.as_bytes(), stat.version)
            .await
        {
            Ok(_) => *added += 1,
            Err(ZkError::BadVersion | ZkError::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

#[test]
fn a_counter_that_retries_after_connection_loss() {
    holds_and_its_twin_fails(3, NoFailures, counter, &PANIC);
}

const REGISTRY: &str = "/registry";

/// A registry of hosts under fixed names that end in digits (`host-0000000001`, not sequential
/// nodes), each holding its host's name. A create that failed with ConnectionLoss is made
/// again, and NodeExists then means it was made: the node holds this host. Every host then
/// lists the registry and checks that no host is there twice. The twin takes NodeExists for a
/// clash and registers under the next free number, leaving its host registered twice.
async fn registry(mut client: TestClient, twin: Twin) {
    in_live_sessions!(client, register(&client, twin));
}

async fn register(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    make(client, REGISTRY).await?;
    let host = format!("c{}", client.index());
    let mut number = u64::from(client.index());
    loop {
        let path = format!("{REGISTRY}/host-{number:010}");
        match client
            .create(&path, host.as_bytes(), CreateMode::Persistent)
            .await
        {
            Ok(_) => break,
            Err(ZkError::ConnectionLoss) => continue,
            Err(ZkError::NodeExists) if twin == Twin::Correct => break,
            Err(ZkError::NodeExists) => number += u64::from(client.clients()),
            Err(error) => return Err(error),
        }
    }
    let names = loop {
        match client.get_children(REGISTRY, false).await {
            Err(ZkError::ConnectionLoss) => continue,
            listed => break listed?,
        }
    };
    let mut hosts = BTreeSet::new();
    for name in names {
        let data = loop {
            match client.get_data(&format!("{REGISTRY}/{name}"), false).await {
                Err(ZkError::ConnectionLoss) => continue,
                read => break read?.0,
            }
        };
        let registered = String::from_utf8(data).expect("a host's name");
        assert!(
            hosts.insert(registered.clone()),
            "{registered} is registered twice"
        );
    }
    Ok(())
}

#[test]
fn a_registry_of_names_that_end_in_digits() {
    holds_and_its_twin_fails(3, NoFailures, registry, &PANIC);
}

/// Makes this session's ephemeral sequential node in `dir`, named `<session>-<kind>-<number>`:
/// after ConnectionLoss it looks for one by its session's prefix before it makes another, after
/// a `sync` (a lagging server may not show it yet). Planted, it makes another blindly, leaving
/// the first, if it was made, behind in its own session.
async fn sequential_node(
    client: &TestClient,
    dir: &str,
    kind: &str,
    twin: Twin,
) -> Result<String, ZkError> {
    let prefix = format!("{:016x}-{kind}-", client.session_id());
    loop {
        let path = format!("{dir}/{prefix}");
        match client
            .create(&path, b"", CreateMode::EphemeralSequential)
            .await
        {
            Ok((made, _)) => return Ok(made),
            Err(ZkError::ConnectionLoss) if twin == Twin::Planted => continue,
            Err(ZkError::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
        let found = loop {
            match client.sync(dir).await {
                Err(ZkError::ConnectionLoss) => continue,
                synced => synced?,
            }
            match client.get_children(dir, false).await {
                Err(ZkError::ConnectionLoss) => continue,
                listed => break listed?,
            }
        };
        if let Some(name) = found.into_iter().find(|name| name.starts_with(&prefix)) {
            return Ok(format!("{dir}/{name}"));
        }
    }
}

/// The children of `dir` in the order of their sequence numbers, with a watch if `watch`.
async fn in_sequence(client: &TestClient, dir: &str, watch: bool) -> Result<Vec<String>, ZkError> {
    let mut names = loop {
        match client.get_children(dir, watch).await {
            Err(ZkError::ConnectionLoss) => continue,
            listed => break listed?,
        }
    };
    names.sort_by_key(|name| name.rsplit('-').next().unwrap_or_default().to_owned());
    Ok(names)
}

const LOCK_DIR: &str = "/mylock";

/// A lock of one's own: an ephemeral sequential node, then a watch on the node just before it
/// until it is first; it declares the node it owns and the one it awaits, so the wait-for and
/// stuck-waiter monitors judge it. The twin waits even when the node ahead was already gone when it set
/// its watch: a watch on a missing node fires only if it comes back, which a sequential node
/// never does.
async fn own_lock(mut client: TestClient, twin: Twin) {
    let declarer = Declarer::new(&client);
    in_live_sessions!(client, hold_own_lock(&client, &declarer, twin), declarer);
}

async fn hold_own_lock(
    client: &TestClient,
    declarer: &Declarer,
    twin: Twin,
) -> Result<(), ZkError> {
    make(client, LOCK_DIR).await?;
    let mine = sequential_node(client, LOCK_DIR, "lock", Twin::Correct).await?;
    declarer.declare(client, &[&mine], &[]);
    loop {
        let names = in_sequence(client, LOCK_DIR, false).await?;
        let at = names.iter().position(|name| mine.ends_with(name.as_str()));
        let at = at.expect("its node stands while its session lives");
        if at == 0 {
            break;
        }
        let ahead = format!("{LOCK_DIR}/{}", names[at - 1]);
        match client.exists(&ahead, true).await {
            Ok(Some(_)) => {}
            Ok(None) if twin == Twin::Correct => continue,
            Ok(None) => {}
            Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
        declarer.declare(client, &[&mine], &[&ahead]);
        let news = next_news(client, &ahead).await;
        declarer.declare(client, &[&mine], &[]);
        news?;
    }
    let role = "my lock";
    hold(client, role, Outcome::Granted { role, token: 0 }, 10).await;
    let deleted = delete(client, &mine).await;
    declarer.declare(client, &[], &[]);
    deleted
}

#[test]
fn a_lock_of_ones_own_that_declares_what_it_awaits() {
    holds_and_its_twin_fails(3, MutualExclusion::default(), own_lock, &STUCK_WAITER);
}

const PRESENCE: &str = "/presence";

/// Presence: each host keeps an ephemeral node of its own, idles with a watch on it, and checks
/// that the node is there, in its current session, before it signs off. Its session may
/// expire while it idles, taking the node; it then makes the node again in its new session.
/// The twin trusts the node to have outlived its session.
async fn presence(mut client: TestClient, twin: Twin) {
    let mine = format!("{PRESENCE}/c{}", client.index());
    let mut made = false;
    while let Err(error) = stay_present(&client, &mine, &mut made).await {
        session_ended(error);
        client.reconnect().await;
        made &= twin == Twin::Planted;
    }
}

async fn stay_present(client: &TestClient, mine: &str, made: &mut bool) -> Result<(), ZkError> {
    make(client, PRESENCE).await?;
    while !*made {
        match client.create(mine, b"", CreateMode::Ephemeral).await {
            Ok(_) | Err(ZkError::NodeExists) => *made = true,
            Err(ZkError::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
    }
    // Idle with a watch on its own live node; news of it, or a reconnect, says nothing here.
    loop {
        match client.exists(mine, true).await {
            Err(ZkError::ConnectionLoss) => continue,
            found => found?,
        };
        break;
    }
    client.sleep(Duration::from_secs(2)).await;
    let stat = loop {
        match client.exists(mine, false).await {
            Err(ZkError::ConnectionLoss) => continue,
            found => break found?,
        }
    };
    let owner = stat.map(|stat| stat.ephemeral_owner);
    assert_eq!(
        owner,
        Some(client.session_id()),
        "{mine} is not this session's"
    );
    Ok(())
}

#[test]
fn presence_kept_by_a_session_idle_with_a_watch_on_its_own_node() {
    holds_and_its_twin_fails(3, NoFailures, presence, &PANIC);
}

const JOBS: &str = "/jobs";
/// How many jobs each producer submits.
const SUBMITS: u32 = 3;

/// A job producer: each job is a persistent sequential node (`job-0000000007`) holding a tag of
/// the producer's. After ConnectionLoss on a create it looks for its tag before it submits
/// again, after a `sync`, since the server it is on now may not have applied the create yet;
/// once done it checks that no tag was submitted twice. The twin looks without the `sync`, and
/// submits again a job a lagging server did not show it.
async fn producer(mut client: TestClient, twin: Twin) {
    let mut submitted = 0;
    in_live_sessions!(client, submit(&client, &mut submitted, twin));
}

async fn submit(client: &TestClient, submitted: &mut u32, twin: Twin) -> Result<(), ZkError> {
    make(client, JOBS).await?;
    let mut lost = false;
    while *submitted < SUBMITS {
        let tag = format!("c{}-{submitted}", client.index());
        if lost && tags_submitted(client, twin).await?.contains(&tag) {
            lost = false;
            *submitted += 1;
            continue;
        }
        let path = format!("{JOBS}/job-");
        match client
            .create(&path, tag.as_bytes(), CreateMode::PersistentSequential)
            .await
        {
            Ok(_) => *submitted += 1,
            Err(ZkError::ConnectionLoss) => lost = true,
            Err(error) => return Err(error),
        }
    }
    tags_submitted(client, Twin::Correct).await?;
    Ok(())
}

/// The tags of every job submitted, read after a `sync` unless `twin` is planted; each is
/// checked to be there once.
async fn tags_submitted(client: &TestClient, twin: Twin) -> Result<BTreeSet<String>, ZkError> {
    let names = loop {
        if twin == Twin::Correct {
            match client.sync(JOBS).await {
                Err(ZkError::ConnectionLoss) => continue,
                synced => synced?,
            }
        }
        match client.get_children(JOBS, false).await {
            Err(ZkError::ConnectionLoss) => continue,
            listed => break listed?,
        }
    };
    let mut tags = BTreeSet::new();
    for name in names {
        let data = loop {
            match client.get_data(&format!("{JOBS}/{name}"), false).await {
                Err(ZkError::ConnectionLoss) => continue,
                read => break read?.0,
            }
        };
        let tag = String::from_utf8(data).expect("a tag");
        assert!(tags.insert(tag.clone()), "{tag} was submitted twice");
    }
    Ok(tags)
}

#[test]
fn a_producer_that_looks_for_its_job_after_connection_loss() {
    holds_and_its_twin_fails(3, NoFailures, producer, &PANIC);
}

/// A step that waits for a node to appear: it sets an `exists` watch on a node it makes itself
/// a little later (as a task waits for a node another task makes), and waits for the watch to
/// fire; after a reconnect it looks again. The twin waits for the watch of an `exists` that
/// failed with ConnectionLoss, which may never have been set.
async fn awaits_appearance(mut client: TestClient, twin: Twin) {
    let node = format!("/app/ready-c{}", client.index());
    in_live_sessions!(client, await_appearance(&client, &node, twin));
}

async fn await_appearance(client: &TestClient, node: &str, twin: Twin) -> Result<(), ZkError> {
    make(client, "/app").await?;
    let making = async {
        client.sleep(Duration::from_millis(500)).await;
        make(client, node).await
    };
    let waiting = async {
        loop {
            match client.exists(node, true).await {
                Ok(Some(_)) => return Ok(()),
                Ok(None) => {}
                Err(ZkError::ConnectionLoss) if twin == Twin::Correct => continue,
                // Only the watch can tell it now, it believes: it waits for nothing else.
                Err(ZkError::ConnectionLoss) => {
                    while !next_news(client, node).await? {}
                    continue;
                }
                Err(error) => return Err(error),
            }
            next_news(client, node).await?;
        }
    };
    let (made, seen) = futures::join!(making, waiting);
    made.and(seen)
}

#[test]
fn a_step_that_waits_for_a_node_to_appear() {
    holds_and_its_twin_fails(3, NoFailures, awaits_appearance, &LIVENESS);
}

const CLAIM: &str = "/app/owner";

/// First writer wins: every host proposes itself as the owner by creating `CLAIM` holding its
/// name. A create that failed with ConnectionLoss or NodeExists may still be its own (a reply
/// lost, then a retry): it reads the node to learn who won. A host that believes it won checks
/// the node names it. The twin takes ConnectionLoss for a win and NodeExists for a loss.
async fn first_writer_wins(mut client: TestClient, twin: Twin) {
    in_live_sessions!(client, propose(&client, twin));
}

async fn propose(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    make(client, "/app").await?;
    let me = format!("c{}", client.index());
    let won = loop {
        match client
            .create(CLAIM, me.as_bytes(), CreateMode::Persistent)
            .await
        {
            Ok(_) => break true,
            Err(ZkError::ConnectionLoss) if twin == Twin::Planted => break true,
            Err(ZkError::NodeExists) if twin == Twin::Planted => break false,
            Err(ZkError::ConnectionLoss | ZkError::NodeExists) => {}
            Err(error) => return Err(error),
        }
        match client.get_data(CLAIM, false).await {
            Ok((owner, _)) => break owner == me.as_bytes(),
            Err(ZkError::ConnectionLoss | ZkError::NoNode) => {}
            Err(error) => return Err(error),
        }
    };
    if won {
        let owner = loop {
            match client.get_data(CLAIM, false).await {
                Err(ZkError::ConnectionLoss) => continue,
                read => break read?.0,
            }
        };
        assert_eq!(String::from_utf8_lossy(&owner), me, "{me} believes it won");
    }
    Ok(())
}

#[test]
fn first_writer_wins_after_a_lost_reply() {
    holds_and_its_twin_fails(3, NoFailures, first_writer_wins, &PANIC);
}

const ACCOUNTS: [&str; 2] = ["/bank/a", "/bank/b"];
const MOVES: &str = "/bank/moves";
/// What the two accounts hold together.
const TOTAL: u32 = 100;
/// How many units each client moves from `a` to `b`.
const UNITS: u32 = 2;

/// A transfer in one `multi`: both balances written at the versions read, and a marker node
/// named for the move, so that a transfer whose reply was lost is found by its marker and not
/// made twice. Every client checks the books after its moves. The twin's multi has no marker,
/// and it retries blindly.
async fn transfers(mut client: TestClient, twin: Twin) {
    let mut moved = 0;
    in_live_sessions!(client, transfer(&client, &mut moved, twin));
}

async fn transfer(client: &TestClient, moved: &mut u32, twin: Twin) -> Result<(), ZkError> {
    make(client, "/bank").await?;
    make(client, MOVES).await?;
    for (account, balance) in ACCOUNTS.into_iter().zip([TOTAL, 0]) {
        make_holding(client, account, balance.to_string().as_bytes()).await?;
    }
    while *moved < UNITS {
        let marker = format!("{MOVES}/c{}-{moved}", client.index());
        if twin == Twin::Correct {
            match client.exists(&marker, false).await {
                Ok(Some(_)) => {
                    *moved += 1;
                    continue;
                }
                Ok(None) => {}
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            }
        }
        let [(a, a_version), (b, b_version)] = match balances(client).await {
            Err(ZkError::ConnectionLoss) => continue,
            read => read?,
        };
        let mut ops = vec![
            Op::SetData {
                path: ACCOUNTS[0].to_owned(),
                data: (a - 1).to_string().into_bytes(),
                version: a_version,
            },
            Op::SetData {
                path: ACCOUNTS[1].to_owned(),
                data: (b + 1).to_string().into_bytes(),
                version: b_version,
            },
        ];
        if twin == Twin::Correct {
            ops.push(Op::Create {
                path: marker,
                data: Vec::new(),
                mode: CreateMode::Persistent,
                acl: Acls::OPEN,
            });
        }
        match client.multi(ops).await {
            Ok(results) if results.iter().all(Result::is_ok) => *moved += 1,
            // Another transfer came between (BadVersion), or this one was made (NodeExists).
            Ok(_) | Err(ZkError::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
    }
    let [(a, _), (b, _)] = loop {
        match balances(client).await {
            Err(ZkError::ConnectionLoss) => continue,
            read => break read?,
        }
    };
    assert_eq!(a + b, TOTAL, "the books do not add up");
    assert!(
        b <= client.clients() * UNITS,
        "more was moved than asked: {b}"
    );
    Ok(())
}

/// Both balances, each with its version, as they stood together: `a` is read again after `b`,
/// and unchanged it says no transfer came between the two reads.
async fn balances(client: &TestClient) -> Result<[(u32, i32); 2], ZkError> {
    let balance = |account| async move {
        let (data, stat) = client.get_data(account, false).await?;
        let balance = String::from_utf8_lossy(&data).parse().expect("a balance");
        Ok::<_, ZkError>((balance, stat.version))
    };
    loop {
        let (a, b) = (balance(ACCOUNTS[0]).await?, balance(ACCOUNTS[1]).await?);
        if balance(ACCOUNTS[0]).await? == a {
            return Ok([a, b]);
        }
    }
}

#[test]
fn a_transfer_in_one_multi_marked_against_a_lost_reply() {
    holds_and_its_twin_fails(3, NoFailures, transfers, &PANIC);
}

const LIST: &str = "/app/list";

/// A shared list in one node: each client appends its three tags by read, modify and a write
/// at the version read, again when another write came between. Once done it checks its tags
/// are all there. The twin writes at any version (-1), so a write that came between is lost.
async fn shared_list(mut client: TestClient, twin: Twin) {
    let mut appended = 0;
    in_live_sessions!(client, append(&client, &mut appended, twin));
}

async fn append(client: &TestClient, appended: &mut u32, twin: Twin) -> Result<(), ZkError> {
    make(client, "/app").await?;
    make(client, LIST).await?;
    let tag = |n: u32| format!("c{}-{n}", client.index());
    let read = || async {
        loop {
            match client.get_data(LIST, false).await {
                Err(ZkError::ConnectionLoss) => continue,
                read => {
                    return read
                        .map(|(data, stat)| (String::from_utf8_lossy(&data).into_owned(), stat))
                }
            }
        }
    };
    while *appended < ADDS {
        let (list, stat) = read().await?;
        let mine = tag(*appended);
        if list.split_whitespace().any(|word| word == mine) {
            *appended += 1;
            continue;
        }
        let version = match twin {
            Twin::Correct => stat.version,
            Twin::Planted => -1,
        };
        let next = format!("{list} {mine}");
        match client.set_data(LIST, next.trim().as_bytes(), version).await {
            Ok(_) => *appended += 1,
            Err(ZkError::BadVersion | ZkError::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
    }
    let (list, _) = read().await?;
    for n in 0..ADDS {
        let mine = tag(n);
        assert!(
            list.split_whitespace().any(|word| word == mine),
            "{mine} was lost: {list}"
        );
    }
    Ok(())
}

#[test]
fn a_shared_list_written_at_the_version_read() {
    holds_and_its_twin_fails(3, NoFailures, shared_list, &PANIC);
}

const IDS: &str = "/ids";
const TAKEN: &str = "/taken";

/// An id generator: an id is the number ZooKeeper gives a persistent sequential node, so no two
/// clients get the same (a create whose reply was lost only wastes a number). Each client takes
/// three and marks each as taken by a node named for it holding its own name; a mark already
/// there must be its own (a mark whose reply was lost). The twin makes an id from the directory's
/// child count, read and then used, so two clients may take the same.
async fn id_generator(mut client: TestClient, twin: Twin) {
    let mut taken = 0;
    in_live_sessions!(client, take_ids(&client, &mut taken, twin));
}

async fn take_ids(client: &TestClient, taken: &mut u32, twin: Twin) -> Result<(), ZkError> {
    make(client, IDS).await?;
    make(client, TAKEN).await?;
    let me = format!("c{}", client.index());
    while *taken < ADDS {
        let id = match twin {
            Twin::Correct => match client
                .create(&format!("{IDS}/id-"), b"", CreateMode::PersistentSequential)
                .await
            {
                Ok((path, _)) => path
                    .rsplit('-')
                    .next()
                    .expect("a sequence number")
                    .to_owned(),
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            },
            Twin::Planted => match client.exists(IDS, false).await {
                Ok(stat) => {
                    let next = stat.expect("the directory stands").cversion + 1;
                    let made = client
                        .create(&format!("{IDS}/id-{next:010}"), b"", CreateMode::Persistent)
                        .await;
                    match made {
                        Ok(_) | Err(ZkError::NodeExists) => format!("{next:010}"),
                        Err(ZkError::ConnectionLoss) => continue,
                        Err(error) => return Err(error),
                    }
                }
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            },
        };
        let mark = format!("{TAKEN}/{id}");
        make_holding(client, &mark, me.as_bytes()).await?;
        let owner = loop {
            match client.get_data(&mark, false).await {
                Err(ZkError::ConnectionLoss) => continue,
                read => break read?.0,
            }
        };
        assert_eq!(
            String::from_utf8_lossy(&owner),
            me,
            "id {id} was taken twice"
        );
        *taken += 1;
    }
    Ok(())
}

#[test]
fn an_id_generator_on_sequential_nodes() {
    holds_and_its_twin_fails(3, NoFailures, id_generator, &PANIC);
}

const LEASES: &str = "/leases";
/// How many may hold a lease at once.
const LEASE_LIMIT: usize = 2;

/// A semaphore of one's own: an ephemeral sequential node; it holds a lease while its node is
/// among the first two, and otherwise waits for any change of the directory (a watch on the
/// listing, woken with everyone: a herd, but correct). The twin counts the nodes ahead of it
/// with `<=`, one too many.
async fn own_semaphore(mut client: TestClient, twin: Twin) {
    in_live_sessions!(client, lease(&client, twin));
}

async fn lease(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    make(client, LEASES).await?;
    let mine = sequential_node(client, LEASES, "lease", Twin::Correct).await?;
    loop {
        let names = in_sequence(client, LEASES, true).await?;
        let ahead = names.iter().position(|name| mine.ends_with(name.as_str()));
        let ahead = ahead.expect("its node stands while its session lives");
        let holds = match twin {
            Twin::Correct => ahead < LEASE_LIMIT,
            Twin::Planted => ahead <= LEASE_LIMIT,
        };
        if holds {
            break;
        }
        next_news(client, LEASES).await?;
    }
    let role = "my lease";
    hold(client, role, Outcome::Shared { role, token: 0 }, 10).await;
    delete(client, &mine).await
}

#[test]
fn a_semaphore_of_ones_own_woken_by_any_change() {
    let monitors = MutualExclusion::shared_by_at_most(LEASE_LIMIT);
    holds_and_its_twin_fails(4, monitors, own_semaphore, &MUTUAL_EXCLUSION);
}

const CANDIDATES: &str = "/candidates";

/// An election of one's own: an ephemeral sequential node, and the lowest leads; the others
/// wait for any change of the candidates. The twin makes its node again after ConnectionLoss
/// without looking for the first, which, lowest, stands in its own session for good.
async fn own_election(mut client: TestClient, twin: Twin) {
    in_live_sessions!(client, stand(&client, twin));
}

async fn stand(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    make(client, CANDIDATES).await?;
    let mine = sequential_node(client, CANDIDATES, "n", twin).await?;
    loop {
        let names = in_sequence(client, CANDIDATES, true).await?;
        if names
            .first()
            .is_some_and(|first| mine.ends_with(first.as_str()))
        {
            break;
        }
        next_news(client, CANDIDATES).await?;
    }
    let role = "my leadership";
    hold(client, role, Outcome::Granted { role, token: 0 }, 10).await;
    delete(client, &mine).await
}

#[test]
fn an_election_of_ones_own_that_finds_its_node_after_connection_loss() {
    holds_and_its_twin_fails(3, MutualExclusion::default(), own_election, &LIVENESS);
}

const MEMBERS: &str = "/members";

/// A roster: each member makes an ephemeral node holding its name, lists the members and reads
/// each one's node, then leaves. A member may leave between the listing and the read: NoNode
/// there means it left. The twin takes NoNode for an error and gives up.
async fn roster(mut client: TestClient, twin: Twin) {
    in_live_sessions!(client, read_roster(&client, twin));
}

async fn read_roster(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    make(client, MEMBERS).await?;
    let me = format!("c{}", client.index());
    let mine = format!("{MEMBERS}/{me}");
    loop {
        match client
            .create(&mine, me.as_bytes(), CreateMode::Ephemeral)
            .await
        {
            Ok(_) | Err(ZkError::NodeExists) => break,
            Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
    }
    let names = loop {
        match client.get_children(MEMBERS, false).await {
            Err(ZkError::ConnectionLoss) => continue,
            listed => break listed?,
        }
    };
    for name in names {
        loop {
            match client.get_data(&format!("{MEMBERS}/{name}"), false).await {
                Ok(_) => break,
                Err(ZkError::NoNode) if twin == Twin::Correct => break,
                Err(ZkError::ConnectionLoss) => continue,
                Err(ZkError::NoNode) => panic!("{name} vanished under the reading"),
                Err(error) => return Err(error),
            }
        }
    }
    delete(client, &mine).await
}

#[test]
fn a_roster_read_while_members_leave() {
    holds_and_its_twin_fails(4, NoFailures, roster, &PANIC);
}

/// Makes `/tree/a/b/c` and a node of its own under it, parents first, as several clients race
/// to: NodeExists on a parent means another made it. The twin gives up on NodeExists on a
/// parent.
async fn make_parents(mut client: TestClient, twin: Twin) {
    in_live_sessions!(client, make_path(&client, twin));
}

async fn make_path(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    let mut path = String::new();
    for part in ["tree", "a", "b", "c"] {
        path = format!("{path}/{part}");
        loop {
            match client.create(&path, b"", CreateMode::Persistent).await {
                Ok(_) => break,
                Err(ZkError::NodeExists) if twin == Twin::Correct => break,
                Err(ZkError::ConnectionLoss) => continue,
                Err(ZkError::NodeExists) => panic!("{path} is there already"),
                Err(error) => return Err(error),
            }
        }
    }
    make(client, &format!("{path}/c{}", client.index())).await
}

#[test]
fn parents_made_as_others_race_to_make_them() {
    holds_and_its_twin_fails(3, NoFailures, make_parents, &PANIC);
}

const MUTEX: &str = "/app/mutex";

/// A mutex taken for two rounds, each held a while, and let go only while its node is its own
/// (see [`release_flag`]). When its session ends while it holds, the node went with the
/// session, and in a new session it simply takes the mutex again. The twin
/// "cleans up" on the way back by deleting the mutex's node, which by then may be another
/// holder's, and lets a third in beside that holder.
async fn mutex(mut client: TestClient, twin: Twin) {
    let declarer = Declarer::new(&client);
    let (mut rounds, mut holding) = (0, false);
    in_live_sessions!(
        client,
        mutex_rounds(&client, &declarer, (&mut rounds, &mut holding), twin),
        declarer
    );
}

async fn mutex_rounds(
    client: &TestClient,
    declarer: &Declarer,
    (rounds, holding): (&mut u32, &mut bool),
    twin: Twin,
) -> Result<(), ZkError> {
    if std::mem::take(holding) && twin == Twin::Planted {
        delete(client, MUTEX).await?;
    }
    while *rounds < 2 {
        take_flag(client, declarer, MUTEX, Twin::Correct).await?;
        *holding = true;
        let role = "mutex";
        hold(client, role, Outcome::Granted { role, token: 0 }, 500).await;
        release_flag(client, MUTEX).await?;
        declarer.declare(client, &[], &[]);
        *holding = false;
        *rounds += 1;
    }
    Ok(())
}

#[test]
fn a_mutex_whose_holder_comes_back_after_its_session_ended() {
    holds_and_its_twin_fails(3, MutualExclusion::default(), mutex, &MUTUAL_EXCLUSION);
}

const TURN: &str = "/app/turn";

/// A flag taken for two short rounds and let go after each. The twin lets go by a delete sent
/// again blindly after ConnectionLoss, which may delete the next holder's node.
async fn turns(mut client: TestClient, twin: Twin) {
    let declarer = Declarer::new(&client);
    let mut rounds = 0;
    in_live_sessions!(
        client,
        take_turns(&client, &declarer, &mut rounds, twin),
        declarer
    );
}

async fn take_turns(
    client: &TestClient,
    declarer: &Declarer,
    rounds: &mut u32,
    twin: Twin,
) -> Result<(), ZkError> {
    while *rounds < 2 {
        take_flag(client, declarer, TURN, Twin::Correct).await?;
        let role = "turn";
        hold(client, role, Outcome::Granted { role, token: 0 }, 20).await;
        match twin {
            Twin::Correct => release_flag(client, TURN).await?,
            Twin::Planted => delete(client, TURN).await?,
        }
        declarer.declare(client, &[], &[]);
        *rounds += 1;
    }
    Ok(())
}

#[test]
fn a_flag_let_go_only_while_it_is_ones_own() {
    holds_and_its_twin_fails(3, MutualExclusion::default(), turns, &MUTUAL_EXCLUSION);
}

/// A follower that sets its watch again with every read, since a watch fires once, while
/// every session publishes the setting's versions (see [`publish_slowly`]). The twin sets it
/// with its first read only, and misses every change after the first.
async fn rewatching_follower(mut client: TestClient, twin: Twin) {
    let mut published = 0;
    loop {
        let (publishing, following) = futures::join!(
            publish_slowly(&client, &mut published),
            follow_to_the_last(&client, twin)
        );
        match publishing.and(following) {
            Ok(()) => return,
            Err(error) => session_ended(error),
        }
        client.reconnect().await;
    }
}

async fn follow_to_the_last(client: &TestClient, twin: Twin) -> Result<(), ZkError> {
    let mut watch = true;
    loop {
        let watching = watch;
        watch = twin == Twin::Correct;
        match client.get_data(watcher::NODE, watching).await {
            Ok((data, _)) if data == LAST.to_string().as_bytes() => return Ok(()),
            Ok(_) => {}
            // Not published yet: the watch of an `exists` fires when it is.
            Err(ZkError::NoNode) => match client.exists(watcher::NODE, true).await {
                Ok(Some(_)) | Err(ZkError::ConnectionLoss) => continue,
                Ok(None) => {}
                Err(error) => return Err(error),
            },
            Err(ZkError::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
        next_news(client, watcher::NODE).await?;
    }
}

#[test]
fn a_follower_that_sets_its_watch_again_with_every_read() {
    holds_and_its_twin_fails(3, NoFailures, rewatching_follower, &LIVENESS);
}

/// Two tasks on one session: one makes an ephemeral node of its own, works a while and deletes
/// it; the other waits for that node to go, by an `exists` watch, declaring the wait. A node
/// not there yet or gone already when it looks: it looks again (not there yet) or is done. The
/// twin waits whenever `exists` says the node is not there, and misses a deletion that came
/// before its watch.
async fn task_waits_for_task(mut client: TestClient, twin: Twin) {
    let declarer = Declarer::new(&client);
    in_live_sessions!(client, work_and_wait(&client, &declarer, twin), declarer);
}

async fn work_and_wait(
    client: &TestClient,
    declarer: &Declarer,
    twin: Twin,
) -> Result<(), ZkError> {
    make(client, "/app").await?;
    let busy = format!("/app/busy-c{}", client.index());
    let working = async {
        loop {
            match client.create(&busy, b"", CreateMode::Ephemeral).await {
                Ok(_) | Err(ZkError::NodeExists) => break,
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            }
        }
        client.sleep(Duration::from_millis(50)).await;
        delete(client, &busy).await
    };
    let waiting = async {
        let mut seen = false;
        loop {
            match client.exists(&busy, true).await {
                Ok(Some(_)) => seen = true,
                Ok(None) if twin == Twin::Correct && seen => return Ok(()),
                Ok(None) if twin == Twin::Correct => {
                    client.sleep(Duration::from_millis(5)).await;
                    continue;
                }
                Ok(None) => seen = true,
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            }
            declarer.declare(client, &[], &[&busy]);
            let news = next_news(client, &busy).await;
            declarer.declare(client, &[], &[]);
            news?;
        }
    };
    let (worked, waited) = futures::join!(working, waiting);
    worked.and(waited)
}

#[test]
fn a_task_that_waits_for_another_tasks_node_to_go() {
    holds_and_its_twin_fails(3, NoFailures, task_waits_for_task, &STUCK_WAITER);
}
