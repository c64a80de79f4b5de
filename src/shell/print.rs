//! zkCli's texts: its stat block, its error messages, its watch notifications, its usage list.
//! They are copied from ZooKeeper 3.8's zkCli and Java client, character for character, since a
//! script's output is compared with a real zkCli's byte for byte.

use crate::recipes::client::{EventType, SessionEvent, Stat, ZkError, ZkEvent};

/// What zkCli's `usage()` prints before `Command not found`: every command it knows, with its
/// options. The shell's own commands take their usage lines from here too.
pub(super) const COMMANDS: [(&str, &str); 28] = [
    ("addWatch", "[-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE"),
    ("addauth", "scheme auth"),
    ("close", ""),
    ("config", "[-c] [-w] [-s]"),
    ("connect", "host:port"),
    ("create", "[-s] [-e] [-c] [-t ttl] path [data] [acl]"),
    ("delete", "[-v version] path"),
    ("deleteall", "path [-b batch size]"),
    ("delquota", "[-n|-b|-N|-B] path"),
    ("get", "[-s] [-w] path"),
    ("getAcl", "[-s] path"),
    ("getAllChildrenNumber", "path"),
    ("getEphemerals", "path"),
    ("history", ""),
    ("listquota", "path"),
    ("ls", "[-s] [-w] [-R] path"),
    ("printwatches", "on|off"),
    ("quit", ""),
    ("reconfig", "[-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]"),
    ("redo", "cmdno"),
    ("removewatches", "path [-c|-d|-a] [-l]"),
    ("set", "[-s] [-v version] path data"),
    ("setAcl", "[-s] [-v version] [-R] path acl"),
    ("setquota", "-n|-b|-N|-B val path"),
    ("stat", "[-w] path"),
    ("sync", "path"),
    ("version", ""),
    ("whoami", ""),
];

/// A command's usage line, which zkCli prints when the arguments do not fit.
pub(super) fn usage(command: &str) -> String {
    let options = COMMANDS
        .iter()
        .find(|(name, _)| *name == command)
        .map_or("", |(_, options)| options);
    format!("{command} {options}")
}

/// zkCli's answer to a command it does not know: its usage list, then the error.
pub(super) fn command_not_found(command: &str) -> String {
    let usages: String = COMMANDS
        .iter()
        .map(|(name, _)| format!("\t{}\n", usage(name)))
        .collect();
    format!(
        "ZooKeeper -server host:port -client-configuration properties-file cmd args\n\
         {usages}Command not found: Command not found {command}"
    )
}

