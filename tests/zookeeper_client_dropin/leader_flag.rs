// A leader flag written on `zookeeper-client` 0.11 as its author would write it, included
// twice by tests/zookeeper_client_dropin.rs: once where `zookeeper_client` is the drop-in, under
// the simulator, and once where it is the real crate, against a real ZooKeeper.

use zookeeper_client::{Acls, Client, CreateMode, Error, EventType, SessionState};

/// The flag: whoever makes this ephemeral node leads.
pub const FLAG: &str = "/service/leader";

/// Waits until this session leads: it makes the flag, or waits for the one there to go and
/// tries again. After ConnectionLoss the create may have been applied: the flag is its own
/// if its owner is this session. `careless` takes ConnectionLoss for a win.
pub async fn lead(client: &Client, careless: bool) -> Result<(), Error> {
    let directory = CreateMode::Persistent.with_acls(Acls::anyone_all());
    while let Err(error) = client.mkdir("/service", &directory).await {
        if error != Error::ConnectionLoss {
            return Err(error);
        }
    }
    let options = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
    loop {
        match client.create(FLAG, b"", &options).await {
            Ok(_) => return Ok(()),
            Err(Error::ConnectionLoss) if careless => return Ok(()),
            Err(Error::NodeExists | Error::ConnectionLoss) => {}
            Err(error) => return Err(error),
        }
        let (stat, watcher) = match client.check_and_watch_stat(FLAG).await {
            Ok(found) => found,
            Err(Error::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        };
        match stat {
            Some(stat) if stat.ephemeral_owner == client.session_id().0 => return Ok(()),
            Some(_) => {
                let event = watcher.changed().await;
                if event.event_type == EventType::Session
                    && event.session_state == SessionState::Expired
                {
                    return Err(Error::SessionExpired);
                }
            }
            None => {}
        }
    }
}

/// Gives the flag up: deletes it (gone already is as good).
pub async fn step_down(client: &Client) -> Result<(), Error> {
    loop {
        match client.delete(FLAG, None).await {
            Ok(()) | Err(Error::NoNode) => return Ok(()),
            Err(Error::ConnectionLoss) => continue,
            Err(error) => return Err(error),
        }
    }
}

/// One client: leads once for a while, in a new session whenever its session expires, and
/// tells the monitors when it leads and when it stops.
pub async fn leads_once(client: TestClient, careless: bool) {
    let role = "leadership";
    let recorder = client.recorder();
    loop {
        let zk = Client::connect(&client.connect_string())
            .await
            .expect("connects to the simulated ensemble");
        let session = zk.session_id().0;
        let led = async {
            lead(&zk, careless).await?;
            recorder.record(session, Outcome::Granted { role, token: 0 });
            client.sleep(Duration::from_millis(10)).await;
            recorder.record(session, Outcome::Released { role });
            step_down(&zk).await
        };
        match led.await {
            Ok(()) => return,
            Err(Error::SessionExpired) => continue,
            Err(error) => panic!("gave up on {error}"),
        }
    }
}
