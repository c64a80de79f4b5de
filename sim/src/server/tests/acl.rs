//! ACLs, authentication and whoAmI, as a ZooKeeper 3.8 server answered each case.

use super::*;
use zklab_recipes::acl::Perms;

const ALICE: &str = "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=";
const BOB: &str = "bob:ikIaKsbtGweaHnb/jKn7OHqbunM=";

fn perms(letters: &str) -> Perms {
    Perms::parse(letters).expect("zkCli's letters")
}

fn anyone(letters: &str) -> Acls {
    acl(&[("world", "anyone", perms(letters))])
}

/// A node at `path` with `acl`, made by `session`.
fn guarded(server: &mut Server, session: SessionId, path: &str, acl: Acls) {
    created(server, session, create_guarded(path, b"data", acl));
}

fn get_acl(path: &str) -> Op {
    Op::GetAcl {
        path: path.to_owned(),
    }
}

fn acl_of(server: &mut Server, session: SessionId, path: &str) -> Acls {
    match ok(server, session, get_acl(path)) {
        OpResult::Acl { acl, .. } => acl,
        other => panic!("{other:?}"),
    }
}

fn authenticated(server: &mut Server, session: SessionId, users: &[&str]) {
    for user in users {
        ok(server, session, add_auth("digest", user.as_bytes()));
    }
}

#[test]
fn the_built_in_nodes_are_open_but_for_the_config_node_which_anyone_may_only_read() {
    let (mut s, a) = one_session();
    for path in ["/", "/zookeeper", "/zookeeper/quota"] {
        assert_eq!(acl_of(&mut s, a, path), Acls::OPEN, "{path}");
    }
    assert_eq!(acl_of(&mut s, a, path::CONFIG), anyone("r"));
    let OpResult::Acl { stat, .. } = ok(&mut s, a, get_acl(path::CONFIG)) else {
        panic!("an ACL");
    };
    assert_eq!(stat.aversion, -1);
    refused(
        &mut s,
        a,
        vec![
            (set_acl(path::CONFIG, Acls::OPEN, -1), ZkError::NoAuth),
            (set(path::CONFIG, b"x", -1), ZkError::NoAuth),
            (persistent("/zookeeper/config/x"), ZkError::NoAuth),
            (delete(path::CONFIG, -1), ZkError::BadArguments),
            (get_acl("/nonexist"), ZkError::NoNode),
        ],
    );
}

#[test]
fn each_op_asks_its_permission_in_zookeepers_order() {
    let (mut s, a) = one_session();
    // Without CREATE on the parent: NoAuth, ahead of NodeExists and NoChildrenForEphemerals.
    created(&mut s, a, persistent("/p"));
    created(&mut s, a, persistent("/p/c"));
    ok(&mut s, a, set_acl("/p", anyone("rwda"), -1));
    created(&mut s, a, create("/eph", CreateMode::Ephemeral));
    ok(&mut s, a, set_acl("/eph", anyone("rwda"), -1));
    // Without DELETE on the parent: NoAuth, ahead of the node's own NoNode.
    guarded(&mut s, a, "/nod", anyone("crwa"));
    created(&mut s, a, persistent("/nod/c"));
    // Without READ: reads refused but exists and sync; getAcl takes ADMIN instead.
    guarded(&mut s, a, "/nor", anyone("cdwa"));
    // Without WRITE: NoAuth ahead of BadVersion; without ADMIN, the same for setAcl.
    guarded(&mut s, a, "/q", anyone("cdra"));
    guarded(&mut s, a, "/q2", anyone("r"));
    guarded(&mut s, a, "/zero", anyone(""));
    refused(
        &mut s,
        a,
        vec![
            (persistent("/p/c"), ZkError::NoAuth),
            (persistent("/p/new"), ZkError::NoAuth),
            (persistent("/eph/c"), ZkError::NoAuth),
            (delete("/nod/missing", -1), ZkError::NoAuth),
            (delete("/nod/c", -1), ZkError::NoAuth),
            (get_data("/nor", false), ZkError::NoAuth),
            (get_children("/nor", false), ZkError::NoAuth),
            (
                Op::CountDescendants {
                    path: "/nor".to_owned(),
                },
                ZkError::NoAuth,
            ),
            (set("/q", b"x", 5), ZkError::NoAuth),
            (set_acl("/q2", Acls::OPEN, 9), ZkError::NoAuth),
            (get_acl("/zero"), ZkError::NoAuth),
            (get_data("/zero", false), ZkError::NoAuth),
        ],
    );
    assert!(matches!(
        ok(&mut s, a, exists("/nor", false)),
        OpResult::Exists(Some(_))
    ));
    assert_eq!(
        ok(
            &mut s,
            a,
            Op::Sync {
                path: "/nor".to_owned()
            }
        ),
        OpResult::Synced
    );
    assert_eq!(acl_of(&mut s, a, "/nor"), anyone("cdwa"));
    // With the permission, the next error in line.
    ok(&mut s, a, set_acl("/eph", Acls::OPEN, -1));
    assert_eq!(
        err(&mut s, a, persistent("/eph/c")),
        ZkError::NoChildrenForEphemerals
    );
    assert_eq!(err(&mut s, a, set("/nor", b"x", 5)), ZkError::BadVersion);
}

