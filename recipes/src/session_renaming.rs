//! Renaming sessions throughout a state, for the model checker's symmetry reduction.
//!
//! Clients are interchangeable: a state in which two clients have swapped roles behaves exactly
//! like the original. To see that, a checker renames their session ids everywhere: in the
//! server's tables, in the machines, in messages, and inside znode names, where a recipe embeds
//! its session's guid ([`session_guid`]).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::time::Duration;

mod stable_hasher;

pub use stable_hasher::StableHasher;

use crate::client::{
    AddWatchMode, CreateMode, EventType, SessionEvent, SessionId, Stat, WatcherKind, ZkError,
};

/// Derives [`RenameSessions`] field by field; a field may say `#[rename(session)]` (it holds
/// session ids: see [`SessionIds`]), `#[rename(client)]` (client indices: see [`ClientIds`]),
/// `#[rename(guid)]` (a bare session guid) or
/// `#[rename(keep)]` (it names no session). A bare `i64` field must say which.
pub use zklab_recipes_derive::RenameSessions;

/// The guid a recipe puts at the start of its znode names: the session id in 16 hex digits.
/// Stable across reconnects (so a client can find its own node after a lost reply) and unique
/// per session.
pub fn session_guid(session: SessionId) -> String {
    let mut guid = String::with_capacity(16);
    guid.extend(guid_digits(session).map(char::from));
    guid
}

/// A session's guid without allocating: written by hand rather than with `format!`, since the
/// model checker renames guids per state.
fn guid_digits(session: SessionId) -> [u8; 16] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bits = session as u64;
    std::array::from_fn(|digit| HEX[((bits >> ((15 - digit) * 4)) & 0xf) as usize])
}

/// A renaming of session ids (those not named stay as they are), and of the client indices
/// that moved with them when the renaming reorders clients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionRenaming {
    /// Each renamed session, its new id and its new guid (made once: renaming runs per state),
    /// by old id. A few entries, one per client: a scan beats a map.
    renamed: Vec<(SessionId, SessionId, [u8; 16])>,
    /// Each moved client's old index and new one.
    moved_clients: Vec<(u32, u32)>,
}

impl SessionRenaming {
    /// A renaming that sends each `from` to its `to`: a permutation of the ids it names, or, to
    /// erase which session is which (for a key that ignores identities), many to one.
    pub fn new(pairs: impl IntoIterator<Item = (SessionId, SessionId)>) -> Self {
        let map: BTreeMap<SessionId, SessionId> =
            pairs.into_iter().filter(|(from, to)| from != to).collect();
        let renamed = map
            .into_iter()
            .map(|(from, to)| (from, to, guid_digits(to)))
            .collect();
        SessionRenaming {
            renamed,
            moved_clients: Vec::new(),
        }
    }

    /// The same renaming, which also moves each client index `from` to its `to`: what monitors
    /// that tell clients apart by index must see when the checker reorders clients.
    pub fn with_clients(self, moves: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let moved_clients = moves.into_iter().filter(|(from, to)| from != to).collect();
        SessionRenaming {
            moved_clients,
            ..self
        }
    }

    /// The new index of a client.
    pub fn client(&self, client: u32) -> u32 {
        self.moved_clients
            .iter()
            .find(|(from, _)| *from == client)
            .map_or(client, |&(_, to)| to)
    }

    /// The new id of a session.
    pub fn id(&self, session: SessionId) -> SessionId {
        self.renamed
            .iter()
            .find(|(from, _, _)| *from == session)
            .map_or(session, |&(_, to, _)| to)
    }

    /// The new guid of a renamed session.
    fn renamed_guid(&self, session: SessionId) -> Option<&str> {
        self.renamed
            .iter()
            .find(|(from, _, _)| *from == session)
            .map(|(_, _, guid)| std::str::from_utf8(guid).expect("hex digits are ASCII"))
    }

    /// A bare session guid, renamed.
    pub fn guid(&self, guid: &str) -> String {
        parse_guid(guid.as_bytes())
            .and_then(|session| self.renamed_guid(session))
            .unwrap_or(guid)
            .to_owned()
    }

    /// Writes a bare session guid as [`SessionRenaming::guid`] renames it: as its session's new
    /// id.
    pub fn hash_guid(&self, guid: &str, hasher: &mut StableHasher) {
        match parse_guid(guid.as_bytes()) {
            Some(session) => hasher.write_i64(self.id(session)),
            None => write_literal(guid, hasher),
        }
    }

    /// A path or a znode name with every component's session guid renamed: a component that
    /// starts with a renamed session's guid followed by `-`.
    pub fn text(&self, text: &str) -> String {
        let mut renamed = String::with_capacity(text.len());
        let mut copied = 0;
        for (start, session) in guids_in(text) {
            if let Some(to) = self.renamed_guid(session) {
                renamed.push_str(&text[copied..start]);
                renamed.push_str(to);
                copied = start + 16;
            }
        }
        renamed.push_str(&text[copied..]);
        renamed
    }

