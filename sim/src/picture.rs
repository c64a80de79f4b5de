//! A run as a picture: one lane per client plus one for the servers, time running down, each
//! event a row in its lane; a client's rows shaded while it holds what a recipe granted it
//! (a lock, a lease, leadership), faults marked in red, the violation across every lane. Znode
//! names are shortened on the page and whole in each row's tooltip. The picture is one
//! self-contained SVG (or an HTML page around it): no script, nothing fetched.
//!
//! A simulated run's [`Trace`] and a model checker's counterexample both become a [`Timeline`],
//! which draws itself.

use std::fmt::Write as _;

use zklab_recipes::outcome::Outcome;

use crate::fault::FaultKind;
use crate::property::Violation;
use crate::trace::{SimTime, Trace, TraceEntry, TraceEvent};

/// Where a row goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The servers: what they applied and whom they notified, faults that strike them.
    Server,
    /// A client, by id.
    Client(usize),
}

/// What kind of event a row shows, which sets its colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A client's request.
    Call,
    /// A reply, or a watch event, reaching a client.
    Reply,
    /// A server applying a write, or notifying watchers.
    Server,
    /// A session's or a connection's news.
    Session,
    /// An injected fault.
    Fault,
    /// What a recipe told its application, or a use of the protected resource.
    Outcome,
    /// A line of the code under test, or of the model (a timer, the application's request).
    Note,
}

/// One row of the picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The time (or step) in the left column.
    pub time: String,
    /// Its lane.
    pub lane: Lane,
    /// What happened, in the trace's words.
    pub text: String,
    /// Its kind.
    pub mark: Mark,
    /// Which clients hold what a recipe granted them once this row has happened.
    pub holders: Vec<bool>,
}

/// A run laid out for drawing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    title: String,
    clients: usize,
    rows: Vec<Row>,
    /// The violation: the row it follows, and what it says.
    violation: Option<(usize, String)>,
}

impl Timeline {
    /// An empty timeline of `clients` clients.
    pub fn new(title: impl Into<String>, clients: usize) -> Self {
        Timeline {
            title: title.into(),
            clients,
            rows: Vec::new(),
            violation: None,
        }
    }

    /// Adds a row at the bottom.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// Marks the violation `text` after the rows so far.
    pub fn violated(&mut self, text: impl Into<String>) {
        self.violation = Some((self.rows.len(), text.into()));
    }

    /// A simulated run, its first violation (if any) drawn where it happened.
    pub fn of_trace(title: impl Into<String>, trace: &Trace, violations: &[Violation]) -> Self {
        let entries = trace.entries();
        let clients = entries
            .iter()
            .filter_map(|entry| entry.event.actors().0)
            .max()
            .map_or(1, |client| client as usize + 1);
        let mut timeline = Timeline::new(title, clients);
        let mut holders = vec![false; clients];
        let first = violations.iter().min_by_key(|violation| violation.at);
        for entry in entries {
            if let Some(violation) = first.filter(|v| v.at < entry.at) {
                if timeline.violation.is_none() {
                    timeline.violated(format!("VIOLATION {violation}"));
                }
            }
            timeline.push(row_of(entry, &mut holders));
        }
        if let Some(violation) = first.filter(|_| timeline.violation.is_none()) {
            timeline.violated(format!("VIOLATION {violation}"));
        }
        timeline
    }

    /// The picture, as an SVG document.
    pub fn svg(&self) -> String {
        Drawing::new(self).svg()
    }

    /// The picture, as an HTML page.
    pub fn html(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title></head>\n\
             <body style=\"margin:0;background:#fff\">\n{}</body></html>\n",
            escaped(&self.title),
            self.svg()
        )
    }
}

