//! Progress on stderr for long runs: a bar with the rate, the time spent and the time left for
//! seeds and cases, a spinner with the counts for a model check. Drawn only when stderr is a
//! terminal and the output is not JSON.

use std::fmt;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A bar of `total` `unit`s (seeds, cases), hidden when `hidden`; its message says how many
/// failed so far.
pub fn bar(total: u64, unit: &str, hidden: bool) -> ProgressBar {
    // The bar takes what the terminal's width leaves, so the line never wraps.
    let template = format!(
        "[{{wide_bar}}] {{pos}}/{{len}} {unit}, {{msg}}, {{rate}}, {{elapsed}} spent, {{eta}} left"
    );
    let style = ProgressStyle::with_template(&template)
        .expect("a valid template")
        .with_key("rate", |state: &ProgressState, out: &mut dyn fmt::Write| {
            let _ = write!(out, "{:.0}/s", state.per_sec());
        })
        .progress_chars("#>.");
    ProgressBar::with_draw_target(Some(total), target(hidden)).with_style(style)
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
