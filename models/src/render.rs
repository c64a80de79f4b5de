//! Counterexamples told the way the simulator tells a run: one line per step (the action, the op,
//! the reply, the fault, what each client believes), and as a Mermaid sequence diagram
//! (`pictured.rs` draws them as a picture).

use std::fmt::Write as _;

use zklab_recipes::client::ZkEvent;
use zklab_sim::trace::{OpText, ReplyText};

use crate::model::{reaped_by, Action, ActionOf, Client, Inbound, StateOf};
use crate::shared::Shared;
use crate::workload::Workload;

/// One step of a path: the state before, the action, the state after.
pub struct Step<'a, W: Workload> {
    /// Before.
    pub before: &'a StateOf<W>,
    /// What happened.
    pub action: &'a ActionOf<W>,
    /// After.
    pub after: &'a StateOf<W>,
}

impl<W: Workload> Step<'_, W> {
    /// The step as one trace line.
    pub fn line(&self) -> String {
        let Some(c) = self.action.client() else {
            // The server's own step: a reap.
            let mut line = format!("   -- server reaps {}", self.reaped());
            let woken = self.woken();
            if !woken.is_empty() {
                let _ = write!(line, "; notifies {}", woken.join(", "));
            }
            let _ = write!(line, " | {}", beliefs(&self.after.clients));
            return line;
        };
        let client = &self.before.clients[c];
        let who = format!("c{c} s{}", client.session);
        let mut line = match self.action {
            Action::Apply(_) => format!("{who} -> {} => {}", op(client), self.reply_to(c)),
            Action::Deliver(_) => format!("{who} <- {}", inbound(client.inbox.front())),
            Action::Request(_, request) => format!("{who} app {request:?}"),
            Action::Timeout(_) => format!("{who} timer goes off"),
            Action::ConnectionLoss(_) => format!(
                "{who} XX fault connection-loss: before apply: {}",
                op(client)
            ),
            Action::LostReply(_) => format!(
                "{who} XX fault lost-reply: applied, reply lost: {}",
                op(client)
            ),
            Action::SessionExpiry(_) => format!(
                "{who} XX fault session-expiry: the server expires s{}",
                client.session
            ),
            Action::Reap(_) => format!("server reaps {}", self.reaped()),
        };
        let woken = self.woken();
        if !woken.is_empty() {
            let _ = write!(line, "; notifies {}", woken.join(", "));
        }
        let after = &self.after.clients[c];
        if let (None, Some(next)) = (&client.outbox, &after.outbox) {
            let _ = write!(line, "; sends {}", OpText(next));
        }
        let _ = write!(line, " | {}", beliefs(&self.after.clients));
        line
    }

    /// The step in Mermaid's sequence-diagram syntax.
    pub fn mermaid(&self) -> String {
        let mut out = String::new();
        let Some(c) = self.action.client() else {
            let reaped = format!("the reaper deletes {}", self.reaped());
            let _ = writeln!(out, "    Note over ZK: {}", escape(&reaped));
            for (woken, event) in self.woken_clients() {
                let _ = writeln!(out, "    ZK--)c{woken}: {}", escape(&event));
            }
            return out;
        };
        let client = &self.before.clients[c];
        match self.action {
            Action::Apply(_) => {
                let _ = writeln!(out, "    c{c}->>ZK: {}", escape(&op(client)));
                let _ = writeln!(out, "    ZK--)c{c}: {}", escape(&self.reply_to(c)));
            }
            Action::Deliver(_) => {
                let _ = writeln!(
                    out,
                    "    Note over c{c}: takes {}",
                    escape(&inbound(client.inbox.front()))
                );
            }
            Action::Request(_, request) => {
                let _ = writeln!(
                    out,
                    "    Note over c{c}: application {}",
                    escape(&format!("{request:?}"))
                );
            }
            Action::Timeout(_) => {
                let _ = writeln!(out, "    Note over c{c}: timer goes off");
            }
            Action::ConnectionLoss(_)
            | Action::LostReply(_)
            | Action::SessionExpiry(_)
            | Action::Reap(_) => {
                let line = self.line();
                let fault = line
                    .split(" XX ")
                    .nth(1)
                    .and_then(|rest| rest.split(" | ").next())
                    .unwrap_or_default();
                let _ = writeln!(out, "    Note over c{c},ZK: {}", escape(fault));
            }
        }
        for (woken, event) in self.woken_clients() {
            let _ = writeln!(out, "    ZK--)c{woken}: {}", escape(&event));
        }
        out
    }

    /// The node a reap deleted.
    fn reaped(&self) -> String {
        let Action::Reap(i) = self.action else {
            return String::new();
        };
        reaped_by(&self.before.server, *i).unwrap_or_default()
    }

    /// The reply the server queued for client `c` in this step.
    fn reply_to(&self, c: usize) -> String {
        match self.after.clients[c].inbox.back() {
            Some(Inbound::Reply(reply)) => ReplyText(reply).to_string(),
            _ => "(no reply)".to_owned(),
        }
    }

    /// The watch events this step sent, by client: only the server's steps send any.
    fn woken_clients(&self) -> Vec<(usize, String)> {
        if matches!(
            self.action,
            Action::Deliver(_) | Action::Request(..) | Action::Timeout(_)
        ) {
            return Vec::new();
        }
        let mut woken = Vec::new();
        for (c, (before, after)) in self
            .before
            .clients
            .iter()
            .zip(&self.after.clients)
            .enumerate()
        {
            for item in after.inbox.iter().skip(before.inbox.len()) {
                if let Inbound::Event(ZkEvent::Watch(_)) = item {
                    woken.push((c, inbound(Some(item))));
                }
            }
        }
        woken
    }

    fn woken(&self) -> Vec<String> {
        self.woken_clients()
            .into_iter()
            .map(|(c, _)| format!("c{c}"))
            .collect()
    }
}

