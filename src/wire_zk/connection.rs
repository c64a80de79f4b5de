//! The task behind a [`WireZk`](super::WireZk) session: it connects (to each host in turn),
//! presents the session, sets its watches and identities again after a break, writes what the
//! handles send, reads replies and notifications in wire order, pings, and notices a dead
//! connection by its silence, as ZooKeeper's `ClientCnxn` does.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{interval, timeout, Instant};

use crate::recipes::client::{SessionEvent, ZkError, ZkEvent};
use crate::sim::jute::archive::{frame, frame_len, Malformed, MAX_REPLY_LEN};
use crate::sim::jute::codes::{self, xid};
use crate::sim::jute::handshake::{ConnectRequest, ConnectResponse, PROTOCOL_VERSION};
use crate::sim::jute::reply::{decode_notification, decode_reply, ReplyHeader};
use crate::sim::jute::request::{Request, SetWatches};

use super::session::Phase;
use super::Shared;

/// How long the task waits before trying the hosts again after none answered.
const RETRY_PAUSE: Duration = Duration::from_millis(50);

/// Why a connection ended.
enum Ending {
    /// It broke (closed, silent, or sent what no server sends): connect again.
    Broken,
    /// The session is over.
    Over,
}

/// Runs the session until it ends. `first` hears whether the first connection was made.
pub(super) async fn run(
    shared: Arc<Shared>,
    first: tokio::sync::oneshot::Sender<Result<(), ZkError>>,
) {
    let mut first = Some(first);
    let mut host = 0;
    let started = Instant::now();
    loop {
        if shared.lock().ended().is_some() {
            return;
        }
        let attempt = shared.hosts[host % shared.hosts.len()].clone();
        host += 1;
        match handshake(&shared, &attempt).await {
            Ok((stream, negotiated)) => {
                let reconnected = first.is_none();
                if let Some(first) = first.take() {
                    let _ = first.send(Ok(()));
                }
                match serve(&shared, stream, negotiated, reconnected).await {
                    Ending::Over => return,
                    Ending::Broken => {
                        shared.lock().broken();
                        shared
                            .listeners
                            .deliver(ZkEvent::Session(SessionEvent::Disconnected));
                    }
                }
            }
            Err(Some(ended)) => {
                if let Some(first) = first.take() {
                    let _ = first.send(Err(ended));
                }
                return;
            }
            Err(None) => {
                shared.lock().unreachable();
                if host % shared.hosts.len() == 0 {
                    // A first connection is tried for as long as the session would live.
                    if started.elapsed() > shared.timeout {
                        if let Some(first) = first.take() {
                            let _ = first.send(Err(ZkError::ConnectionLoss));
                            return;
                        }
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY_PAUSE) => {}
                        _ = shared.stop.notified() => return,
                    }
                }
            }
        }
    }
}

/// Connects to `host` and presents the session: the stream and the negotiated timeout;
/// `Err(None)` when the host could not be used, `Err(Some(_))` when the session is over.
async fn handshake(shared: &Shared, host: &str) -> Result<(TcpStream, Duration), Option<ZkError>> {
    let bound = shared.timeout;
    let (request, resuming) = {
        let session = shared.lock();
        let request = ConnectRequest {
            protocol_version: PROTOCOL_VERSION,
            last_zxid_seen: session.last_zxid,
            timeout_ms: i32::try_from(shared.timeout.as_millis()).unwrap_or(i32::MAX),
            session_id: session.id,
            password: session.password.clone(),
            read_only: false,
        };
        (request, session.id != 0)
    };
    let attempt = async {
        let mut stream = TcpStream::connect(host).await.ok()?;
        stream.set_nodelay(true).ok()?;
        stream.write_all(&frame(&request.encode())).await.ok()?;
        let bytes = read_frame(&mut stream).await.ok()?;
        let response = ConnectResponse::decode(&bytes).ok()?;
        Some((stream, response))
    };
    let (stream, response) = timeout(bound, attempt).await.ok().flatten().ok_or(None)?;
    if response.timeout_ms <= 0 {
        // The server no longer knows the session: it expired.
        let mut session = shared.lock();
        let error = if resuming {
            ZkError::SessionExpired
        } else {
            ZkError::ConnectionLoss
        };
        session.end(error, SessionEvent::Expired, &shared.listeners);
        return Err(Some(error));
    }
    let mut session = shared.lock();
    session.id = response.session_id;
    session.password = response.password;
    Ok((stream, Duration::from_millis(response.timeout_ms as u64)))
}

/// Reads one frame's record.
async fn read_frame(stream: &mut (impl AsyncReadExt + Unpin)) -> Result<Vec<u8>, Malformed> {
    let mut prefix = [0; 4];
    stream
        .read_exact(&mut prefix)
        .await
        .map_err(|_| Malformed::Truncated)?;
    let mut bytes = vec![0; frame_len(prefix, MAX_REPLY_LEN)?];
    stream
        .read_exact(&mut bytes)
        .await
        .map_err(|_| Malformed::Truncated)?;
    Ok(bytes)
}

