//! Unit tests of the pure server: ZooKeeper's semantics, checked op by op.

#[test]
fn renaming_sessions_swaps_owners_names_and_watches_everywhere() {
    use zklab_recipes::client::CreateMode;
    use zklab_recipes::session_renaming::{session_guid, RenameSessions, SessionRenaming};
    let mut server = Server::new();
    let (a, b) = (server.open_session(), server.open_session());
    let dir = Op::Create {
        path: "/l".to_owned(),
        data: Vec::new(),
        mode: CreateMode::Persistent,
        acl: Acls::OPEN,
    };
    server.apply(a, &dir, 0);
    let contend = |s: i64| Op::Create {
        path: format!("/l/{}-lock-", session_guid(s)),
        data: Vec::new(),
        mode: CreateMode::EphemeralSequential,
        acl: Acls::OPEN,
    };
    server.apply(a, &contend(a), 0);
    server.apply(b, &contend(b), 0);
    let first = format!("/l/{}-lock-0000000000", session_guid(a));
    server.apply(
        b,
        &Op::Exists {
            path: first.clone(),
            watch: true,
        },
        0,
    );

    let swap = SessionRenaming::new([(a, b), (b, a)]);
    let swapped = server.rename_sessions(&swap);
    let renamed_first = format!("/l/{}-lock-0000000000", session_guid(b));
    assert_eq!(
        swapped
            .node(&renamed_first)
            .map(|(_, stat)| stat.ephemeral_owner),
        Some(b)
    );
    assert_eq!(swapped.ephemerals(b), vec![renamed_first.clone()]);
    assert!(swapped
        .node(&first)
        .is_none_or(|(_, stat)| stat.ephemeral_owner == a));
    // The watch moved with its session: deleting the renamed node notifies the renamed watcher.
    let mut after = swapped.clone();
    let fired = after
        .apply(
            b,
            &Op::Delete {
                path: renamed_first,
                version: -1,
            },
            0,
        )
        .notifications;
    assert_eq!(fired.iter().map(|n| n.session).collect::<Vec<_>>(), vec![a]);
    assert_eq!(
        swapped.rename_sessions(&swap),
        server,
        "a swap undone is the identity"
    );
}

mod acl;

use super::*;
use crate::test_ops::*;
use std::collections::BTreeSet;
use zklab_recipes::client::{CreateMode, EventType, Stat};

/// A new server with one session open.
fn one_session() -> (Server, SessionId) {
    let mut server = Server::new();
    let session = server.open_session();
    (server, session)
}

/// The path a create that must succeed made.
fn created(server: &mut Server, session: SessionId, op: Op) -> String {
    match ok(server, session, op) {
        OpResult::Created { path, .. } => path,
        other => panic!("{other:?}"),
    }
}

/// Applies an op, returning the notifications it fired.
fn notified(server: &mut Server, session: SessionId, op: Op) -> Vec<Notification> {
    server.apply(session, &op, 0).notifications
}

/// Applies an op that must succeed, returning its result.
fn ok(server: &mut Server, session: SessionId, op: Op) -> OpResult {
    server
        .apply(session, &op, 0)
        .reply
        .unwrap_or_else(|e| panic!("{op:?}: {e:?}"))
}

fn err(server: &mut Server, session: SessionId, op: Op) -> ZkError {
    server.apply(session, &op, 0).reply.unwrap_err()
}

/// Applies each op in turn, asserting that it fails with its error.
fn refused(server: &mut Server, session: SessionId, cases: Vec<(Op, ZkError)>) {
    for (op, error) in cases {
        let reply = server.apply(session, &op, 0).reply;
        assert_eq!(reply, Err(error), "{op:?}");
    }
}

#[test]
fn new_server_has_root_and_zookeeper_nodes() {
    let s = Server::new();
    assert_eq!(s.children("/"), Some(vec!["zookeeper".to_owned()]));
    assert_eq!(
        s.children("/zookeeper"),
        Some(vec!["config".to_owned(), "quota".to_owned()])
    );
    let config = Stat {
        aversion: -1,
        ..Stat::default()
    };
    assert_eq!(s.node("/zookeeper/config"), Some((&b""[..], config)));
    assert_eq!(
        s.node("/zookeeper/quota"),
        Some((&b""[..], Stat::default()))
    );
    assert_eq!(
        s.node("/").unwrap().1,
        Stat {
            cversion: -1,
            num_children: 1,
            ..Stat::default()
        }
    );
    assert_eq!(s.last_zxid(), 0);
    assert_eq!(s, Server::default());
}

