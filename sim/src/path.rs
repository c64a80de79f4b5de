//! ZooKeeper path rules: what a valid znode path is (`PathUtils.validatePath`), and the parent /
//! last-component split the tree keys its nodes by.
//!
//! ZooKeeper checks paths as Java strings, one UTF-16 unit at a time. A Rust `char` above
//! U+FFFF is a surrogate pair in Java, and surrogates fall in the forbidden range
//! U+D800..=U+F8FF, so such characters are rejected here too.

use zklab_recipes::client::{CreateMode, Op, ZkError};

/// The reserved subtree ZooKeeper keeps for itself.
pub const ZOOKEEPER: &str = "/zookeeper";

/// Checks `path` the way ZooKeeper's `PathUtils.validatePath` does; a bad path is
/// [`ZkError::BadArguments`], as the server reports it.
///
/// With `sequential`, the path is a prefix the server appends a sequence number to, and it is
/// checked with that suffix appended: `"/a/"` is a valid sequential prefix (giving
/// `"/a/0000000000"`) but not a valid path.
pub fn validate(path: &str, sequential: bool) -> Result<(), ZkError> {
    let bytes = path.as_bytes();
    if bytes.first() != Some(&b'/') {
        return Err(ZkError::BadArguments);
    }
    if bytes.len() == 1 {
        // The root; as a sequential prefix it gives "/<digits>", which is fine too.
        return Ok(());
    }
    if !sequential && bytes.last() == Some(&b'/') {
        return Err(ZkError::BadArguments);
    }
    // Every refusal is the same error, so the order of the checks does not matter. A path of
    // printable ASCII (nearly all) is told apart in one pass without an early exit, which the
    // compiler vectorises; any other is checked character by character. Then the components:
    // only a '/' followed by '/' or '.' can start an unusable one, so a path is split into
    // components only if it holds such a pair (found in another vectorised pass). The sequence
    // suffix (digits, maybe a '-') only lengthens the last component, so that component is never
    // empty, "." or ".." when sequential.
    let unusual = |found: bool, &byte: &u8| found | !(0x20..0x7F).contains(&byte);
    if bytes.iter().fold(false, unusual) && path.chars().any(forbidden) {
        return Err(ZkError::BadArguments);
    }
    let suspect = |found: bool, (&byte, &next): (&u8, &u8)| {
        found | ((byte == b'/') & ((next == b'/') | (next == b'.')))
    };
    if !bytes.iter().zip(&bytes[1..]).fold(false, suspect) {
        return Ok(());
    }
    let mut components = bytes[1..].split(|&byte| byte == b'/');
    let last = components.next_back().unwrap_or_default();
    if components.any(unusable_component) || (!sequential && unusable_component(last)) {
        return Err(ZkError::BadArguments);
    }
    Ok(())
}

/// Whether a path component is one ZooKeeper refuses: empty, `.` or `..`.
fn unusable_component(component: &[u8]) -> bool {
    matches!(component, b"" | b"." | b"..")
}

/// Whether ZooKeeper refuses this character in a path (NUL, control characters, surrogates and
/// private use, specials; anything outside the BMP is a surrogate pair in Java).
fn forbidden(c: char) -> bool {
    matches!(
        c as u32,
        0x0000..=0x001F | 0x007F..=0x009F | 0xD800..=0xF8FF | 0xFFF0..=0xFFFF | 0x1_0000..
    )
}

