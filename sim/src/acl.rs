//! Who a session is, and what a node's ACL lets it do: ZooKeeper's `ip` and `digest`
//! authentication providers, `checkACL` and `fixupACL`, with no I/O.
//!
//! Every connection starts known by the address it comes from (`ip:127.0.0.1`: zklab's clients
//! and a conformance run's are on loopback) and gains an identity with each addAuth its server
//! accepts. A session keeps its identities across reconnections, as ZooKeeper's clients send
//! their authentication again on every new connection.

use std::borrow::Cow;
use std::sync::Arc;

use zklab_recipes::acl::{Acl, Acls, Id, Perms};
use zklab_recipes::client::{ClientInfo, ZkError};

use crate::digest::{digest_id, user_of};

/// The address every session connects from, as the `ip` scheme names it.
pub const LOOPBACK: Id = Id {
    scheme: Cow::Borrowed("ip"),
    id: Cow::Borrowed("127.0.0.1"),
};

/// The `user:password` of the super user of zklab's ZooKeeper servers: the simulated ones, and
/// the real ones zklab's launcher starts (its `superDigest`). A session authenticated as it
/// passes every ACL, as ZooKeeper's super user does, so that a test's observer can read and
/// clean up whatever its code left. Servers zklab did not start know no such user.
pub const SUPER_USER: &str = "zklab-super:zklab";

/// The identity that passes every ACL (ZooKeeper adds it beside the digest of the super user).
const SUPER: Id = Id {
    scheme: Cow::Borrowed("super"),
    id: Cow::Borrowed(""),
};

/// The digest identity of [`SUPER_USER`], as a server's `superDigest` names it.
pub fn super_digest() -> &'static str {
    static DIGEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DIGEST.get_or_init(|| digest_id(SUPER_USER))
}

/// The identities a session is known by: [`LOOPBACK`], then each one addAuth gave it, none
/// twice. A session that never authenticated holds no list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Identity(Option<Arc<[Id]>>);

impl Identity {
    /// Every identity, [`LOOPBACK`] first, then in the order the session gained them.
    fn ids(&self) -> impl Iterator<Item = &Id> {
        std::iter::once(&LOOPBACK).chain(self.0.iter().flat_map(|added| added.iter()))
    }

    /// Every identity in the order a server walks them, which whoAmI tells and an `auth`
    /// entry expands in: a connection keeps its ids in a Java `ConcurrentHashMap`'s key set,
    /// walked bin by bin, each bin in the order its ids came (the address first, at connect).
    /// Exact up to 11 ids; past that the map has grown, which is taken as bins of the larger
    /// table in the order the ids came, where Java may reorder a bin's chain.
    fn ids_in_server_order(&self) -> Vec<&Id> {
        let mut ids: Vec<&Id> = self.ids().collect();
        let bins = java_table_size(ids.len());
        ids.sort_by_key(|id| java_spread(java_id_hash(id)) & (bins - 1));
        ids
    }

    /// This identity with what `scheme` makes of `auth` (ZooKeeper's `handleAuthentication`):
    /// `digest` reads `user:password` (any bytes: the user is what comes before the first
    /// colon), and fails on no bytes at all (a null); `ip` adds the address the session comes
    /// from, whatever it is sent. Any other scheme has no provider on a default server:
    /// AuthFailed.
    pub fn authenticated(&self, scheme: &str, auth: Option<&[u8]>) -> Result<Identity, ZkError> {
        let gained = match (scheme, auth) {
            ("digest", None) => return Err(ZkError::AuthFailed),
            ("digest", Some(auth)) => {
                let digest = digest_id(&String::from_utf8_lossy(auth));
                let superuser = (digest == super_digest()).then_some(SUPER);
                superuser
                    .into_iter()
                    .chain([Id::new("digest", digest)])
                    .collect()
            }
            ("ip", _) => vec![LOOPBACK],
            _ => return Err(ZkError::AuthFailed),
        };
        let mut ids: Vec<Id> = self
            .0
            .iter()
            .flat_map(|added| added.iter().cloned())
            .collect();
        let before = ids.len();
        for id in gained {
            if id != LOOPBACK && !ids.contains(&id) {
                ids.push(id);
            }
        }
        Ok(match ids.len() == before {
            true => self.clone(),
            false => Identity(Some(ids.into())),
        })
    }

