//! `zklab serve`: the simulated ZooKeeper ([`WireService`], the pure server behind ZooKeeper's
//! wire protocol, with its faults) on TCP, so that any client, in any language, connects to it
//! as to a real server, or to a real ensemble: one listener per simulated server, so a client
//! given every address moves between them. One tokio task reads each connection and hands its
//! frames to the core;
//! one writes what the core sends it; a clock task ticks the core (expiry, the reaper, held
//! traffic, faults drawn per second). Beside the client port: the command port
//! (`command_port`) and the claims port (`claims`). Everything the core traces is judged as it
//! comes (`verdict`).
//!
//! It listens on 127.0.0.1 only, reads at most a server's 1 MiB a request, takes at most
//! `max_connections` connections, and closes a connection that sends a malformed frame or
//! handshake, or that leaves more than [`MOST_UNWRITTEN`] bytes unread: each costs that
//! connection alone, with a line on stderr.

mod claims;
mod command_port;
mod verdict;

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use zklab_recipes::client::SessionId;
use zklab_recipes::outcome::Outcome;

use crate::sim::jute::archive::frame_len;
use crate::sim::packet::MAX_REQUEST_LEN;
use crate::sim::wire_service::{ConnId, Outgoing, ServeFaults, Ticks, WireService};

pub use claims::parse_claim;
pub use verdict::ServeReport;
use verdict::Verdict;

/// The most bytes a connection may leave unread (its client stalled) before it is closed.
pub const MOST_UNWRITTEN: usize = 16 << 20;

/// What to serve.
pub struct ServeOptions {
    /// The first server's port on 127.0.0.1, the next server's the next port; 0 for any free
    /// ones.
    pub port: u16,
    /// How many servers: 1 is a standalone server, more an ensemble.
    pub servers: usize,
    /// The seed the sessions' passwords and the random faults come from.
    pub seed: u64,
    /// The tick and the reaper's interval.
    pub ticks: Ticks,
    /// Stop after this long; `None` runs until told to stop.
    pub run_for: Option<Duration>,
    /// Stop once no connection has been open for this long.
    pub idle: Option<Duration>,
    /// A port on 127.0.0.1 for the command port (0 for any free one), which takes ZooKeeper's
    /// `ControllerService` commands; `None` for none.
    pub command_port: Option<u16>,
    /// A port on 127.0.0.1 for the claims port (0 for any free one); `None` for none.
    pub claims_port: Option<u16>,
    /// The faults to strike.
    pub faults: ServeFaults,
    /// The most connections open at once; more are closed as they come.
    pub max_connections: usize,
    /// How many may hold a role claimed `shared` at once (a semaphore's leases); `None` for
    /// any number (read locks).
    pub shared_by: Option<usize>,
    /// Where the trace, the picture and the schedule go.
    pub out: PathBuf,
}

/// Where a running `zklab serve` listens.
#[derive(Clone, Debug)]
pub struct Listening {
    /// Each server's client port.
    pub clients: Vec<SocketAddr>,
    /// The command port, if asked for.
    pub commands: Option<SocketAddr>,
    /// The claims port, if asked for.
    pub claims: Option<SocketAddr>,
}

/// What a connection's writer is told.
enum ToWriter {
    Frame(Vec<u8>),
    Close,
}

/// A connection's writer, what it has not yet written, and its reader's task.
struct Connection {
    writer: mpsc::UnboundedSender<ToWriter>,
    unwritten: Arc<AtomicUsize>,
    reader: Option<AbortHandle>,
}

/// The core, the connections and the verdict, shared by every task.
struct Served {
    core: Mutex<WireService>,
    connections: Mutex<BTreeMap<ConnId, Connection>>,
    /// `None` once the run has ended.
    verdict: Mutex<Option<Verdict>>,
    /// A client came since the clock last looked, taken or refused: a client refused while
    /// its servers are down or electing is still there, so `--idle` waits for it.
    knocked: AtomicBool,
}

impl Listening {
    /// The connect string of the servers, as clients take it: `host:port,host:port`.
    pub fn connect_string(&self) -> String {
        let addresses: Vec<String> = self.clients.iter().map(ToString::to_string).collect();
        addresses.join(",")
    }
}

