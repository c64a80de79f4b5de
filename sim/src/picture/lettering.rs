//! The picture's words: znode names shortened so a lane can hold them, text cut to what fits
//! (the whole of it goes in a tooltip), and everything escaped for XML.

/// The width of one character of the picture's 11 px monospace text, in pixels, rounded up so
/// that text measured with it never overflows.
pub(super) const CHAR_WIDTH: f64 = 6.7;

/// How many characters fit in `pixels`.
pub(super) fn chars_in(pixels: f64) -> usize {
    (pixels / CHAR_WIDTH).floor().max(1.0) as usize
}

/// How wide `text` is, in pixels.
pub(super) fn width_of(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_WIDTH
}

/// `text` with every long zero-padded number (a sequential znode's counter, a guid) cut to its
/// significant digits after an ellipsis, and every path of three or more names to its last
/// name: `/locks/lock/0000000000000001-lock-0000000003` reads `…/…1-lock-…3`.
pub(super) fn shortened(text: &str) -> String {
    let numbers = short_numbers(text);
    let mut out = String::with_capacity(numbers.len());
    for (index, word) in numbers.split(' ').enumerate() {
        if index > 0 {
            out.push(' ');
        }
        let path = word.trim_start_matches(['[', '"', '(']);
        let names = path.split('/').count();
        match path.rfind('/') {
            Some(last) if path.starts_with('/') && names >= 4 => {
                out.push_str(&word[..word.len() - path.len()]);
                out.push('…');
                out.push_str(&path[last..]);
            }
            _ => out.push_str(word),
        }
    }
    out
}

/// `text` with its long zero-padded numbers cut, as [`shortened`] does.
fn short_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut previous = None;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, digits) = rest.split_at(start);
        out.push_str(before);
        previous = before.chars().last().or(previous);
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        let (number, after) = digits.split_at(end);
        let padded = number.len() >= 8 && number.starts_with('0') && previous != Some('.');
        if padded {
            let significant = number.trim_start_matches('0');
            out.push('…');
            out.push_str(if significant.is_empty() {
                "0"
            } else {
                significant
            });
        } else {
            out.push_str(number);
        }
        previous = number.chars().last();
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `text` cut to `chars` characters, an ellipsis saying so.
pub(super) fn fitted(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// `text` broken at spaces into at most `lines` lines of at most `chars` characters, the last
/// one cut if the text is longer still.
pub(super) fn wrapped(text: &str, chars: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let wide = line.chars().count() + 1 + word.chars().count() > chars;
        if !line.is_empty() && wide && out.len() + 1 < lines {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(fitted(&line, chars));
    out
}

/// `text` safe inside XML.
pub(super) fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_padded_numbers_and_deep_paths_are_cut() {
        assert_eq!(
            shortened("delete /locks/lock/0000000000000001-lock-0000000003 v=-1"),
            "delete …/…1-lock-…3 v=-1"
        );
        assert_eq!(
            shortened("held 0.000000031s, zxid=12"),
            "held 0.000000031s, zxid=12"
        );
        assert_eq!(shortened("/q/item-0000000000"), "/q/item-…0");
        assert_eq!(
            shortened("children [\"/a/b/c\", \"x\"]"),
            "children [\"…/c\", \"x\"]"
        );
    }

    #[test]
    fn text_is_cut_and_wrapped_to_fit() {
        assert_eq!(fitted("abcdef", 4), "abc…");
        assert_eq!(fitted("abc", 4), "abc");
        assert_eq!(
            wrapped("one two three four", 9, 2),
            ["one two", "three fo…"]
        );
        assert_eq!(wrapped("one two", 20, 3), ["one two"]);
    }
}
