//! The wire service's own tests, driven by hand with no sockets and no clock.

use zklab_recipes::client::{CreateMode, EventType, OpResult, WatchedEvent};

use super::*;
use crate::fault::FaultRates;
use crate::jute::archive::frame_len;
use crate::jute::reply::{decode_notification, decode_reply};
use crate::test_ops::{create, persistent, set};

mod ensemble;

const SECOND: Duration = Duration::from_secs(1);

fn service() -> WireService {
    WireService::new(7, 1, Ticks::default(), ServeFaults::none(), Duration::ZERO)
}

/// The records of the frames sent to `conn`, and whether it was closed.
fn sent_to(outgoing: &[Outgoing], conn: ConnId) -> (Vec<Vec<u8>>, bool) {
    let mut records = Vec::new();
    let mut closed = false;
    for out in outgoing {
        match out {
            Outgoing::Send { conn: to, bytes } if *to == conn => {
                let len = frame_len(bytes[..4].try_into().expect("a prefix"), usize::MAX);
                assert_eq!(len, Ok(bytes.len() - 4));
                records.push(bytes[4..].to_vec());
            }
            Outgoing::Close { conn: to, .. } if *to == conn => closed = true,
            _ => {}
        }
    }
    (records, closed)
}

fn connect(
    service: &mut WireService,
    conn: ConnId,
    session: SessionId,
    password: Vec<u8>,
    now: Duration,
) -> (ConnectResponse, bool) {
    connect_to(service, conn, 0, (session, password, 0), now)
}

/// Connects `conn` to server `server` as a client that names its session and password and has
/// seen zxid `seen`.
fn connect_to(
    service: &mut WireService,
    conn: ConnId,
    server: usize,
    (session, password, seen): (SessionId, Vec<u8>, i64),
    now: Duration,
) -> (ConnectResponse, bool) {
    service.opened(conn, server, now);
    let request = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: seen,
        timeout_ms: 10_000,
        session_id: session,
        password,
        read_only: false,
    };
    let outgoing = service.received(conn, &request.encode(), now);
    let (records, closed) = sent_to(&outgoing, conn);
    (
        ConnectResponse::decode(&records[0]).expect("a response"),
        closed,
    )
}

fn call(service: &mut WireService, conn: ConnId, xid: i32, op: Op, now: Duration) -> Vec<Outgoing> {
    let (_, bytes) = Request::Op(op).encode(xid).expect("sendable");
    service.received(conn, &bytes, now)
}

fn reply_of(records: &[Vec<u8>], op: &Op, xid: i32) -> OpReply {
    let request = Request::Op(op.clone());
    let (sent, _) = request.encode(xid).expect("sendable");
    let record = records.last().expect("a reply");
    let (header, body) = ReplyHeader::decode(record).expect("a header");
    assert_eq!(header.xid, xid);
    decode_reply(sent, &request, &header, body).expect("a reply")
}

#[test]
fn a_session_is_opened_resumed_with_its_password_and_refused_with_another() {
    let mut service = service();
    let (opened, closed) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
    assert!(!closed);
    assert_eq!(opened.timeout_ms, 10_000);
    assert_ne!(opened.session_id, 0);
    let session = opened.session_id;
    let op = create("/e", CreateMode::Ephemeral);
    call(&mut service, 1, 1, op, SECOND);
    service.gone(1, SECOND);
    let (resumed, closed) = connect(&mut service, 2, session, opened.password.clone(), SECOND);
    assert!(!closed);
    assert_eq!((resumed.session_id, resumed.timeout_ms), (session, 10_000));
    let (refused, closed) = connect(&mut service, 3, session, vec![1; 16], SECOND);
    assert!(closed);
    assert_eq!((refused.session_id, refused.timeout_ms), (0, 0));
    let read = Op::Exists {
        path: "/e".into(),
        watch: false,
    };
    let (records, _) = sent_to(&call(&mut service, 2, 2, read.clone(), SECOND), 2);
    assert!(matches!(
        reply_of(&records, &read, 2),
        Ok(OpResult::Exists(Some(_)))
    ));
}

