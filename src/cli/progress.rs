//! Progress on stderr for long runs: a bar with the rate, the time spent and the time left for
//! seeds and cases, a spinner with the counts for a model check. Drawn only when stderr is a
//! terminal and the output is not JSON.

use std::fmt;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A bar of `total` `unit`s (seeds, cases), hidden when `hidden`; its message says how many
/// failed so far.
pub fn bar(total: u64, unit: &str, hidden: bool) -> ProgressBar {
    ProgressBar::with_draw_target(Some(total), target(hidden)).with_style(bar_style(unit))
}

/// A bar's line: the bar takes what the terminal's width leaves, so the line never wraps, and
/// the rate is whole units a second.
fn bar_style(unit: &str) -> ProgressStyle {
    let template = format!(
        "[{{wide_bar}}] {{pos}}/{{len}} {unit}, {{msg}}, {{rate}}, {{elapsed}} spent, {{eta}} left"
    );
    ProgressStyle::with_template(&template)
        .expect("a valid template")
        .with_key("rate", |state: &ProgressState, out: &mut dyn fmt::Write| {
            let _ = write!(out, "{:.0}/s", state.per_sec());
        })
        .progress_chars("#>.")
}

/// A spinner whose message tells what is being counted, hidden when `hidden`.
pub fn spinner(hidden: bool) -> ProgressBar {
    let style =
        ProgressStyle::with_template("{spinner} {msg}, {elapsed} spent").expect("a valid template");
    ProgressBar::with_draw_target(None, target(hidden)).with_style(style)
}

/// Standard error, which draws nothing unless it is a terminal; or nowhere.
fn target(hidden: bool) -> ProgressDrawTarget {
    if hidden {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr_with_hz(10)
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::sync::{Arc, Mutex};

    use indicatif::TermLike;

    use super::*;

    /// A terminal 80 columns wide that keeps each line drawn on it.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<Vec<String>>>);

    impl TermLike for Screen {
        fn width(&self) -> u16 {
            80
        }
        fn move_cursor_up(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
        fn write_line(&self, line: &str) -> io::Result<()> {
            self.write_str(&format!("{line}\n"))
        }
        fn write_str(&self, text: &str) -> io::Result<()> {
            let mut lines = self.0.lock().expect("no panic holds it");
            match lines.last_mut() {
                Some(line) => line.push_str(text),
                None => lines.push(text.to_owned()),
            }
            Ok(())
        }
        fn clear_line(&self) -> io::Result<()> {
            self.0
                .lock()
                .expect("no panic holds it")
                .push(String::new());
            Ok(())
        }
        fn flush(&self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_bar_fits_an_80_column_terminal_and_counts_whole_seeds_a_second() {
        let screen = Screen::default();
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let status =
            ProgressBar::with_draw_target(Some(100_000), target).with_style(bar_style("seeds"));
        status.set_message("0 failing");
        for done in 1..=1_234 {
            status.set_position(done);
        }
        status.abandon();
        let drawn = screen.0.lock().expect("no panic holds it").clone();
        let last = drawn
            .iter()
            .rev()
            .find(|line| !line.is_empty())
            .expect("a bar drawn");
        assert!(last.chars().count() <= 80, "{last}");
        assert!(last.contains("1234/100000 seeds, 0 failing, "), "{last}");
        let rate = last
            .split(", ")
            .find(|part| part.ends_with("/s"))
            .expect("a rate");
        assert!(rate.trim_end_matches("/s").parse::<u64>().is_ok(), "{last}");
    }
}
