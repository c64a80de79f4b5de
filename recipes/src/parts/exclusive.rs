//! The role part: a role (a lock, leadership, one side of a read/write lock) that a contender
//! holds once its line lets it go, until it lets go or its session ends. The lock, the leader
//! election and the read/write lock are this part under their own names: a [`Role`] gives the
//! line its contenders get into, the application's request and the recipe's own outcome type.
//!
//! A [`Contender`] gets in line; once it may go it holds the role, with its node's czxid as the
//! fencing token. Its [`Link`] tracks the connection in every phase: a disconnected holder is
//! suspended (it may already have lost the role), an expired one has lost it. Letting go tells
//! the application at once (it stops using the role when it asks) and deletes the node, retried
//! through ConnectionLoss; NoNode then means an earlier delete already landed.
//!
//! In a revocable line (see [`super::contender::Revocation`]), the contender has read its node
//! with a watch since it made it; one whose node changed since its last read reads it again
//! before it holds. While it holds, each change to its node is read again, and an [`UNLOCK`]
//! makes it let go: the driver feeds the event only when the application checks in between
//! uses, so it gives up once its current use is over, as the document asks. Its node deleted by
//! another (forced out) ends the hold. Both tell the application it was revoked.

use std::fmt::{self, Debug};
use std::hash::Hash;
use std::sync::Arc;

use crate::client::{
    EventType, Op, OpReply, OpResult, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent,
};
use crate::declaration::Declared;
use crate::handle::{Handle, Plays};
use crate::machine::{Driver, Input, Recipe, Step};
use crate::outcome::{Outcome, Recorder};
use crate::parts::contender::{Contender, Line, Verdict, UNLOCK};
use crate::parts::link::{Connection, Delivery, Link, RecipeError};
use crate::session_renaming::{session_guid, RenameSessions};

/// One recipe's names for a role, and the line its contenders get into.
pub trait Role: Clone + Debug + Eq + Hash + Send + Sync + 'static {
    /// The application's request: let go of the role.
    type Request: Clone + Eq + Hash + Debug + Send + Sync;
    /// What the application learns: the recipe's own words for a [`Hold`].
    type Outcome: Clone + Eq + Hash + Debug + Into<Outcome> + Send + Sync;
    /// The line a contender for this role gets into (its node's marker, and when it may go).
    fn line(&self) -> Line;
    /// What the application learns of `hold`, in the recipe's words.
    fn tell(&self, hold: Hold) -> Self::Outcome;
    /// The request that lets go.
    fn let_go() -> Self::Request;
    /// What the application learns of `revoking`, in the recipe's words. Only a role whose line
    /// is revocable (see [`super::contender::Revocation`]) is ever told of it; the others name nothing.
    fn tell_revoking(&self, revoking: Revoking) -> Option<Self::Outcome> {
        let _ = revoking;
        None
    }
}

/// What a contender in a revocable line learns of revocation, before the recipe names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Revoking {
    /// Asked to give up (or forced out), it no longer holds the role, nor waits for it.
    Revoked,
    /// It is about to delete the node of the holder of `token`, which did not give up within the
    /// grace period: fence the token first.
    Forcing {
        /// The token of the holder forced out.
        token: i64,
    },
}

/// What a holder of a role learns, before the recipe names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hold {
    /// Its line let it go: the role is held; `token` is the node's czxid.
    Granted {
        /// The fencing token.
        token: i64,
    },
    /// The connection dropped while holding.
    Suspended,
    /// Reconnected within the same session while holding.
    Resumed,
    /// The session ended.
    Lost,
    /// Let go.
    Released,
    /// An error the recipe cannot handle.
    Failed(ZkError),
}

