//! A run as a picture, drawn the way a sequence diagram is: a lane per server and per client,
//! time running down a scale that cuts long quiet stretches short, an arrow for every request,
//! reply and watch notification, so one deletion that wakes a herd is a fan of arrows. What a
//! recipe granted (a lock, a lease, leadership) is a bar along its holder's lane, a fault a red
//! mark on the lane it struck, and the violation is named in words at the top and drawn across
//! every lane at its time. Long text is shortened on the page and whole in its tooltip. The
//! picture is one self-contained SVG (or an HTML page around it): no script, nothing fetched,
//! and the same timeline always gives the same bytes.
//!
//! A simulated run's [`Trace`](crate::trace::Trace) ([`Timeline::of_trace`]) and a model
//! checker's counterexample (built with [`Timeline::dot`], [`Timeline::message`] and friends)
//! both become a [`Timeline`], which draws itself.

mod drawing;
mod header;
mod layout;
mod lettering;
mod reading;

/// Where a dot goes: the lanes run across the picture, servers first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lane {
    /// A server, by index (a standalone server is server 0): what it applied, whom a change
    /// notified, the faults that struck it.
    Server(usize),
    /// A client, by id: what it sent and heard, what its recipe told it, the faults that struck it.
    Client(usize),
}

/// What kind of thing a dot is, which sets its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A client sends a request.
    Request,
    /// A server applies a request (or serves a read).
    Applied,
    /// A reply reaches a client.
    Reply,
    /// A watch notification reaches a client.
    Watch,
    /// A session's or a connection's news.
    Session,
    /// An injected fault.
    Fault,
    /// What a recipe told its application, or a use of the protected resource.
    Outcome,
    /// A line of the code under test, or of the model (a timer, the application's request).
    Note,
}

/// What an arrow carries, which sets its colour and its class in the SVG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrow {
    /// A request, from a client to the server that applies it.
    Request,
    /// A reply, from the server back to the client.
    Reply,
    /// A watch notification, from the change that fired it to the watcher it woke.
    Wake,
}

/// How the times of a timeline read, and so how its scale runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Sim time in microseconds: the scale follows it, and long quiet gaps are cut short.
    Micros,
    /// A model's steps: each step a row of its own.
    Steps,
}

/// One thing that happened on one lane at one time: a dot with a line of text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dot {
    /// When, on the timeline's [`Clock`].
    pub at: u64,
    /// Its lane.
    pub lane: Lane,
    /// Its kind.
    pub mark: Mark,
    /// What the page says, cut to the lane's width if need be.
    pub text: String,
    /// The whole story, shown on hover (the trace line, the model's step).
    pub whole: String,
}

/// A dot, by its place in the timeline: what arrows and holdings start and end at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DotId(usize);

/// Where an arrow ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landing {
    /// At the dot that received it.
    At(DotId),
    /// Nowhere: lost on its way to this lane (a lost reply, a request the connection dropped, a
    /// notification for a session that ended first).
    Lost(Lane),
}

/// An arrow between lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// What it carries.
    pub arrow: Arrow,
    /// The dot it leaves from; every [`Arrow::Wake`] leaving one dot is drawn as one fan.
    pub from: DotId,
    /// Where it ends.
    pub to: Landing,
}

/// A stretch in which a client holds what a recipe granted it: a bar along its lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holding {
    /// The holder's lane.
    pub lane: Lane,
    /// The dot from which it holds.
    pub from: DotId,
    /// The dot at which it stops holding; none if it still holds where the picture ends.
    pub until: Option<DotId>,
    /// What it holds, in the recipe's words ("lock", "leadership").
    pub what: String,
}

/// A run laid out for drawing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    title: String,
    clock: Clock,
    /// The lanes' names, where a lane has one other than its default ("c2", "server 0").
    names: Vec<(Lane, String)>,
    dots: Vec<Dot>,
    messages: Vec<Message>,
    holdings: Vec<Holding>,
    /// The violation: when, and what it says.
    violation: Option<(u64, String)>,
    /// The dot the violation is about, ringed, its fan of wake-ups drawn loud.
    blamed: Option<DotId>,
    /// What the picture leaves out at its end, if anything.
    footnote: Option<String>,
}

impl Timeline {
    /// An empty timeline whose times read on `clock`.
    pub fn new(title: impl Into<String>, clock: Clock) -> Self {
        Timeline {
            title: title.into(),
            clock,
            names: Vec::new(),
            dots: Vec::new(),
            messages: Vec::new(),
            holdings: Vec::new(),
            violation: None,
            blamed: None,
            footnote: None,
        }
    }

