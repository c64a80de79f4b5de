//! The model's round of one client, played by the recipe's own code in the simulator: a
//! model checker's counterexample replayed where users run the recipe.
//!
//! A kit's client loop does more than the model's client (it uses the protected resource, waits
//! for a controller, puts items of its own, does several rounds), and a step it takes that the
//! model has not would throw a forced order off its path. So a forced run plays the model's
//! client instead, with the same machine, driven by the recipe's [`Driver`] over a
//! [`SimClient`]: it starts its part's machine, asks what the model asks of a holder when the
//! forced order says so, and starts over in a new session when its session is lost, until its
//! round is over or the recipe gives up.

use std::sync::Arc;

use zklab_models::application::Application;
use zklab_models::workload::Workload;
use zklab_recipes::client::ZkClient;
use zklab_recipes::machine::{Driver, Input};
use zklab_recipes::outcome::{Outcome, Recorder};
use zklab_sim::forced::ForcedKind;
use zklab_sim::service::SimZk;
use zklab_sim::sim_client::{SimClient, TraceRecorder};
use zklab_sim::trace::ClientId;

use crate::host::ClientContext;

/// The client of `context` playing `workload`'s round from `session` on; returns its last
/// session, still open.
pub async fn play<W: Workload>(
    workload: &W,
    context: &ClientContext,
    mut session: SimClient,
) -> SimClient {
    let (zk, client) = (&context.zk, context.client);
    let part = workload.part(client as usize, context.clients as usize);
    let recorder: Arc<dyn Recorder> = Arc::new(TraceRecorder::new(zk.clone(), client));
    loop {
        let machine = workload.machine(part, session.session_id());
        let driver = Driver::new(&session, machine).recording(Some(recorder.clone()));
        let application = drive(workload, zk, client, driver).await;
        if application.finished_once_done() {
            return session;
        }
        session = zk.connect(client);
    }
}

/// Drives one machine until it is done; returns what its application made of it.
async fn drive<W: Workload>(
    workload: &W,
    zk: &SimZk,
    client: ClientId,
    mut driver: Driver<'_, SimClient, W::Machine>,
) -> Application {
    let mut application = Application::default();
    let mut asked = false;
    let mut outcomes = driver.feed(Input::Start).await;
    loop {
        for outcome in outcomes {
            let outcome: Outcome = outcome.into();
            if outcome.starts_hold() {
                asked = false;
            }
            application.hear(&outcome);
        }
        if driver.is_done() {
            return application;
        }
        outcomes = if application.may_ask() && !asked {
            // The order says when to ask; past its end, at once (but once a hold).
            let turn = async {
                if !zk.forced_turn(client, ForcedKind::Request).await {
                    asked = true;
                }
            };
            match driver.feed_next_event_or(turn).await {
                Some(outcomes) => outcomes,
                None => {
                    let request = workload.request_when_holding();
                    driver.feed(Input::App(request)).await
                }
            }
        } else {
            driver.feed_next_event().await
        };
    }
}
