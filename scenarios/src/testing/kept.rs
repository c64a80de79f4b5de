//! The seeds a test has failed on, kept in a file of its own so that every later run replays
//! them before its sweep, as proptest keeps its failures: a seed found by a wide sweep
//! (`ZKLAB_SEEDS=100000`) stays in the default one, and a fixed bug stays fixed. The file is
//! `<directory>/<test name>.seeds`, one `seed N` a line with what it broke as a comment; check
//! it in.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::regressions::{file_stem, make_directory_of};

/// The file that keeps `test`'s failing seeds in `directory`: the test's path with `::` made
/// `-`, so `tests::readers` keeps `tests-readers.seeds`.
pub(crate) fn file(directory: &Path, test: &str) -> PathBuf {
    directory.join(format!("{}.seeds", file_stem(test)))
}

/// The seeds kept in `path`, in the file's order; none if there is no file. A line that is not
/// `seed N` is an error naming it.
pub(crate) fn seeds(path: &Path) -> Result<Vec<u64>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    let mut seeds = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let seed = line
            .strip_prefix("seed ")
            .and_then(|seed| seed.trim().parse().ok())
            .ok_or_else(|| format!("{}:{}: `{line}` is not `seed N`", path.display(), index + 1))?;
        if !seeds.contains(&seed) {
            seeds.push(seed);
        }
    }
    Ok(seeds)
}

/// Adds `seed` to the file at `path` (made, with its directory, if need be), with `why` as its
/// comment.
pub(crate) fn keep(path: &Path, seed: u64, why: &str) -> Result<(), String> {
    let cannot =
        |error: std::io::Error| format!("cannot keep seed {seed} in {}: {error}", path.display());
    make_directory_of(path).map_err(cannot)?;
    let new = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(cannot)?;
    if new {
        writeln!(
            file,
            "# seeds zklab's harness has seen this test fail on, replayed first"
        )
        .map_err(cannot)?;
    }
    let why = why.replace('\n', " ");
    writeln!(file, "seed {seed} # {why}").map_err(cannot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_seed_reads_back_once_and_a_bad_line_is_named() {
        let dir = std::env::temp_dir().join(format!("zklab-kept-{}", std::process::id()));
        let path = file(&dir, "tests::readers see<it>");
        assert!(path.ends_with("tests-readers_see_it_.seeds"), "{path:?}");
        assert_eq!(seeds(&path), Ok(Vec::new()));
        keep(&path, 7, "liveness at 1s").unwrap();
        keep(&path, 7, "liveness at 1s").unwrap();
        keep(&path, 42, "herd\nat 2s").unwrap();
        assert_eq!(seeds(&path), Ok(vec![7, 42]));
        std::fs::write(&path, "seed x\n").unwrap();
        assert!(seeds(&path)
            .unwrap_err()
            .contains(":1: `seed x` is not `seed N`"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
