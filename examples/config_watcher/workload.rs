//! What each client of the test does with the code under test: client 0 publishes versions 1 to
//! `last` of the setting, every other client follows it until it has seen `last`, each starting
//! over in a new session when its session expires. The same on the simulated ZooKeeper and on a
//! real one.

use std::time::Duration;

use zklab::recipes::client::{ZkClient, ZkError};
use zklab::testing::TestClient;

use crate::watcher::{follow, publish, Follow};

/// Client `client`'s part, its watchers following as `how` says.
pub async fn publish_and_follow(mut client: TestClient, how: Follow, last: u32) {
    if client.index() == 0 {
        for version in 1..=last {
            loop {
                match publish(&client, version).await {
                    Ok(()) => break,
                    Err(ZkError::SessionExpired) => client.reconnect().await,
                    Err(error) => panic!("publishing version {version}: {error}"),
                }
            }
            client.note(format!("published version {version}"));
            client.sleep(Duration::from_millis(50)).await;
        }
    } else {
        loop {
            match follow(&client, last, how).await {
                Ok(_) => break,
                Err(ZkError::SessionExpired) => client.reconnect().await,
                Err(error) => panic!("following: {error}"),
            }
        }
        client.note(format!("saw version {last}"));
    }
}
