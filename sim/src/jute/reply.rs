//! What a server sends: a `ReplyHeader` (xid, zxid, error code), then, when the code is 0, the
//! record of the request's result; and notifications, on xid -1, a `WatcherEvent` each.
//!
//! An [`OpReply`] is ZooKeeper's reply as zklab's clients report it: `exists` of a missing node
//! is a NoNode code on the wire and `Exists(None)` here; a multi whose op failed is a code 0
//! carrying every op's result.

use zklab_recipes::client::{ClientInfo, Op, OpReply, OpResult, Stat, WatchedEvent, ZkError, Zxid};

use super::archive::{JuteReader, JuteWriter, Malformed};
use super::codes::{self, op_code, xid, SYNC_CONNECTED_STATE};
use super::request::{Request, RequestHeader};

/// The header before every reply and notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyHeader {
    /// The request's xid, or a [special](super::codes::xid) one.
    pub xid: i32,
    /// The last zxid the server had applied when it replied; -1 in a notification.
    pub zxid: Zxid,
    /// 0, or the error code.
    pub err: i32,
}

impl ReplyHeader {
    /// Reads the header, and what follows it.
    pub fn decode(bytes: &[u8]) -> Result<(ReplyHeader, &[u8]), Malformed> {
        let mut reader = JuteReader::new(bytes);
        let header = ReplyHeader {
            xid: reader.int()?,
            zxid: reader.long()?,
            err: reader.int()?,
        };
        Ok((header, reader.rest()))
    }

    /// The header alone: the whole reply of a ping, a setWatches, an auth or a close.
    pub fn encode(&self) -> Vec<u8> {
        self.writer().finish()
    }

    fn writer(&self) -> JuteWriter {
        let mut writer = JuteWriter::new();
        writer.int(self.xid).long(self.zxid).int(self.err);
        writer
    }
}

/// A notification's bytes (header and event, without the frame's length prefix).
pub fn encode_notification(event: &WatchedEvent) -> Vec<u8> {
    let header = ReplyHeader {
        xid: xid::NOTIFICATION,
        zxid: -1,
        err: 0,
    };
    let mut writer = header.writer();
    writer.int(codes::event_type_code(event.event_type));
    writer.int(SYNC_CONNECTED_STATE).string(&event.path);
    writer.finish()
}

/// Reads a notification's event, after its header. A server sends only node events.
pub fn decode_notification(body: &[u8]) -> Result<WatchedEvent, Malformed> {
    let mut reader = JuteReader::new(body);
    let event_type = codes::event_type(reader.int()?)?;
    let _state = reader.int()?;
    let path = reader.string()?;
    reader.done()?;
    Ok(WatchedEvent { event_type, path })
}

/// The reply to an op sent as `sent` (header and result record, without the frame's length
/// prefix), the server's last zxid being `zxid`.
pub fn encode_reply(sent: RequestHeader, zxid: Zxid, op: &Op, reply: &OpReply) -> Vec<u8> {
    encode_reply_nulling(sent, zxid, op, reply, &|_| false)
}

/// [`encode_reply`], a node's data sent as null where `null` says so of its stat: ZooKeeper
/// keeps a node created or set with null data as null, and sends it back as null (zkCli prints
/// `null`), which bytes alone cannot say.
pub fn encode_reply_nulling(
    sent: RequestHeader,
    zxid: Zxid,
    op: &Op,
    reply: &OpReply,
    null: &dyn Fn(&Stat) -> bool,
) -> Vec<u8> {
    let err = match (op, reply) {
        (Op::Exists { .. }, Ok(OpResult::Exists(None))) => ZkError::NoNode.code(),
        (_, Ok(_)) => 0,
        (_, Err(error)) => error.code(),
    };
    let header = ReplyHeader {
        xid: sent.xid,
        zxid,
        err,
    };
    let mut writer = header.writer();
    if let (0, Ok(result)) = (err, reply) {
        write_result(&mut writer, sent.code, op, result, null);
    }
    writer.finish()
}

