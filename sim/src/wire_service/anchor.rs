//! A fault of `zklab serve`'s schedule, anchored to what the server saw rather than to a time.
//! A client's timing is not zklab's, but the 3rd create of the 2nd session to connect is the
//! same point in every run of the same program: a schedule of such faults strikes a failing run
//! again where it struck it first.
//!
//! One fault a line, `#` starts a comment:
//!
//! ```text
//! lost-create-reply c1 create 3 under /locks
//! session-expiry c0 getChildren 4
//! partition c2 exists 1 for 5.000s
//! ```
//!
//! `c1` is the second session the server opened (the trace's client), `create 3` its third
//! request of that verb (as the trace writes ops; `connect` counts its handshakes), `under
//! /locks` counting only the requests on a child of `/locks` (a multi: on its first op's), so
//! that a schedule still lands where it did when a run makes the parents in another order. A
//! message
//! fault strikes that request: `connection-loss` closes the connection instead of applying it,
//! `lost-reply` and `lost-create-reply` apply it and close the connection instead of replying,
//! `reorder` holds its reply back for the time given. The others strike once it is answered:
//! `session-expiry` expires the session, `partition` cuts its traffic off for the time given,
//! `container-reaped` reaps every container the request emptied at once; on an ensemble,
//! `stale-read` stops the session's follower applying anything for the time given,
//! `server-crash` takes it down for that long, and `leader-change` has the leader step down
//! for an election of that long.

use std::fmt;
use std::time::Duration;

use crate::fault::FaultKind;
use crate::trace::ClientId;

/// Which request of which session a fault is anchored to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    /// The session, by the order the server opened sessions in (the trace's client).
    pub client: ClientId,
    /// The request's verb as the trace writes it (`create`, `getChildren`, ...), or `connect`.
    pub verb: String,
    /// Which of the session's requests of that verb (under `under`), from 1.
    pub nth: u32,
    /// The node whose children's requests alone are counted, if not every one.
    pub under: Option<String>,
}

/// The anchors one request answers to: counted among all of its session's requests of its
/// verb, and among those on its parent's children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RequestAnchors {
    pub(super) every: Anchor,
    pub(super) under: Option<Anchor>,
}

impl RequestAnchors {
    /// Whether a schedule's fault anchored at `anchor` strikes this request.
    pub(super) fn answer_to(&self, anchor: &Anchor) -> bool {
        *anchor == self.every || Some(anchor) == self.under.as_ref()
    }

    /// The anchor a fault struck here is written with: the narrower one.
    pub(super) fn written(&self) -> Anchor {
        self.under.clone().unwrap_or_else(|| self.every.clone())
    }
}

/// A fault of a schedule: what strikes, at which request, for how long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchoredFault {
    /// The kind.
    pub kind: FaultKind,
    /// The request it strikes at (or just after).
    pub anchor: Anchor,
    /// How long a partition lasts or a reordered reply is held; zero for the other kinds.
    pub lasts: Duration,
}

/// When a kind strikes, relative to its anchored request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// Instead of the request's usual fate (applied and answered).
    At,
    /// Once the request is answered.
    After,
}

impl AnchoredFault {
    /// When the fault strikes, or why `zklab serve` cannot strike it: a pause or a crash stops
    /// a process zklab does not run.
    pub fn moment(kind: FaultKind) -> Result<Moment, String> {
        match kind {
            FaultKind::ConnectionLoss
            | FaultKind::LostReply
            | FaultKind::LostCreateReply
            | FaultKind::Reorder => Ok(Moment::At),
            FaultKind::SessionExpiry
            | FaultKind::Partition
            | FaultKind::ContainerReaped
            | FaultKind::StaleRead
            | FaultKind::ServerCrash
            | FaultKind::LeaderChange => Ok(Moment::After),
            FaultKind::Pause | FaultKind::Crash => Err(format!(
                "{kind} strikes a client's process, which zklab serve does not run"
            )),
        }
    }

    /// Whether `zklab serve` on `servers` servers can strike the kind: as [`Self::moment`]
    /// says, and only on an ensemble for a kind that strikes a follower or the leader.
    pub fn strikes_on(kind: FaultKind, servers: usize) -> Result<(), String> {
        AnchoredFault::moment(kind)?;
        let ensemble = matches!(
            kind,
            FaultKind::StaleRead | FaultKind::ServerCrash | FaultKind::LeaderChange
        );
        match ensemble && servers < 2 {
            true => Err(format!(
                "{kind} needs followers: serve an ensemble with --servers 3"
            )),
            false => Ok(()),
        }
    }

    /// Whether the kind lasts a while (`for <time>` in a schedule): a partition, a held-back
    /// reply, a follower standing still or down, an election.
    fn lasts_a_while(kind: FaultKind) -> bool {
        matches!(
            kind,
            FaultKind::Partition
                | FaultKind::Reorder
                | FaultKind::StaleRead
                | FaultKind::ServerCrash
                | FaultKind::LeaderChange
        )
    }

