//! Jute's primitives: int and long big-endian, a boolean as one byte, a buffer or a string as its
//! length (-1 for null) then its bytes, a vector as its count then its items; and the records
//! every op shares (a stat, an ACL list).

use std::fmt;

use zklab_recipes::acl::{Acl, Acls, Id, Perms};
use zklab_recipes::client::Stat;

/// The longest reply zklab's client reads. A server writes replies past the longest request it
/// reads ([`MAX_REQUEST_LEN`](crate::packet::MAX_REQUEST_LEN): a
/// node's data near the limit, with its stat; a long listing), and ZooKeeper's Java client
/// refuses those; zklab reads them, up to this bound.
pub const MAX_REPLY_LEN: usize = 16 << 20;

/// Why bytes are not the record they should be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// The bytes end inside a record.
    Truncated,
    /// A length or count that is negative (and not a null's -1) or longer than what is left.
    BadLength(i64),
    /// A frame's length prefix beyond what the reader takes, or negative.
    FrameLength(i64),
    /// A string that is not UTF-8.
    NotUtf8,
    /// A null where the record needs a value.
    Null,
    /// A number that names nothing zklab knows in that place: an op code, a create flag, an
    /// error code, an event type.
    Unknown {
        /// What the number was to name.
        what: &'static str,
        /// The number.
        value: i64,
    },
    /// Bytes left over after the record.
    Trailing(usize),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::Truncated => f.write_str("the bytes end inside a record"),
            Malformed::BadLength(len) => write!(f, "a length of {len} where none fits"),
            Malformed::FrameLength(len) => write!(f, "a frame of {len} bytes, too long"),
            Malformed::NotUtf8 => f.write_str("a string that is not UTF-8"),
            Malformed::Null => f.write_str("a null where a value must be"),
            Malformed::Unknown { what, value } => write!(f, "{value} is no {what}"),
            Malformed::Trailing(left) => write!(f, "{left} bytes after the record"),
        }
    }
}

impl std::error::Error for Malformed {}

/// The length a frame's 4-byte prefix announces, refused beyond `max` before any of the frame
/// is read (a server's `max` is [`MAX_REQUEST_LEN`](crate::packet::MAX_REQUEST_LEN)).
pub fn frame_len(prefix: [u8; 4], max: usize) -> Result<usize, Malformed> {
    let len = i32::from_be_bytes(prefix);
    match usize::try_from(len) {
        Ok(len) if len <= max => Ok(len),
        _ => Err(Malformed::FrameLength(len.into())),
    }
}

/// Builds one record.
#[derive(Debug, Default)]
pub struct JuteWriter {
    bytes: Vec<u8>,
}

impl JuteWriter {
    /// An empty record.
    pub fn new() -> Self {
        JuteWriter::default()
    }

    /// Appends an int.
    pub fn int(&mut self, value: i32) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends a long.
    pub fn long(&mut self, value: i64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_be_bytes());
        self
    }

    /// Appends a boolean.
    pub fn bool(&mut self, value: bool) -> &mut Self {
        self.bytes.push(u8::from(value));
        self
    }

    /// Appends a buffer, or a null one.
    pub fn buffer(&mut self, value: Option<&[u8]>) -> &mut Self {
        match value {
            Some(bytes) => {
                self.int(wire_len(bytes.len()));
                self.bytes.extend_from_slice(bytes);
            }
            None => {
                self.int(-1);
            }
        }
        self
    }

    /// Appends a string.
    pub fn string(&mut self, value: &str) -> &mut Self {
        self.buffer(Some(value.as_bytes()))
    }

    /// Appends a vector of strings.
    pub fn strings<S: AsRef<str>>(&mut self, values: &[S]) -> &mut Self {
        self.int(wire_len(values.len()));
        for value in values {
            self.string(value.as_ref());
        }
        self
    }

    /// Appends a stat, in `zookeeper.jute`'s field order.
    pub fn stat(&mut self, stat: &Stat) -> &mut Self {
        self.long(stat.czxid).long(stat.mzxid);
        self.long(stat.ctime).long(stat.mtime);
        self.int(stat.version).int(stat.cversion).int(stat.aversion);
        self.long(stat.ephemeral_owner);
        self.int(stat.data_length).int(stat.num_children);
        self.long(stat.pzxid)
    }

    /// Appends an ACL list: each entry's permissions, then its scheme and id.
    pub fn acls(&mut self, acls: &Acls) -> &mut Self {
        self.int(wire_len(acls.entries().len()));
        for acl in acls.entries() {
            self.int(acl.perms.0)
                .string(&acl.id.scheme)
                .string(&acl.id.id);
        }
        self
    }

    /// The record's bytes.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }

    /// The record's bytes behind their length prefix: one frame.
    pub fn framed(&mut self) -> Vec<u8> {
        frame(&self.finish())
    }
}

