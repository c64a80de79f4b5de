//! Unit tests of the service core, driven by hand: no runtime, no clock, a seeded generator.

use std::time::Duration;

use zklab_recipes::client::{CreateMode, Op, OpResult, SessionEvent, SessionId, ZkError, ZkEvent};

use super::{Output, Service, SimConfig};
use crate::fault::{FaultKind, FaultPlan, FaultRates, ScriptedFault};
use crate::forced::{ForcedKind, ForcedStep};
use crate::test_ops::{create, delete, exists};
use crate::trace::TraceEvent;

fn service(servers: usize) -> Service {
    let config = SimConfig {
        servers,
        ..SimConfig::default()
    };
    let plan = FaultPlan {
        rates: FaultRates::none(),
        script: Vec::new(),
    };
    Service::new(config, plan, 7)
}

/// Delivers everything due up to `until`, in time order, and returns what came out.
fn run_until(service: &mut Service, until: Duration) -> Vec<Output> {
    let mut outputs = Vec::new();
    while let Some(due) = service.next_wakeup().filter(|&due| due <= until) {
        service.set_time(due);
        service.deliver_due();
        service.take_outputs(&mut outputs);
    }
    service.set_time(until.max(service.now()));
    service.take_outputs(&mut outputs);
    outputs
}

fn replies(outputs: &[Output]) -> Vec<(u64, Result<OpResult, ZkError>)> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Reply { id, reply, .. } => Some((*id, reply.clone())),
            _ => None,
        })
        .collect()
}

fn events(outputs: &[Output]) -> Vec<ZkEvent> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Event { event, .. } => Some(event.clone()),
            _ => None,
        })
        .collect()
}

/// A standalone service with one session, whose create of `path` is in flight: the service,
/// the session and the call's id.
fn creating(path: &str, mode: CreateMode) -> (Service, SessionId, u64) {
    let mut zk = service(1);
    let (session, _) = zk.open_session(0, None, false);
    let id = zk.call(session, create(path, mode)).unwrap();
    (zk, session, id)
}

#[test]
fn a_request_is_answered_over_the_wire_and_the_wire_asks_to_be_woken() {
    let mut zk = service(1);
    zk.add_process(0);
    let (session, forced) = zk.open_session(0, None, false);
    assert!(!forced);
    let id = zk
        .call(session, create("/a", CreateMode::Persistent))
        .unwrap();
    let mut asked = Vec::new();
    zk.take_outputs(&mut asked);
    assert!(asked.iter().any(|o| matches!(o, Output::WakeAt(_))));
    let outputs = run_until(&mut zk, Duration::from_secs(1));
    assert_eq!(replies(&outputs).len(), 1);
    assert_eq!(replies(&outputs)[0].0, id);
    assert!(replies(&outputs)[0].1.is_ok());
}

#[test]
fn one_sessions_requests_are_answered_in_the_order_they_were_sent() {
    let mut zk = service(3);
    zk.add_process(0);
    let (session, _) = zk.open_session(0, Some(1), false);
    let ids: Vec<u64> = (0..5)
        .map(|i| {
            let op = create(&format!("/n{i}"), CreateMode::Persistent);
            zk.call(session, op).unwrap()
        })
        .collect();
    let outputs = run_until(&mut zk, Duration::from_secs(2));
    let answered: Vec<u64> = replies(&outputs).into_iter().map(|(id, _)| id).collect();
    assert_eq!(answered, ids);
}

#[test]
fn the_client_library_refuses_a_bad_path_at_once_and_a_closed_session_with_closed() {
    let mut zk = service(1);
    let (session, _) = zk.open_session(0, None, false);
    let bad = exists("no-slash", false);
    assert_eq!(zk.call(session, bad), Err(ZkError::BadArguments));
    zk.close(session).unwrap();
    let outputs = run_until(&mut zk, Duration::from_secs(1));
    assert!(events(&outputs).contains(&ZkEvent::Session(SessionEvent::Closed)));
    assert!(outputs
        .iter()
        .any(|o| matches!(o, Output::EventsEnd { session: s } if *s == session)));
    let sync = Op::Sync {
        path: "/".to_owned(),
    };
    assert_eq!(zk.call(session, sync), Err(ZkError::Closed));
    assert_eq!(zk.close(session), Err(ZkError::Closed));
}