#[test]
fn every_write_consumes_one_zxid_and_stamps_the_stat() {
    let (mut s, a) = one_session();
    let applied = s.apply(
        a,
        &Op::Create {
            path: "/x".into(),
            data: b"d".to_vec(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        },
        77,
    );
    // The session's creation took zxid 1.
    assert_eq!(applied.zxid, 2);
    let Ok(OpResult::Created { path, stat }) = applied.reply else {
        panic!()
    };
    assert_eq!(path, "/x");
    assert_eq!(
        stat,
        Stat {
            czxid: 2,
            mzxid: 2,
            pzxid: 2,
            ctime: 77,
            mtime: 77,
            data_length: 1,
            ..Stat::default()
        }
    );
    assert_eq!(s.node("/").unwrap().1.pzxid, 2);
    let applied = s.apply(a, &set("/x", b"d", -1), 88);
    assert_eq!(applied.zxid, 3);
    assert_eq!(
        applied.reply,
        Ok(OpResult::SetData(Stat {
            czxid: 2,
            mzxid: 3,
            pzxid: 2,
            ctime: 77,
            mtime: 88,
            version: 1,
            data_length: 1,
            ..Stat::default()
        }))
    );
    assert_eq!(s.apply(a, &delete("/x", 1), 0).zxid, 4);
    assert_eq!(s.node("/").unwrap().1.pzxid, 4);
    assert_eq!(s.apply(a, &Op::Multi(vec![]), 0).zxid, 5);
    assert_eq!(s.last_zxid(), 5);
}

#[test]
fn a_server_without_zxids_answers_the_same_but_for_the_zxids() {
    let ops = [
        Op::Create {
            path: "/x".into(),
            data: b"d".to_vec(),
            mode: CreateMode::EphemeralSequential,
            acl: Acls::OPEN,
        },
        set("/x0000000000", b"e", 0),
        set("/x0000000000", b"f", 0),
        delete("/x0000000000", 1),
    ];
    let (mut stamped, mut blind) = (Server::new(), Server::without_zxids());
    let (a, b) = (stamped.open_session(), blind.open_session());
    assert_eq!(a, b);
    for op in &ops {
        let (x, y) = (stamped.apply(a, op, 5), blind.apply(b, op, 5));
        assert_eq!(y.zxid, 0);
        let forget = |reply: OpReply| match reply {
            Ok(OpResult::Created { path, stat }) => Ok(OpResult::Created {
                path,
                stat: Stat {
                    czxid: 0,
                    mzxid: 0,
                    pzxid: 0,
                    ..stat
                },
            }),
            Ok(OpResult::SetData(stat)) => Ok(OpResult::SetData(Stat {
                czxid: 0,
                mzxid: 0,
                pzxid: 0,
                ..stat
            })),
            other => other,
        };
        assert_eq!(forget(x.reply), y.reply, "{op:?}");
    }
    assert_eq!(blind.last_zxid(), 0);
    assert_eq!(blind.node("/").unwrap().1.pzxid, 0);
}

#[test]
fn failed_write_consumes_a_zxid() {
    let (mut s, a) = one_session();
    let base = s.last_zxid();
    let cases = [
        persistent("/missing/x"),
        delete("/nope", -1),
        set("/nope", b"", -1),
    ];
    for (i, op) in cases.into_iter().enumerate() {
        let applied = s.apply(a, &op, 0);
        assert!(applied.reply.is_err(), "{op:?}");
        assert_eq!(applied.zxid, base + i as Zxid + 1);
    }
    // A failed multi too, and one with a forbidden op.
    let applied = s.apply(a, &Op::Multi(vec![delete("/nope", -1)]), 0);
    assert!(matches!(applied.reply, Ok(OpResult::Multi(_))));
    assert_eq!(applied.zxid, base + 4);
    let forbidden = Op::Multi(vec![exists("/", false)]);
    assert_eq!(s.apply(a, &forbidden, 0).zxid, base + 5);
    // A malformed path never reaches the server: the client refuses it.
    let applied = s.apply(a, &persistent("bad"), 0);
    assert_eq!(applied.reply, Err(ZkError::BadArguments));
    assert_eq!(s.last_zxid(), base + 5);
}

#[test]
fn reads_lone_check_and_sync_consume_no_zxid() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/x"));
    let reads = [
        exists("/x", true),
        exists("/nope", false),
        get_data("/x", true),
        get_data("/nope", false),
        get_children("/x", true),
        check("/x", 0),
        check("/x", 5),
        check("/nope", -1),
        Op::Sync { path: "/x".into() },
        Op::Sync { path: "bad".into() },
    ];
    let base = s.last_zxid();
    for op in reads {
        assert_eq!(s.apply(a, &op, 0).zxid, base, "{op:?}");
    }
    assert_eq!(s.last_zxid(), base);
}

#[test]
fn dead_session_gets_session_expired_and_changes_nothing() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    ok(&mut s, a, exists("/x", true));
    s.expire_session(b, 0).unwrap();
    let before = s.clone();
    for session in [b, 0, 99, -5] {
        for op in [
            persistent("/x"),
            exists("/x", true),
            get_data("/", true),
            Op::Multi(vec![persistent("/x")]),
        ] {
            let applied = s.apply(session, &op, 0);
            assert_eq!(applied.reply, Err(ZkError::SessionExpired));
            assert_eq!(applied.zxid, before.last_zxid());
            assert!(applied.notifications.is_empty());
        }
    }
    assert_eq!(s, before);
    assert!(!s.session_alive(b) && s.session_alive(a));
}

#[test]
fn create_error_precedence_bad_path_no_node_node_exists_no_children_for_ephemerals() {
    let (mut s, a) = one_session();
    ok(&mut s, a, create("/e", CreateMode::Ephemeral));
    let no_children = ZkError::NoChildrenForEphemerals;
    refused(
        &mut s,
        a,
        vec![
            // A bad path wins over a missing parent.
            (persistent("/missing/./x"), ZkError::BadArguments),
            (persistent("/missing/x/"), ZkError::BadArguments),
            (persistent("/missing/x"), ZkError::NoNode),
            // A missing parent wins over the (ephemeral) rest.
            (persistent("/e/x/y"), ZkError::NoNode),
            (persistent("/e"), ZkError::NodeExists),
            (persistent("/"), ZkError::NodeExists),
            (persistent("/e/x"), no_children),
            (create("/e/x", CreateMode::EphemeralSequential), no_children),
        ],
    );
    // Nothing of that touched /e's counter.
    assert_eq!(s.node("/e").unwrap().1.cversion, 0);
}

#[test]
fn sequential_create_appends_parent_counter_to_valid_prefix() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/q"));
    for (prefix, mode, path) in [
        ("/q/", CreateMode::PersistentSequential, "/q/0000000000"),
        ("/q/n-", CreateMode::EphemeralSequential, "/q/n-0000000001"),
        ("/", CreateMode::PersistentSequential, "/0000000001"),
    ] {
        assert_eq!(created(&mut s, a, create(prefix, mode)), path);
    }
    assert_eq!(
        err(&mut s, a, create("/q/", CreateMode::Persistent)),
        ZkError::BadArguments
    );
}

#[test]
fn counter_wrap_gives_negative_sequence_names() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/q"));
    s.tree.set_counter("/q", -1);
    let made = created(&mut s, a, create("/q/n", CreateMode::PersistentSequential));
    assert_eq!(made, "/q/n-000000001");
}

#[test]
fn delete_error_precedence_no_node_before_bad_version_before_not_empty() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/a"));
    ok(&mut s, a, persistent("/a/b"));
    refused(
        &mut s,
        a,
        vec![
            (delete("/a/", 7), ZkError::BadArguments),
            (delete("/x", 7), ZkError::NoNode),
            (delete("/a", 7), ZkError::BadVersion),
            (delete("/a", 0), ZkError::NotEmpty),
        ],
    );
    assert_eq!(ok(&mut s, a, delete("/a/b", 0)), OpResult::Deleted);
    assert_eq!(ok(&mut s, a, delete("/a", -1)), OpResult::Deleted);
    assert_eq!(s.children("/"), Some(vec!["zookeeper".to_owned()]));
}

