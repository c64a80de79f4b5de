//! The known bug only the shared counter has, as a mutation of its correct machine.

use zklab_recipes::client::{Op, OpReply, OpResult, ZkError};
use zklab_recipes::machine::{Action, Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;
use zklab_recipes::shared_counter::Tally;

use crate::mutation::Mutation;

/// A blind retry of a set whose reply was lost: after ConnectionLoss on its set, the writer
/// reads the counter and increments it again as if the set had not landed. It takes its own
/// entry in what it reads for the one it had before its set, until a set of its is answered;
/// so a set that landed is counted twice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct BlindSetRetry {
    /// The data the last read gave (as the machine was told it): what a set is made from.
    #[rename(keep)]
    read: Option<Vec<u8>>,
    /// The data of the set in flight.
    #[rename(keep)]
    setting: Option<Vec<u8>>,
    /// Since the last set's reply was lost: the data it was made from, and its own.
    #[rename(keep)]
    lost: Option<(Vec<u8>, Vec<u8>)>,
}

impl BlindSetRetry {
    /// Takes a reply on its way to the machine, and gives what the machine is told.
    fn take(&mut self, reply: OpReply) -> OpReply {
        if let Some(set) = self.setting.take() {
            self.lost = match (&reply, &self.read) {
                (Err(ZkError::ConnectionLoss), Some(before)) => Some((before.clone(), set)),
                _ => None,
            };
        }
        let Ok(OpResult::Data { data, stat }) = reply else {
            return reply;
        };
        let data = match &self.lost {
            Some((before, set)) => as_if_not_landed(data, before, set),
            None => data,
        };
        self.read = Some(data.clone());
        Ok(OpResult::Data { data, stat })
    }
}

/// `read`, with the entry a set changed from `before` to `set` (the writer's own) as it was in
/// `before`.
fn as_if_not_landed(read: Vec<u8>, before: &[u8], set: &[u8]) -> Vec<u8> {
    let (Some(mut now), Some(before), Some(set)) = (
        Tally::decode(&read),
        Tally::decode(before),
        Tally::decode(set),
    ) else {
        return read;
    };
    for (writer, entry) in &set.entries {
        let had = before.entries.get(writer);
        if had != Some(entry) {
            match had {
                Some(had) => now.entries.insert(writer.clone(), *had),
                None => now.entries.remove(writer),
            };
        }
    }
    now.encode()
}

impl Mutation for BlindSetRetry {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        let input = match input {
            Input::Reply(reply) => Input::Reply(self.take(reply)),
            input => input,
        };
        let step = inner.step(input);
        if let Action::Send(Op::SetData { data, .. }) = &step.action {
            self.setting = Some(data.clone());
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::client::Stat;
    use zklab_recipes::shared_counter::SharedCounter;

    use crate::mutation::Mutated;

    fn read(data: Vec<u8>) -> Input<()> {
        Input::Reply(Ok(OpResult::Data {
            data,
            stat: Stat::default(),
        }))
    }

    /// The data a step's set writes.
    fn set_data<O: std::fmt::Debug>(step: &Step<O>) -> Vec<u8> {
        match &step.action {
            Action::Send(Op::SetData { data, .. }) => data.clone(),
            other => panic!("expected a set, got {other:?}"),
        }
    }

    #[test]
    fn after_a_lost_set_reply_it_counts_again_over_its_own_landed_set() {
        let machine = SharedCounter::new("/c/n", "w").machine(1);
        let mut m = Mutated::<_, BlindSetRetry>::new(machine);
        m.step(Input::Start);
        let landed = set_data(&m.step(read(Vec::new())));
        m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        let again = Tally::decode(&set_data(&m.step(read(landed)))).unwrap();
        assert_eq!(again.value, 2, "its increment counted twice");
        // Answered, the set ends the bug's blindness.
        let step = m.step(Input::Reply(Ok(OpResult::SetData(Stat::default()))));
        assert!(matches!(step.action, Action::Done));
    }
}