/// The op client `client` has in flight, in zkCli's words.
pub(crate) fn op<M>(client: &Client<M>) -> String {
    client
        .outbox
        .as_ref()
        .map_or_else(|| "(no op)".to_owned(), |op| OpText(op).to_string())
}

/// An inbox item, compactly.
pub(crate) fn inbound(item: Option<&Inbound>) -> String {
    match item {
        Some(Inbound::Reply(reply)) => ReplyText(reply).to_string(),
        Some(Inbound::Event(ZkEvent::Watch(event))) => {
            format!("watch {:?} {}", event.event_type, event.path)
        }
        Some(Inbound::Event(ZkEvent::Session(event))) => format!("{event:?}"),
        Some(Inbound::Break { lost_op, then }) => {
            let failed = if *lost_op { ", ConnectionLoss" } else { "" };
            format!("Disconnected{failed}, {then:?}")
        }
        None => "(nothing)".to_owned(),
    }
}

/// What every client believes, compactly.
pub(crate) fn beliefs<M>(clients: &[Shared<Client<M>>]) -> String {
    let belief = |client: &Client<M>| match () {
        _ if client.application.failed.is_some() => "failed",
        _ if client.finished => "done",
        _ if client.application.holds => "holds",
        _ if client.application.round_over => "finishing",
        _ => "waits",
    };
    clients
        .iter()
        .enumerate()
        .map(|(c, client)| format!("c{c} {}", belief(client)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Mermaid treats `;` and `#` specially in messages.
fn escape(text: &str) -> String {
    text.replace(';', ",").replace('#', "")
}

/// A whole path as trace lines.
pub fn lines<W: Workload>(steps: &[(StateOf<W>, ActionOf<W>, StateOf<W>)]) -> Vec<String> {
    steps
        .iter()
        .map(|(before, action, after)| {
            Step::<W> {
                before,
                action,
                after,
            }
            .line()
        })
        .collect()
}

/// A whole path as a Mermaid sequence diagram.
pub fn mermaid<W: Workload>(
    clients: usize,
    steps: &[(StateOf<W>, ActionOf<W>, StateOf<W>)],
) -> String {
    let mut out = String::from("sequenceDiagram\n    participant ZK\n");
    for c in 0..clients {
        let _ = writeln!(out, "    participant c{c}");
    }
    for (before, action, after) in steps {
        out.push_str(
            &Step::<W> {
                before,
                action,
                after,
            }
            .mermaid(),
        );
    }
    out
}
