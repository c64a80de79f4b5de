//! How zkCli's commands read their options: the part of Apache Commons CLI 1.5's `DefaultParser`
//! that one-letter options reach, step for step, since its quirks decide what zkCli prints.
//!
//! Options may follow the arguments (`get /a -s`), letters combine (`-sw`), a value may be glued
//! on (`-v5`, `-v=5`), `--` ends the options, and an option left waiting for its value is an
//! error. None of zkCli's option letters can start a Java number, so the parser's test for
//! negative numbers never turns an option into a value here and is left out.

use super::Failure;

/// A command's options: each letter, and whether it takes a value.
pub(super) type Spec = &'static [(char, bool)];

/// The options and arguments of one command line.
pub(super) struct Parsed {
    /// The options in the order given, with their values.
    options: Vec<(char, Option<String>)>,
    /// The arguments, the command's name first.
    pub(super) args: Vec<String>,
}

impl Parsed {
    /// Whether the option was given.
    pub(super) fn has(&self, letter: char) -> bool {
        self.options.iter().any(|(given, _)| *given == letter)
    }

    /// The value of the option's first occurrence, as Commons CLI's `getOptionValue` returns it.
    pub(super) fn value(&self, letter: char) -> Option<&str> {
        self.options
            .iter()
            .filter(|(given, _)| *given == letter)
            .find_map(|(_, value)| value.as_deref())
    }
}

/// Parses `tokens` (the command's name first) against `spec`.
pub(super) fn parse(spec: Spec, tokens: &[String]) -> Result<Parsed, Failure> {
    let mut parser = Parser {
        spec,
        parsed: Parsed {
            options: Vec::new(),
            args: Vec::new(),
        },
        waiting: None,
        arguments_only: false,
    };
    for token in tokens {
        parser.token(token)?;
    }
    parser.check_not_waiting()?;
    Ok(parser.parsed)
}

struct Parser {
    spec: Spec,
    parsed: Parsed,
    /// The index of the option still waiting for its value.
    waiting: Option<usize>,
    /// After `--`, every token is an argument.
    arguments_only: bool,
}

impl Parser {
    fn token(&mut self, token: &str) -> Result<(), Failure> {
        if self.arguments_only {
            self.parsed.args.push(token.to_owned());
        } else if token == "--" {
            self.arguments_only = true;
        } else if self.waiting.is_some() && !self.is_option(token) {
            self.give_value(strip_quotes(token));
        } else if token.starts_with("--") {
            return Err(unrecognized(token));
        } else if token.starts_with('-') && token != "-" {
            self.short_option(token)?;
        } else {
            self.parsed.args.push(token.to_owned());
        }
        Ok(())
    }

    /// `handleShortAndLongOption`, for a token that starts with a single `-`.
    fn short_option(&mut self, token: &str) -> Result<(), Failure> {
        let name = &token[1..];
        if name.chars().count() == 1 {
            return match self.letter(name) {
                Some(letter) => self.option(letter),
                None => Err(unrecognized(token)),
            };
        }
        match name.split_once('=') {
            None => self.combined(token),
            Some((letter, value)) => match self.letter(letter) {
                Some(letter) if self.takes_value(letter) => {
                    self.option(letter)?;
                    self.give_value(value.to_owned());
                    Ok(())
                }
                // Commons CLI reads the first character of an empty name and fails.
                _ if letter.is_empty() => Err(Failure::Exception(
                    "java.lang.StringIndexOutOfBoundsException: begin 0, end 1, length 0".into(),
                )),
                _ => Err(unrecognized(token)),
            },
        }
    }

    /// `handleConcatenatedOptions`: `-sw` is `-s -w`; the rest after a letter that takes a value
    /// is its value.
    fn combined(&mut self, token: &str) -> Result<(), Failure> {
        for (at, c) in token.char_indices().skip(1) {
            if !self.spec.iter().any(|&(letter, _)| letter == c) {
                return Err(unrecognized(token));
            }
            self.option(c)?;
            let rest = &token[at + c.len_utf8()..];
            if self.waiting.is_some() && !rest.is_empty() {
                self.give_value(rest.to_owned());
                break;
            }
        }
        Ok(())
    }

