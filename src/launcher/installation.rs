//! Where ZooKeeper and Java are on this machine, and what a test does when they are not.

use std::env;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::error::LaunchError;

/// How to get a ZooKeeper that [`Installation::find`] will see.
pub const INSTALL_HINT: &str = "install one with `apt-get install -y zookeeper` \
     (or set ZOOKEEPER_HOME to an unpacked release from zookeeper.apache.org)";

/// Set to `1` to make a missing installation fail real-server tests instead of skipping them:
/// CI sets it where ZooKeeper is meant to be present, so a broken install cannot pass silently.
pub const REQUIRE_REAL_ZK: &str = "ZKLAB_REQUIRE_REAL_ZK";

/// Debian's `zookeeper` package puts its jars here.
const DEBIAN_JARS: &str = "/usr/share/java";

/// A ZooKeeper installation: the `java` to run and the server's classpath.
#[derive(Debug, Clone)]
pub struct Installation {
    java: PathBuf,
    classpath: Vec<PathBuf>,
}

impl Installation {
    /// `$ZOOKEEPER_HOME` when it is set (and then only it, so a wrong setting is not silently
    /// bypassed), else Debian's package.
    pub fn find() -> Result<Self, LaunchError> {
        match env::var_os("ZOOKEEPER_HOME") {
            Some(home) => Self::in_home(Path::new(&home)),
            None => Self::debian(),
        }
    }

    /// An unpacked release (`apache-zookeeper-*-bin`): every jar in `home` and `home/lib`, and
    /// `home/conf` first so its logging configuration applies, as the release's `zkEnv.sh` does.
    pub fn in_home(home: &Path) -> Result<Self, LaunchError> {
        let mut jars = Vec::new();
        for dir in [home.to_path_buf(), home.join("lib")] {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            jars.extend(
                entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .filter(|path| path.extension().is_some_and(|ext| ext == "jar")),
            );
        }
        jars.sort();
        let has_server = jars.iter().any(|jar| {
            jar.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("zookeeper-3") || name == "zookeeper.jar")
        });
        if !has_server {
            return Err(LaunchError::NotInstalled(format!(
                "no zookeeper-3.*.jar in {} or its lib/",
                home.display()
            )));
        }
        let conf = home.join("conf");
        let classpath = conf.is_dir().then_some(conf).into_iter().chain(jars);
        Ok(Installation {
            java: java()?,
            classpath: classpath.collect(),
        })
    }

    /// Debian's `zookeeper` package. Its `zookeeper.jar` names its dependencies (jute, netty,
    /// commons, slf4j-api, ...) in its manifest's `Class-Path`, so the classpath needs only that
    /// jar and an slf4j binding: slf4j-simple sends the server's log to stderr, that is to the
    /// server's log file, where a failure can show it.
    fn debian() -> Result<Self, LaunchError> {
        let dir = Path::new(DEBIAN_JARS);
        let server = dir.join("zookeeper.jar");
        if !server.is_file() {
            return Err(LaunchError::NotInstalled(format!(
                "ZOOKEEPER_HOME is not set and there is no {}",
                server.display()
            )));
        }
        let binding = dir.join("slf4j-simple.jar");
        let classpath = std::iter::once(server).chain(binding.is_file().then_some(binding));
        Ok(Installation {
            java: java()?,
            classpath: classpath.collect(),
        })
    }

    /// The `java` that runs the servers.
    pub fn java(&self) -> &Path {
        &self.java
    }

    /// The servers' classpath, in order.
    pub fn classpath(&self) -> &[PathBuf] {
        &self.classpath
    }

    /// The classpath as `java -cp` takes it.
    pub(crate) fn classpath_arg(&self) -> Result<OsString, LaunchError> {
        env::join_paths(&self.classpath)
            .map_err(|e| LaunchError::NotInstalled(format!("unusable classpath entry: {e}")))
    }
}

/// `$JAVA_HOME/bin/java`, else the first `java` on `PATH`.
fn java() -> Result<PathBuf, LaunchError> {
    let from_home = env::var_os("JAVA_HOME").map(|home| Path::new(&home).join("bin/java"));
    let on_path = env::var_os("PATH")
        .into_iter()
        .flat_map(|path| env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("java"));
    from_home
        .into_iter()
        .chain(on_path)
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| LaunchError::NotInstalled("no `java` in JAVA_HOME or on PATH".into()))
}

/// The installation for a real-server test, or `None` after a loud `SKIPPED` line on stderr when
/// there is none (shown even where the test harness captures output). With
/// [`REQUIRE_REAL_ZK`]`=1` a missing installation panics instead, so the test fails.
pub fn installed_or_skip(test: &str) -> Option<Installation> {
    match Installation::find() {
        Ok(installation) => Some(installation),
        Err(e) if env::var_os(REQUIRE_REAL_ZK).is_some_and(|value| value == "1") => {
            panic!("{test}: {REQUIRE_REAL_ZK}=1 but ZooKeeper is missing: {e}")
        }
        Err(e) => {
            // Straight to stderr, not `eprintln!`, which the test harness captures and hides.
            let line = format!("SKIPPED (no ZooKeeper installed): {test}: {e}\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            None
        }
    }
}
