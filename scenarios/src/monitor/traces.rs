//! Small traces for the monitors' tests.

use std::time::Duration;

use zklab_recipes::acl::Acls;
use zklab_recipes::client::{CreateMode, Op, OpResult, SessionId, Stat};
use zklab_recipes::outcome::Outcome;
use zklab_sim::fault::FaultKind;
use zklab_sim::property::{Monitor, Property};
use zklab_sim::trace::{ClientId, Trace, TraceEntry, TraceEvent};

/// `event` at `ms` milliseconds into the run.
pub(crate) fn at(ms: u64, event: TraceEvent) -> TraceEntry {
    TraceEntry {
        at: Duration::from_millis(ms),
        event,
    }
}

/// The server applied `op` for `session` (client 0), answering `reply`, at the start of the run.
pub(crate) fn applied(session: SessionId, op: Op, reply: OpResult) -> TraceEntry {
    at(
        0,
        TraceEvent::Applied {
            client: 0,
            session,
            zxid: 1,
            op,
            reply: Ok(reply),
        },
    )
}

/// `client`'s process died.
pub(crate) fn crashed(client: ClientId) -> TraceEvent {
    TraceEvent::Fault {
        kind: FaultKind::Crash,
        client,
        detail: "process killed".to_owned(),
        lasts: Duration::MAX,
    }
}

/// The property of the first violation `monitor` finds among `entries`.
pub(crate) fn first_broken(
    mut monitor: impl Monitor,
    entries: &[TraceEntry],
) -> Option<&'static Property> {
    let found = entries.iter().find_map(|entry| monitor.observe(entry));
    found.map(|violation| violation.property)
}

/// The property of the first violation `monitor` finds in `events`, a millisecond apart.
pub(crate) fn first_broken_in(
    monitor: impl Monitor,
    events: Vec<TraceEvent>,
) -> Option<&'static Property> {
    first_broken(monitor, trace(events).entries())
}

/// `events`, a millisecond apart.
pub(crate) fn trace(events: Vec<TraceEvent>) -> Trace {
    let mut trace = Trace::new();
    for (i, event) in events.into_iter().enumerate() {
        trace.push(Duration::from_millis(i as u64), event);
    }
    trace
}

/// A trace of `entries`, at their times.
pub(crate) fn trace_of(entries: Vec<TraceEntry>) -> Trace {
    let mut trace = Trace::new();
    for entry in entries {
        trace.push(entry.at, entry.event);
    }
    trace
}

pub(crate) fn outcome(client: ClientId, session: SessionId, outcome: Outcome) -> TraceEvent {
    TraceEvent::Outcome {
        client,
        session,
        outcome,
    }
}

pub(crate) fn granted(token: i64) -> Outcome {
    Outcome::Granted {
        role: "lock",
        token,
    }
}

pub(crate) fn ended(client: ClientId, session: SessionId, deleted: &[&str]) -> TraceEvent {
    let deleted = deleted.iter().map(|p| p.to_string()).collect();
    TraceEvent::SessionEnded {
        client,
        session,
        expired: true,
        deleted,
    }
}

pub(crate) fn created(client: ClientId, session: SessionId, path: &str) -> TraceEvent {
    let op = Op::Create {
        path: path.to_owned(),
        data: Vec::new(),
        mode: CreateMode::EphemeralSequential,
        acl: Acls::OPEN,
    };
    let reply = Ok(OpResult::Created {
        path: path.to_owned(),
        stat: Stat::default(),
    });
    TraceEvent::Applied {
        client,
        session,
        zxid: 1,
        op,
        reply,
    }
}

/// `client`'s session `session` set `path` to `data`, over any version, applied.
pub(crate) fn set_applied(
    client: ClientId,
    session: SessionId,
    path: &str,
    data: Vec<u8>,
) -> TraceEvent {
    let op = Op::SetData {
        path: path.to_owned(),
        data,
        version: -1,
    };
    TraceEvent::Applied {
        client,
        session,
        zxid: 1,
        op,
        reply: Ok(OpResult::SetData(Stat::default())),
    }
}

pub(crate) fn watches(client: ClientId, session: SessionId, path: &str) -> TraceEvent {
    let op = Op::Exists {
        path: path.to_owned(),
        watch: true,
    };
    TraceEvent::Applied {
        client,
        session,
        zxid: 1,
        op,
        reply: Ok(OpResult::Exists(Some(Stat::default()))),
    }
}
