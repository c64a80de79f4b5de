//! `WireZk`: zklab's own client of ZooKeeper's wire protocol ([`crate::sim::jute`]), a
//! [`ZkClient`] over TCP on tokio. It speaks every op zklab knows, `removeWatches` and
//! `checkWatches` included, which the `zookeeper-client` crate cannot send, and reports what
//! the server said as it said it: each event and reply in wire order, the removal events of the
//! watches a removal took, the reconnection with its watches and identities set again.
//!
//! It is the real side of the conformance cases ([`crate::conform`]): what it reports is the
//! server's behaviour, not a client library's.

mod connection;
mod session;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{oneshot, Notify};

use crate::recipes::client::{Op, OpReply, SessionEvent, SessionId, ZkClient, ZkError, ZkEvent};
use crate::recipes::listeners::{ListenerId, Listeners};
use crate::sim::jute::archive::frame;
use crate::sim::jute::request::Request;
use crate::sim::path::validate_op;

use self::session::{check_answer, lone_check, Auth, Pending, Session};

/// What a session's handles and its connection task share.
struct Shared {
    session: Mutex<Session>,
    listeners: Listeners,
    /// The servers, tried in turn.
    hosts: Vec<String>,
    /// The session timeout asked for.
    timeout: Duration,
    /// The handles alive: when the last goes, the connection task stops.
    handles: AtomicUsize,
    /// Stops the connection task.
    stop: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A handle on a session with a ZooKeeper server, over its wire protocol.
pub struct WireZk {
    shared: Arc<Shared>,
    listener: ListenerId,
}

impl WireZk {
    /// Opens a session on one of `hosts` (`host:port`, comma-separated), asking for `timeout`;
    /// it must be called on a tokio runtime, which then runs the session's connection.
    /// ConnectionLoss when no host answered.
    pub async fn connect(hosts: &str, timeout: Duration) -> Result<WireZk, ZkError> {
        let hosts: Vec<String> = hosts
            .split(',')
            .map(str::trim)
            .filter(|host| !host.is_empty())
            .map(str::to_owned)
            .collect();
        if hosts.is_empty() {
            return Err(ZkError::BadArguments);
        }
        let listeners = Listeners::default();
        let listener = listeners.add();
        let shared = Arc::new(Shared {
            session: Mutex::new(Session::new()),
            listeners,
            hosts,
            timeout,
            handles: AtomicUsize::new(1),
            stop: Notify::new(),
        });
        let (connected, first) = oneshot::channel();
        tokio::spawn(connection::run(shared.clone(), connected));
        let handle = WireZk { shared, listener };
        first.await.unwrap_or(Err(ZkError::ConnectionLoss))?;
        Ok(handle)
    }

    /// Sends a request, or queues it for the next connection; its reply comes on the receiver.
    fn submit(&self, request: Request) -> oneshot::Receiver<OpReply> {
        let (reply, answer) = oneshot::channel();
        let mut session = self.shared.lock();
        if let Some(error) = session.ended() {
            let _ = reply.send(Err(error));
            return answer;
        }
        if let Request::Op(Op::AddAuth { .. }) = &request {
            let Ok((_, bytes)) = request.encode(0) else {
                let _ = reply.send(Err(ZkError::BadArguments));
                return answer;
            };
            let bytes = frame(&bytes);
            // Sent now if connected; otherwise the next connection presents it with the rest.
            session.write(bytes.clone());
            session.auths.push(Auth {
                bytes,
                waiting: Some(reply),
            });
            return answer;
        }
        let xid = session.take_xid();
        match request.encode(xid) {
            Ok((header, bytes)) => {
                let pending = Pending {
                    header,
                    request,
                    listener: self.listener,
                    reply,
                };
                session.submit(pending, frame(&bytes));
            }
            Err(_) => {
                let _ = reply.send(Err(ZkError::BadArguments));
            }
        }
        answer
    }
}

impl Drop for WireZk {
    fn drop(&mut self) {
        self.shared.listeners.remove(self.listener);
        if self.shared.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last handle: the connection goes, and the server expires the session.
            self.shared.stop.notify_one();
        }
    }
}

impl ZkClient for WireZk {
    fn call(&self, op: Op) -> impl Future<Output = OpReply> + Send {
        // A closed handle refuses everything; otherwise a malformed op is refused unsent.
        let closed = self.shared.lock().closed;
        let refused = match closed {
            true => Some(ZkError::Closed),
            false => validate_op(&op).err(),
        };
        let (op, lone) = lone_check(op);
        let answer = refused.is_none().then(|| self.submit(Request::Op(op)));
        async move {
            if let Some(error) = refused {
                return Err(error);
            }
            let reply = match answer {
                Some(answer) => answer.await.unwrap_or(Err(ZkError::ConnectionLoss)),
                None => Err(ZkError::BadArguments),
            };
            match lone {
                true => check_answer(reply),
                false => reply,
            }
        }
    }

    fn next_event(&self) -> impl Future<Output = Option<ZkEvent>> + Send {
        futures::future::poll_fn(move |cx| self.shared.listeners.poll_next(self.listener, cx))
    }

    fn try_next_event(&self) -> Option<ZkEvent> {
        self.shared.listeners.try_next(self.listener)
    }

    fn listener(&self) -> Self {
        self.shared.handles.fetch_add(1, Ordering::AcqRel);
        WireZk {
            shared: self.shared.clone(),
            listener: self.shared.listeners.add(),
        }
    }

    fn session_id(&self) -> SessionId {
        self.shared.lock().id
    }

    /// Asks the server to close the session and waits for its answer. A session already over
    /// answers with what ended it (a refused authentication every time, an expiry once), and
    /// is closed all the same.
    fn close(&self) -> impl Future<Output = Result<(), ZkError>> + Send {
        let (ended, closed) = {
            let session = self.shared.lock();
            (session.ended(), session.closed)
        };
        let refused = match ended {
            Some(ZkError::AuthFailed) => Err(ZkError::AuthFailed),
            _ if closed => Err(ZkError::Closed),
            Some(error) => Err(error),
            None => Ok(self.submit(Request::CloseSession)),
        };
        let shared = self.shared.clone();
        async move {
            let result = match refused {
                Err(error) => Err(error),
                Ok(answer) => match answer.await {
                    Ok(reply) => reply.map(|_| ()),
                    Err(_) => Err(ZkError::ConnectionLoss),
                },
            };
            let mut session = shared.lock();
            session.closed = true;
            session.end(ZkError::Closed, SessionEvent::Closed, &shared.listeners);
            drop(session);
            shared.stop.notify_one();
            result
        }
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }
}
