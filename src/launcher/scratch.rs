//! A temporary directory that is removed when dropped, by hand to spare a dependency.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the directories of one process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A fresh directory under the system's temporary directory, removed with its contents on drop.
#[derive(Debug)]
pub(crate) struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// A new empty directory named `zklab-<label>-<pid>-<n>`; a leftover of a crashed run with
    /// the same name is skipped, never reused.
    pub(crate) fn new(label: &str) -> io::Result<Self> {
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let name = format!("zklab-{label}-{}-{n}", std::process::id());
            let path = std::env::temp_dir().join(name);
            match fs::create_dir(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}
