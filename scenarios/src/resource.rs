//! The resource a lock protects, guarded by fencing tokens as a careful storage service would:
//! it refuses any token lower than the highest it has accepted.

use std::sync::{Arc, Mutex};

use zklab_sim::ensemble::SimZk;
use zklab_sim::trace::{ClientId, TraceEvent};

/// A fenced resource; every use lands in the trace.
#[derive(Clone)]
pub struct FencedResource {
    zk: SimZk,
    highest: Arc<Mutex<i64>>,
}

impl FencedResource {
    /// A resource that has accepted no token yet, tracing into `zk`'s trace.
    pub fn new(zk: SimZk) -> Self {
        FencedResource {
            zk,
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
        self.zk.record(TraceEvent::Resource {
            client,
            token,
            accepted,
        });
        accepted
    }
}
