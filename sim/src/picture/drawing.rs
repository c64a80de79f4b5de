//! The SVG of a laid-out timeline: the header ([`super::header`]), then the rows. Every element carries a class naming what it is (`request`,
//! `reply`, a `notify` group of `wake` arrows per change, `holding`, `fault`, `violation`,
//! `break`), so a test can count them. Numbers are written the same way every time: the same
//! timeline, the same bytes.

use std::fmt::Write as _;

use super::header::{header, header_height};
use super::layout::{self, Layout, ROW, TIME_COLUMN, VIOLATION_ROW};
use super::lettering::{chars_in, escaped, fitted, shortened};
use super::{Arrow, Dot, DotId, Landing, Lane, Mark, Message, Timeline};

/// The colours: each kind of thing its own, the violation's and the holders' loud.
pub(super) const INK: &str = "#222222";
pub(super) const FAINT: &str = "#707070";
pub(super) const LANE_LINE: &str = "#c4c4c4";
const SERVER_LINE: &str = "#8c96a0";
const REQUEST: &str = "#1c5fb8";
const REPLY: &str = "#2b8a3e";
const WAKE: &str = "#e8590c";
const LOST: &str = "#c92a2a";
pub(super) const APPLIED: &str = "#5c6670";
const SESSION: &str = "#8a5a00";
const NOTE: &str = "#6a1b9a";
pub(super) const HOLD_BAR: &str = "#2f9e44";
const HOLD_SHADE: &str = "#e3f5e3";
const FAULT: &str = "#d6261f";
pub(super) const FAULT_BAND: &str = "#fde0e0";
pub(super) const VIOLATION: &str = "#ff9c9c";
pub(super) const VIOLATION_INK: &str = "#7a0000";
const BLAMED: &str = "#d0021b";

/// The whole picture.
pub(super) fn svg(timeline: &Timeline, layout: &Layout) -> String {
    let mut out = String::new();
    let width = layout.width;
    let top = header_height(timeline, width);
    let foot = if timeline.footnote.is_some() {
        30.0
    } else {
        12.0
    };
    let height = (top + layout.bottom + foot).ceil();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"monospace\" font-size=\"11\">\n\
         <title>{title}</title>\n<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>",
        w = n(width),
        h = n(height),
        title = escaped(&timeline.title)
    );
    header(&mut out, timeline, layout, top);
    let _ = writeln!(out, "<g transform=\"translate(0,{})\">", n(top));
    let body = Body {
        timeline,
        layout,
        out: &mut out,
    };
    body.draw();
    out.push_str("</g>\n");
    if let Some(footnote) = &timeline.footnote {
        let _ = writeln!(
            out,
            "<text x=\"8\" y=\"{}\" fill=\"{FAINT}\" font-style=\"italic\">{}</text>",
            n(top + layout.bottom + 20.0),
            escaped(&fitted(footnote, chars_in(width - 16.0)))
        );
    }
    out.push_str("</svg>\n");
    out
}

/// The rows, drawn back to front: lanes, holdings, breaks, the violation, fault bands, arrows,
/// dots, words.
struct Body<'a> {
    timeline: &'a Timeline,
    layout: &'a Layout,
    out: &'a mut String,
}