    /// Parses a schedule, one fault a line; an error names the line.
    pub fn parse_schedule(text: &str) -> Result<Vec<AnchoredFault>, String> {
        let mut faults = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let fault = AnchoredFault::parse_line(line)
                .map_err(|why| format!("line {}: `{line}`: {why}", number + 1))?;
            faults.push(fault);
        }
        Ok(faults)
    }

    fn parse_line(line: &str) -> Result<AnchoredFault, String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (kind, client, verb, nth, rest) = match &words[..] {
            [kind, client, verb, nth, rest @ ..] => (kind, client, verb, nth, rest),
            _ => {
                return Err(
                    "a fault is `<kind> c<n> <verb> <nth> [under <path>] [for <seconds>s]`".into(),
                )
            }
        };
        let (under, rest) = match rest {
            ["under", path, rest @ ..] if path.starts_with('/') => (Some((*path).to_owned()), rest),
            ["under", ..] => return Err("`under` takes a path".into()),
            rest => (None, rest),
        };
        let kind: FaultKind = kind.parse()?;
        let moment = AnchoredFault::moment(kind)?;
        let client = (client.strip_prefix('c'))
            .and_then(|n| n.parse::<ClientId>().ok())
            .ok_or_else(|| format!("`{client}` is no session: write c0, c1, ..."))?;
        let nth = match nth.parse::<u32>() {
            Ok(nth) if nth >= 1 => nth,
            _ => return Err(format!("`{nth}` is no count from 1")),
        };
        if *verb == "connect" && moment == Moment::At {
            return Err(format!("{kind} strikes a request, not a handshake"));
        }
        let lasts = match (rest, AnchoredFault::lasts_a_while(kind)) {
            ([], false) => Duration::ZERO,
            (["for", time], true) => (time.strip_suffix('s'))
                .and_then(|seconds| seconds.parse::<f64>().ok())
                .filter(|seconds| seconds.is_finite() && (0.0..=3600.0).contains(seconds))
                .map(Duration::from_secs_f64)
                .ok_or_else(|| format!("`{time}` is no time: write seconds, as 1.5s"))?,
            ([], true) => return Err(format!("{kind} needs `for <seconds>s`")),
            (_, _) => return Err(format!("{kind} takes nothing after the count")),
        };
        let anchor = Anchor {
            client,
            verb: (*verb).to_owned(),
            nth,
            under,
        };
        Ok(AnchoredFault {
            kind,
            anchor,
            lasts,
        })
    }
}

impl fmt::Display for AnchoredFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Anchor {
            client,
            verb,
            nth,
            under,
        } = &self.anchor;
        write!(f, "{} c{client} {verb} {nth}", self.kind)?;
        if let Some(under) = under {
            write!(f, " under {under}")?;
        }
        if AnchoredFault::lasts_a_while(self.kind) {
            write!(f, " for {:.3}s", self.lasts.as_secs_f64())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_back_what_it_writes_and_names_the_line_of_an_error() {
        let text = "# struck\nlost-create-reply c1 create 3 under /locks\n\
                    partition c0 exists 2 for 1.500s\nsession-expiry c2 connect 1 # handshake\n";
        let faults = AnchoredFault::parse_schedule(text).expect("a schedule");
        let written: Vec<String> = faults.iter().map(ToString::to_string).collect();
        assert_eq!(
            written,
            [
                "lost-create-reply c1 create 3 under /locks",
                "partition c0 exists 2 for 1.500s",
                "session-expiry c2 connect 1"
            ]
        );
        assert_eq!(faults[1].lasts, Duration::from_millis(1500));
        assert_eq!(faults[0].anchor.under.as_deref(), Some("/locks"));
        for (bad, why) in [
            ("lost-reply c1 create", "a fault is"),
            ("lost-reply 1 create 1", "no session"),
            ("lost-reply c1 create 0", "no count"),
            ("pause c1 create 1", "process"),
            ("stale-read c1 getData 1", "needs `for"),
            ("partition c1 create 1", "needs `for"),
            ("partition c1 create 1 for soon", "no time"),
            ("lost-reply c1 connect 1", "handshake"),
            ("lost-reply c1 create 1 under", "takes a path"),
            ("lost-reply c1 create 1 under locks", "takes a path"),
            ("session-expiry c1 create 1 for 2s", "nothing after"),
            ("boom c1 create 1", "unknown fault kind"),
        ] {
            let error = AnchoredFault::parse_schedule(&format!("\n{bad}")).expect_err(bad);
            assert!(
                error.starts_with("line 2:") && error.contains(why),
                "{bad}: {error}"
            );
        }
    }
}
