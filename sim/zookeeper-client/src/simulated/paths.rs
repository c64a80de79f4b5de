//! The path rules zookeeper-client applies before it sends anything, with its messages: a path
//! it lets through that the server refuses (a last component `.`, a character outside the BMP)
//! is the server's `BadArguments` instead, as from a real server.

use zklab_recipes::client::Op;
use zookeeper_client::Error;

/// Checks `path` as the real client does; `sequential_prefix`: the server appends a sequence
/// number to it, so it may end with `/`.
pub(super) fn check(path: &str, sequential_prefix: bool) -> Result<(), Error> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(Error::BadArguments(match path.is_empty() {
            true => &"path cannot be empty",
            false => &"path must start with '/'",
        }));
    };
    if rest.is_empty() {
        return Ok(());
    }
    // The client reads the path once, in order: a character it refuses stops it where it is,
    // and it judges a component when it reaches the '/' after it, so the last component is left
    // to the server.
    let mut components = rest.split('/').peekable();
    let mut last = "";
    while let Some(component) = components.next() {
        if component.chars().any(unsupported) {
            return Err(Error::BadArguments(&"unsupported characters in path"));
        }
        if components.peek().is_none() {
            last = component;
        } else if component.is_empty() {
            return Err(Error::BadArguments(&"empty node is not allowed in path"));
        } else if matches!(component, "." | "..") {
            return Err(Error::BadArguments(&"relative path is not allowed"));
        }
    }
    if last.is_empty() && !sequential_prefix {
        return Err(Error::BadArguments(&"path must not end with '/'"));
    }
    Ok(())
}

/// Checks every path of `op`, as the real client checks a call's, a transaction's or a
/// multiRead's.
pub(super) fn check_op(op: &Op) -> Result<(), Error> {
    match op {
        Op::Create { path, mode, .. } => check(path, mode.is_sequential()),
        Op::Multi(ops) | Op::MultiRead(ops) => ops.iter().try_for_each(check_op),
        single => check(single.path(), false),
    }
}

/// A character the real client refuses in a path: control characters, surrogates and private
/// use, specials (characters outside the BMP it lets through; the server refuses them).
fn unsupported(c: char) -> bool {
    matches!(
        c as u32,
        0x0000..=0x001F | 0x007F..=0x009F | 0xD800..=0xF8FF | 0xFFF0..=0xFFFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(path: &str, sequential_prefix: bool) -> Result<(), &'static str> {
        check(path, sequential_prefix).map_err(|error| match error {
            Error::BadArguments(message) => *message,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn each_rule_has_the_real_clients_message() {
        assert_eq!(said("", false), Err("path cannot be empty"));
        assert_eq!(said("a", false), Err("path must start with '/'"));
        assert_eq!(
            said("/a\u{1}", false),
            Err("unsupported characters in path")
        );
        assert_eq!(
            said("/a//b", false),
            Err("empty node is not allowed in path")
        );
        assert_eq!(said("/a/./b", false), Err("relative path is not allowed"));
        assert_eq!(said("/a/../b", false), Err("relative path is not allowed"));
        assert_eq!(said("/a/", false), Err("path must not end with '/'"));
        assert_eq!(said("/a//", true), Err("empty node is not allowed in path"));
        assert_eq!(
            said("//a\u{1}", false),
            Err("empty node is not allowed in path")
        );
        assert_eq!(
            said("/a\u{1}//", false),
            Err("unsupported characters in path")
        );
    }

    #[test]
    fn what_the_client_lets_through_is_left_to_the_server() {
        for path in [
            "/",
            "/a",
            "/a/b-",
            "/a/.",
            "/a/..",
            "/a/\u{10000}",
            "/.a/b..",
        ] {
            assert_eq!(said(path, false), Ok(()), "{path}");
        }
        assert_eq!(said("/a/", true), Ok(()));
        assert_eq!(said("/", true), Ok(()));
    }
}
