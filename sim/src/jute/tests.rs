//! Every record comes back as it went, and no bytes make a reader panic.

use proptest::collection::vec;
use proptest::prelude::*;
use zklab_recipes::acl::{Acl, Acls, Id, Perms};
use zklab_recipes::client::{
    AddWatchMode, ClientInfo, CreateMode, EventType, Op, OpReply, OpResult, Stat, WatchedEvent,
    WatcherKind, ZkError,
};

use super::archive::{frame_len, Malformed};
use super::handshake::{ConnectRequest, ConnectResponse};
use super::reply::{
    decode_notification, decode_reply, encode_notification, encode_reply, ReplyHeader,
};
use super::request::{Request, RequestHeader, SetWatches};
use crate::packet::{request_len, MAX_REQUEST_LEN};
use crate::watch::SessionWatches;

fn path() -> impl Strategy<Value = String> {
    prop_oneof![Just("/".to_owned()), "(/[a-zé0-9]{1,4}){1,3}"]
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..8)
}

fn acls() -> impl Strategy<Value = Acls> {
    let entry = (0..32i32, "[a-z]{1,6}", "[a-z:0-9.]{0,8}")
        .prop_map(|(perms, scheme, id)| Acl::new(Perms(perms), Id::new(scheme, id)));
    prop_oneof![Just(Acls::OPEN), vec(entry, 0..3).prop_map(Acls::new)]
}

fn mode() -> impl Strategy<Value = CreateMode> {
    prop_oneof![
        Just(CreateMode::Persistent),
        Just(CreateMode::PersistentSequential),
        Just(CreateMode::Ephemeral),
        Just(CreateMode::EphemeralSequential),
        Just(CreateMode::Container),
        any::<i64>().prop_map(|ttl_ms| CreateMode::PersistentWithTtl { ttl_ms }),
        any::<i64>().prop_map(|ttl_ms| CreateMode::PersistentSequentialWithTtl { ttl_ms }),
    ]
}

fn kind() -> impl Strategy<Value = WatcherKind> {
    prop_oneof![
        Just(WatcherKind::Children),
        Just(WatcherKind::Data),
        Just(WatcherKind::Any)
    ]
}

fn create() -> impl Strategy<Value = Op> {
    (path(), data(), mode(), acls()).prop_map(|(path, data, mode, acl)| Op::Create {
        path,
        data,
        mode,
        acl,
    })
}

fn write() -> impl Strategy<Value = Op> {
    prop_oneof![
        create(),
        (path(), any::<i32>()).prop_map(|(path, version)| Op::Delete { path, version }),
        (path(), data(), any::<i32>()).prop_map(|(path, data, version)| Op::SetData {
            path,
            data,
            version
        }),
        (path(), any::<i32>()).prop_map(|(path, version)| Op::Check { path, version }),
    ]
}

fn read_in_multi() -> impl Strategy<Value = Op> {
    let watch = false;
    prop_oneof![
        path().prop_map(move |path| Op::GetData { path, watch }),
        path().prop_map(move |path| Op::GetChildren { path, watch }),
    ]
}

/// Any op a client can send.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        write(),
        (path(), any::<bool>()).prop_map(|(path, watch)| Op::Exists { path, watch }),
        (path(), any::<bool>()).prop_map(|(path, watch)| Op::GetData { path, watch }),
        (path(), any::<bool>()).prop_map(|(path, watch)| Op::GetChildren { path, watch }),
        path().prop_map(|path| Op::Sync { path }),
        vec(write(), 0..4).prop_map(Op::Multi),
        vec(read_in_multi(), 0..4).prop_map(Op::MultiRead),
        path().prop_map(|path| Op::CountDescendants { path }),
        path().prop_map(|prefix| Op::GetEphemerals { prefix }),
        (path(), any::<bool>()).prop_map(|(path, recursive)| Op::AddWatch {
            path,
            mode: match recursive {
                true => AddWatchMode::PersistentRecursive,
                false => AddWatchMode::Persistent,
            }
        }),
        (path(), kind()).prop_map(|(path, kind)| Op::RemoveWatches { path, kind }),
        (path(), kind()).prop_map(|(path, kind)| Op::CheckWatches { path, kind }),
        path().prop_map(|path| Op::GetAcl { path }),
        (path(), acls(), any::<i32>()).prop_map(|(path, acl, version)| Op::SetAcl {
            path,
            acl,
            version
        }),
        ("[a-z]{0,6}", proptest::option::of(data()))
            .prop_map(|(scheme, auth)| Op::AddAuth { scheme, auth }),
        Just(Op::WhoAmI),
    ]
}

