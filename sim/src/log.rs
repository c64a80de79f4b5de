//! The trace and `tracing`, both ways.
//!
//! Every trace event is also a `tracing` event (target `zklab::trace`, at INFO), with the sim
//! time, the client and the session as fields: `RUST_LOG=zklab::trace=info` shows a run as it
//! happens. The other way, [`Capture`] writes the code under test's own `tracing` events into
//! the trace as note lines, so the replay tells its story and the run's in one stream.
//! [`subscriber`] puts both together, with [`SimClock`] stamping each line with the sim time.

use std::cell::RefCell;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::{filter_fn, EnvFilter};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::Registry;

use crate::trace::{SimTime, TraceEvent};

/// The target of the trace's own events.
pub const TARGET: &str = "zklab::trace";

/// Tells a trace event as a `tracing` event, if anyone listens.
pub(crate) fn tell(at: Duration, event: &TraceEvent) {
    if tracing::enabled!(target: TARGET, tracing::Level::INFO) {
        let (client, session) = event.actors();
        tracing::info!(
            target: TARGET,
            sim_time = %SimTime(at),
            client,
            session,
            "{event}"
        );
    }
}

/// Stamps a `tracing` line with the sim time when it is written inside a simulation, and
/// leaves the stamp out otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimClock;

impl FormatTime for SimClock {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        // Without `--cfg madsim` there is no sim clock (and the crate refuses to build anyway:
        // this keeps that refusal the only error).
        #[cfg(madsim)]
        if let Some(clock) = madsim::time::TimeHandle::try_current() {
            return write!(w, "{}", SimTime(clock.elapsed()));
        }
        let _ = w;
        Ok(())
    }
}

/// Where a captured note goes: into the trace of a simulated service, if it still runs.
pub(crate) type NoteSink = Arc<dyn Fn(String) + Send + Sync>;

thread_local! {
    /// Where the notes of the simulation this thread runs go.
    static SERVICE: RefCell<Option<NoteSink>> = const { RefCell::new(None) };
}

/// Sends this thread's captured notes to `sink` (the service of the simulation it runs).
pub(crate) fn capture_into(sink: NoteSink) {
    SERVICE.with(|service| *service.borrow_mut() = Some(sink));
}

/// A `tracing` layer that writes each event of the code under test into the trace of the
/// simulation running on its thread, as a note line of the client whose node emitted it.
/// The trace's own events, and madsim's, are not captured.
#[derive(Clone, Copy, Debug, Default)]
pub struct Capture;

impl<S: Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let Some(sink) = SERVICE.with(|service| service.borrow().clone()) else {
            return;
        };
        let mut text = Text::default();
        event.record(&mut text);
        let level = event.metadata().level();
        sink(format!("{level} {}{}", text.message, text.fields));
    }
}

/// Whether [`Capture`] takes events of `target`: the code under test's, not zklab's nor
/// madsim's.
fn captured(target: &str) -> bool {
    target != TARGET && !target.starts_with("madsim")
}

/// An event's message and its other fields, as text.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.fields
                .push_str(&format!(" {}={value:?}", field.name()));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_owned();
        } else {
            self.fields.push_str(&format!(" {}={value}", field.name()));
        }
    }
}

/// `filter`, without madsim's warning, once per seed, that it could not seed std's `HashMap`:
/// no `HashMap` order reaches a trace, so a run is deterministic all the same.
fn quiet_about_std_hashes(filter: EnvFilter) -> EnvFilter {
    filter.add_directive(
        "madsim::sim::rand=error"
            .parse()
            .expect("a valid directive"),
    )
}

/// The subscriber a simulation runs under: the code under test's events (INFO and up) captured
/// into the trace, and, when `RUST_LOG` is set, every event it enables written to standard
/// error, stamped with the sim time.
///
/// Without `RUST_LOG` nothing but the capture listens, and it wants neither spans nor zklab's
/// own events: those callsites are disabled, so madsim's span around every poll of a task and
/// the trace's events told to `tracing` cost a cached check each. (A layer left out as `None`
/// would not do: it counts as enabling everything.) Build it once and share it
/// ([`tracing::Dispatch`]): each new one makes `tracing` recompute every callsite's interest.
pub fn subscriber() -> impl Subscriber + Send + Sync {
    let printing = std::env::var_os("RUST_LOG").is_some();
    subscriber_printing(printing)
}

/// [`subscriber`], printing or not.
fn subscriber_printing(printing: bool) -> impl Subscriber + Send + Sync {
    let shown = match printing {
        true => quiet_about_std_hashes(EnvFilter::from_default_env()),
        false => EnvFilter::new("off"),
    };
    let printed = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_timer(SimClock)
        .with_filter(shown);
    let capture = Capture.with_filter(filter_fn(|metadata| {
        metadata.is_event()
            && *metadata.level() <= tracing::Level::INFO
            && captured(metadata.target())
    }));
    Registry::default().with(printed).with(capture)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn the_code_under_tests_events_become_notes_and_zklabs_own_do_not() {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let into = notes.clone();
        capture_into(Arc::new(move |text| into.lock().unwrap().push(text)));
        tracing::subscriber::with_default(subscriber(), || {
            tracing::info!(version = 3, "saw the setting");
            tracing::debug!("too fine to keep");
            tracing::info!(target: TARGET, "a trace event told");
            tracing::warn!(target: "madsim::net", "the runtime's own");
        });
        assert_eq!(*notes.lock().unwrap(), ["INFO saw the setting version=3"]);
        assert!(!captured("zklab::trace") && captured("my_app::watcher"));
    }

    #[test]
    fn unless_printed_spans_and_zklabs_own_events_are_off() {
        // The code's own events still reach the capture: the test above runs without RUST_LOG.
        let listening = |printing| {
            tracing::subscriber::with_default(subscriber_printing(printing), || {
                let span = tracing::error_span!("node", id = 1);
                let own = tracing::enabled!(target: TARGET, tracing::Level::INFO);
                (!span.is_disabled(), own)
            })
        };
        assert_eq!(listening(false), (false, false));
        assert!(
            listening(true).0,
            "printing, the span is there for the filter to show"
        );
    }
}
