// A walk through zookeeper-client's contract, included by tests/zookeeper_client_dropin.rs
// (through the drop-in under the simulator and through the real crate on a real ZooKeeper) and
// by tests/serve.rs (through the real crate on zklab serve and on a real ZooKeeper). It
// writes down what a caller sees of each call (results and errors, not zxids or times, which
// differ from one server to another), so the two transcripts must be equal.

use std::time::Duration;

use zookeeper_client::{
    Acls, Client, CreateMode, Error, EventType, LockOptions, LockPrefix, MultiReadResult,
};

/// Each call under `root`, as the caller sees it, one line each.
pub async fn transcript(client: &Client, root: &str) -> Vec<String> {
    let mut seen = Vec::new();
    macro_rules! see {
        ($call:expr) => {{
            let result = $call;
            seen.push(format!("{} = {result:?}", stringify!($call)));
        }};
    }
    let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let ephemeral = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
    let sequential = CreateMode::PersistentSequential.with_acls(Acls::anyone_all());
    let at = |name: &str| format!("{root}{name}");
    let sorted = |mut names: Vec<String>| {
        names.sort();
        names
    };

    see!(client.create(root, b"", &open).await.map(|(_, n)| n));
    see!(client.create(root, b"", &open).await.map(|(_, n)| n));
    see!(client.create(&at("/a/b"), b"", &open).await.map(|(_, n)| n));
    see!(client.mkdir(&at("/a/b/c"), &open).await);
    see!(client.mkdir(&at("/a/b/c"), &open).await);
    let made = client.create(&at("/a/n-"), b"x", &sequential).await;
    see!(made.map(|(stat, n)| (stat.version, stat.data_length, stat.num_children, n.into_i64())));
    see!(client.get_data(&at("/a")).await.map(|(d, s)| (d, s.version, s.num_children)));
    see!(client.set_data(&at("/a"), b"y", Some(5)).await.map(|s| s.version));
    see!(client.set_data(&at("/a"), b"y", Some(0)).await.map(|s| (s.version, s.data_length)));
    see!(client.delete(&at("/a"), None).await);
    see!(client.delete(&at("/a/b/c"), Some(3)).await);
    see!(client.delete(&at("/none"), None).await);
    see!(client.create(&at("/e"), b"", &ephemeral).await.map(|(_, n)| n));
    see!(client.create(&at("/e/c"), b"", &open).await.map(|(_, n)| n));
    see!(client.check_stat(&at("/none")).await);
    see!(client.list_ephemerals(root).await);
    see!(client.list_ephemerals(&at("/a")).await);
    see!(client.count_descendants_number(root).await);
    see!(client.count_descendants_number(&at("/none")).await);
    see!(client.check_stat(&at("/e")).await.map(|s| s.map(|s| s.ephemeral_owner == client.session_id().0)));

    // Containers and TTL nodes: the marks in their stats, their refusals, a lock whose
    // ancestors are containers (as Curator makes them).
    let container = CreateMode::Container.with_acls(Acls::anyone_all());
    see!(client.create(&at("/box"), b"", &container).await.map(|(s, n)| (s.ephemeral_owner, n.into_i64())));
    see!(client.create(&at("/box/k"), b"", &ephemeral).await.map(|(_, n)| n));
    see!(client.mkdir(&at("/boxes/inner"), &container).await);
    see!(client.check_stat(&at("/boxes")).await.map(|s| s.map(|s| s.ephemeral_owner)));
    let idle = open.clone().with_ttl(Duration::from_secs(60));
    see!(client.create(&at("/idle"), b"", &idle).await.map(|(s, _)| s.ephemeral_owner));
    let idle_in_turn = sequential.clone().with_ttl(Duration::from_secs(60));
    let made = client.create(&at("/idle/t-"), b"", &idle_in_turn).await;
    see!(made.map(|(s, n)| (s.ephemeral_owner, n.into_i64())));
    let zero = open.clone().with_ttl(Duration::ZERO);
    see!(client.create(&at("/zero"), b"", &zero).await.map(drop));
    let too_long = open.clone().with_ttl(Duration::from_millis(1 << 40));
    see!(client.create(&at("/long"), b"", &too_long).await.map(drop));
    let boxed = LockOptions::new(Acls::anyone_all()).with_ancestor_options(container.clone()).unwrap();
    let boxed_locks = at("/cl/locks");
    let prefix = LockPrefix::new_curator(&boxed_locks, "lock-").unwrap();
    let lock = client.lock(prefix, b"", boxed).await.unwrap();
    see!(client.check_stat(&at("/cl/locks")).await.map(|s| s.map(|s| s.ephemeral_owner)));
    let (_, gone) = client.check_and_watch_stat(lock.lock_path()).await.unwrap();
    drop(lock);
    see!(gone.changed().await.event_type);
    see!(client.list_children(&at("/a")).await.map(sorted));
    see!(client.get_children(&at("/a")).await.map(|(c, s)| (sorted(c), s.num_children)));
    see!(client.get_data(&at("/none")).await.map(|(d, _)| d));
    see!(client.list_children(&at("/none")).await);
    see!(client.sync(&at("/a")).await);

    let (absent, created) = client.check_and_watch_stat(&at("/w")).await.unwrap();
    see!(absent);
    see!(client.create(&at("/w"), b"", &open).await.map(|(_, n)| n));
    see!(created.changed().await);
    let (_, _, changed) = client.get_and_watch_data(&at("/w")).await.unwrap();
    see!(client.set_data(&at("/w"), b"z", None).await.map(|s| s.version));
    see!(changed.changed().await);
    let (_, _, child) = client.get_and_watch_children(&at("/w")).await.unwrap();
    see!(client.create(&at("/w/k"), b"", &open).await.map(|(_, n)| n));
    see!(child.changed().await);
    let (_, deleted) = client.check_and_watch_stat(&at("/w/k")).await.unwrap();
    see!(client.delete(&at("/w/k"), None).await);
    see!(deleted.changed().await);

    let mut writer = client.new_multi_writer();
    writer.add_set_data(&at("/a"), b"m", None).unwrap();
    writer.add_create(&at("/w"), b"", &open).unwrap();
    see!(writer.commit().await);
    writer.add_create(&at("/m"), b"", &open).unwrap();
    writer.add_delete(&at("/w"), None).unwrap();
    see!(writer.commit().await.map(|results| results.len()));
    see!(client.check_stat(&at("/w")).await);
    let mut checked = client.new_check_writer(&at("/a"), Some(9)).unwrap();
    checked.add_create(&at("/c"), b"", &open).unwrap();
    let refused = checked.commit().await.map(|results| results.len());
    see!(refused.clone().map_err(Error::from));
    see!(refused);
    let mut checked = client.new_check_writer(&at("/a"), None).unwrap();
    checked.add_set_data(&at("/m"), b"q", Some(0)).unwrap();
    see!(checked.commit().await.map(|results| results.len()));

    let mut reader = client.new_multi_reader();
    reader.add_get_data(&at("/a")).unwrap();
    reader.add_get_children(&at("/a")).unwrap();
    reader.add_get_data(&at("/none")).unwrap();
    reader.add_get_children(&at("/none")).unwrap();
    let read = reader.commit().await.map(|results| {
        let each = |result| match result {
            MultiReadResult::Data { data, stat } => format!("data {data:?} v{}", stat.version),
            MultiReadResult::Children { children } => format!("children {:?}", sorted(children)),
            MultiReadResult::Error { err } => format!("error {err:?}"),
            _ => "another kind".to_owned(),
        };
        results.into_iter().map(each).collect::<Vec<_>>()
    });
    see!(read);
    see!(reader.add_get_data("a").map(drop));

    // Paths the client refuses, each with its reason, and one it leaves to the server.
    for path in ["", "a", "/a\u{1}", &at("//a"), &at("/./a"), &at("/../a"), &at("/a/")] {
        see!(client.check_stat(path).await);
    }
    see!(client.create(&at("/a/."), b"", &open).await.map(|(_, n)| n));
    see!(client.create(&at("/s/"), b"", &sequential).await.map(|(_, n)| n));
    see!(client.create(&at("/a/"), b"", &sequential).await.map(|(_, n)| n));

    // Client::lock: its refusals; a lock taken (its directory made), written through and let
    // go; a lock whose node someone else deletes; each way of naming its nodes.
    let locks = at("/l");
    let curator = || LockPrefix::new_curator(&locks, "lock-").unwrap();
    see!(LockPrefix::new_curator(&at("/l/"), "lock-").map(drop));
    see!(LockPrefix::new_curator(&locks, "a/b").map(drop));
    see!(LockPrefix::new_custom(at("/l/a-"), "b").map(drop));
    see!(LockPrefix::new_shared("l-").map(drop));
    see!(LockOptions::new(Acls::anyone_all()).with_ancestor_options(ephemeral.clone()).map(drop));
    see!(client.lock(curator(), b"", Acls::new(&[])).await.map(drop));
    see!(client.lock(curator(), b"", Acls::anyone_all()).await.map(drop));
    let making = LockOptions::new(Acls::anyone_all()).with_ancestor_options(open.clone()).unwrap();
    let lock = client.lock(curator(), b"d", making).await.unwrap();
    let path = lock.lock_path().to_owned();
    let name = path.strip_prefix(&format!("{locks}/_c_")).unwrap_or_default();
    see!((name.len(), name.ends_with("-lock-0000000000")));
    see!(client.get_data(&path).await.map(|(d, s)| (d, s.ephemeral_owner == client.session_id().0)));
    see!(lock.create(&at("/l/k-"), b"", &sequential).await.map(|(_, n)| n));
    see!(lock.set_data(&at("/l/k-0000000001"), b"v", Some(0)).await.map(|s| s.version));
    see!(lock.delete(&at("/l/k-0000000001"), Some(5)).await);
    let mut writer = lock.new_check_writer();
    writer.add_delete(&at("/l/k-0000000001"), None).unwrap();
    see!(writer.commit().await);
    let (_, gone) = client.check_and_watch_stat(&path).await.unwrap();
    drop(lock);
    see!(gone.changed().await.event_type == EventType::NodeDeleted);
    let shared = at("/l/s-");
    let lock = client.lock(LockPrefix::new_shared(&shared).unwrap(), b"", Acls::anyone_all());
    let lock = lock.await.unwrap().into_owned();
    see!(lock.lock_path().strip_prefix(root));
    see!(client.delete(lock.lock_path(), None).await);
    see!(lock.set_data(&locks, b"", None).await.map(|s| s.version));
    see!(lock.create(&at("/l/k"), b"", &open).await.map(|(_, n)| n));
    drop(lock);
    let custom = LockPrefix::new_custom(at("/l/x-7-"), "x-").unwrap();
    let lock = client.lock(custom, b"", Acls::anyone_all()).await.unwrap();
    see!(lock.lock_path().strip_prefix(root));
    see!(client.list_children(&locks).await.map(sorted));
    see!(client.count_descendants_number("/").await);

    // ACLs and identities: a node anyone may only read; a creator's ACL refused before any
    // authentication and taken after it; setAcl at a wrong version, empty, and right; whoami
    // before and after.
    let read_only = CreateMode::Persistent.with_acls(Acls::anyone_read());
    let creators = CreateMode::Persistent.with_acls(Acls::creator_all());
    see!(client.create(&at("/ro"), b"", &read_only).await.map(|(_, n)| n));
    see!(client.create(&at("/ro/c"), b"", &open).await.map(|(_, n)| n));
    see!(client.set_data(&at("/ro"), b"x", None).await.map(|s| s.version));
    see!(client.get_acl(&at("/ro")).await.map(|(acl, s)| (acl, s.aversion)));
    see!(client.set_acl(&at("/ro"), &Acls::anyone_all(), None).await.map(|s| s.aversion));
    see!(client.list_auth_users().await);
    see!(client.create(&at("/mine"), b"", &creators).await.map(|(_, n)| n));
    see!(client.auth("digest", b"alice:secret").await);
    see!(client.list_auth_users().await);
    see!(client.create(&at("/mine"), b"", &creators).await.map(|(_, n)| n));
    see!(client.get_acl(&at("/mine")).await.map(|(acl, s)| (acl, s.aversion)));
    see!(client.set_acl(&at("/mine"), &Acls::anyone_all(), Some(5)).await.map(|s| s.aversion));
    see!(client.set_acl(&at("/mine"), &[], None).await.map(|s| s.aversion));
    see!(client.set_acl(&at("/mine"), &Acls::anyone_all(), Some(0)).await.map(|s| s.aversion));
    see!(client.get_acl(&at("/mine")).await.map(|(acl, s)| (acl, s.aversion)));
    seen
}

/// Asserts that transcript `one` (by `who`) is the `real` server's, showing the calls that differ.
#[allow(dead_code, reason = "each includer compares with one of its transcripts")]
pub fn assert_same_as_real(who: &str, one: &[String], real: &[String]) {
    let mismatches: Vec<String> = (one.iter().zip(real))
        .filter(|(one, real)| one != real)
        .map(|(one, real)| format!("{who}: {one}\n{:>width$}: {real}", "real", width = who.len()))
        .collect();
    assert_eq!(one.len(), real.len());
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
