//! Which seeds a harness run takes from its environment, and the one command that replays a
//! seed: `ZKLAB_SEED=S` runs seed S alone and prints its whole trace, `ZKLAB_SEEDS=N` widens
//! the sweep to N seeds (as madsim's `MADSIM_TEST_SEED` and `MADSIM_TEST_NUM` do),
//! `ZKLAB_SCHEDULE=FILE` runs a kept schedule alone and prints its whole trace, and
//! `ZKLAB_SHRINK=1` shrinks a failing seed to its fewest faults, and `ZKLAB_THREADS=N` runs
//! the seeds on N threads. `ZKLAB_CARGO_TEST`, set by a crate's `cargo simtest` alias, names
//! the cargo command its simulated tests run under, for the replay command.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// The variable that replays one seed.
pub const SEED_VARIABLE: &str = "ZKLAB_SEED";

/// The variable that sets how many seeds a sweep runs.
pub const SEEDS_VARIABLE: &str = "ZKLAB_SEEDS";

/// The variable that replays one schedule file.
pub const SCHEDULE_VARIABLE: &str = "ZKLAB_SCHEDULE";

/// The variable that, set to anything but `0`, shrinks a failing seed.
pub const SHRINK_VARIABLE: &str = "ZKLAB_SHRINK";

/// The variable that sets how many threads run a sweep's seeds.
pub const THREADS_VARIABLE: &str = "ZKLAB_THREADS";

/// The variable that names the cargo command running the tests (`simtest` for a crate's alias
/// that gives the simulator's flag to its tests alone); a replay command uses it.
pub const CARGO_TEST_VARIABLE: &str = "ZKLAB_CARGO_TEST";

/// What the environment asks of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seeds {
    /// These seeds, judged one after another.
    Sweep(Range<u64>),
    /// This seed alone, its whole trace printed.
    Replay(u64),
    /// The schedule in this file alone, its whole trace printed.
    Schedule(PathBuf),
}

/// Reads a variable; unset and empty are alike.
fn read(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// The seeds to run: `default`, unless the environment says otherwise.
pub(crate) fn from_environment(default: Range<u64>) -> Result<Seeds, String> {
    let schedule = read(SCHEDULE_VARIABLE);
    seeds(default, read(SEED_VARIABLE), read(SEEDS_VARIABLE), schedule)
}

/// Whether the environment asks for a failing seed to be shrunk.
pub(crate) fn shrinking() -> bool {
    read(SHRINK_VARIABLE).is_some_and(|value| value.trim() != "0")
}

/// The threads a sweep runs on: `ZKLAB_THREADS` if set, else `asked`. A value that is no
/// thread count is an error, not ignored: the run would silently not be the one asked for.
pub(crate) fn threads_from_environment(asked: usize) -> Result<usize, String> {
    threads(asked, read(THREADS_VARIABLE))
}

fn threads(asked: usize, variable: Option<String>) -> Result<usize, String> {
    let Some(value) = variable else {
        return Ok(asked);
    };
    match value.trim().parse::<usize>() {
        Ok(threads) if threads > 0 => Ok(threads),
        _ => Err(format!(
            "{THREADS_VARIABLE}=`{value}`: the number of threads is a whole number from 1 to {}",
            usize::MAX
        )),
    }
}

fn seeds(
    default: Range<u64>,
    seed: Option<String>,
    count: Option<String>,
    schedule: Option<String>,
) -> Result<Seeds, String> {
    if let Some(schedule) = schedule {
        return match seed {
            Some(_) => Err(format!(
                "{SEED_VARIABLE} and {SCHEDULE_VARIABLE} each replay one run: set one"
            )),
            None => Ok(Seeds::Schedule(PathBuf::from(schedule))),
        };
    }
    if let Some(seed) = seed {
        return match seed.trim().parse() {
            Ok(seed) => Ok(Seeds::Replay(seed)),
            Err(_) => Err(format!(
                "{SEED_VARIABLE}=`{seed}`: a seed is a whole number from 0 to {}",
                u64::MAX
            )),
        };
    }
    let Some(count) = count else {
        return Ok(Seeds::Sweep(default));
    };
    let first = default.start;
    match count.trim().parse::<u64>() {
        Ok(count) if count > 0 && first.checked_add(count).is_some() => {
            Ok(Seeds::Sweep(first..first + count))
        }
        _ => Err(format!(
            "{SEEDS_VARIABLE}=`{count}`: the number of seeds is a whole number from 1 to {}",
            u64::MAX - first
        )),
    }
}

/// What a replay command sets to replay one run: a seed, or a schedule file.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Replayed<'a> {
    /// This seed, its faults drawn.
    Seed(u64),
    /// The schedule in this file.
    Schedule(&'a Path),
}

/// The command that replays `run` of the running test `test` (or of the running program, when
/// `None`): the variable that names it, then `cargo test` (or the crate's own command for it)
/// or `cargo run` of this very target, with the `RUSTFLAGS` it was built with, if any.
pub(crate) fn command(run: Replayed, test: Option<&str>) -> String {
    let exe = std::env::current_exe().unwrap_or_default();
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let package = std::env::var("CARGO_PKG_NAME").ok();
    let test_command = std::env::var(CARGO_TEST_VARIABLE).ok();
    let rustflags = std::env::var("RUSTFLAGS")
        .ok()
        .filter(|flags| !flags.is_empty());
    let invocation = Invocation {
        package: package.as_deref(),
        test_command: test_command.as_deref(),
        rustflags: rustflags.as_deref(),
    };
    cargo_command(run, test, &exe, Path::new(&manifest), &invocation)
}

/// How cargo was asked to run the target, as far as the environment tells.
#[derive(Default)]
struct Invocation<'a> {
    /// The package (`CARGO_PKG_NAME`).
    package: Option<&'a str>,
    /// The cargo command that runs tests, if not `test` ([`CARGO_TEST_VARIABLE`]).
    test_command: Option<&'a str>,
    /// The environment's `RUSTFLAGS`, which replace the configuration's.
    rustflags: Option<&'a str>,
}

