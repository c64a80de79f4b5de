//! The model: N clients, each running the real recipe machine, against the real pure server.
//!
//! Each client has at most one op in flight (its outbox) and an inbox of replies and watch
//! events in server order. An action is one step of the world: the server applies a client's
//! op, a client takes its next inbox item, the application makes a request, a client's timer
//! goes off, or a fault strikes (each kind from its own budget). Time is not modelled: a set
//! timer goes off once the world is quiet (every op applied, every reply and event taken), as it
//! would when nothing is slow, or, within the budget of pauses, at any moment (something was
//! slow: a paused process, a partition). Nothing here models the recipe: the machines do.
//!
//! Nothing here judges it either: each step is told, as trace events, to the workload's monitors
//! (the same ones that read a simulated or a real run's trace), which travel in the state; a
//! property holds while no monitor has reported its kind of violation. Time is not modelled, so
//! the monitors that count time stay with the simulator; the model has its untimed counterparts:
//! no state from which only a fault leads on, and no znode left once every client is done.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stateright::{Model, Property};
use zklab_recipes::client::{
    EventType, Op, OpReply, OpResult, SessionEvent, SessionId, ZkError, ZkEvent,
};
use zklab_recipes::machine::{Action as Next, Input, Recipe, Timer};
use zklab_recipes::outcome::Outcome;
use zklab_recipes::session_renaming::RenameSessions;
use zklab_sim::fault::FaultKind;
use zklab_sim::property::{self, Monitor};
use zklab_sim::server::{Notification, Server};
use zklab_sim::trace::{TraceEntry, TraceEvent};

use crate::application::Application;
use crate::budget::Budget;
use crate::general_properties::{NO_STUCK_STATE, ORPHAN};
use crate::shared::Shared;
use crate::workload::Workload;

/// What a client receives, in the order the server sent it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub enum Inbound {
    /// The reply to the client's op.
    Reply(OpReply),
    /// A watch event.
    Event(ZkEvent),
    /// The connection broke: the client sees Disconnected, ConnectionLoss for the op it had in
    /// flight (if any), then `then` (SyncConnected, or Expired when the session is gone). One
    /// step, since nothing another client does can come between them in what this client sees.
    Break {
        /// An op was in flight and fails with ConnectionLoss. An op still in the outbox when the
        /// break is taken fails too: the server closed an expired session's connection, so
        /// nothing the client sent after the expiry reached it.
        lost_op: bool,
        /// How it ends.
        then: SessionEvent,
    },
}

/// One client: its machine, its session, the op in flight, its inbox, and what the
/// application believes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Client<M> {
    /// The part it plays (see [`Workload::part`]).
    pub part: u8,
    /// The recipe machine.
    pub machine: M,
    /// The current session.
    #[rename(session)]
    pub session: SessionId,
    /// The op sent and not yet applied.
    pub outbox: Option<Op>,
    /// Replies and events not yet taken, in server order.
    pub inbox: VecDeque<Inbound>,
    /// The machine has set its timer.
    pub timer: bool,
    /// What the application makes of the machine's outcomes: whether it holds, whether its
    /// round is over, whether the recipe gave up.
    #[rename(keep)]
    pub application: Application,
    /// The round is over.
    pub finished: bool,
}

/// The whole world at one moment. It hashes as every reordering of its clients does when
/// `symmetric` (see [`crate::symmetry`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State<M, N> {
    /// The pure ZooKeeper server.
    pub server: Shared<Server>,
    /// The clients, by id.
    pub clients: Vec<Shared<Client<M>>>,
    /// The faults still allowed.
    pub budget: Budget,
    /// The workload's monitors, told every step.
    pub monitors: Shared<N>,
    /// The properties they have reported a violation of.
    pub broken: BTreeSet<&'static property::Property>,
    /// Symmetry reduction is on: the state hashes as its reorderings do, so the checker, which
    /// tells states apart by hash, takes them for one. The same in every state of a search.
    pub symmetric: bool,
}

/// One step of the world.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action<R> {
    /// The server applies the client's op; the reply joins its inbox, fired watches join theirs.
    Apply(usize),
    /// The client takes its next inbox item.
    Deliver(usize),
    /// The application asks something of the client.
    Request(usize, R),
    /// The client's timer goes off.
    Timeout(usize),
    /// Fault: the client's op never reaches the server; the client sees ConnectionLoss.
    ConnectionLoss(usize),
    /// Fault: the client's op is applied but its reply is lost.
    LostReply(usize),
    /// Fault: the server expires the client's session.
    SessionExpiry(usize),
    /// The server's reaper deletes the `i`th node it would take (by path): a container that
    /// has had a child and has none. It may run at any moment; the model has no time, so a TTL
    /// node never idles long enough.
    Reap(usize),
}