/// A record's bytes behind their length prefix.
pub fn frame(record: &[u8]) -> Vec<u8> {
    let mut framed = Vec::with_capacity(4 + record.len());
    framed.extend_from_slice(&wire_len(record.len()).to_be_bytes());
    framed.extend_from_slice(record);
    framed
}

/// A length as jute writes it. Nothing zklab writes comes near 2 GiB; a longer one is cut to
/// `i32::MAX`, which any reader refuses.
fn wire_len(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

/// Reads one record from its bytes.
#[derive(Debug)]
pub struct JuteReader<'a> {
    bytes: &'a [u8],
}

impl<'a> JuteReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        JuteReader { bytes }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], Malformed> {
        if len > self.bytes.len() {
            return Err(Malformed::Truncated);
        }
        let (taken, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Malformed> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    /// Reads an int.
    pub fn int(&mut self) -> Result<i32, Malformed> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// Reads a long.
    pub fn long(&mut self) -> Result<i64, Malformed> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Reads a boolean: any byte but 0 is true, as Java's `DataInput.readBoolean` reads it.
    pub fn bool(&mut self) -> Result<bool, Malformed> {
        Ok(self.array::<1>()?[0] != 0)
    }

    /// A length or count, `None` for a null's -1, refused when more than `left` could hold
    /// (each item taking at least `item_len` bytes).
    fn len(&mut self, item_len: usize) -> Result<Option<usize>, Malformed> {
        let len = self.int()?;
        if len == -1 {
            return Ok(None);
        }
        match usize::try_from(len) {
            Ok(n) if n.saturating_mul(item_len) <= self.bytes.len() => Ok(Some(n)),
            _ => Err(Malformed::BadLength(len.into())),
        }
    }

    /// Reads a buffer; `None` for a null one.
    pub fn buffer(&mut self) -> Result<Option<Vec<u8>>, Malformed> {
        match self.len(1)? {
            Some(len) => Ok(Some(self.take(len)?.to_vec())),
            None => Ok(None),
        }
    }

    /// Reads a string that may be null.
    pub fn optional_string(&mut self) -> Result<Option<String>, Malformed> {
        match self.buffer()? {
            Some(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| Malformed::NotUtf8),
            None => Ok(None),
        }
    }

    /// Reads a string; a null one is refused.
    pub fn string(&mut self) -> Result<String, Malformed> {
        self.optional_string()?.ok_or(Malformed::Null)
    }

    /// Reads a vector of strings; a null vector is an empty one.
    pub fn strings(&mut self) -> Result<Vec<String>, Malformed> {
        let count = self.len(4)?.unwrap_or(0);
        (0..count).map(|_| self.string()).collect()
    }

    /// Reads a stat.
    pub fn stat(&mut self) -> Result<Stat, Malformed> {
        let (czxid, mzxid) = (self.long()?, self.long()?);
        let (ctime, mtime) = (self.long()?, self.long()?);
        let (version, cversion, aversion) = (self.int()?, self.int()?, self.int()?);
        let ephemeral_owner = self.long()?;
        let (data_length, num_children) = (self.int()?, self.int()?);
        let pzxid = self.long()?;
        Ok(Stat {
            czxid,
            mzxid,
            pzxid,
            ctime,
            mtime,
            version,
            cversion,
            aversion,
            ephemeral_owner,
            data_length,
            num_children,
        })
    }

    /// Reads an ACL list; a null list is an empty one.
    pub fn acls(&mut self) -> Result<Acls, Malformed> {
        let count = self.len(12)?.unwrap_or(0);
        let entries = (0..count).map(|_| {
            let perms = Perms(self.int()?);
            let (scheme, id) = (self.string()?, self.string()?);
            Ok(Acl::new(perms, Id::new(scheme, id)))
        });
        Ok(Acls::new(entries.collect::<Result<_, _>>()?))
    }

    /// Whether the record has been read to its end.
    pub fn is_done(&self) -> bool {
        self.bytes.is_empty()
    }

    /// What is left, unread.
    pub fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    /// Refuses bytes left over after the record.
    pub fn done(&self) -> Result<(), Malformed> {
        match self.bytes.len() {
            0 => Ok(()),
            left => Err(Malformed::Trailing(left)),
        }
    }
}