#[test]
fn a_dropped_connection_fails_the_op_in_flight_and_wakes_the_heartbeat() {
    let (mut zk, session, id) = creating("/a", CreateMode::Persistent);
    zk.drop_connection(session);
    let mut outputs = Vec::new();
    zk.take_outputs(&mut outputs);
    assert_eq!(replies(&outputs), vec![(id, Err(ZkError::ConnectionLoss))]);
    assert_eq!(
        events(&outputs),
        vec![ZkEvent::Session(SessionEvent::Disconnected)]
    );
    assert!(outputs
        .iter()
        .any(|o| matches!(o, Output::Heartbeat { session: s } if *s == session)));
    // The request was lost with its connection: nothing reaches the server.
    run_until(&mut zk, Duration::from_secs(1));
    assert!(zk.servers().server(0).node("/a").is_none());
}

#[test]
fn the_heartbeat_pings_when_idle_and_reconnects_after_a_break() {
    let mut zk = service(1);
    let (session, _) = zk.open_session(0, None, false);
    let third = SimConfig::default().session_timeout / 3;
    assert_eq!(zk.heartbeat_due(session), Some(third));
    zk.set_time(third);
    zk.heartbeat(session);
    run_until(&mut zk, third + Duration::from_millis(50));
    // The pong came back: the next ping is a third after this one.
    assert_eq!(zk.heartbeat_due(session), Some(third * 2));
    zk.drop_connection(session);
    zk.take_outputs(&mut Vec::new());
    let retry = zk.heartbeat_due(session).unwrap();
    let (low, high) = SimConfig::default().reconnect_delay;
    let now = zk.now();
    assert!(retry >= now + low && retry <= now + high, "{retry:?}");
    zk.set_time(retry);
    zk.heartbeat(session);
    let mut outputs = Vec::new();
    zk.take_outputs(&mut outputs);
    assert_eq!(
        events(&outputs),
        vec![ZkEvent::Session(SessionEvent::SyncConnected)]
    );
}

#[test]
fn the_session_tracker_expires_a_silent_session_and_its_client_learns_on_reconnecting() {
    let (mut zk, session, id) = creating("/e", CreateMode::Ephemeral);
    let outputs = run_until(&mut zk, Duration::from_millis(100));
    assert!(replies(&outputs).contains(&(
        id,
        Ok(OpResult::Created {
            path: "/e".to_owned(),
            stat: zk.servers().server(0).node("/e").unwrap().1,
        })
    )));
    // Nobody pings: the server hears nothing for the whole timeout.
    let timeout = SimConfig::default().session_timeout;
    run_until(&mut zk, timeout * 2);
    assert!(!zk.servers().session_alive(session));
    assert!(zk.servers().server(0).node("/e").is_none());
    let (trace, _) = zk.take_report();
    assert!(trace
        .entries()
        .iter()
        .any(|e| matches!(e.event, TraceEvent::SessionEnded { expired: true, .. })));
}

#[test]
fn a_write_on_a_follower_is_answered_once_that_follower_has_applied_it() {
    let mut zk = service(3);
    let (session, _) = zk.open_session(0, Some(1), false);
    zk.call(session, create("/w", CreateMode::Persistent))
        .unwrap();
    let outputs = run_until(&mut zk, Duration::from_secs(1));
    assert_eq!(replies(&outputs).len(), 1);
    let (trace, _) = zk.take_report();
    let applied = trace
        .entries()
        .iter()
        .position(|e| matches!(e.event, TraceEvent::Applied { .. }))
        .unwrap();
    let replied = trace
        .entries()
        .iter()
        .position(|e| matches!(e.event, TraceEvent::Reply { .. }))
        .unwrap();
    assert!(applied < replied);
    assert!(zk.servers().applied(1) >= zk.servers().applied(0));
}

