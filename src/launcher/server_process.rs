//! One ZooKeeper JVM: its directory, its `zoo.cfg`, its process and its log.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::sim::acl::super_digest;

use super::error::LaunchError;
use super::installation::Installation;
use super::probe::{probe_mode, Mode};
use super::scratch::ScratchDir;

/// How long a server (or an ensemble's election) may take to serve. Startup takes about half a
/// second and a three-member election about one more; the rest is slack for a loaded machine.
pub(crate) const STARTUP_BOUND: Duration = Duration::from_secs(30);

/// How often readiness is probed while waiting.
const POLL: Duration = Duration::from_millis(50);

/// Lines of a log shown in an error.
const TAIL_LINES: usize = 40;

/// The JVM's flags: a capped heap, and the C1 compiler only, which a short-lived test server
/// never misses. Measured on two cores, C1 alone cut the time to serve by about 10% standalone
/// and 15-20% for three members starting together; `-XX:+UseSerialGC` added nothing.
const JVM_FLAGS: &[&str] = &[
    "-Xmx256m",
    "-XX:TieredStopAtLevel=1",
    "-Dorg.slf4j.simpleLogger.showDateTime=true",
    // TTL nodes exist only with the extended types on.
    "-Dzookeeper.extendedTypesEnabled=true",
    // The reaper of containers and TTL nodes looks once an hour: a test meets it only on a
    // server started to reap sooner (`Standalone::start_reaping`), never at a moment of the
    // wall clock's choosing.
    "-Dznode.container.checkIntervalMs=3600000",
];

/// A server's process and files. Its directory holds `zoo.cfg`, `data/` (the `dataDir`) and
/// `server.log` (stdout and stderr of every run, appended, so a restart keeps the history).
#[derive(Debug)]
pub(crate) struct ServerProcess {
    name: String,
    java: PathBuf,
    classpath: std::ffi::OsString,
    /// The main class, or a Java source file the JVM runs as one.
    main: std::ffi::OsString,
    /// `-D` system properties for the JVM.
    properties: Vec<String>,
    client_port: u16,
    process: Option<Child>,
    // Removed only after `Drop::drop` has killed the process, as fields drop after it.
    dir: ScratchDir,
}

impl ServerProcess {
    /// Writes the directory and `zoo.cfg` of a server named `name` (in errors) that will run
    /// `main_class` on `client_port`; `quorum` holds the config lines beyond a standalone's, and
    /// `myid` is the member's id in a quorum. Nothing runs until [`ServerProcess::spawn`].
    pub(crate) fn prepare(
        installation: &Installation,
        name: String,
        main_class: &'static str,
        client_port: u16,
        quorum: &str,
        myid: Option<usize>,
    ) -> Result<Self, LaunchError> {
        let dir = ScratchDir::new("zookeeper")
            .map_err(|e| LaunchError::io("creating a temporary directory", e))?;
        let data = dir.path().join("data");
        fs::create_dir(&data).map_err(|e| LaunchError::io(format!("creating {data:?}"), e))?;
        if let Some(id) = myid {
            let file = data.join("myid");
            fs::write(&file, format!("{id}\n"))
                .map_err(|e| LaunchError::io(format!("writing {file:?}"), e))?;
        }
        let config = format!(
            "tickTime=2000\n\
             dataDir={}\n\
             clientPort={client_port}\n\
             clientPortAddress=127.0.0.1\n\
             admin.enableServer=false\n\
             4lw.commands.whitelist=*\n\
             {quorum}",
            data.display()
        );
        let file = dir.path().join("zoo.cfg");
        fs::write(&file, config).map_err(|e| LaunchError::io(format!("writing {file:?}"), e))?;
        Ok(ServerProcess {
            name,
            java: installation.java().to_path_buf(),
            classpath: installation.classpath_arg()?,
            main: main_class.into(),
            properties: Vec::new(),
            client_port,
            process: None,
            dir,
        })
    }

    /// Adds a `-D` system property, after the JVM's flags (a later one wins).
    pub(crate) fn add_property(&mut self, property: String) {
        self.properties.push(property);
    }

    /// The server's own directory, which holds its `zoo.cfg`.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `main` (a class, or a Java source file) with the `-D` `properties` and the extra
    /// `jars` on the classpath, instead of what [`ServerProcess::prepare`] was given.
    pub(crate) fn launch_with(
        &mut self,
        main: impl Into<std::ffi::OsString>,
        properties: Vec<String>,
        jars: &[PathBuf],
    ) -> Result<(), LaunchError> {
        self.main = main.into();
        self.properties = properties;
        let mut classpath: Vec<PathBuf> = std::env::split_paths(&self.classpath).collect();
        classpath.extend(jars.iter().cloned());
        self.classpath = std::env::join_paths(classpath)
            .map_err(|e| LaunchError::NotInstalled(format!("unusable classpath entry: {e}")))?;
        Ok(())
    }

