//! The model's round of one client, played by the recipe's own code: forced through a model
//! checker's counterexample in the simulator, or freely, as a kit's client loop that says no
//! more than its [`Workload`] does (a user's own recipe, say).
//!
//! A kit's client loop may do more than the model's client (use the protected resource, wait
//! for a controller, put items of its own, do several rounds), and a step it takes that the
//! model has not would throw a forced order off its path. So a forced run plays the model's
//! client instead, with the same machine, driven by the recipe's [`Driver`] over a
//! [`SimClient`]: it starts its part's machine, asks what the model asks of a holder when the
//! forced order says so, and starts over in a new session when its session is lost, until its
//! round is over or the recipe gives up.
//!
//! Played freely ([`play_rounds`], what [`Kit::client`](crate::kit::Kit::client) does unless a
//! kit says otherwise), the round is the same, but a holder presents its token to the protected
//! resource, works a while, then asks; and the client plays it once per round of its workload.

use std::future::Future;
use std::sync::Arc;

use zklab_models::application::Application;
use zklab_models::workload::{directory_creates, Workload};
use zklab_recipes::client::{Op, ZkClient, ZkError};
use zklab_recipes::machine::{Driver, Input};
use zklab_recipes::outcome::{Outcome, Recorder};
use zklab_sim::forced::ForcedKind;
use zklab_sim::sim_client::{SimClient, TraceRecorder};

use crate::host::{ClientContext, Host};

/// The client of `context` playing `workload`'s round from `session` on, each request when the
/// forced order says; returns its last session, still open.
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
        // The order says when to ask; past its end, at once (but once a hold).
        let turn = || async { !zk.forced_turn(client, ForcedKind::Request).await };
        let application = drive(workload, driver, |_| {}, turn).await;
        if application.finished_once_done() {
            return session;
        }
        session = zk.connect(client);
    }
}

/// The client of `host` playing `workload`'s round `rounds` times, in one session after
/// another: it makes the workload's directory (the model starts with it), then on each hold
/// presents its token to the protected resource (reading it under a role held shared, writing it
/// otherwise), works a while and asks what the model asks of a holder. Returns its last session,
/// still open, or `None` once the recipe gave up (the trace tells why).
pub async fn play_rounds<W: Workload, H: Host>(
    workload: &W,
    host: &H,
    rounds: u32,
) -> Option<H::Session> {
    let part = workload.part(host.index(), host.clients());
    let recorder = host.recorder();
    let session = host.connect().await;
    let mut session = with_directory(host, session, &directory_creates(workload.root())).await?;
    let use_resource = |outcome: &Outcome| match outcome {
        Outcome::Granted { token, .. } => {
            host.write(*token);
        }
        Outcome::Shared { token, .. } => {
            host.read(*token);
        }
        _ => {}
    };
    let mut done = 0;
    while done < rounds {
        let machine = workload.machine(part, session.session_id());
        let driver = Driver::new(&session, machine).recording(recorder.clone());
        let turn = || async {
            host.work().await;
            true
        };
        let application = drive(workload, driver, use_resource, turn).await;
        if application.failed.is_some() {
            return None;
        }
        if application.round_over {
            done += 1;
        } else {
            session = host.connect().await;
        }
    }
    Some(session)
}

/// Makes a directory with `creates` in `session`, or in a new one if it expires: the session
/// it made it in, or `None` once a create failed otherwise (the trace tells why).
pub(crate) async fn with_directory<H: Host>(
    host: &H,
    mut session: H::Session,
    creates: &[Op],
) -> Option<H::Session> {
    loop {
        match make_directory(&session, creates).await {
            Ok(()) => return Some(session),
            Err(ZkError::SessionExpired) => session = host.connect().await,
            Err(error) => {
                if let Some(recorder) = host.recorder() {
                    recorder.record(session.session_id(), Outcome::Failed(error));
                }
                return None;
            }
        }
    }
}

/// Makes a directory with `creates`, its levels top down: a create that finds its node there
/// does as well, and one whose connection dropped is sent again.
async fn make_directory<C: ZkClient>(session: &C, creates: &[Op]) -> Result<(), ZkError> {
    for create in creates {
        loop {
            match session.call(create.clone()).await {
                Ok(_) | Err(ZkError::NodeExists) => break,
                Err(ZkError::ConnectionLoss) => continue,
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}

/// Drives one machine until it is done; returns what its application made of it. `hear` hears
/// every outcome; while the application holds and has not asked yet, `turn` runs beside the
/// machine's events, and once it ends the application asks what the model asks of a holder:
/// it gives whether that was its one ask of this hold (else it may ask again, when `turn` next
/// ends).
async fn drive<W: Workload, C: ZkClient, T: Future<Output = bool>>(
    workload: &W,
    mut driver: Driver<'_, C, W::Machine>,
    mut hear: impl FnMut(&Outcome),
    mut turn: impl FnMut() -> T,
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
            hear(&outcome);
            application.hear(&outcome);
        }
        if driver.is_done() {
            return application;
        }
        outcomes = if application.may_ask() && !asked {
            let mut once = None;
            let waiting = async { once = Some(turn().await) };
            match driver.feed_next_event_or(waiting).await {
                Some(outcomes) => outcomes,
                None => {
                    asked = once == Some(true);
                    let request = workload.request_when_holding();
                    driver.feed(Input::App(request)).await
                }
            }
        } else {
            driver.feed_next_event().await
        };
    }
}