impl Body<'_> {
    fn draw(mut self) {
        self.lanes();
        self.holdings();
        self.breaks();
        self.violation();
        self.faults();
        self.arrows();
        self.dots();
        self.words();
    }

    /// A line down each lane: a server's darker.
    fn lanes(&mut self) {
        for column in &self.layout.columns {
            let (colour, stroke) = match column.lane {
                Lane::Server(_) => (SERVER_LINE, 2),
                Lane::Client(_) => (LANE_LINE, 1),
            };
            let _ = writeln!(
                self.out,
                "<line x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"{}\" stroke=\"{colour}\" \
                 stroke-width=\"{stroke}\"/>",
                n(self.layout.bottom),
                x = n(column.line())
            );
        }
    }

    /// Each stretch of holding: a bar on the lane's line, its lane shaded beside it.
    fn holdings(&mut self) {
        for holding in &self.timeline.holdings {
            let column = self.layout.column(holding.lane);
            let top = self.layout.y(holding.from);
            let bottom = holding
                .until
                .map_or(self.layout.bottom, |until| self.layout.y(until));
            let name = self.timeline.lane_name(holding.lane);
            let name = name.split(' ').next().unwrap_or_default();
            let _ = writeln!(
                self.out,
                "<g class=\"holding\"><title>{} holds {}</title>\
                 <rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{h}\" fill=\"{HOLD_SHADE}\"/>\
                 <rect x=\"{}\" y=\"{y}\" width=\"8\" height=\"{h}\" fill=\"{HOLD_BAR}\"/></g>",
                escaped(name),
                escaped(&holding.what),
                n(column.line()),
                n(column.width - 16.0),
                n(column.line() - 4.0),
                y = n(top),
                h = n((bottom - top).max(2.0))
            );
        }
    }

    /// Each quiet stretch cut short: a white gap across the lanes between two zigzags, and how
    /// long it was in the time column.
    fn breaks(&mut self) {
        let width = self.layout.width;
        for cut in &self.layout.breaks {
            let _ = writeln!(
                self.out,
                "<g class=\"break\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"12\" \
                 fill=\"#ffffff\"/>",
                n(TIME_COLUMN),
                n(cut.y - 6.0),
                n(width - TIME_COLUMN)
            );
            zigzag(self.out, TIME_COLUMN, width - 4.0, cut.y - 6.0);
            zigzag(self.out, TIME_COLUMN, width - 4.0, cut.y + 6.0);
            let _ = writeln!(
                self.out,
                "<text x=\"6\" y=\"{}\" fill=\"{FAINT}\" font-style=\"italic\">+{}</text></g>",
                n(cut.y + 4.0),
                escaped(&layout::span(self.timeline.clock, cut.elided))
            );
        }
    }

    /// The violation's row, across every lane.
    fn violation(&mut self) {
        let (Some((_, text)), Some(y)) = (&self.timeline.violation, self.layout.violation) else {
            return;
        };
        let width = self.layout.width;
        let said = format!("VIOLATION {text}");
        let _ = writeln!(
            self.out,
            "<g class=\"violation\"><title>{}</title>\
             <rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{VIOLATION_ROW}\" fill=\"{VIOLATION}\"/>\
             <text x=\"8\" y=\"{}\" font-weight=\"bold\" fill=\"{VIOLATION_INK}\">{}</text></g>",
            escaped(&said),
            n(y),
            n(width),
            n(y + VIOLATION_ROW / 2.0 + 4.0),
            escaped(&fitted(&said, chars_in(width - 16.0)))
        );
    }

    /// A pale band behind each fault's words.
    fn faults(&mut self) {
        for (index, dot) in self.timeline.dots.iter().enumerate() {
            if dot.mark != Mark::Fault {
                continue;
            }
            let (x, width) = self.layout.column(dot.lane).band();
            let _ = writeln!(
                self.out,
                "<rect class=\"fault\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{ROW}\" \
                 fill=\"{FAULT_BAND}\"/>",
                n(x),
                n(self.layout.ys[index] - ROW / 2.0),
                n(width)
            );
        }
    }

    /// Every arrow: requests and replies one by one, then each change's wake-ups as one fan.
    fn arrows(&mut self) {
        let messages = &self.timeline.messages;
        for message in messages.iter().filter(|m| m.arrow != Arrow::Wake) {
            self.arrow(message);
        }
        let mut origins: Vec<DotId> = (messages.iter())
            .filter(|m| m.arrow == Arrow::Wake)
            .map(|m| m.from)
            .collect();
        origins.sort();
        origins.dedup();
        for origin in origins {
            let blamed = self.timeline.blamed == Some(origin);
            let _ = writeln!(
                self.out,
                "<g class=\"notify{}\"><title>{}</title>",
                if blamed { " blamed" } else { "" },
                escaped(&self.timeline.at(origin).whole)
            );
            for message in messages
                .iter()
                .filter(|m| m.arrow == Arrow::Wake && m.from == origin)
            {
                self.arrow(message);
            }
            self.out.push_str("</g>\n");
        }
    }

    fn arrow(&mut self, message: &Message) {
        let from = self.point(message.from);
        let class = class_of(message.arrow);
        match message.to {
            Landing::At(to) => {
                let to = self.point(to);
                let blamed = self.timeline.blamed == Some(message.from);
                if to != from {
                    arrow_line(self.out, pen(message.arrow, blamed), from, to, class);
                }
            }
            Landing::Lost(lane) => {
                let towards = self.layout.column(lane).line();
                let to = (from.0 + (towards - from.0) * 0.45, from.1 + 10.0);
                lost_line(self.out, class, from, to);
            }
        }
    }

    /// Where dot `id` sits.
    fn point(&self, id: DotId) -> (f64, f64) {
        let dot = self.timeline.at(id);
        (self.layout.column(dot.lane).line(), self.layout.y(id))
    }

    /// A dot on its lane's line for each thing that happened; a ring around the one the
    /// violation is about.
    fn dots(&mut self) {
        if let Some(blamed) = self.timeline.blamed {
            let (x, y) = self.point(blamed);
            ring(self.out, "blamed", x, y);
        }
        for (index, dot) in self.timeline.dots.iter().enumerate() {
            let x = self.layout.column(dot.lane).line();
            let y = self.layout.ys[index];
            match dot.mark {
                Mark::Fault => diamond(self.out, x, y),
                mark => {
                    let radius = if mark == Mark::Watch { 4.5 } else { 3.0 };
                    let _ = writeln!(
                        self.out,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"{radius}\" fill=\"{}\"/>",
                        n(x),
                        n(y),
                        colour_of(mark)
                    );
                }
            }
        }
    }

    /// Each dot's words beside it, cut to its lane, whole in its tooltip, haloed in white so
    /// arrows crossing them do not hide them.
    fn words(&mut self) {
        self.out.push_str(
            "<g class=\"words\" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\" \
             paint-order=\"stroke\">\n",
        );
        for (index, dot) in self.timeline.dots.iter().enumerate() {
            self.word(dot, self.layout.ys[index]);
        }
        for (y, label) in &self.layout.labels {
            let _ = writeln!(
                self.out,
                "<text x=\"6\" y=\"{}\" fill=\"{FAINT}\">{}</text>",
                n(y + 4.0),
                escaped(label)
            );
        }
        self.out.push_str("</g>\n");
    }

    fn word(&mut self, dot: &Dot, y: f64) {
        let column = self.layout.column(dot.lane);
        let weight = match dot.mark {
            Mark::Fault | Mark::Outcome => " font-weight=\"bold\"",
            _ => "",
        };
        let shown = fitted(&shortened(&dot.text), column.chars());
        let _ = writeln!(
            self.out,
            "<text x=\"{}\" y=\"{}\" fill=\"{}\" text-anchor=\"{}\"{weight}>\
             <title>{}</title>{}</text>",
            n(column.text()),
            n(y + 4.0),
            ink_of(dot.mark),
            column.anchor(),
            escaped(&dot.whole),
            escaped(&shown)
        );
    }
}

