//! The resource a lock protects, guarded by fencing tokens as a careful storage service would:
//! it refuses a write with a token lower than any it has accepted, and a read with a token lower
//! than the last write's (readers holding a shared lock together present tokens in any order),
//! and any use with a token it was told to refuse (a holder forced out of a revocable lock).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use zklab_sim::trace::{ClientId, TraceEvent};

/// Where the resource writes down each use: the run's trace.
type Recorder = Arc<dyn Fn(TraceEvent) + Send + Sync>;

/// A fenced resource; every use lands in the trace.
#[derive(Clone)]
pub struct FencedResource {
    record: Recorder,
    highest: Arc<Mutex<Highest>>,
}

/// The highest tokens accepted so far, and those refused for good.
#[derive(Clone)]
struct Highest {
    /// By a write.
    write: i64,
    /// By any use.
    any: i64,
    /// Tokens of holders forced out.
    refused: BTreeSet<i64>,
}

impl FencedResource {
    /// A resource that has accepted no token yet, handing each use to `record`.
    pub fn new(record: impl Fn(TraceEvent) + Send + Sync + 'static) -> Self {
        let none = Highest {
            write: i64::MIN,
            any: i64::MIN,
            refused: BTreeSet::new(),
        };
        FencedResource {
            record: Arc::new(record),
            highest: Arc::new(Mutex::new(none)),
        }
    }

    /// A client writes, presenting `token`; returns whether the resource accepted it.
    pub fn write(&self, client: ClientId, token: i64) -> bool {
        self.use_with(client, token, false)
    }

    /// A client reads, presenting `token`; returns whether the resource accepted it.
    pub fn read(&self, client: ClientId, token: i64) -> bool {
        self.use_with(client, token, true)
    }

    /// Refuses `token` from now on: its holder is being forced out.
    pub fn refuse(&self, token: i64) {
        self.highest().refused.insert(token);
    }

    fn highest(&self) -> std::sync::MutexGuard<'_, Highest> {
        self.highest
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn use_with(&self, client: ClientId, token: i64, read: bool) -> bool {
        let mut highest = self.highest();
        let floor = if read { highest.write } else { highest.any };
        let accepted = token >= floor && !highest.refused.contains(&token);
        if accepted {
            highest.any = highest.any.max(token);
            if !read {
                highest.write = token;
            }
        }
        (self.record)(TraceEvent::Resource {
            client,
            read,
            token,
            accepted,
        });
        accepted
    }
}
