//! The resource a lock protects, guarded by fencing tokens as a careful storage service would:
//! it refuses any token lower than the highest it has accepted.

use std::sync::{Arc, Mutex};

use zklab_sim::trace::{ClientId, TraceEvent};

/// Where the resource writes down each use: the run's trace.
type Recorder = Arc<dyn Fn(TraceEvent) + Send + Sync>;

/// A fenced resource; every use lands in the trace.
#[derive(Clone)]
pub struct FencedResource {
    record: Recorder,
    highest: Arc<Mutex<i64>>,
}

impl FencedResource {
    /// A resource that has accepted no token yet, handing each use to `record`.
    pub fn new(record: impl Fn(TraceEvent) + Send + Sync + 'static) -> Self {
        FencedResource {
            record: Arc::new(record),
            highest: Arc::new(Mutex::new(i64::MIN)),
        }
    }

    /// A client writes, presenting `token`; returns whether the resource accepted it.
    pub fn write(&self, client: ClientId, token: i64) -> bool {
        let mut highest = self
            .highest
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let accepted = token >= *highest;
        if accepted {
            *highest = token;
        }
        (self.record)(TraceEvent::Resource {
            client,
            token,
            accepted,
        });
        accepted
    }
}
