//! The harness's run against a real ZooKeeper: the same closure, one real session per client,
//! judged by the same monitors (those that read what clients saw; a real server keeps no record
//! of what it applied). One run, not a sweep: a real server's timing is not a seed's.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use zklab_recipes::client::SessionId;
use zklab_sim::property::Monitor;
use zklab_sim::trace::TraceEvent;

use super::test_client::{RealPlace, TestClient};
use super::{Failure, Harness};
use crate::oracle::{self, Violation};
use crate::real::{RealTrace, TracedSession};
use crate::runner::{panic_message, LIVENESS, PANIC};

/// What the test may do to a real server's sessions: `zklab::launcher::Controller` (a server
/// started with ZooKeeper's `ControllerService`) does both.
pub trait ServerControl: Send + Sync {
    /// Expires `session` now, as its timeout passing would.
    fn expire(&self, session: SessionId);

    /// Closes `session`'s connection now; the session lives, and its client reconnects.
    fn disconnect(&self, session: SessionId);
}

impl<M: Monitor> Harness<M> {
    /// Runs `each` once for every client against the real ZooKeeper at `hosts`
    /// (`host:port[,host:port...]`), each client with its own session, on a tokio runtime of
    /// its own; `control` lets the closure expire sessions and drop connections. The monitors
    /// judge what the clients saw; a client that panics, or that has not finished within the
    /// time bound, fails the run. The seeds and the fault profile are the simulator's and do not
    /// apply; faults only the simulator can cause (a lost reply, a partition, a pause, a crash)
    /// panic here.
    pub fn run_real<F, Fut>(
        &self,
        hosts: &str,
        control: Option<Arc<dyn ServerControl>>,
        each: F,
    ) -> Result<(), Box<Failure>>
    where
        F: Fn(TestClient) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime starts");
        let trace = RealTrace::new();
        let each = Arc::new(each);
        let clients = self.options.clients;
        let bound = self.options.time_bound;
        let session_timeout = self.options.sim.session_timeout;
        let mut violations: Vec<Violation> = runtime.block_on(async {
            let started = Instant::now();
            let mut workers = Vec::new();
            for client in 0..clients {
                let (each, trace, control) = (each.clone(), trace.clone(), control.clone());
                let hosts = hosts.to_owned();
                workers.push(tokio::spawn(async move {
                    let session =
                        TracedSession::connect(&hosts, session_timeout, client, &trace).await;
                    let place = RealPlace {
                        hosts,
                        session_timeout,
                        trace: trace.clone(),
                        control,
                        session,
                    };
                    each(TestClient::real(client, clients, place)).await;
                    trace.push(TraceEvent::Finished { client });
                }));
            }
            let mut violations = Vec::new();
            for (client, worker) in workers.into_iter().enumerate() {
                let remaining = bound.saturating_sub(started.elapsed());
                let (property, message) = match tokio::time::timeout(remaining, worker).await {
                    Ok(Ok(())) => continue,
                    Ok(Err(failed)) if failed.is_panic() => {
                        (&PANIC, panic_message(&failed.into_panic()))
                    }
                    _ => (
                        &LIVENESS,
                        format!("c{client} did not finish within {bound:?}"),
                    ),
                };
                violations.push(Violation::new(property, started.elapsed(), message));
            }
            violations
        });
        runtime.shutdown_background();
        violations.extend(oracle::judge_real(self.monitors.clone(), &trace.judged()));
        let trace = trace.snapshot();
        violations.sort_by_key(|violation| violation.at);
        if violations.is_empty() {
            return Ok(());
        }
        Err(Box::new(Failure {
            seed: None,
            violations,
            trace,
            replay: None,
            schedule: None,
            kept: None,
            shrunk: None,
        }))
    }
}
