//! A simulated run's trace read as a timeline. Each entry is a dot: on its client's lane, or on
//! a server's for what a server did (an apply, a session it ended, a fault that struck it). The
//! trace's `Attached` entries say which server each session talks to, so each request is an
//! arrow to the server that applied it and each reply an arrow back; a reply that never came is
//! an arrow lost on the way. A change's `Notified` entry becomes a fan of arrows from the apply
//! that made the change to each watcher's `Watch`, whenever it arrived.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use zklab_recipes::client::{Op, OpReply, SessionId, Zxid};
use zklab_recipes::outcome::Outcome;

use super::layout::label;
use super::{Arrow, Clock, Dot, DotId, Holding, Landing, Lane, Mark, Message, Timeline};
use crate::fault::FaultKind;
use crate::property::Violation;
use crate::trace::{OpText, ReplyText, Trace, TraceEntry, TraceEvent};

/// How many hops past the violation the picture follows: what was in flight lands (a watcher
/// woken), what that set off lands (its request applied), and what that set off (the reply).
const HOPS: usize = 3;

impl Timeline {
    /// A simulated run, its first violation (if any) drawn where it happened. The picture goes
    /// on past the violation until its consequences have played out (three hops of messages:
    /// a watcher woken, its request applied, the reply back), and says how much of the run it
    /// leaves out after that.
    pub fn of_trace(title: impl Into<String>, trace: &Trace, violations: &[Violation]) -> Self {
        let entries = trace.entries();
        let first = violations.iter().min_by_key(|violation| violation.at);
        let mut reading = Reading::of(entries, first.map(|violation| micros(violation.at)));
        let mut shown = entries.len();
        if let Some(violation) = first {
            let end = reading.settled(micros(violation.at));
            reading.cut(end);
            shown = entries.partition_point(|entry| micros(entry.at) <= end);
        }
        let text = first.map(|violation| reading.naming_clients(&violation.to_string()));
        let blamed = reading.blamed;
        let mut timeline = reading.finished(title.into());
        if let Some(blamed) = blamed {
            timeline.blame(blamed);
        }
        if let (Some(violation), Some(text)) = (first, text) {
            timeline.violated(micros(violation.at), text);
        }
        if let Some(last) = entries.last().filter(|_| shown < entries.len()) {
            timeline.footnote(format!(
                "The run goes on to {}: {} more trace entries are not drawn.",
                label(Clock::Micros, micros(last.at)),
                entries.len() - shown
            ));
        }
        timeline
    }
}

/// A sim time on the picture's clock.
fn micros(at: Duration) -> u64 {
    u64::try_from(at.as_micros()).unwrap_or(u64::MAX)
}

/// A request on its way: sent, perhaps applied, not yet answered.
struct InFlight {
    request: DotId,
    op: Op,
    /// The apply, and what the server answered.
    applied: Option<(DotId, OpReply)>,
}

/// One change's notifications, linked once every watch event is read.
struct Change {
    origin: DotId,
    zxid: Zxid,
    cause: String,
    sessions: Vec<SessionId>,
}

/// What reading a trace keeps track of.
struct Reading {
    timeline: Timeline,
    /// Each session's client, and each client's sessions in order.
    clients: BTreeMap<SessionId, usize>,
    sessions: BTreeMap<usize, Vec<SessionId>>,
    /// The server each session is attached to, where the trace says.
    servers: BTreeMap<SessionId, usize>,
    /// The servers the trace named leader, and the one that leads now.
    leaders: BTreeSet<usize>,
    leader: usize,
    in_flight: BTreeMap<SessionId, VecDeque<InFlight>>,
    /// The apply of each write, by session and zxid; the end of each session.
    writes: BTreeMap<(SessionId, Zxid), DotId>,
    ended: BTreeMap<SessionId, DotId>,
    /// Each watch event a client received, by session, zxid and changed node.
    watches: BTreeMap<(SessionId, Zxid, String), DotId>,
    changes: Vec<Change>,
    /// What each client holds, since which dot.
    holding: BTreeMap<usize, (DotId, String)>,
    /// When the violation happened, and the dot it is about: the change a `Notified` entry of
    /// that time tells of, or else the last dot of that time.
    blame_at: Option<u64>,
    blamed: Option<DotId>,
    blamed_change: bool,
}

impl Reading {
    /// `entries` read, blaming what happened at `blame_at`.
    fn of(entries: &[TraceEntry], blame_at: Option<u64>) -> Reading {
        let mut reading = Reading {
            timeline: Timeline::new("", Clock::Micros),
            clients: BTreeMap::new(),
            sessions: BTreeMap::new(),
            servers: BTreeMap::new(),
            leaders: BTreeSet::new(),
            leader: 0,
            in_flight: BTreeMap::new(),
            writes: BTreeMap::new(),
            ended: BTreeMap::new(),
            watches: BTreeMap::new(),
            changes: Vec::new(),
            holding: BTreeMap::new(),
            blame_at,
            blamed: None,
            blamed_change: false,
        };
        for entry in entries {
            reading.read(entry);
        }
        reading.link();
        reading
    }

