//! The order a model checker's counterexample forces on a run (see [`crate::forced`]): the
//! server holds a request until its step names its client, and applies it then (or drops it,
//! or loses its reply); a session expires when its step comes; a client's own steps (taking
//! what arrived, asking, a timeout) wait for their turn.

use std::task::Waker;

use zklab_recipes::client::SessionId;

use super::wire::Request;
use super::Service;
use crate::fault::FaultKind;
use crate::forced::{ForcedKind, ForcedOrder, ForcedStep, FORCED_PATIENCE};
use crate::trace::{ClientId, TraceEvent};

impl Service {
    /// Forces the run through `steps` in order, from now.
    pub(crate) fn force_order(&mut self, steps: Vec<ForcedStep>) {
        let now = self.now();
        self.forced = ForcedOrder::new(steps, now);
    }

    /// Why the forced order was given up, if it was (see [`ForcedOrder::abandoned`]).
    pub(crate) fn forced_order_abandoned(&self) -> Option<String> {
        self.forced.abandoned().map(str::to_owned)
    }

    /// Gives the forced order up if no step has been taken for [`FORCED_PATIENCE`], with a
    /// note in the trace saying at which step it stopped. False once the order is over (given
    /// up now or before, or done): its driver need not look again.
    pub(crate) fn check_forced_patience(&mut self) -> bool {
        let now = self.now();
        let Some(step) = self.forced.next_step() else {
            return false;
        };
        if !self.forced.out_of_patience(now) {
            return true;
        }
        let (taken, total) = self.forced.progress();
        let text = format!(
            "the forced order stops at its step {} of {total} ({} c{}): it has not come for \
             {FORCED_PATIENCE:?}; the run goes on freely",
            taken + 1,
            step.kind.name(),
            step.client
        );
        self.forced.give_up(text.clone());
        let client = step.client;
        self.trace.push(now, TraceEvent::Note { client, text });
        self.take_forced_steps();
        false
    }

    /// Takes client `client`'s step of kind `kind` if its turn has come: `Some(true)`;
    /// `Some(false)` when no order is forced, or it is over; `None` otherwise, and `waker`, if
    /// given, is woken when a step is taken.
    pub(crate) fn take_forced_turn(
        &mut self,
        client: ClientId,
        kind: ForcedKind,
        waker: Option<&Waker>,
    ) -> Option<bool> {
        match self.forced.next_step() {
            None => Some(false),
            Some(next) if next == (ForcedStep { client, kind }) => {
                let now = self.now();
                self.forced.take_next(now);
                self.note_forced_order_done(client);
                self.take_forced_steps();
                Some(true)
            }
            Some(_) => {
                if let Some(waker) = waker {
                    self.forced.wait(waker);
                }
                None
            }
        }
    }

    /// The server handles one request from a connected session: now, or, under a forced order,
    /// once its step comes.
    pub(super) fn serve(&mut self, session: SessionId, request: Request) {
        if self.forced.is_over() || !matches!(request, Request::Op { .. }) {
            return self.serve_now(session, request);
        }
        self.held.push_back((session, request));
        self.take_forced_steps();
    }

    /// Takes the forced order's server steps while it can: an expiry at once, a request's step
    /// once its client's request is held; then, with no step left, serves what is still held.
    fn take_forced_steps(&mut self) {
        while let Some(step) = self.forced.next_step() {
            if !step.kind.is_server_step() {
                return;
            }
            let ForcedStep { client, kind } = step;
            // A request of a session that has ended since it came is not the model's: the
            // model's op in flight went with its session. The server answers it as ended.
            while let Some(index) = self
                .held
                .iter()
                .position(|(session, _)| !self.servers.session_alive(*session))
            {
                if let Some((session, request)) = self.held.remove(index) {
                    self.serve_now(session, request);
                }
            }
            let taken = if kind == ForcedKind::Reap {
                // The candidates as the model, which has no time, numbers them: containers
                // alone (at time 0 no TTL node has idled).
                let leader = self.servers.server(self.servers.leader());
                let candidates = leader.reap_candidates(0);
                if let Some(path) = candidates.get(client as usize) {
                    self.reap(&path.clone());
                }
                None
            } else if kind == ForcedKind::SessionExpiry {
                let session = self.processes.get(&client).and_then(|p| p.session);
                if let Some(session) = session.filter(|&s| self.servers.session_alive(s)) {
                    self.expire(session);
                    let detail = format!("server expires s{session}");
                    self.fault(FaultKind::SessionExpiry, client, detail);
                }
                None
            } else {
                let Some(index) = self.held.iter().position(|(session, _)| {
                    self.conns.get(session).is_some_and(|c| c.client == client)
                }) else {
                    return;
                };
                self.held.remove(index)
            };
            let now = self.now();
            self.forced.take_next(now);
            // A reap is the server's own, and names no client.
            self.note_forced_order_done(if kind == ForcedKind::Reap { 0 } else { client });
            let armed = match kind {
                ForcedKind::ConnectionLoss => Some(FaultKind::ConnectionLoss),
                ForcedKind::LostReply => Some(FaultKind::LostReply),
                _ => None,
            };
            if let (Some(armed), Some(process)) = (armed, self.processes.get_mut(&client)) {
                process.armed.push(armed);
            }
            if let Some((session, request)) = taken {
                self.serve_now(session, request);
            }
        }
        while let Some((session, request)) = self.held.pop_front() {
            self.serve_now(session, request);
        }
    }

    /// Says in the trace that the forced order is done, if it is, after a step of `client`'s.
    fn note_forced_order_done(&mut self, client: ClientId) {
        if self.forced.is_over() {
            let now = self.now();
            let text = crate::forced::DONE.to_owned();
            self.trace.push(now, TraceEvent::Note { client, text });
        }
    }
}
