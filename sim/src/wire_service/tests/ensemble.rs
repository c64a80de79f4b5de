//! The wire service as an ensemble: reads from a lagging follower, writes through the leader,
//! watches fired by the server they were left on, a follower down, the leader stepping down.

use super::*;

/// Longer than any follower's lag.
const LAG: Duration = Duration::from_millis(25);

fn ensemble(schedule: &str) -> WireService {
    let schedule = AnchoredFault::parse_schedule(schedule).expect("a schedule");
    let faults = ServeFaults::new(FaultRates::none(), schedule, 3, 3);
    WireService::new(3, 3, Ticks::default(), faults, Duration::ZERO)
}

fn new_session() -> (SessionId, Vec<u8>, i64) {
    (0, vec![0; 16], 0)
}

fn watching(path: &str) -> Op {
    Op::Exists {
        path: path.into(),
        watch: true,
    }
}

fn is_found(reply: OpReply) -> bool {
    matches!(reply, Ok(OpResult::Exists(Some(_))))
}

#[test]
fn a_follower_serves_stale_reads_until_it_applies_and_a_sync_and_what_follows_wait_for_it() {
    let mut service = ensemble("");
    connect_to(&mut service, 1, 0, new_session(), SECOND);
    connect_to(&mut service, 2, 1, new_session(), SECOND);
    let (records, _) = sent_to(&call(&mut service, 1, 1, persistent("/x"), SECOND), 1);
    assert!(
        reply_of(&records, &persistent("/x"), 1).is_ok(),
        "the leader answers at once"
    );
    let (records, _) = sent_to(&call(&mut service, 2, 1, exists("/x"), SECOND), 2);
    assert!(!is_found(reply_of(&records, &exists("/x"), 1)), "stale");
    let sync = Op::Sync { path: "/x".into() };
    let waiting = call(&mut service, 2, 2, sync.clone(), SECOND);
    assert!(
        sent_to(&waiting, 2).0.is_empty(),
        "a sync waits for the follower"
    );
    let behind = call(&mut service, 2, 3, exists("/x"), SECOND);
    assert!(
        sent_to(&behind, 2).0.is_empty(),
        "answered in order, behind the sync"
    );
    let (outgoing, _) = service.tick(SECOND + LAG);
    let (records, _) = sent_to(&outgoing, 2);
    assert_eq!(records.len(), 2);
    assert_eq!(reply_of(&records[..1], &sync, 2), Ok(OpResult::Synced));
    assert!(is_found(reply_of(&records, &exists("/x"), 3)));
    assert!(service
        .four_letter_word(b"srvr", 1)
        .is_some_and(|srvr| srvr.contains("Mode: follower")));
    assert!(service
        .four_letter_word(b"srvr", 0)
        .is_some_and(|srvr| srvr.contains("Mode: leader")));
}

#[test]
fn a_write_on_a_follower_is_answered_once_it_applied_it_and_a_watch_fires_where_it_was_left() {
    let mut service = ensemble("");
    connect_to(&mut service, 1, 0, new_session(), SECOND);
    connect_to(&mut service, 2, 1, new_session(), SECOND);
    connect_to(&mut service, 3, 2, new_session(), SECOND);
    call(&mut service, 2, 1, watching("/x"), SECOND);
    let (records, _) = sent_to(&call(&mut service, 1, 1, persistent("/x"), SECOND), 1);
    assert_eq!(records.len(), 1, "the leader holds no watch on /x");
    let outgoing = call(&mut service, 3, 1, set("/x", b"v", -1), SECOND);
    assert!(
        sent_to(&outgoing, 3).0.is_empty(),
        "its server has not applied it"
    );
    let (outgoing, _) = service.tick(SECOND + LAG);
    let (records, _) = sent_to(&outgoing, 2);
    let (_, body) = ReplyHeader::decode(&records[0]).expect("a header");
    let created = decode_notification(body).expect("a notification");
    assert_eq!(created.event_type, EventType::NodeCreated);
    let (records, _) = sent_to(&outgoing, 3);
    assert!(reply_of(&records, &set("/x", b"v", -1), 1).is_ok());
}