    /// Names `lane` (a client with its sessions, "c2 · s3, s7"; a server with its role); a lane
    /// named shows even if nothing happens on it.
    pub fn name(&mut self, lane: Lane, name: impl Into<String>) {
        let name = name.into();
        match self.names.iter_mut().find(|(named, _)| *named == lane) {
            Some((_, old)) => *old = name,
            None => self.names.push((lane, name)),
        }
    }

    /// Adds a dot; dots may come in any order of time.
    pub fn dot(&mut self, dot: Dot) -> DotId {
        self.dots.push(dot);
        DotId(self.dots.len() - 1)
    }

    /// Adds an arrow between two dots (or from one, lost).
    pub fn message(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Adds a stretch of holding.
    pub fn holding(&mut self, holding: Holding) {
        self.holdings.push(holding);
    }

    /// Marks the violation `text` at time `at`: drawn after every dot up to then.
    pub fn violated(&mut self, at: u64, text: impl Into<String>) {
        self.violation = Some((at, text.into()));
    }

    /// Names the dot the violation is about (the change that woke a herd, the grant of a second
    /// holder): it is ringed, and if it is a change, its fan of wake-ups is drawn loud.
    pub fn blame(&mut self, dot: DotId) {
        self.blamed = Some(dot);
    }

    /// Says, under the last row, what the picture leaves out.
    pub fn footnote(&mut self, text: impl Into<String>) {
        self.footnote = Some(text.into());
    }

    /// The picture, as an SVG document.
    pub fn svg(&self) -> String {
        drawing::svg(self, &layout::Layout::of(self))
    }

    /// The picture, as an HTML page.
    pub fn html(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head>\n\
             <body style=\"margin:0;background:#fff\">\n{}</body></html>\n",
            lettering::escaped(&self.title),
            self.svg()
        )
    }

    /// The dot `id` names.
    fn at(&self, id: DotId) -> &Dot {
        &self.dots[id.0]
    }

    /// Every lane, servers first and then clients, each in order.
    fn lanes(&self) -> Vec<Lane> {
        let mut lanes: Vec<Lane> = (self.names.iter().map(|(lane, _)| *lane))
            .chain(self.dots.iter().map(|dot| dot.lane))
            .collect();
        lanes.sort();
        lanes.dedup();
        lanes
    }

