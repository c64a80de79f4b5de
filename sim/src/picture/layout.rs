//! Where everything goes. Across: a column of time labels, then a lane per server and per
//! client, as wide as fits in [`MAX_WIDTH`]. Down: the time scale, which gives each dot a row
//! of its own in its lane, spaces dots by how much time passed between them, and cuts a quiet
//! stretch longer than [`QUIET`] down to a break of fixed height. The violation takes a row
//! across every lane, after every dot up to its time.

use std::collections::BTreeMap;

use super::lettering::chars_in;
use super::{Clock, DotId, Lane, Timeline};

/// The widest the picture gets, in pixels: readable on a laptop's screen without scrolling
/// sideways.
pub(super) const MAX_WIDTH: f64 = 1400.0;
/// The narrowest: a run of one client still has room for its headline and key, its lanes
/// widened to fill it.
const MIN_WIDTH: f64 = 820.0;
/// The column of time labels on the left.
pub(super) const TIME_COLUMN: f64 = 78.0;
/// The space right of the last lane.
const MARGIN: f64 = 8.0;
/// The widths a server's and a client's lane take when there is room.
const SERVER_WIDTH: f64 = 180.0;
const CLIENT_WIDTH: f64 = 240.0;
/// The space between the servers' lanes and the clients'.
const ASIDE: f64 = 16.0;
/// The height of a row of text.
pub(super) const ROW: f64 = 16.0;
/// The height of the violation's row.
pub(super) const VIOLATION_ROW: f64 = 24.0;
/// The height a quiet stretch is cut down to.
pub(super) const BREAK_HEIGHT: f64 = 36.0;
/// A stretch of sim time longer than this with nothing in it is cut short, in microseconds.
const QUIET: u64 = 50_000;
/// How far apart dots a millisecond apart are drawn, besides their rows.
const PER_MILLI: f64 = 1.5;
/// How far apart dots of different times are drawn at least, so their order shows.
const APART: f64 = 2.0;

/// One lane's column.
pub(super) struct Column {
    /// The lane.
    pub lane: Lane,
    /// Its left edge.
    pub left: f64,
    /// Its width.
    pub width: f64,
}

impl Column {
    /// Where its line runs, and its arrows start and end: a server's at its right, its words
    /// to the left, out of the way of the arrows to the clients; a client's at its left.
    pub fn line(&self) -> f64 {
        match self.lane {
            Lane::Server(_) => self.left + self.width - 12.0,
            Lane::Client(_) => self.left + 12.0,
        }
    }

    /// Where its words go: their end on a server's lane, their start on a client's.
    pub fn text(&self) -> f64 {
        match self.lane {
            Lane::Server(_) => self.line() - 8.0,
            Lane::Client(_) => self.line() + 8.0,
        }
    }

    /// The stretch beside its line that its words take: left edge and width.
    pub fn band(&self) -> (f64, f64) {
        match self.lane {
            Lane::Server(_) => (self.left + 4.0, self.width - 20.0),
            Lane::Client(_) => (self.line() + 5.0, self.width - 18.0),
        }
    }

    /// How its words are anchored.
    pub fn anchor(&self) -> &'static str {
        match self.lane {
            Lane::Server(_) => "end",
            Lane::Client(_) => "start",
        }
    }

    /// How many characters of text fit in it.
    pub fn chars(&self) -> usize {
        chars_in(self.width - 24.0)
    }
}

/// A quiet stretch cut short.
pub(super) struct Break {
    /// The middle of its mark.
    pub y: f64,
    /// How long it was, on the timeline's clock.
    pub elided: u64,
}

/// The positions of a timeline's parts; its rows' heights start at 0, under the header.
pub(super) struct Layout {
    /// The picture's width.
    pub width: f64,
    /// The lanes, left to right.
    pub columns: Vec<Column>,
    /// Each dot's height, by its id.
    pub ys: Vec<f64>,
    /// The time labels on the left: where, and what.
    pub labels: Vec<(f64, String)>,
    /// The quiet stretches cut short.
    pub breaks: Vec<Break>,
    /// The top of the violation's row.
    pub violation: Option<f64>,
    /// The bottom of the last row.
    pub bottom: f64,
}

impl Layout {
    /// Lays `timeline` out.
    pub fn of(timeline: &Timeline) -> Layout {
        let (width, columns) = columns(timeline);
        let mut layout = Layout {
            width,
            columns,
            ys: vec![0.0; timeline.dots.len()],
            labels: Vec::new(),
            breaks: Vec::new(),
            violation: None,
            bottom: 0.0,
        };
        layout.rows(timeline);
        layout
    }

    /// The column of `lane`.
    pub fn column(&self, lane: Lane) -> &Column {
        let index = self.columns.iter().position(|column| column.lane == lane);
        &self.columns[index.expect("every lane of a timeline has a column")]
    }

    /// The height of dot `id`.
    pub fn y(&self, id: DotId) -> f64 {
        self.ys[id.0]
    }