#[test]
fn a_client_that_has_seen_more_than_a_follower_is_refused_there_and_taken_by_the_leader() {
    let mut service = ensemble("");
    connect_to(&mut service, 1, 0, new_session(), SECOND);
    let (records, _) = sent_to(&call(&mut service, 1, 1, persistent("/x"), SECOND), 1);
    let (header, _) = ReplyHeader::decode(&records[0]).expect("a header");
    let seen = (0, vec![0; 16], header.zxid);
    let outgoing = {
        service.opened(2, 2, SECOND);
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: header.zxid,
            timeout_ms: 10_000,
            session_id: 0,
            password: vec![0; 16],
            read_only: false,
        };
        service.received(2, &request.encode(), SECOND)
    };
    assert!(
        matches!(&outgoing[..], [Outgoing::Close { conn: 2, why: Some(why) }] if why.contains("beyond server 2"))
    );
    let (taken, closed) = connect_to(&mut service, 3, 0, seen, SECOND);
    assert!(!closed && taken.session_id != 0);
}

#[test]
fn a_crashed_follower_closes_its_connections_takes_none_until_it_is_back_then_catches_up() {
    let mut service = ensemble("server-crash c1 exists 1 for 2.000s");
    connect_to(&mut service, 1, 0, new_session(), SECOND);
    let (reader, _) = connect_to(&mut service, 2, 1, new_session(), SECOND);
    let (_, closed) = sent_to(&call(&mut service, 2, 1, exists("/x"), SECOND), 2);
    assert!(closed, "its server went down");
    assert!(
        sent_to(&service.opened(3, 1, SECOND * 2), 3).1,
        "refused while down"
    );
    call(&mut service, 1, 1, persistent("/x"), SECOND * 2);
    service.tick(SECOND * 3 + LAG);
    let resumed = (reader.session_id, reader.password, 0);
    let (again, closed) = connect_to(&mut service, 4, 1, resumed, SECOND * 3 + LAG);
    assert!(
        !closed && again.session_id == reader.session_id,
        "back, the session lives"
    );
    let (records, _) = sent_to(&call(&mut service, 4, 1, exists("/x"), SECOND * 3 + LAG), 4);
    assert!(is_found(reply_of(&records, &exists("/x"), 1)), "caught up");
    let faults = faults_in(&service.take_trace());
    assert_eq!(faults, ["server-crash c1"]);
}

#[test]
fn a_leader_change_drops_every_connection_and_the_new_leader_keeps_every_write_and_session() {
    let mut service = ensemble("");
    let (writer, _) = connect_to(&mut service, 1, 0, new_session(), SECOND);
    connect_to(&mut service, 2, 1, new_session(), SECOND);
    call(&mut service, 1, 1, persistent("/x"), SECOND);
    let outgoing = service.control(Control::ElectNewLeader, SECOND);
    assert!(
        sent_to(&outgoing, 1).1 && sent_to(&outgoing, 2).1,
        "every connection drops"
    );
    assert!(
        sent_to(&service.opened(3, 2, SECOND), 3).1,
        "no server serves while it elects"
    );
    let after = SECOND * 3;
    service.tick(after);
    assert!(service
        .four_letter_word(b"srvr", 1)
        .is_some_and(|srvr| srvr.contains("Mode: leader")));
    let resumed = (writer.session_id, writer.password, 0);
    let (again, closed) = connect_to(&mut service, 4, 2, resumed, after);
    assert!(
        !closed && again.session_id == writer.session_id,
        "the session survives"
    );
    let (records, _) = sent_to(&call(&mut service, 4, 1, set("/x", b"v", -1), after), 4);
    assert!(records.is_empty(), "a write on a follower waits for it");
    let (outgoing, _) = service.tick(after + LAG);
    let (records, _) = sent_to(&outgoing, 4);
    assert!(
        reply_of(&records, &set("/x", b"v", -1), 1).is_ok(),
        "the write before it survived"
    );
}