    /// Whether `acl` grants this identity any of `wanted`'s permissions (ZooKeeper's
    /// `checkACL`): an entry with one of those bits for `world:anyone`, or for an identity of
    /// the session its scheme matches (`digest`: the same text; `ip`: the address within the
    /// entry's network). An empty ACL grants everything, as ZooKeeper's check has it, and so
    /// does any ACL to the super user.
    pub fn may(&self, acl: &Acls, wanted: Perms) -> bool {
        let entries = acl.entries();
        entries.is_empty()
            || self.ids().any(|held| *held == SUPER)
            || entries.iter().any(|entry| {
                entry.perms.grants_any(wanted)
                    && (entry.id == Id::ANYONE || self.ids().any(|held| matches(held, &entry.id)))
            })
    }

    /// The ACL a create or setACL stores (ZooKeeper's `fixupACL`): duplicates dropped, each
    /// `auth` entry replaced by one per `digest` identity of the session (the `ip` scheme does
    /// not count as authenticated). InvalidAcl for an empty list, an `auth` entry from a session
    /// with no digest identity, an id its scheme refuses, or a scheme the server has no
    /// provider for.
    pub fn fix_up(&self, acl: &Acls) -> Result<Acls, ZkError> {
        if acl.is_open() {
            return Ok(Acls::OPEN);
        }
        let mut unique: Vec<&Acl> = Vec::with_capacity(acl.entries().len());
        for entry in acl.entries() {
            if !unique.contains(&entry) {
                unique.push(entry);
            }
        }
        if unique.is_empty() {
            return Err(ZkError::InvalidAcl);
        }
        let mut fixed = Vec::with_capacity(unique.len());
        for entry in unique {
            match &*entry.id.scheme {
                "world" if entry.id.id == "anyone" => fixed.push(entry.clone()),
                "auth" => {
                    let ids = self.ids_in_server_order();
                    let authenticated = ids.into_iter().filter(|id| id.scheme == "digest");
                    let before = fixed.len();
                    fixed.extend(authenticated.map(|id| Acl::new(entry.perms, id.clone())));
                    if fixed.len() == before {
                        return Err(ZkError::InvalidAcl);
                    }
                }
                "digest" if valid_digest(&entry.id.id) => fixed.push(entry.clone()),
                "ip" if network(&entry.id.id).is_some() => fixed.push(entry.clone()),
                _ => return Err(ZkError::InvalidAcl),
            }
        }
        Ok(Acls::new(fixed))
    }

    /// What whoAmI answers: each identity's scheme and user (for `digest`, the name before the
    /// hash; for `super`, which has no provider, nothing).
    pub fn who_am_i(&self) -> Vec<ClientInfo> {
        let info = |id: &Id| ClientInfo {
            scheme: id.scheme.to_string(),
            user: match &*id.scheme {
                "digest" => user_of(&id.id).to_owned(),
                "super" => String::new(),
                _ => id.id.to_string(),
            },
        };
        self.ids_in_server_order().into_iter().map(info).collect()
    }
}

/// Java's `String.hashCode`: over UTF-16 code units, wrapping.
fn java_string_hash(text: &str) -> i32 {
    text.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The `hashCode` jute writes for an `Id` record.
fn java_id_hash(id: &Id) -> i32 {
    let hash = 17i32
        .wrapping_mul(37)
        .wrapping_add(java_string_hash(&id.scheme));
    hash.wrapping_mul(37).wrapping_add(java_string_hash(&id.id))
}

/// `ConcurrentHashMap.spread`: the hash's high bits folded onto its low ones, never negative.
fn java_spread(hash: i32) -> usize {
    let hash = hash as u32;
    ((hash ^ (hash >> 16)) & 0x7fff_ffff) as usize
}

/// How many bins a `ConcurrentHashMap` holding `count` keys has: 16, doubled whenever it is
/// three quarters full.
fn java_table_size(count: usize) -> usize {
    let mut bins = 16;
    while count >= bins / 4 * 3 {
        bins *= 2;
    }
    bins
}

/// An ACL as a session without ADMIN on the node reads it: each digest entry's hash shown as
/// `x` (ZooKeeper's getACL, since 3.6).
pub fn masked(acl: &Acls) -> Acls {
    if acl
        .entries()
        .iter()
        .all(|entry| entry.id.scheme != "digest")
    {
        return acl.clone();
    }
    let mask = |entry: &Acl| match &*entry.id.scheme {
        "digest" => {
            let user = user_of(&entry.id.id);
            Acl::new(entry.perms, Id::new("digest", format!("{user}:x")))
        }
        _ => entry.clone(),
    };
    Acls::new(acl.entries().iter().map(mask).collect())
}

/// Whether a session's identity `held` is the one an ACL entry names (`matches` of the
/// entry's scheme's provider).
fn matches(held: &Id, named: &Id) -> bool {
    if held.scheme != named.scheme {
        return false;
    }
    match &*named.scheme {
        "ip" => match (network(&named.id), address(&held.id)) {
            (Some((net, bits)), Some(addr)) => masked_bits(net, bits) == masked_bits(addr, bits),
            _ => false,
        },
        _ => held.id == named.id,
    }
}

/// A digest entry's id as ZooKeeper accepts it: exactly two parts around a colon, as Java's
/// `split(":")` counts them (trailing empty parts dropped).
fn valid_digest(id: &str) -> bool {
    id.trim_end_matches(':').split(':').count() == 2
}

/// An `ip` entry's network: an IPv4 address, optionally `/bits` (0 to 32).
fn network(id: &str) -> Option<(u32, u32)> {
    let (addr, bits) = match id.split_once('/') {
        Some((addr, bits)) => (addr, java_int(bits).filter(|bits| (0..=32).contains(bits))?),
        None => (id, 32),
    };
    Some((address(addr)?, bits as u32))
}

/// A dotted IPv4 address, four parts of 0 to 255 as Java's `Integer.parseInt` reads them.
fn address(text: &str) -> Option<u32> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    parts.iter().try_fold(0u32, |addr, part| {
        let byte = java_int(part).filter(|byte| (0..=255).contains(byte))?;
        Some(addr << 8 | byte as u32)
    })
}