/// Serves one connection until it breaks or the session ends.
async fn serve(
    shared: &Shared,
    stream: TcpStream,
    negotiated: Duration,
    reconnected: bool,
) -> Ending {
    let (mut reader, mut writer) = stream.into_split();
    let (to_writer, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
    {
        let mut session = shared.lock();
        if session.ended().is_some() {
            return Ending::Over;
        }
        if reconnected {
            shared
                .listeners
                .deliver(ZkEvent::Session(SessionEvent::SyncConnected));
        }
        session.phase = Phase::Connected(to_writer.clone());
        // Identities first, then watches, then what waited: the order ZooKeeper's client
        // primes a new connection in (`ClientCnxn.primeConnection`).
        for auth in &session.auths {
            let _ = to_writer.send(auth.bytes.clone());
        }
        if !session.watches.is_empty() {
            let watches = SetWatches {
                relative_zxid: session.last_zxid,
                watches: session.watches.clone(),
            };
            if let Ok((_, bytes)) = Request::SetWatches(watches).encode(xid::SET_WATCHES) {
                let _ = to_writer.send(frame(&bytes));
            }
        }
        while let Some((pending, bytes)) = session.queued.pop_front() {
            let _ = to_writer.send(bytes);
            session.in_flight.push_back(pending);
        }
    }
    // A server answers a ping at once: a connection silent for two thirds of the timeout is
    // dead, as ZooKeeper's client judges it.
    let silence = negotiated * 2 / 3;
    let mut pings = interval(negotiated / 3);
    pings.reset();
    let heard = std::sync::Mutex::new(Instant::now());
    let reading = async {
        loop {
            let bytes = match read_frame(&mut reader).await {
                Ok(bytes) => bytes,
                Err(_) => return Ending::Broken,
            };
            *heard.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
            if let Some(ending) = take_frame(shared, &bytes) {
                return ending;
            }
        }
    };
    tokio::pin!(reading);
    loop {
        tokio::select! {
            ending = &mut reading => return ending,
            next = outgoing.recv() => {
                let Some(bytes) = next else { return Ending::Broken };
                if writer.write_all(&bytes).await.is_err() {
                    return Ending::Broken;
                }
            }
            _ = pings.tick() => {
                if heard.lock().unwrap_or_else(|e| e.into_inner()).elapsed() > silence {
                    return Ending::Broken;
                }
                if let Ok((_, bytes)) = Request::Ping.encode(xid::PING) {
                    let _ = to_writer.send(frame(&bytes));
                }
            }
            _ = shared.stop.notified() => return Ending::Over,
        }
    }
}

/// Takes one frame off the wire; `Some` when the connection or the session ends with it.
fn take_frame(shared: &Shared, bytes: &[u8]) -> Option<Ending> {
    let Ok((header, body)) = ReplyHeader::decode(bytes) else {
        return Some(Ending::Broken);
    };
    let mut session = shared.lock();
    if header.zxid > 0 {
        session.last_zxid = header.zxid;
    }
    match header.xid {
        xid::NOTIFICATION => match decode_notification(body) {
            Ok(event) => {
                session.watches.fire(&event);
                shared.listeners.deliver(ZkEvent::Watch(event));
            }
            Err(_) => return Some(Ending::Broken),
        },
        xid::PING | xid::SET_WATCHES => {}
        xid::AUTH => {
            let error =
                (header.err != 0).then(|| codes::error(header.err).unwrap_or(ZkError::AuthFailed));
            session.auth_answered(error, &shared.listeners);
            if session.ended().is_some() {
                return Some(Ending::Over);
            }
        }
        _ => {
            // Replies come in request order; one out of it, or with nothing asked, means the
            // stream is lost.
            let Some(pending) = session.in_flight.pop_front() else {
                return Some(Ending::Broken);
            };
            if pending.header.xid != header.xid {
                session.in_flight.push_front(pending);
                return Some(Ending::Broken);
            }
            let reply = decode_reply(pending.header, &pending.request, &header, body)
                .unwrap_or(Err(ZkError::MarshallingError));
            match &pending.request {
                Request::Op(op) => {
                    session.watches.register(op, &reply);
                    shared.listeners.note_reply(pending.listener, op, &reply);
                }
                Request::CloseSession => {
                    session.end(ZkError::Closed, SessionEvent::Closed, &shared.listeners);
                    let _ = pending.reply.send(reply);
                    return Some(Ending::Over);
                }
                Request::Ping | Request::SetWatches(_) => {}
            }
            let _ = pending.reply.send(reply);
        }
    }
    None
}