/// The result of an op sent as `sent`, from its reply's header and what follows it.
pub fn decode_reply(
    sent: RequestHeader,
    request: &Request,
    header: &ReplyHeader,
    body: &[u8],
) -> Result<OpReply, Malformed> {
    let Request::Op(op) = request else {
        return match header.err {
            0 => Ok(Ok(OpResult::Synced)),
            code => Ok(Err(codes::error(code)?)),
        };
    };
    match (op, header.err) {
        (Op::Exists { .. }, code) if code == ZkError::NoNode.code() => {
            return Ok(Ok(OpResult::Exists(None)))
        }
        (_, 0) => {}
        // What a server sends after a nonzero code is not the result: clients skip it.
        (_, code) => return Ok(Err(codes::error(code)?)),
    }
    let mut reader = JuteReader::new(body);
    let result = read_result(&mut reader, sent.code, op)?;
    // A lone check's reply carries a stat that says nothing the check did not.
    if sent.code != op_code::CHECK {
        reader.done()?;
    }
    Ok(Ok(result))
}

/// A successful result's record.
fn write_result(
    writer: &mut JuteWriter,
    code: i32,
    op: &Op,
    result: &OpResult,
    null: &dyn Fn(&Stat) -> bool,
) {
    match result {
        OpResult::Created { path, stat } => {
            writer.string(path);
            if code != op_code::CREATE {
                writer.stat(stat);
            }
        }
        OpResult::Exists(Some(stat)) | OpResult::SetData(stat) | OpResult::AclSet(stat) => {
            writer.stat(stat);
        }
        OpResult::Data { data, stat } => {
            let data = (!data.is_empty() || !null(stat)).then_some(&data[..]);
            writer.buffer(data).stat(stat);
        }
        OpResult::Children { children, stat } => {
            writer.strings(children);
            if code == op_code::GET_CHILDREN2 {
                writer.stat(stat);
            }
        }
        OpResult::Listed(children) | OpResult::Ephemerals(children) => {
            writer.strings(children);
        }
        OpResult::Synced => {
            writer.string(op.path());
        }
        OpResult::Counted(count) => {
            writer.int(*count);
        }
        // addWatch's reply is an ErrorResponse of 0.
        OpResult::WatchAdded => {
            writer.int(0);
        }
        OpResult::Acl { acl, stat } => {
            writer.acls(acl).stat(stat);
        }
        OpResult::Identities(identities) => {
            writer.int(i32::try_from(identities.len()).unwrap_or(i32::MAX));
            for identity in identities {
                writer.string(&identity.scheme).string(&identity.user);
            }
        }
        OpResult::Multi(results) | OpResult::MultiRead(results) => {
            let ops = match op {
                Op::Multi(ops) | Op::MultiRead(ops) => &ops[..],
                _ => &[],
            };
            for (i, result) in results.iter().enumerate() {
                write_in_multi(writer, ops.get(i), result, null);
            }
            writer.int(-1).bool(true).int(-1);
        }
        OpResult::Exists(None)
        | OpResult::Deleted
        | OpResult::Checked
        | OpResult::RolledBack
        | OpResult::WatchesRemoved
        | OpResult::WatchesHeld
        | OpResult::Authenticated => {}
    }
}

/// One op's result in a multi's or a multiRead's reply: its own header, then its record. A
/// create made as `create` (any but a container or a TTL node) tells its path alone.
fn write_in_multi(
    writer: &mut JuteWriter,
    op: Option<&Op>,
    result: &Result<OpResult, ZkError>,
    null: &dyn Fn(&Stat) -> bool,
) {
    let (code, err) = match result {
        Ok(OpResult::Created { .. }) => match op {
            Some(Op::Create { mode, .. }) if mode.is_reaped() => (op_code::CREATE2, 0),
            _ => (op_code::CREATE, 0),
        },
        Ok(OpResult::Deleted) => (op_code::DELETE, 0),
        Ok(OpResult::SetData(_)) => (op_code::SET_DATA, 0),
        Ok(OpResult::Checked) => (op_code::CHECK, 0),
        Ok(OpResult::Data { .. }) => (op_code::GET_DATA, 0),
        Ok(OpResult::Listed(_)) => (op_code::GET_CHILDREN, 0),
        Ok(_) => (op_code::ERROR, 0),
        Err(error) => (op_code::ERROR, error.code()),
    };
    writer.int(code).bool(false).int(err);
    match (code, result) {
        (op_code::ERROR, _) => {
            writer.int(err);
        }
        (_, Ok(result)) => write_result(writer, code, op.unwrap_or(&Op::WhoAmI), result, null),
        (_, Err(_)) => {}
    }
}

