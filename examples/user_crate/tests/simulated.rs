//! The registry under zklab's simulator: every fault kind, 200 seeds.

use service_registry::{register, SERVICES};
use zklab::prelude::*;

#[test]
fn the_simulator_is_built_in() {
    assert!(
        cfg!(madsim),
        "simulated tests need --cfg madsim (cargo simtest)"
    );
}

#[test]
fn a_registered_service_is_listed_until_its_session_ends() {
    Harness::new()
        .clients(3)
        .seeds(0..200)
        .run(|mut client| async move {
            let name = format!("service-{}", client.index());
            loop {
                match register(&client, &name).await {
                    Ok(_) => break,
                    Err(ZkError::SessionExpired) => client.reconnect().await,
                    Err(error) => panic!("register: {error}"),
                }
            }
            let listed = loop {
                match client.get_children(SERVICES, false).await {
                    Err(ZkError::ConnectionLoss) => continue,
                    other => break other,
                }
            };
            // A registration lasts as long as its session: listed, unless the session is gone.
            match listed {
                Ok(children) => assert!(children.contains(&name), "{name} not in {children:?}"),
                Err(error) => assert!(matches!(error, ZkError::SessionExpired), "{error}"),
            }
            let _ = client.close().await;
        });
}
