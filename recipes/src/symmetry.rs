//! Renaming sessions throughout a state, for the model checker's symmetry reduction.
//!
//! Clients are interchangeable: a state in which two clients have swapped roles behaves exactly
//! like the original. To see that, a checker renames their session ids everywhere: in the
//! server's tables, in the machines, in messages, and inside znode names, where a recipe embeds
//! its session's guid ([`session_guid`]).

use std::collections::BTreeMap;

use crate::client::{Op, OpResult, SessionId, Stat, WatchedEvent, ZkEvent};

/// The guid a recipe puts at the start of its znode names: the session id in 16 hex digits.
/// Stable across reconnects (so a client can find its own node after a lost reply) and unique
/// per session.
pub fn session_guid(session: SessionId) -> String {
    format!("{session:016x}")
}

/// A renaming of session ids (those not named stay as they are).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionRenaming {
    map: BTreeMap<SessionId, SessionId>,
}

impl SessionRenaming {
    /// A renaming that sends each `from` to its `to`. It must be a permutation of the ids it names.
    pub fn new(pairs: impl IntoIterator<Item = (SessionId, SessionId)>) -> Self {
        SessionRenaming {
            map: pairs.into_iter().collect(),
        }
    }

    /// The new id of a session.
    pub fn id(&self, session: SessionId) -> SessionId {
        self.map.get(&session).copied().unwrap_or(session)
    }

    /// A bare session guid, renamed.
    pub fn guid(&self, guid: &str) -> String {
        match SessionId::from_str_radix(guid, 16) {
            Ok(session) if guid.len() == 16 => session_guid(self.id(session)),
            _ => guid.to_owned(),
        }
    }

    /// A path or a znode name with every component's session guid renamed.
    pub fn text(&self, text: &str) -> String {
        if !text.contains('-') {
            return text.to_owned();
        }
        text.split('/')
            .map(|component| self.component(component))
            .collect::<Vec<_>>()
            .join("/")
    }

    fn component(&self, component: &str) -> String {
        let guid = component
            .get(..16)
            .filter(|_| component.as_bytes().get(16) == Some(&b'-'));
        match guid.and_then(|hex| SessionId::from_str_radix(hex, 16).ok()) {
            Some(session) if self.map.contains_key(&session) => {
                format!("{}{}", session_guid(self.id(session)), &component[16..])
            }
            _ => component.to_owned(),
        }
    }
}

/// A value that names sessions, and can be rewritten under a [`SessionRenaming`].
pub trait RenameSessions {
    /// The same value with every session renamed.
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self;
}

impl RenameSessions for String {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        renaming.text(self)
    }
}

impl<T: RenameSessions> RenameSessions for Vec<T> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        self.iter()
            .map(|item| item.rename_sessions(renaming))
            .collect()
    }
}

impl<T: RenameSessions> RenameSessions for Option<T> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        self.as_ref().map(|item| item.rename_sessions(renaming))
    }
}

impl<T: RenameSessions, E: Clone> RenameSessions for Result<T, E> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        match self {
            Ok(value) => Ok(value.rename_sessions(renaming)),
            Err(error) => Err(error.clone()),
        }
    }
}

impl RenameSessions for Stat {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        Stat {
            ephemeral_owner: renaming.id(self.ephemeral_owner),
            ..*self
        }
    }
}

impl RenameSessions for Op {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        let path = |p: &String| renaming.text(p);
        match self {
            Op::Create {
                path: p,
                data,
                mode,
            } => Op::Create {
                path: path(p),
                data: data.clone(),
                mode: *mode,
            },
            Op::Delete { path: p, version } => Op::Delete {
                path: path(p),
                version: *version,
            },
            Op::Exists { path: p, watch } => Op::Exists {
                path: path(p),
                watch: *watch,
            },
            Op::GetData { path: p, watch } => Op::GetData {
                path: path(p),
                watch: *watch,
            },
            Op::GetChildren { path: p, watch } => Op::GetChildren {
                path: path(p),
                watch: *watch,
            },
            Op::SetData {
                path: p,
                data,
                version,
            } => Op::SetData {
                path: path(p),
                data: data.clone(),
                version: *version,
            },
            Op::Check { path: p, version } => Op::Check {
                path: path(p),
                version: *version,
            },
            Op::Sync { path: p } => Op::Sync { path: path(p) },
            Op::Multi(ops) => Op::Multi(ops.rename_sessions(renaming)),
        }
    }
}

impl RenameSessions for OpResult {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        match self {
            OpResult::Created { path, stat } => OpResult::Created {
                path: renaming.text(path),
                stat: stat.rename_sessions(renaming),
            },
            OpResult::Exists(stat) => OpResult::Exists(stat.map(|s| s.rename_sessions(renaming))),
            OpResult::Data { data, stat } => OpResult::Data {
                data: data.clone(),
                stat: stat.rename_sessions(renaming),
            },
            OpResult::Children { children, stat } => OpResult::Children {
                children: children.rename_sessions(renaming),
                stat: stat.rename_sessions(renaming),
            },
            OpResult::SetData(stat) => OpResult::SetData(stat.rename_sessions(renaming)),
            OpResult::Multi(results) => OpResult::Multi(results.rename_sessions(renaming)),
            OpResult::Deleted | OpResult::Checked | OpResult::Synced | OpResult::RolledBack => {
                self.clone()
            }
        }
    }
}

impl RenameSessions for ZkEvent {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        match self {
            ZkEvent::Watch(event) => ZkEvent::Watch(WatchedEvent {
                event_type: event.event_type,
                path: renaming.text(&event.path),
            }),
            ZkEvent::Session(event) => ZkEvent::Session(*event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_at_the_start_of_components_are_renamed_and_nothing_else() {
        let swap = SessionRenaming::new([(1, 2), (2, 1)]);
        let one = session_guid(1);
        let two = session_guid(2);
        assert_eq!(
            swap.text(&format!("/locks/{one}-lock-0000000002")),
            format!("/locks/{two}-lock-0000000002")
        );
        assert_eq!(
            swap.text(&format!("{two}-lock-0000000000")),
            format!("{one}-lock-0000000000")
        );
        assert_eq!(
            swap.text("/locks/0000000001-lock-0000000001"),
            "/locks/0000000001-lock-0000000001"
        );
        assert_eq!(
            swap.text(&format!("/x/{}-lock-1", session_guid(3))),
            format!("/x/{}-lock-1", session_guid(3))
        );
        assert_eq!(swap.id(1), 2);
        assert_eq!(swap.id(7), 7);
    }

    #[test]
    fn replies_rename_paths_children_and_owners() {
        let swap = SessionRenaming::new([(1, 2), (2, 1)]);
        let stat = Stat {
            ephemeral_owner: 1,
            ..Stat::default()
        };
        let reply = OpResult::Children {
            children: vec![format!("{}-lock-0000000000", session_guid(2))],
            stat,
        };
        let renamed = reply.rename_sessions(&swap);
        let expected = OpResult::Children {
            children: vec![format!("{}-lock-0000000000", session_guid(1))],
            stat: Stat {
                ephemeral_owner: 2,
                ..Stat::default()
            },
        };
        assert_eq!(renamed, expected);
    }
}