#[test]
fn an_unheard_session_expires_its_ephemerals_go_and_its_watchers_hear_it() {
    let mut service = service();
    let (owner, _) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
    connect(&mut service, 2, 0, vec![0; 16], SECOND);
    call(
        &mut service,
        1,
        1,
        create("/e", CreateMode::Ephemeral),
        SECOND,
    );
    call(
        &mut service,
        2,
        1,
        Op::Exists {
            path: "/e".into(),
            watch: true,
        },
        SECOND,
    );
    // The watcher pings; the owner is silent past its timeout.
    for at in [4, 8, 12] {
        let (_, bytes) = Request::Ping.encode(-2).expect("sendable");
        service.received(2, &bytes, SECOND * at);
    }
    let (outgoing, _) = service.tick(SECOND * 12);
    assert!(
        sent_to(&outgoing, 1).1,
        "the expired session's connection is closed"
    );
    let (records, _) = sent_to(&outgoing, 2);
    let (header, body) = ReplyHeader::decode(&records[0]).expect("a header");
    assert_eq!(header.xid, xid::NOTIFICATION);
    let deleted = WatchedEvent {
        event_type: EventType::NodeDeleted,
        path: "/e".into(),
    };
    assert_eq!(decode_notification(body), Ok(deleted));
    let (expired, closed) = connect(
        &mut service,
        3,
        owner.session_id,
        owner.password,
        SECOND * 13,
    );
    assert!(closed);
    assert_eq!(expired.timeout_ms, 0);
}

#[test]
fn a_bad_handshake_or_request_or_a_client_from_the_future_closes_that_connection_alone() {
    let mut service = service();
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    service.opened(2, 0, Duration::ZERO);
    let outgoing = service.received(2, b"nonsense", SECOND);
    assert!(matches!(
        &outgoing[..],
        [Outgoing::Close {
            conn: 2,
            why: Some(_)
        }]
    ));
    let outgoing = service.received(1, &[0, 0, 0, 9, 0, 0, 0, 77], SECOND);
    assert!(matches!(
        &outgoing[..],
        [Outgoing::Close {
            conn: 1,
            why: Some(_)
        }]
    ));
    service.opened(3, 0, Duration::ZERO);
    let ahead = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 1_000,
        timeout_ms: 10_000,
        session_id: 0,
        password: vec![0; 16],
        read_only: false,
    };
    let outgoing = service.received(3, &ahead.encode(), SECOND);
    assert!(matches!(
        &outgoing[..],
        [Outgoing::Close {
            conn: 3,
            why: Some(_)
        }]
    ));
    connect(&mut service, 4, 0, vec![0; 16], SECOND);
    let (records, _) = sent_to(&call(&mut service, 4, 1, persistent("/p"), SECOND), 4);
    assert!(reply_of(&records, &persistent("/p"), 1).is_ok());
}

#[test]
fn the_command_port_swallows_replies_but_found_data_closes_connections_and_expires() {
    let mut service = service();
    let (opened, _) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
    let session = opened.session_id;
    let write = persistent("/p");
    let read = Op::GetData {
        path: "/p".into(),
        watch: false,
    };
    assert_eq!(
        Control::parse("NORESPONSE", Some("2")),
        Ok(Control::NoResponse(Some(2)))
    );
    service.control(Control::NoResponse(Some(2)), SECOND);
    assert!(call(&mut service, 1, 1, write.clone(), SECOND).is_empty());
    let (records, _) = sent_to(&call(&mut service, 1, 2, read.clone(), SECOND), 1);
    assert!(matches!(
        reply_of(&records, &read, 2),
        Ok(OpResult::Data { .. })
    ));
    let missing = Op::Exists {
        path: "/q".into(),
        watch: false,
    };
    assert!(call(&mut service, 1, 3, missing.clone(), SECOND).is_empty());
    let (records, _) = sent_to(&call(&mut service, 1, 4, missing.clone(), SECOND), 1);
    assert_eq!(reply_of(&records, &missing, 4), Ok(OpResult::Exists(None)));
    let hex = format!("{session:#x}");
    let close = Control::parse("CLOSECONNECTION", Some(&hex)).expect("a command");
    assert!(sent_to(&service.control(close, SECOND), 1).1);
    connect(&mut service, 2, session, opened.password.clone(), SECOND);
    let expire = Control::parse("EXPIRESESSION", Some(&session.to_string())).expect("a command");
    assert!(sent_to(&service.control(expire, SECOND), 2).1);
    let (expired, _) = connect(&mut service, 3, session, opened.password, SECOND);
    assert_eq!(expired.timeout_ms, 0);
    assert_eq!(
        Control::parse("ELECTNEWLEADER", None),
        Ok(Control::ElectNewLeader)
    );
    assert!(Control::parse("SHUTDOWN", None).is_err());
    assert!(Control::parse("EXPIRESESSION", Some("nine")).is_err());
}