    /// Writes a text as [`SessionRenaming::text`] renames it, without building it: the runs
    /// between guids as they are, each guid as its session's new id. The guids are where they
    /// were after the renaming, so the renamed text, written under no renaming, writes the same.
    pub fn hash_text(&self, text: &str, hasher: &mut StableHasher) {
        let mut written = 0;
        for (start, session) in guids_in(text) {
            write_literal(&text[written..start], hasher);
            hasher.write_i64(self.id(session));
            written = start + 16;
        }
        write_literal(&text[written..], hasher);
    }
}

/// Text as it is, and its length, so that where it ends is part of the hash.
fn write_literal(text: &str, hasher: &mut StableHasher) {
    hasher.write(text.as_bytes());
    hasher.write_usize(text.len());
}

/// The session a guid names: exactly 16 lowercase hex digits, as [`session_guid`] writes them.
fn parse_guid(guid: &[u8]) -> Option<SessionId> {
    /// Each byte's value as a hex digit, or 16 for a byte that is none.
    const DIGIT: [u8; 256] = {
        let mut table = [16; 256];
        let mut byte = 0;
        while byte < 10 {
            table[b'0' as usize + byte] = byte as u8;
            byte += 1;
        }
        byte = 0;
        while byte < 6 {
            table[b'a' as usize + byte] = 10 + byte as u8;
            byte += 1;
        }
        table
    };
    if guid.len() != 16 {
        return None;
    }
    let mut bits = 0u64;
    for &byte in guid {
        let digit = DIGIT[usize::from(byte)];
        if digit == 16 {
            return None;
        }
        bits = bits << 4 | u64::from(digit);
    }
    // The guid is the id's bits.
    Some(bits as SessionId)
}

/// Where a text's session guids start, and whose they are: a component (the text's start, or
/// after a `/`) that begins with a guid followed by `-`. One pass over the bytes: this runs for
/// every string of a state.
fn guids_in(text: &str) -> impl Iterator<Item = (usize, SessionId)> + '_ {
    let bytes = text.as_bytes();
    // The next component's start, or none once the text is too short to hold a guid there.
    let mut next = Some(0).filter(|_| bytes.len() > 16);
    std::iter::from_fn(move || {
        while let Some(start) = next {
            next = bytes[start..]
                .iter()
                .position(|&byte| byte == b'/')
                .map(|slash| start + slash + 1)
                .filter(|&after| bytes.len() - after > 16);
            // A guid is ASCII, so `start + 16` is a character boundary when the byte there is
            // `-`; a candidate that runs into the next component holds a `/` and parses as none.
            if bytes.get(start + 16) == Some(&b'-') {
                if let Some(session) = parse_guid(&bytes[start..start + 16]) {
                    return Some((start, session));
                }
            }
        }
        None
    })
}

/// A value that names sessions, and can be rewritten under a [`SessionRenaming`], or hashed as
/// if it had been.
pub trait RenameSessions {
    /// The same value with every session renamed.
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self;

    /// Hashes the value as renamed, without building it, so that the checker can compare the
    /// renamings of a state and build only the one it keeps. For a renaming `r` that permutes
    /// sessions, `v.hash_renamed(&r, h)` writes what
    /// `v.rename_sessions(&r).hash_renamed(&SessionRenaming::default(), h)` writes. Sets and maps
    /// hash their members in no order (a renaming may reorder them), so this is not `Hash`.
    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher);
}

impl RenameSessions for String {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        renaming.text(self)
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        renaming.hash_text(self, hasher);
    }
}

impl<T: RenameSessions, E: Clone + Hash> RenameSessions for Result<T, E> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        match self {
            Ok(value) => Ok(value.rename_sessions(renaming)),
            Err(error) => Err(error.clone()),
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        hasher.write_u8(u8::from(self.is_ok()));
        match self {
            Ok(value) => value.hash_renamed(renaming, hasher),
            Err(error) => error.hash(hasher),
        }
    }
}

/// Renamed keys may sort differently: the map is rebuilt.
impl<K: RenameSessions + Ord, V: RenameSessions> RenameSessions for BTreeMap<K, V> {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        self.iter()
            .map(|(key, value)| {
                (
                    key.rename_sessions(renaming),
                    value.rename_sessions(renaming),
                )
            })
            .collect()
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        hasher.write_unordered(self.iter(), |(key, value), hasher| {
            key.hash_renamed(renaming, hasher);
            value.hash_renamed(renaming, hasher);
        });
    }
}

