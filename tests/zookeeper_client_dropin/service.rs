// A small service written on `zookeeper-client` 0.11 as its author would write it, included
// twice by tests/zookeeper_client_dropin.rs: once where `zookeeper_client` is the drop-in, under
// the simulator, and once where it is the real crate, against a real ZooKeeper. Each member
// registers itself, leads once (a leader flag) to publish the configuration, follows the
// configuration until it has it, and does its job under `Client::lock`: a counter and a ledger
// entry written in one transaction that applies only while the lock is held. A state watcher
// stops a member's work when its session ends; it starts again in a new session.

use std::pin::pin;

use futures::future::{select, Either};
use zookeeper_client::{
    Acls, Client, CreateMode, CreateOptions, Error, EventType, LockOptions, LockPrefix,
    SessionState,
};

pub const MEMBERS: &str = "/service/members";
pub const FLAG: &str = "/service/leader";
pub const CONFIG: &str = "/service/config";
pub const LOCKS: &str = "/service/locks";
pub const COUNTER: &str = "/service/counter";
pub const LEDGER: &str = "/service/ledger";

/// The configuration the leader publishes.
pub const RELEASE: &[u8] = b"release-1";

/// Calls `call` again after each ConnectionLoss, for calls that may be repeated.
async fn retried<T, F>(call: impl Fn() -> F) -> Result<T, Error>
where
    F: std::future::Future<Output = Result<T, Error>>,
{
    loop {
        match call().await {
            Err(Error::ConnectionLoss) => {}
            answered => return answered,
        }
    }
}

const OPEN: CreateOptions = CreateMode::Persistent.with_acls(Acls::anyone_all());
const EPHEMERAL: CreateOptions = CreateMode::Ephemeral.with_acls(Acls::anyone_all());

/// Waits for `path` to go, or for the session to end.
async fn until_gone(zk: &Client, path: &str) -> Result<(), Error> {
    loop {
        let (stat, watcher) = retried(|| zk.check_and_watch_stat(path)).await?;
        if stat.is_none() {
            return Ok(());
        }
        let event = watcher.changed().await;
        if event.event_type == EventType::Session {
            return Err(Error::SessionExpired);
        }
    }
}