/// The class an arrow of `arrow` carries in the SVG.
fn class_of(arrow: Arrow) -> &'static str {
    match arrow {
        Arrow::Request => "request",
        Arrow::Reply => "reply",
        Arrow::Wake => "wake",
    }
}

/// The colour of a dot of `mark`.
fn colour_of(mark: Mark) -> &'static str {
    match mark {
        Mark::Request => REQUEST,
        Mark::Applied => APPLIED,
        Mark::Reply => REPLY,
        Mark::Watch => WAKE,
        Mark::Session => SESSION,
        Mark::Fault => FAULT,
        Mark::Outcome => INK,
        Mark::Note => NOTE,
    }
}

/// The colour of the words of a dot of `mark`: a dot's own, darker where it is pale.
fn ink_of(mark: Mark) -> &'static str {
    match mark {
        Mark::Watch => "#b23c00",
        Mark::Fault => "#b00000",
        mark => colour_of(mark),
    }
}

/// How an arrow is drawn: its colour, its stroke's width and its head's length.
pub(super) struct Pen {
    colour: &'static str,
    stroke: f64,
    head: f64,
}

/// The pen of an arrow of `arrow`; one from the dot the violation is about is loud.
pub(super) fn pen(arrow: Arrow, blamed: bool) -> Pen {
    let (colour, stroke, head) = match arrow {
        Arrow::Wake if blamed => (BLAMED, 3.0, 12.0),
        Arrow::Request => (REQUEST, 1.1, 7.0),
        Arrow::Reply => (REPLY, 1.1, 7.0),
        Arrow::Wake => (WAKE, 2.2, 10.0),
    };
    Pen {
        colour,
        stroke,
        head,
    }
}