    /// The name a lane shows at its head.
    fn lane_name(&self, lane: Lane) -> String {
        match self.names.iter().find(|(named, _)| *named == lane) {
            Some((_, name)) => name.clone(),
            None => match lane {
                Lane::Server(server) => format!("server {server}"),
                Lane::Client(client) => format!("c{client}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zklab_recipes::client::{
        CreateMode, EventType, Op, OpResult, SessionId, Stat, WatchedEvent,
    };
    use zklab_recipes::outcome::Outcome;

    use super::*;
    use crate::fault::FaultKind;
    use crate::property::{Property, Violation};
    use crate::trace::{ClientId, Trace, TraceEvent};
    use zklab_recipes::acl::Acls;

    static HERD: Property = Property::new("herd", "herd-freedom");

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Client `client` (session `session`) sends `op` at `sent`; the server applies it a
    /// millisecond later as `zxid`, answering `result`, which arrives a millisecond after that.
    fn round_trip(
        trace: &mut Trace,
        sent: u64,
        (client, session): (ClientId, SessionId),
        op: Op,
        zxid: i64,
        result: OpResult,
    ) {
        let request = TraceEvent::Request {
            client,
            session,
            op: op.clone(),
        };
        trace.push(ms(sent), request);
        let reply = Ok(result);
        let applied = TraceEvent::Applied {
            client,
            session,
            zxid,
            op,
            reply: reply.clone(),
        };
        trace.push(ms(sent + 1), applied);
        let replied = TraceEvent::Reply {
            client,
            session,
            reply,
        };
        trace.push(ms(sent + 2), replied);
    }

    /// Four clients on two servers: c0 creates /l/n and holds the lock; the three others ask
    /// for the children with a watch; a pause strikes c3 and a crash server 1 (c2's). Two
    /// seconds later c0 deletes its node, which wakes all three (a herd), and c1 asks again. At
    /// ten seconds c1 finishes, long after the herd's consequences.
    fn herd() -> (Trace, Violation) {
        let mut trace = Trace::new();
        for (client, session, server) in [(0, 1, 0), (1, 2, 1), (2, 3, 1), (3, 4, 0)] {
            trace.push(ms(0), TraceEvent::SessionOpened { client, session });
            let attached = TraceEvent::Attached {
                client,
                session,
                server,
                leader: server == 0,
            };
            trace.push(ms(0), attached);
        }
        let create = Op::Create {
            path: "/l/n".to_owned(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
            acl: Acls::OPEN,
        };
        let created = OpResult::Created {
            path: "/l/n".to_owned(),
            stat: Stat::default(),
        };
        round_trip(&mut trace, 1, (0, 1), create, 5, created);
        let granted = Outcome::Granted {
            role: "lock",
            token: 5,
        };
        let outcome = TraceEvent::Outcome {
            client: 0,
            session: 1,
            outcome: granted,
        };
        trace.push(ms(3), outcome);
        let children = || Op::GetChildren {
            path: "/l".to_owned(),
            watch: true,
        };
        let listed = || OpResult::Children {
            children: vec!["n".to_owned()],
            stat: Stat::default(),
        };
        for (client, session) in [(1, 2), (2, 3), (3, 4)] {
            round_trip(&mut trace, 4, (client, session), children(), 5, listed());
        }
        for (at, kind, client) in [(7, FaultKind::Pause, 3), (8, FaultKind::ServerCrash, 2)] {
            let fault = TraceEvent::Fault {
                kind,
                client,
                detail: "for a while".to_owned(),
                lasts: ms(100),
            };
            trace.push(ms(at), fault);
        }
        let delete = Op::Delete {
            path: "/l/n".to_owned(),
            version: -1,
        };
        round_trip(&mut trace, 2000, (0, 1), delete, 6, OpResult::Deleted);
        let notified = TraceEvent::Notified {
            by: 1,
            zxid: 6,
            cause: "/l/n".to_owned(),
            deletion: true,
            sessions: vec![2, 3, 4],
        };
        trace.push(ms(2001), notified);
        for (client, session) in [(1, 2), (2, 3), (3, 4)] {
            let event = WatchedEvent {
                event_type: EventType::NodeChildrenChanged,
                path: "/l".to_owned(),
            };
            let watch = TraceEvent::Watch {
                client,
                session,
                event,
                zxid: 6,
                cause: "/l/n".to_owned(),
                deletion: true,
            };
            trace.push(ms(2002), watch);
        }
        // Woken, c1 asks again at once.
        round_trip(&mut trace, 2002, (1, 2), children(), 6, listed());
        let released = TraceEvent::Outcome {
            client: 0,
            session: 1,
            outcome: Outcome::Released { role: "lock" },
        };
        trace.push(ms(2003), released);
        trace.push(ms(10_000), TraceEvent::Finished { client: 1 });
        let message = "deleting /l/n (zxid 6) woke 3 sessions: s2, s3, s4".to_owned();
        (trace, Violation::new(&HERD, ms(2001), message))
    }

    fn herd_svg() -> (Timeline, String) {
        let (trace, violation) = herd();
        let timeline = Timeline::of_trace("lock-bug-herd seed 0", &trace, &[violation]);
        let svg = timeline.svg();
        (timeline, svg)
    }

    /// The part of `svg` from the first `start` to the `</g>` after it.
    fn group<'s>(svg: &'s str, start: &str) -> &'s str {
        let from = svg
            .find(start)
            .unwrap_or_else(|| panic!("no {start}: {svg}"));
        let length = svg[from..].find("</g>").expect("the group ends");
        &svg[from..from + length]
    }

    #[test]
    fn every_request_and_reply_is_one_arrow() {
        let (_, svg) = herd_svg();
        assert_eq!(svg.matches("<line class=\"request\"").count(), 6, "{svg}");
        assert_eq!(svg.matches("<line class=\"reply\"").count(), 6, "{svg}");
        assert!(!svg.contains(" lost\""), "nothing was lost: {svg}");
    }

    #[test]
    fn a_deletion_that_notified_three_watchers_is_a_fan_of_three_arrows() {
        let (timeline, svg) = herd_svg();
        assert_eq!(svg.matches("<g class=\"notify").count(), 1, "{svg}");
        let fan = group(&svg, "<g class=\"notify blamed\">");
        assert_eq!(fan.matches("<line class=\"wake\"").count(), 3, "{fan}");
        assert!(
            fan.contains("!! deleting /l/n (zxid=6) notified s2 s3 s4"),
            "{fan}"
        );
        // The fan leaves from the apply of the delete, on server 0, the one s1 talks to.
        let blamed = timeline.blamed.map(|blamed| timeline.at(blamed));
        assert_eq!(
            blamed.map(|dot| (dot.lane, dot.mark)),
            Some((Lane::Server(0), Mark::Applied))
        );
        assert_eq!(
            svg.matches("class=\"blamed\"").count(),
            1,
            "the change is ringed"
        );
    }

    #[test]
    fn lanes_are_named_with_their_sessions_and_servers() {
        let (timeline, svg) = herd_svg();
        let lanes = timeline.lanes();
        assert_eq!(lanes[..2], [Lane::Server(0), Lane::Server(1)]);
        for name in [
            "server 0 · leader",
            "server 1",
            "c0 · s1",
            "c1 · s2",
            "c3 · s4",
        ] {
            assert!(
                svg.contains(&format!("<title>{name}</title>")),
                "{name}: {svg}"
            );
        }
    }

    #[test]
    fn holds_are_bars_and_faults_marks_on_the_lane_they_struck() {
        let (timeline, svg) = herd_svg();
        let holding = group(&svg, "<g class=\"holding\">");
        assert!(
            holding.contains("<title>c0 holds lock</title>"),
            "{holding}"
        );
        assert_eq!(svg.matches("<g class=\"holding\">").count(), 1, "{svg}");
        assert_eq!(svg.matches("<rect class=\"fault\"").count(), 2, "{svg}");
        let struck: Vec<Lane> = (timeline.dots.iter())
            .filter(|dot| dot.mark == Mark::Fault)
            .map(|dot| dot.lane)
            .collect();
        assert_eq!(struck, [Lane::Client(3), Lane::Server(1)]);
    }

    #[test]
    fn the_violation_is_named_at_the_top_and_across_the_lanes() {
        let (_, svg) = herd_svg();
        let said = "VIOLATION herd at 2.001000s: deleting /l/n (zxid 6) woke 3 sessions: \
                    s2 (c1), s3 (c2), s4 (c3)";
        assert!(
            group(&svg, "<g class=\"headline\">").contains(said),
            "{svg}"
        );
        assert!(
            group(&svg, "<g class=\"violation\">").contains(said),
            "{svg}"
        );
    }

    #[test]
    fn the_picture_fits_1400_pixels_and_cuts_quiet_time_short() {
        let (timeline, svg) = herd_svg();
        let layout = layout::Layout::of(&timeline);
        assert!(layout.width <= 1400.0, "{}", layout.width);
        assert!(svg.contains("width=\"1"), "{svg}");
        // Two seconds with nothing in them are one break, whose mark tells how long they were.
        assert_eq!(layout.breaks.len(), 1);
        assert!(
            group(&svg, "<g class=\"break\">").contains("+1.992 s"),
            "{svg}"
        );
        assert!(layout.bottom < 700.0, "{}", layout.bottom);
        // The picture goes on past the herd to c1's next reply, and no further.
        assert!(
            svg.contains("The run goes on to 10.000000: 1 more trace entries"),
            "{svg}"
        );
        let last = timeline.dots.iter().map(|dot| dot.at).max();
        assert_eq!(last, Some(2_004_000));
    }

    #[test]
    fn the_same_trace_draws_the_same_bytes_and_loads_nothing() {
        let (timeline, svg) = herd_svg();
        assert_eq!(herd_svg().1, svg);
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(!svg.contains("<script") && !svg.contains("href"), "{svg}");
        assert!(timeline.html().contains(&svg));
    }

    #[test]
    fn long_text_is_cut_on_the_page_and_whole_on_hover() {
        let mut timeline = Timeline::new("long", Clock::Steps);
        let text = format!("create /locks/lock/{} {}", "0".repeat(20), "x".repeat(200));
        let dot = Dot {
            at: 1,
            lane: Lane::Client(0),
            mark: Mark::Request,
            text: text.clone(),
            whole: text.clone(),
        };
        timeline.dot(dot);
        let svg = timeline.svg();
        assert!(
            svg.contains(&format!("<title>{text}</title>create …/…0 xxx")),
            "{svg}"
        );
        assert!(svg.contains("x…</text>"), "{svg}");
        assert!(!svg.contains(&format!("</title>{text}")), "{svg}");
    }
}
