//! The claims port of `zklab serve`: what only the application knows (it holds a lock, it
//! leads, it lost them), told by the client in a line of text on a connection of its own, so
//! that a claim still arrives when the client's ZooKeeper session is dead (what such a claim
//! means the monitors decide: as in the simulator, a session the server ended holds nothing).
//!
//! One claim a line, answered `ok` once recorded (a client that waits for the answer before it
//! goes on keeps its claims in order with its requests), or `error: <why>`:
//!
//! ```text
//! <session> granted <role> [<token>]    holds <role> alone (a lock, leadership)
//! <session> shared <role> [<token>]     holds <role> with others (a read lock)
//! <session> released <role>             let go of it
//! <session> suspended | resumed | lost  its connection's news, as its library told it
//! ```
//!
//! `<session>` is the session id its library reports, in decimal or `0x` hex; `<role>` one
//! word, the same for every holder of the same thing (the lock's path); `<token>` a fencing
//! token, if the application has one.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;

use super::{now, Served};
use crate::sim::wire_service::parse_number;

/// The longest claim line the port reads; a client sending longer ones is cut off.
const LONGEST_LINE: usize = 1024;

/// Takes claims on every connection to the port, a line each, until the client goes.
pub(super) async fn claims_port(listener: TcpListener, served: Arc<Served>) {
    while let Ok((stream, _)) = listener.accept().await {
        let served = served.clone();
        tokio::spawn(async move {
            let (reader, mut writer) = stream.into_split();
            let mut lines = BufReader::new(reader);
            let mut line = String::new();
            loop {
                line.clear();
                match (&mut lines)
                    .take(LONGEST_LINE as u64)
                    .read_line(&mut line)
                    .await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) if !line.ends_with('\n') && line.len() >= LONGEST_LINE => {
                        let _ = writer
                            .write_all(b"error: a claim line is at most 1024 bytes\n")
                            .await;
                        break;
                    }
                    Ok(_) => {}
                }
                let told = parse_claim(line.trim())
                    .and_then(|(session, outcome)| served.claim(session, outcome, now()));
                let answer = match told {
                    Ok(()) => "ok\n".to_owned(),
                    Err(why) => format!("error: {why}\n"),
                };
                if writer.write_all(answer.as_bytes()).await.is_err() {
                    break;
                }
            }
        });
    }
}

/// The most distinct roles a run's claims may name: each is kept for the whole run.
const MOST_ROLES: usize = 1024;

/// The longest role.
const LONGEST_ROLE: usize = 256;

/// Every role claimed so far, kept for the run (an outcome names its role for ever).
static ROLES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// The run's one copy of `role`.
fn role_named(role: &str) -> Result<&'static str, String> {
    if role.len() > LONGEST_ROLE {
        return Err(format!("a role is at most {LONGEST_ROLE} bytes"));
    }
    let mut roles = ROLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = roles.get(role) {
        return Ok(known);
    }
    if roles.len() >= MOST_ROLES {
        return Err(format!("a run names at most {MOST_ROLES} roles"));
    }
    let role: &'static str = Box::leak(role.to_owned().into_boxed_str());
    roles.insert(role);
    Ok(role)
}

/// A session id, in decimal or `0x` hex.
fn session_named(text: &str) -> Result<SessionId, String> {
    (parse_number(text))
        .map(|id| id as SessionId)
        .map_err(|_| format!("`{text}` is no session id"))
}

/// The session and the outcome one claim line tells.
pub fn parse_claim(line: &str) -> Result<(SessionId, Outcome), String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let token = |word: Option<&&str>| match word {
        None => Ok(0),
        Some(text) => (text.parse::<i64>()).map_err(|_| format!("`{text}` is no token")),
    };
    let (session, outcome) = match &words[..] {
        [session, "granted", role, rest @ ..] if rest.len() <= 1 => {
            let (role, token) = (role_named(role)?, token(rest.first())?);
            (session, Outcome::Granted { role, token })
        }
        [session, "shared", role, rest @ ..] if rest.len() <= 1 => {
            let (role, token) = (role_named(role)?, token(rest.first())?);
            (session, Outcome::Shared { role, token })
        }
        [session, "released", role] => {
            let role = role_named(role)?;
            (session, Outcome::Released { role })
        }
        [session, "suspended"] => (session, Outcome::Suspended),
        [session, "resumed"] => (session, Outcome::Resumed),
        [session, "lost"] => (session, Outcome::Lost),
        _ => {
            return Err("a claim is `<session> granted|shared <role> [<token>]`, \
                 `<session> released <role>` or `<session> suspended|resumed|lost`"
                .to_owned())
        }
    };
    Ok((session_named(session)?, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_its_session_in_decimal_or_hex_and_a_bad_one_says_what_a_claim_is() {
        let (session, granted) = parse_claim("0x10a granted /locks/a 7").expect("a claim");
        assert_eq!(session, 0x10a);
        assert_eq!(
            granted,
            Outcome::Granted {
                role: "/locks/a",
                token: 7
            }
        );
        let (_, again) = parse_claim("266 granted /locks/a").expect("a claim");
        let Outcome::Granted { role, token: 0 } = again else {
            panic!("{again:?}")
        };
        let Outcome::Granted { role: first, .. } = granted else {
            unreachable!()
        };
        assert!(std::ptr::eq(role, first), "one copy of a role");
        assert_eq!(parse_claim("5 lost"), Ok((5, Outcome::Lost)));
        for bad in [
            "",
            "5",
            "5 granted",
            "x granted /l",
            "5 granted /l soon",
            "5 took /l",
        ] {
            assert!(parse_claim(bad).is_err(), "{bad}");
        }
        assert!(parse_claim(&format!("5 granted {}", "r".repeat(300))).is_err());
    }
}
