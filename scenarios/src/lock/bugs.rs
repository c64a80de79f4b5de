//! The known bugs only the lock has, as mutations of its correct machine.

use zklab_recipes::client::{EventType, Op, OpResult, SessionEvent, Stat, ZkError, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{parent, sequence, Mutation, Traffic};

/// After ConnectionLoss on the create of an ephemeral sequential node, give the attempt up as if
/// the session were gone, and let the application start over in a new session: the node the
/// create may have made stays behind in the old session, which lives on, and blocks whoever
/// waits behind it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct GiveUp {
    traffic: Traffic,
}

impl Mutation for GiveUp {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let creating = self.traffic.creating().is_some();
        self.traffic.take(&input);
        let input = match input {
            Input::Reply(Err(ZkError::ConnectionLoss)) if creating => {
                Input::Event(ZkEvent::Session(SessionEvent::Expired))
            }
            other => other,
        };
        let step = inner.step(input);
        self.traffic.sent(&step);
        step
    }
}

/// Orders contenders by their full names, so by guid, instead of by sequence number: a contender
/// first by name holds even when an older node stands, and two hold at once. Its decisions depend
/// on the guids, so it is not symmetric under renaming sessions.
///
/// The inner machine still orders by sequence; the mutation answers its listings with only the
/// nodes that make it decide as ordering by name would (itself, and its predecessor by name when
/// that one is older), and waits itself on a predecessor by name that is younger, listing again
/// for the inner machine once it is gone.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct SortByName {
    traffic: Traffic,
    /// The inner machine's node.
    own: Option<String>,
    /// The op the mutation sent on its own, while the inner machine awaits a listing.
    mine: Option<Op>,
    /// The younger predecessor by name it waits on.
    awaited: Option<String>,
    /// That predecessor went while the exists on it was in flight.
    relist: bool,
}

impl SortByName {
    /// Sends an op of the mutation's own.
    fn send_mine<O>(&mut self, op: Op) -> Step<O> {
        self.mine = Some(op.clone());
        Step::send(op)
    }

    /// Lists again on the inner machine's behalf.
    fn relist<O>(&mut self, dir: String) -> Step<O> {
        self.relist = false;
        self.send_mine(Op::GetChildren {
            path: dir,
            watch: false,
        })
    }

    /// A listing for the inner machine: answered with the nodes that make it decide by name, or
    /// kept back while the mutation waits on a younger predecessor by name.
    fn on_listing<M: Recipe>(
        &mut self,
        inner: &mut M,
        dir: &str,
        children: Vec<String>,
    ) -> Step<M::Outcome> {
        let Some(own_path) = self.own.clone() else {
            // Looking for its own node after a lost create reply: nothing to order yet.
            return self.pass(
                inner,
                Input::Reply(Ok(OpResult::Children {
                    children,
                    stat: Stat::default(),
                })),
            );
        };
        let own = own_path.rsplit('/').next().unwrap_or_default().to_owned();
        let mut contenders: Vec<&String> = children
            .iter()
            .filter(|name| sequence(name).is_some())
            .collect();
        contenders.sort();
        let before = contenders
            .iter()
            .take_while(|name| ***name != own)
            .last()
            .map(|name| (*name).clone());
        let shown = match before {
            Some(predecessor) if sequence(&predecessor) > sequence(&own) => {
                let path = format!("{dir}/{predecessor}");
                self.awaited = Some(path.clone());
                return self.send_mine(Op::Exists { path, watch: true });
            }
            Some(predecessor) => vec![predecessor, own],
            None if contenders.iter().any(|name| **name == own) => vec![own],
            // Its node is gone: the inner machine sees so itself.
            None => children,
        };
        self.traffic.listing = shown.clone();
        inner.step(Input::Reply(Ok(OpResult::Children {
            children: shown,
            stat: Stat::default(),
        })))
    }
}

impl Mutation for SortByName {
    const SYMMETRIC: bool = false;

    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let dir = self.own.as_deref().map(parent).unwrap_or("/").to_owned();
        let step = match input {
            Input::Reply(reply) => match (self.mine.take(), reply) {
                (Some(op), Err(ZkError::ConnectionLoss)) => self.send_mine(op),
                (Some(_), Ok(OpResult::Children { children, .. })) => {
                    self.on_listing(inner, &dir, children)
                }
                (Some(_), Ok(OpResult::Exists(stat))) => {
                    if stat.is_none() || self.relist {
                        self.relist(dir)
                    } else {
                        Step::wait()
                    }
                }
                // Its own op failed otherwise (the session expired, the directory went): the
                // inner machine's listing failed so.
                (Some(_), reply) => self.pass(inner, Input::Reply(reply)),
                (None, Ok(OpResult::Children { children, .. }))
                    if matches!(self.traffic.sent, Some(Op::GetChildren { .. })) =>
                {
                    self.traffic.sent = None;
                    self.on_listing(inner, &dir, children)
                }
                (None, Ok(OpResult::Created { path, stat })) => {
                    if self.traffic.creating().is_some() {
                        self.own = Some(path.clone());
                    }
                    self.pass(inner, Input::Reply(Ok(OpResult::Created { path, stat })))
                }
                (None, reply) => self.pass(inner, Input::Reply(reply)),
            },
            Input::Event(ZkEvent::Watch(event))
                if event.event_type == EventType::NodeDeleted
                    && self.awaited.as_deref() == Some(event.path.as_str()) =>
            {
                self.awaited = None;
                if self.mine.is_some() {
                    self.relist = true;
                    Step::wait()
                } else {
                    self.relist(dir)
                }
            }
            input => self.pass(inner, input),
        };
        match &step.action {
            // Reading an adopted node's stat: that node is its own.
            Action::Send(Op::Exists { path, watch: false }) => self.own = Some(path.clone()),
            Action::Send(Op::Create { mode, .. }) if mode.is_sequential() => self.own = None,
            _ => {}
        }
        if self.mine.is_none() {
            self.traffic.sent(&step);
        }
        step
    }
}

impl SortByName {
    /// Hands an input to the inner machine as it is.
    fn pass<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        self.traffic.take(&input);
        inner.step(input)
    }
}