fn cargo_command(
    run: Replayed,
    test: Option<&str>,
    exe: &Path,
    manifest: &Path,
    invocation: &Invocation,
) -> String {
    // Only the value is quoted: the shell takes a quoted `NAME=value` for a command's name.
    let mut setting = match run {
        Replayed::Seed(seed) => format!("{SEED_VARIABLE}={seed}"),
        Replayed::Schedule(path) => {
            let path = shell_quoted(&path.display().to_string());
            format!("{SCHEDULE_VARIABLE}={path}")
        }
    };
    if let Some(flags) = invocation.rustflags {
        setting = format!("{setting} RUSTFLAGS={}", shell_quoted(flags));
    }
    let mut words = vec!["cargo".to_owned()];
    let subcommand = match test {
        Some(_) => invocation.test_command.unwrap_or("test"),
        None => "run",
    };
    words.push(subcommand.to_owned());
    let dir = exe.parent();
    let dir_name = |dir: Option<&Path>| {
        dir.and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .map(str::to_owned)
    };
    let (kind, profile) = match dir_name(dir).as_deref() {
        Some(kind @ ("examples" | "deps")) => {
            (kind.to_owned(), dir_name(dir.and_then(Path::parent)))
        }
        _ => ("bin".to_owned(), dir_name(dir)),
    };
    match profile.as_deref() {
        Some("debug") | None => {}
        Some("release") => words.push("--release".to_owned()),
        Some(other) => words.push(format!("--profile={other}")),
    }
    if let Some(package) = invocation.package {
        words.extend(["-p".to_owned(), package.to_owned()]);
    }
    let stem = exe.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let name = without_hash(stem);
    let integration_test = ["tests/{}.rs", "tests/{}/main.rs"]
        .iter()
        .any(|form| manifest.join(form.replace("{}", name)).is_file());
    let target = match kind.as_str() {
        "examples" => vec!["--example", name],
        "deps" if integration_test => vec!["--test", name],
        "deps" => vec!["--lib"],
        _ => vec!["--bin", name],
    };
    words.extend(target.into_iter().map(str::to_owned));
    if let Some(test) = test {
        words.extend(["--".to_owned(), test.to_owned(), "--exact".to_owned()]);
    }
    let quoted: Vec<String> = words.iter().map(|word| shell_quoted(word)).collect();
    format!("{setting} {}", quoted.join(" "))
}

/// A test binary's name without the hash cargo appends (`config_watcher-0a1b2c3d4e5f6a7b`).
fn without_hash(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    }
}