#[test]
fn an_invalid_acl_is_refused_ahead_of_a_missing_node() {
    let (mut s, a) = one_session();
    let foreign = acl(&[("foo", "bar", Perms::READ)]);
    refused(
        &mut s,
        a,
        vec![
            (
                create_guarded("/missing/x", b"", foreign.clone()),
                ZkError::InvalidAcl,
            ),
            (set_acl("/nonexist", foreign, -1), ZkError::InvalidAcl),
            (set_acl("/nonexist", anyone("r"), -1), ZkError::NoNode),
            (
                create_guarded("/z", b"", acl(&[("auth", "", Perms::ALL)])),
                ZkError::InvalidAcl,
            ),
            (set_acl("/", Acls::new(Vec::new()), -1), ZkError::InvalidAcl),
        ],
    );
    // The client refuses a create without an entry: nothing sent, no zxid.
    let before = s.last_zxid();
    assert_eq!(
        err(&mut s, a, create_guarded("/e", b"", Acls::new(Vec::new()))),
        ZkError::InvalidAcl
    );
    assert_eq!(s.last_zxid(), before);
}

#[test]
fn set_acl_is_a_transaction_that_changes_only_the_acl_and_its_version() {
    let (mut s, a) = one_session();
    created(&mut s, a, persistent("/a"));
    created(&mut s, a, persistent("/a/c"));
    let watched = [get_data("/a", true), get_children("/a", true)];
    for read in watched {
        ok(&mut s, a, read);
    }
    let before = s.node("/a").unwrap().1;
    let applied = s.apply(a, &set_acl("/a", anyone("cdrwa"), -1), 0);
    let Ok(OpResult::AclSet(stat)) = applied.reply else {
        panic!("{:?}", applied.reply);
    };
    assert_eq!(applied.zxid, before.pzxid + 1, "a transaction of its own");
    assert!(applied.notifications.is_empty(), "no watch fires");
    assert_eq!(
        stat,
        Stat {
            aversion: 1,
            ..before
        }
    );
    assert_eq!(
        err(&mut s, a, set_acl("/a", Acls::OPEN, 5)),
        ZkError::BadVersion
    );
    let spent = s.last_zxid();
    assert_eq!(
        spent,
        applied.zxid + 1,
        "a failed setAcl is an error transaction"
    );
    ok(&mut s, a, set_acl("/a", anyone("r"), 1));
    assert_eq!(acl_of(&mut s, a, "/a"), anyone("r"));
    assert_eq!(s.node("/a").unwrap().1.aversion, 2);
}