#[test]
fn a_crash_and_a_pause_are_asked_of_the_driver_and_a_crashed_process_is_struck_no_more() {
    let mut zk = service(1);
    zk.add_process(0);
    zk.open_session(0, None, false);
    let second = Duration::from_secs(1);
    zk.inject(ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::Pause,
        client: 0,
        duration: second,
    });
    zk.inject(ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::Crash,
        client: 0,
        duration: second,
    });
    zk.inject(ScriptedFault {
        at: Duration::ZERO,
        kind: FaultKind::Pause,
        client: 0,
        duration: second,
    });
    let mut outputs = Vec::new();
    zk.take_outputs(&mut outputs);
    let asked: Vec<String> = outputs
        .iter()
        .filter(|o| matches!(o, Output::Pause { .. } | Output::Kill { .. }))
        .map(|o| format!("{o:?}"))
        .collect();
    assert_eq!(
        asked,
        ["Pause { client: 0, duration: 1s }", "Kill { client: 0 }"]
    );
    assert!(zk.is_crashed(0));
    assert!(zk.crashed_session_alive());
    assert_eq!(zk.take_struck().len(), 2);
}

#[test]
fn a_forced_order_lets_each_step_go_only_in_its_turn() {
    let mut zk = service(1);
    zk.add_process(0);
    zk.add_process(1);
    zk.force_order(vec![
        ForcedStep {
            client: 1,
            kind: ForcedKind::Timeout,
        },
        ForcedStep {
            client: 0,
            kind: ForcedKind::Timeout,
        },
    ]);
    assert_eq!(zk.take_forced_turn(0, ForcedKind::Timeout, None), None);
    assert_eq!(
        zk.take_forced_turn(1, ForcedKind::Timeout, None),
        Some(true)
    );
    assert_eq!(
        zk.take_forced_turn(0, ForcedKind::Timeout, None),
        Some(true)
    );
    // Over: every later turn is free.
    assert_eq!(
        zk.take_forced_turn(1, ForcedKind::Timeout, None),
        Some(false)
    );
}

#[test]
fn a_forced_order_that_stalls_is_given_up_with_a_note() {
    let mut zk = service(1);
    zk.add_process(0);
    zk.force_order(vec![ForcedStep {
        client: 0,
        kind: ForcedKind::Timeout,
    }]);
    assert!(zk.check_forced_patience());
    assert_eq!(zk.forced_order_abandoned(), None);
    zk.set_time(crate::forced::FORCED_PATIENCE);
    assert!(!zk.check_forced_patience());
    let abandoned = zk.forced_order_abandoned().expect("given up");
    assert!(
        abandoned.contains("step 1 of 1 (timeout c0)"),
        "{abandoned}"
    );
    let (trace, _) = zk.take_report();
    assert!(trace
        .render()
        .contains("the forced order stops at its step 1 of 1"));
}

/// A service of `servers` whose reaper strikes every emptied container at once with
/// `container_reaped` 1, and one session (its client's process registered) that has made the
/// container `/c` with one child `/c/a`.
fn with_container(servers: usize, container_reaped: f64) -> (Service, SessionId) {
    let mut rates = FaultRates::none();
    rates.set(FaultKind::ContainerReaped, container_reaped);
    let config = SimConfig {
        servers,
        ..SimConfig::default()
    };
    let plan = FaultPlan {
        rates,
        script: Vec::new(),
    };
    let mut zk = Service::new(config, plan, 7);
    zk.add_process(0);
    let (session, _) = zk.open_session(0, Some(0), false);
    zk.call(session, create("/c", CreateMode::Container))
        .unwrap();
    zk.call(session, create("/c/a", CreateMode::Persistent))
        .unwrap();
    run_until(&mut zk, Duration::from_millis(100));
    (zk, session)
}

