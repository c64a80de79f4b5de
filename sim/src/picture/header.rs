//! The picture's header: its title, the violation's headline, the key and the lanes' names.

use std::fmt::Write as _;

use super::drawing::{
    arrow_line, diamond, lost_line, n, pen, ring, zigzag, APPLIED, FAINT, FAULT_BAND, HOLD_BAR,
    INK, LANE_LINE, VIOLATION, VIOLATION_INK,
};
use super::layout::Layout;
use super::lettering::{chars_in, escaped, fitted, width_of, wrapped};
use super::{Arrow, Clock, Lane, Timeline};

/// How far below the header's top the headline starts.
const HEADLINE_TOP: f64 = 30.0;
/// The height of a line of the headline and the key.
const LINE: f64 = 16.0;
/// The lines the headline may take.
const HEADLINE_LINES: usize = 3;

/// The violation's headline, in lines that fit `width`.
fn headline(timeline: &Timeline, width: f64) -> Vec<String> {
    match &timeline.violation {
        Some((_, text)) => wrapped(
            &format!("VIOLATION {text}"),
            chars_in(width - 24.0),
            HEADLINE_LINES,
        ),
        None => Vec::new(),
    }
}

/// One entry of the key: the glyph it shows and what it means.
enum Glyph {
    Arrow(Arrow),
    Lost,
    Dot(&'static str),
    Holding,
    Fault,
    Violation,
    Blamed,
    Break,
}

/// The key's entries, for `timeline`.
fn key(timeline: &Timeline) -> Vec<(Glyph, &'static str)> {
    let mut key = vec![
        (Glyph::Arrow(Arrow::Request), "request"),
        (Glyph::Arrow(Arrow::Reply), "reply"),
        (Glyph::Arrow(Arrow::Wake), "a change wakes a watcher"),
        (Glyph::Lost, "lost on the way"),
        (Glyph::Dot(APPLIED), "a server applies it"),
        (Glyph::Holding, "holds what the recipe granted"),
        (Glyph::Fault, "fault"),
        (Glyph::Violation, "the violation"),
    ];
    if timeline.blamed.is_some() {
        key.push((Glyph::Blamed, "what the violation is about"));
    }
    if timeline.clock == Clock::Micros {
        key.push((Glyph::Break, "a quiet stretch, cut short"));
    }
    key
}

/// Where each key entry goes: its left edge and its line, wrapping to fit `width`.
fn key_places(timeline: &Timeline, width: f64) -> Vec<(f64, usize)> {
    let mut places = Vec::new();
    let (mut x, mut line) = (8.0, 0);
    for (_, meaning) in key(timeline) {
        let wide = 34.0 + width_of(meaning) + 18.0;
        if x + wide > width - 8.0 && x > 8.0 {
            x = 8.0;
            line += 1;
        }
        places.push((x, line));
        x += wide;
    }
    places
}

/// How tall the header is: title, headline, key and the lanes' names.
pub(super) fn header_height(timeline: &Timeline, width: f64) -> f64 {
    let headline = headline(timeline, width).len() as f64;
    let headline = if headline > 0.0 {
        headline * LINE + 14.0
    } else {
        0.0
    };
    let key_lines = key_places(timeline, width)
        .last()
        .map_or(0, |(_, line)| line + 1) as f64;
    HEADLINE_TOP + headline + key_lines * LINE + 36.0
}

/// The title, the headline, the key and the lanes' names, above `top`.
pub(super) fn header(out: &mut String, timeline: &Timeline, layout: &Layout, top: f64) {
    let width = layout.width;
    let _ = writeln!(
        out,
        "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
        escaped(&timeline.title)
    );
    let lines = headline(timeline, width);
    let mut y = HEADLINE_TOP;
    if let Some((_, text)) = &timeline.violation {
        let _ = writeln!(
            out,
            "<g class=\"headline\"><title>VIOLATION {}</title>\
             <rect x=\"4\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" fill=\"{VIOLATION}\"/>",
            escaped(text),
            n(y),
            n(width - 8.0),
            n(lines.len() as f64 * LINE + 8.0)
        );
        for (index, line) in lines.iter().enumerate() {
            let _ = writeln!(
                out,
                "<text x=\"12\" y=\"{}\" font-weight=\"bold\" fill=\"{VIOLATION_INK}\">{}</text>",
                n(y + 16.0 + index as f64 * LINE),
                escaped(line)
            );
        }
        out.push_str("</g>\n");
        y += lines.len() as f64 * LINE + 14.0;
    }
    out.push_str("<g class=\"key\">\n");
    for ((glyph, meaning), (x, line)) in key(timeline).into_iter().zip(key_places(timeline, width))
    {
        let middle = y + 8.0 + line as f64 * LINE;
        key_glyph(out, &glyph, x, middle);
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"{INK}\">{}</text>",
            n(x + 34.0),
            n(middle + 4.0),
            escaped(meaning)
        );
    }
    out.push_str("</g>\n");
    for column in &layout.columns {
        let name = timeline.lane_name(column.lane);
        let x = match column.lane {
            Lane::Server(_) => column.line() + 4.0,
            Lane::Client(_) => column.line() - 4.0,
        };
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-weight=\"bold\" fill=\"{INK}\" text-anchor=\"{}\">\
             <title>{}</title>{}</text>",
            n(x),
            n(top - 12.0),
            column.anchor(),
            escaped(&name),
            escaped(&fitted(&name, chars_in(column.width - 12.0)))
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"8\" y=\"{}\" font-size=\"12\" font-weight=\"bold\" fill=\"{FAINT}\">time</text>\
         <line x1=\"0\" y1=\"{y}\" x2=\"{w}\" y2=\"{y}\" stroke=\"{LANE_LINE}\"/>",
        n(top - 12.0),
        y = n(top - 5.0),
        w = n(width)
    );
}

/// One key entry's glyph, 30 pixels wide from `x`, centred on `y`.
fn key_glyph(out: &mut String, glyph: &Glyph, x: f64, y: f64) {
    let (x1, x2) = (x, x + 28.0);
    match glyph {
        Glyph::Arrow(arrow) => arrow_line(out, pen(*arrow, false), (x1, y), (x2, y), ""),
        Glyph::Lost => lost_line(out, "", (x1, y), (x2 - 4.0, y)),
        Glyph::Dot(colour) => {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{colour}\"/>",
                n(x + 14.0),
                n(y)
            );
        }
        Glyph::Holding => {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"28\" height=\"8\" fill=\"{HOLD_BAR}\"/>",
                n(x1),
                n(y - 4.0)
            );
        }
        Glyph::Fault => {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"28\" height=\"12\" fill=\"{FAULT_BAND}\"/>",
                n(x1),
                n(y - 6.0)
            );
            diamond(out, x + 14.0, y);
        }
        Glyph::Violation => {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"28\" height=\"12\" fill=\"{VIOLATION}\"/>",
                n(x1),
                n(y - 6.0)
            );
        }
        Glyph::Blamed => ring(out, "", x + 14.0, y),
        Glyph::Break => zigzag(out, x1, x2, y),
    }
}