/// An arrow drawn with `pen` from `from` to `to`, its head at `to`; `class` names it.
pub(super) fn arrow_line(
    out: &mut String,
    pen: Pen,
    from: (f64, f64),
    to: (f64, f64),
    class: &str,
) {
    let Pen {
        colour,
        stroke,
        head,
    } = pen;
    let (dx, dy) = (to.0 - from.0, to.1 - from.1);
    let length = (dx * dx + dy * dy).sqrt().max(1.0);
    let (ux, uy) = (dx / length, dy / length);
    // The head stops short of the dot it points at.
    let tip = (to.0 - ux * 4.0, to.1 - uy * 4.0);
    let base = (tip.0 - ux * head, tip.1 - uy * head);
    let half = head * 0.45;
    let class = class_attribute(class);
    let _ = writeln!(
        out,
        "<line{class} x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" \
         stroke-width=\"{stroke}\"/><polygon points=\"{},{} {},{} {},{}\" fill=\"{colour}\"/>",
        n(from.0),
        n(from.1),
        n(base.0),
        n(base.1),
        n(tip.0),
        n(tip.1),
        n(base.0 - uy * half),
        n(base.1 + ux * half),
        n(base.0 + uy * half),
        n(base.1 - ux * half)
    );
}

/// A message lost on the way: a dashed line from `from` ending in a cross at `to`; `class`
/// names it, and `lost` is added.
pub(super) fn lost_line(out: &mut String, class: &str, from: (f64, f64), to: (f64, f64)) {
    let _ = writeln!(
        out,
        "<line{} x1=\"{}\" y1=\"{}\" x2=\"{x}\" y2=\"{y}\" stroke=\"{FAINT}\" \
         stroke-width=\"1.2\" stroke-dasharray=\"4 3\"/>\
         <path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"{LOST}\" stroke-width=\"2\"/>",
        class_attribute(&match class {
            "" => String::new(),
            class => format!("{class} lost"),
        }),
        n(from.0),
        n(from.1),
        n(to.0 - 4.0),
        n(to.1 - 4.0),
        n(to.0 + 4.0),
        n(to.1 + 4.0),
        n(to.0 - 4.0),
        n(to.1 + 4.0),
        n(to.0 + 4.0),
        n(to.1 - 4.0),
        x = n(to.0),
        y = n(to.1)
    );
}

/// The mark of what the violation is about: a ring centred on (`x`, `y`); `class` names it.
pub(super) fn ring(out: &mut String, class: &str, x: f64, y: f64) {
    let _ = writeln!(
        out,
        "<circle{} cx=\"{}\" cy=\"{}\" r=\"9\" fill=\"none\" stroke=\"{BLAMED}\" \
         stroke-width=\"2.5\"/>",
        class_attribute(class),
        n(x),
        n(y)
    );
}

/// ` class="…"`, or nothing for no class (the key's glyphs, which a test must not count).
fn class_attribute(class: &str) -> String {
    match class {
        "" => String::new(),
        class => format!(" class=\"{class}\""),
    }
}

/// A fault's mark: a red diamond centred on (`x`, `y`).
pub(super) fn diamond(out: &mut String, x: f64, y: f64) {
    let _ = writeln!(
        out,
        "<polygon points=\"{},{} {},{} {},{} {},{}\" fill=\"{FAULT}\"/>",
        n(x),
        n(y - 6.0),
        n(x + 6.0),
        n(y),
        n(x),
        n(y + 6.0),
        n(x - 6.0),
        n(y)
    );
}

/// A zigzag from `x1` to `x2` along `y`: half of a break's mark.
pub(super) fn zigzag(out: &mut String, x1: f64, x2: f64, y: f64) {
    let mut path = format!("M{} {}", n(x1), n(y));
    let mut x = x1;
    let mut up = true;
    while x + 6.0 <= x2 {
        x += 6.0;
        let _ = write!(path, "L{} {}", n(x), n(if up { y - 3.0 } else { y + 3.0 }));
        up = !up;
    }
    let _ = writeln!(
        out,
        "<path d=\"{path}\" fill=\"none\" stroke=\"{FAINT}\" stroke-width=\"1\"/>"
    );
}

/// A coordinate as the SVG writes it: whole, or to a tenth of a pixel.
pub(super) fn n(value: f64) -> String {
    let tenths = (value * 10.0).round() / 10.0;
    if tenths.fract() == 0.0 {
        format!("{}", tenths as i64)
    } else {
        format!("{tenths:.1}")
    }
}