/// Reads a successful result of an op sent as `code`.
fn read_result(reader: &mut JuteReader<'_>, code: i32, op: &Op) -> Result<OpResult, Malformed> {
    Ok(match op {
        Op::Create { .. } => {
            let path = reader.string()?;
            let stat = match code {
                op_code::CREATE => Stat::UNKNOWN,
                _ => reader.stat()?,
            };
            OpResult::Created { path, stat }
        }
        Op::Delete { .. } => OpResult::Deleted,
        Op::Exists { .. } => OpResult::Exists(Some(reader.stat()?)),
        Op::GetData { .. } => OpResult::Data {
            data: reader.buffer()?.unwrap_or_default(),
            stat: reader.stat()?,
        },
        Op::GetChildren { .. } if code == op_code::GET_CHILDREN => {
            OpResult::Listed(reader.strings()?)
        }
        Op::GetChildren { .. } => OpResult::Children {
            children: reader.strings()?,
            stat: reader.stat()?,
        },
        Op::SetData { .. } => OpResult::SetData(reader.stat()?),
        Op::Check { .. } => OpResult::Checked,
        Op::Sync { .. } => {
            reader.string()?;
            OpResult::Synced
        }
        Op::Multi(_) | Op::MultiRead(_) => {
            let mut results = Vec::new();
            loop {
                let (inner, done, err) = (reader.int()?, reader.bool()?, reader.int()?);
                if done {
                    break;
                }
                results.push(read_in_multi(reader, inner, err)?);
            }
            match op {
                Op::Multi(_) => OpResult::Multi(results),
                _ => OpResult::MultiRead(results),
            }
        }
        Op::CountDescendants { .. } => OpResult::Counted(reader.int()?),
        Op::GetEphemerals { .. } => OpResult::Ephemerals(reader.strings()?),
        Op::AddWatch { .. } => {
            reader.int()?;
            OpResult::WatchAdded
        }
        Op::RemoveWatches { .. } => OpResult::WatchesRemoved,
        Op::CheckWatches { .. } => OpResult::WatchesHeld,
        Op::GetAcl { .. } => OpResult::Acl {
            acl: reader.acls()?,
            stat: reader.stat()?,
        },
        Op::SetAcl { .. } => OpResult::AclSet(reader.stat()?),
        Op::AddAuth { .. } => OpResult::Authenticated,
        Op::WhoAmI => {
            let count = reader.int()?;
            let count = usize::try_from(count).map_err(|_| Malformed::BadLength(count.into()))?;
            let mut identities = Vec::new();
            for _ in 0..count {
                let (scheme, user) = (reader.string()?, reader.string()?);
                identities.push(ClientInfo { scheme, user });
            }
            OpResult::Identities(identities)
        }
    })
}

/// One op's result in a multi's or a multiRead's reply, after its header (`code`, `err`).
fn read_in_multi(
    reader: &mut JuteReader<'_>,
    code: i32,
    err: i32,
) -> Result<Result<OpResult, ZkError>, Malformed> {
    let result = match code {
        op_code::ERROR => match reader.int()? {
            0 => OpResult::RolledBack,
            code => return Ok(Err(codes::error(code)?)),
        },
        _ if err != 0 => return Err(codes::unknown("error code of a result", err)),
        op_code::CREATE => OpResult::Created {
            path: reader.string()?,
            stat: Stat::UNKNOWN,
        },
        op_code::CREATE2 => OpResult::Created {
            path: reader.string()?,
            stat: reader.stat()?,
        },
        op_code::DELETE => OpResult::Deleted,
        op_code::CHECK => OpResult::Checked,
        op_code::SET_DATA => OpResult::SetData(reader.stat()?),
        op_code::GET_DATA => OpResult::Data {
            data: reader.buffer()?.unwrap_or_default(),
            stat: reader.stat()?,
        },
        op_code::GET_CHILDREN => OpResult::Listed(reader.strings()?),
        value => return Err(codes::unknown("result type in a multi", value)),
    };
    Ok(Ok(result))
}