#[test]
fn srvr_says_the_mode_as_launch_scripts_look_for_it() {
    let service = service();
    let srvr = service.four_letter_word(b"srvr", 0).expect("an answer");
    assert!(
        srvr.lines().any(|line| line == "Mode: standalone"),
        "{srvr}"
    );
    assert_eq!(
        service.four_letter_word(b"ruok", 0).as_deref(),
        Some("imok")
    );
    assert_eq!(service.four_letter_word(b"abcd", 0), None);
}

/// A service striking `schedule` and random faults at `rates`.
fn faulty(schedule: &str, rates: &str, seed: u64) -> WireService {
    let schedule = AnchoredFault::parse_schedule(schedule).expect("a schedule");
    let rates = FaultRates::parse(rates).expect("rates");
    let faults = ServeFaults::new(rates, schedule, seed, 1);
    WireService::new(seed, 1, Ticks::default(), faults, Duration::ZERO)
}

fn exists(path: &str) -> Op {
    Op::Exists {
        path: path.into(),
        watch: false,
    }
}

/// Whether `path` exists, asked by a fresh session on a connection of its own.
fn found(service: &mut WireService, conn: ConnId, path: &str, now: Duration) -> bool {
    connect(service, conn, 0, vec![0; 16], now);
    let (records, _) = sent_to(&call(service, conn, 1, exists(path), now), conn);
    matches!(
        reply_of(&records, &exists(path), 1),
        Ok(OpResult::Exists(Some(_)))
    )
}

fn faults_in(trace: &Trace) -> Vec<String> {
    let faults = trace
        .entries()
        .iter()
        .filter_map(|entry| match &entry.event {
            TraceEvent::Fault { kind, client, .. } => Some(format!("{kind} c{client}")),
            _ => None,
        });
    faults.collect()
}