fn stat() -> impl Strategy<Value = Stat> {
    (any::<[i64; 6]>(), any::<[i32; 5]>()).prop_map(|(longs, ints)| Stat {
        czxid: longs[0],
        mzxid: longs[1],
        pzxid: longs[2],
        ctime: longs[3],
        mtime: longs[4],
        ephemeral_owner: longs[5],
        version: ints[0],
        cversion: ints[1],
        aversion: ints[2],
        data_length: ints[3],
        num_children: ints[4],
    })
}

fn names() -> impl Strategy<Value = Vec<String>> {
    vec("[a-z0-9]{1,5}", 0..4)
}

fn error() -> impl Strategy<Value = ZkError> {
    // `Closed` is the client's own: on the wire it is a system error.
    proptest::sample::select((-125..0).filter_map(ZkError::from_code).collect::<Vec<_>>())
}

/// A result a server could give `op`, as the client reads it back.
fn result_of(op: &Op) -> BoxedStrategy<OpResult> {
    let created = |stat: BoxedStrategy<Stat>| {
        ("(/[a-z0-9]{1,4}){1,2}", stat)
            .prop_map(|(path, stat)| OpResult::Created { path, stat })
            .boxed()
    };
    match op {
        Op::Create { .. } => created(stat().boxed()),
        Op::Delete { .. } => Just(OpResult::Deleted).boxed(),
        Op::Exists { .. } => proptest::option::of(stat())
            .prop_map(OpResult::Exists)
            .boxed(),
        Op::GetData { .. } => (data(), stat())
            .prop_map(|(data, stat)| OpResult::Data { data, stat })
            .boxed(),
        Op::GetChildren { .. } => (names(), stat())
            .prop_map(|(children, stat)| OpResult::Children { children, stat })
            .boxed(),
        Op::SetData { .. } => stat().prop_map(OpResult::SetData).boxed(),
        Op::Check { .. } => Just(OpResult::Checked).boxed(),
        Op::Sync { .. } => Just(OpResult::Synced).boxed(),
        Op::Multi(ops) => {
            let each: Vec<_> = ops
                .iter()
                .map(|op| {
                    let done = match op {
                        Op::Create {
                            mode: CreateMode::Container,
                            ..
                        } => created(stat().boxed()),
                        Op::Create { mode, .. } if mode.ttl_ms().is_some() => {
                            created(stat().boxed())
                        }
                        Op::Create { .. } => created(Just(Stat::UNKNOWN).boxed()),
                        op => result_of(op),
                    };
                    prop_oneof![
                        3 => done.prop_map(Ok),
                        1 => Just(Ok(OpResult::RolledBack)),
                        1 => error().prop_map(Err),
                    ]
                })
                .collect();
            each.prop_map(OpResult::Multi).boxed()
        }
        Op::MultiRead(ops) => {
            let each: Vec<_> = ops
                .iter()
                .map(|op| {
                    let read = match op {
                        Op::GetChildren { .. } => names().prop_map(OpResult::Listed).boxed(),
                        op => result_of(op),
                    };
                    prop_oneof![read.prop_map(Ok), error().prop_map(Err)]
                })
                .collect();
            each.prop_map(OpResult::MultiRead).boxed()
        }
        Op::CountDescendants { .. } => any::<i32>().prop_map(OpResult::Counted).boxed(),
        Op::GetEphemerals { .. } => names().prop_map(OpResult::Ephemerals).boxed(),
        Op::AddWatch { .. } => Just(OpResult::WatchAdded).boxed(),
        Op::RemoveWatches { .. } => Just(OpResult::WatchesRemoved).boxed(),
        Op::CheckWatches { .. } => Just(OpResult::WatchesHeld).boxed(),
        Op::GetAcl { .. } => (acls(), stat())
            .prop_map(|(acl, stat)| OpResult::Acl { acl, stat })
            .boxed(),
        Op::SetAcl { .. } => stat().prop_map(OpResult::AclSet).boxed(),
        Op::AddAuth { .. } => Just(OpResult::Authenticated).boxed(),
        Op::WhoAmI => vec(("[a-z]{1,6}", "[a-z0-9.]{0,8}"), 0..3)
            .prop_map(|ids| {
                let info = ids.into_iter();
                OpResult::Identities(
                    info.map(|(scheme, user)| ClientInfo { scheme, user })
                        .collect(),
                )
            })
            .boxed(),
    }
}