/// `word` as a POSIX shell reads it back: as it is when it holds nothing the shell treats
/// specially, else in single quotes.
pub fn shell_quoted(word: &str) -> String {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-_=.,:/+@%".contains(&b);
    if !word.is_empty() && word.bytes().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(text: &str) -> Option<String> {
        Some(text.to_owned())
    }

    #[test]
    fn the_environment_replays_one_seed_or_widens_the_sweep() {
        assert_eq!(seeds(0..10, None, None, None), Ok(Seeds::Sweep(0..10)));
        assert_eq!(
            seeds(0..10, some("7"), some("3"), None),
            Ok(Seeds::Replay(7))
        );
        assert_eq!(
            seeds(5..10, None, some("100"), None),
            Ok(Seeds::Sweep(5..105))
        );
        for bad in ["0", "-1", "many", "18446744073709551615"] {
            let error = seeds(5..10, None, some(bad), None).unwrap_err();
            assert!(error.starts_with("ZKLAB_SEEDS=`"), "{error}");
        }
        assert!(seeds(0..1, some("x"), None, None)
            .unwrap_err()
            .contains("a seed is"));
        let kept = some("kept/t-seed7.schedule");
        let schedule = Seeds::Schedule(PathBuf::from("kept/t-seed7.schedule"));
        assert_eq!(seeds(0..10, None, some("3"), kept.clone()), Ok(schedule));
        assert!(seeds(0..10, some("7"), None, kept)
            .unwrap_err()
            .contains("set one"));
    }

    #[test]
    fn the_environment_sets_the_threads_or_is_refused_by_name() {
        assert_eq!(threads(4, None), Ok(4));
        assert_eq!(threads(4, some("1")), Ok(1));
        assert_eq!(threads(1, some(" 16 ")), Ok(16));
        for bad in ["0", "-2", "two", "1.5", "99999999999999999999999"] {
            let error = threads(4, some(bad)).unwrap_err();
            assert!(
                error.starts_with(&format!("ZKLAB_THREADS=`{bad}`: ")),
                "{error}"
            );
        }
    }

    #[test]
    fn the_command_runs_the_very_target_and_test_that_failed() {
        let none = Path::new("/nowhere");
        let example = Path::new("/p/target/debug/examples/watcher-0123456789abcdef");
        let test = Some("tests::sees_the_last");
        let app = Invocation {
            package: Some("app"),
            ..Invocation::default()
        };
        assert_eq!(
            cargo_command(Replayed::Seed(7), test, example, none, &app),
            "ZKLAB_SEED=7 cargo test -p app --example watcher -- tests::sees_the_last --exact"
        );
        let program = Path::new("/p/target/release/examples/watcher");
        let plain = Invocation::default();
        assert_eq!(
            cargo_command(Replayed::Seed(7), None, program, none, &plain),
            "ZKLAB_SEED=7 cargo run --release --example watcher"
        );
        let unit = Path::new("/p/target/debug/deps/my_app-0123456789abcdef");
        assert_eq!(
            cargo_command(Replayed::Seed(1), Some("t"), unit, none, &plain),
            "ZKLAB_SEED=1 cargo test --lib -- t --exact"
        );
        let kept = Replayed::Schedule(Path::new("kept/a b.schedule"));
        assert_eq!(
            cargo_command(kept, Some("t"), unit, none, &plain),
            "ZKLAB_SCHEDULE='kept/a b.schedule' cargo test --lib -- t --exact"
        );
        let alias = Invocation {
            test_command: Some("simtest"),
            ..Invocation::default()
        };
        assert_eq!(
            cargo_command(Replayed::Seed(1), Some("t"), unit, none, &alias),
            "ZKLAB_SEED=1 cargo simtest --lib -- t --exact"
        );
        let flagged = Invocation {
            rustflags: Some("-D warnings --cfg madsim"),
            ..Invocation::default()
        };
        assert_eq!(
            cargo_command(Replayed::Seed(1), Some("t"), unit, none, &flagged),
            "ZKLAB_SEED=1 RUSTFLAGS='-D warnings --cfg madsim' cargo test --lib -- t --exact"
        );
    }

    #[test]
    fn words_the_shell_would_split_are_quoted() {
        assert_eq!(shell_quoted("--faults=all"), "--faults=all");
        assert_eq!(shell_quoted("reorder, crash"), "'reorder, crash'");
        assert_eq!(shell_quoted("it's"), r"'it'\''s'");
        assert_eq!(shell_quoted(""), "''");
    }
}