#[test]
fn set_data_error_precedence_no_node_before_bad_version() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/a"));
    refused(
        &mut s,
        a,
        vec![
            (set("/a/../a", b"", 9), ZkError::BadArguments),
            (set("/x", b"", 9), ZkError::NoNode),
            (set("/a", b"", 9), ZkError::BadVersion),
        ],
    );
    assert!(matches!(
        ok(&mut s, a, set("/a", b"", 0)),
        OpResult::SetData(Stat { version: 1, .. })
    ));
}

#[test]
fn special_nodes_cannot_be_deleted_and_config_is_read_only() {
    let (mut s, a) = one_session();
    let special = ["/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"];
    let undeletable = special.map(|p| (delete(p, -1), ZkError::BadArguments));
    refused(&mut s, a, undeletable.to_vec());
    // The rest of /zookeeper is an ordinary tree.
    assert!(matches!(
        ok(&mut s, a, persistent("/zookeeper/x")),
        OpResult::Created { .. }
    ));
    assert_eq!(ok(&mut s, a, delete("/zookeeper/x", -1)), OpResult::Deleted);
    assert_eq!(
        err(&mut s, a, delete("/zookeeper/nope", -1)),
        ZkError::NoNode
    );
    assert!(matches!(
        ok(
            &mut s,
            a,
            create("/zookeeper/quota/", CreateMode::PersistentSequential)
        ),
        OpResult::Created { .. }
    ));
    refused(
        &mut s,
        a,
        vec![
            // The config node's ACL is read-only for everyone.
            (persistent("/zookeeper/config/x"), ZkError::NoAuth),
            (delete("/zookeeper/config/x", -1), ZkError::NoAuth),
            (set("/zookeeper/config", b"", 7), ZkError::NoAuth),
            (persistent("/zookeeper/config/x/y"), ZkError::NoNode),
            (persistent("/zookeeper"), ZkError::NodeExists),
        ],
    );
    assert!(matches!(
        ok(&mut s, a, persistent("/zookeeperx")),
        OpResult::Created { .. }
    ));
    assert_eq!(
        s.children("/zookeeper"),
        Some(vec!["config".to_owned(), "quota".to_owned()])
    );
}

#[test]
fn exists_on_missing_node_sets_watch() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    assert_eq!(ok(&mut s, a, exists("/x", true)), OpResult::Exists(None));
    assert_eq!(
        notified(&mut s, b, persistent("/x")),
        [note(a, EventType::NodeCreated, "/x", "/x")]
    );
    // One-time: a second change does not fire it again.
    assert!(notified(&mut s, b, set("/x", b"", -1)).is_empty());
}

#[test]
fn exists_on_existing_node_returns_stat_and_sets_data_watch() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/x"));
    let stat = s.node("/x").unwrap().1;
    assert_eq!(
        ok(&mut s, a, exists("/x", true)),
        OpResult::Exists(Some(stat))
    );
    assert_eq!(
        notified(&mut s, a, set("/x", b"v", -1)),
        [note(a, EventType::NodeDataChanged, "/x", "/x")]
    );
}

#[test]
fn get_data_on_missing_node_sets_no_watch() {
    let (mut s, a) = one_session();
    assert_eq!(err(&mut s, a, get_data("/x", true)), ZkError::NoNode);
    assert!(s.watches.is_empty());
    assert!(notified(&mut s, a, persistent("/x")).is_empty());
}

#[test]
fn get_children_on_missing_node_sets_no_watch() {
    let (mut s, a) = one_session();
    assert_eq!(err(&mut s, a, get_children("/x", true)), ZkError::NoNode);
    assert!(s.watches.is_empty());
    ok(&mut s, a, persistent("/x"));
    assert!(notified(&mut s, a, persistent("/x/c")).is_empty());
}

#[test]
fn reads_with_bad_path_are_bad_arguments() {
    let (mut s, a) = one_session();
    for op in [
        exists("", true),
        get_data("/a/", true),
        get_children("x", true),
        check("//", -1),
    ] {
        assert_eq!(err(&mut s, a, op), ZkError::BadArguments);
    }
    assert!(s.watches.is_empty());
}

#[test]
fn get_data_returns_data_and_stat_and_sets_watch() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    s.apply(
        a,
        &Op::Create {
            path: "/x".into(),
            data: b"hello".to_vec(),
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        },
        5,
    );
    let stat = s.node("/x").unwrap().1;
    assert_eq!(
        ok(&mut s, b, get_data("/x", true)),
        OpResult::Data {
            data: b"hello".to_vec(),
            stat
        }
    );
    assert_eq!(
        notified(&mut s, a, delete("/x", -1)),
        [note(b, EventType::NodeDeleted, "/x", "/x")]
    );
}

#[test]
fn get_children_returns_children_sorted_by_name() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/p"));
    for c in ["/p/b", "/p/a-0000000009", "/p/C", "/p/a-0000000010", "/p/a"] {
        ok(&mut s, a, persistent(c));
    }
    let OpResult::Children { children, stat } = ok(&mut s, a, get_children("/p", false)) else {
        panic!()
    };
    assert_eq!(children, ["C", "a", "a-0000000009", "a-0000000010", "b"]);
    assert_eq!((stat.num_children, stat.cversion), (5, 5));
}

#[test]
fn child_watch_fires_children_changed_with_child_as_cause() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/p"));
    ok(&mut s, a, get_children("/p", true));
    assert_eq!(
        notified(&mut s, a, create("/p/n-", CreateMode::EphemeralSequential)),
        [note(
            a,
            EventType::NodeChildrenChanged,
            "/p",
            "/p/n-0000000000"
        )]
    );
    ok(&mut s, a, get_children("/p", true));
    assert_eq!(
        notified(&mut s, a, delete("/p/n-0000000000", -1)),
        [note(
            a,
            EventType::NodeChildrenChanged,
            "/p",
            "/p/n-0000000000"
        )]
    );
}

#[test]
fn delete_fires_node_deleted_once_per_session_then_parent_children_changed() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    ok(&mut s, a, persistent("/p"));
    ok(&mut s, a, persistent("/p/c"));
    ok(&mut s, a, exists("/p/c", true));
    ok(&mut s, a, get_children("/p/c", true));
    ok(&mut s, b, get_children("/p/c", true));
    ok(&mut s, b, get_children("/p", true));
    assert_eq!(
        notified(&mut s, a, delete("/p/c", -1)),
        [
            note(a, EventType::NodeDeleted, "/p/c", "/p/c"),
            note(b, EventType::NodeDeleted, "/p/c", "/p/c"),
            note(b, EventType::NodeChildrenChanged, "/p", "/p/c"),
        ]
    );
    assert!(s.watches.is_empty());
}

