//! `zklab serve`: the simulated ZooKeeper ([`WireService`], the pure server behind ZooKeeper's
//! wire protocol) on TCP, so that any client, in any language, connects to it as to a real
//! server. One tokio task reads each connection and hands its frames to the core; one writes
//! what the core sends it; a clock task ticks the core (expiry, the reaper).
//!
//! It listens on 127.0.0.1 only, reads at most a server's 1 MiB a request, and a connection that
//! sends a malformed frame or handshake is closed alone, with a line on stderr.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use crate::sim::jute::archive::frame_len;
use crate::sim::packet::MAX_REQUEST_LEN;
use crate::sim::wire_service::{ConnId, Control, Outgoing, Ticks, WireService};

/// What to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The port on 127.0.0.1; 0 for any free one.
    pub port: u16,
    /// The seed the sessions' passwords come from.
    pub seed: u64,
    /// The tick and the reaper's interval.
    pub ticks: Ticks,
    /// Stop after this long; `None` runs until the process is stopped.
    pub run_for: Option<Duration>,
    /// A port on 127.0.0.1 for the command port (0 for any free one), which takes ZooKeeper's
    /// `ControllerService` commands; `None` for none.
    pub command_port: Option<u16>,
}

/// What a connection's writer is told.
enum ToWriter {
    Frame(Vec<u8>),
    Close,
}

/// A connection's writer and its reader's task.
struct Connection {
    writer: mpsc::UnboundedSender<ToWriter>,
    reader: Option<AbortHandle>,
}

/// The core and the connections, shared by every task.
struct Served {
    core: Mutex<WireService>,
    connections: Mutex<BTreeMap<ConnId, Connection>>,
}

impl Served {
    fn core(&self) -> MutexGuard<'_, WireService> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connections(&self) -> MutexGuard<'_, BTreeMap<ConnId, Connection>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Carries out what the core asked, in order. Called with the core locked, so that the
    /// frames of two inputs never interleave.
    fn carry_out(&self, outgoing: Vec<Outgoing>) {
        let mut connections = self.connections();
        for out in outgoing {
            match out {
                Outgoing::Send { conn, bytes } => {
                    if let Some(connection) = connections.get(&conn) {
                        let _ = connection.writer.send(ToWriter::Frame(bytes));
                    }
                }
                Outgoing::Close { conn, why } => {
                    if let Some(why) = why {
                        eprintln!("zklab serve: connection {conn} closed: {why}");
                    }
                    if let Some(connection) = connections.remove(&conn) {
                        let _ = connection.writer.send(ToWriter::Close);
                        if let Some(reader) = connection.reader {
                            reader.abort();
                        }
                    }
                }
            }
        }
    }
}

/// The wall clock, since the epoch: a server's ctime and mtime, and its sessions' clock.
fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Serves until `options.run_for` has passed (or forever); `ready` hears the address, and the
/// command port's, once the listeners accept connections.
pub fn serve(
    options: &ServeOptions,
    ready: impl FnOnce(SocketAddr, Option<SocketAddr>),
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", options.port)).await?;
        let commands = match options.command_port {
            Some(port) => Some(TcpListener::bind(("127.0.0.1", port)).await?),
            None => None,
        };
        let command_address = commands.as_ref().map(TcpListener::local_addr).transpose()?;
        ready(listener.local_addr()?, command_address);
        let served = Arc::new(Served {
            core: Mutex::new(WireService::new(options.seed, options.ticks)),
            connections: Mutex::new(BTreeMap::new()),
        });
        tokio::spawn(clock(served.clone()));
        if let Some(commands) = commands {
            tokio::spawn(command_port(commands, served.clone()));
        }
        let accepting = accept(listener, served);
        match options.run_for {
            Some(run_for) => {
                let _ = tokio::time::timeout(run_for, accepting).await;
            }
            None => accepting.await,
        }
        Ok(())
    })
}

/// Ticks the core as often as it asks.
async fn clock(served: Arc<Served>) {
    loop {
        let next = {
            let mut core = served.core();
            let (outgoing, next) = core.tick(now());
            served.carry_out(outgoing);
            next
        };
        tokio::time::sleep(next).await;
    }
}

