//! The model's fault budget: how many faults of each kind a search may still strike.

use zklab_sim::fault::{refuse_none_in_list, FaultKind};

/// How many more faults of each kind may strike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Budget {
    /// Connection lost before the op reached the server.
    pub connection_loss: u8,
    /// Op applied, reply lost.
    pub lost_reply: u8,
    /// Session expired by the server.
    pub session_expiry: u8,
    /// Something is slow (a paused process, a partition), so a timer goes off while the world is
    /// not quiet yet.
    pub pause: u8,
}

impl Budget {
    /// No fault at all; `Budget { lost_reply: 1, ..Budget::NONE }` allows one lost reply, in a
    /// constant too (a known bug's catalogue entry).
    pub const NONE: Budget = Budget {
        connection_loss: 0,
        lost_reply: 0,
        session_expiry: 0,
        pause: 0,
    };

    /// One fault of each kind, as `check --faults all` gives it.
    pub const ONE_OF_EACH: Budget = Budget {
        connection_loss: 1,
        lost_reply: 1,
        session_expiry: 1,
        pause: 1,
    };

    /// The budget a `check --faults` value asks for, `each` of every kind it names: `none`,
    /// `all`, or a comma-separated list of the kinds the model injects, by the names `run` takes
    /// them (`lost-create-reply` is `lost-reply`: the model loses the reply of any write). An
    /// error names what the model cannot inject.
    pub fn parse(spec: &str, each: u8) -> Result<Budget, String> {
        let kinds: Vec<FaultKind> = match spec {
            "none" => Vec::new(),
            "all" => vec![
                FaultKind::ConnectionLoss,
                FaultKind::LostReply,
                FaultKind::SessionExpiry,
                FaultKind::Pause,
            ],
            list => {
                refuse_none_in_list(list)?;
                list.split(',')
                    .map(|name| name.trim().parse::<FaultKind>())
                    .collect::<Result<_, _>>()?
            }
        };
        let mut budget = Budget::NONE;
        for kind in kinds {
            match kind {
                FaultKind::ConnectionLoss => budget.connection_loss = each,
                FaultKind::LostReply | FaultKind::LostCreateReply => budget.lost_reply = each,
                FaultKind::SessionExpiry => budget.session_expiry = each,
                FaultKind::Pause => budget.pause = each,
                other => {
                    return Err(format!(
                        "the model checker does not inject {other}; it injects connection-loss, \
                         lost-reply (lost-create-reply among them), session-expiry, pause"
                    ))
                }
            }
        }
        Ok(budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_reads_the_fault_names_run_takes_and_refuses_what_the_model_cannot_inject() {
        assert_eq!(Budget::parse("none", 2), Ok(Budget::NONE));
        assert_eq!(Budget::parse("all", 1), Ok(Budget::ONE_OF_EACH));
        let lost = Budget::parse("lost-create-reply, pause", 3);
        let three = Budget {
            lost_reply: 3,
            pause: 3,
            ..Budget::NONE
        };
        assert_eq!(lost, Ok(three));
        let crash = Budget::parse("crash", 1).unwrap_err();
        assert!(
            crash.starts_with("the model checker does not inject crash"),
            "{crash}"
        );
        assert!(Budget::parse("none,pause", 1)
            .unwrap_err()
            .contains("stands alone"));
        assert!(Budget::parse("bogus", 1).unwrap_err().contains("bogus"));
    }
}
