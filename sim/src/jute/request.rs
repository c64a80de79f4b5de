//! What a client sends once connected: a `RequestHeader` (xid, type), then the type's record.
//!
//! An [`Op`] goes as the request ZooKeeper's Java client makes of it when asked for a stat: a
//! create as `create2` (or `createContainer`, `createTTL`), a listing as `getChildren2`; each
//! op of a multi as the Java client's `Op` does (a create as `create`, `createContainer` or
//! `createTTL`). Reading, any of them is taken.

use zklab_recipes::client::{Op, Zxid};

use super::archive::{JuteReader, JuteWriter, Malformed};
use super::codes::{self, op_code, xid};
use crate::watch::SessionWatches;

/// One request after the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// An op of the pure server (addAuth among them, on its own xid).
    Op(Op),
    /// A ping: the session is alive.
    Ping,
    /// The watches of a client that connected again, to be set again (`setWatches2`).
    SetWatches(SetWatches),
    /// The session ends.
    CloseSession,
}

/// The watches a reconnecting client had, and the last zxid it saw: a watch whose node changed
/// after that zxid fires at once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetWatches {
    /// The last zxid the client saw.
    pub relative_zxid: Zxid,
    /// The watches, by kind.
    pub watches: SessionWatches,
}

/// The header before every request's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestHeader {
    /// The client's number for the request; a reply carries it back.
    pub xid: i32,
    /// The request's type ([`op_code`]).
    pub code: i32,
}

/// An op no request of ZooKeeper's can carry: a read or a nested multi inside a multi, a write
/// inside a multiRead. A client refuses it unsent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsendable(pub Op);

impl Request {
    /// The xid this request must go with, for those that have one of their own.
    pub fn fixed_xid(&self) -> Option<i32> {
        match self {
            Request::Op(Op::AddAuth { .. }) => Some(xid::AUTH),
            Request::Ping => Some(xid::PING),
            Request::SetWatches(_) => Some(xid::SET_WATCHES),
            Request::Op(_) | Request::CloseSession => None,
        }
    }

    /// The request's header and bytes (header and record, without the frame's length prefix),
    /// sent as `xid` unless the request has a [fixed](Request::fixed_xid) one.
    pub fn encode(&self, xid: i32) -> Result<(RequestHeader, Vec<u8>), Unsendable> {
        let xid = self.fixed_xid().unwrap_or(xid);
        let mut writer = JuteWriter::new();
        let code = match self {
            Request::Op(op) => op_request_code(op),
            Request::Ping => op_code::PING,
            Request::SetWatches(watches) if no_persistent(watches) => op_code::SET_WATCHES,
            Request::SetWatches(_) => op_code::SET_WATCHES2,
            Request::CloseSession => op_code::CLOSE_SESSION,
        };
        writer.int(xid).int(code);
        match self {
            Request::Op(op) => write_op(&mut writer, op)?,
            Request::Ping | Request::CloseSession => {}
            Request::SetWatches(set) => {
                let watches = &set.watches;
                writer.long(set.relative_zxid).strings(&watches.data);
                writer.strings(&watches.exist).strings(&watches.child);
                if code == op_code::SET_WATCHES2 {
                    writer.strings(&watches.persistent);
                    writer.strings(&watches.recursive);
                }
            }
        }
        Ok((RequestHeader { xid, code }, writer.finish()))
    }

    /// Reads a request (header and record).
    pub fn decode(bytes: &[u8]) -> Result<(RequestHeader, Request), Malformed> {
        Request::decode_noting_null_data(bytes).map(|(header, request, _)| (header, request))
    }

    /// Reads a request, and the paths its creates and setDatas (inside a multi too) gave null
    /// data, which an [`Op`] holds as empty: ZooKeeper keeps the difference.
    pub fn decode_noting_null_data(
        bytes: &[u8],
    ) -> Result<(RequestHeader, Request, Vec<String>), Malformed> {
        let mut nulls = Vec::new();
        let mut reader = JuteReader::new(bytes);
        let header = RequestHeader {
            xid: reader.int()?,
            code: reader.int()?,
        };
        let request = match header.code {
            op_code::PING => Request::Ping,
            op_code::CLOSE_SESSION => Request::CloseSession,
            op_code::SET_WATCHES | op_code::SET_WATCHES2 => {
                let relative_zxid = reader.long()?;
                let (data, exist, child) =
                    (reader.strings()?, reader.strings()?, reader.strings()?);
                let (persistent, recursive) = match header.code {
                    op_code::SET_WATCHES2 => (reader.strings()?, reader.strings()?),
                    _ => Default::default(),
                };
                let watches = SessionWatches {
                    data,
                    exist,
                    child,
                    persistent,
                    recursive,
                };
                Request::SetWatches(SetWatches {
                    relative_zxid,
                    watches,
                })
            }
            code => Request::Op(read_op(&mut reader, code, &mut nulls)?),
        };
        reader.done()?;
        Ok((header, request, nulls))
    }
}

