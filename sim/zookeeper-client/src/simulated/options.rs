//! How a node is made: its mode, its ACL and its time to live, taken as zookeeper-client takes
//! them, and checked as it checks them before anything is sent.

use std::fmt;
use std::time::Duration;

use zklab_recipes::client::{CreateMode as SimMode, Op};
use zookeeper_client::{Acls, Error};

use super::conversions::acls_of;

/// A node's kind; [`CreateMode::with_acls`] makes the [`CreateOptions`] a create takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateMode {
    /// Lives until deleted.
    Persistent,
    /// Lives until deleted; the server appends a ten-digit sequence number to its name.
    PersistentSequential,
    /// Deleted when its session ends.
    Ephemeral,
    /// Deleted when its session ends; the server appends a sequence number to its name.
    EphemeralSequential,
    /// Deleted by the server once it has had children and has none left.
    Container,
}

impl CreateMode {
    /// Options for a node of this mode with `acls`.
    pub const fn with_acls(self, acls: Acls<'_>) -> CreateOptions<'_> {
        CreateOptions {
            mode: self,
            acls,
            ttl: None,
        }
    }

    fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential | CreateMode::EphemeralSequential
        )
    }
}

/// Options of a create: a mode, an ACL, and for a persistent node a time to live.
#[derive(Clone, Debug)]
pub struct CreateOptions<'a> {
    mode: CreateMode,
    acls: Acls<'a>,
    ttl: Option<Duration>,
}

impl CreateOptions<'_> {
    /// The node is deleted once it has had no children and no change for `ttl`.
    pub const fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The create of a node at `path` holding `data` with these options (for a directory of
    /// `mkdir`: `directory`), or the error the real client gives for them before it sends
    /// anything.
    pub(super) fn create_op(&self, path: &str, data: &[u8], directory: bool) -> Result<Op, Error> {
        self.validate(directory)?;
        // `validate` let a TTL through only for a persistent mode, and within the server's range.
        let ttl_ms = self.ttl.map(|ttl| ttl.as_millis() as i64);
        let mode = match (self.mode, ttl_ms) {
            (CreateMode::Persistent, Some(ttl_ms)) => SimMode::PersistentWithTtl { ttl_ms },
            (CreateMode::PersistentSequential, Some(ttl_ms)) => {
                SimMode::PersistentSequentialWithTtl { ttl_ms }
            }
            (CreateMode::Persistent, _) => SimMode::Persistent,
            (CreateMode::PersistentSequential, _) => SimMode::PersistentSequential,
            (CreateMode::Ephemeral, _) => SimMode::Ephemeral,
            (CreateMode::EphemeralSequential, _) => SimMode::EphemeralSequential,
            (CreateMode::Container, _) => SimMode::Container,
        };
        Ok(Op::Create {
            path: path.to_owned(),
            data: data.to_vec(),
            mode,
            acl: acls_of(&self.acls),
        })
    }

    /// The real client's own checks of these options (for a directory of `mkdir`:
    /// `directory`), with its errors.
    pub(super) fn validate(&self, directory: bool) -> Result<(), Error> {
        if let Some(ttl) = self.ttl {
            if !matches!(
                self.mode,
                CreateMode::Persistent | CreateMode::PersistentSequential
            ) {
                return Err(Error::BadArguments(
                    &"ttl can only be specified with persistent node",
                ));
            } else if ttl.is_zero() {
                return Err(Error::BadArguments(&"ttl is zero"));
            } else if ttl.as_millis() > SimMode::MAX_TTL_MS as u128 {
                return Err(Error::BadArguments(&"ttl cannot larger than 1099511627775"));
            }
        }
        if self.acls.is_empty() {
            return Err(Error::InvalidAcl);
        }
        if directory {
            if matches!(
                self.mode,
                CreateMode::Ephemeral | CreateMode::EphemeralSequential
            ) {
                return Err(Error::BadArguments(&"directory node must not be ephemeral"));
            } else if self.mode.is_sequential() {
                return Err(Error::BadArguments(
                    &"directory node must not be sequential",
                ));
            }
        }
        Ok(())
    }
}

/// What the simulated ZooKeeper does not have yet, said as an error rather than ignored.
pub(super) fn not_yet(what: &str) -> Error {
    Error::UnexpectedError(format!("zklab's simulated ZooKeeper has no {what} yet"))
}

/// The sequence number the server gave a sequential node (`-1` for another node).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CreateSequence(pub(super) i64);

impl CreateSequence {
    /// The number.
    pub fn into_i64(self) -> i64 {
        self.0
    }

    /// The number the server appended to a node asked for at a path `asked` bytes long, which
    /// it made at `made`: `-1` when it appended none.
    pub(super) fn appended(made: &str, asked: usize) -> Result<Self, Error> {
        match made.get(asked..) {
            None | Some("") => Ok(CreateSequence(-1)),
            Some(digits) => digits.parse().map(CreateSequence).map_err(|_| {
                Error::UnexpectedError(format!(
                    "a sequential node without a sequence number: {made}"
                ))
            }),
        }
    }
}

/// Ten digits, zero-padded, as the server writes it into the node's name.
impl fmt::Display for CreateSequence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:010}", self.0)
    }
}