/// The node `Action::Reap(i)` deletes from `server`: the `i`th the reaper would take, by path
/// (at time 0: the model has no time).
pub(crate) fn reaped_by(server: &Server, i: usize) -> Option<String> {
    server.reap_candidates(0).into_iter().nth(i)
}

impl<R> Action<R> {
    /// Whether the action is a fault (liveness must not depend on one).
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            Action::ConnectionLoss(_) | Action::LostReply(_) | Action::SessionExpiry(_)
        )
    }

    /// The client it concerns; `None` for the server's own step (a reap).
    pub fn client(&self) -> Option<usize> {
        match self {
            Action::Apply(c)
            | Action::Deliver(c)
            | Action::Request(c, _)
            | Action::Timeout(c)
            | Action::ConnectionLoss(c)
            | Action::LostReply(c)
            | Action::SessionExpiry(c) => Some(*c),
            Action::Reap(_) => None,
        }
    }
}

/// The stateright model of a recipe.
#[derive(Clone, Debug)]
pub struct RecipeModel<W> {
    /// The recipe and its application.
    pub workload: W,
    /// Number of clients.
    pub clients: usize,
    /// Fault budgets.
    pub budget: Budget,
    /// Explore only one interleaving of a quiet delivery with everything else (see
    /// [`RecipeModel::quiet_delivery`]).
    pub partial_order: bool,
    /// Every transaction takes zxid 0 (see [`RecipeModel::with_zxids_forgotten`]).
    pub zxids_forgotten: bool,
    /// States that differ only by which client plays which role are one (see
    /// [`RecipeModel::with_symmetry`]).
    pub symmetry: bool,
    /// Raised to end a search early (see [`RecipeModel::with_halt`]).
    pub halt: Arc<AtomicBool>,
    /// The properties the workload's monitors judge, each once, in their order: the model
    /// checks each (with its own condition: see `RecipeModel::NEVER`), before its own.
    pub judged: Vec<&'static property::Property>,
}

/// The model's state for a workload.
pub type StateOf<W> = State<<W as Workload>::Machine, <W as Workload>::Monitors>;
/// The model's action for a workload.
pub type ActionOf<W> = Action<<<W as Workload>::Machine as Recipe>::Request>;