/// An op and a reply a server could give it.
fn op_and_reply() -> impl Strategy<Value = (Op, OpReply)> {
    op().prop_flat_map(|op| {
        let reply = prop_oneof![
            3 => result_of(&op).prop_map(Ok),
            1 => error().prop_filter("exists tells NoNode as no stat", {
                let exists = matches!(op, Op::Exists { .. });
                move |error| !(exists && *error == ZkError::NoNode)
            }).prop_map(Err),
        ];
        (Just(op), reply)
    })
}

fn watches() -> impl Strategy<Value = SetWatches> {
    (any::<i64>(), [names(), names(), names(), names(), names()]).prop_map(|(zxid, lists)| {
        let [data, exist, child, persistent, recursive] = lists;
        let watches = SessionWatches {
            data,
            exist,
            child,
            persistent,
            recursive,
        };
        SetWatches {
            relative_zxid: zxid,
            watches,
        }
    })
}

proptest! {
    #[test]
    fn every_request_reads_back_as_it_was_sent_with_the_length_the_packet_rules_give(op in op(), xid in 1..i32::MAX) {
        let request = Request::Op(op.clone());
        let (header, bytes) = request.encode(xid).expect("every generated op is sendable");
        prop_assert_eq!(Request::decode(&bytes), Ok((header, request)));
        prop_assert_eq!(bytes.len(), request_len(&op));
    }

    #[test]
    fn every_reply_reads_back_as_the_server_gave_it((op, reply) in op_and_reply(), xid in 1..i32::MAX, zxid: i64) {
        let request = Request::Op(op.clone());
        let (sent, _) = request.encode(xid).expect("sendable");
        let bytes = encode_reply(sent, zxid, &op, &reply);
        let (header, body) = ReplyHeader::decode(&bytes).expect("a header");
        prop_assert_eq!((header.xid, header.zxid), (sent.xid, zxid));
        let read = decode_reply(sent, &request, &header, body).expect("a reply");
        prop_assert_eq!(read, reply);
    }

    #[test]
    fn set_watches_pings_closes_handshakes_and_notifications_read_back(
        watches in watches(),
        zxid: i64, timeout: i32, session: i64, password in data(), read_only: bool,
        path in path(),
        event_type in proptest::sample::select(vec![
            EventType::NodeCreated, EventType::NodeDeleted, EventType::NodeDataChanged,
            EventType::NodeChildrenChanged,
        ]),
    ) {
        for request in [Request::SetWatches(watches.clone()), Request::Ping, Request::CloseSession] {
            let (header, bytes) = request.encode(7).expect("sendable");
            prop_assert_eq!(Request::decode(&bytes), Ok((header, request)));
        }
        let connect = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: zxid,
            timeout_ms: timeout,
            session_id: session,
            password: password.clone(),
            read_only,
        };
        prop_assert_eq!(ConnectRequest::decode(&connect.encode()), Ok(connect));
        let response = ConnectResponse {
            protocol_version: 0,
            timeout_ms: timeout,
            session_id: session,
            password,
            read_only,
        };
        prop_assert_eq!(ConnectResponse::decode(&response.encode()), Ok(response));
        let event = WatchedEvent { event_type, path };
        let bytes = encode_notification(&event);
        let (header, body) = ReplyHeader::decode(&bytes).expect("a header");
        prop_assert_eq!(header.xid, -1);
        prop_assert_eq!(decode_notification(body), Ok(event));
    }

    #[test]
    fn no_bytes_make_a_reader_panic(bytes in vec(any::<u8>(), 0..64), (op, _) in op_and_reply(), code in -12..110i32) {
        let _ = Request::decode(&bytes);
        let _ = ConnectRequest::decode(&bytes);
        let _ = ConnectResponse::decode(&bytes);
        let _ = decode_notification(&bytes);
        if let Ok((header, body)) = ReplyHeader::decode(&bytes) {
            let sent = RequestHeader { xid: header.xid, code };
            let _ = decode_reply(sent, &Request::Op(op), &header, body);
        }
    }

    #[test]
    fn a_truncated_record_is_refused_and_never_read_as_another(op in op(), cut in any::<prop::sample::Index>()) {
        let (_, bytes) = Request::Op(op).encode(1).expect("sendable");
        let cut = cut.index(bytes.len());
        prop_assert!(Request::decode(&bytes[..cut]).is_err());
    }
}