#[test]
fn set_data_fires_data_watches_only() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/p"));
    ok(&mut s, a, get_children("/p", true));
    ok(&mut s, a, get_children("/", true));
    ok(&mut s, a, get_data("/p", true));
    assert_eq!(
        notified(&mut s, a, set("/p", b"x", -1)),
        [note(a, EventType::NodeDataChanged, "/p", "/p")]
    );
    assert!(s.watches.has_child("/p", a) && s.watches.has_child("/", a));
}

#[test]
fn lone_check_reports_checked_no_node_or_bad_version() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/x"));
    assert_eq!(ok(&mut s, a, check("/x", 0)), OpResult::Checked);
    assert_eq!(ok(&mut s, a, check("/x", -1)), OpResult::Checked);
    assert_eq!(err(&mut s, a, check("/x", 1)), ZkError::BadVersion);
    assert_eq!(err(&mut s, a, check("/y", 1)), ZkError::NoNode);
}

#[test]
fn sync_ignores_missing_node_but_rejects_bad_path() {
    let (mut s, a) = one_session();
    assert_eq!(
        ok(
            &mut s,
            a,
            Op::Sync {
                path: "/nope/deeper".into()
            }
        ),
        OpResult::Synced
    );
    assert_eq!(
        err(
            &mut s,
            a,
            Op::Sync {
                path: "nope".into()
            }
        ),
        ZkError::BadArguments
    );
}

#[test]
fn ephemeral_create_records_owner_and_delete_forgets_it() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    let OpResult::Created { stat, .. } = ok(&mut s, b, create("/e2", CreateMode::Ephemeral)) else {
        panic!()
    };
    assert_eq!(stat.ephemeral_owner, b);
    ok(&mut s, b, create("/e1", CreateMode::EphemeralSequential));
    ok(&mut s, b, persistent("/p"));
    assert_eq!(s.node("/p").unwrap().1.ephemeral_owner, 0);
    assert_eq!(s.ephemerals(b), ["/e10000000001", "/e2"]);
    assert!(s.ephemerals(a).is_empty());
    // Another session may delete it; the owner's table follows.
    ok(&mut s, a, delete("/e2", -1));
    assert_eq!(s.ephemerals(b), ["/e10000000001"]);
}

#[test]
fn a_hashed_deletion_order_deletes_every_ephemeral_in_an_order_its_key_decides() {
    let paths: Vec<String> = (0..8).map(|i| format!("/e{i}")).collect();
    let end_with = |order| {
        let mut s = Server::new();
        let a = s.open_session();
        for path in &paths {
            ok(&mut s, a, create(path, CreateMode::Ephemeral));
        }
        s.end_session(a, 0, false, order).unwrap().deleted
    };
    assert_eq!(end_with(DeletionOrder::ByPath), paths);
    let orders: BTreeSet<Vec<String>> = (0..4)
        .map(|key| end_with(DeletionOrder::Hashed(key)))
        .collect();
    assert!(orders.len() > 1, "the key decides the order");
    for order in &orders {
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, paths, "every ephemeral goes once");
    }
    assert_eq!(
        end_with(DeletionOrder::Hashed(3)),
        end_with(DeletionOrder::Hashed(3))
    );
}

#[test]
fn session_end_deletes_ephemerals_and_fires_other_sessions_watches() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    ok(&mut s, a, persistent("/p"));
    ok(&mut s, b, create("/p/z", CreateMode::Ephemeral));
    ok(&mut s, b, create("/p/m", CreateMode::Ephemeral));
    ok(&mut s, b, create("/p/keep", CreateMode::Persistent));
    ok(&mut s, a, exists("/p/z", true));
    ok(&mut s, a, get_children("/p", true));
    // b's own watches never fire, and are gone afterwards.
    ok(&mut s, b, exists("/p/m", true));
    ok(&mut s, b, exists("/other", true));
    let zxid_before = s.last_zxid();
    let ended = s.expire_session(b, 0).unwrap();
    assert_eq!(ended.zxid, zxid_before + 1);
    assert_eq!(ended.deleted, ["/p/m", "/p/z"]);
    assert_eq!(
        ended.notifications,
        [
            note(a, EventType::NodeChildrenChanged, "/p", "/p/m"),
            note(a, EventType::NodeDeleted, "/p/z", "/p/z"),
        ]
    );
    assert_eq!(s.last_zxid(), zxid_before + 1);
    assert_eq!(s.children("/p"), Some(vec!["keep".to_owned()]));
    assert_eq!(s.node("/p").unwrap().1.pzxid, ended.zxid);
    assert!(s.watches.is_empty());
    assert!(s.ephemerals(b).is_empty());
    assert!(!s.session_alive(b));
    assert!(notified(&mut s, a, persistent("/other")).is_empty());
}

#[test]
fn ending_a_dead_session_returns_none_and_consumes_no_zxid() {
    let (mut s, a) = one_session();
    assert_eq!(s.expire_session(a, 0).map(|e| e.zxid), Some(2));
    assert_eq!(s.expire_session(a, 0), None);
    assert_eq!(s.expire_session(42, 0), None);
    assert_eq!(s.last_zxid(), 2);
    assert_eq!(s.open_session(), 2);
}

#[test]
fn multi_success_commits_every_op_and_notifies_in_order() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    ok(&mut s, a, persistent("/x"));
    ok(&mut s, b, exists("/n", true));
    ok(&mut s, b, get_data("/x", true));
    ok(&mut s, b, get_children("/", true));
    let multi = Op::Multi(vec![
        create("/n", CreateMode::Ephemeral),
        set("/n", b"v", 0),
        check("/n", 1),
        delete("/x", 0),
    ]);
    let applied = s.apply(a, &multi, 9);
    assert_eq!(applied.zxid, 4);
    let stat_n = Stat {
        czxid: 4,
        mzxid: 4,
        pzxid: 4,
        ctime: 9,
        mtime: 9,
        ephemeral_owner: a,
        ..Stat::default()
    };
    assert_eq!(
        applied.reply,
        Ok(OpResult::Multi(vec![
            // ZooKeeper answers a create inside a multi without its stat.
            Ok(OpResult::Created {
                path: "/n".into(),
                stat: Stat::UNKNOWN
            }),
            Ok(OpResult::SetData(Stat {
                version: 1,
                data_length: 1,
                ..stat_n
            })),
            Ok(OpResult::Checked),
            Ok(OpResult::Deleted),
        ]))
    );
    assert_eq!(
        applied.notifications,
        [
            note(b, EventType::NodeCreated, "/n", "/n"),
            note(b, EventType::NodeChildrenChanged, "/", "/n"),
            note(b, EventType::NodeDeleted, "/x", "/x"),
        ]
    );
    assert_eq!(s.ephemerals(a), ["/n"]);
    assert_eq!(s.node("/n").unwrap().0, b"v");
    assert_eq!(s.node("/x"), None);
}

