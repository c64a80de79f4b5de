//! How zkCli splits a line into words: its `ARGS_PATTERN`, `\s*([^"']\S*|"[^"]*"|'[^']*')\s*`,
//! found again and again along the line, with a word's surrounding quotes then stripped.
//!
//! The regex is followed to the letter, backtracking included, because its corners show in what
//! zkCli prints: a line of blanks is one word (a single blank, an unknown command), and a quote
//! that is never closed is skipped.

/// The words of `line`, as zkCli's `MyCommandOptions.parseCommand` finds them.
pub(super) fn split(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut words = Vec::new();
    let mut from = 0;
    while let Some((word, end)) = (from..=chars.len()).find_map(|start| match_at(&chars, start)) {
        words.push(unquote(&word));
        from = end;
    }
    words
}

/// The pattern matched at `start`: the captured word and where the match ends.
fn match_at(chars: &[char], start: usize) -> Option<(String, usize)> {
    let blanks = chars[start..].iter().take_while(|&&c| is_blank(c)).count();
    // `\s*` is greedy: it gives blanks back one at a time until the group matches.
    (0..=blanks).rev().find_map(|taken| {
        let word_start = start + taken;
        let word_end = word_end(chars, word_start)?;
        let end = word_end
            + chars[word_end..]
                .iter()
                .take_while(|&&c| is_blank(c))
                .count();
        Some((chars[word_start..word_end].iter().collect(), end))
    })
}

/// Where the group `[^"']\S*|"[^"]*"|'[^']*'` ends if it matches at `start`.
fn word_end(chars: &[char], start: usize) -> Option<usize> {
    let first = *chars.get(start)?;
    if first == '"' || first == '\'' {
        let close = chars[start + 1..].iter().position(|&c| c == first)?;
        Some(start + 1 + close + 1)
    } else {
        let rest = chars[start + 1..]
            .iter()
            .take_while(|&&c| !is_blank(c))
            .count();
        Some(start + 1 + rest)
    }
}

/// Java's `\s`.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// zkCli's `QUOTED_PATTERN`, `^(['"])(.*)(\1)$`: a word in matching quotes loses them, unless
/// it holds a line terminator, which Java's `.` does not match.
fn unquote(word: &str) -> String {
    let mut chars = word.chars();
    match (chars.next(), chars.next_back()) {
        (Some(open), Some(close))
            if open == close
                && (open == '"' || open == '\'')
                && !chars
                    .clone()
                    .any(|c| matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')) =>
        {
            chars.collect()
        }
        _ => word.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn words_are_split_on_blanks_and_quotes_group_them() {
        assert_eq!(
            split("  create /a  \"x y\" 'z'"),
            ["create", "/a", "x y", "z"]
        );
        assert_eq!(split("set /a \"\""), ["set", "/a", ""]);
    }

    #[test]
    fn a_line_of_blanks_is_one_blank_word() {
        assert_eq!(split("   "), [" "]);
        assert_eq!(split("\t"), ["\t"]);
    }

    #[test]
    fn an_unclosed_quote_is_skipped_and_unmatched_quotes_give_no_word() {
        assert_eq!(split("create /d \"unclosed"), ["create", "/d", "unclosed"]);
        assert!(split("\"'").is_empty());
    }
}