#[test]
fn a_frame_longer_than_a_server_reads_or_negative_is_refused_before_it_is_read() {
    let max = MAX_REQUEST_LEN;
    assert_eq!(frame_len(1024i32.to_be_bytes(), max), Ok(1024));
    assert_eq!(frame_len((max as i32).to_be_bytes(), max), Ok(max));
    let over = max as i32 + 1;
    assert_eq!(
        frame_len(over.to_be_bytes(), max),
        Err(Malformed::FrameLength(over.into()))
    );
    assert_eq!(
        frame_len((-1i32).to_be_bytes(), max),
        Err(Malformed::FrameLength(-1))
    );
}

#[test]
fn a_nested_multi_or_a_watching_read_in_a_multi_read_cannot_be_sent_nor_read() {
    let nested = Op::Multi(vec![Op::Multi(Vec::new())]);
    assert!(Request::Op(nested).encode(1).is_err());
    let watching = Op::MultiRead(vec![Op::GetData {
        path: "/a".into(),
        watch: true,
    }]);
    assert!(Request::Op(watching).encode(1).is_err());
    // A multi header naming a multi, nested deeper than any stack: refused at the first.
    let mut bytes = vec![0, 0, 0, 1, 0, 0, 0, 14];
    for _ in 0..100_000 {
        bytes.extend_from_slice(&[0, 0, 0, 14, 0, 0xff, 0xff, 0xff, 0xff]);
    }
    assert!(matches!(
        Request::decode(&bytes),
        Err(Malformed::Unknown { .. })
    ));
}

#[test]
fn the_bytes_of_a_known_request_are_zookeepers() {
    // create2 of "/a" holding "x", open ACL, ephemeral, as ZooKeeper's Java client writes it.
    let op = Op::Create {
        path: "/a".into(),
        data: b"x".to_vec(),
        mode: CreateMode::Ephemeral,
        acl: Acls::OPEN,
    };
    let (header, bytes) = Request::Op(op).encode(3).expect("sendable");
    assert_eq!(header, RequestHeader { xid: 3, code: 15 });
    let mut expected = vec![0, 0, 0, 3, 0, 0, 0, 15];
    expected.extend_from_slice(&[0, 0, 0, 2, b'/', b'a', 0, 0, 0, 1, b'x']);
    expected.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 31]);
    expected.extend_from_slice(&[0, 0, 0, 5, b'w', b'o', b'r', b'l', b'd']);
    expected.extend_from_slice(&[0, 0, 0, 6, b'a', b'n', b'y', b'o', b'n', b'e']);
    expected.extend_from_slice(&[0, 0, 0, 1]);
    assert_eq!(bytes, expected);
}