/// Tuples rename member by member.
macro_rules! tuple {
    ($($member:ident . $index:tt),+) => {
        impl<$($member: RenameSessions),+> RenameSessions for ($($member,)+) {
            fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
                ($(self.$index.rename_sessions(renaming),)+)
            }

            fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
                $(self.$index.hash_renamed(renaming, hasher);)+
            }
        }
    };
}

tuple!(A.0);
tuple!(A.0, B.1);
tuple!(A.0, B.1, C.2);
tuple!(A.0, B.1, C.2, D.3);
tuple!(A.0, B.1, C.2, D.3, E.4);
tuple!(A.0, B.1, C.2, D.3, E.4, F.5);

impl<T> RenameSessions for PhantomData<T> {
    fn rename_sessions(&self, _: &SessionRenaming) -> Self {
        PhantomData
    }

    fn hash_renamed(&self, _: &SessionRenaming, _: &mut StableHasher) {}
}

/// Types that can name no session: renaming copies them. `i64` is left out on purpose: it is
/// what a session id is, so a field of that type must say what it holds.
macro_rules! names_no_session {
    ($($type:ty),*) => {
        $(
            impl RenameSessions for $type {
                fn rename_sessions(&self, _: &SessionRenaming) -> Self {
                    *self
                }

                fn hash_renamed(&self, _: &SessionRenaming, hasher: &mut StableHasher) {
                    self.hash(hasher);
                }
            }
        )*
    };
}

names_no_session!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    usize,
    i8,
    i16,
    i32,
    &'static str,
    Duration,
    AddWatchMode,
    CreateMode,
    EventType,
    SessionEvent,
    WatcherKind,
    ZkError
);

/// Values that are session ids, or collections of them (a field marked `#[rename(session)]`).
pub trait SessionIds {
    /// The same ids, renamed.
    fn rename_ids(&self, renaming: &SessionRenaming) -> Self;

    /// Hashes the ids as renamed (see [`RenameSessions::hash_renamed`]).
    fn hash_ids(&self, renaming: &SessionRenaming, hasher: &mut StableHasher);
}

impl SessionIds for SessionId {
    fn rename_ids(&self, renaming: &SessionRenaming) -> Self {
        renaming.id(*self)
    }

    fn hash_ids(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        hasher.write_i64(renaming.id(*self));
    }
}

/// Collections rename and hash member by member, under either trait, so that a collection of
/// values and a collection of session ids agree: a sequence (those listed last) in order, its
/// length first; an option, whether it holds one first; a set rebuilt (renamed members may sort
/// differently) and hashed in no order.
macro_rules! member_by_member {
    ($trait:ident, $rename:ident, $hash:ident, [$($sequence:ident),+]) => {
        $(
            impl<T: $trait> $trait for $sequence<T> {
                fn $rename(&self, renaming: &SessionRenaming) -> Self {
                    self.iter().map(|item| item.$rename(renaming)).collect()
                }

                fn $hash(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
                    hasher.write_usize(self.len());
                    self.iter().for_each(|item| item.$hash(renaming, hasher));
                }
            }
        )+

        impl<T: $trait> $trait for Option<T> {
            fn $rename(&self, renaming: &SessionRenaming) -> Self {
                self.as_ref().map(|item| item.$rename(renaming))
            }

            fn $hash(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
                hasher.write_u8(u8::from(self.is_some()));
                if let Some(item) = self {
                    item.$hash(renaming, hasher);
                }
            }
        }

        impl<T: $trait + Ord> $trait for BTreeSet<T> {
            fn $rename(&self, renaming: &SessionRenaming) -> Self {
                self.iter().map(|item| item.$rename(renaming)).collect()
            }

            fn $hash(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
                hasher.write_unordered(self.iter(), |item, hasher| item.$hash(renaming, hasher));
            }
        }
    };
}

member_by_member!(
    RenameSessions,
    rename_sessions,
    hash_renamed,
    [Vec, VecDeque]
);
member_by_member!(SessionIds, rename_ids, hash_ids, [Vec]);
member_by_member!(ClientIds, rename_clients, hash_clients, [Vec]);

/// A value made of client indices (as the trace numbers clients), which a reordering of clients
/// moves; `#[rename(client)]` on a field uses it.
pub trait ClientIds {
    /// The same indices, moved.
    fn rename_clients(&self, renaming: &SessionRenaming) -> Self;

    /// Hashes the indices as moved (see [`RenameSessions::hash_renamed`]).
    fn hash_clients(&self, renaming: &SessionRenaming, hasher: &mut StableHasher);
}

impl ClientIds for u32 {
    fn rename_clients(&self, renaming: &SessionRenaming) -> Self {
        renaming.client(*self)
    }

    fn hash_clients(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        hasher.write_u32(renaming.client(*self));
    }
}

/// Every field but the owner is a zxid, a time, a version or a count.
impl RenameSessions for Stat {
    fn rename_sessions(&self, renaming: &SessionRenaming) -> Self {
        Stat {
            ephemeral_owner: renaming.id(self.ephemeral_owner),
            ..*self
        }
    }