/// An integer as Java's `Integer.parseInt` reads one (as Rust's: an optional sign, then
/// decimal digits, within an `int`).
fn java_int(text: &str) -> Option<i64> {
    text.parse::<i32>().ok().map(i64::from)
}

fn masked_bits(addr: u32, bits: u32) -> u32 {
    match bits {
        0 => 0,
        _ => addr & (u32::MAX << (32 - bits)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_ops::acl;

    fn alice() -> Identity {
        Identity::default()
            .authenticated("digest", Some(b"alice:secret".as_slice()))
            .expect("digest takes any bytes")
    }

    #[test]
    fn a_session_is_known_by_its_address_then_by_what_it_authenticated_as() {
        let fresh = Identity::default();
        assert_eq!(fresh.ids().collect::<Vec<_>>(), [&LOOPBACK]);
        let alice = alice();
        let twice = alice
            .authenticated("digest", Some(b"alice:secret".as_slice()))
            .unwrap();
        assert_eq!(twice, alice, "an identity held already is not added again");
        assert_eq!(
            alice
                .authenticated("ip", Some(b"anything".as_slice()))
                .unwrap(),
            alice,
            "ip adds the address the session comes from, held already"
        );
        assert_eq!(
            fresh.authenticated("sasl", Some(b"x".as_slice())),
            Err(ZkError::AuthFailed),
            "no provider for the scheme"
        );
        assert_eq!(
            fresh.authenticated("digest", None),
            Err(ZkError::AuthFailed),
            "a digest provider fails on a null"
        );
        assert_eq!(fresh.authenticated("ip", None), Ok(fresh.clone()));
        assert_eq!(users(&alice), ["digest: alice", "ip: 127.0.0.1"]);
    }

    fn users(identity: &Identity) -> Vec<String> {
        let info = identity.who_am_i().into_iter();
        info.map(|info| format!("{}: {}", info.scheme, info.user))
            .collect()
    }

    #[test]
    fn identities_come_in_the_order_a_real_server_walks_them() {
        // As a ZooKeeper 3.8 server answered whoami after these were added in this order.
        let mut identity = Identity::default();
        let added = [
            "gina:pw", "frank:pw", "erin:pw", "dave:pw", "carol:pw", "bob:pw",
        ];
        for auth in added.into_iter().chain(["alice:secret"]) {
            identity = identity
                .authenticated("digest", Some(auth.as_bytes()))
                .unwrap();
        }
        let seen = users(&identity);
        let expected = [
            "digest: bob",
            "digest: alice",
            "digest: frank",
            "digest: carol",
            "digest: erin",
            "digest: gina",
            "digest: dave",
            "ip: 127.0.0.1",
        ];
        assert_eq!(seen, expected);
        // An `auth` entry expands in the same order.
        let expanded = identity.fix_up(&acl(&[("auth", "", Perms::READ)])).unwrap();
        let names: Vec<&str> = expanded
            .entries()
            .iter()
            .map(|entry| entry.id.id.split(':').next().unwrap())
            .collect();
        assert_eq!(
            names,
            ["bob", "alice", "frank", "carol", "erin", "gina", "dave"]
        );
    }

    #[test]
    fn a_permission_is_granted_by_any_entry_that_names_the_session_with_that_bit() {
        let fresh = Identity::default();
        let read_only = acl(&[("world", "anyone", Perms::READ)]);
        assert!(fresh.may(&read_only, Perms::READ));
        assert!(!fresh.may(&read_only, Perms::WRITE));
        assert!(fresh.may(&read_only, Perms(Perms::READ.0 | Perms::ADMIN.0)));
        let alices = acl(&[("digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", Perms::ALL)]);
        assert!(!fresh.may(&alices, Perms::READ));
        assert!(alice().may(&alices, Perms::READ));
        let bob = Identity::default()
            .authenticated("digest", Some(b"alice:wrong".as_slice()))
            .unwrap();
        assert!(
            !bob.may(&alices, Perms::READ),
            "another password, another id"
        );
        assert!(
            fresh.may(&Acls::new(Vec::new()), Perms::ADMIN),
            "an empty ACL stops nobody"
        );
    }

    #[test]
    fn the_super_user_passes_every_acl_but_an_auth_entry_is_its_digest_alone() {
        let root = Identity::default()
            .authenticated("digest", Some(SUPER_USER.as_bytes()))
            .unwrap();
        let nobody = acl(&[("world", "anyone", Perms(0))]);
        assert!(root.may(&nobody, Perms::READ));
        assert!(!Identity::default().may(&nobody, Perms::READ));
        let expanded = root.fix_up(&acl(&[("auth", "", Perms::ALL)])).unwrap();
        let digest = acl(&[("digest", super_digest(), Perms::ALL)]);
        assert_eq!(
            expanded, digest,
            "super has no provider: it is not expanded"
        );
        assert!(users(&root).contains(&"super: ".to_owned()));
    }

    #[test]
    fn an_ip_entry_matches_the_addresses_of_its_network() {
        let fresh = Identity::default();
        for (id, granted) in [
            ("127.0.0.1", true),
            ("127.0.0.2", false),
            ("127.0.0.0/8", true),
            ("10.0.0.0/8", false),
            ("0.0.0.0/0", true),
            ("127.0.0.1/33", false),
        ] {
            let entry = acl(&[("ip", id, Perms::READ)]);
            assert_eq!(fresh.may(&entry, Perms::READ), granted, "{id}");
        }
    }

    #[test]
    fn fixing_up_expands_auth_keeps_the_valid_and_refuses_the_rest() {
        let fresh = Identity::default();
        let auth = acl(&[("auth", "", Perms::ALL)]);
        assert_eq!(
            fresh.fix_up(&auth),
            Err(ZkError::InvalidAcl),
            "ip is no authentication"
        );
        assert_eq!(
            alice().fix_up(&auth),
            Ok(acl(&[(
                "digest",
                "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=",
                Perms::ALL
            )]))
        );
        assert_eq!(fresh.fix_up(&Acls::OPEN), Ok(Acls::OPEN));
        assert_eq!(
            fresh.fix_up(&Acls::new(Vec::new())),
            Err(ZkError::InvalidAcl)
        );
        let twice = acl(&[
            ("world", "anyone", Perms::READ),
            ("world", "anyone", Perms::READ),
        ]);
        assert_eq!(
            fresh.fix_up(&twice),
            Ok(acl(&[("world", "anyone", Perms::READ)]))
        );
        for (scheme, id, valid) in [
            ("world", "everyone", false),
            ("digest", "alice:hash", true),
            ("digest", "alice", false),
            ("digest", "alice:", false),
            ("digest", "a:b:c", false),
            ("ip", "127.0.0.1", true),
            ("ip", "10.1.2.0/24", true),
            ("ip", "10.1.2", false),
            ("ip", "256.1.1.1", false),
            ("ip", "1.1.1.1/40", false),
            ("sasl", "bob", false),
        ] {
            let entry = acl(&[(scheme, id, Perms::ALL)]);
            assert_eq!(fresh.fix_up(&entry).is_ok(), valid, "{scheme}:{id}");
        }
    }

    #[test]
    fn a_digest_reads_as_its_user_without_admin() {
        let entries = acl(&[
            ("digest", "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", Perms::ALL),
            ("world", "anyone", Perms::READ),
        ]);
        assert_eq!(
            masked(&entries),
            acl(&[
                ("digest", "alice:x", Perms::ALL),
                ("world", "anyone", Perms::READ)
            ])
        );
        assert_eq!(masked(&Acls::OPEN), Acls::OPEN);
    }
}