/// The row of one trace entry; `holders` follows who holds what.
fn row_of(entry: &TraceEntry, holders: &mut [bool]) -> Row {
    let event = &entry.event;
    let (client, _) = event.actors();
    let client = client.map(|client| client as usize);
    let mark = match event {
        TraceEvent::Request { .. } => Mark::Call,
        TraceEvent::Reply { .. } | TraceEvent::Watch { .. } => Mark::Reply,
        TraceEvent::Applied { .. } | TraceEvent::Notified { .. } => Mark::Server,
        TraceEvent::Session { .. }
        | TraceEvent::SessionOpened { .. }
        | TraceEvent::SessionEnded { .. }
        | TraceEvent::Attached { .. }
        | TraceEvent::Finished { .. }
        | TraceEvent::Stranded { .. } => Mark::Session,
        TraceEvent::Fault { .. } => Mark::Fault,
        TraceEvent::Outcome { .. } | TraceEvent::Resource { .. } => Mark::Outcome,
        TraceEvent::Note { .. } => Mark::Note,
    };
    let on_servers = matches!(
        event,
        TraceEvent::Applied { .. }
            | TraceEvent::Notified { .. }
            | TraceEvent::Fault {
                kind: FaultKind::ServerCrash | FaultKind::LeaderChange | FaultKind::StaleRead,
                ..
            }
    );
    let lane = match client {
        Some(client) if !on_servers => Lane::Client(client),
        _ => Lane::Server,
    };
    if let Some(holds) = client.and_then(|client| holders.get_mut(client)) {
        match event {
            TraceEvent::Outcome { outcome, .. } => match outcome {
                Outcome::Granted { .. } | Outcome::Shared { .. } => *holds = true,
                Outcome::Released { .. }
                | Outcome::Lost
                | Outcome::Revoked { .. }
                | Outcome::Failed(_) => *holds = false,
                _ => {}
            },
            TraceEvent::SessionEnded { .. }
            | TraceEvent::Fault {
                kind: FaultKind::Crash,
                ..
            } => *holds = false,
            _ => {}
        }
    }
    let text = event.to_string();
    let text = match (lane, client) {
        (Lane::Client(_), Some(client)) => text
            .strip_prefix(&format!("c{client} "))
            .unwrap_or(&text)
            .to_owned(),
        _ => text,
    };
    Row {
        time: SimTime(entry.at).to_string().trim_start().to_owned(),
        lane,
        text,
        mark,
        holders: holders.to_vec(),
    }
}

/// What each symbol of the trace means: the replay prints it, and the picture shows it.
pub const LEGEND: [(&str, &str); 12] = [
    ("->", "a request"),
    ("<-", "its reply"),
    ("..", "a server applied it"),
    ("!!", "a watch fired / whom a change notified"),
    ("**", "session and connection news"),
    ("++", "session opened"),
    ("--", "session ended"),
    ("XX", "a fault"),
    ("=>", "what a recipe told the application"),
    ("$$", "a use of the protected resource"),
    ("##", "a client finished"),
    ("//", "a line of the code under test"),
];

/// Sizes, in pixels.
const ROW: usize = 16;
const TIME_WIDTH: usize = 84;
const LANE_WIDTH: usize = 330;
const TOP: usize = 112;
/// The characters of a row that fit its lane.
const FIT: usize = 48;

/// The drawing of a timeline.
struct Drawing<'t> {
    timeline: &'t Timeline,
    out: String,
}

impl<'t> Drawing<'t> {
    fn new(timeline: &'t Timeline) -> Self {
        Drawing {
            timeline,
            out: String::new(),
        }
    }

    fn lane_x(&self, lane: Lane) -> usize {
        match lane {
            Lane::Server => TIME_WIDTH,
            Lane::Client(client) => TIME_WIDTH + LANE_WIDTH * (client + 1),
        }
    }

    fn row_y(&self, row: usize) -> usize {
        let after_violation = match self.timeline.violation {
            Some((at, _)) if row >= at => ROW,
            _ => 0,
        };
        TOP + row * ROW + after_violation
    }

    fn svg(mut self) -> String {
        let timeline = self.timeline;
        let lanes = timeline.clients + 1;
        let width = TIME_WIDTH + LANE_WIDTH * lanes + 8;
        let rows = timeline.rows.len() + usize::from(timeline.violation.is_some());
        let height = TOP + rows * ROW + 16;
        let _ = writeln!(
            self.out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             viewBox=\"0 0 {width} {height}\" font-family=\"monospace\" font-size=\"11\">"
        );
        let _ = writeln!(
            self.out,
            "<title>{}</title>\n<rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>",
            escaped(&timeline.title)
        );
        self.header(width, height);
        self.shading();
        for (index, row) in timeline.rows.iter().enumerate() {
            self.row(index, row);
        }
        if let Some((at, text)) = &timeline.violation {
            let y = self.row_y(*at) - ROW;
            let _ = writeln!(
                self.out,
                "<rect x=\"0\" y=\"{}\" width=\"{width}\" height=\"{ROW}\" fill=\"#ff9c9c\"/>\
                 <text x=\"4\" y=\"{}\" font-weight=\"bold\" fill=\"#8b0000\">{}</text>",
                y,
                y + 12,
                escaped(text)
            );
        }
        self.out.push_str("</svg>\n");
        self.out
    }