impl Served {
    fn core(&self) -> MutexGuard<'_, WireService> {
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn connections(&self) -> MutexGuard<'_, BTreeMap<ConnId, Connection>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn verdict(&self) -> MutexGuard<'_, Option<Verdict>> {
        self.verdict.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands the core one input; what it traced is judged and what it asked is carried out,
    /// with the core locked, so that neither the frames nor the trace of two inputs interleave.
    fn input(&self, input: impl FnOnce(&mut WireService) -> Vec<Outgoing>) {
        let mut core = self.core();
        let outgoing = input(&mut core);
        self.settle(&mut core, outgoing);
    }

    /// A client's claim, traced and judged at once.
    fn claim(&self, session: SessionId, outcome: Outcome, now: Duration) -> Result<(), String> {
        let mut core = self.core();
        let told = core.claim(session, outcome, now);
        self.settle(&mut core, Vec::new());
        told
    }

    fn settle(&self, core: &mut WireService, outgoing: Vec<Outgoing>) {
        let trace = core.take_trace();
        if !trace.entries().is_empty() {
            if let Some(verdict) = self.verdict().as_mut() {
                verdict.extend(trace);
            }
        }
        let stalled = self.carry_out(outgoing);
        for conn in stalled {
            eprintln!(
                "zklab serve: connection {conn} closed: it left {MOST_UNWRITTEN} bytes unread"
            );
            let mut gone = core.gone(conn, now());
            gone.push(Outgoing::Close { conn, why: None });
            self.settle(core, gone);
        }
    }

    /// Carries out what the core asked, in order; returns the connections whose clients
    /// left too much unread.
    fn carry_out(&self, outgoing: Vec<Outgoing>) -> Vec<ConnId> {
        let mut connections = self.connections();
        let mut stalled = Vec::new();
        for out in outgoing {
            match out {
                Outgoing::Send { conn, bytes } => {
                    let Some(connection) = connections.get(&conn) else {
                        continue;
                    };
                    let unwritten = connection
                        .unwritten
                        .fetch_add(bytes.len(), Ordering::SeqCst);
                    if unwritten + bytes.len() > MOST_UNWRITTEN {
                        if !stalled.contains(&conn) {
                            stalled.push(conn);
                        }
                        continue;
                    }
                    let _ = connection.writer.send(ToWriter::Frame(bytes));
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
        stalled
    }
}

/// The wall clock, since the epoch: a server's ctime and mtime, and its sessions' clock.
fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Serves until `options.run_for` has passed, no connection has been open for
/// `options.idle`, or `stop` says so; `ready` hears where it listens once it accepts
/// connections. Returns the run's verdict.
pub fn serve(
    options: ServeOptions,
    ready: impl FnOnce(Listening),
    stop: impl Fn() -> bool,
) -> io::Result<ServeReport> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut listeners = Vec::with_capacity(options.servers);
        for server in 0..options.servers {
            let port = match options.port {
                0 => 0,
                first => u16::try_from(usize::from(first) + server)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "ports past 65535"))?,
            };
            listeners.push(TcpListener::bind(("127.0.0.1", port)).await?);
        }
        let bind = |port: Option<u16>| async move {
            match port {
                Some(port) => TcpListener::bind(("127.0.0.1", port)).await.map(Some),
                None => Ok(None),
            }
        };
        let commands = bind(options.command_port).await?;
        let claims = bind(options.claims_port).await?;
        let address = |listener: &Option<TcpListener>| {
            listener.as_ref().map(TcpListener::local_addr).transpose()
        };
        let verdict = Verdict::start(&options.out, options.shared_by)?;
        let clients = listeners.iter().map(TcpListener::local_addr);
        let listening = Listening {
            clients: clients.collect::<io::Result<_>>()?,
            commands: address(&commands)?,
            claims: address(&claims)?,
        };
        let (seed, servers) = (options.seed, options.servers);
        let core = WireService::new(seed, servers, options.ticks, options.faults, now());
        let served = Arc::new(Served {
            core: Mutex::new(core),
            connections: Mutex::new(BTreeMap::new()),
            verdict: Mutex::new(Some(verdict)),
            knocked: AtomicBool::new(false),
        });
        ready(listening);
        if let Some(commands) = commands {
            tokio::spawn(command_port::command_port(commands, served.clone()));
        }
        if let Some(claims) = claims {
            tokio::spawn(claims::claims_port(claims, served.clone()));
        }
        let next_conn = Arc::new(AtomicU64::new(0));
        for (server, listener) in listeners.into_iter().enumerate() {
            let accepting = Accepting {
                server,
                served: served.clone(),
                max_connections: options.max_connections,
                next_conn: next_conn.clone(),
            };
            tokio::spawn(accept(listener, accepting));
        }
        let clock = clock(served.clone(), options.idle, stop);
        let run_for = options.run_for.unwrap_or(Duration::MAX);
        tokio::select! {
            _ = clock => {}
            _ = tokio::time::sleep(run_for) => {}
        }
        served.input(|core| {
            core.end();
            Vec::new()
        });
        let core = served.core();
        let (schedule, counts) = (core.faults().schedule().to_vec(), core.faults().counts());
        let verdict = served.verdict().take().expect("the run ends once");
        drop(core);
        verdict.finish(&schedule, counts)
    })
}