#[test]
fn multi_failure_reports_ok_code_runtime_inconsistency_and_rolls_back() {
    let (mut s, a) = one_session();
    let b = s.open_session();
    ok(&mut s, a, persistent("/x"));
    ok(&mut s, a, persistent("/q"));
    ok(&mut s, b, exists("/x", true));
    ok(&mut s, b, get_children("/q", true));
    let before = s.clone();
    let multi = Op::Multi(vec![
        create("/q/n-", CreateMode::EphemeralSequential),
        set("/x", b"new", -1),
        delete("/x", -1),
        check("/x", -1),
        persistent("/y"),
    ]);
    let applied = s.apply(a, &multi, 0);
    assert_eq!(
        applied.reply,
        Ok(OpResult::Multi(vec![
            Ok(OpResult::RolledBack),
            Ok(OpResult::RolledBack),
            Ok(OpResult::RolledBack),
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ]))
    );
    assert!(applied.notifications.is_empty());
    assert_eq!(applied.zxid, before.last_zxid() + 1);
    // Tree, watches and sessions are exactly as before; only the zxid moved.
    assert_eq!(s.tree, before.tree);
    assert_eq!(s.watches, before.watches);
    assert_eq!(s.sessions, before.sessions);
    // The rolled-back sequential create did not consume a sequence number.
    let made = created(&mut s, a, create("/q/n-", CreateMode::PersistentSequential));
    assert_eq!(made, "/q/n-0000000000");
}

#[test]
fn multi_first_op_failing_is_per_op_errors_and_a_bad_path_refuses_it_whole() {
    let (mut s, a) = one_session();
    let failing = Op::Multi(vec![persistent("/missing/x"), persistent("/ok")]);
    assert_eq!(
        s.apply(a, &failing, 0).reply,
        Ok(OpResult::Multi(vec![
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency)
        ]))
    );
    assert_eq!(s.node("/ok"), None);
    let before = s.last_zxid();
    let malformed = Op::Multi(vec![persistent("/ok"), persistent("bad")]);
    assert_eq!(s.apply(a, &malformed, 0).reply, Err(ZkError::BadArguments));
    assert_eq!(s.node("/ok"), None);
    assert_eq!(s.last_zxid(), before);
}

#[test]
fn multi_with_a_read_or_nested_multi_is_bad_arguments_and_consumes_a_zxid() {
    let (mut s, a) = one_session();
    let before = s.clone();
    let base = s.last_zxid();
    let bad = [
        exists("/", false),
        get_data("/", false),
        get_children("/", true),
        Op::Sync { path: "/".into() },
        Op::Multi(vec![]),
    ];
    for (i, op) in bad.into_iter().enumerate() {
        let applied = s.apply(a, &Op::Multi(vec![persistent("/x"), op]), 0);
        assert_eq!(applied.reply, Err(ZkError::BadArguments));
        assert_eq!(applied.zxid, base + i as Zxid + 1);
    }
    assert_eq!(s.tree, before.tree);
    assert!(s.watches.is_empty());
}

#[test]
fn empty_multi_succeeds_with_empty_list() {
    let (mut s, a) = one_session();
    let applied = s.apply(a, &Op::Multi(vec![]), 0);
    assert_eq!(applied.reply, Ok(OpResult::Multi(vec![])));
    assert_eq!(applied.zxid, 2);
    assert!(applied.notifications.is_empty());
}

#[test]
fn watch_fires_once_within_a_multi() {
    let (mut s, a) = one_session();
    ok(&mut s, a, exists("/n", true));
    let multi = Op::Multi(vec![persistent("/n"), delete("/n", -1)]);
    assert_eq!(
        notified(&mut s, a, multi),
        [note(a, EventType::NodeCreated, "/n", "/n")]
    );
}

#[test]
fn watches_taken_off_a_server_say_data_exists_or_child_and_leave_none_behind() {
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/x"));
    ok(&mut s, a, exists("/x", true));
    ok(&mut s, a, exists("/gone", true));
    ok(&mut s, a, get_children("/x", true));
    let watches = s.take_watches(a);
    assert_eq!(watches.data, vec!["/x"]);
    assert_eq!(watches.exist, vec!["/gone"]);
    assert_eq!(watches.child, vec!["/x"]);
    assert!(s.watches.is_empty());
    assert!(s.take_watches(a).is_empty());
}

#[test]
fn reregistered_watches_fire_for_what_changed_since_the_zxid_seen_and_stay_otherwise() {
    let (mut s, a) = one_session();
    for path in ["/same", "/set", "/deleted", "/kids", "/kids-same"] {
        ok(&mut s, a, persistent(path));
    }
    let seen = s.last_zxid();
    ok(&mut s, a, set("/set", b"v", -1));
    ok(&mut s, a, delete("/deleted", -1));
    ok(&mut s, a, persistent("/kids/k"));
    ok(&mut s, a, persistent("/created"));
    let watches = SessionWatches {
        data: vec!["/same".into(), "/set".into(), "/deleted".into()],
        exist: vec!["/created".into(), "/absent".into()],
        child: vec!["/kids".into(), "/kids-same".into(), "/deleted".into()],
        ..SessionWatches::default()
    };
    let fired = s.set_watches(a, seen, &watches);
    assert_eq!(
        fired,
        vec![
            note(a, EventType::NodeDataChanged, "/set", "/set"),
            note(a, EventType::NodeDeleted, "/deleted", "/deleted"),
            note(a, EventType::NodeCreated, "/created", "/created"),
            note(a, EventType::NodeChildrenChanged, "/kids", "/kids"),
            note(a, EventType::NodeDeleted, "/deleted", "/deleted"),
        ]
    );
    for path in ["/same", "/absent"] {
        assert!(s.watches.has_data(path, a), "{path}");
    }
    assert!(s.watches.has_child("/kids-same", a));
    assert!(!s.watches.has_data("/set", a));
}