/// The parent of a path: everything before the last `/`, or `"/"` when that is empty (children of
/// the root, and the root itself). Works on sequential prefixes too (`"/a/"` -> `"/a"`).
pub fn parent(path: &str) -> &str {
    match last_slash(path) {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of a path: the name the node has in its parent's child list.
pub fn name(path: &str) -> &str {
    match last_slash(path) {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Where the last `/` is. A byte search: `/` is ASCII, so it never occurs inside another
/// character's UTF-8 encoding, and this is what `rfind('/')` finds, at a fraction of its cost
/// (the tree splits every path it touches).
fn last_slash(path: &str) -> Option<usize> {
    path.bytes().rposition(|byte| byte == b'/')
}

/// The node whose ACL lets everyone read it and nobody change it or add children.
pub const CONFIG: &str = "/zookeeper/config";

/// Whether this is one of the nodes ZooKeeper never deletes (`DataTree.isSpecialPath`): the root,
/// `/zookeeper`, its quota node and its config node. Deleting one is BadArguments, before any
/// other check. The rest of `/zookeeper` is an ordinary tree.
pub fn special(path: &str) -> bool {
    matches!(path, "/" | ZOOKEEPER | "/zookeeper/quota" | CONFIG)
}

/// Checks every path of the op, as a client does before sending it; a multiRead holds only
/// reads of data and children without watches, the only ones a client can put in one; a
/// create names at least one ACL entry.
pub fn validate_op(op: &Op) -> Result<(), ZkError> {
    match op {
        // A client refuses a TTL the server could not keep before sending it.
        Op::Create { mode, .. }
            if mode
                .ttl_ms()
                .is_some_and(|ttl| !(1..=CreateMode::MAX_TTL_MS).contains(&ttl)) =>
        {
            Err(ZkError::BadArguments)
        }
        // zookeeper-client refuses a create without an ACL entry before it looks at the path
        // (ZooKeeper's Java client looks at the path first).
        Op::Create { acl, .. } if acl.entries().is_empty() => Err(ZkError::InvalidAcl),
        Op::Create { path, mode, .. } => validate(path, mode.is_sequential()),
        Op::Multi(ops) => ops.iter().try_for_each(validate_op),
        Op::MultiRead(reads) => reads.iter().try_for_each(|read| match read {
            Op::GetData { watch: false, .. } | Op::GetChildren { watch: false, .. } => {
                validate_op(read)
            }
            _ => Err(ZkError::BadArguments),
        }),
        single => validate(single.path(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(path: &str) -> bool {
        validate(path, false).is_ok()
    }

    fn ok_seq(path: &str) -> bool {
        validate(path, true).is_ok()
    }

    /// Asserts that each of `plain` is refused as a path, and each of `sequential` as a
    /// sequential create's prefix.
    fn refused(plain: &[&str], sequential: &[&str]) {
        for p in plain {
            assert!(!ok(p), "{p:?} should be rejected");
        }
        for p in sequential {
            assert!(
                !ok_seq(p),
                "{p:?} should be rejected as a sequential prefix"
            );
        }
    }

    #[test]
    fn valid_paths_are_accepted() {
        for p in [
            "/",
            "/a",
            "/a/b",
            "/a/b/c",
            "/.a",
            "/a.",
            "/...",
            "/a/..b",
            "/zookeeper",
            "/ a",
            "/~",
        ] {
            assert!(ok(p), "{p:?} should be valid");
        }
    }

    #[test]
    fn bad_path_is_bad_arguments() {
        assert_eq!(validate("a", false), Err(ZkError::BadArguments));
        assert_eq!(validate("/a/", true), Ok(()));
    }

    #[test]
    fn empty_path_is_rejected() {
        refused(&[""], &[""]);
    }

    #[test]
    fn path_must_start_with_slash() {
        refused(&["a", "a/b", " /a"], &["a"]);
    }

    #[test]
    fn trailing_slash_is_rejected_except_for_root() {
        assert!(ok("/"));
        refused(&["/a/", "/a/b/"], &[]);
    }

    #[test]
    fn empty_component_is_rejected() {
        refused(&["//", "//a", "/a//b"], &["//", "/a//"]);
    }

    #[test]
    fn dot_and_dotdot_components_are_rejected() {
        // In the middle of a sequential prefix they still count.
        refused(
            &[
                "/.", "/..", "/a/.", "/a/..", "/./a", "/../a", "/a/./b", "/a/../b",
            ],
            &["/./a"],
        );
        // Only whole components: "..." and ".a" are names like any other.
        assert!(ok("/a/..."));
    }

    /// Every path of up to seven of '/', '.' and 'a' is judged as the components themselves
    /// judge it: the shortcut that skips splitting a path with no "//" or "/." in it refuses
    /// nothing more and nothing less.
    #[test]
    fn components_are_judged_whole_with_or_without_the_shortcut() {
        let by_components = |path: &str, sequential: bool| {
            let mut components: Vec<&str> = path[1..].split('/').collect();
            if sequential {
                components.pop();
            }
            !components.iter().any(|c| matches!(*c, "" | "." | ".."))
        };
        let mut longest = vec![String::from("/")];
        for _ in 0..6 {
            longest = longest
                .iter()
                .flat_map(|path| ['/', '.', 'a'].map(|c| format!("{path}{c}")))
                .collect();
            for path in &longest {
                assert_eq!(ok(path), by_components(path, false), "{path:?}");
                assert_eq!(ok_seq(path), by_components(path, true), "{path:?}");
            }
        }
    }

    #[test]
    fn nul_is_rejected() {
        refused(&["/a\0", "/\0", "/a/\0/b"], &["/a/\0"]);
    }

    #[test]
    fn forbidden_char_ranges_are_rejected() {
        let bad = [
            '\u{1}',
            '\u{1F}',
            '\u{7F}',
            '\u{9F}',
            '\u{E000}',
            '\u{F8FF}',
            '\u{FFF0}',
            '\u{FFFF}',
            '\u{10000}',
            '\u{1F600}',
            '\u{10FFFF}',
        ];
        for c in bad {
            assert!(
                !ok(&format!("/a{c}b")),
                "U+{:04X} should be rejected",
                c as u32
            );
            assert!(
                !ok_seq(&format!("/a/{c}")),
                "U+{:04X} should be rejected",
                c as u32
            );
        }
        let good = [
            '\u{20}', '\u{7E}', '\u{A0}', '\u{D7FF}', '\u{F900}', '\u{FFEF}', 'é', '日',
        ];
        for c in good {
            assert!(
                ok(&format!("/a{c}b")),
                "U+{:04X} should be accepted",
                c as u32
            );
        }
    }

    #[test]
    fn sequential_prefix_is_validated_with_the_suffix_appended() {
        assert!(ok_seq("/a/"));
        assert!(ok_seq("/"));
        assert!(ok_seq("/a/."));
        assert!(ok_seq("/a/.."));
        assert!(ok_seq("/lock-"));
        refused(&["/a/."], &["/a/./"]);
    }

    #[test]
    fn parent_and_name_split_at_the_last_slash() {
        assert_eq!(parent("/"), "/");
        assert_eq!(parent("/a"), "/");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a/b/c"), "/a/b");
        assert_eq!(parent("/a/"), "/a");
        assert_eq!(name("/a"), "a");
        assert_eq!(name("/a/b"), "b");
        assert_eq!(name("/"), "");
        assert_eq!(name("/a/"), "");
    }

    #[test]
    fn only_four_nodes_are_special() {
        for p in ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"] {
            assert!(special(p), "{p}");
        }
        for p in [
            "/zookeeper/x",
            "/zookeeper/quota/y",
            "/zookeeperx",
            "/a/zookeeper",
        ] {
            assert!(!special(p), "{p}");
        }
    }

    #[test]
    fn garbage_paths_never_panic() {
        let long = "/a".repeat(100_000);
        let inputs = [
            "",
            "/",
            "//",
            "\0",
            "/\u{10FFFF}",
            "////////",
            "/.../..",
            "é",
            "/é/",
            &long,
            "/\u{FEFF}",
        ];
        for p in inputs {
            for seq in [false, true] {
                let _ = validate(p, seq);
            }
            let _ = (parent(p), name(p), special(p));
        }
        assert!(ok(&long));
    }
}