    /// Gives every dot its height, one after another in time order.
    fn rows(&mut self, timeline: &Timeline) {
        let mut order: Vec<usize> = (0..timeline.dots.len()).collect();
        order.sort_by_key(|&index| timeline.dots[index].at);
        // The first height free in each lane, and how far down anything at all is drawn.
        let mut free: BTreeMap<Lane, f64> = BTreeMap::new();
        let mut lowest = 0.0;
        // The lowest dot so far, and where the rows of the latest instant start: dots of one
        // instant share rows where their lanes are free.
        let mut cursor = ROW / 2.0;
        let mut top = cursor;
        let mut last_at = order.first().map(|&index| timeline.dots[index].at);
        let mut pending = timeline.violation.as_ref().map(|(at, _)| *at);
        let mut last_label: Option<(f64, String)> = None;
        for index in order {
            let dot = &timeline.dots[index];
            if let Some(at) = pending.filter(|at| *at < dot.at) {
                let top = self.advance(timeline.clock, &mut last_at, at, cursor, lowest);
                let top = top.max(lowest) + APART;
                self.violation = Some(top);
                lowest = top + VIOLATION_ROW;
                cursor = lowest + ROW / 2.0;
                free.clear();
                pending = None;
            }
            if last_at != Some(dot.at) {
                top = self.advance(timeline.clock, &mut last_at, dot.at, cursor, lowest);
            }
            let y = free.get(&dot.lane).map_or(top, |free| free.max(top));
            free.insert(dot.lane, y + ROW);
            lowest = lowest.max(y + ROW / 2.0);
            cursor = cursor.max(y);
            self.ys[index] = y;
            let label = label(timeline.clock, dot.at);
            let room = last_label
                .as_ref()
                .is_none_or(|(above, text)| *text != label && y >= above + ROW);
            if room {
                self.labels.push((y, label.clone()));
                last_label = Some((y, label));
            }
        }
        if pending.is_some() {
            self.violation = Some(lowest + APART);
            lowest += APART + VIOLATION_ROW;
        }
        self.bottom = lowest;
    }

    /// Moves the cursor on from `last_at` to `at`: by the time that passed, or past a break
    /// below everything drawn so far (`lowest`) when the stretch was quiet for long.
    fn advance(
        &mut self,
        clock: Clock,
        last_at: &mut Option<u64>,
        at: u64,
        cursor: f64,
        lowest: f64,
    ) -> f64 {
        let passed = at.saturating_sub(last_at.unwrap_or(at));
        *last_at = Some(at);
        match clock {
            Clock::Steps if passed > 0 => cursor + ROW,
            Clock::Micros if passed > QUIET => {
                self.breaks.push(Break {
                    y: lowest + BREAK_HEIGHT / 2.0,
                    elided: passed,
                });
                lowest + BREAK_HEIGHT
            }
            Clock::Micros if passed > 0 => cursor + APART + passed as f64 / 1000.0 * PER_MILLI,
            _ => cursor,
        }
    }
}

/// The picture's width and its lanes' columns: each lane as wide as it likes if they all fit
/// and fill [`MIN_WIDTH`], all narrowed (or widened) alike if not.
fn columns(timeline: &Timeline) -> (f64, Vec<Column>) {
    let lanes = timeline.lanes();
    let wants = |lane: &Lane| match lane {
        Lane::Server(_) => SERVER_WIDTH,
        Lane::Client(_) => CLIENT_WIDTH,
    };
    let wanted: f64 = lanes.iter().map(wants).sum();
    let room = MAX_WIDTH - TIME_COLUMN - ASIDE - MARGIN;
    let least = MIN_WIDTH - TIME_COLUMN - ASIDE - MARGIN;
    let narrowing = (room / wanted.max(1.0))
        .min(1.0)
        .max(least / wanted.max(1.0));
    let mut left = TIME_COLUMN;
    let columns = lanes
        .iter()
        .enumerate()
        .map(|(index, lane)| {
            let first_client = index > 0 && matches!(lane, Lane::Client(_));
            if first_client && matches!(lanes[index - 1], Lane::Server(_)) {
                left += ASIDE;
            }
            let width = (wants(lane) * narrowing).floor();
            let column = Column {
                lane: *lane,
                left,
                width,
            };
            left += width;
            column
        })
        .collect();
    (left + MARGIN, columns)
}

/// A time as the label column writes it.
pub(super) fn label(clock: Clock, at: u64) -> String {
    match clock {
        Clock::Micros => format!("{}.{:06}", at / 1_000_000, at % 1_000_000),
        Clock::Steps => format!("step {at}"),
    }
}

/// A stretch of time as a break mark writes it.
pub(super) fn span(clock: Clock, elided: u64) -> String {
    match clock {
        Clock::Micros => format!("{}.{:03} s", elided / 1_000_000, elided % 1_000_000 / 1000),
        Clock::Steps => format!("{elided} steps"),
    }
}