    /// The time by which what departed up to `after` has landed, and what that set off, for
    /// [`HOPS`] hops.
    fn settled(&self, after: u64) -> u64 {
        let dots = &self.timeline.dots;
        (0..HOPS).fold(after, |end, _| {
            (self.timeline.messages.iter())
                .filter(|message| dots[message.from.0].at <= end)
                .filter_map(|message| match message.to {
                    Landing::At(to) => Some(dots[to.0].at),
                    Landing::Lost(_) => None,
                })
                .fold(end, u64::max)
        })
    }

    /// Leaves out every dot after `end` (the dots come in time order, so those are the last),
    /// with the arrows to and from them; a holding that ends after `end` lasts to the bottom.
    fn cut(&mut self, end: u64) {
        let timeline = &mut self.timeline;
        let kept = timeline.dots.partition_point(|dot| dot.at <= end);
        timeline.dots.truncate(kept);
        let inside = |id: DotId| id.0 < kept;
        timeline.messages.retain(|message| {
            inside(message.from)
                && match message.to {
                    Landing::At(to) => inside(to),
                    Landing::Lost(_) => true,
                }
        });
        timeline.holdings.retain(|holding| inside(holding.from));
        for holding in &mut timeline.holdings {
            holding.until = holding.until.filter(|until| inside(*until));
        }
        self.holding.retain(|_, (from, _)| inside(*from));
    }

