//! The command port's commands, as ZooKeeper's `ControllerService` takes them, so tools written
//! for that controller (zklab's own conformance with faults among them) drive `zklab serve`.

use zklab_recipes::client::SessionId;

/// A command of the command port, as ZooKeeper's `ControllerService` takes them
/// (`GET /command/<ACTION>[/<parameter>]`); a session id is written in decimal or `0x` hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Nothing: the port answers.
    Ping,
    /// Close one session's connection, or every connection; sessions live on.
    CloseConnection(Option<SessionId>),
    /// Expire one session, or every one.
    ExpireSession(Option<SessionId>),
    /// Send no reply to the next `n` requests of any session (every one with no `n`), which
    /// are still applied. As ZooKeeper's controller, the replies that find a node's data
    /// (getData) or children (getChildren2, not getChildren), and notifications, still go.
    NoResponse(Option<u64>),
    /// Answer the next `n` requests (every one with no `n`) with APIERROR at once, unapplied,
    /// as ZooKeeper's controller does (pings too).
    FailRequests(Option<u64>),
    /// Hold every request this many milliseconds before reading it (ZooKeeper's controller
    /// sleeps as long before each read), one after another in each session.
    AddDelay(u64),
    /// Refuse new connections. (ZooKeeper 3.8's controller takes the command and does nothing.)
    RejectConnections,
    /// Have the leader step down: every connection drops and no server takes one until an
    /// election is over. (A standalone server has no follower to lead: it does nothing.)
    ElectNewLeader,
    /// Behave again: no delay, no reply swallowed, no request failed, connections taken.
    Reset,
}

/// ADDDELAY's delay when it names none, as ZooKeeper's controller's.
const DEFAULT_DELAY_MS: u64 = 1000;

/// A number as the command and claims ports write them (session ids most of all): decimal, or
/// hex after `0x`.
pub fn parse_number(text: &str) -> Result<u64, std::num::ParseIntError> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    }
}

impl Control {
    /// The command `action` with its `parameter`, as the command port spells them.
    pub fn parse(action: &str, parameter: Option<&str>) -> Result<Control, String> {
        let number = |text: &str| {
            parse_number(text).map_err(|_| format!("{action} takes a number, not {text:?}"))
        };
        let session = |text: Option<&str>| {
            text.map(number)
                .transpose()
                .map(|n| n.map(|n| n as SessionId))
        };
        Ok(match action {
            "PING" => Control::Ping,
            "CLOSECONNECTION" => Control::CloseConnection(session(parameter)?),
            "EXPIRESESSION" => Control::ExpireSession(session(parameter)?),
            "NORESPONSE" => Control::NoResponse(parameter.map(number).transpose()?),
            "FAILREQUESTS" => Control::FailRequests(parameter.map(number).transpose()?),
            "ADDDELAY" => Control::AddDelay(
                parameter
                    .map(number)
                    .transpose()?
                    .unwrap_or(DEFAULT_DELAY_MS),
            ),
            "REJECTCONNECTIONS" => Control::RejectConnections,
            "RESET" => Control::Reset,
            "ELECTNEWLEADER" => Control::ElectNewLeader,
            "SHUTDOWN" => {
                return Err(
                    "SHUTDOWN is not taken: stop zklab serve with a signal, --for or --idle"
                        .to_owned(),
                )
            }
            _ => return Err(format!("no command {action}")),
        })
    }
}
