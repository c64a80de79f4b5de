//! The resource a lock protects, guarded by fencing tokens as a careful storage service would:
//! it refuses a write with a token lower than any it has accepted, and a read with a token lower
//! than the last write's (readers holding a shared lock together present tokens in any order).

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

/// The highest tokens accepted so far.
#[derive(Clone, Copy)]
struct Highest {
    /// By a write.
    write: i64,
    /// By any use.
    any: i64,
}

impl FencedResource {
    /// A resource that has accepted no token yet, handing each use to `record`.
    pub fn new(record: impl Fn(TraceEvent) + Send + Sync + 'static) -> Self {
        let none = Highest {
            write: i64::MIN,
            any: i64::MIN,
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

    fn use_with(&self, client: ClientId, token: i64, read: bool) -> bool {
        let mut highest = self
            .highest
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let floor = if read { highest.write } else { highest.any };
        let accepted = token >= floor;
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
