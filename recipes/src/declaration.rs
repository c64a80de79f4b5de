//! What a recipe says it owns and waits for, so that the generic monitors (wait-for cycles,
//! stuck waiters) judge what code declares rather than guess from watches and node names.
//!
//! A watch alone says nothing about waiting: a leader flag that sets an `exists` watch on its
//! own node to learn whether it leads waits for nothing, and a config follower's watch on a
//! node that does not exist yet is how it waits for it to appear. Only the code knows which of
//! its watches block it. A recipe machine says so through [`Recipe::declared`]; the driver
//! writes each change down with its [`Recorder`] under an id of its own (a declarer), so that
//! several recipes on one session are told apart. Code of one's own that waits without a
//! machine says it with [`Recorder::declare`].
//!
//! [`Recipe::declared`]: crate::machine::Recipe::declared
//! [`Recorder`]: crate::outcome::Recorder
//! [`Recorder::declare`]: crate::outcome::Recorder::declare

use std::fmt;

/// What one declarer owns and waits for at a moment. The default declares nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Declared {
    /// Nodes it owns: it deletes each once done with it (or its session's end does), so whoever
    /// waits for one to go waits for it.
    pub owns: Vec<String>,
    /// Nodes it waits to see gone: it cannot go on until one of them is deleted. Waiting for a
    /// node to appear is not declared here; nothing can tell that it never will.
    pub awaits_gone: Vec<String>,
}

impl Declared {
    /// Whether it declares anything.
    pub fn is_empty(&self) -> bool {
        self.owns.is_empty() && self.awaits_gone.is_empty()
    }
}

impl fmt::Display for Declared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return write!(f, "owns nothing, awaits nothing");
        }
        let mut parts = Vec::new();
        if !self.owns.is_empty() {
            parts.push(format!("owns {}", self.owns.join(" ")));
        }
        if !self.awaits_gone.is_empty() {
            parts.push(format!("awaits {} gone", self.awaits_gone.join(" or ")));
        }
        write!(f, "{}", parts.join("; "))
    }
}