#[test]
fn a_scheduled_lost_create_reply_applies_the_create_and_closes_instead_of_replying() {
    let mut service = faulty("lost-create-reply c0 create 2", "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    let (records, closed) = sent_to(&call(&mut service, 1, 1, persistent("/a"), SECOND), 1);
    assert!(
        !closed && records.len() == 1,
        "the first create is answered"
    );
    let outgoing = call(&mut service, 1, 2, persistent("/b"), SECOND);
    assert_eq!(sent_to(&outgoing, 1), (Vec::new(), true));
    assert!(found(&mut service, 2, "/b", SECOND), "applied all the same");
    let schedule: Vec<String> = (service.faults().schedule().iter())
        .map(ToString::to_string)
        .collect();
    assert_eq!(schedule, ["lost-create-reply c0 create 2"]);
    assert_eq!(faults_in(&service.take_trace()), ["lost-create-reply c0"]);
}

#[test]
fn a_scheduled_connection_loss_closes_before_the_request_is_applied() {
    let mut service = faulty("connection-loss c0 create 1", "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    let outgoing = call(&mut service, 1, 1, persistent("/a"), SECOND);
    assert_eq!(sent_to(&outgoing, 1), (Vec::new(), true));
    assert!(!found(&mut service, 2, "/a", SECOND), "never applied");
}

#[test]
fn a_reordered_reply_waits_with_what_follows_it_while_other_sessions_go_ahead() {
    let mut service = faulty("reorder c0 create 1 for 0.5s", "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    connect(&mut service, 2, 0, vec![0; 16], SECOND);
    assert!(call(&mut service, 1, 1, persistent("/a"), SECOND).is_empty());
    assert!(
        call(&mut service, 1, 2, exists("/a"), SECOND).is_empty(),
        "behind it"
    );
    let (records, _) = sent_to(&call(&mut service, 2, 1, exists("/a"), SECOND), 2);
    assert_eq!(records.len(), 1, "another session's reply overtakes it");
    let (outgoing, next) = service.tick(SECOND + Duration::from_millis(100));
    assert!(outgoing.is_empty());
    assert!(
        next <= Duration::from_millis(400),
        "it ticks when the reply is due"
    );
    let (outgoing, _) = service.tick(SECOND + Duration::from_millis(500));
    let (records, _) = sent_to(&outgoing, 1);
    assert_eq!(records.len(), 2, "both, in order");
    assert!(reply_of(&records[..1], &persistent("/a"), 1).is_ok());
    assert!(reply_of(&records, &exists("/a"), 2).is_ok());
}

#[test]
fn a_partitioned_session_is_neither_read_nor_written_and_expires_past_its_timeout() {
    let mut service = faulty("partition c0 create 1 for 20s", "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    let (records, _) = sent_to(&call(&mut service, 1, 1, persistent("/a"), SECOND), 1);
    assert_eq!(records.len(), 1, "the anchored request is answered first");
    let ephemeral = create("/e", CreateMode::Ephemeral);
    assert!(call(&mut service, 1, 2, ephemeral, SECOND * 2).is_empty());
    assert!(!found(&mut service, 2, "/e", SECOND * 3), "not read yet");
    let (outgoing, _) = service.tick(SECOND * 12);
    assert!(
        sent_to(&outgoing, 1).0.is_empty(),
        "the expiry's close waits too"
    );
    assert!(
        !found(&mut service, 3, "/e", SECOND * 13),
        "never applied: expired unheard"
    );
    let (outgoing, _) = service.tick(SECOND * 21);
    assert!(sent_to(&outgoing, 1).1, "closed once the partition heals");
}

#[test]
fn a_client_that_floods_while_partitioned_loses_its_connection_and_no_other() {
    let mut service = faulty("partition c0 create 1 for 20s", "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    connect(&mut service, 2, 0, vec![0; 16], SECOND);
    call(&mut service, 1, 1, persistent("/a"), SECOND);
    let data = vec![7; 1 << 20];
    let held = holding::MOST_HELD >> 20;
    // Each record is a little over 1 MiB: the held-th passes the bound.
    for xid in 2..=i32::try_from(held).expect("a count") {
        let outgoing = call(&mut service, 1, xid, set("/a", &data, -1), SECOND * 2);
        assert!(!sent_to(&outgoing, 1).1, "{xid}: held, not yet too much");
    }
    let outgoing = call(&mut service, 1, 99, set("/a", &data, -1), SECOND * 2);
    assert!(sent_to(&outgoing, 1).1, "closed past {held} MiB held");
    let events = service.trace.entries().iter();
    let lines: Vec<String> = events.map(|entry| entry.event.to_string()).collect();
    assert!(
        lines
            .iter()
            .any(|line| line.contains("while a fault held its traffic")),
        "{lines:?}"
    );
    assert!(
        found(&mut service, 2, "/a", SECOND * 3),
        "another client goes on"
    );
}

#[test]
fn scheduled_expiry_and_reaping_strike_once_their_request_is_answered() {
    let schedule = "session-expiry c1 exists 1\ncontainer-reaped c0 delete 1";
    let mut service = faulty(schedule, "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    call(
        &mut service,
        1,
        1,
        create("/box", CreateMode::Container),
        SECOND,
    );
    call(&mut service, 1, 2, persistent("/box/item"), SECOND);
    let delete = Op::Delete {
        path: "/box/item".into(),
        version: -1,
    };
    call(&mut service, 1, 3, delete, SECOND);
    assert!(!found(&mut service, 2, "/a", SECOND));
    let trace = service.take_trace();
    assert!(trace.entries().iter().any(|entry| matches!(
        &entry.event,
        TraceEvent::Reaped { path, .. } if path == "/box"
    )));
    assert!(trace.entries().iter().any(|entry| matches!(
        entry.event,
        TraceEvent::SessionEnded {
            client: 1,
            expired: true,
            ..
        }
    )));
    assert_eq!(
        faults_in(&trace),
        ["container-reaped c0", "session-expiry c1"]
    );
}

#[test]
fn random_faults_follow_the_seed_and_each_is_a_line_of_the_schedule_that_strikes_it_again() {
    let run = |seed: u64, schedule: &str, rates: &str| {
        let mut service = faulty(schedule, rates, seed);
        let mut conn = 0;
        for round in 0..40 {
            conn += 1;
            let now = SECOND + Duration::from_millis(round * 10);
            connect(&mut service, conn, 0, vec![0; 16], now);
            call(
                &mut service,
                conn,
                1,
                persistent(&format!("/n{round}")),
                now,
            );
            call(&mut service, conn, 2, exists("/n0"), now);
        }
        let schedule: Vec<String> = (service.faults().schedule().iter())
            .map(ToString::to_string)
            .collect();
        (schedule, service.take_trace().render())
    };
    let rates = "connection-loss=0.2,lost-reply=0.2,lost-create-reply=0.2";
    let (schedule, trace) = run(3, "", rates);
    assert!(schedule.len() >= 4, "{schedule:?}");
    assert_eq!(run(3, "", rates), (schedule.clone(), trace.clone()));
    assert_ne!(run(4, "", rates).0, schedule, "another seed, other faults");
    let (again, replayed) = run(9, &schedule.join("\n"), "none");
    assert_eq!(
        (again, replayed),
        (schedule, trace),
        "the schedule strikes them again"
    );
}

#[test]
fn a_claim_is_told_in_its_session_even_after_the_session_ended_and_refused_for_a_stranger() {
    let mut service = service();
    let (opened, _) = connect(&mut service, 1, 0, vec![0; 16], SECOND);
    service.control(Control::ExpireSession(None), SECOND);
    let granted = Outcome::Granted {
        role: "lock /l",
        token: 5,
    };
    assert_eq!(
        service.claim(opened.session_id, granted, SECOND * 2),
        Ok(())
    );
    assert!(service.claim(0x77, granted, SECOND * 2).is_err());
    let trace = service.take_trace();
    let last = &trace.entries().last().expect("the claim").event;
    assert!(
        matches!(last, TraceEvent::Outcome { client: 0, .. }),
        "{last:?}"
    );
}

#[test]
fn a_node_created_or_set_with_null_data_is_read_back_as_null_until_set_with_bytes() {
    use crate::jute::archive::JuteWriter;
    use zklab_recipes::acl::Acls;
    let mut service = service();
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    // zkCli's `create /n`: a plain create of null data.
    let mut writer = JuteWriter::new();
    writer.int(1).int(op_code::CREATE).string("/n").buffer(None);
    writer.acls(&Acls::OPEN).int(0);
    service.received(1, &writer.finish(), SECOND);
    call(&mut service, 1, 2, persistent("/empty"), SECOND);
    // The data's length as a getData reply writes it: after the 16-byte header.
    let data_length = |service: &mut WireService, xid: i32, path: &str| {
        let read = Op::GetData {
            path: path.into(),
            watch: false,
        };
        let (records, _) = sent_to(&call(service, 1, xid, read, SECOND), 1);
        i32::from_be_bytes(records[0][16..20].try_into().expect("a length"))
    };
    assert_eq!(data_length(&mut service, 3, "/n"), -1, "null");
    assert_eq!(data_length(&mut service, 4, "/empty"), 0, "empty, not null");
    let set = Op::SetData {
        path: "/n".into(),
        data: b"x".to_vec(),
        version: -1,
    };
    call(&mut service, 1, 5, set, SECOND);
    assert_eq!(data_length(&mut service, 6, "/n"), 1);
}

#[test]
fn the_command_port_fails_requests_delays_them_and_refuses_connections_until_reset() {
    let mut service = service();
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    assert_eq!(
        Control::parse("ADDDELAY", None),
        Ok(Control::AddDelay(1000))
    );
    service.control(Control::FailRequests(Some(1)), SECOND);
    let (records, _) = sent_to(&call(&mut service, 1, 1, persistent("/a"), SECOND), 1);
    let (header, _) = ReplyHeader::decode(&records[0]).expect("a header");
    assert_eq!(
        (header.xid, header.zxid, header.err),
        (1, 0, ZkError::ApiError.code())
    );
    assert!(!found(&mut service, 2, "/a", SECOND), "failed unapplied");
    service.control(Control::AddDelay(300), SECOND);
    assert!(call(&mut service, 1, 2, persistent("/b"), SECOND).is_empty());
    assert!(call(&mut service, 1, 3, exists("/b"), SECOND).is_empty());
    let at = |ms: u64| SECOND + Duration::from_millis(ms);
    let (outgoing, _) = service.tick(at(300));
    assert_eq!(
        sent_to(&outgoing, 1).0.len(),
        1,
        "the first after its delay"
    );
    let (outgoing, _) = service.tick(at(600));
    assert_eq!(sent_to(&outgoing, 1).0.len(), 1, "the second a delay later");
    service.control(Control::RejectConnections, at(600));
    assert!(matches!(
        &service.opened(9, 0, Duration::ZERO)[..],
        [Outgoing::Close { conn: 9, .. }]
    ));
    service.control(Control::Reset, at(600));
    assert!(service.opened(9, 0, Duration::ZERO).is_empty());
    let (records, _) = sent_to(&call(&mut service, 1, 4, exists("/b"), at(600)), 1);
    assert_eq!(records.len(), 1, "no delay after a reset");
}

#[test]
fn a_fault_anchored_under_a_node_counts_only_the_requests_on_its_children() {
    let mut service = faulty("lost-create-reply c0 create 1 under /locks", "none", 1);
    connect(&mut service, 1, 0, vec![0; 16], SECOND);
    for (xid, path) in [(1, "/locks"), (2, "/other")] {
        let (records, closed) = sent_to(&call(&mut service, 1, xid, persistent(path), SECOND), 1);
        assert!(!closed && records.len() == 1, "{path} is not under /locks");
    }
    let outgoing = call(&mut service, 1, 3, persistent("/locks/a"), SECOND);
    assert_eq!(
        sent_to(&outgoing, 1),
        (Vec::new(), true),
        "the first create under /locks"
    );
}