/// Makes the ephemeral node `path` for this session. After ConnectionLoss the create may have
/// been applied: the node is this session's if it owns it; one of another session (an earlier
/// one of this member, not yet expired) is waited out.
async fn make_own(zk: &Client, path: &str) -> Result<(), Error> {
    loop {
        match zk.create(path, b"", &EPHEMERAL).await {
            Ok(_) => return Ok(()),
            Err(Error::NodeExists | Error::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
        match retried(|| zk.check_stat(path)).await? {
            Some(stat) if stat.ephemeral_owner == zk.session_id().0 => return Ok(()),
            Some(_) => until_gone(zk, path).await?,
            None => {}
        }
    }
}

/// Joins the registry as `name`, making the service's directories first.
pub async fn register(zk: &Client, name: &str) -> Result<(), Error> {
    for directory in [MEMBERS, LOCKS, LEDGER] {
        retried(|| zk.mkdir(directory, &OPEN)).await?;
    }
    make_own(zk, &format!("{MEMBERS}/{name}")).await
}

/// Waits until this session leads: it makes the flag, or waits for the one there to go.
/// `careless` takes a create that failed with ConnectionLoss for a win.
pub async fn lead(zk: &Client, careless: bool) -> Result<(), Error> {
    retried(|| zk.mkdir("/service", &OPEN)).await?;
    if careless {
        loop {
            match zk.create(FLAG, b"", &EPHEMERAL).await {
                Ok(_) | Err(Error::ConnectionLoss) => return Ok(()),
                Err(Error::NodeExists) => until_gone(zk, FLAG).await?,
                Err(error) => return Err(error),
            }
        }
    }
    make_own(zk, FLAG).await
}

/// Gives the flag up: deletes it (gone already is as good).
pub async fn step_down(zk: &Client) -> Result<(), Error> {
    match retried(|| zk.delete(FLAG, None)).await {
        Ok(()) | Err(Error::NoNode) => Ok(()),
        Err(error) => Err(error),
    }
}

/// Publishes the configuration (the leader does).
pub async fn publish(zk: &Client, config: &[u8]) -> Result<(), Error> {
    loop {
        match retried(|| zk.set_data(CONFIG, config, None)).await {
            Ok(_) => return Ok(()),
            Err(Error::NoNode) => match retried(|| zk.create(CONFIG, config, &OPEN)).await {
                Ok(_) => return Ok(()),
                Err(Error::NodeExists) => {}
                Err(error) => return Err(error),
            },
            Err(error) => return Err(error),
        }
    }
}

/// Follows the configuration until it reads `wanted`.
pub async fn follow_config(zk: &Client, wanted: &[u8]) -> Result<(), Error> {
    loop {
        let watcher = match retried(|| zk.get_and_watch_data(CONFIG)).await {
            Ok((data, _, _)) if data == wanted => return Ok(()),
            Ok((_, _, watcher)) => watcher,
            Err(Error::NoNode) => match retried(|| zk.check_and_watch_stat(CONFIG)).await? {
                (Some(_), _) => continue,
                (None, watcher) => watcher,
            },
            Err(error) => return Err(error),
        };
        if watcher.changed().await.event_type == EventType::Session {
            return Err(Error::SessionExpired);
        }
    }
}

/// Does job `job` once, under the lock: adds one to the counter and writes the job into the
/// ledger, in one transaction that applies only while the lock is held. After ConnectionLoss
/// the ledger says whether it was done.
pub async fn do_job(zk: &Client, job: &str) -> Result<(), Error> {
    let options = LockOptions::new(Acls::anyone_all()).with_ancestor_options(OPEN)?;
    let lock = zk.lock(LockPrefix::new_curator(LOCKS, "job-")?, b"", options).await?;
    let entry = format!("{LEDGER}/{job}");
    loop {
        if retried(|| zk.check_stat(&entry)).await?.is_some() {
            return Ok(());
        }
        let mut writer = lock.new_check_writer();
        match retried(|| zk.get_data(COUNTER)).await {
            Ok((count, stat)) => {
                let count: u64 = String::from_utf8_lossy(&count).parse().unwrap_or(0);
                let next = (count + 1).to_string();
                writer.add_set_data(COUNTER, next.as_bytes(), Some(stat.version))?;
            }
            Err(Error::NoNode) => writer.add_create(COUNTER, b"1", &OPEN)?,
            Err(error) => return Err(error),
        }
        writer.add_create(&entry, b"", &OPEN)?;
        match writer.commit().await.map_err(Error::from) {
            Ok(_) => return Ok(()),
            Err(Error::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
    }
}

/// Resolves when the session has ended: whatever the member was doing in it stops.
pub async fn ended(zk: &Client) {
    let mut states = zk.state_watcher();
    let mut state = zk.state();
    while !matches!(
        state,
        SessionState::Expired | SessionState::Closed | SessionState::AuthFailed
    ) {
        state = states.changed().await;
    }
}

/// One member's life in one session: `leading` hears when it starts and stops leading.
pub async fn serve(
    zk: &Client,
    name: &str,
    careless: bool,
    leading: impl Fn(bool),
) -> Result<(), Error> {
    register(zk, name).await?;
    lead(zk, careless).await?;
    leading(true);
    publish(zk, RELEASE).await?;
    leading(false);
    step_down(zk).await?;
    follow_config(zk, RELEASE).await?;
    do_job(zk, name).await
}

/// The harness's side: one member, in a new session whenever its session ends, telling the
/// monitors when it leads (its lock's grants the client tells them itself).
pub async fn member(client: TestClient, careless: bool) {
    let role = "leadership";
    let recorder = client.recorder();
    let name = format!("member-{}", client.index());
    loop {
        let zk = Client::connect(&client.connect_string())
            .await
            .expect("connects to the ensemble");
        let session = zk.session_id().0;
        let leading = |now: bool| match now {
            true => recorder.record(session, Outcome::Granted { role, token: 0 }),
            false => recorder.record(session, Outcome::Released { role }),
        };
        let served = pin!(serve(&zk, &name, careless, leading));
        let served = match select(served, pin!(ended(&zk))).await {
            Either::Left((served, _)) => served,
            Either::Right(_) => Err(Error::SessionExpired),
        };
        match served {
            Ok(()) => return,
            Err(Error::SessionExpired) => {}
            Err(error) => panic!("{name} gave up on {error}"),
        }
    }
}
