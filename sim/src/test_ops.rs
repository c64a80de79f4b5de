//! Ops and notifications written in one line, for the simulator's unit tests.

use zklab_recipes::acl::{Acl, Acls, Id, Perms};
use zklab_recipes::client::{CreateMode, EventType, Op, SessionId, WatchedEvent};

use crate::server::Notification;

/// A create of `path` holding `data`.
pub(crate) fn create_with(path: &str, data: &[u8], mode: CreateMode) -> Op {
    Op::Create {
        path: path.to_owned(),
        data: data.to_vec(),
        mode,
        acl: Acls::OPEN,
    }
}

/// A create of `path` with no data.
pub(crate) fn create(path: &str, mode: CreateMode) -> Op {
    create_with(path, b"", mode)
}

/// A create of a persistent `path` with no data.
pub(crate) fn persistent(path: &str) -> Op {
    create(path, CreateMode::Persistent)
}

/// An ACL of `(scheme, id, perms)` entries.
pub(crate) fn acl(entries: &[(&str, &str, Perms)]) -> Acls {
    let entry = |(scheme, id, perms): &(&str, &str, Perms)| Acl::new(*perms, Id::new(*scheme, *id));
    Acls::new(entries.iter().map(entry).collect())
}

/// A create of a persistent `path` holding `data`, with `acl`.
pub(crate) fn create_guarded(path: &str, data: &[u8], acl: Acls) -> Op {
    Op::Create {
        path: path.to_owned(),
        data: data.to_vec(),
        mode: CreateMode::Persistent,
        acl,
    }
}

/// A setACL of `path` to `acl`, if at ACL version `version`.
pub(crate) fn set_acl(path: &str, acl: Acls, version: i32) -> Op {
    Op::SetAcl {
        path: path.to_owned(),
        acl,
        version,
    }
}

/// An addAuth of `auth` in `scheme`.
pub(crate) fn add_auth(scheme: &str, auth: &[u8]) -> Op {
    Op::AddAuth {
        scheme: scheme.to_owned(),
        auth: Some(auth.to_vec()),
    }
}

/// A setData of `path` to `data`, if at `version`.
pub(crate) fn set(path: &str, data: &[u8], version: i32) -> Op {
    Op::SetData {
        path: path.to_owned(),
        data: data.to_vec(),
        version,
    }
}

/// The ops of a path and one field more, each built from the two.
macro_rules! path_ops {
    ($($(#[$doc:meta])* $name:ident => $variant:ident { $field:ident: $ty:ty },)+) => {
        $(
            $(#[$doc])*
            pub(crate) fn $name(path: &str, $field: $ty) -> Op {
                Op::$variant { path: path.to_owned(), $field }
            }
        )+
    };
}

path_ops! {
    /// A delete of `path`, if at `version`.
    delete => Delete { version: i32 },
    /// A check that `path` is at `version`.
    check => Check { version: i32 },
    /// An exists of `path`, leaving a watch if asked.
    exists => Exists { watch: bool },
    /// A getData of `path`, leaving a watch if asked.
    get_data => GetData { watch: bool },
    /// A getChildren of `path`, leaving a watch if asked.
    get_children => GetChildren { watch: bool },
    /// An addWatch on `path`.
    add_watch => AddWatch { mode: zklab_recipes::client::AddWatchMode },
    /// A removeWatches of `path`.
    remove_watches => RemoveWatches { kind: zklab_recipes::client::WatcherKind },
    /// A checkWatches of `path`.
    check_watches => CheckWatches { kind: zklab_recipes::client::WatcherKind },
}

/// The notification `session` is sent: `event_type` on `path`, caused by a change to `cause`.
pub(crate) fn note(
    session: SessionId,
    event_type: EventType,
    path: &str,
    cause: &str,
) -> Notification {
    Notification {
        session,
        event: WatchedEvent {
            event_type,
            path: path.to_owned(),
        },
        cause: cause.to_owned(),
    }
}
