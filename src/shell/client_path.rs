//! The Java client's check of a path before it sends a request (`PathUtils.validatePath`): zkCli
//! prints its message, so a malformed path never reaches the server, simulated or real.

/// Why the Java client refuses `path`, in its words; a sequential create may end in `/`, since
/// the server appends the sequence number.
pub(super) fn check(path: &str, sequential: bool) -> Result<(), String> {
    if sequential {
        return check(&format!("{path}1"), false);
    }
    // Java counts positions in UTF-16 code units.
    let units: Vec<u16> = path.encode_utf16().collect();
    let slash = u16::from(b'/');
    let dot = u16::from(b'.');
    match units.as_slice() {
        [] => return Err("Path length must be > 0".into()),
        [first, ..] if *first != slash => return Err("Path must start with / character".into()),
        [_] => return Ok(()),
        [.., last] if *last == slash => {
            return Err("Path must not end with / character".into());
        }
        _ => {}
    }
    let ends_name = |at: usize| units.get(at + 1).is_none_or(|&c| c == slash);
    for at in 1..units.len() {
        let (previous, c) = (units[at - 1], units[at]);
        let reason = if c == 0 {
            "null character not allowed"
        } else if c == slash && previous == slash {
            "empty node name specified"
        } else if c == dot && previous == dot {
            // `previous` is a dot, so `at` is at least 2.
            if units[at - 2] == slash && ends_name(at) {
                "relative paths not allowed"
            } else {
                continue;
            }
        } else if c == dot {
            if previous == slash && ends_name(at) {
                "relative paths not allowed"
            } else {
                continue;
            }
        } else if matches!(c, 0x01..=0x1f | 0x7f..=0x9f | 0xd800..=0xf8ff | 0xfff0..=0xffff) {
            "invalid character"
        } else {
            continue;
        };
        return Err(format!(
            "Invalid path string \"{path}\" caused by {reason} @{at}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn malformed_paths_get_the_java_clients_messages() {
        for (path, message) in [
            ("a", "Path must start with / character"),
            ("/a/", "Path must not end with / character"),
            (
                "//a",
                "Invalid path string \"//a\" caused by empty node name specified @1",
            ),
            (
                "/a/../b",
                "Invalid path string \"/a/../b\" caused by relative paths not allowed @4",
            ),
            (
                "/.",
                "Invalid path string \"/.\" caused by relative paths not allowed @1",
            ),
        ] {
            assert_eq!(check(path, false).unwrap_err(), message);
        }
        assert!(check("/a/", true).is_ok());
        assert!(check("/..a", false).is_ok() && check("/a..", false).is_ok());
    }
}