    /// `handleOption`: an option given; one still waiting for its value is an error.
    fn option(&mut self, letter: char) -> Result<(), Failure> {
        self.check_not_waiting()?;
        self.parsed.options.push((letter, None));
        if self.takes_value(letter) {
            self.waiting = Some(self.parsed.options.len() - 1);
        }
        Ok(())
    }

    fn give_value(&mut self, value: String) {
        if let Some(index) = self.waiting.take() {
            self.parsed.options[index].1 = Some(value);
        }
    }

    fn check_not_waiting(&self) -> Result<(), Failure> {
        match self.waiting {
            Some(index) => Err(Failure::Message(format!(
                "org.apache.commons.cli.MissingArgumentException: Missing argument for option: {}",
                self.parsed.options[index].0
            ))),
            None => Ok(()),
        }
    }

    /// `isShortOption`: whether a token names one of the options, so cannot be a value.
    fn is_option(&self, token: &str) -> bool {
        let Some(name) = token.strip_prefix('-').filter(|name| !name.is_empty()) else {
            return false;
        };
        let name = name.split_once('=').map_or(name, |(name, _)| name);
        self.letter(name).is_some()
            || name
                .chars()
                .next()
                .is_some_and(|first| self.letter(&first.to_string()).is_some())
    }

    /// The option a name stands for; Commons CLI strips leading hyphens from it first.
    fn letter(&self, name: &str) -> Option<char> {
        let name = name
            .strip_prefix("--")
            .or_else(|| name.strip_prefix('-'))
            .unwrap_or(name);
        let mut chars = name.chars();
        let letter = chars.next().filter(|_| chars.next().is_none())?;
        self.spec
            .iter()
            .any(|&(known, _)| known == letter)
            .then_some(letter)
    }

    fn takes_value(&self, letter: char) -> bool {
        self.spec
            .iter()
            .any(|&(known, value)| known == letter && value)
    }
}

fn unrecognized(token: &str) -> Failure {
    Failure::Message(format!(
        "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: {token}"
    ))
}

/// A value given as a token of its own loses surrounding double quotes, unless more are inside.
fn strip_quotes(token: &str) -> String {
    match token
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        Some(inner) if !inner.contains('"') => inner.to_owned(),
        _ => token.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse, Parsed, Spec};
    use crate::shell::Failure;

    const DELETE: Spec = &[('v', true)];
    const LS: Spec = &[('?', false), ('s', false), ('w', false), ('R', false)];

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_owned).collect()
    }

    fn message(result: Result<Parsed, Failure>) -> String {
        match result {
            Err(Failure::Message(message)) | Err(Failure::Exception(message)) => message,
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn options_come_anywhere_combine_and_take_glued_values() {
        let parsed = parse(LS, &words("ls / -sw")).unwrap();
        assert!(parsed.has('s') && parsed.has('w') && !parsed.has('R'));
        assert_eq!(parsed.args, ["ls", "/"]);
        for line in [
            "delete -v5 /a",
            "delete -v=5 /a",
            "delete /a -v 5",
            "delete -v 5 -v 6 /a",
        ] {
            let parsed = parse(DELETE, &words(line)).unwrap();
            assert_eq!(
                (parsed.value('v'), parsed.args.len()),
                (Some("5"), 2),
                "{line}"
            );
        }
        assert_eq!(
            parse(DELETE, &words("delete -v -1 /a")).unwrap().value('v'),
            Some("-1")
        );
    }

    #[test]
    fn bad_options_fail_as_commons_cli_does() {
        let unrecognized =
            "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: ";
        assert_eq!(
            message(parse(LS, &words("ls -sx /"))),
            format!("{unrecognized}-sx")
        );
        assert_eq!(
            message(parse(LS, &words("ls --s /"))),
            format!("{unrecognized}--s")
        );
        let missing =
            "org.apache.commons.cli.MissingArgumentException: Missing argument for option: v";
        assert_eq!(message(parse(DELETE, &words("delete /a -v"))), missing);
        assert_eq!(message(parse(DELETE, &words("delete -v -v 1 /a"))), missing);
        assert!(message(parse(LS, &words("ls -=x /"))).contains("StringIndexOutOfBounds"));
    }

    #[test]
    fn a_double_dash_ends_the_options() {
        let parsed = parse(LS, &words("ls -- -w")).unwrap();
        assert_eq!(parsed.args, ["ls", "-w"]);
    }
}
