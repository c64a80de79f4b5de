//! A counterexample as a picture, drawn as the simulator's runs are: the model's one server has
//! a lane of its own, where each step it takes (applying an op, losing a reply, expiring a
//! session) is a dot; each client has a lane for what it sends, takes from its inbox and comes
//! to hold. An op is an arrow from the step that sent it to the step that applied it, and every
//! reply and fired watch an arrow from that apply to the step that took it, so the picture
//! shows what the server did and when each client heard of it.

use std::collections::VecDeque;

use zklab_recipes::client::{SessionId, ZkEvent};
use zklab_sim::picture::{
    Arrow, Clock, Dot, DotId, Holding, Landing, Lane, Mark, Message, Timeline,
};
use zklab_sim::trace::OpText;

use crate::model::{Action, ActionOf, Inbound, StateOf};
use crate::render::{beliefs, inbound, op, Step};
use crate::workload::Workload;

/// The model's server's lane.
const SERVER: Lane = Lane::Server(0);

/// What a client holds, in the model's words: it knows only that the recipe granted something.
const HELD: &str = "what the recipe granted";

/// A whole path laid out for a picture, ending in the violation of `property`.
pub fn timeline<W: Workload>(
    property: &str,
    clients: usize,
    steps: &[(StateOf<W>, ActionOf<W>, StateOf<W>)],
) -> Timeline {
    let mut sketch = Sketch {
        timeline: Timeline::new(format!("counterexample: {property}"), Clock::Steps),
        sent: vec![None; clients],
        inbound: vec![VecDeque::new(); clients],
        holding: vec![None; clients],
        last: None,
    };
    let (Some((first, _, _)), Some((_, _, last))) = (steps.first(), steps.last()) else {
        return sketch.timeline;
    };
    // The ops the clients had sent when the path begins, as step 0.
    for (c, client) in first.clients.iter().enumerate() {
        if let Some(sent) = &client.outbox {
            let text = OpText(sent).to_string();
            sketch.sent[c] = Some(sketch.timeline.dot(Dot {
                at: 0,
                lane: Lane::Client(c),
                mark: Mark::Request,
                whole: format!("step 0: c{c} s{} -> {text}", client.session),
                text,
            }));
        }
    }
    for (number, (before, action, after)) in steps.iter().enumerate() {
        let step = Step::<W> {
            before,
            action,
            after,
        };
        sketch.step(number as u64 + 1, &step);
    }
    let mut timeline = sketch.finished::<W>(steps);
    let at = steps.len() as u64;
    timeline.violated(at, format!("{property}: {}", beliefs(&last.clients)));
    timeline
}

/// What drawing a path keeps track of.
struct Sketch {
    timeline: Timeline,
    /// The dot each client's op in flight left from.
    sent: Vec<Option<DotId>>,
    /// Each client's inbox, item by item: the dot it left from and what it carries, or nothing
    /// for the client's own news (a broken connection).
    inbound: Vec<VecDeque<Option<(DotId, Arrow)>>>,
    /// The dot from which each client holds what the recipe granted, if it does.
    holding: Vec<Option<DotId>>,
    /// The main dot of the last step drawn: the step that broke the property.
    last: Option<DotId>,
}

impl Sketch {
    /// Draws step `at`.
    fn step<W: Workload>(&mut self, at: u64, step: &Step<W>) {
        let Some(c) = step.action.client() else {
            return self.reaped(at, step);
        };
        let client = &step.before.clients[c];
        let session = client.session;
        let whole = format!("step {at}: {}", step.line());
        let dot = |timeline: &mut Timeline, lane, mark, text: String| {
            timeline.dot(Dot {
                at,
                lane,
                mark,
                text,
                whole: whole.clone(),
            })
        };
        let own = Lane::Client(c);
        let verb = op(client);
        let verb = verb.split(' ').next().unwrap_or_default();
        // The server's dot this step, where its replies and notifications leave from.
        let mut origin = None;
        let acted = match step.action {
            Action::Apply(_) => {
                let text = format!("s{session} {verb}");
                let id = dot(&mut self.timeline, SERVER, Mark::Applied, text);
                self.arrive(c, Landing::At(id));
                origin = Some(id);
                id
            }
            Action::Deliver(_) => {
                let item = client.inbox.front();
                let mark = match item {
                    Some(Inbound::Reply(_)) => Mark::Reply,
                    Some(Inbound::Event(ZkEvent::Watch(_))) => Mark::Watch,
                    _ => Mark::Session,
                };
                let id = dot(
                    &mut self.timeline,
                    own,
                    mark,
                    format!("takes {}", inbound(item)),
                );
                if let Some(Some((from, arrow))) = self.inbound[c].pop_front() {
                    let to = Landing::At(id);
                    self.timeline.message(Message { arrow, from, to });
                }
                id
            }
            Action::Request(_, request) => {
                let text = format!("application asks {request:?}");
                dot(&mut self.timeline, own, Mark::Note, text)
            }
            Action::Timeout(_) => dot(&mut self.timeline, own, Mark::Note, "timer goes off".into()),
            Action::ConnectionLoss(_) => {
                self.arrive(c, Landing::Lost(SERVER));
                let text = format!("connection-loss before apply: {}", op(client));
                dot(&mut self.timeline, own, Mark::Fault, text)
            }
            Action::LostReply(_) => {
                let text = format!("s{session} {verb}, reply lost");
                let id = dot(&mut self.timeline, SERVER, Mark::Applied, text);
                self.arrive(c, Landing::At(id));
                origin = Some(id);
                let to = Landing::Lost(own);
                (self.timeline).message(Message {
                    arrow: Arrow::Reply,
                    from: id,
                    to,
                });
                let text = "lost-reply: applied, reply lost".to_owned();
                dot(&mut self.timeline, own, Mark::Fault, text);
                id
            }
            Action::SessionExpiry(_) | Action::Reap(_) => {
                let text = format!("session-expiry: expires s{session}");
                let id = dot(&mut self.timeline, SERVER, Mark::Fault, text);
                origin = Some(id);
                id
            }
        };
        self.last = Some(acted);
        let after = &step.after.clients[c];
        if let (None, Some(next)) = (&client.outbox, &after.outbox) {
            let text = OpText(next).to_string();
            self.sent[c] = Some(dot(&mut self.timeline, own, Mark::Request, text));
        }
        for k in 0..self.inbound.len() {
            self.posted(step, k, origin);
            let (held, holds) = (
                step.before.clients[k].application.holds,
                step.after.clients[k].application.holds,
            );
            if held != holds {
                let text = if holds { "now holds" } else { "lets go" };
                let id = dot(
                    &mut self.timeline,
                    Lane::Client(k),
                    Mark::Outcome,
                    text.to_owned(),
                );
                self.held(k, holds, id);
            }
        }
    }