/// Declares a role recipe's outcome type: [`Hold`]'s variants under the recipe's own names for
/// being granted and letting go, with `From<Hold>` and the conversion into the trace's
/// [`Outcome`] (`Granted` for a role held alone, `Shared` for one held with others). The lock,
/// the election and the semaphore tell their applications the same six things, so they are
/// written here once, their documentation naming the recipe's `role`.
macro_rules! role_outcome {
    (
        $(#[$doc:meta])*
        $name:ident, role $role:literal, $granted:ident as $umbrella:ident, $released:ident
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            #[doc = concat!("The client holds the ", $role, "; `token`, its node's czxid, is the \
                fencing token to present to whatever the ", $role, " protects: it only grows \
                from one holder to the next.")]
            $granted {
                /// The fencing token.
                token: i64,
            },
            #[doc = concat!("The connection dropped while holding: the session may expire at \
                any moment, so the holder must stop trusting the ", $role, " until [`",
                stringify!($name), "::Resumed`].")]
            Suspended,
            #[doc = concat!("Reconnected within the same session while holding: the ", $role,
                " is still held.")]
            Resumed,
            #[doc = concat!("The session ended: the ", $role, ", held or awaited, is gone.")]
            Lost,
            #[doc = concat!("The client let go of the ", $role, ".")]
            $released,
            /// The recipe gave up on an error it cannot handle.
            Failed($crate::client::ZkError),
        }

        impl From<$crate::parts::exclusive::Hold> for $name {
            fn from(hold: $crate::parts::exclusive::Hold) -> $name {
                use $crate::parts::exclusive::Hold;
                match hold {
                    Hold::Granted { token } => $name::$granted { token },
                    Hold::Suspended => $name::Suspended,
                    Hold::Resumed => $name::Resumed,
                    Hold::Lost => $name::Lost,
                    Hold::Released => $name::$released,
                    Hold::Failed(error) => $name::Failed(error),
                }
            }
        }

        impl From<$name> for $crate::outcome::Outcome {
            fn from(outcome: $name) -> $crate::outcome::Outcome {
                use $crate::outcome::Outcome;
                match outcome {
                    $name::$granted { token } => Outcome::$umbrella { role: $role, token },
                    $name::Suspended => Outcome::Suspended,
                    $name::Resumed => Outcome::Resumed,
                    $name::Lost => Outcome::Lost,
                    $name::$released => Outcome::Released { role: $role },
                    $name::Failed(error) => Outcome::Failed(error),
                }
            }
        }
    };
}
pub(crate) use role_outcome;

/// Where the machine is in the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, RenameSessions)]
enum Phase {
    /// Not started.
    Idle,
    /// In line for the role.
    Contending,
    /// Its line let it go; reading its node, which changed since its last read, for an
    /// [`UNLOCK`] before it holds (revocable lines).
    Checking {
        /// The fencing token it will hold with.
        #[rename(keep)]
        token: i64,
    },
    /// Holding the role.
    Held,
    /// Holding, reading its node again after a change (revocable lines).
    Rereading {
        /// The application let go meanwhile: delete the node once the read returns.
        let_go: bool,
    },
    /// The delete of our node is in flight.
    Releasing,
    /// Finished.
    Done,
}

/// A role as a pure state machine: a [`Contender`] its line lets go holds the role, and its
/// [`Link`] tells it when to stop trusting it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, RenameSessions)]
pub struct Exclusive<R> {
    contender: Contender,
    link: Link,
    phase: Phase,
    #[rename(keep)]
    role: R,
    /// Its own node changed while a read of it was in flight: read it again (the driver may feed
    /// an event that came after the reply before the reply).
    own_changed: bool,
}

impl<R: Role> Exclusive<R> {
    /// A machine contending for `role` at `dir`, naming its node with `guid` (unique per
    /// contender and stable for its session: [`session_guid`] gives one).
    pub fn new(dir: &str, guid: String, role: R) -> Self {
        Exclusive {
            contender: Contender::new(dir, guid, role.line()),
            link: Link::default(),
            phase: Phase::Idle,
            role,
            own_changed: false,
        }
    }

    /// Whether the holder may act on the role: it holds it and its connection is up (a
    /// disconnected holder may already have lost it).
    pub fn is_safe(&self) -> bool {
        self.holds() && self.link.is_connected()
    }

    /// Whether the machine currently holds the role (suspended or not).
    pub fn holds(&self) -> bool {
        matches!(self.phase, Phase::Held | Phase::Rereading { let_go: false })
    }

    /// Whether the machine is waiting for the node its line waits on to go.
    pub fn is_waiting(&self) -> bool {
        self.phase == Phase::Contending && self.contender.is_waiting()
    }

    /// The path of the contender node, once created or adopted.
    pub fn node(&self) -> Option<&str> {
        self.contender.node()
    }

    fn finish(&mut self, hold: Hold) -> Step<R::Outcome> {
        self.phase = Phase::Done;
        Step::done(self.role.tell(hold))
    }

    /// `step`, telling the application of `revoking` too.
    fn telling_revoking(&self, step: Step<R::Outcome>, revoking: Revoking) -> Step<R::Outcome> {
        match self.role.tell_revoking(revoking) {
            Some(outcome) => step.telling(outcome),
            None => step,
        }
    }

    /// The op that deletes its own node.
    fn delete_own(&mut self) -> Step<R::Outcome> {
        let path = self.node().unwrap_or_default().to_owned();
        Step::send(self.link.send(Op::Delete { path, version: -1 }))
    }