#[test]
fn auth_entries_become_the_sessions_digests_and_a_reader_without_admin_sees_no_hash() {
    let (mut s, a) = one_session();
    authenticated(&mut s, a, &["alice:secret", "alice:secret", "bob:pw"]);
    let both = acl(&[("digest", ALICE, Perms::ALL), ("digest", BOB, Perms::ALL)]);
    guarded(
        &mut s,
        a,
        "/z",
        acl(&[("auth", "alice:secret", Perms::ALL)]),
    );
    assert_eq!(acl_of(&mut s, a, "/z"), both);
    guarded(&mut s, a, "/z2", acl(&[("auth", "", Perms::ALL)]));
    assert_eq!(acl_of(&mut s, a, "/z2"), both);
    guarded(
        &mut s,
        a,
        "/z3",
        acl(&[
            ("auth", "nobody", perms("rw")),
            ("world", "anyone", Perms::READ),
        ]),
    );
    let masked = acl(&[
        ("digest", "alice:x", perms("rw")),
        ("digest", "bob:x", perms("rw")),
        ("world", "anyone", Perms::READ),
    ]);
    assert_eq!(acl_of(&mut s, a, "/z3"), masked);
    // Not deduplicated against explicit entries.
    guarded(
        &mut s,
        a,
        "/dup2",
        acl(&[("auth", "", Perms::ALL), ("digest", ALICE, Perms::ALL)]),
    );
    let thrice = acl(&[
        ("digest", ALICE, Perms::ALL),
        ("digest", BOB, Perms::ALL),
        ("digest", ALICE, Perms::ALL),
    ]);
    assert_eq!(acl_of(&mut s, a, "/dup2"), thrice);
    let repeated = acl(&[
        ("world", "anyone", perms("r")),
        ("world", "anyone", perms("r")),
        ("world", "anyone", perms("rw")),
    ]);
    guarded(&mut s, a, "/dup", repeated);
    assert_eq!(
        acl_of(&mut s, a, "/dup"),
        acl(&[
            ("world", "anyone", perms("r")),
            ("world", "anyone", perms("rw"))
        ])
    );
}

#[test]
fn an_anonymous_session_meets_a_digest_acl() {
    let (mut s, alice) = one_session();
    authenticated(&mut s, alice, &["alice:secret"]);
    guarded(
        &mut s,
        alice,
        "/d",
        acl(&[
            ("digest", ALICE, Perms::ALL),
            ("world", "anyone", Perms::READ),
        ]),
    );
    guarded(&mut s, alice, "/d2", acl(&[("digest", ALICE, Perms::ALL)]));
    guarded(
        &mut s,
        alice,
        "/dr",
        acl(&[
            ("digest", ALICE, Perms::READ),
            ("world", "anyone", Perms::ADMIN),
        ]),
    );
    let anonymous = s.open_session();
    assert_eq!(
        acl_of(&mut s, anonymous, "/d"),
        acl(&[
            ("digest", "alice:x", Perms::ALL),
            ("world", "anyone", Perms::READ)
        ])
    );
    assert_eq!(
        acl_of(&mut s, anonymous, "/dr"),
        acl(&[
            ("digest", ALICE, Perms::READ),
            ("world", "anyone", Perms::ADMIN)
        ]),
        "ADMIN from world shows the hash"
    );
    refused(
        &mut s,
        anonymous,
        vec![
            (get_acl("/d2"), ZkError::NoAuth),
            (get_data("/d2", false), ZkError::NoAuth),
            (get_children("/d2", false), ZkError::NoAuth),
            (set("/d2", b"x", -1), ZkError::NoAuth),
        ],
    );
    assert!(matches!(
        ok(&mut s, anonymous, exists("/d2", false)),
        OpResult::Exists(Some(_))
    ));
    // DELETE is asked of the parent, `/`, which is open.
    ok(&mut s, anonymous, delete("/d2", -1));
    assert!(matches!(
        ok(&mut s, alice, get_data("/d", false)),
        OpResult::Data { .. }
    ));
}

#[test]
fn ip_entries_grant_the_loopback_address_within_their_network() {
    let (mut s, a) = one_session();
    guarded(&mut s, a, "/w", acl(&[("ip", "127.0.0.1", Perms::ALL)]));
    guarded(&mut s, a, "/w2", acl(&[("ip", "10.0.0.0/8", Perms::ALL)]));
    assert!(matches!(
        ok(&mut s, a, get_data("/w", false)),
        OpResult::Data { .. }
    ));
    assert_eq!(err(&mut s, a, get_data("/w2", false)), ZkError::NoAuth);
    assert_eq!(err(&mut s, a, get_acl("/w2")), ZkError::NoAuth);
}

