//! Ctrl-C during a long run: the first asks the run to stop once the seeds under way are done
//! and report what it did (exit status 130); a second one quits at once.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether Ctrl-C (SIGINT) has been pressed since [`stop_on_ctrl_c`].
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// The exit status of a run that Ctrl-C stopped, as a shell gives a process SIGINT ended.
pub const INTERRUPTED_STATUS: u8 = 130;

/// From now on, Ctrl-C sets [`interrupted`] instead of ending the process, unless it was set
/// already: then the process ends at once with status 130. Without a handler (the system
/// refused one), Ctrl-C ends the process as usual.
pub fn stop_on_ctrl_c() {
    let on_ctrl_c = || {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // SAFETY: `_exit` is async-signal-safe; nothing else is done here.
            unsafe { libc::_exit(i32::from(INTERRUPTED_STATUS)) };
        }
    };
    // SAFETY: the handler only touches an atomic and calls `_exit`, both async-signal-safe.
    let _ = unsafe { signal_hook_registry::register(libc::SIGINT, on_ctrl_c) };
}

/// From now on, SIGTERM asks the run to stop as a first Ctrl-C does (a server told to stop
/// still gives its verdict).
pub fn stop_on_term() {
    let on_term = || INTERRUPTED.store(true, Ordering::SeqCst);
    // SAFETY: the handler only touches an atomic, which is async-signal-safe.
    let _ = unsafe { signal_hook_registry::register(libc::SIGTERM, on_term) };
}

/// Whether Ctrl-C asked the run to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// `status`, unless Ctrl-C stopped the run: then 130.
pub fn status_of_run(status: ExitCode) -> ExitCode {
    if interrupted() {
        ExitCode::from(INTERRUPTED_STATUS)
    } else {
        status
    }
}
