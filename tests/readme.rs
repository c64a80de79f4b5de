//! README.md cannot go stale: its scenario table is `zklab list --markdown`, and every command
//! output it shows is what the command prints.
//!
//! A ```` ```console ```` block holds commands, each on a line `$ zklab ARGS`, followed by the
//! stdout it must print. Arguments are split at spaces (no quoting). A trailing
//! `# exit status N` says the command must exit with N (0 otherwise); any other `# ...` comment
//! is dropped. In the expected output, a line `...` stands for any number of lines and `[..]`
//! for any text within a line, as in trycmd. Commands run in the repository's root.
//!
//! To regenerate the table after a change to the catalogue:
//! `ZKLAB_UPDATE_README=1 cargo test --test readme`.

use std::path::PathBuf;
use std::process::Command;

/// Where the generated table starts in README.md.
const TABLE_START: &str = "<!-- zklab list --markdown -->\n";
/// Where it ends.
const TABLE_END: &str = "<!-- end of zklab list --markdown -->\n";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md is readable")
}

/// Runs zklab in the repository's root: its exit status and stdout.
fn zklab(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(args)
        .current_dir(root())
        .env_remove("RUST_LOG")
        .output()
        .expect("zklab runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code(), stdout)
}

#[test]
fn the_scenario_table_is_zklab_list_markdown() {
    let text = readme();
    let start = text
        .find(TABLE_START)
        .expect("README.md marks its table's start")
        + TABLE_START.len();
    let end = start
        + text[start..]
            .find(TABLE_END)
            .expect("README.md marks its table's end");
    let (status, table) = zklab(&["list", "--markdown"]);
    assert_eq!(status, Some(0));
    if text[start..end] == table {
        return;
    }
    if std::env::var_os("ZKLAB_UPDATE_README").is_some() {
        let updated = format!("{}{table}{}", &text[..start], &text[end..]);
        std::fs::write(root().join("README.md"), updated).expect("README.md is writable");
        return;
    }
    panic!(
        "README.md's scenario table is not what `zklab list --markdown` prints:\n{table}\n\
         regenerate it with: ZKLAB_UPDATE_README=1 cargo test --test readme"
    );
}

/// One command of a console block and what it must print.
struct Example {
    /// The README's line number of the command.
    line: usize,
    args: Vec<String>,
    status: i32,
    expected: Vec<String>,
}

/// Every command of every ```` ```console ```` block of `text`.
fn examples(text: &str) -> Vec<Example> {
    let mut examples: Vec<Example> = Vec::new();
    let mut in_console = false;
    for (index, line) in text.lines().enumerate() {
        if !in_console {
            in_console = line.trim_end() == "```console";
            continue;
        }
        if line.starts_with("```") {
            in_console = false;
        } else if let Some(command) = line.strip_prefix("$ ") {
            let (command, comment) = command.split_once(" #").unwrap_or((command, ""));
            let status = comment
                .trim()
                .strip_prefix("exit status ")
                .map_or(0, |code| code.parse().expect("an exit status is a number"));
            let mut words = command.split_whitespace().map(str::to_owned);
            assert_eq!(
                words.next().as_deref(),
                Some("zklab"),
                "README.md line {}: a console example runs zklab",
                index + 1
            );
            examples.push(Example {
                line: index + 1,
                args: words.collect(),
                status,
                expected: Vec::new(),
            });
        } else {
            let example = examples.last_mut().unwrap_or_else(|| {
                panic!("README.md line {}: output before any command", index + 1)
            });
            example.expected.push(line.to_owned());
        }
    }
    examples
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let pieces: Vec<&str> = pattern.split("[..]").collect();
    let (first, rest) = pieces
        .split_first()
        .expect("split gives one piece at least");
    let Some(mut left) = line.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for piece in middle {
        match left.find(piece) {
            Some(at) => left = &left[at + piece.len()..],
            None => return false,
        }
    }
    left.ends_with(last)
}

/// Whether `lines` match `patterns`, where a pattern `...` stands for any number of lines.
fn lines_match(patterns: &[String], lines: &[&str]) -> bool {
    match patterns.split_first() {
        None => lines.is_empty(),
        Some((pattern, rest)) if pattern == "..." => {
            (0..=lines.len()).any(|skip| lines_match(rest, &lines[skip..]))
        }
        Some((pattern, rest)) => match lines.split_first() {
            Some((line, others)) => line_matches(pattern, line) && lines_match(rest, others),
            None => false,
        },
    }
}

#[test]
fn every_output_shown_in_the_readme_is_what_the_command_prints() {
    let examples = examples(&readme());
    assert!(!examples.is_empty(), "README.md shows no console example");
    let mut stale = Vec::new();
    for example in &examples {
        let args: Vec<&str> = example.args.iter().map(String::as_str).collect();
        let (status, stdout) = zklab(&args);
        let lines: Vec<&str> = stdout.lines().collect();
        if status != Some(example.status) || !lines_match(&example.expected, &lines) {
            stale.push(format!(
                "README.md line {}: `zklab {}` exited with {status:?} (README: {}) and printed:\n\
                 {stdout}README.md shows:\n{}\n",
                example.line,
                args.join(" "),
                example.status,
                example.expected.join("\n"),
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "stale README examples:\n{}",
        stale.join("\n")
    );
}

#[test]
fn wildcards_match_as_trycmd_s_do() {
    assert!(line_matches("a [..] c", "a b b c"));
    assert!(line_matches("[..]zklab replay", "/x/target/zklab replay"));
    assert!(!line_matches("a [..] c", "a b d"));
    assert!(!line_matches("abc", "abcd"));
    let patterns: Vec<String> = ["one", "...", "four"].map(str::to_owned).to_vec();
    assert!(lines_match(&patterns, &["one", "two", "three", "four"]));
    assert!(lines_match(&patterns, &["one", "four"]));
    assert!(!lines_match(&patterns, &["one", "two"]));
}
