//! Recipes and the application's own code share one session, as Curator's users share one
//! `CuratorFramework`: each recipe's driver works through a handle of its own
//! (`ZkClient::listener`), so a watch's event reaches only the code whose read set it, and the
//! session's news reaches everyone.

// The watcher's planted bug is tests/harness.rs's concern.
#[allow(dead_code)]
#[path = "../examples/config_watcher/watcher.rs"]
mod watcher;

use std::future::Future;
use std::time::Duration;

use zklab::prelude::*;
use zklab::scenarios::barrier::monitor::BarrierSafety;
use zklab::scenarios::monitor::exclusion::MutualExclusion;
use zklab::scenarios::monitor::failure::NoFailures;
use zklab::scenarios::runner::LIVENESS;

use watcher::{follow, publish, Follow};

/// Client 0 holds a lock and a barrier for a while; client 1, on one session, waits for the lock
/// and at the barrier at once, through `client`'s handles.
async fn a_lock_and_a_barrier_at_once<C: ZkClient + Sync>(first: &TestClient, client: &C) {
    let (lock, barrier) = (Lock::new("/l"), Barrier::new("/b/gate"));
    if first.index() == 0 {
        let held = lock.acquire(client).await.expect("the lock is free");
        let set = barrier.set(client).await.expect("the barrier is set");
        first.sleep(Duration::from_millis(300)).await;
        set.remove().await.expect("the barrier is lifted");
        first.sleep(Duration::from_millis(100)).await;
        held.release().await.expect("the lock is released");
    } else {
        // Both are taken by now.
        first.sleep(Duration::from_millis(200)).await;
        let acquired = async {
            let held = lock.acquire(client).await.expect("the lock comes free");
            held.release().await.expect("and is released");
        };
        let passed = async { barrier.wait(client).await.expect("the barrier is lifted") };
        futures::join!(acquired, passed);
    }
}

#[test]
fn a_lock_and_a_barrier_on_one_session_each_hear_their_own_events() {
    let harness = Harness::new().clients(2).no_faults().seeds(0..10);
    harness.run(|client| async move { a_lock_and_a_barrier_at_once(&client, &client).await });
    // A client whose every handle reads one stream, as before handles had streams of their
    // own: the lock's driver takes the barrier's event, and the barrier's waiter waits for good.
    let failure = harness
        .try_run(|client| async move {
            a_lock_and_a_barrier_at_once(&client, &OneStream(&client)).await
        })
        .expect_err("one recipe takes the other's event");
    assert_eq!(failure.violations[0].property, &LIVENESS);
}

/// A session whose handles all read one event stream.
struct OneStream<'a>(&'a TestClient);

impl ZkClient for OneStream<'_> {
    fn call(&self, op: Op) -> impl Future<Output = OpReply> + Send {
        self.0.call(op)
    }

    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send {
        self.0.next_event()
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.0.try_next_event()
    }

    fn session_id(&self) -> SessionId {
        self.0.session_id()
    }

    fn listener(&self) -> Self {
        OneStream(self.0)
    }

    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        self.0.close()
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self.0.sleep(duration)
    }
}

/// The session ended under a part: every part starts over in a new one.
struct SessionLost;

impl From<RecipeError> for SessionLost {
    fn from(error: RecipeError) -> Self {
        match error {
            RecipeError::SessionLost => SessionLost,
            other => panic!("a recipe gave up: {other}"),
        }
    }
}

impl From<ZkError> for SessionLost {
    fn from(error: ZkError) -> Self {
        match error {
            ZkError::SessionExpired => SessionLost,
            other => panic!("the application's own code gave up: {other}"),
        }
    }
}

/// The versions client 0 publishes and every other client follows.
const VERSIONS: u32 = 3;

/// On one session at once: a barrier (client 0 sets it, the others wait), two rounds of a lock,
/// an election, and the application's own watcher of a setting on the session's first handle,
/// all four running side by side. A session may wait behind another's lock node while that
/// session's election waits behind its own: each recipe declares what it owns and awaits as a
/// declarer of its own, so the wait-for monitor sees two chains, not a cycle of sessions.
async fn every_part(client: &TestClient) -> Result<(), SessionLost> {
    let recorder = Some(client.recorder());
    let lock = Lock::new("/app/lock").recording(recorder.clone());
    let barrier = Barrier::new("/app/gates/start").recording(recorder.clone());
    let election = Election::new("/app/election").recording(recorder);
    let pause = |millis| client.sleep(Duration::from_millis(millis));
    let gating = async {
        if client.index() == 0 {
            let set = barrier.set(client).await?;
            pause(100).await;
            set.remove().await?;
        } else {
            // Late enough to find the barrier standing, most often.
            pause(80).await;
            barrier.wait(client).await?;
        }
        Ok::<_, SessionLost>(())
    };
    let locking = async {
        for _ in 0..2 {
            let held = lock.acquire(client).await?;
            pause(5).await;
            held.release().await?;
        }
        Ok::<_, SessionLost>(())
    };
    let leading = async {
        let leadership = election.campaign(client).await?;
        pause(20).await;
        leadership.release().await?;
        Ok::<_, SessionLost>(())
    };
    let watching = async {
        if client.index() == 0 {
            for version in 1..=VERSIONS {
                publish(client, version).await?;
                pause(30).await;
            }
        } else {
            follow(client, VERSIONS, Follow::ReadAgain).await?;
        }
        Ok::<_, SessionLost>(())
    };
    let (gated, locked, led, watched) = futures::join!(gating, locking, leading, watching);
    gated.and(locked).and(led).and(watched)
}

#[test]
fn a_lock_a_barrier_an_election_and_a_watcher_share_a_session_under_every_fault() {
    let monitors = (
        MutualExclusion::default(),
        BarrierSafety::new("/app/gates"),
        NoFailures,
    );
    Harness::new()
        .seeds(0..1000)
        .monitors(monitors)
        .run(|mut client| async move {
            while every_part(&client).await.is_err() {
                client.reconnect().await;
            }
        });
}
