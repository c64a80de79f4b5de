//! Regression files: shrunk failures kept as schedule files in a directory
//! ([`DIRECTORY`] unless told otherwise), which `zklab run` replays before its seeds, and a
//! harness test before its sweep ([`crate::testing`]), so that a fixed bug stays fixed. Check
//! them in, as proptest's regression files are.

use std::path::{Path, PathBuf};

use crate::schedule::Schedule;

/// Where `zklab shrink` saves a schedule and `zklab run` looks for them, from the directory it
/// runs in.
pub const DIRECTORY: &str = "zklab-regressions";

/// The file in [`DIRECTORY`] that `zklab shrink` saves the shrunk `seed` of `scenario` to:
/// `<scenario>-seed<seed>.schedule` (the schedule's own seed may be another).
pub fn default_path(scenario: &str, seed: u64) -> PathBuf {
    schedule_path(Path::new(DIRECTORY), scenario, seed)
}

/// The file in `directory` that keeps the shrunk `seed` of `name` (a scenario, or a harness
/// test): `<name>-seed<seed>.schedule`, a test's `::` written `-` (`tests-readers-seed7`).
pub fn schedule_path(directory: &Path, name: &str, seed: u64) -> PathBuf {
    directory.join(format!("{}-seed{seed}.schedule", file_stem(name)))
}

/// `name` (a scenario's, or a test's path such as `tests::readers`) as the start of a file
/// name: `::` made `-`, and any character a file name may not safely hold made `_`, so
/// `tests::readers` starts `tests-readers`.
pub(crate) fn file_stem(name: &str) -> String {
    name.replace("::", "-")
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
            _ => '_',
        })
        .collect()
}

/// Writes `schedule` to `path`, making its directory if need be.
pub fn save(path: &Path, schedule: &Schedule) -> Result<(), String> {
    save_text(path, &schedule.to_text())
}

/// Writes `text` to `path` (a schedule, a failing run's trace), making its directory if need
/// be; an error names the file.
pub fn save_text(path: &Path, text: &str) -> Result<(), String> {
    let cannot = |error: std::io::Error| format!("cannot write {}: {error}", path.display());
    make_directory_of(path).map_err(cannot)?;
    std::fs::write(path, text).map_err(cannot)
}

/// Makes the directory `path` is in, if it names one and it does not exist yet.
pub(crate) fn make_directory_of(path: &Path) -> std::io::Result<()> {
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(directory) => std::fs::create_dir_all(directory),
        None => Ok(()),
    }
}

/// The schedule in the file at `path`; an error names the file.
pub fn read(path: &Path) -> Result<Schedule, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the schedule {}: {error}", path.display()))?;
    Schedule::parse(&text).map_err(|error| format!("{}: {error}", path.display()))
}

/// Every schedule of `scenario` (a scenario's name, or a harness test's) in `directory`, by file
/// name; none if the directory does not exist. A file that is not a schedule is an error that
/// names it.
pub fn load(directory: &Path, scenario: &str) -> Result<Vec<(PathBuf, Schedule)>, String> {
    let entries = match std::fs::read_dir(directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(format!("cannot read {}: {error}", directory.display())),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "schedule"))
        .collect();
    paths.sort();
    let mut schedules = Vec::new();
    for path in paths {
        let schedule = read(&path)?;
        if schedule.scenario == scenario {
            schedules.push((path, schedule));
        }
    }
    Ok(schedules)
}
