//! Access control lists, as ZooKeeper keeps them on every znode: who (an [`Id`], a scheme and
//! an identity in it) may do what ([`Perms`]).
//!
//! A node created without a word on it gets [`Acls::OPEN`] (`world:anyone:cdrwa`, ZooKeeper's
//! `OPEN_ACL_UNSAFE`), which every recipe uses; it costs nothing to carry, so the many nodes and
//! creates of a model state stay as cheap as they were before ACLs existed.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The permissions an ACL entry grants, as ZooKeeper's bits (`ZooDefs.Perms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Perms(pub i32);

impl Perms {
    /// Read a node's data and list its children.
    pub const READ: Perms = Perms(1);
    /// Set a node's data.
    pub const WRITE: Perms = Perms(2);
    /// Create a child.
    pub const CREATE: Perms = Perms(4);
    /// Delete a child.
    pub const DELETE: Perms = Perms(8);
    /// Set the node's ACL.
    pub const ADMIN: Perms = Perms(16);
    /// Every permission.
    pub const ALL: Perms = Perms(31);

    /// Whether these grant any of `wanted`'s bits (ZooKeeper's check: one bit is enough).
    pub fn grants_any(self, wanted: Perms) -> bool {
        self.0 & wanted.0 != 0
    }

    /// The permission zkCli's letter names (one of `cdrwa`).
    pub fn of_letter(letter: char) -> Option<Perms> {
        match letter {
            'r' => Some(Perms::READ),
            'w' => Some(Perms::WRITE),
            'c' => Some(Perms::CREATE),
            'd' => Some(Perms::DELETE),
            'a' => Some(Perms::ADMIN),
            _ => None,
        }
    }

    /// The permissions zkCli's letters name (`cdrwa`, in any order); `None` for any other letter.
    pub fn parse(letters: &str) -> Option<Perms> {
        letters.chars().try_fold(Perms(0), |perms, letter| {
            Perms::of_letter(letter).map(|bit| Perms(perms.0 | bit.0))
        })
    }
}

impl fmt::Display for Perms {
    /// As zkCli prints them: `cdrwa`, each letter only if granted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let letters = [
            (Perms::CREATE, 'c'),
            (Perms::DELETE, 'd'),
            (Perms::READ, 'r'),
            (Perms::WRITE, 'w'),
            (Perms::ADMIN, 'a'),
        ];
        for (perm, letter) in letters {
            if self.grants_any(perm) {
                write!(f, "{letter}")?;
            }
        }
        Ok(())
    }
}

/// An identity in an authentication scheme: `world:anyone`, `ip:127.0.0.1`,
/// `digest:alice:<base64 of sha1>`, or `auth:` (whoever the creating session authenticated as).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id {
    /// The scheme: `world`, `auth`, `digest`, `ip` (or one the server does not know).
    pub scheme: Cow<'static, str>,
    /// The identity in the scheme.
    pub id: Cow<'static, str>,
}

impl Id {
    /// Everyone (`world:anyone`).
    pub const ANYONE: Id = Id {
        scheme: Cow::Borrowed("world"),
        id: Cow::Borrowed("anyone"),
    };

    /// An identity in a scheme.
    pub fn new(scheme: impl Into<String>, id: impl Into<String>) -> Id {
        Id {
            scheme: Cow::Owned(scheme.into()),
            id: Cow::Owned(id.into()),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.scheme, self.id)
    }
}

/// One entry of an ACL: what an identity may do.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Acl {
    /// What it may do.
    pub perms: Perms,
    /// Who.
    pub id: Id,
}

impl Acl {
    /// An entry granting `perms` to `id`.
    pub fn new(perms: Perms, id: Id) -> Acl {
        Acl { perms, id }
    }
}

impl fmt::Display for Acl {
    /// As a create's or setAcl's argument: `scheme:id:perms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.id, self.perms)
    }
}

/// The open ACL's one entry.
static OPEN: [Acl; 1] = [Acl {
    perms: Perms::ALL,
    id: Id::ANYONE,
}];

/// A list of ACL entries, as a create or setAcl sends it and a node keeps it. The open ACL
/// (`world:anyone:cdrwa`) is held without an allocation, and always so, so two lists of the same
/// entries are equal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Acls(Option<Arc<[Acl]>>);

impl Acls {
    /// `world:anyone:cdrwa`: anyone may do anything (ZooKeeper's `OPEN_ACL_UNSAFE`).
    pub const OPEN: Acls = Acls(None);

    /// A list of entries, in order (an empty one, which a server refuses, included).
    pub fn new(entries: Vec<Acl>) -> Acls {
        if entries == OPEN {
            Acls::OPEN
        } else {
            Acls(Some(entries.into()))
        }
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Acl] {
        self.0.as_deref().unwrap_or(&OPEN)
    }

    /// Whether this is the open ACL.
    pub fn is_open(&self) -> bool {
        self.0.is_none()
    }
}

impl fmt::Display for Acls {
    /// As zklab writes them in a trace: `scheme:id:perms` entries, comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, acl) in self.entries().iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{acl}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_acl_is_one_value_however_it_is_made() {
        let spelled = Acls::new(vec![Acl::new(Perms::ALL, Id::new("world", "anyone"))]);
        assert_eq!(spelled, Acls::OPEN);
        assert!(spelled.is_open());
        assert_eq!(Acls::OPEN.entries(), &OPEN);
        let read = Acls::new(vec![Acl::new(Perms::READ, Id::ANYONE)]);
        assert!(!read.is_open());
        assert_eq!(read.to_string(), "world:anyone:r");
    }

    #[test]
    fn perms_read_and_print_in_zkclis_letters() {
        assert_eq!(Perms::parse("cdrwa"), Some(Perms::ALL));
        assert_eq!(Perms::parse("ar"), Some(Perms(17)));
        assert_eq!(Perms::parse("rx"), None);
        assert_eq!(Perms::ALL.to_string(), "cdrwa");
        assert_eq!(Perms(17).to_string(), "ra");
        assert!(Perms(17).grants_any(Perms(Perms::READ.0 | Perms::WRITE.0)));
        assert!(!Perms::READ.grants_any(Perms::WRITE));
    }
}