    /// `text` with each session it names followed by its client: `s4` reads `s4 (c0)`.
    fn naming_clients(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find('s') {
            let (before, from) = rest.split_at(start);
            out.push_str(before);
            let digits = from[1..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(from.len() - 1);
            let word_start = !out.chars().last().is_some_and(char::is_alphanumeric);
            let word_end = !from[1 + digits..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
            out.push_str(&from[..1 + digits]);
            let session = from[1..1 + digits].parse::<SessionId>().ok();
            if let Some(client) = session
                .filter(|_| word_start && word_end)
                .and_then(|session| self.clients.get(&session))
            {
                out.push_str(&format!(" (c{client})"));
            }
            rest = &from[1 + digits..];
        }
        out.push_str(rest);
        out
    }

    /// The timeline, its lanes named and its holdings closed, titled `title`.
    fn finished(mut self, title: String) -> Timeline {
        self.timeline.title = title;
        for (client, (from, what)) in std::mem::take(&mut self.holding) {
            self.timeline.holding(Holding {
                lane: Lane::Client(client),
                from,
                until: None,
                what,
            });
        }
        for (client, sessions) in &self.sessions {
            let sessions: Vec<String> = sessions.iter().map(|s| format!("s{s}")).collect();
            let name = format!("c{client} · {}", sessions.join(", "));
            self.timeline.name(Lane::Client(*client), name);
        }
        let ensemble = !self.servers.is_empty();
        let servers: BTreeSet<usize> = self.servers.values().copied().collect();
        for server in servers {
            let role = if self.leaders.contains(&server) {
                " · leader"
            } else {
                ""
            };
            self.timeline
                .name(Lane::Server(server), format!("server {server}{role}"));
        }
        if !ensemble {
            self.timeline.name(Lane::Server(0), "server");
        }
        self.timeline
    }

    /// The server session `session` talks to (a standalone server's is 0).
    fn server_of(&self, session: SessionId) -> Lane {
        Lane::Server(self.servers.get(&session).copied().unwrap_or(0))
    }

    /// The server client `client`'s latest session talks to.
    fn server_of_client(&self, client: usize) -> Lane {
        let session = self.sessions.get(&client).and_then(|s| s.last());
        session.map_or(Lane::Server(0), |session| self.server_of(*session))
    }

    fn dot(&mut self, entry: &TraceEntry, lane: Lane, mark: Mark, text: String) -> DotId {
        self.timeline.dot(Dot {
            at: micros(entry.at),
            lane,
            mark,
            text,
            whole: entry.to_string().trim_start().to_owned(),
        })
    }

    fn message(&mut self, arrow: Arrow, from: DotId, to: Landing) {
        self.timeline.message(Message { arrow, from, to });
    }

    /// Reads one entry, and blames it if the violation happened then.
    fn read(&mut self, entry: &TraceEntry) {
        let dots = self.timeline.dots.len();
        self.tell(entry);
        if self.blame_at != Some(micros(entry.at)) || self.blamed_change {
            return;
        }
        if let TraceEvent::Notified { .. } = entry.event {
            self.blamed = self.changes.last().map(|change| change.origin);
            self.blamed_change = true;
        } else if self.timeline.dots.len() > dots {
            self.blamed = Some(DotId(self.timeline.dots.len() - 1));
        }
    }

    /// Draws one entry.
    fn tell(&mut self, entry: &TraceEntry) {
        if let (Some(client), Some(session)) = entry.event.actors() {
            let client = client as usize;
            self.clients.insert(session, client);
            let sessions = self.sessions.entry(client).or_default();
            if !sessions.contains(&session) {
                sessions.push(session);
            }
        }
        match &entry.event {
            TraceEvent::Request {
                client,
                session,
                op,
            } => {
                let lane = Lane::Client(*client as usize);
                let request = self.dot(entry, lane, Mark::Request, OpText(op).to_string());
                let op = op.clone();
                let flight = InFlight {
                    request,
                    op,
                    applied: None,
                };
                self.in_flight
                    .entry(*session)
                    .or_default()
                    .push_back(flight);
            }
            TraceEvent::Applied {
                session,
                zxid,
                op,
                reply,
                ..
            } => self.applied(entry, *session, *zxid, op, reply),
            TraceEvent::Reply {
                client,
                session,
                reply,
            } => self.replied(entry, *client as usize, *session, reply),
            TraceEvent::Watch {
                client,
                session,
                event,
                zxid,
                cause,
                ..
            } => {
                let lane = Lane::Client(*client as usize);
                let text = format!("woken: {:?} {}", event.event_type, event.path);
                let id = self.dot(entry, lane, Mark::Watch, text);
                self.watches.insert((*session, *zxid, cause.clone()), id);
            }
            TraceEvent::Notified {
                by,
                zxid,
                cause,
                deletion,
                sessions,
            } => self.notified(entry, *by, *zxid, cause, *deletion, sessions),
            // The reaper's delete is the leader's own; the watches it fires hang off it.
            TraceEvent::Reaped { zxid, path } => {
                let text = format!("reaper deletes {path}");
                let id = self.dot(entry, Lane::Server(self.leader), Mark::Applied, text);
                self.writes.insert((0, *zxid), id);
            }
            TraceEvent::Session {
                client,
                session,
                event,
            } => {
                let text = format!("s{session} {event:?}");
                self.dot(entry, Lane::Client(*client as usize), Mark::Session, text);
            }
            TraceEvent::SessionOpened { client, session } => {
                let text = format!("s{session} opened");
                self.dot(entry, Lane::Client(*client as usize), Mark::Session, text);
            }
            TraceEvent::SessionEnded {
                client,
                session,
                expired,
                deleted,
            } => {
                let how = if *expired { "expired" } else { "closed" };
                let text = match deleted.len() {
                    0 => format!("s{session} {how}"),
                    some => format!("s{session} {how}, {some} deleted"),
                };
                let lane = self.server_of(*session);
                let id = self.dot(entry, lane, Mark::Session, text);
                self.ended.insert(*session, id);
                self.let_go(*client as usize, id);
            }
            TraceEvent::Attached {
                client,
                session,
                server,
                leader,
            } => {
                self.servers.insert(*session, *server);
                if *leader {
                    self.leaders.insert(*server);
                    self.leader = *server;
                }
                let role = if *leader { "leader" } else { "follower" };
                let text = format!("s{session} on server {server} ({role})");
                self.dot(entry, Lane::Client(*client as usize), Mark::Session, text);
            }
            TraceEvent::Fault {
                kind,
                client,
                detail,
                ..
            } => {
                let client = *client as usize;
                let lane = match kind {
                    FaultKind::ServerCrash | FaultKind::StaleRead => self.server_of_client(client),
                    FaultKind::LeaderChange => Lane::Server(self.leader),
                    _ => Lane::Client(client),
                };
                let id = self.dot(entry, lane, Mark::Fault, format!("{kind}: {detail}"));
                if *kind == FaultKind::Crash {
                    self.let_go(client, id);
                }
            }
            TraceEvent::Outcome {
                client, outcome, ..
            } => {
                let client = *client as usize;
                let lane = Lane::Client(client);
                let id = self.dot(entry, lane, Mark::Outcome, outcome.to_string());
                match outcome {
                    Outcome::Granted { role, .. } | Outcome::Shared { role, .. } => {
                        self.holding
                            .entry(client)
                            .or_insert((id, (*role).to_owned()));
                    }
                    Outcome::Released { .. }
                    | Outcome::Lost
                    | Outcome::Revoked { .. }
                    | Outcome::Failed(_) => self.let_go(client, id),
                    _ => {}
                }
            }
            TraceEvent::Resource {
                client,
                read,
                token,
                accepted,
            } => {
                let verdict = if *accepted { "accepted" } else { "refused" };
                let how = if *read { "read" } else { "write" };
                let text = format!("resource {how} token={token} {verdict}");
                self.dot(entry, Lane::Client(*client as usize), Mark::Outcome, text);
            }
            TraceEvent::Finished { client } => {
                let lane = Lane::Client(*client as usize);
                self.dot(entry, lane, Mark::Session, "finished".to_owned());
            }
            TraceEvent::Stranded { client } => {
                let lane = Lane::Client(*client as usize);
                self.dot(entry, lane, Mark::Session, "stranded".to_owned());
            }
            // What code declares is for the monitors: the picture shows what it did.
            TraceEvent::Declared { .. } => {}
            TraceEvent::Note { client, text } => {
                self.dot(
                    entry,
                    Lane::Client(*client as usize),
                    Mark::Note,
                    text.clone(),
                );
            }
        }
    }

    /// A server applied `op` for `session`: a dot on its lane, the request's arrow ending there.
    fn applied(
        &mut self,
        entry: &TraceEntry,
        session: SessionId,
        zxid: Zxid,
        op: &Op,
        reply: &OpReply,
    ) {
        let op_text = OpText(op).to_string();
        let verb = op_text.split(' ').next().unwrap_or_default();
        let text = match reply {
            Ok(_) if op.is_write() => format!("s{session} {verb} z{zxid}"),
            Ok(_) => format!("s{session} {verb}"),
            Err(error) => format!("s{session} {verb} {error:?}"),
        };
        let id = self.dot(entry, self.server_of(session), Mark::Applied, text);
        if op.is_write() {
            self.writes.insert((session, zxid), id);
        }
        let flights = self.in_flight.entry(session).or_default();
        let flight = flights
            .iter_mut()
            .find(|flight| flight.applied.is_none() && flight.op == *op);
        if let Some(flight) = flight {
            flight.applied = Some((id, reply.clone()));
            let request = flight.request;
            self.message(Arrow::Request, request, Landing::At(id));
        }
    }

    /// A reply reached `client`: the arrow from the apply it answers, or, if the server's
    /// answer was another (the connection dropped it), that answer lost on the way and this
    /// one the client's own.
    fn replied(&mut self, entry: &TraceEntry, client: usize, session: SessionId, reply: &OpReply) {
        let lane = Lane::Client(client);
        let id = self.dot(entry, lane, Mark::Reply, ReplyText(reply).to_string());
        let Some(flight) = self.in_flight.entry(session).or_default().pop_front() else {
            return;
        };
        match flight.applied {
            Some((applied, answer)) if answer == *reply => {
                self.message(Arrow::Reply, applied, Landing::At(id));
            }
            Some((applied, _)) => self.message(Arrow::Reply, applied, Landing::Lost(lane)),
            None => {
                let server = self.server_of(session);
                self.message(Arrow::Request, flight.request, Landing::Lost(server));
            }
        }
    }

    /// A change notified `sessions`: remembered, to draw from the apply (or the session's end)
    /// that made it once every watch event is read.
    fn notified(
        &mut self,
        entry: &TraceEntry,
        by: SessionId,
        zxid: Zxid,
        cause: &str,
        deletion: bool,
        sessions: &[SessionId],
    ) {
        let made = (self.writes.get(&(by, zxid))).or_else(|| self.ended.get(&by));
        let origin = match made {
            Some(&origin) => {
                let told = entry.to_string();
                let whole = &mut self.timeline.dots[origin.0].whole;
                whole.push('\n');
                whole.push_str(told.trim_start());
                origin
            }
            None => {
                let change = if deletion { "deleting" } else { "changing" };
                let text = format!("s{by} {change} {cause}");
                self.dot(entry, self.server_of(by), Mark::Applied, text)
            }
        };
        self.changes.push(Change {
            origin,
            zxid,
            cause: cause.to_owned(),
            sessions: sessions.to_vec(),
        });
    }

    /// Client `client` stops holding what it held, at dot `until`.
    fn let_go(&mut self, client: usize, until: DotId) {
        if let Some((from, what)) = self.holding.remove(&client) {
            self.timeline.holding(Holding {
                lane: Lane::Client(client),
                from,
                until: Some(until),
                what,
            });
        }
    }

    /// Each change's arrows: to the watch event each notified session received, or lost on the
    /// way to its client if it never received one.
    fn link(&mut self) {
        for change in std::mem::take(&mut self.changes) {
            for session in &change.sessions {
                let key = (*session, change.zxid, change.cause.clone());
                let to = match (self.watches.get(&key), self.clients.get(session)) {
                    (Some(&watch), _) => Landing::At(watch),
                    (None, Some(&client)) => Landing::Lost(Lane::Client(client)),
                    (None, None) => continue,
                };
                self.message(Arrow::Wake, change.origin, to);
            }
        }
    }
}
