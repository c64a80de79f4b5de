//! A tree cache's copy follows its subtree through creations, changes and deletions, and ends
//! equal to it: on the pure server in one process, and on a real ZooKeeper (its persistent
//! recursive watch and its multiRead as the real server serves them).

use std::collections::BTreeMap;
use std::time::Duration;

use zklab::launcher::{installed_or_skip, Standalone};
use zklab::recipes::client::{CreateMode, ZkClient};
use zklab::recipes::real_zk::RealZk;
use zklab::recipes::tree_cache::{CacheChange, CachedNode, TreeCache};
use zklab::sim::local::LocalZk;

/// The copy's data by path.
type Copy = BTreeMap<String, Vec<u8>>;

/// The copy's data, of what the follower holds.
fn data_of(nodes: &BTreeMap<String, CachedNode>) -> Copy {
    (nodes.iter())
        .map(|(path, node)| (path.clone(), node.data.clone()))
        .collect()
}

fn copy(nodes: &[(&str, &str)]) -> Copy {
    (nodes.iter())
        .map(|(path, data)| (path.to_string(), data.as_bytes().to_vec()))
        .collect()
}

/// `writer` makes `/t` with a child, `reader` follows it and loads both; then the writer makes,
/// changes and deletes nodes, and the copy follows each change until it equals the tree.
async fn follow_a_subtree(writer: &impl ZkClient, reader: &impl ZkClient) {
    let persistent = CreateMode::Persistent;
    writer.create("/t", b"top", persistent).await.expect("/t");
    writer.create("/t/a", b"a", persistent).await.expect("/t/a");
    let cache = TreeCache::new("/t");
    let mut follower = cache.follow(reader);
    let mut loaded = Vec::new();
    for _ in 0..2 {
        loaded.push(follower.changed().await.expect("a change"));
    }
    assert_eq!(
        loaded,
        [
            CacheChange::Cached {
                path: "/t".to_owned(),
                version: 0,
                data: b"top".to_vec()
            },
            CacheChange::Cached {
                path: "/t/a".to_owned(),
                version: 0,
                data: b"a".to_vec()
            },
        ]
    );
    writer
        .create("/t/a/b", b"b", persistent)
        .await
        .expect("/t/a/b");
    writer.set_data("/t/a", b"a2", -1).await.expect("set /t/a");
    writer.create("/t/c", b"c", persistent).await.expect("/t/c");
    writer.delete("/t/a/b", -1).await.expect("deleted /t/a/b");
    let wanted = copy(&[("/t", "top"), ("/t/a", "a2"), ("/t/c", "c")]);
    while data_of(follower.nodes()) != wanted {
        follower.changed().await.expect("a change");
    }
    writer.delete("/t/c", -1).await.expect("deleted /t/c");
    assert_eq!(
        follower.changed().await,
        Ok(CacheChange::Dropped {
            path: "/t/c".to_owned()
        })
    );
}

#[test]
fn the_copy_follows_the_subtree_on_the_pure_server() {
    let zk = LocalZk::new();
    let (writer, reader) = (zk.connect(), zk.connect());
    let runtime = madsim::runtime::Runtime::with_seed_and_config(0, madsim::Config::default());
    runtime.block_on(async move { follow_a_subtree(&writer, &reader).await });
}

#[test]
fn the_copy_follows_the_subtree_on_a_real_server() {
    let Some(installation) = installed_or_skip("a tree cache") else {
        return;
    };
    let server = Standalone::start(&installation).expect("a standalone server");
    let hosts = server.connect_string();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let timeout = Duration::from_secs(10);
        let writer = RealZk::connect(&hosts, timeout).await.expect("a session");
        let reader = RealZk::connect(&hosts, timeout).await.expect("a session");
        follow_a_subtree(&writer, &reader).await;
    });
}