    /// The op that reads its own node, leaving a watch for the next change.
    fn read_own(&mut self) -> Step<R::Outcome> {
        let path = self.node().unwrap_or_default().to_owned();
        Step::send(self.link.send(Op::GetData { path, watch: true }))
    }

    /// Asked to give up: it lets go of the role, or of its place in line, and deletes its node.
    fn give_up(&mut self) -> Step<R::Outcome> {
        self.phase = Phase::Releasing;
        let step = self.delete_own();
        self.telling_revoking(step, Revoking::Revoked)
    }

    /// Does what the contender asks; once it may go, it holds the role (after reading its node,
    /// in a revocable line).
    fn follow(&mut self, verdict: Verdict) -> Step<R::Outcome> {
        let step = match verdict {
            Verdict::Send(op) => Step::send(self.link.send(op)),
            Verdict::Wait => Step::wait(),
            // Its node changed since it last read it (with a watch): read it before it holds.
            Verdict::Go { token } if self.contender.take_reread() => {
                self.phase = Phase::Checking { token };
                self.read_own()
            }
            Verdict::Go { token } => {
                self.phase = Phase::Held;
                Step::wait().telling(self.role.tell(Hold::Granted { token }))
            }
            Verdict::Force { token, op } => {
                let step = Step::send(self.link.send(op));
                self.telling_revoking(step, Revoking::Forcing { token })
            }
            Verdict::Revoked => self.give_up(),
            Verdict::Failed(error) => return self.finish(Hold::Failed(error)),
        };
        match self.contender.take_timer() {
            Some(timer) => step.timing(timer),
            None => step,
        }
    }

    /// Takes the read of its own node: an [`UNLOCK`] makes it give up; its node gone means it
    /// was forced out.
    fn on_own_data(&mut self, reply: Result<Vec<u8>, ZkError>) -> Step<R::Outcome> {
        match (self.phase, reply) {
            (Phase::Rereading { let_go: true }, Ok(_)) => {
                self.phase = Phase::Releasing;
                self.own_changed = false;
                self.delete_own()
            }
            (Phase::Rereading { let_go: true }, Err(_)) => {
                self.phase = Phase::Done;
                Step::stop()
            }
            (_, Ok(data)) if data == UNLOCK => self.give_up(),
            (_, Ok(_)) if std::mem::take(&mut self.own_changed) => self.read_own(),
            (Phase::Checking { token }, Ok(_)) => {
                self.phase = Phase::Held;
                Step::wait().telling(self.role.tell(Hold::Granted { token }))
            }
            (_, Ok(_)) => {
                self.phase = Phase::Held;
                Step::wait()
            }
            (_, Err(_)) => self.forced_out(),
        }
    }

    /// Its node was deleted by another: the role, held or awaited, is gone.
    fn forced_out(&mut self) -> Step<R::Outcome> {
        self.phase = Phase::Done;
        self.telling_revoking(Step::stop(), Revoking::Revoked)
    }

    /// Takes a watch event on its own node while it holds (revocable lines only set one).
    fn on_own_watch(&mut self, event_type: EventType) -> Step<R::Outcome> {
        match event_type {
            EventType::NodeDataChanged => {
                self.phase = Phase::Rereading { let_go: false };
                self.read_own()
            }
            EventType::NodeDeleted => self.forced_out(),
            _ => Step::wait(),
        }
    }

    fn on_reply(&mut self, reply: OpReply) -> Step<R::Outcome> {
        match (self.phase, self.link.on_reply(reply)) {
            (_, Delivery::Resend(op)) => Step::send(op),
            // NoNode: an earlier delete, whose reply was lost, already landed.
            (
                Phase::Releasing,
                Delivery::SessionLost
                | Delivery::Reply(Ok(OpResult::Deleted) | Err(ZkError::NoNode)),
            ) => {
                self.phase = Phase::Done;
                Step::stop()
            }
            (_, Delivery::SessionLost) => self.finish(Hold::Lost),
            (
                Phase::Checking { .. } | Phase::Rereading { .. },
                Delivery::Reply(Ok(OpResult::Data { data, .. })),
            ) => self.on_own_data(Ok(data)),
            (
                Phase::Checking { .. } | Phase::Rereading { .. },
                Delivery::Reply(Err(ZkError::NoNode)),
            ) => self.on_own_data(Err(ZkError::NoNode)),
            (Phase::Contending, Delivery::Reply(reply)) => {
                let verdict = self.contender.on_reply(reply);
                self.follow(verdict)
            }
            (_, Delivery::Reply(Err(error))) => self.finish(Hold::Failed(error)),
            (_, Delivery::Reply(Ok(_))) => self.finish(Hold::Failed(ZkError::MarshallingError)),
        }
    }

