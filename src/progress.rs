//! A progress line on stderr for long sweeps, shown only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Redraws `[#####.....] done/total seeds, failures, rate` at most ten times a second.
pub struct Progress {
    total: u64,
    started: Instant,
    last_drawn: Mutex<Option<Instant>>,
    visible: bool,
}

impl Progress {
    /// A progress line for `total` seeds; invisible when `hidden` or when stderr is not a terminal.
    pub fn new(total: u64, hidden: bool) -> Self {
        let visible = !hidden && std::io::stderr().is_terminal();
        Progress {
            total,
            started: Instant::now(),
            last_drawn: Mutex::new(None),
            visible,
        }
    }

    /// Notes that `done` seeds have run, `failures` of them failing.
    pub fn update(&self, done: u64, failures: u64) {
        if !self.visible {
            return;
        }
        let mut last = self
            .last_drawn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = Instant::now();
        let due = last.is_none_or(|at| now - at >= Duration::from_millis(100));
        if !due && done < self.total {
            return;
        }
        *last = Some(now);
        const WIDTH: u64 = 30;
        let filled = (done * WIDTH / self.total.max(1)) as usize;
        let bar = format!(
            "{}{}",
            "#".repeat(filled),
            ".".repeat(WIDTH as usize - filled)
        );
        let rate = done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r[{bar}] {done}/{} seeds, {failures} failing, {rate:.0} seeds/s",
            self.total
        );
        let _ = err.flush();
    }

    /// Ends the progress line.
    pub fn finish(&self) {
        if self.visible {
            let _ = writeln!(std::io::stderr());
        }
    }
}