#[test]
fn a_recursive_watch_hears_every_node_under_it_change_and_no_change_of_children() {
    use zklab_recipes::client::AddWatchMode::PersistentRecursive;
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/m"));
    assert_eq!(
        ok(&mut s, a, add_watch("/m", PersistentRecursive)),
        OpResult::WatchAdded
    );
    assert_eq!(
        notified(&mut s, a, persistent("/m/box")),
        [note(a, EventType::NodeCreated, "/m/box", "/m/box")]
    );
    assert_eq!(
        notified(&mut s, a, persistent("/m/box/two")),
        [note(a, EventType::NodeCreated, "/m/box/two", "/m/box/two")]
    );
    assert_eq!(
        notified(&mut s, a, set("/m/box/two", b"v", -1)),
        [note(
            a,
            EventType::NodeDataChanged,
            "/m/box/two",
            "/m/box/two"
        )]
    );
    // One NodeDeleted, though the watch stands in the data and the child table.
    assert_eq!(
        notified(&mut s, a, delete("/m/box/two", -1)),
        [note(a, EventType::NodeDeleted, "/m/box/two", "/m/box/two")]
    );
    assert!(notified(&mut s, a, persistent("/other")).is_empty());
    assert_eq!(
        notified(&mut s, a, set("/m", b"v", -1)),
        [note(a, EventType::NodeDataChanged, "/m", "/m")]
    );
}

#[test]
fn a_persistent_watch_hears_its_node_and_its_children_change_and_is_never_spent() {
    use zklab_recipes::client::AddWatchMode::Persistent;
    let mut s = Server::new();
    let (a, b) = (s.open_session(), s.open_session());
    ok(&mut s, a, add_watch("/m/box", Persistent));
    ok(&mut s, b, persistent("/m"));
    for _ in 0..2 {
        assert_eq!(
            notified(&mut s, b, persistent("/m/box")),
            [note(a, EventType::NodeCreated, "/m/box", "/m/box")]
        );
        assert_eq!(
            notified(&mut s, b, persistent("/m/box/c")),
            [note(
                a,
                EventType::NodeChildrenChanged,
                "/m/box",
                "/m/box/c"
            )]
        );
        assert!(notified(&mut s, b, persistent("/m/box/c/grandchild")).is_empty());
        ok(&mut s, b, delete("/m/box/c/grandchild", -1));
        assert_eq!(
            notified(&mut s, b, set("/m/box", b"v", -1)),
            [note(a, EventType::NodeDataChanged, "/m/box", "/m/box")]
        );
        notified(&mut s, b, delete("/m/box/c", -1));
        assert_eq!(
            notified(&mut s, b, delete("/m/box", -1)),
            [note(a, EventType::NodeDeleted, "/m/box", "/m/box")]
        );
    }
}

#[test]
fn a_one_time_watch_set_where_a_persistent_one_stands_makes_that_table_one_time() {
    // ZooKeeper 3.8 keeps one mode per session, path and table: the last one set.
    use zklab_recipes::client::AddWatchMode::Persistent;
    let (mut s, a) = one_session();
    ok(&mut s, a, persistent("/x"));
    ok(&mut s, a, add_watch("/x", Persistent));
    ok(&mut s, a, get_data("/x", true));
    assert_eq!(notified(&mut s, a, set("/x", b"1", -1)).len(), 1);
    assert!(notified(&mut s, a, set("/x", b"2", -1)).is_empty());
    // The child table's watch is still persistent.
    for child in ["/x/c", "/x/d"] {
        let fired = notified(&mut s, a, persistent(child));
        assert_eq!(
            fired,
            [note(a, EventType::NodeChildrenChanged, "/x", child)]
        );
    }
}

#[test]
fn removing_watches_takes_the_kind_asked_for_and_says_no_watcher_when_none() {
    use zklab_recipes::client::AddWatchMode::Persistent;
    use zklab_recipes::client::WatcherKind::{Any, Children, Data};
    let mut s = Server::new();
    let (a, b) = (s.open_session(), s.open_session());
    ok(&mut s, a, persistent("/x"));
    ok(&mut s, a, get_data("/x", true));
    ok(&mut s, a, get_children("/x", true));
    assert_eq!(
        ok(&mut s, a, remove_watches("/x", Data)),
        OpResult::WatchesRemoved
    );
    assert_eq!(
        err(&mut s, a, remove_watches("/x", Data)),
        ZkError::NoWatcher
    );
    assert!(s.watches.has_child("/x", a));
    // checkWatches answers for any session's watch on the path (3.8's containsWatcher).
    assert_eq!(
        ok(&mut s, b, check_watches("/x", Children)),
        OpResult::WatchesHeld
    );
    assert_eq!(
        err(&mut s, b, check_watches("/x", Data)),
        ZkError::NoWatcher
    );
    assert_eq!(
        err(&mut s, b, remove_watches("/x", Any)),
        ZkError::NoWatcher
    );
    ok(&mut s, a, remove_watches("/x", Any));
    assert!(s.watches.is_empty());
    // A persistent watch stands in both tables: removing the data side leaves the child side.
    ok(&mut s, a, add_watch("/x", Persistent));
    ok(&mut s, a, remove_watches("/x", Data));
    assert_eq!(
        ok(&mut s, a, check_watches("/x", Any)),
        OpResult::WatchesHeld
    );
    assert!(notified(&mut s, a, set("/x", b"v", -1)).is_empty());
    assert_eq!(notified(&mut s, a, persistent("/x/c")).len(), 1);
    assert_eq!(
        err(&mut s, a, remove_watches("bad", Any)),
        ZkError::BadArguments
    );
}

#[test]
fn persistent_watches_come_back_on_reconnection_without_firing_for_what_they_missed() {
    use zklab_recipes::client::AddWatchMode::{Persistent, PersistentRecursive};
    let mut s = Server::new();
    let (a, b) = (s.open_session(), s.open_session());
    ok(&mut s, a, add_watch("/p", Persistent));
    ok(&mut s, a, add_watch("/r", PersistentRecursive));
    let watches = s.take_watches(a);
    assert_eq!(
        (watches.persistent.clone(), watches.recursive.clone()),
        (vec!["/p".to_owned()], vec!["/r".to_owned()])
    );
    let seen = s.last_zxid();
    ok(&mut s, b, persistent("/p"));
    ok(&mut s, b, persistent("/r"));
    assert!(s.set_watches(a, seen, &watches).is_empty());
    assert_eq!(
        notified(&mut s, b, persistent("/r/c")),
        [note(a, EventType::NodeCreated, "/r/c", "/r/c")]
    );
    assert_eq!(
        notified(&mut s, b, set("/p", b"v", -1)),
        [note(a, EventType::NodeDataChanged, "/p", "/p")]
    );
}