    fn on_session(&mut self, event: SessionEvent) -> Step<R::Outcome> {
        match self.link.on_session(event, self.holds()) {
            Some(Connection::Lost) if self.phase == Phase::Releasing => {
                self.phase = Phase::Done;
                Step::stop()
            }
            Some(Connection::Lost) => self.finish(Hold::Lost),
            Some(Connection::Suspended) => Step::wait().telling(self.role.tell(Hold::Suspended)),
            Some(Connection::Resumed) => Step::wait().telling(self.role.tell(Hold::Resumed)),
            None => Step::wait(),
        }
    }
}

impl<R: Role> Recipe for Exclusive<R> {
    type Request = R::Request;
    type Outcome = R::Outcome;

    /// Its contender's node, and the nodes it waits behind.
    fn declared(&self) -> Declared {
        self.contender.declared()
    }

    fn step(&mut self, input: Input<R::Request>) -> Step<R::Outcome> {
        match input {
            _ if self.phase == Phase::Done => Step::stop(),
            Input::Start if self.phase == Phase::Idle => {
                self.phase = Phase::Contending;
                let verdict = self.contender.start();
                self.follow(verdict)
            }
            Input::Start => Step::wait(),
            Input::Reply(reply) => self.on_reply(reply),
            Input::Event(ZkEvent::Watch(event)) if self.phase == Phase::Contending => {
                let verdict = self.contender.on_watch(&event);
                self.follow(verdict)
            }
            Input::Event(ZkEvent::Watch(event))
                if self.phase == Phase::Held && Some(event.path.as_str()) == self.node() =>
            {
                self.on_own_watch(event.event_type)
            }
            Input::Event(ZkEvent::Watch(event))
                if matches!(self.phase, Phase::Checking { .. } | Phase::Rereading { .. })
                    && Some(event.path.as_str()) == self.node() =>
            {
                self.own_changed = true;
                Step::wait()
            }
            Input::Event(ZkEvent::Watch(_)) => Step::wait(),
            Input::Event(ZkEvent::Session(event)) => self.on_session(event),
            // The application stops using the role the moment it lets go: from here the delete
            // only cleans up, retried through ConnectionLoss.
            Input::App(_) if self.phase == Phase::Held => {
                self.phase = Phase::Releasing;
                self.delete_own().telling(self.role.tell(Hold::Released))
            }
            Input::App(_) if self.phase == (Phase::Rereading { let_go: false }) => {
                self.phase = Phase::Rereading { let_go: true };
                Step::wait().telling(self.role.tell(Hold::Released))
            }
            Input::Timeout if self.phase == Phase::Contending => {
                let verdict = self.contender.on_timeout();
                self.follow(verdict)
            }
            Input::App(_) | Input::Timeout => Step::wait(),
        }
    }
}

/// What a role's handle keeps besides its directory: the role, and the fence of a revocable
/// role's forced variant.
#[derive(Clone)]
pub struct ClaimSettings<R> {
    role: R,
    fence: Option<Fence>,
}

impl<R: Debug> fmt::Debug for ClaimSettings<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClaimSettings")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// A role at a directory path, such as `/locks/orders`: the handle an application keeps (the
/// lock calls it `Lock`, the election `Election`).
pub type Claim<R> = Handle<ClaimSettings<R>>;

/// What a revocable role's application does to make the protected resource refuse a token from
/// now on.
pub type Fence = Arc<dyn Fn(i64) + Send + Sync>;

/// Writes outcomes down and fences the token of a holder about to be forced out. The driver
/// hands it each outcome before it sends the machine's next op, so the fence is up before the
/// forced deletion is sent.
struct Fencing {
    fence: Fence,
    recorder: Option<Arc<dyn Recorder>>,
}

impl Recorder for Fencing {
    fn record(&self, session: SessionId, outcome: Outcome) {
        if let Outcome::Forcing { token } = outcome {
            (self.fence)(token);
        }
        if let Some(recorder) = &self.recorder {
            recorder.record(session, outcome);
        }
    }

    fn new_declarer(&self) -> u32 {
        self.recorder
            .as_ref()
            .map_or(0, |recorder| recorder.new_declarer())
    }

    fn declare(&self, session: SessionId, declarer: u32, declared: &Declared) {
        if let Some(recorder) = &self.recorder {
            recorder.declare(session, declarer, declared);
        }
    }
}

impl<R: Role + Default> Claim<R> {
    /// The role whose contender nodes live under `dir` (created if missing).
    pub fn new(dir: &str) -> Self {
        Claim::with_role(dir, R::default())
    }
}