    /// The title, the legend, the lanes' names and their borders.
    fn header(&mut self, width: usize, height: usize) {
        let timeline = self.timeline;
        let _ = writeln!(
            self.out,
            "<text x=\"4\" y=\"16\" font-size=\"14\" font-weight=\"bold\">{}</text>",
            escaped(&timeline.title)
        );
        let legend: Vec<String> = LEGEND
            .iter()
            .map(|(symbol, meaning)| format!("{symbol} {meaning}"))
            .collect();
        for (line, chunk) in legend.chunks(6).enumerate() {
            let _ = writeln!(
                self.out,
                "<text x=\"4\" y=\"{}\" fill=\"#444444\">{}</text>",
                36 + line * 14,
                escaped(&chunk.join("   "))
            );
        }
        let _ = writeln!(
            self.out,
            "<rect x=\"4\" y=\"66\" width=\"12\" height=\"10\" fill=\"#c8ecc8\"/>\
             <text x=\"20\" y=\"75\" fill=\"#444444\">holds what a recipe granted</text>\
             <rect x=\"230\" y=\"66\" width=\"12\" height=\"10\" fill=\"#fde0e0\"/>\
             <text x=\"246\" y=\"75\" fill=\"#444444\">a fault</text>\
             <rect x=\"320\" y=\"66\" width=\"12\" height=\"10\" fill=\"#ff9c9c\"/>\
             <text x=\"336\" y=\"75\" fill=\"#444444\">the violation</text>"
        );
        let names = std::iter::once((Lane::Server, "servers".to_owned())).chain(
            (0..timeline.clients).map(|client| (Lane::Client(client), format!("c{client}"))),
        );
        for (lane, name) in names {
            let x = self.lane_x(lane);
            let _ = writeln!(
                self.out,
                "<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{name}</text>\
                 <line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{height}\" stroke=\"#bbbbbb\"/>",
                x + 6,
                TOP - 8,
                TOP - ROW - 4
            );
        }
        let _ = writeln!(
            self.out,
            "<text x=\"4\" y=\"{}\" font-weight=\"bold\">time</text>\
             <line x1=\"0\" y1=\"{}\" x2=\"{width}\" y2=\"{}\" stroke=\"#bbbbbb\"/>",
            TOP - 8,
            TOP - 4,
            TOP - 4
        );
    }

    /// Each client's stretches of holding, shaded in its lane.
    fn shading(&mut self) {
        let rows = &self.timeline.rows;
        for client in 0..self.timeline.clients {
            let mut since = None;
            for index in 0..=rows.len() {
                let holds = rows
                    .get(index)
                    .is_some_and(|row| row.holders.get(client) == Some(&true));
                match (holds, since) {
                    (true, None) => since = Some(index),
                    (false, Some(start)) => {
                        let (top, bottom) = (self.row_y(start), self.row_y(index));
                        let x = self.lane_x(Lane::Client(client));
                        let _ = writeln!(
                            self.out,
                            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#c8ecc8\"/>",
                            x + 1,
                            top - 4,
                            LANE_WIDTH - 2,
                            bottom - top
                        );
                        since = None;
                    }
                    _ => {}
                }
            }
        }
    }

    fn row(&mut self, index: usize, row: &Row) {
        let y = self.row_y(index);
        let x = self.lane_x(row.lane);
        let (colour, weight) = match row.mark {
            Mark::Call => ("#1a4d99", "normal"),
            Mark::Reply => ("#2b6e2b", "normal"),
            Mark::Server => ("#666666", "normal"),
            Mark::Session => ("#7a4a00", "normal"),
            Mark::Fault => ("#c00000", "bold"),
            Mark::Outcome => ("#000000", "bold"),
            Mark::Note => ("#6a1b9a", "normal"),
        };
        if row.mark == Mark::Fault {
            let _ = writeln!(
                self.out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{ROW}\" fill=\"#fde0e0\"/>",
                x + 1,
                y - 4,
                LANE_WIDTH - 2
            );
        }
        let short = fitted(&shortened(&row.text));
        let _ = writeln!(
            self.out,
            "<text x=\"4\" y=\"{}\" fill=\"#888888\">{}</text>\
             <text x=\"{}\" y=\"{}\" fill=\"{colour}\" font-weight=\"{weight}\"><title>{}</title>{}</text>",
            y + 8,
            escaped(&row.time),
            x + 6,
            y + 8,
            escaped(&row.text),
            escaped(&short)
        );
    }
}