    fn hash_renamed(&self, renaming: &SessionRenaming, hasher: &mut StableHasher) {
        self.rename_sessions(renaming).hash(hasher);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Op, OpResult};

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
        assert_eq!(
            swap.text(&format!("/{one}-a/{two}-b/x{one}-c")),
            format!("/{two}-a/{one}-b/x{one}-c")
        );
        // A short component followed by a guid's digits is no guid, and text that is not ASCII
        // is left whole.
        assert_eq!(swap.text("/ab/0000000000001-x"), "/ab/0000000000001-x");
        assert_eq!(swap.text("/é0000000000000001-x"), "/é0000000000000001-x");
        assert_eq!(swap.text(""), "");
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

    /// What the derive does with each kind of field.
    #[derive(Clone, Debug, PartialEq, Eq, RenameSessions)]
    enum Example {
        Plain {
            path: String,
            #[rename(session)]
            owner: SessionId,
            #[rename(session)]
            waiting: BTreeSet<SessionId>,
            #[rename(guid)]
            guid: String,
            #[rename(keep)]
            token: i64,
            #[rename(keep)]
            verbatim: String,
        },
        Tuple(Vec<Op>, Option<String>),
        Clients(#[rename(client)] u32, #[rename(client)] BTreeSet<u32>),
        Unit,
    }

    #[test]
    fn client_indices_move_only_when_the_renaming_reorders_clients() {
        let sessions_only = SessionRenaming::new([(1, 2), (2, 1)]);
        let reordered = sessions_only.clone().with_clients([(0, 1), (1, 0)]);
        let value = Example::Clients(0, BTreeSet::from([1, 4]));
        assert_eq!(value.rename_sessions(&sessions_only), value);
        let moved = value.rename_sessions(&reordered);
        assert_eq!(moved, Example::Clients(1, BTreeSet::from([0, 4])));
        let same = SessionRenaming::default();
        assert_eq!(hashed(&value, &reordered), hashed(&moved, &same));
        assert_ne!(hashed(&value, &same), hashed(&moved, &same));
    }

    #[test]
    fn derived_renaming_follows_each_fields_rule() {
        let swap = SessionRenaming::new([(1, 2), (2, 1)]);
        let node = |s| format!("/l/{}-lock-0000000001", session_guid(s));
        let plain = Example::Plain {
            path: node(1),
            owner: 1,
            waiting: BTreeSet::from([2, 7]),
            guid: session_guid(2),
            token: 1,
            verbatim: node(1),
        };
        let expected = Example::Plain {
            path: node(2),
            owner: 2,
            waiting: BTreeSet::from([1, 7]),
            guid: session_guid(1),
            token: 1,
            verbatim: node(1),
        };
        assert_eq!(plain.rename_sessions(&swap), expected);
        let delete = |s| Op::Delete {
            path: node(s),
            version: -1,
        };
        let tuple = Example::Tuple(vec![delete(1)], Some(node(2)));
        assert_eq!(
            tuple.rename_sessions(&swap),
            Example::Tuple(vec![delete(2)], Some(node(1)))
        );
        assert_eq!(Example::Unit.rename_sessions(&swap), Example::Unit);
    }

    fn hashed(value: &impl RenameSessions, renaming: &SessionRenaming) -> u64 {
        let mut hasher = StableHasher::default();
        value.hash_renamed(renaming, &mut hasher);
        hasher.finish()
    }

    #[test]
    fn a_value_hashed_under_a_renaming_hashes_as_the_renamed_value() {
        let swap = SessionRenaming::new([(1, 2), (2, 1)]);
        let same = SessionRenaming::default();
        let node = |s| format!("/l/{}-lock-0000000001", session_guid(s));
        let plain = |owner, token| Example::Plain {
            path: node(1),
            owner,
            waiting: BTreeSet::from([2, 7]),
            guid: session_guid(2),
            token,
            verbatim: node(1),
        };
        let values = [
            plain(1, 1),
            Example::Tuple(
                vec![Op::Exists {
                    path: node(2),
                    watch: true,
                }],
                Some(node(1)),
            ),
            Example::Unit,
        ];
        for value in &values {
            assert_eq!(
                hashed(value, &swap),
                hashed(&value.rename_sessions(&swap), &same),
                "{value:?}"
            );
        }
        // Every field counts, the variant too.
        assert_ne!(hashed(&plain(1, 1), &same), hashed(&plain(1, 2), &same));
        assert_ne!(hashed(&plain(1, 1), &same), hashed(&plain(2, 1), &same));
        assert_ne!(
            hashed(&Example::Unit, &same),
            hashed(&Example::Tuple(vec![], None), &same)
        );
    }
}