fn no_persistent(set: &SetWatches) -> bool {
    set.watches.persistent.is_empty() && set.watches.recursive.is_empty()
}

/// The type an op goes as on its own.
fn op_request_code(op: &Op) -> i32 {
    match op {
        Op::Create { mode, .. } if mode.ttl_ms().is_some() => op_code::CREATE_TTL,
        Op::Create { mode, .. } if mode.is_reaped() => op_code::CREATE_CONTAINER,
        Op::Create { .. } => op_code::CREATE2,
        Op::GetChildren { .. } => op_code::GET_CHILDREN2,
        op => in_multi_code(op),
    }
}

/// The type an op goes as inside a multi or a multiRead (and, for the others, on its own).
fn in_multi_code(op: &Op) -> i32 {
    match op {
        Op::Create { mode, .. } if mode.ttl_ms().is_some() => op_code::CREATE_TTL,
        Op::Create { mode, .. } if mode.is_reaped() => op_code::CREATE_CONTAINER,
        Op::Create { .. } => op_code::CREATE,
        Op::Delete { .. } => op_code::DELETE,
        Op::Exists { .. } => op_code::EXISTS,
        Op::GetData { .. } => op_code::GET_DATA,
        Op::SetData { .. } => op_code::SET_DATA,
        Op::GetAcl { .. } => op_code::GET_ACL,
        Op::SetAcl { .. } => op_code::SET_ACL,
        Op::GetChildren { .. } => op_code::GET_CHILDREN,
        Op::Sync { .. } => op_code::SYNC,
        Op::Check { .. } => op_code::CHECK,
        Op::Multi(_) => op_code::MULTI,
        Op::MultiRead(_) => op_code::MULTI_READ,
        Op::CountDescendants { .. } => op_code::GET_ALL_CHILDREN_NUMBER,
        Op::GetEphemerals { .. } => op_code::GET_EPHEMERALS,
        Op::AddWatch { .. } => op_code::ADD_WATCH,
        Op::RemoveWatches { .. } => op_code::REMOVE_WATCHES,
        Op::CheckWatches { .. } => op_code::CHECK_WATCHES,
        Op::AddAuth { .. } => op_code::AUTH,
        Op::WhoAmI => op_code::WHO_AM_I,
    }
}

/// Whether an op may stand inside a multi (`write`) or a multiRead.
fn fits_in(op: &Op, write: bool) -> bool {
    match write {
        true => matches!(
            op,
            Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Check { .. }
        ),
        false => matches!(
            op,
            Op::GetData { watch: false, .. } | Op::GetChildren { watch: false, .. }
        ),
    }
}

/// Whether an op of type `code` may stand inside a multi (`write`) or a multiRead.
fn may_hold(code: i32, write: bool) -> bool {
    match write {
        true => matches!(
            code,
            op_code::CREATE
                | op_code::CREATE2
                | op_code::CREATE_CONTAINER
                | op_code::CREATE_TTL
                | op_code::DELETE
                | op_code::SET_DATA
                | op_code::CHECK
        ),
        false => matches!(code, op_code::GET_DATA | op_code::GET_CHILDREN),
    }
}

/// An op's record.
fn write_op(writer: &mut JuteWriter, op: &Op) -> Result<(), Unsendable> {
    match op {
        Op::Create {
            path,
            data,
            mode,
            acl,
        } => {
            writer.string(path).buffer(Some(data)).acls(acl);
            writer.int(codes::create_flags(*mode));
            if let Some(ttl_ms) = mode.ttl_ms() {
                writer.long(ttl_ms);
            }
        }
        Op::Delete { path, version } | Op::Check { path, version } => {
            writer.string(path).int(*version);
        }
        Op::Exists { path, watch }
        | Op::GetData { path, watch }
        | Op::GetChildren { path, watch } => {
            writer.string(path).bool(*watch);
        }
        Op::SetData {
            path,
            data,
            version,
        } => {
            writer.string(path).buffer(Some(data)).int(*version);
        }
        Op::Sync { path } | Op::CountDescendants { path } | Op::GetAcl { path } => {
            writer.string(path);
        }
        Op::GetEphemerals { prefix } => {
            writer.string(prefix);
        }
        Op::AddWatch { path, mode } => {
            writer.string(path).int(mode.code());
        }
        Op::RemoveWatches { path, kind } | Op::CheckWatches { path, kind } => {
            writer.string(path).int(kind.code());
        }
        Op::SetAcl { path, acl, version } => {
            writer.string(path).acls(acl).int(*version);
        }
        Op::AddAuth { scheme, auth } => {
            writer.int(0).string(scheme).buffer(auth.as_deref());
        }
        Op::WhoAmI => {}
        Op::Multi(ops) | Op::MultiRead(ops) => {
            let write = matches!(op, Op::Multi(_));
            for inner in ops {
                if !fits_in(inner, write) {
                    return Err(Unsendable(inner.clone()));
                }
                writer.int(in_multi_code(inner)).bool(false).int(-1);
                write_op(writer, inner)?;
            }
            writer.int(-1).bool(true).int(-1);
        }
    }
    Ok(())
}

