// A walk through zookeeper-client's contract, included twice by tests/zookeeper_client_dropin.rs:
// through the drop-in under the simulator and through the real crate on a real ZooKeeper. It
// writes down what a caller sees of each call (results and errors, not zxids or times, which
// differ from one server to another), so the two transcripts must be equal.

use zookeeper_client::{Acls, Client, CreateMode, Error};

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
    see!(client.check_stat(&at("/e")).await.map(|s| s.map(|s| s.ephemeral_owner == client.session_id().0)));
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
    seen
}
