//! How long a request is on ZooKeeper's wire, and the longest a server reads: a longer one makes
//! it drop the connection unanswered and unapplied (its "Len error"), which is how a znode's data
//! is limited to about 1 MiB.

use zklab_recipes::acl::Acls;
use zklab_recipes::client::Op;

/// The longest request packet a server reads: `jute.maxbuffer`'s default, 0xfffff bytes.
pub const MAX_REQUEST_LEN: usize = 0xf_ffff;

/// The header of each op in a multi, and of the multi's end: type, done flag, error.
const MULTI_HEADER_LEN: usize = 4 + 1 + 4;

/// The length of a request carrying `op`, after its length prefix: the request header (xid and
/// type), then the op's record.
pub fn request_len(op: &Op) -> usize {
    4 + 4 + record_len(op)
}

/// Whether a server drops the connection of a session that sends `op`.
pub fn too_long(op: &Op) -> bool {
    request_len(op) > MAX_REQUEST_LEN
}

/// A string's or a buffer's length on the wire: its length, then its bytes.
fn string(text: &str) -> usize {
    4 + text.len()
}

/// An ACL's length on the wire: a vector of entries, each its permissions, scheme and id.
fn acl_len(acl: &Acls) -> usize {
    let entry_len = |acl: &zklab_recipes::acl::Acl| 4 + string(&acl.id.scheme) + string(&acl.id.id);
    4 + acl.entries().iter().map(entry_len).sum::<usize>()
}

fn record_len(op: &Op) -> usize {
    match op {
        // A TTL node's create carries its TTL, a long, after the flags.
        Op::Create {
            path,
            data,
            acl,
            mode,
        } => string(path) + 4 + data.len() + acl_len(acl) + 4 + mode.ttl_ms().map_or(0, |_| 8),
        Op::SetAcl { path, acl, .. } => string(path) + acl_len(acl) + 4,
        Op::GetAcl { path } => string(path),
        Op::AddAuth { scheme, auth } => 4 + string(scheme) + 4 + auth.as_ref().map_or(0, Vec::len),
        Op::WhoAmI => 0,
        Op::SetData { path, data, .. } => string(path) + 4 + data.len() + 4,
        Op::Delete { path, .. } | Op::Check { path, .. } => string(path) + 4,
        Op::Exists { path, .. } | Op::GetData { path, .. } | Op::GetChildren { path, .. } => {
            string(path) + 1
        }
        Op::Sync { path } | Op::CountDescendants { path } | Op::GetEphemerals { prefix: path } => {
            string(path)
        }
        Op::AddWatch { path, .. }
        | Op::RemoveWatches { path, .. }
        | Op::CheckWatches { path, .. } => string(path) + 4,
        Op::Multi(ops) | Op::MultiRead(ops) => {
            let each: usize = ops.iter().map(|op| MULTI_HEADER_LEN + record_len(op)).sum();
            each + MULTI_HEADER_LEN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zklab_recipes::client::CreateMode;

    fn create(path: &str, len: usize) -> Op {
        Op::Create {
            path: path.to_owned(),
            data: vec![0; len],
            mode: CreateMode::Persistent,
            acl: Acls::OPEN,
        }
    }

    fn set(path: &str, len: usize) -> Op {
        Op::SetData {
            path: path.to_owned(),
            data: vec![0; len],
            version: -1,
        }
    }

    /// The largest data ZooKeeper 3.8 took, found by bisection against a real server; one byte
    /// more dropped the connection.
    #[test]
    fn the_longest_data_a_real_server_took_fits_and_one_byte_more_does_not() {
        for (op, longest) in [
            (
                create as fn(&str, usize) -> Op,
                [("/x", 1_048_526), ("/xxxxxxxxxx", 1_048_517)],
            ),
            (set, [("/x", 1_048_553), ("/xxxxxxxxxx", 1_048_544)]),
        ] {
            for (path, len) in longest {
                assert!(!too_long(&op(path, len)), "{path} {len}");
                assert!(too_long(&op(path, len + 1)), "{path} {}", len + 1);
            }
        }
    }
}
