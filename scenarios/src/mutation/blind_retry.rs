//! Creating a sequential node again after ConnectionLoss without looking: a bug of every
//! recipe that lines up on sequential nodes (the lock, the double barrier).

use zklab_recipes::client::ZkError;
use zklab_recipes::machine::{Input, Recipe, Step};
use zklab_recipes::session_renaming::RenameSessions;

use crate::mutation::{Mutation, Traffic};

/// After ConnectionLoss on the create of an ephemeral sequential node, create it again without
/// looking for the node the first create may have made: a lost create reply leaves an orphan
/// that blocks everyone behind it until its session ends.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, RenameSessions)]
pub struct BlindRetry {
    traffic: Traffic,
}

impl Mutation for BlindRetry {
    fn step<M: Recipe>(&mut self, inner: &mut M, input: Input<M::Request>) -> Step<M::Outcome> {
        if let (Input::Reply(Err(ZkError::ConnectionLoss)), Some(create)) =
            (&input, self.traffic.creating())
        {
            return Step::send(create.clone());
        }
        self.traffic.take(&input);
        let step = inner.step(input);
        self.traffic.sent(&step);
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::lock::Lock;
    use zklab_recipes::machine::Input;

    use crate::mutation::lock_steps::op;
    use crate::mutation::Mutated;

    #[test]
    fn blind_retry_creates_again_after_connection_loss_without_looking() {
        let mut m = Mutated::<_, BlindRetry>::new(Lock::new("/l").machine(1));
        let create = op(&m.step(Input::Start)).clone();
        let again = m.step(Input::Reply(Err(ZkError::ConnectionLoss)));
        assert_eq!(op(&again), &create);
    }
}