    /// Starts the JVM, its output appended to `server.log`. Does not wait for it to serve.
    pub(crate) fn spawn(&mut self) -> Result<(), LaunchError> {
        self.kill()?;
        let log_path = self.dir.path().join("server.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| LaunchError::io(format!("opening {log_path:?}"), e))?;
        let stderr = log
            .try_clone()
            .map_err(|e| LaunchError::io(format!("sharing {log_path:?}"), e))?;
        // zklab's super user, as the simulated servers have it (`acl::SUPER_USER`).
        let super_digest = format!(
            "-Dzookeeper.DigestAuthenticationProvider.superDigest={}",
            super_digest()
        );
        let child = Command::new(&self.java)
            .args(JVM_FLAGS)
            .arg(super_digest)
            .args(
                self.properties
                    .iter()
                    .map(|property| format!("-D{property}")),
            )
            .arg("-cp")
            .arg(&self.classpath)
            .arg(&self.main)
            .arg(self.dir.path().join("zoo.cfg"))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(stderr)
            .spawn()
            .map_err(|e| {
                LaunchError::io(format!("starting {} with {:?}", self.name, self.java), e)
            })?;
        self.process = Some(child);
        Ok(())
    }

    /// Kills the process with SIGKILL and waits until it is gone, so its ports are free again.
    /// A server that is not running is left alone.
    pub(crate) fn kill(&mut self) -> Result<(), LaunchError> {
        let Some(mut child) = self.process.take() else {
            return Ok(());
        };
        let waited = child.kill().and_then(|()| child.wait());
        waited
            .map(drop)
            .map_err(|e| LaunchError::io(format!("killing {}", self.name), e))
    }

    /// The process id while the server runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Child::id)
    }

    /// Whether the server was started and not killed (it may have died since).
    pub(crate) fn is_started(&self) -> bool {
        self.process.is_some()
    }

    /// The port clients connect to.
    pub(crate) fn client_port(&self) -> u16 {
        self.client_port
    }

    /// The server's mode, or `None` when it is not running or not serving.
    pub(crate) fn mode(&self) -> Option<Mode> {
        self.process
            .as_ref()
            .and_then(|_| probe_mode(self.client_port))
    }

    /// An error if the process has exited on its own, with the end of its log; the process is
    /// reaped and forgotten.
    fn check_alive(&mut self) -> Result<(), LaunchError> {
        let Some(child) = self.process.as_mut() else {
            return Ok(());
        };
        match child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => {
                self.process = None;
                Err(LaunchError::Exited {
                    server: self.name.clone(),
                    status,
                    log_tail: self.log_tail(),
                })
            }
            Err(e) => Err(LaunchError::io(format!("watching {}", self.name), e)),
        }
    }

    /// The last lines of `server.log`, headed by the server's name. The path is left out: the
    /// directory is gone by the time anyone reads the error.
    fn log_tail(&self) -> String {
        let path = self.dir.path().join("server.log");
        let text = File::open(&path)
            .and_then(|mut file| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut file, &mut text).map(|_| text)
            })
            .unwrap_or_else(|e| format!("(unreadable: {e})"));
        let lines: Vec<&str> = text.lines().filter(|line| !is_probe_echo(line)).collect();
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
        format!("--- {} ---\n{tail}", self.name)
    }
}

/// Whether a log line only records one of our own `srvr` probes, which would otherwise fill
/// the tail of a server that is slow to serve.
fn is_probe_echo(line: &str) -> bool {
    line.contains("Processing srvr command")
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}

/// Polls until `ready(servers)`, for at most [`STARTUP_BOUND`]. A started server that exits
/// meanwhile ends the wait with its log; a timeout shows the logs of the started servers that do
/// not serve (or of all started ones, when all serve but `ready` still says no).
pub(crate) fn wait_until(
    servers: &mut [ServerProcess],
    waiting_for: &str,
    ready: impl Fn(&[ServerProcess]) -> bool,
) -> Result<(), LaunchError> {
    let started = Instant::now();
    loop {
        for server in servers.iter_mut() {
            server.check_alive()?;
        }
        if ready(servers) {
            return Ok(());
        }
        if started.elapsed() > STARTUP_BOUND {
            let started_ones: Vec<&ServerProcess> =
                servers.iter().filter(|s| s.is_started()).collect();
            let silent: Vec<&&ServerProcess> =
                started_ones.iter().filter(|s| s.mode().is_none()).collect();
            let shown: Vec<String> = if silent.is_empty() {
                started_ones.iter().map(|s| s.log_tail()).collect()
            } else {
                silent.iter().map(|s| s.log_tail()).collect()
            };
            return Err(LaunchError::Timeout {
                waiting_for: waiting_for.into(),
                after: started.elapsed(),
                log_tail: shown.join("\n"),
            });
        }
        thread::sleep(POLL);
    }
}