/// What `help` prints: the commands this shell supports, with the options it takes (zkCli's
/// own list, which an unknown command prints, names many more).
pub(super) const HELP: &str = "zklab shell: the zkCli commands it supports
\taddWatch [-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE
\taddauth scheme auth
\tcreate [-s] [-e] [-c] [-t ttl] path [data] [acl]
\tdelete [-v version] path
\tdeleteall path [-b batch size]
\tget [-s] [-w] path
\tgetAcl [-s] path
\tgetAllChildrenNumber path
\tgetEphemerals path
\thelp
\tls [-s] [-w] [-R] path
\tquit
\tremovewatches path [-c|-d|-a] [-l]
\tset [-s] [-v version] path data
\tsetAcl [-s] [-v version] [-R] path acl
\tstat [-w] path
\tsync path
\twhoami
";

/// What `ls -?` prints (Commons CLI's help for the options of `ls`).
pub(super) const LS_HELP: &str = "usage: ls [options] path
 -?   help
 -R   recurse
 -s   stat
 -w   watch
";

/// zkCli's `StatPrinter`.
pub(super) fn stat(stat: &Stat) -> String {
    format!(
        "cZxid = 0x{:x}\nctime = {}\nmZxid = 0x{:x}\nmtime = {}\npZxid = 0x{:x}\n\
         cversion = {}\ndataVersion = {}\naclVersion = {}\nephemeralOwner = 0x{:x}\n\
         dataLength = {}\nnumChildren = {}\n",
        stat.czxid,
        java_date(stat.ctime),
        stat.mzxid,
        java_date(stat.mtime),
        stat.pzxid,
        stat.cversion,
        stat.version,
        stat.aversion,
        stat.ephemeral_owner,
        stat.data_length,
        stat.num_children,
    )
}

/// What zkCli's default watcher prints for an event: Java's `WatchedEvent.toString()` under
/// `WATCHER::`, each after an empty line.
pub(super) fn event(event: &ZkEvent) -> String {
    let (state, kind, path) = match event {
        ZkEvent::Watch(watched) => {
            let kind = match watched.event_type {
                EventType::NodeCreated => "NodeCreated",
                EventType::NodeDeleted => "NodeDeleted",
                EventType::NodeDataChanged => "NodeDataChanged",
                EventType::NodeChildrenChanged => "NodeChildrenChanged",
                EventType::DataWatchRemoved => "DataWatchRemoved",
                EventType::ChildWatchRemoved => "ChildWatchRemoved",
                EventType::PersistentWatchRemoved => "PersistentWatchRemoved",
            };
            ("SyncConnected", kind, watched.path.as_str())
        }
        ZkEvent::Session(state) => {
            let state = match state {
                SessionEvent::Disconnected => "Disconnected",
                SessionEvent::SyncConnected => "SyncConnected",
                SessionEvent::Expired => "Expired",
                SessionEvent::Closed => "Closed",
            };
            (state, "None", "null")
        }
    };
    format!("\nWATCHER::\n\nWatchedEvent state:{state} type:{kind} path:{path}\n")
}

/// zkCli's message for a failed request on `path` (`CliWrapperException`, falling back on
/// `KeeperException.getMessage()`).
pub(super) fn error(error: ZkError, path: &str) -> String {
    match error {
        ZkError::NoNode => format!("Node does not exist: {path}"),
        ZkError::NoChildrenForEphemerals => format!("Ephemerals cannot have children: {path}"),
        ZkError::NodeExists => format!("Node already exists: {path}"),
        ZkError::NotEmpty => format!("Node not empty: {path}"),
        ZkError::InvalidAcl => format!("Acl is not valid : {path}"),
        ZkError::NoAuth => format!("Insufficient permission : {path}"),
        ZkError::BadArguments => format!("Arguments are not valid : {path}"),
        ZkError::BadVersion => format!("version No is not valid : {path}"),
        error => keeper_message(error, Some(path)),
    }
}

/// Java's `KeeperException.getMessage()`: `KeeperErrorCode = ` its code's words, then ` for `
/// the path when the exception has one (a client's own refusal has none).
pub(super) fn keeper_message(error: ZkError, path: Option<&str>) -> String {
    let words = match error {
        ZkError::SystemError | ZkError::Closed => "SystemError",
        ZkError::RuntimeInconsistency => "RuntimeInconsistency",
        ZkError::DataInconsistency => "DataInconsistency",
        ZkError::ConnectionLoss => "ConnectionLoss",
        ZkError::MarshallingError => "MarshallingError",
        ZkError::Unimplemented => "Unimplemented",
        ZkError::OperationTimeout => "OperationTimeout",
        ZkError::BadArguments => "BadArguments",
        ZkError::ApiError => "APIError",
        ZkError::NoNode => "NoNode",
        ZkError::NoAuth => "NoAuth",
        ZkError::BadVersion => "BadVersion",
        ZkError::NoChildrenForEphemerals => "NoChildrenForEphemerals",
        ZkError::NodeExists => "NodeExists",
        ZkError::NotEmpty => "Directory not empty",
        ZkError::SessionExpired => "Session expired",
        ZkError::InvalidCallback => "Invalid callback",
        ZkError::InvalidAcl => "InvalidACL",
        ZkError::AuthFailed => "AuthFailed",
        ZkError::SessionMoved => "Session moved",
        ZkError::NoWatcher => "No such watcher",
    };
    match path {
        Some(path) => format!("KeeperErrorCode = {words} for {path}"),
        None => format!("KeeperErrorCode = {words}"),
    }
}

/// What zkCli's watcher prints when the server refuses an authentication: the client has given
/// the session up.
pub(super) const AUTH_FAILED: &str =
    "\nWATCHER::\n\nWatchedEvent state:AuthFailed type:None path:null\n";

/// Java's `Date.toString()` in UTC, as a zkCli in the UTC zone prints `ctime` and `mtime`:
/// `Thu Jan 01 00:00:00 UTC 1970`.
pub(super) fn java_date(millis: i64) -> String {
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let seconds = millis.div_euclid(1000);
    let (days, second) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_date(days);
    format!(
        "{} {} {day:02} {:02}:{:02}:{:02} UTC {year}",
        WEEKDAYS[days.rem_euclid(7) as usize],
        MONTHS[month - 1],
        second / 3600,
        second / 60 % 60,
        second % 60,
    )
}

/// The proleptic Gregorian date (year, month 1-12, day) `days` after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> (i64, usize, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as usize, day)
}

#[cfg(test)]
mod tests {
    use super::java_date;

    #[test]
    fn dates_print_as_javas_date_to_string_in_utc() {
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(1_795_804_881_000), "Fri Nov 27 18:41:21 UTC 2026");
        assert_eq!(java_date(951_782_400_000), "Tue Feb 29 00:00:00 UTC 2000");
    }
}