#[test]
fn an_exists_watch_misses_a_node_created_and_deleted_while_its_client_was_away() {
    let mut s = Server::new();
    let (a, b) = (s.open_session(), s.open_session());
    ok(&mut s, a, exists("/x", true));
    let watches = s.take_watches(a);
    let seen = s.last_zxid();
    ok(&mut s, b, persistent("/x"));
    ok(&mut s, b, delete("/x", -1));
    assert!(s.set_watches(a, seen, &watches).is_empty());
    assert!(s.watches.has_data("/x", a), "still waiting for a creation");
}

#[test]
fn a_follower_serves_a_read_of_a_session_it_has_not_heard_of() {
    let mut s = Server::new();
    let applied = s.serve_read(7, &Identity::default(), &exists("/zookeeper", true));
    assert!(matches!(applied.reply, Ok(OpResult::Exists(Some(_)))));
    assert!(s.watches.has_data("/zookeeper", 7));
    assert_eq!(
        s.serve_read(7, &Identity::default(), &persistent("/x"))
            .reply,
        Err(ZkError::BadArguments)
    );
    assert_eq!(
        s.serve_read(7, &Identity::default(), &exists("bad", false))
            .reply,
        Err(ZkError::BadArguments)
    );
}

#[test]
fn server_state_is_comparable_and_hashable() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |s: &Server| {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    };
    let mut x = Server::new();
    let mut y = Server::new();
    let (a, b) = (x.open_session(), y.open_session());
    ok(&mut x, a, persistent("/n"));
    ok(&mut y, b, persistent("/n"));
    assert_eq!(x, y);
    assert_eq!(hash(&x), hash(&y));
    ok(&mut y, b, exists("/w", true));
    assert_ne!(x, y);
}

#[test]
fn garbage_inputs_never_panic() {
    let (mut s, a) = one_session();
    let long = "/x".repeat(50_000);
    let paths: Vec<String> = [
        "",
        "/",
        "//",
        ".",
        "/.",
        "/..",
        "\0",
        "/\0",
        "/\u{10FFFF}",
        "/é",
        "/zookeeper",
        "/zookeeper/",
        "/zookeeper/quota",
        "/a",
        "/a/",
        "/a/b",
        "/a/b/c",
        "-",
        "/-2147483648",
    ]
    .iter()
    .map(|p| (*p).to_owned())
    .chain([long.clone(), format!("{long}/"), "/a".repeat(2_000)])
    .collect();
    let modes = [
        CreateMode::Persistent,
        CreateMode::PersistentSequential,
        CreateMode::Ephemeral,
        CreateMode::EphemeralSequential,
    ];
    let versions = [-1, 0, 1, i32::MAX, i32::MIN];
    s.tree.set_counter("/", i32::MAX - 3);
    for (i, p) in paths.iter().enumerate() {
        let v = versions[i % versions.len()];
        let mode = modes[i % modes.len()];
        let ops = vec![
            Op::Create {
                path: p.clone(),
                data: vec![0xff; i],
                mode,
                acl: Acls::OPEN,
            },
            Op::SetData {
                path: p.clone(),
                data: vec![],
                version: v,
            },
            Op::Check {
                path: p.clone(),
                version: v,
            },
            Op::Delete {
                path: p.clone(),
                version: v,
            },
        ];
        for op in ops
            .iter()
            .chain([&exists(p, true), &get_data(p, true), &get_children(p, true)])
        {
            s.apply(a, op, i64::MAX);
            s.apply(-1, op, i64::MIN);
        }
        s.apply(a, &Op::Multi(ops.clone()), 0);
        s.apply(a, &Op::Multi(vec![Op::Multi(ops)]), 0);
        s.apply(a, &Op::Sync { path: p.clone() }, 0);
        let _ = (s.children(p), s.node(p));
    }
    // Creating the long paths level by level works, as deep as asked.
    let mut deep = String::new();
    for _ in 0..1_000 {
        deep.push_str("/d");
        ok(&mut s, a, create(&deep, CreateMode::Persistent));
    }
    s.expire_session(a, 0);
    s.expire_session(a, 0);
    s.expire_session(i64::MIN, 0);
    assert!(s.node(&deep).is_some());
    assert!(s.node("/long").is_none());
}

#[test]
fn a_multi_read_answers_each_read_alone_and_holds_nothing_but_unwatched_reads() {
    let (mut server, s) = one_session();
    ok(&mut server, s, persistent("/a"));
    ok(&mut server, s, persistent("/a/b"));
    let zxid = server.last_zxid();
    let reads = Op::MultiRead(vec![
        get_data("/a", false),
        get_children("/a", false),
        get_data("/gone", false),
    ]);
    let OpResult::MultiRead(results) = ok(&mut server, s, reads) else {
        panic!("a multiRead's results");
    };
    assert!(matches!(&results[0], Ok(OpResult::Data { .. })));
    assert_eq!(results[1], Ok(OpResult::Listed(vec!["b".to_owned()])));
    assert_eq!(results[2], Err(ZkError::NoNode));
    assert_eq!(server.last_zxid(), zxid, "a read takes no zxid");
    refused(
        &mut server,
        s,
        vec![
            (
                Op::MultiRead(vec![get_data("/a", true)]),
                ZkError::BadArguments,
            ),
            (
                Op::MultiRead(vec![exists("/a", false)]),
                ZkError::BadArguments,
            ),
            (Op::MultiRead(vec![persistent("/c")]), ZkError::BadArguments),
        ],
    );
    assert_eq!(server.node("/c"), None);
}

