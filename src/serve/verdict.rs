//! The verdict of a `zklab serve` run, kept as the trace grows: every entry judged by the
//! monitors as it comes (the run has no end known in advance, so the trace is never held
//! whole), written to the trace file, and the last [`PICTURED`] kept for the picture (once a
//! violation is found, it and the [`AFTER_VIOLATION`] lines after it). At the end: the
//! violations, the picture, and the schedule that strikes the run's faults again.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::scenarios::monitor::exclusion::MutualExclusion;
use crate::scenarios::monitor::herd::Herd;
use crate::scenarios::oracle::{Judging, Violation};
use crate::sim::fault::FaultCounts;
use crate::sim::picture::Timeline;
use crate::sim::trace::{Trace, TraceEntry, TraceEvent};
use crate::sim::wire_service::AnchoredFault;

/// How many trace entries the picture shows before the first violation, or the end.
pub const PICTURED: usize = 5_000;

/// How many trace entries after the first violation the picture may show.
pub const AFTER_VIOLATION: usize = 1_000;

/// The monitors `zklab serve` judges by: what clients claim, against what the server did.
type ServeMonitors = MutualExclusion;

/// The run's trace as it grows (see the module's documentation).
pub struct Verdict {
    judging: Judging<ServeMonitors>,
    trace_file: BufWriter<File>,
    dir: PathBuf,
    tail: VecDeque<TraceEntry>,
    /// Once a violation is found: how many more entries the picture may take.
    room_after: Option<usize>,
    entries: u64,
    sessions: u64,
    claims: u64,
    most_woken: usize,
}

/// What a finished run says.
pub struct ServeReport {
    /// The first violation of each kind.
    pub violations: Vec<Violation>,
    /// How many faults of each kind struck.
    pub counts: FaultCounts,
    /// Sessions the server opened.
    pub sessions: u64,
    /// Claims the clients made.
    pub claims: u64,
    /// The most sessions one deletion woke (a herd shows here; no monitor here knows which
    /// wakings a recipe needs).
    pub most_woken: usize,
    /// The whole trace.
    pub trace: PathBuf,
    /// The picture of its end.
    pub picture: PathBuf,
    /// The schedule that strikes the faults again.
    pub schedule: PathBuf,
}

impl Verdict {
    /// Starts the run's record in `dir` (made if need be), which will hold `trace.txt`,
    /// `picture.html` and `schedule.txt`; at most `shared_by` may hold a role shared, if set.
    pub fn start(dir: &Path, shared_by: Option<usize>) -> io::Result<Verdict> {
        fs::create_dir_all(dir)?;
        let trace_file = BufWriter::new(File::create(dir.join("trace.txt"))?);
        let exclusion = shared_by.map_or_else(MutualExclusion::default, |limit| {
            MutualExclusion::shared_by_at_most(limit)
        });
        Ok(Verdict {
            judging: Judging::new(exclusion),
            trace_file,
            dir: dir.to_owned(),
            tail: VecDeque::new(),
            room_after: None,
            entries: 0,
            sessions: 0,
            claims: 0,
            most_woken: 0,
        })
    }

    /// Judges and writes what the trace grew by.
    pub fn extend(&mut self, trace: Trace) {
        for entry in trace.entries() {
            self.judging.observe(entry);
            match entry.event {
                TraceEvent::SessionOpened { .. } => self.sessions += 1,
                TraceEvent::Outcome { .. } => self.claims += 1,
                _ => {}
            }
            if let Some(woken) = Herd::woken(&entry.event) {
                self.most_woken = self.most_woken.max(woken.len());
            }
            // A trace file that cannot be written costs the file, not the run: the end says so.
            let _ = writeln!(self.trace_file, "{entry}");
            self.entries += 1;
            match &mut self.room_after {
                Some(0) => continue,
                Some(room) => *room -= 1,
                None if self.tail.len() == PICTURED => {
                    self.tail.pop_front();
                }
                None => {}
            }
            self.tail.push_back(entry.clone());
            if self.room_after.is_none() && !self.judging.violations().is_empty() {
                self.room_after = Some(AFTER_VIOLATION);
            }
        }
    }

    /// Ends the run: the trace written out, its picture and the `schedule` of the faults struck.
    pub fn finish(
        mut self,
        schedule: &[AnchoredFault],
        counts: FaultCounts,
    ) -> io::Result<ServeReport> {
        self.trace_file.flush()?;
        let violations = self.judging.violations().to_vec();
        let mut shown = Trace::new();
        for entry in self.tail.drain(..) {
            shown.push(entry.at, entry.event);
        }
        let mut picture = Timeline::of_trace("zklab serve", &shown, &violations);
        if shown.entries().len() as u64 != self.entries {
            picture.footnote(format!(
                "{} of the run's {} trace lines; the whole trace is trace.txt",
                shown.entries().len(),
                self.entries
            ));
        }
        let (picture_path, schedule_path) =
            (self.dir.join("picture.html"), self.dir.join("schedule.txt"));
        fs::write(&picture_path, picture.html())?;
        let mut text =
            String::from("# zklab serve --script schedule.txt strikes these faults again\n");
        for fault in schedule {
            text.push_str(&format!("{fault}\n"));
        }
        fs::write(&schedule_path, text)?;
        Ok(ServeReport {
            violations,
            counts,
            sessions: self.sessions,
            claims: self.claims,
            most_woken: self.most_woken,
            trace: self.dir.join("trace.txt"),
            picture: picture_path,
            schedule: schedule_path,
        })
    }
}