impl<W: Workload> RecipeModel<W> {
    /// A model of `clients` clients running `workload`, with these fault budgets.
    ///
    /// Panics if the workload's monitors judge more properties than the model has conditions
    /// for (`RecipeModel::NEVER`).
    pub fn new(workload: W, clients: usize, budget: Budget) -> Self {
        let mut judged = workload.monitors().properties();
        let mut seen = BTreeSet::new();
        judged.retain(|property| seen.insert(*property));
        assert!(
            judged.len() <= Self::NEVER.len(),
            "{workload:?}'s monitors judge {} properties; the model checks at most {}: add places \
             to RecipeModel::NEVER",
            judged.len(),
            Self::NEVER.len(),
        );
        RecipeModel {
            judged,
            workload,
            clients,
            budget,
            partial_order: false,
            zxids_forgotten: false,
            symmetry: false,
            halt: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The same model, whose search explores nothing beyond the states already found once
    /// `halt` is raised, so it ends soon after, however many threads search (a checker's own
    /// timeout stops only the threads that ask it for work, and one thread never does).
    pub fn with_halt(self, halt: Arc<AtomicBool>) -> Self {
        RecipeModel { halt, ..self }
    }

    /// The same model, with partial-order reduction on or off.
    pub fn with_partial_order(self, partial_order: bool) -> Self {
        RecipeModel {
            partial_order,
            ..self
        }
    }

    /// The same model, with symmetry reduction on or off: on, a state hashes as every reordering
    /// of its clients does, so the search explores one of them. Sound only for a workload whose
    /// machines behave the same under any renaming of sessions (see [`Workload::symmetric`]).
    pub fn with_symmetry(self, symmetry: bool) -> Self {
        RecipeModel { symmetry, ..self }
    }

    /// The same model, with every zxid forgotten or not: the server stamps every transaction
    /// with zxid 0 ([`Server::without_zxids`]), so states that differ only by zxids are one.
    /// Sound only for a workload whose machines and monitors never read a zxid (see
    /// [`Workload::reads_zxids`]): the server never compares zxids, so setting every zxid to 0
    /// takes each step of the model to a step of the reduced one, with the same outcomes and
    /// violations, and back.
    pub fn with_zxids_forgotten(self, zxids_forgotten: bool) -> Self {
        RecipeModel {
            zxids_forgotten,
            ..self
        }
    }

    /// Whether client `c` taking its next inbox item commutes with every other action that is
    /// enabled now or can become enabled before it, and is invisible to every property; if so,
    /// exploring it alone from this state loses no reachable violation (a persistent set of one).
    ///
    /// The item is quiet when what it feeds the machine (a reply, a watch event, or a break's
    /// Disconnected, then ConnectionLoss for the op it lost, then how it ends):
    /// - gives no outcome, so the application is untouched, and the monitors hear only what the
    ///   client heard and sent (a watch event, a node's data, the op), which they note for this
    ///   client's session alone, where no other client's action looks;
    /// - sends an op only when none is in flight (and a break is taken only with nothing in the
    ///   outbox, which it would otherwise take from the server's reach);
    /// - never restarts the machine (a restart opens a session on the server), and finishes the
    ///   client only once its session expiry can no longer strike (finishing would disable it):
    ///   the client has finished already, its session is gone, or the budget has no expiry left;
    /// - cannot be preceded by another action of the same client that feeds its machine: its
    ///   timer is not set, and the application has nothing to ask of it.
    ///
    /// Then the server is untouched, and other clients' actions only append to the client's
    /// inbox. A session expiry of the client commutes with it: the expiry appends a break to
    /// the inbox and leaves the outbox alone, and an op sent either side of it is failed by that
    /// break. Another client's timer that goes off before it goes off early (the inbox keeps
    /// the world from being quiet), so taking the delivery first leaves it enabled afterwards at
    /// no more cost: with as many pauses left or more, which allows more, never less. Every
    /// property stays as it was: the monitors' verdicts are not touched; a state in which the
    /// delivery is still enabled is not stuck, and an unfinished client finishes only by taking
    /// its items in order, so every path to a stuck state or to one where every client has
    /// finished takes this delivery, which can be moved to its start. A chain of quiet
    /// deliveries only shortens inboxes, so it never closes a cycle in which some other action
    /// is put off for ever.
    pub fn quiet_delivery(&self, state: &StateOf<W>, c: usize) -> bool {
        let client = &state.clients[c];
        // A request waits only for the op in flight, which the server can apply meanwhile.
        let requestable = client.application.may_ask();
        if client.timer || requestable {
            return false;
        }
        let inputs = match client.inbox.front() {
            Some(Inbound::Reply(reply)) => [Some(Input::Reply(reply.clone())), None, None],
            Some(Inbound::Event(event)) => [Some(Input::Event(event.clone())), None, None],
            // A broken connection, with no op in the outbox for it to take.
            Some(Inbound::Break { lost_op, then }) if client.outbox.is_none() => {
                Self::break_inputs(*lost_op, *then)
            }
            Some(Inbound::Break { .. }) | None => return false,
        };
        // Finishing disables the client's session expiry, so it is quiet only when that is off.
        let may_finish = client.application.finished_once_done()
            && (client.finished
                || state.budget.session_expiry == 0
                || !state.server.session_alive(client.session));
        let mut machine = client.machine.clone();
        let mut in_flight = client.outbox.is_some();
        for input in inputs.into_iter().flatten() {
            let step = machine.step(input);
            if step.outcome.is_some() {
                return false;
            }
            match step.action {
                Next::Wait => {}
                Next::Send(_) if !in_flight => in_flight = true,
                Next::Done if may_finish => {}
                Next::Send(_) | Next::Done => return false,
            }
        }
        true
    }

    /// What a break feeds the client's machine, in order: Disconnected, ConnectionLoss for the
    /// op it lost (if any), then how it ends.
    fn break_inputs(
        lost_op: bool,
        then: SessionEvent,
    ) -> [Option<Input<<W::Machine as Recipe>::Request>>; 3] {
        [
            Some(Input::Event(ZkEvent::Session(SessionEvent::Disconnected))),
            lost_op.then_some(Input::Reply(Err(ZkError::ConnectionLoss))),
            Some(Input::Event(ZkEvent::Session(then))),
        ]
    }

    /// Whether any action other than a fault is enabled.
    pub fn can_progress(&self, state: &StateOf<W>) -> bool {
        let mut actions = Vec::new();
        self.actions(state, &mut actions);
        actions.iter().any(|action| !action.is_fault())
    }

    /// Whether the world is quiet: no op to apply, no reply or event to take. A timer goes off
    /// then, with no pause needed (an application that holds may ask something of its client
    /// at any time, before the timer or after it).
    fn quiet(state: &StateOf<W>) -> bool {
        state
            .clients
            .iter()
            .all(|client| client.outbox.is_none() && client.inbox.is_empty())
    }

    /// Feeds a client's machine one input and applies what it says.
    fn feed(
        &self,
        state: &mut StateOf<W>,
        c: usize,
        input: Input<<W::Machine as Recipe>::Request>,
    ) {
        let client = &mut state.clients[c];
        if input == Input::Timeout {
            client.timer = false;
        }
        let step = client.machine.step(input);
        match step.timer {
            Some(Timer::Set(_)) => client.timer = true,
            Some(Timer::Cancel) => client.timer = false,
            None => {}
        }
        let outcome: Option<Outcome> = step.outcome.map(Into::into);
        if let Some(outcome) = &outcome {
            client.application.hear(outcome);
        }
        if let Some(outcome) = outcome {
            let session = client.session;
            Self::observe(
                state,
                TraceEvent::Outcome {
                    client: c as u32,
                    session,
                    outcome,
                },
            );
        }
        let client = &mut state.clients[c];
        match step.action {
            Next::Send(op) => {
                let session = client.session;
                client.outbox = Some(op.clone());
                let client = c as u32;
                Self::observe(
                    state,
                    TraceEvent::Request {
                        client,
                        session,
                        op,
                    },
                );
            }
            Next::Wait => {}
            Next::Done if client.application.finished_once_done() => client.finished = true,
            Next::Done => {
                // The session is lost before the round was done: start over in a new session.
                let session = state.server.open_session();
                let client = &mut state.clients[c];
                client.session = session;
                client.machine = self.workload.machine(client.part, session);
                client.outbox = None;
                client.inbox.clear();
                client.timer = false;
                self.feed(state, c, Input::Start);
            }
        }
    }

    /// Tells the monitors of one thing that happened.
    fn observe(state: &mut StateOf<W>, event: TraceEvent) {
        let entry = TraceEntry {
            at: Duration::ZERO,
            event,
        };
        let mut found = Vec::new();
        state.monitors.observe_all(&entry, &mut found);
        state
            .broken
            .extend(found.into_iter().map(|violation| violation.property));
    }

    /// Tells the monitors which sessions a change by `by` notified, and delivers the fired
    /// watches to the clients whose current session set them.
    fn notify(state: &mut StateOf<W>, by: SessionId, zxid: i64, notifications: Vec<Notification>) {
        for change in TraceEvent::notified(&state.server, by, zxid, &notifications) {
            Self::observe(state, change);
        }
        for notification in notifications {
            let client = state
                .clients
                .iter_mut()
                .find(|client| client.session == notification.session);
            if let Some(client) = client {
                client
                    .inbox
                    .push_back(Inbound::Event(ZkEvent::Watch(notification.event)));
            }
        }
    }

    /// The server applies a client's op; returns its reply.
    fn apply(state: &mut StateOf<W>, c: usize, op: &Op) -> OpReply {
        let session = state.clients[c].session;
        let applied = state.server.apply(session, op, 0);
        Self::observe(
            state,
            TraceEvent::Applied {
                client: c as u32,
                session,
                zxid: applied.zxid,
                op: op.clone(),
                reply: applied.reply.clone(),
            },
        );
        Self::notify(state, session, applied.zxid, applied.notifications);
        applied.reply
    }

    /// Whether the server has expired the client's session and the client has not yet learnt
    /// it: the server closed the connection, so an op sent now never reaches it.
    fn expiry_pending(client: &Client<W::Machine>) -> bool {
        client.inbox.iter().any(|inbound| {
            matches!(
                inbound,
                Inbound::Break {
                    then: SessionEvent::Expired,
                    ..
                }
            )
        })
    }

    /// The connection breaks under an op in flight and comes back within the session.
    fn reconnect(client: &mut Client<W::Machine>) {
        client.inbox.push_back(Inbound::Break {
            lost_op: true,
            then: SessionEvent::SyncConnected,
        });
    }
}

impl<W: Workload> Model for RecipeModel<W> {
    type State = StateOf<W>;
    type Action = ActionOf<W>;

    fn init_states(&self) -> Vec<Self::State> {
        // The recipe's directory exists from the start (made by a session that has gone), so the
        // search spends its depth on the protocol rather than on creating parents.
        let mut server = if self.zxids_forgotten {
            Server::without_zxids()
        } else {
            Server::new()
        };
        let setup = server.open_session();
        for op in self.workload.initial_ops(self.clients) {
            server.apply(setup, &op, 0);
        }
        server.close_session(setup, 0);
        let clients = (0..self.clients)
            .map(|c| {
                let session = server.open_session();
                let part = self.workload.part(c, self.clients);
                Shared::new(Client {
                    part,
                    machine: self.workload.machine(part, session),
                    session,
                    outbox: None,
                    inbox: VecDeque::new(),
                    timer: false,
                    application: Application::default(),
                    finished: false,
                })
            })
            .collect();
        let mut state = State {
            server: Shared::new(server),
            clients,
            budget: self.budget,
            monitors: Shared::new(self.workload.monitors()),
            broken: BTreeSet::new(),
            symmetric: self.symmetry,
        };
        for c in 0..self.clients {
            self.feed(&mut state, c, Input::Start);
        }
        vec![state]
    }

    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        if self.partial_order {
            if let Some(c) = (0..self.clients).find(|&c| self.quiet_delivery(state, c)) {
                actions.push(Action::Deliver(c));
                return;
            }
        }
        for (c, client) in state.clients.iter().enumerate() {
            if client.outbox.is_some() && !Self::expiry_pending(client) {
                actions.push(Action::Apply(c));
                if state.budget.connection_loss > 0 {
                    actions.push(Action::ConnectionLoss(c));
                }
                if state.budget.lost_reply > 0 {
                    actions.push(Action::LostReply(c));
                }
            }
            if !client.inbox.is_empty() {
                actions.push(Action::Deliver(c));
            }
            if client.timer && !client.finished && (state.budget.pause > 0 || Self::quiet(state)) {
                actions.push(Action::Timeout(c));
            }
            if client.application.may_ask() && client.outbox.is_none() {
                actions.push(Action::Request(c, self.workload.request_when_holding()));
            }
            if state.budget.session_expiry > 0
                && !client.finished
                && state.server.session_alive(client.session)
            {
                actions.push(Action::SessionExpiry(c));
            }
        }
        let candidates = state.server.reap_candidates(0);
        actions.extend((0..candidates.len()).map(Action::Reap));
    }

    fn next_state(&self, last: &Self::State, action: Self::Action) -> Option<Self::State> {
        let mut state = last.clone();
        match action {
            Action::Apply(c) => {
                let op = state.clients[c].outbox.take()?;
                let reply = Self::apply(&mut state, c, &op);
                state.clients[c].inbox.push_back(Inbound::Reply(reply));
            }
            Action::Deliver(c) => {
                match state.clients[c].inbox.pop_front()? {
                    Inbound::Reply(reply) => {
                        // What a client learns of a node's data, monitors may judge it by.
                        if let Ok(OpResult::Data { .. }) = reply {
                            let session = state.clients[c].session;
                            let received = TraceEvent::Reply {
                                client: c as u32,
                                session,
                                reply: reply.clone(),
                            };
                            Self::observe(&mut state, received);
                        }
                        self.feed(&mut state, c, Input::Reply(reply))
                    }
                    Inbound::Event(event) => {
                        if let ZkEvent::Watch(watched) = &event {
                            // What a client hears of a change, monitors may judge it by.
                            let heard = TraceEvent::Watch {
                                client: c as u32,
                                session: state.clients[c].session,
                                event: watched.clone(),
                                zxid: 0,
                                cause: watched.path.clone(),
                                deletion: watched.event_type == EventType::NodeDeleted,
                            };
                            Self::observe(&mut state, heard);
                        }
                        self.feed(&mut state, c, Input::Event(event))
                    }
                    Inbound::Break { lost_op, then } => {
                        let session = state.clients[c].session;
                        let lost_op = lost_op || state.clients[c].outbox.take().is_some();
                        let [disconnected, lost, then] = Self::break_inputs(lost_op, then);
                        for input in [disconnected, lost].into_iter().flatten() {
                            self.feed(&mut state, c, input);
                        }
                        // A machine that gave up meanwhile has been replaced in a new session.
                        if state.clients[c].session == session {
                            self.feed(&mut state, c, then.expect("a break ends"));
                        }
                    }
                }
            }
            Action::Request(c, request) => self.feed(&mut state, c, Input::App(request)),
            Action::Timeout(c) => {
                if !Self::quiet(last) {
                    state.budget.pause -= 1;
                    // Monitors that excuse what a slow client does hear of it.
                    let slow = TraceEvent::Fault {
                        kind: FaultKind::Pause,
                        client: c as u32,
                        detail: "its timer went off before the world was quiet".to_owned(),
                        lasts: Duration::ZERO,
                    };
                    Self::observe(&mut state, slow);
                }
                self.feed(&mut state, c, Input::Timeout);
            }
            Action::ConnectionLoss(c) => {
                state.budget.connection_loss -= 1;
                state.clients[c].outbox.take()?;
                Self::reconnect(&mut state.clients[c]);
            }
            Action::LostReply(c) => {
                state.budget.lost_reply -= 1;
                let op = state.clients[c].outbox.take()?;
                let _lost = Self::apply(&mut state, c, &op);
                Self::reconnect(&mut state.clients[c]);
            }
            Action::SessionExpiry(c) => {
                state.budget.session_expiry -= 1;
                let session = state.clients[c].session;
                let ended = state.server.expire_session(session, 0)?;
                Self::observe(
                    &mut state,
                    TraceEvent::SessionEnded {
                        client: c as u32,
                        session,
                        expired: true,
                        deleted: ended.deleted,
                    },
                );
                Self::notify(&mut state, session, ended.zxid, ended.notifications);
                // The op in flight, if any, fails when the client takes the break.
                state.clients[c].inbox.push_back(Inbound::Break {
                    lost_op: false,
                    then: SessionEvent::Expired,
                });
            }
            Action::Reap(i) => {
                let path = reaped_by(&state.server, i)?;
                let reaped = state.server.reap(&path, 0)?;
                let zxid = reaped.zxid;
                Self::observe(&mut state, TraceEvent::Reaped { zxid, path });
                Self::notify(&mut state, 0, zxid, reaped.notifications);
            }
        }
        Some(state)
    }

    fn within_boundary(&self, _: &Self::State) -> bool {
        !self.halt.load(Ordering::Relaxed)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties: Vec<Property<Self>> = (self.judged.iter())
            .zip(Self::NEVER)
            .map(|(judged, never)| Property::always(judged.name, never))
            .collect();
        properties.push(Property::always(
            NO_STUCK_STATE,
            |model: &Self, state: &Self::State| {
                state.clients.iter().all(|client| client.finished) || model.can_progress(state)
            },
        ));
        properties.push(Property::always(
            ORPHAN.name,
            |model: &Self, state: &Self::State| {
                !state.clients.iter().all(|client| client.finished)
                    || state
                        .server
                        .children(model.workload.root())
                        .is_none_or(|children| {
                            children
                                .iter()
                                .all(|child| model.workload.may_remain(child))
                        })
            },
        ));
        properties
    }
}

impl<W: Workload> RecipeModel<W> {
    /// The conditions of the properties the workload's monitors judge, one per place in
    /// [`RecipeModel::judged`]: no monitor has reported a violation of the property in that
    /// place. Stateright takes a condition as a plain `fn`, not a closure, so each place has its
    /// own; a workload whose monitors judge more properties than there are places is refused
    /// (see [`RecipeModel::new`]).
    const NEVER: [fn(&Self, &StateOf<W>) -> bool; 16] = [
        Self::never::<0>,
        Self::never::<1>,
        Self::never::<2>,
        Self::never::<3>,
        Self::never::<4>,
        Self::never::<5>,
        Self::never::<6>,
        Self::never::<7>,
        Self::never::<8>,
        Self::never::<9>,
        Self::never::<10>,
        Self::never::<11>,
        Self::never::<12>,
        Self::never::<13>,
        Self::never::<14>,
        Self::never::<15>,
    ];

    /// Whether no monitor has reported a violation of the `I`th property judged.
    fn never<const I: usize>(&self, state: &StateOf<W>) -> bool {
        !state.broken.contains(self.judged[I])
    }

    /// The declared property named `name` that the model checks: one its workload's monitors
    /// judge, or [`ORPHAN`]; none for [`NO_STUCK_STATE`], which only the model has.
    pub fn declared(&self, name: &str) -> Option<&'static property::Property> {
        let mut declared = self.judged.iter().copied().chain([&ORPHAN]);
        declared.find(|property| property.name == name)
    }
}
