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
    // Written by hand rather than with `format!`: the model checker renames guids per state.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = session as u64;
    (0..16)
        .rev()
        .map(|digit| char::from(HEX[((bits >> (digit * 4)) & 0xf) as usize]))
        .collect()
}

/// A renaming of session ids (those not named stay as they are).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionRenaming {
    map: BTreeMap<SessionId, SessionId>,
    /// Each renamed session's guid and its new guid, made once: renaming runs per state.
    guids: Vec<(String, String)>,
}

impl SessionRenaming {
    /// A renaming that sends each `from` to its `to`: a permutation of the ids it names, or, to
    /// erase which session is which (for a key that ignores identities), many to one.
    pub fn new(pairs: impl IntoIterator<Item = (SessionId, SessionId)>) -> Self {
        let map: BTreeMap<SessionId, SessionId> =
            pairs.into_iter().filter(|(from, to)| from != to).collect();
        let guids = map
            .iter()
            .map(|(&from, &to)| (session_guid(from), session_guid(to)))
            .collect();
        SessionRenaming { map, guids }
    }

    /// The new id of a session.
    pub fn id(&self, session: SessionId) -> SessionId {
        self.map.get(&session).copied().unwrap_or(session)
    }

    /// A bare session guid, renamed.
    pub fn guid(&self, guid: &str) -> String {
        self.renamed_guid(guid).unwrap_or(guid).to_owned()
    }

    fn renamed_guid(&self, guid: &str) -> Option<&str> {
        self.guids
            .iter()
            .find(|(from, _)| from == guid)
            .map(|(_, to)| to.as_str())
    }

    /// A path or a znode name with every component's session guid renamed: a component that
    /// starts with a renamed session's guid followed by `-`.
    pub fn text(&self, text: &str) -> String {
        let mut out = String::new();
        let mut copied = 0;
        let mut start = 0;
        for end in text.match_indices('/').map(|(i, _)| i).chain([text.len()]) {
            let component = &text[start..end];
            let renamed = (component.as_bytes().get(16) == Some(&b'-'))
                .then(|| self.renamed_guid(&component[..16]))
                .flatten();
            if let Some(to) = renamed {
                out.push_str(&text[copied..start]);
                out.push_str(to);
                copied = start + 16;
            }
            start = end + 1;
        }
        if copied == 0 {
            return text.to_owned();
        }
        out.push_str(&text[copied..]);
        out
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
    fn a_guid_is_the_session_id_in_16_hex_digits() {
        assert_eq!(session_guid(1), "0000000000000001");
        assert_eq!(session_guid(0x72a5_0001_2b3c), "000072a500012b3c");
        assert_eq!(session_guid(-1), "ffffffffffffffff");
        assert_eq!(session_guid(-1), format!("{:016x}", -1i64));
    }

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
