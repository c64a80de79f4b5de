//! The known bugs only two-phase commit has, as mutations of its correct machine.

use zklab_recipes::client::{EventType, Op, OpResult, WatchedEvent, ZkEvent};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;
use zklab_recipes::two_phase_commit::{parse_tx_data, tx_data, vote_site, ABORT, COMMIT};

use crate::mutation::{Mutation, Traffic};

/// A two-phase-commit site that has voted commit presumes the transaction commits: it reads the
/// transaction at once rather than waiting for the decision's news, and takes it, still
/// undecided, as committed. Whenever another site votes abort, or the coordinator gives up
/// waiting, the sites disagree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct PresumeCommit {
    traffic: Traffic,
    /// The transaction node, once it has voted commit in it.
    voted: Option<String>,
}

impl Mutation for PresumeCommit {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match (input, &self.traffic.sent, &self.voted) {
            (
                Input::Reply(Ok(OpResult::Data { data, stat })),
                Some(Op::GetData { path, .. }),
                Some(tx),
            ) if path == tx => {
                let data = match parse_tx_data(&data) {
                    Some((n, state)) if state != COMMIT && state != ABORT => tx_data(n, COMMIT),
                    _ => data,
                };
                Input::Reply(Ok(OpResult::Data { data, stat }))
            }
            (input, ..) => input,
        };
        let voting = match &self.traffic.sent {
            Some(Op::SetData { path, data, .. })
                if parse_tx_data(data).is_some_and(|(_, vote)| vote == COMMIT) =>
            {
                path.rsplit_once('/')
                    .and_then(|(tx, name)| vote_site(name).map(|_| tx.to_owned()))
            }
            _ => None,
        };
        let voted_now =
            matches!(&input, Input::Reply(Ok(OpResult::SetData(_)))) && voting.is_some();
        self.traffic.take(&input);
        let mut step = inner.step(input);
        if voted_now && step.action == Action::Wait {
            // No waiting for the decision's news: read the transaction now.
            self.voted = voting;
            let news = Input::Event(ZkEvent::Watch(WatchedEvent {
                event_type: EventType::NodeDataChanged,
                path: self.voted.clone().unwrap_or_default(),
            }));
            step = inner.step(news);
        }
        self.traffic.sent(&step);
        step
    }
}