impl<R: Role> Claim<R> {
    /// `role`, whose contender nodes live under `dir` (created if missing).
    pub fn with_role(dir: &str, role: R) -> Self {
        Handle::at(dir, ClaimSettings { role, fence: None })
    }

    /// The same role, calling `fence` with the token of a holder this session is about to force
    /// out (a revocable role's forced variant), before it deletes the holder's node.
    pub fn fencing(mut self, fence: Fence) -> Self {
        self.settings.fence = Some(fence);
        self
    }

    /// Where the driver hands outcomes: the recorder, behind the fence if there is one.
    fn outcomes_to(&self) -> Option<Arc<dyn Recorder>> {
        match &self.settings.fence {
            Some(fence) => Some(Arc::new(Fencing {
                fence: fence.clone(),
                recorder: self.recorder.clone(),
            })),
            None => self.recorder.clone(),
        }
    }

    /// The machine this role runs for a session.
    pub fn machine(&self, session: SessionId) -> Exclusive<R> {
        Exclusive::new(
            &self.path,
            session_guid(session),
            self.settings.role.clone(),
        )
    }

    /// Waits until this session holds the role. Fails with `Revoked` if, in a revocable line,
    /// it was asked to give up first.
    pub async fn acquire<'c, C: ZkClient>(
        &self,
        client: &'c C,
    ) -> Result<Held<'c, C, Exclusive<R>>, RecipeError> {
        self.acquire_with(client, self.machine(client.session_id()))
            .await
    }

    /// Waits until `machine` holds the role: this role's own machine, or one built around it
    /// (the harness runs known-broken variants of the protocol this way).
    pub async fn acquire_with<'c, C: ZkClient, M: Plays<R::Request, R::Outcome>>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Result<Held<'c, C, M>, RecipeError> {
        let mut driver = Driver::new(client, machine).recording(self.outcomes_to());
        let granted = driver
            .feed_until(Input::Start, |outcome| match outcome.into() {
                Outcome::Granted { token, .. } | Outcome::Shared { token, .. } => Some(Ok(token)),
                outcome => RecipeError::ending(outcome).map(Err),
            })
            .await;
        let token = granted.unwrap_or(Err(RecipeError::SessionLost))?;
        Ok(Held {
            driver,
            token,
            let_go: R::let_go(),
            revoked: false,
        })
    }
}

/// A held role. It does not let go on drop (that needs the network): call [`Held::release`]; a
/// dropped guard's node goes when its session ends.
#[derive(Debug)]
pub struct Held<'c, C, M: Recipe> {
    driver: Driver<'c, C, M>,
    token: i64,
    let_go: M::Request,
    /// Asked to give up, it did.
    revoked: bool,
}

impl<C: ZkClient, M: Recipe> Held<'_, C, M> {
    /// The fencing token: present it to the protected resource, which must refuse any token lower
    /// than one it has already seen.
    pub fn token(&self) -> i64 {
        self.token
    }

    /// Takes in the session events that have arrived and says whether the role can still be
    /// trusted: false while disconnected (even if it was granted just as the connection dropped),
    /// and for good once the session ended or the role was revoked. Call it between uses: in a
    /// revocable line, that is when the holder hears it was asked to give up.
    pub async fn is_safe(&mut self) -> bool {
        self.take_arrived_events().await;
        !self.revoked && !self.driver.is_done() && self.driver.is_connected()
    }

    /// Whether it gave up the role when asked (a revocable line): [`Held::release`] then has
    /// nothing left to do.
    pub fn is_revoked(&self) -> bool {
        self.revoked
    }

    async fn take_arrived_events(&mut self) {
        let outcomes = self.driver.feed_arrived_events().await;
        self.revoked |= outcomes
            .into_iter()
            .any(|outcome| matches!(outcome.into(), Outcome::Revoked { .. }));
    }

    /// Lets go of the role, retrying the delete through ConnectionLoss. Fails with `SessionLost`
    /// if the session ended before the release was asked for (the role was already gone); does
    /// nothing if the role was revoked (the machine let go of it then).
    pub async fn release(mut self) -> Result<(), RecipeError> {
        self.take_arrived_events().await;
        if self.revoked {
            return Ok(());
        }
        if self.driver.is_done() {
            return Err(RecipeError::SessionLost);
        }
        let let_go = Input::App(self.let_go.clone());
        let failed = self
            .driver
            .feed_until(let_go, |outcome| RecipeError::ending(outcome.into()))
            .await;
        failed.map_or(Ok(()), Err)
    }
}