/// Ticks the core as often as it asks, until `stop` says so or no connection has been open,
/// nor a client come, for `idle`.
async fn clock(served: Arc<Served>, idle: Option<Duration>, stop: impl Fn() -> bool) {
    let mut idle_since = Some(Instant::now());
    loop {
        let mut next = Duration::ZERO;
        served.input(|core| {
            let (outgoing, wait) = core.tick(now());
            next = wait;
            if core.connections() > 0 || served.knocked.swap(false, Ordering::SeqCst) {
                idle_since = None;
            } else if idle_since.is_none() {
                idle_since = Some(Instant::now());
            }
            outgoing
        });
        let idled = idle
            .zip(idle_since)
            .is_some_and(|(idle, since)| since.elapsed() >= idle);
        if idled || stop() {
            return;
        }
        tokio::time::sleep(next.min(STOP_CHECK)).await;
    }
}

/// How often the clock looks whether it was told to stop.
const STOP_CHECK: Duration = Duration::from_millis(200);

/// What one server's listener shares with the others.
struct Accepting {
    server: usize,
    served: Arc<Served>,
    max_connections: usize,
    /// The connections' numbers, counted over every server.
    next_conn: Arc<AtomicU64>,
}

/// Accepts one server's connections for as long as the run goes on. A failed accept (a
/// connection reset before it was taken, no file descriptor left) costs that connection alone:
/// the listener goes on after a pause. A connection past `max_connections` is closed at once.
async fn accept(listener: TcpListener, accepting: Accepting) {
    let Accepting {
        server,
        served,
        max_connections,
        next_conn,
    } = accepting;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                eprintln!("zklab serve: a connection could not be accepted: {error}");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        served.knocked.store(true, Ordering::SeqCst);
        if served.core().connections() >= max_connections {
            eprintln!("zklab serve: a connection refused: {max_connections} are open already");
            continue;
        }
        let conn: ConnId = next_conn.fetch_add(1, Ordering::SeqCst) + 1;
        if !served.core().opened(conn, server, now()).is_empty() {
            eprintln!(
                "zklab serve: a connection to server {server} refused: the command port said \
                 so, or the server is down"
            );
            continue;
        }
        let _ = stream.set_nodelay(true);
        open(stream, conn, server, &served);
    }
}

/// How long the listener waits after a failed accept.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Starts the reader and the writer of a connection the core has taken.
fn open(stream: TcpStream, conn: ConnId, server: usize, served: &Arc<Served>) {
    let (reader, mut writer) = stream.into_split();
    let (to_writer, mut frames) = mpsc::unbounded_channel();
    let unwritten = Arc::new(AtomicUsize::new(0));
    served.connections().insert(
        conn,
        Connection {
            writer: to_writer,
            unwritten: unwritten.clone(),
            reader: None,
        },
    );
    tokio::spawn(async move {
        while let Some(ToWriter::Frame(bytes)) = frames.recv().await {
            if writer.write_all(&bytes).await.is_err() {
                break;
            }
            unwritten.fetch_sub(bytes.len(), Ordering::SeqCst);
        }
        let _ = writer.shutdown().await;
    });
    let reading = tokio::spawn(read(reader, conn, server, served.clone()));
    if let Some(connection) = served.connections().get_mut(&conn) {
        connection.reader = Some(reading.abort_handle());
    }
}

/// Reads a connection's frames into the core until it ends; a four-letter word instead of a
/// handshake is answered and the connection closed.
async fn read(mut reader: OwnedReadHalf, conn: ConnId, server: usize, served: Arc<Served>) {
    let mut first = true;
    let why = loop {
        let mut prefix = [0; 4];
        if reader.read_exact(&mut prefix).await.is_err() {
            break None;
        }
        if std::mem::take(&mut first) && prefix.iter().all(u8::is_ascii_lowercase) {
            let answer = served.core().four_letter_word(&prefix, server);
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
        served.input(|core| core.received(conn, &record, now()));
    };
    served.input(|core| {
        let mut outgoing = core.gone(conn, now());
        outgoing.push(Outgoing::Close { conn, why });
        outgoing
    });
}