/// Accepts connections for as long as the server runs. A failed accept (a connection reset
/// before it was taken, no file descriptor left) costs that connection alone: the listener
/// goes on after a pause.
async fn accept(listener: TcpListener, served: Arc<Served>) {
    let mut next: ConnId = 0;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                eprintln!("zklab serve: a connection could not be accepted: {error}");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        next += 1;
        open(stream, next, &served);
    }
}

/// How long the listener waits after a failed accept.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Starts a connection's reader and writer.
fn open(stream: TcpStream, conn: ConnId, served: &Arc<Served>) {
    let (reader, mut writer) = stream.into_split();
    let (to_writer, mut frames) = mpsc::unbounded_channel();
    served.connections().insert(
        conn,
        Connection {
            writer: to_writer,
            reader: None,
        },
    );
    served.core().opened(conn);
    tokio::spawn(async move {
        while let Some(ToWriter::Frame(bytes)) = frames.recv().await {
            if writer.write_all(&bytes).await.is_err() {
                break;
            }
        }
        let _ = writer.shutdown().await;
    });
    let reading = tokio::spawn(read(reader, conn, served.clone()));
    if let Some(connection) = served.connections().get_mut(&conn) {
        connection.reader = Some(reading.abort_handle());
    }
}

/// Reads a connection's frames into the core until it ends; a four-letter word instead of a
/// handshake is answered and the connection closed.
async fn read(mut reader: OwnedReadHalf, conn: ConnId, served: Arc<Served>) {
    let mut first = true;
    let why = loop {
        let mut prefix = [0; 4];
        if reader.read_exact(&mut prefix).await.is_err() {
            break None;
        }
        if std::mem::take(&mut first) && prefix.iter().all(u8::is_ascii_lowercase) {
            let answer = served.core().four_letter_word(&prefix);
            let text = answer.unwrap_or_default().into_bytes();
            if let Some(connection) = served.connections().get(&conn) {
                let _ = connection.writer.send(ToWriter::Frame(text));
            }
            break None;
        }
        let len = match frame_len(prefix, MAX_REQUEST_LEN) {
            Ok(len) => len,
            Err(error) => break Some(error.to_string()),
        };
        let mut record = vec![0; len];
        if reader.read_exact(&mut record).await.is_err() {
            break None;
        }
        let mut core = served.core();
        let outgoing = core.received(conn, &record, now());
        served.carry_out(outgoing);
    };
    let mut core = served.core();
    let mut outgoing = core.gone(conn);
    outgoing.push(Outgoing::Close { conn, why });
    served.carry_out(outgoing);
}

/// Takes the command port's requests, one a connection: `GET /command/<ACTION>[/<parameter>]`
/// answered `200 OK` once carried out, `400 Bad Request` with the reason otherwise.
async fn command_port(listener: TcpListener, served: Arc<Served>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let served = served.clone();
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buffer = [0; 512];
            // The request line is all the port reads; a request longer than a few lines is
            // not one of its commands.
            while !request.windows(4).any(|end| end == b"\r\n\r\n") && request.len() < 4096 {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let line = String::from_utf8_lossy(&request);
            let line = line.lines().next().unwrap_or_default();
            let answer = match command_of(line) {
                Ok(command) => {
                    let mut core = served.core();
                    let outgoing = core.control(command, now());
                    served.carry_out(outgoing);
                    "HTTP/1.0 200 OK\r\n\r\n".to_owned()
                }
                Err(why) => format!("HTTP/1.0 400 Bad Request\r\n\r\n{why}\n"),
            };
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// The command of a request line `GET /command/<ACTION>[/<parameter>] HTTP/1.x`.
fn command_of(line: &str) -> Result<Control, String> {
    let mut words = line.split_whitespace();
    let (method, target) = (words.next(), words.next());
    let path = match (method, target) {
        (Some("GET"), Some(target)) => target.strip_prefix("/command/"),
        _ => None,
    };
    let path = path.ok_or_else(|| format!("not a command: {line:?}"))?;
    let (action, parameter) = match path.split_once('/') {
        Some((action, parameter)) => (action, Some(parameter)),
        None => (path, None),
    };
    Control::parse(action, parameter)
}