    /// Draws step `at`, the server's reaper deleting a node: the watches it fired leave from it.
    fn reaped<W: Workload>(&mut self, at: u64, step: &Step<W>) {
        let line = step.line();
        let text = line
            .split(" | ")
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        let id = self.timeline.dot(Dot {
            at,
            lane: SERVER,
            mark: Mark::Applied,
            text,
            whole: format!("step {at}: {line}"),
        });
        self.last = Some(id);
        for k in 0..self.inbound.len() {
            self.posted(step, k, Some(id));
        }
    }

    /// Client `c`'s op in flight lands at `to`.
    fn arrive(&mut self, c: usize, to: Landing) {
        if let Some(from) = self.sent[c].take() {
            (self.timeline).message(Message {
                arrow: Arrow::Request,
                from,
                to,
            });
        }
    }

    /// Follows client `k`'s inbox through `step`: what was in it and is gone untaken (its
    /// session started over) was lost on the way; what joined it left from `origin`.
    fn posted<W: Workload>(&mut self, step: &Step<W>, k: usize, origin: Option<DotId>) {
        let (before, after) = (&step.before.clients[k].inbox, &step.after.clients[k].inbox);
        let taken = usize::from(matches!(step.action, Action::Deliver(c) if *c == k));
        let mut kept = before.len() - taken;
        if after.len() < kept {
            for (from, arrow) in self.inbound[k].drain(..).flatten() {
                let to = Landing::Lost(Lane::Client(k));
                self.timeline.message(Message { arrow, from, to });
            }
            kept = 0;
        }
        for item in after.iter().skip(kept) {
            let arrow = match item {
                Inbound::Break { .. } => None,
                Inbound::Event(ZkEvent::Watch(_)) => Some(Arrow::Wake),
                Inbound::Reply(_) | Inbound::Event(ZkEvent::Session(_)) => Some(Arrow::Reply),
            };
            let carried = origin.zip(arrow);
            self.inbound[k].push_back(carried);
        }
    }

    /// Client `k` comes to hold (or stops holding) at dot `at`.
    fn held(&mut self, k: usize, holds: bool, at: DotId) {
        match (holds, self.holding[k].take()) {
            (true, _) => self.holding[k] = Some(at),
            (false, Some(from)) => self.timeline.holding(Holding {
                lane: Lane::Client(k),
                from,
                until: Some(at),
                what: HELD.to_owned(),
            }),
            (false, None) => {}
        }
    }

    /// The timeline, its holdings closed and its lanes named with every session each client had
    /// along the path.
    fn finished<W: Workload>(
        mut self,
        steps: &[(StateOf<W>, ActionOf<W>, StateOf<W>)],
    ) -> Timeline {
        for (k, from) in self.holding.iter().enumerate() {
            if let Some(from) = *from {
                self.timeline.holding(Holding {
                    lane: Lane::Client(k),
                    from,
                    until: None,
                    what: HELD.to_owned(),
                });
            }
        }
        if let Some(last) = self.last {
            self.timeline.blame(last);
        }
        self.timeline.name(SERVER, "ZooKeeper server");
        for k in 0..self.inbound.len() {
            let mut sessions: Vec<SessionId> = Vec::new();
            for (before, _, after) in steps {
                for state in [before, after] {
                    let session = state.clients[k].session;
                    if !sessions.contains(&session) {
                        sessions.push(session);
                    }
                }
            }
            let sessions: Vec<String> = sessions.iter().map(|s| format!("s{s}")).collect();
            (self.timeline).name(Lane::Client(k), format!("c{k} · {}", sessions.join(", ")));
        }
        self.timeline
    }
}