/// `text` with every long zero-padded number (a sequential znode's counter, a guid) cut to its
/// significant digits after an ellipsis: `0000000000000001-lock-0000000003` reads `…1-lock-…3`.
pub fn shortened(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut previous = None;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, digits) = rest.split_at(start);
        out.push_str(before);
        previous = before.chars().last().or(previous);
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        let (number, after) = digits.split_at(end);
        let padded = number.len() >= 8 && number.starts_with('0') && previous != Some('.');
        if padded {
            let significant = number.trim_start_matches('0');
            out.push('…');
            out.push_str(if significant.is_empty() {
                "0"
            } else {
                significant
            });
        } else {
            out.push_str(number);
        }
        previous = number.chars().last();
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `text` cut to what fits a lane.
fn fitted(text: &str) -> String {
    if text.chars().count() <= FIT {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(FIT - 1).collect();
        cut.push('…');
        cut
    }
}

/// `text` safe inside XML.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zklab_recipes::client::{CreateMode, Op, OpResult, Stat};

    use super::*;
    use crate::property::Property;

    #[test]
    fn long_padded_numbers_are_cut_to_their_significant_digits() {
        assert_eq!(
            shortened("/locks/lock/0000000000000001-lock-0000000003"),
            "/locks/lock/…1-lock-…3"
        );
        assert_eq!(
            shortened("held 0.000000031s, zxid=12"),
            "held 0.000000031s, zxid=12"
        );
        assert_eq!(shortened("/q/item-0000000000"), "/q/item-…0");
    }

    #[test]
    fn a_trace_becomes_lanes_with_holders_faults_and_the_violation() {
        let mut trace = Trace::new();
        let at = Duration::from_millis;
        let create = Op::Create {
            path: "/l/0000000001".to_owned(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        };
        trace.push(
            at(1),
            TraceEvent::Request {
                client: 1,
                session: 2,
                op: create,
            },
        );
        let created = OpResult::Created {
            path: "/l/0000000001".to_owned(),
            stat: Stat::default(),
        };
        trace.push(
            at(2),
            TraceEvent::Reply {
                client: 1,
                session: 2,
                reply: Ok(created),
            },
        );
        let granted = Outcome::Granted {
            role: "lock",
            token: 7,
        };
        trace.push(
            at(3),
            TraceEvent::Outcome {
                client: 1,
                session: 2,
                outcome: granted,
            },
        );
        let fault = TraceEvent::Fault {
            kind: FaultKind::Crash,
            client: 1,
            detail: "process killed".to_owned(),
            lasts: Duration::MAX,
        };
        trace.push(at(9), fault);
        static MUTUAL_EXCLUSION: Property = Property {
            violation: "mutual-exclusion",
            name: "mutual exclusion",
        };
        let violation = Violation::new(&MUTUAL_EXCLUSION, at(5), "two holders".to_owned());
        let timeline = Timeline::of_trace("lock seed 0", &trace, &[violation]);
        assert_eq!(timeline.clients, 2);
        let lanes: Vec<Lane> = timeline.rows.iter().map(|row| row.lane).collect();
        assert_eq!(lanes, [Lane::Client(1); 4]);
        let holding: Vec<bool> = timeline.rows.iter().map(|row| row.holders[1]).collect();
        assert_eq!(holding, [false, false, true, false]);
        assert_eq!(
            timeline.rows[0].text,
            "s2 -> create /l/0000000001 \"\" Ephemeral"
        );
        assert_eq!(timeline.violation.as_ref().map(|(row, _)| *row), Some(3));

        let svg = timeline.svg();
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert!(svg.contains("s2 -&gt; create /l/…1"), "{svg}");
        assert!(svg.contains("VIOLATION mutual-exclusion"), "{svg}");
        assert!(
            svg.contains("fill=\"#c8ecc8\""),
            "a holder is shaded: {svg}"
        );
        assert!(!svg.contains("<script"), "{svg}");
        assert!(timeline.html().contains(&svg));
    }
}
