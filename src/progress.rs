//! A status line on stderr for long runs, shown only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Redraws one line of stderr at most ten times a second.
pub struct StatusLine {
    started: Instant,
    last_drawn: Mutex<Option<Instant>>,
    visible: bool,
}

impl StatusLine {
    /// A status line; invisible when `hidden` or when stderr is not a terminal.
    pub fn new(hidden: bool) -> Self {
        let visible = !hidden && std::io::stderr().is_terminal();
        StatusLine {
            started: Instant::now(),
            last_drawn: Mutex::new(None),
            visible,
        }
    }

    /// Time since the line was made.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Redraws the line with `text()` unless it was drawn less than 100 ms ago (`force` draws
    /// anyway, for the last update).
    pub fn show(&self, force: bool, text: impl FnOnce() -> String) {
        if !self.visible {
            return;
        }
        let mut last = self
            .last_drawn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        if !force && last.is_some_and(|at| now - at < Duration::from_millis(100)) {
            return;
        }
        *last = Some(now);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{}\x1b[K", text());
        let _ = err.flush();
    }

    /// Ends the line.
    pub fn finish(&self) {
        if self.visible {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// `[#####.....] done/total seeds, failures, rate` for a sweep.
pub fn seed_bar(done: u64, total: u64, failures: u64, elapsed: Duration) -> String {
    const WIDTH: u64 = 30;
    let filled = (done * WIDTH / total.max(1)) as usize;
    let bar = format!(
        "{}{}",
        "#".repeat(filled),
        ".".repeat(WIDTH as usize - filled)
    );
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-9);
    format!("[{bar}] {done}/{total} seeds, {failures} failing, {rate:.0} seeds/s")
}
