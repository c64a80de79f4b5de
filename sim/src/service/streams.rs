//! The service's random draws: one stream per concern, each derived from the run's seed and the
//! concern's name, so that a new draw in one concern leaves every other concern's draws as they
//! were. The concerns: a session's latency and each message's jitter, the pause before a
//! reconnect, a follower's lag, the server a session attaches to, the ids a client library makes
//! up, and each fault kind (a message fault's odds; a process, session or server fault's times,
//! clients and lengths).

use std::time::Duration;

use madsim::rand::{Error, Rng, RngCore};

use crate::fault::FaultKind;

/// One seeded stream of random numbers (xoshiro256++, seeded through splitmix64).
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    state: [u64; 4],
}

/// One step of splitmix64: spreads a seed's bits over a whole state.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of concern `name` in the run of `seed`: the seed mixed with the name's FNV-1a hash.
pub(crate) fn key(seed: u64, name: &str) -> u64 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut mixed = seed ^ hash;
    splitmix(&mut mixed)
}

impl Stream {
    /// The stream of concern `name` in the run of `seed`.
    pub(crate) fn new(seed: u64, name: &str) -> Self {
        let mut x = key(seed, name);
        Stream {
            state: [
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
            ],
        }
    }
}

impl RngCore for Stream {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = &mut self.state;
        let result = s0.wrapping_add(*s3).rotate_left(23).wrapping_add(*s0);
        let t = *s1 << 17;
        *s2 ^= *s0;
        *s3 ^= *s1;
        *s1 ^= *s2;
        *s0 ^= *s3;
        *s2 ^= t;
        *s3 = s3.rotate_left(45);
        result
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let bytes = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

/// The time to the next random fault of a kind striking `rate` times a second (a Poisson
/// process), or `None` when its rate is zero.
pub(crate) fn draw_interval(rng: &mut impl Rng, rate: f64) -> Option<Duration> {
    if rate <= 0.0 {
        return None;
    }
    let uniform: f64 = rng.gen_range(f64::EPSILON..1.0);
    Some(Duration::from_secs_f64(-uniform.ln() / rate))
}

/// Every concern's stream of one run.
pub(crate) struct Streams {
    /// A session's base latency, each message's jitter.
    pub(super) latency: Stream,
    /// The pause before a client tries to reconnect.
    pub(super) reconnect: Stream,
    /// A follower's lag behind the leader, per transaction.
    pub(super) follower_lag: Stream,
    /// The server a session attaches to.
    pub(super) server_choice: Stream,
    /// The ids a client library makes up for itself (Curator's lock nodes' names).
    pub(super) unique_ids: Stream,
    /// Each fault kind's, in [`FaultKind::ALL`]'s order.
    faults: Vec<Stream>,
}

impl Streams {
    /// The streams of the run of `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Streams {
            latency: Stream::new(seed, "latency"),
            reconnect: Stream::new(seed, "reconnect"),
            follower_lag: Stream::new(seed, "follower-lag"),
            server_choice: Stream::new(seed, "server-choice"),
            unique_ids: Stream::new(seed, "unique-ids"),
            faults: FaultKind::ALL
                .iter()
                .map(|kind| Stream::new(seed, kind.name()))
                .collect(),
        }
    }

    /// The stream of fault kind `kind`.
    pub(super) fn fault(&mut self, kind: FaultKind) -> &mut Stream {
        let index = FaultKind::ALL
            .iter()
            .position(|&k| k == kind)
            .expect("every kind is in ALL");
        &mut self.faults[index]
    }
}

#[cfg(test)]
mod tests {
    use madsim::rand::Rng;

    use super::*;

    #[test]
    fn a_stream_is_the_same_for_the_same_seed_and_name_and_differs_otherwise() {
        let draws = |seed, name| -> Vec<u64> {
            let mut stream = Stream::new(seed, name);
            (0..4).map(|_| stream.gen()).collect()
        };
        assert_eq!(draws(1, "latency"), draws(1, "latency"));
        assert_ne!(draws(1, "latency"), draws(2, "latency"));
        assert_ne!(draws(1, "latency"), draws(1, "reconnect"));
    }

    #[test]
    fn a_draw_in_one_concern_leaves_the_others_as_they_were() {
        let mut quiet = Streams::new(9);
        let mut busy = Streams::new(9);
        for _ in 0..10 {
            busy.fault(FaultKind::Pause).gen::<u64>();
            busy.latency.gen::<u64>();
        }
        assert_eq!(quiet.reconnect.gen::<u64>(), busy.reconnect.gen::<u64>());
        assert_eq!(
            quiet.fault(FaultKind::Crash).gen::<u64>(),
            busy.fault(FaultKind::Crash).gen::<u64>()
        );
    }

    #[test]
    fn draws_spread_over_their_range() {
        let mut stream = Stream::new(0, "latency");
        let mut buckets = [0u32; 10];
        for _ in 0..10_000 {
            buckets[stream.gen_range(0..10)] += 1;
        }
        assert!(
            buckets.iter().all(|&n| (800..1200).contains(&n)),
            "{buckets:?}"
        );
    }
}