#[test]
fn a_multi_fails_at_the_op_refused_and_a_multi_read_refuses_each_read_alone() {
    let (mut s, a) = one_session();
    guarded(&mut s, a, "/ro", anyone("r"));
    let before = s.last_zxid();
    let multi = Op::Multi(vec![
        persistent("/m1"),
        set("/ro", b"x", -1),
        persistent("/m2"),
    ]);
    let results = vec![
        Ok(OpResult::RolledBack),
        Err(ZkError::NoAuth),
        Err(ZkError::RuntimeInconsistency),
    ];
    assert_eq!(ok(&mut s, a, multi), OpResult::Multi(results));
    assert_eq!(s.last_zxid(), before + 1);
    assert!(s.node("/m1").is_none());
    guarded(&mut s, a, "/hidden", anyone("cdwa"));
    let reads = Op::MultiRead(vec![
        get_children("/", false),
        get_data("/hidden", false),
        get_data("/ro", false),
    ]);
    let OpResult::MultiRead(results) = ok(&mut s, a, reads) else {
        panic!("a multiRead");
    };
    assert!(results[0].is_ok() && results[2].is_ok());
    assert_eq!(results[1], Err(ZkError::NoAuth));
}

#[test]
fn a_session_hears_no_change_to_a_node_it_may_not_read_and_its_watch_is_spent() {
    let (mut s, owner) = one_session();
    let watcher = s.open_session();
    created(&mut s, owner, persistent("/m"));
    created(&mut s, owner, persistent("/m/w"));
    ok(&mut s, watcher, get_data("/m/w", true));
    ok(&mut s, watcher, get_children("/m/w", true));
    ok(&mut s, watcher, get_children("/m", true));
    ok(&mut s, owner, set_acl("/m/w", anyone("cdwa"), -1));
    assert!(notified(&mut s, owner, set("/m/w", b"x", -1)).is_empty());
    assert!(notified(&mut s, owner, persistent("/m/w/k")).is_empty());
    ok(&mut s, owner, delete("/m/w/k", -1));
    // Deleting it: nothing of `/m/w` reaches the watcher, but `/m`'s child watch does.
    assert_eq!(
        notified(&mut s, owner, delete("/m/w", -1)),
        [note(watcher, EventType::NodeChildrenChanged, "/m", "/m/w")]
    );
    // The data watch was spent by the set it did not hear: a new node there is not heard.
    assert!(notified(&mut s, owner, persistent("/m/w")).is_empty());
    ok(
        &mut s,
        watcher,
        add_watch(
            "/m",
            zklab_recipes::client::AddWatchMode::PersistentRecursive,
        ),
    );
    assert!(notified(&mut s, owner, create_guarded("/m/s", b"", anyone("cdwa"))).is_empty());
    assert_eq!(
        notified(&mut s, owner, persistent("/m/s2")),
        [note(watcher, EventType::NodeCreated, "/m/s2", "/m/s2")]
    );
}

#[test]
fn a_change_inside_a_multi_is_heard_under_the_acls_that_stood_when_it_ran() {
    let (mut s, owner) = one_session();
    let watcher = s.open_session();
    created(&mut s, owner, persistent("/m"));
    ok(&mut s, watcher, exists("/m/g", true));
    ok(&mut s, watcher, get_children("/m", true));
    // Made unreadable and deleted in one multi: its creation is not heard, its parent's
    // change is.
    let guarded = create_guarded("/m/g", b"", anyone("cdwa"));
    let multi = Op::Multi(vec![guarded, delete("/m/g", -1)]);
    assert_eq!(
        notified(&mut s, owner, multi),
        [note(watcher, EventType::NodeChildrenChanged, "/m", "/m/g")]
    );
}

#[test]
fn whoami_tells_the_address_then_each_digest_and_a_scheme_without_a_provider_fails() {
    let (mut s, a) = one_session();
    let users = |s: &mut Server| match ok(s, a, Op::WhoAmI) {
        OpResult::Identities(ids) => ids
            .into_iter()
            .map(|id| format!("{}: {}", id.scheme, id.user))
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(users(&mut s), ["ip: 127.0.0.1"]);
    authenticated(&mut s, a, &["alice:secret", "bob:pw", "nocolon"]);
    ok(&mut s, a, add_auth("ip", b"whatever"));
    assert_eq!(
        users(&mut s),
        [
            "digest: alice",
            "digest: bob",
            "digest: nocolon",
            "ip: 127.0.0.1"
        ]
    );
    let before = s.last_zxid();
    assert_eq!(err(&mut s, a, add_auth("foo", b"bar")), ZkError::AuthFailed);
    assert_eq!(s.last_zxid(), before, "authentication is no transaction");
}
