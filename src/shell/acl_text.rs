//! ACLs as zkCli reads and prints them: its `AclParser` (`scheme:id:perms`, comma-separated,
//! forgiving what it cannot read with a word on stderr) and `getAcl`'s lines.

use crate::recipes::acl::{Acl, Acls, Id, Perms};

/// The entries of `text` as zkCli's `AclParser` reads them: items split at commas, each with
/// its scheme before the first colon, its permissions after the last and its id between. An
/// item without two colons is skipped, and a letter of no permission ignored, each with a line
/// in `warnings` (zkCli prints them on stderr).
pub(super) fn parse(text: &str, warnings: &mut Vec<String>) -> Vec<Acl> {
    let mut entries = Vec::new();
    for item in java_split(text, ',') {
        let (Some(first), Some(last)) = (item.find(':'), item.rfind(':')) else {
            warnings.push(format!("{item} does not have the form scheme:id:perm"));
            continue;
        };
        if first == last {
            warnings.push(format!("{item} does not have the form scheme:id:perm"));
            continue;
        }
        let mut perms = Perms(0);
        for letter in item[last + 1..].chars() {
            match Perms::of_letter(letter) {
                Some(bit) => perms = Perms(perms.0 | bit.0),
                None => warnings.push(format!("Unknown perm type: {letter}")),
            }
        }
        let id = Id::new(&item[..first], &item[first + 1..last]);
        entries.push(Acl::new(perms, id));
    }
    entries
}

/// Java's `String.split`: trailing empty parts dropped (but an empty string is one part).
fn java_split(text: &str, separator: char) -> Vec<&str> {
    let mut parts: Vec<&str> = text.split(separator).collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// What `getAcl` prints: per entry, its id as jute writes a record (`'scheme,'id` and a line
/// break), then `: ` and its permissions (`cdrwa`).
pub(super) fn lines(acl: &Acls) -> String {
    acl.entries()
        .iter()
        .map(|entry| {
            let (scheme, id) = (jute_escaped(&entry.id.scheme), jute_escaped(&entry.id.id));
            format!("'{scheme},'{id}\n: {}\n", entry.perms)
        })
        .collect()
}

/// A string as jute's `ToStringOutputArchive` escapes it.
fn jute_escaped(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\0' => escaped.push_str("%00"),
            '\n' => escaped.push_str("%0A"),
            '\r' => escaped.push_str("%0D"),
            ',' => escaped.push_str("%2C"),
            '}' => escaped.push_str("%7D"),
            '%' => escaped.push_str("%25"),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_read_as_zkcli_reads_them_with_its_warnings() {
        let mut warnings = Vec::new();
        let read = parse(
            "world:anyone:r,foo,ip:127.0.0.1:R,auth:alice:secret:cdrwa",
            &mut warnings,
        );
        assert_eq!(
            warnings,
            [
                "foo does not have the form scheme:id:perm",
                "Unknown perm type: R"
            ]
        );
        let expected = [
            Acl::new(Perms::READ, Id::ANYONE),
            Acl::new(Perms(0), Id::new("ip", "127.0.0.1")),
            Acl::new(Perms::ALL, Id::new("auth", "alice:secret")),
        ];
        assert_eq!(read, expected);
        assert!(parse("foo", &mut Vec::new()).is_empty());
        assert_eq!(
            parse("ip:::1:r", &mut Vec::new())[0].id,
            Id::new("ip", "::1")
        );
    }

    #[test]
    fn an_acl_prints_as_two_lines_an_entry() {
        let acl = Acls::new(vec![
            Acl::new(Perms::ALL, Id::ANYONE),
            Acl::new(Perms(0), Id::new("ip", "1,2%")),
        ]);
        assert_eq!(lines(&acl), "'world,'anyone\n: cdrwa\n'ip,'1%2C2%25\n: \n");
    }
}