/// Reads the record of an op of type `code`; the paths it gives null data go to `nulls`.
fn read_op(
    reader: &mut JuteReader<'_>,
    code: i32,
    nulls: &mut Vec<String>,
) -> Result<Op, Malformed> {
    Ok(match code {
        op_code::CREATE | op_code::CREATE2 | op_code::CREATE_CONTAINER | op_code::CREATE_TTL => {
            let (path, data, acl) = (reader.string()?, reader.buffer()?, reader.acls()?);
            if data.is_none() {
                nulls.push(path.clone());
            }
            let flags = reader.int()?;
            let ttl_ms = match code {
                op_code::CREATE_TTL => reader.long()?,
                _ => 0,
            };
            Op::Create {
                path,
                data: data.unwrap_or_default(),
                mode: codes::create_mode(flags, ttl_ms)?,
                acl,
            }
        }
        op_code::DELETE => Op::Delete {
            path: reader.string()?,
            version: reader.int()?,
        },
        op_code::CHECK => Op::Check {
            path: reader.string()?,
            version: reader.int()?,
        },
        op_code::EXISTS => Op::Exists {
            path: reader.string()?,
            watch: reader.bool()?,
        },
        op_code::GET_DATA => Op::GetData {
            path: reader.string()?,
            watch: reader.bool()?,
        },
        op_code::GET_CHILDREN | op_code::GET_CHILDREN2 => Op::GetChildren {
            path: reader.string()?,
            watch: reader.bool()?,
        },
        op_code::SET_DATA => {
            let (path, data) = (reader.string()?, reader.buffer()?);
            if data.is_none() {
                nulls.push(path.clone());
            }
            Op::SetData {
                path,
                data: data.unwrap_or_default(),
                version: reader.int()?,
            }
        }
        op_code::SYNC => Op::Sync {
            path: reader.string()?,
        },
        op_code::GET_ALL_CHILDREN_NUMBER => Op::CountDescendants {
            path: reader.string()?,
        },
        op_code::GET_ACL => Op::GetAcl {
            path: reader.string()?,
        },
        op_code::GET_EPHEMERALS => Op::GetEphemerals {
            prefix: reader.string()?,
        },
        op_code::ADD_WATCH => Op::AddWatch {
            path: reader.string()?,
            mode: codes::add_watch_mode(reader.int()?)?,
        },
        op_code::REMOVE_WATCHES => Op::RemoveWatches {
            path: reader.string()?,
            kind: codes::watcher_kind(reader.int()?)?,
        },
        op_code::CHECK_WATCHES => Op::CheckWatches {
            path: reader.string()?,
            kind: codes::watcher_kind(reader.int()?)?,
        },
        op_code::SET_ACL => Op::SetAcl {
            path: reader.string()?,
            acl: reader.acls()?,
            version: reader.int()?,
        },
        op_code::AUTH => {
            let _type = reader.int()?;
            Op::AddAuth {
                scheme: reader.string()?,
                auth: reader.buffer()?,
            }
        }
        op_code::WHO_AM_I => Op::WhoAmI,
        op_code::MULTI | op_code::MULTI_READ => {
            let write = code == op_code::MULTI;
            let mut ops = Vec::new();
            loop {
                let (inner, done, _err) = (reader.int()?, reader.bool()?, reader.int()?);
                if done {
                    break;
                }
                // Checked before reading, so that no nesting of multis runs the stack out.
                if !may_hold(inner, write) {
                    return Err(codes::unknown("op inside a multi", inner));
                }
                let op = read_op(reader, inner, nulls)?;
                if !fits_in(&op, write) {
                    return Err(codes::unknown("op inside a multi", inner));
                }
                ops.push(op);
            }
            match write {
                true => Op::Multi(ops),
                false => Op::MultiRead(ops),
            }
        }
        value => return Err(codes::unknown("request type", value)),
    })
}