fn reaped(zk: &mut Service) -> Vec<String> {
    let (trace, _) = zk.take_report();
    (trace.entries().iter())
        .filter_map(|entry| match &entry.event {
            TraceEvent::Reaped { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_reaper_deletes_an_emptied_container_on_every_server_at_its_next_check() {
    let (mut zk, session) = with_container(3, 0.0);
    zk.call(session, delete("/c/a", -1)).unwrap();
    // The delete is answered before any check: the container stands empty meanwhile.
    let outputs = run_until(&mut zk, Duration::from_millis(150));
    assert_eq!(
        replies(&outputs).last().map(|(_, r)| r.clone()),
        Some(Ok(OpResult::Deleted))
    );
    assert!(zk.servers().server(0).node("/c").is_some());
    run_until(&mut zk, Duration::from_secs(3));
    for server in 0..3 {
        assert!(
            zk.servers().server(server).node("/c").is_none(),
            "server {server}"
        );
    }
    assert_eq!(reaped(&mut zk), vec!["/c".to_owned()]);
}

#[test]
fn the_container_reaped_fault_deletes_it_before_the_client_can_put_another_child_in() {
    let (mut zk, session) = with_container(1, 1.0);
    zk.call(session, exists("/c", true)).unwrap();
    let deleting = zk.call(session, delete("/c/a", -1)).unwrap();
    zk.call(session, create("/c/b", CreateMode::Persistent))
        .unwrap();
    let outputs = run_until(&mut zk, Duration::from_millis(150));
    let answers: Vec<_> = replies(&outputs).into_iter().map(|(_, r)| r).collect();
    assert_eq!(
        answers[answers.len() - 2..],
        [Ok(OpResult::Deleted), Err(ZkError::NoNode)]
    );
    // The reaper's delete is the next transaction: its event comes after the emptying reply.
    let at = |wanted: &dyn Fn(&Output) -> bool| outputs.iter().position(wanted);
    let replied = at(&|o| matches!(o, Output::Reply { id, .. } if *id == deleting));
    let told = at(&|o| {
        matches!(
            o,
            Output::Event {
                event: ZkEvent::Watch(_),
                ..
            }
        )
    });
    assert!(replied.is_some() && replied < told, "{outputs:?}");
    let (trace, counts) = zk.take_report();
    assert_eq!(counts.get(FaultKind::ContainerReaped), 1);
    let struck = trace.entries().iter().position(|entry| {
        matches!(
            &entry.event,
            TraceEvent::Fault {
                kind: FaultKind::ContainerReaped,
                ..
            }
        )
    });
    let gone = (trace.entries().iter()).position(|e| matches!(e.event, TraceEvent::Reaped { .. }));
    assert_eq!(
        gone,
        struck.map(|at| at + 1),
        "told as the fault, then the deletion"
    );
}

#[test]
fn a_container_that_never_had_a_child_and_a_run_without_containers_are_left_alone() {
    let mut zk = service(1);
    zk.add_process(0);
    let (session, _) = zk.open_session(0, None, false);
    zk.call(session, create("/c", CreateMode::Container))
        .unwrap();
    zk.call(session, create("/p", CreateMode::Persistent))
        .unwrap();
    zk.call(session, create("/p/a", CreateMode::Persistent))
        .unwrap();
    zk.call(session, delete("/p/a", -1)).unwrap();
    run_until(&mut zk, Duration::from_secs(3));
    assert!(zk.servers().server(0).node("/c").is_some());
    assert!(reaped(&mut zk).is_empty());
}

#[test]
fn a_lost_reply_still_brings_the_ops_own_watch_events_and_persistent_watches_come_back() {
    use zklab_recipes::client::{AddWatchMode, EventType, WatchedEvent};
    let mut zk = service(1);
    zk.add_process(0);
    let (session, _) = zk.open_session(0, None, false);
    zk.call(session, create("/p", CreateMode::Persistent))
        .unwrap();
    let watch = Op::AddWatch {
        path: "/p".to_owned(),
        mode: AddWatchMode::Persistent,
    };
    zk.call(session, watch).unwrap();
    run_until(&mut zk, Duration::from_millis(100));
    zk.lose_next_reply(0);
    let lost = zk
        .call(session, create("/p/a", CreateMode::Persistent))
        .unwrap();
    let mut outputs = run_until(&mut zk, Duration::from_millis(200));
    let changed = ZkEvent::Watch(WatchedEvent {
        event_type: EventType::NodeChildrenChanged,
        path: "/p".to_owned(),
    });
    let dropped = ZkEvent::Session(SessionEvent::Disconnected);
    assert_eq!(events(&outputs), [changed.clone(), dropped]);
    assert_eq!(replies(&outputs), [(lost, Err(ZkError::ConnectionLoss))]);
    let retry = zk.heartbeat_due(session).unwrap();
    zk.set_time(retry);
    zk.heartbeat(session);
    zk.take_outputs(&mut outputs);
    // Set again on the reconnection, the persistent watch hears the next child.
    zk.call(session, create("/p/b", CreateMode::Persistent))
        .unwrap();
    let outputs = run_until(&mut zk, retry + Duration::from_millis(200));
    assert_eq!(events(&outputs), [changed]);
}

#[test]
fn a_refused_authentication_ends_the_session_for_its_client_and_the_server_reads_no_more() {
    use crate::test_ops::add_auth;
    let mut zk = service(1);
    let (session, _) = zk.open_session(0, None, false);
    let watching = zk.call(session, exists("/w", true)).unwrap();
    let refused = zk.call(session, add_auth("foo", b"bar")).unwrap();
    // Sent before the client hears the refusal: the server, which closed the connection, never
    // applies it.
    let after = zk
        .call(session, create("/late", CreateMode::Persistent))
        .unwrap();
    let outputs = run_until(&mut zk, Duration::from_secs(1));
    let replies = replies(&outputs);
    assert!(matches!(replies[0], (id, Ok(OpResult::Exists(None))) if id == watching));
    assert_eq!(replies[1], (refused, Err(ZkError::AuthFailed)));
    assert_eq!(replies[2], (after, Err(ZkError::AuthFailed)));
    assert!(events(&outputs).contains(&ZkEvent::Session(SessionEvent::Closed)));
    assert!(zk.auth_failed(session));
    assert!(zk.servers.server(0).node("/late").is_none());
    assert!(
        zk.servers.session_alive(session),
        "the server keeps it until it expires"
    );
    assert!(zk
        .servers
        .server_mut(0)
        .take_watches(session)
        .data
        .is_empty());
    assert_eq!(
        zk.call(session, exists("/w", false)),
        Err(ZkError::AuthFailed)
    );
}

#[test]
fn an_authentication_in_flight_across_a_break_is_sent_again_rather_than_failed() {
    use crate::test_ops::add_auth;
    let mut zk = service(1);
    zk.add_process(0);
    let (session, _) = zk.open_session(0, None, false);
    let id = zk
        .call(session, add_auth("digest", b"alice:secret"))
        .unwrap();
    zk.drop_connection(session);
    let mut outputs = Vec::new();
    zk.take_outputs(&mut outputs);
    let retry = zk.heartbeat_due(session).expect("a retry");
    outputs.extend(run_until(&mut zk, retry));
    zk.heartbeat(session);
    outputs.extend(run_until(&mut zk, retry + Duration::from_secs(1)));
    assert_eq!(replies(&outputs), [(id, Ok(OpResult::Authenticated))]);
    let users = zk.servers.server(0).identity(session).who_am_i();
    assert!(users.iter().any(|info| info.user == "alice"));
}
