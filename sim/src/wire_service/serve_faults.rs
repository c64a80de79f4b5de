//! `zklab serve`'s faults: random ones at the rates of `--faults`, each kind drawn from its own
//! stream of the seed (a message fault per request, a session fault per second against a random
//! session, a reaping per emptied container), and a schedule's faults at the requests they are
//! anchored to. Every fault struck is kept as the schedule line that strikes it again.

use std::time::Duration;

use madsim::rand::Rng;
use zklab_recipes::client::Op;

use super::anchor::{AnchoredFault, Moment, RequestAnchors};
use crate::fault::{FaultCounts, FaultKind, FaultRates, ELECTION};
use crate::service::streams::{draw_interval, Stream};

/// The faults of a `zklab serve` run: what is still to strike, and what struck.
pub struct ServeFaults {
    rates: FaultRates,
    /// Each kind's stream, in [`FaultKind::ALL`]'s order.
    streams: Vec<Stream>,
    /// The schedule's faults still to strike.
    to_strike: Vec<AnchoredFault>,
    /// When each kind drawn per second strikes next, counted from the start.
    next_random: Vec<(FaultKind, Duration)>,
    struck: Vec<AnchoredFault>,
    counts: FaultCounts,
}

impl ServeFaults {
    /// No fault at all.
    pub fn none() -> Self {
        ServeFaults::new(FaultRates::none(), Vec::new(), 0, 1)
    }

    /// Random faults at `rates` (kinds `zklab serve` cannot strike on `servers` servers left
    /// out) drawn from `seed`, and the `schedule`'s.
    pub fn new(rates: FaultRates, schedule: Vec<AnchoredFault>, seed: u64, servers: usize) -> Self {
        let mut rates = rates;
        for kind in FaultKind::ALL {
            if AnchoredFault::strikes_on(kind, servers).is_err() {
                rates.set(kind, 0.0);
            }
        }
        let mut streams: Vec<Stream> = (FaultKind::ALL.iter())
            .map(|kind| Stream::new(seed, kind.name()))
            .collect();
        let next_random = (FaultKind::ALL.iter().enumerate())
            .filter_map(|(index, &kind)| {
                draw_interval(&mut streams[index], rates.per_second(kind)).map(|at| (kind, at))
            })
            .collect();
        ServeFaults {
            rates,
            streams,
            to_strike: schedule,
            next_random,
            struck: Vec::new(),
            counts: FaultCounts::default(),
        }
    }

    fn stream(&mut self, kind: FaultKind) -> &mut Stream {
        &mut self.streams[kind as usize]
    }

    /// Takes the schedule's fault of a kind striking at `moment` of the request that
    /// answers to `anchors`.
    fn scheduled(&mut self, anchors: &RequestAnchors, moment: Moment) -> Option<AnchoredFault> {
        let index = self.to_strike.iter().position(|fault| {
            anchors.answer_to(&fault.anchor) && AnchoredFault::moment(fault.kind) == Ok(moment)
        })?;
        Some(self.to_strike.remove(index))
    }

    /// The message fault striking request `op` (which answers to `anchors`), if one does: the
    /// schedule's, else one drawn (the connection lost before it is applied, its reply lost
    /// after, or its reply held back).
    pub(super) fn at(&mut self, anchors: &RequestAnchors, op: &Op) -> Option<AnchoredFault> {
        if let Some(fault) = self.scheduled(anchors, Moment::At) {
            return Some(fault);
        }
        let lost_reply = match op {
            Op::Create { .. } => FaultKind::LostCreateReply,
            _ => FaultKind::LostReply,
        };
        for kind in [FaultKind::ConnectionLoss, lost_reply, FaultKind::Reorder] {
            let odds = self.rates.rate(kind);
            if odds > 0.0 && self.stream(kind).gen_bool(odds) {
                let longest = self.rates.reorder_delay;
                let lasts = match kind {
                    FaultKind::Reorder => self.stream(kind).gen_range(Duration::ZERO..=longest),
                    _ => Duration::ZERO,
                };
                let anchor = anchors.written();
                return Some(AnchoredFault {
                    kind,
                    anchor,
                    lasts,
                });
            }
        }
        None
    }

    /// The schedule's faults striking once the request that answers to `anchors` is answered.
    pub(super) fn after(&mut self, anchors: &RequestAnchors) -> Vec<AnchoredFault> {
        std::iter::from_fn(|| self.scheduled(anchors, Moment::After)).collect()
    }

    /// Whether the reaper takes a container the moment a request emptied it.
    pub(super) fn draw_reaped(&mut self) -> bool {
        let odds = self.rates.container_reaped;
        odds > 0.0 && self.stream(FaultKind::ContainerReaped).gen_bool(odds)
    }

    /// A kind drawn per second whose time has come by `now` (its next time drawn), if any.
    pub(super) fn due(&mut self, now: Duration) -> Option<FaultKind> {
        let index = (self.next_random.iter().enumerate())
            .filter(|(_, (_, at))| *at <= now)
            .min_by_key(|(index, (_, at))| (*at, *index))
            .map(|(index, _)| index)?;
        let (kind, at) = self.next_random[index];
        let rate = self.rates.per_second(kind);
        let interval = draw_interval(self.stream(kind), rate).unwrap_or(Duration::MAX);
        self.next_random[index].1 = at.saturating_add(interval);
        Some(kind)
    }

    /// When a kind drawn per second strikes next.
    pub(super) fn next_due(&self) -> Option<Duration> {
        self.next_random.iter().map(|(_, at)| *at).min()
    }

    /// Which of `n` sessions a random fault of `kind` strikes.
    pub(super) fn pick(&mut self, kind: FaultKind, n: usize) -> usize {
        self.stream(kind).gen_range(0..n)
    }

    /// How long a random fault of `kind` lasts against a session `timeout`, as the
    /// simulator's: a partition, a follower standing still or down from a third of it to twice
    /// it; an election as long as one takes.
    pub(super) fn length(&mut self, kind: FaultKind, timeout: Duration) -> Duration {
        match kind {
            FaultKind::Partition | FaultKind::StaleRead | FaultKind::ServerCrash => {
                self.stream(kind).gen_range(timeout / 3..=timeout * 2)
            }
            FaultKind::LeaderChange => {
                let (low, high) = ELECTION;
                self.stream(kind).gen_range(low..=high)
            }
            _ => Duration::ZERO,
        }
    }

    /// Counts a fault struck and keeps its schedule line.
    pub(super) fn struck(&mut self, fault: AnchoredFault) {
        if fault.kind == FaultKind::LostCreateReply {
            self.counts.add(FaultKind::LostReply);
        }
        self.counts.add(fault.kind);
        self.struck.push(fault);
    }

    /// Every fault struck so far, as the schedule that strikes them again.
    pub fn schedule(&self) -> &[AnchoredFault] {
        &self.struck
    }

    /// How many faults of each kind struck.
    pub fn counts(&self) -> FaultCounts {
        self.counts
    }
}