#[test]
fn descendants_are_counted_at_every_depth_and_ephemerals_matched_as_text() {
    let (mut server, s) = one_session();
    let other = server.open_session();
    ok(&mut server, s, persistent("/a"));
    ok(&mut server, s, create("/a/e", CreateMode::Ephemeral));
    ok(&mut server, s, persistent("/a/p"));
    ok(&mut server, s, persistent("/a/p/x"));
    ok(&mut server, other, create("/ab", CreateMode::Ephemeral));
    ok(&mut server, s, create("/abc", CreateMode::Ephemeral));
    let count = |path: &str| Op::CountDescendants {
        path: path.to_owned(),
    };
    assert_eq!(ok(&mut server, s, count("/a")), OpResult::Counted(3));
    assert_eq!(ok(&mut server, s, count("/a/p/x")), OpResult::Counted(0));
    // The root's: every node but the root, the three of /zookeeper among them.
    assert_eq!(ok(&mut server, s, count("/")), OpResult::Counted(9));
    assert_eq!(err(&mut server, s, count("/gone")), ZkError::NoNode);
    let ephemerals = |prefix: &str| Op::GetEphemerals {
        prefix: prefix.to_owned(),
    };
    let paths =
        |paths: &[&str]| OpResult::Ephemerals(paths.iter().map(|p| p.to_string()).collect());
    assert_eq!(
        ok(&mut server, s, ephemerals("/a")),
        paths(&["/a/e", "/abc"])
    );
    assert_eq!(
        ok(&mut server, s, ephemerals("/")),
        paths(&["/a/e", "/abc"])
    );
    assert_eq!(ok(&mut server, s, ephemerals("/nothing")), paths(&[]));
    assert_eq!(ok(&mut server, other, ephemerals("/")), paths(&["/ab"]));
}

#[test]
fn container_and_ttl_nodes_look_persistent_and_take_children() {
    let (mut server, s) = one_session();
    let container = ok(&mut server, s, create("/c", CreateMode::Container));
    let OpResult::Created { stat, .. } = container else {
        panic!("{container:?}")
    };
    // ZooKeeper keeps the kind where it keeps an ephemeral's owner, and reports 0 there.
    assert_eq!(stat.ephemeral_owner, 0);
    let ttl = CreateMode::PersistentSequentialWithTtl { ttl_ms: 5000 };
    let made = created(&mut server, s, create("/t-", ttl));
    assert_eq!(made, "/t-0000000001");
    let owner = server.node(&made).map(|(_, stat)| stat.ephemeral_owner);
    assert_eq!(owner, Some(0));
    // Neither is ephemeral: both take children, and no session owns them.
    ok(
        &mut server,
        s,
        create("/c/child", CreateMode::EphemeralSequential),
    );
    ok(&mut server, s, persistent(&format!("{made}/child")));
    assert!(server
        .ephemerals(s)
        .iter()
        .all(|path| path.starts_with("/c/")));
}

#[test]
fn a_ttl_out_of_range_is_refused_before_anything_else_and_costs_no_zxid() {
    let (mut server, s) = one_session();
    let before = server.last_zxid();
    for ttl_ms in [0, -1, CreateMode::MAX_TTL_MS + 1] {
        let mode = CreateMode::PersistentWithTtl { ttl_ms };
        assert_eq!(
            err(&mut server, s, create("/missing/t", mode)),
            ZkError::BadArguments
        );
    }
    assert_eq!(server.last_zxid(), before);
    let longest = CreateMode::PersistentWithTtl {
        ttl_ms: CreateMode::MAX_TTL_MS,
    };
    ok(&mut server, s, create("/t", longest));
}

#[test]
fn the_reaper_takes_a_container_only_once_it_has_had_a_child_and_has_none() {
    let (mut server, s) = one_session();
    let watcher = server.open_session();
    ok(&mut server, s, create("/c", CreateMode::Container));
    assert!(server.reap("/c", 0).is_none(), "never used: kept");
    assert!(server.reap_candidates(0).is_empty() && server.has_reaped_kinds());
    ok(&mut server, s, persistent("/c/a"));
    assert!(server.reap("/c", 0).is_none(), "a child: kept");
    ok(&mut server, s, delete("/c/a", -1));
    ok(&mut server, watcher, get_data("/c", true));
    assert_eq!(server.reap_candidates(0), vec!["/c".to_owned()]);
    let before = server.last_zxid();
    let reaped = server.reap("/c", 0).expect("emptied: reaped");
    assert_eq!(reaped.reply, Ok(OpResult::Deleted));
    assert_eq!(reaped.zxid, before + 1, "a transaction of its own");
    let fired: Vec<_> = reaped.notifications.iter().map(|n| &n.event).collect();
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].event_type, EventType::NodeDeleted);
    assert!(server.node("/c").is_none());
    assert!(server.reap_candidates(0).is_empty() && !server.has_reaped_kinds());
    // A plain node is never the reaper's.
    ok(&mut server, s, persistent("/p"));
    ok(&mut server, s, persistent("/p/a"));
    ok(&mut server, s, delete("/p/a", -1));
    assert!(server.reap("/p", 0).is_none());
}

#[test]
fn the_reaper_takes_a_ttl_node_without_children_idle_past_its_ttl() {
    let (mut server, s) = one_session();
    let mode = CreateMode::PersistentWithTtl { ttl_ms: 100 };
    server.apply(s, &create("/t", mode), 1_000);
    assert!(
        !server.reapable("/t", 1_100),
        "idle for exactly its TTL: kept"
    );
    assert!(server.reapable("/t", 1_101));
    // A change of its data starts the wait again; a child keeps it.
    server.apply(s, &set("/t", b"x", -1), 1_050);
    assert!(!server.reapable("/t", 1_101));
    server.apply(s, &persistent("/t/a"), 1_060);
    assert!(!server.reapable("/t", 9_999));
    server.apply(s, &delete("/t/a", -1), 1_070);
    assert!(server.reap("/t", 1_151).is_some());
}

#[test]
fn a_container_made_in_a_rolled_back_multi_leaves_the_reaper_nothing() {
    let (mut server, s) = one_session();
    let multi = Op::Multi(vec![
        create("/c", CreateMode::Container),
        persistent("/c/a"),
        delete("/c/a", -1),
        delete("/missing", -1),
    ]);
    ok(&mut server, s, multi);
    assert!(server.node("/c").is_none());
    assert!(server.reap_candidates(0).is_empty() && !server.has_reaped_kinds());
    // Made and emptied in one multi that holds: the reaper may take it at once.
    let multi = Op::Multi(vec![
        create("/c", CreateMode::Container),
        persistent("/c/a"),
        delete("/c/a", -1),
    ]);
    ok(&mut server, s, multi);
    assert_eq!(server.reap_candidates(0), vec!["/c".to_owned()]);
}
