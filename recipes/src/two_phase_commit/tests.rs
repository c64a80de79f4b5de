//! Unit tests of the two-phase commit machine.

use super::*;
use crate::client::Stat;
use crate::machine::Action;
use crate::test_steps::children;

const DIR: &str = "/2pc";
const NODE: &str = "0000000000000003-vote-site-1";

fn op(step: &Step<TwoPhaseCommitOutcome>) -> Op {
    match &step.action {
        Action::Send(op) => op.clone(),
        other => panic!("expected an op, got {other:?}"),
    }
}

fn data(data: &[u8], version: i32) -> Input<()> {
    Input::Reply(Ok(OpResult::Data {
        data: data.to_vec(),
        stat: Stat {
            version,
            ..Stat::default()
        },
    }))
}

/// A coordinator of transaction 0 that opened it and read one commit vote at `version`; its
/// commit is in flight.
fn committing(version: i32) -> (TwoPhaseCommitMachine, Op) {
    let sites = ["site-1".to_owned()];
    let mut machine =
        TwoPhaseCommitMachine::new(DIR, 0, &sites, Duration::from_secs(1), Part::Coordinator);
    machine.step(Input::Start);
    machine.step(data(b"", 0));
    let opened = Ok(OpResult::Multi(vec![
        Ok(OpResult::Checked),
        Ok(OpResult::Created {
            path: format!("{DIR}/{TX}"),
            stat: Stat::default(),
        }),
    ]));
    machine.step(Input::Reply(opened));
    let read = op(&machine.step(children(&[NODE])));
    assert!(matches!(read, Op::GetData { ref path, .. } if path.ends_with(NODE)));
    let decide = op(&machine.step(data(&tx_data(0, COMMIT), version)));
    (machine, decide)
}

#[test]
fn a_commit_checks_the_vote_node_at_the_version_read() {
    let (_, decide) = committing(0);
    let Op::Multi(ops) = decide else {
        panic!("{decide:?}")
    };
    assert_eq!(
        ops[1],
        Op::Check {
            path: format!("{DIR}/{TX}/{NODE}"),
            version: 0
        }
    );
}

/// A site whose create reply was lost writes its vote again (version 1): a commit checked
/// at the version read before must read the vote again, not fail on it for ever.
#[test]
fn a_commit_refused_on_a_vote_written_since_reads_that_vote_again() {
    let (mut machine, _) = committing(0);
    let refused = Ok(OpResult::Multi(vec![
        Ok(OpResult::RolledBack),
        Err(ZkError::BadVersion),
        Err(ZkError::RuntimeInconsistency),
    ]));
    let list = op(&machine.step(Input::Reply(refused)));
    assert!(matches!(list, Op::GetChildren { .. }), "{list:?}");
    let again = op(&machine.step(children(&[NODE])));
    assert!(
        matches!(again, Op::GetData { ref path, .. } if path.ends_with(NODE)),
        "{again:?}"
    );
    let Op::Multi(ops) = op(&machine.step(data(&tx_data(0, COMMIT), 1))) else {
        panic!("a decision")
    };
    assert!(matches!(ops[1], Op::Check { version: 1, .. }));
}
