//! Serving connections: the accept loop, HTTP/1.1 through hyper, and HTTP/2
//! driven here on the `h2` crate.
//!
//! One port speaks both protocols. A connection that opens with the HTTP/2
//! preface (`PRI * HTTP/2.0…`: prior knowledge, as gRPC clients send it in
//! cleartext) is HTTP/2; anything else is HTTP/1.1.
//!
//! HTTP/2 is driven here rather than by hyper because of where a stream's
//! work runs. hyper spawns a task for every stream, so a unary call crosses
//! two tasks: the stream's, which runs the handler, and the connection's,
//! which reads the request and writes the answer. For a handler that takes a
//! few microseconds the spawn and the wake-ups between the two are a large
//! part of the call. Here a stream that finds no other stream of its
//! connection running is served on the connection's own task, as HTTP/1.1
//! serves its requests; a stream that arrives while another runs (a
//! multiplexing client, such as a gRPC channel, sending calls in parallel) is
//! spawned, so a busy channel still spreads over every core.
//!
//! The rest mirrors hyper's HTTP/2 server: the same settings, connection
//! headers stripped from answers, a `date` header, request bodies that return
//! flow-control capacity as they are read, answers piped under the peer's
//! flow control, and a stream reset by the client dropped with its handler.
//!
//! Every connection holds a slot in the [`Registry`], which enforces the
//! [`ConnectionLimits`](crate::ConnectionLimits): the caps on open
//! connections (closing the longest idle one to make room, else not
//! accepting until one closes), the idle timeout, the header read timeout
//! of HTTP/1.1, and through [`answer`] the minimum rate of request bodies.
//! A connection is *idle* while no request of it is in flight: from its
//! accept until its first request head is complete, and between the end of
//! one answer and the next head. An HTTP/1.1 connection idle for the header
//! read timeout is closed, so a head has that long from when the connection
//! starts waiting for it. Requests count themselves in and out of their
//! connection's atomics; the registry's lock is taken per connection, not
//! per request.
//!
//! The registry also holds the [memory budget](crate::budget): [`answer`]
//! charges a request body's bytes as they arrive and an answer's bytes until
//! they are written, and refuses a request that does not fit (503 with
//! `Retry-After`, gRPC UNAVAILABLE, in the words of the request's binding:
//! [`Wire`]). Answers are written under the write timeout: an HTTP/2 stream
//! left without flow-control window is reset ([`pipe`]), a connection whose
//! socket takes no bytes is closed ([`Stall`]).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime};
use switchboard_telemetry::metrics::METRICS;

use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::{Buf, Bytes, BytesMut};
use futures::task::AtomicWaker;
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, Response};
use http_body::{Body as _, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::Service;

use crate::budget::{Charge, MemoryBudget};
use crate::limits::ConnectionLimits;
use switchboard_protocol::A2AError;

/// The peer address, in every request's extensions (as axum's
/// `ConnectInfo`, so handlers can extract it): authenticators and limits
/// key on it.
type Peer = ConnectInfo<SocketAddr>;

/// What every connection's requests go to.
pub(crate) trait HttpService:
    Service<Request<Body>, Response = Response<Body>, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + 'static
{
}

impl<S> HttpService for S where
    S: Service<
            Request<Body>,
            Response = Response<Body>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// Accepts connections on `listener` and serves each with `service` until
/// `stop` is cancelled; then stops accepting, asks every connection to close
/// gracefully (HTTP/2 `GOAWAY`, HTTP/1.1 after the request in progress) and
/// returns when all have. `limits` bounds what clients may hold.
pub(crate) async fn serve(
    listener: TcpListener,
    service: impl HttpService,
    limits: ConnectionLimits,
    wire: Wire,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) -> io::Result<()> {
    let mut registry = Registry::new(limits);
    registry.wire = wire;
    let registry = Arc::new(registry);
    let connections = TaskTracker::new();
    'accepting: loop {
        let (tcp, peer) = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // The peer gave up before we got to it.
                Err(e) if is_connection_error(&e) => continue,
                Err(e) => {
                    // Out of file descriptors and the like: retrying at once
                    // would spin, so wait for connections to close.
                    tracing::error!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
        };
        // Back-pressure: while every slot is taken by a connection with a
        // request in flight, nothing can be closed to make room, so this
        // connection waits and no other is accepted; new clients wait in
        // the listen queue.
        let _waiting = registry.waiting_for_room();
        let slot = loop {
            let changed = registry.changed.notified();
            let mut changed = pin!(changed);
            changed.as_mut().enable();
            match registry.admit(peer.ip()) {
                Ok(slot) => break slot,
                Err(Full::Address) => {
                    tracing::debug!(%peer, "connection refused: its address holds all it may");
                    continue 'accepting;
                }
                Err(Full::Server) => tokio::select! {
                    () = stop.cancelled() => break 'accepting,
                    () = changed => {}
                },
            }
        };
        // Without TCP_NODELAY small SSE frames wait for delayed ACKs (~40 ms each).
        let _ = tcp.set_nodelay(true);
        connections.spawn(connection(
            tcp,
            peer,
            service.clone(),
            tls.clone(),
            stop.clone(),
            slot,
        ));
    }
    drop(listener);
    connections.close();
    connections.wait().await;
    Ok(())
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// The client preface of HTTP/2 (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    service: impl HttpService,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
    slot: Slot,
) {
    let conn = slot.handle();
    let header_read_timeout = conn.registry.limits.header_read_timeout;
    let served = async {
        let Some(tls) = tls else {
            return serve_io(tcp, peer, service, stop, conn).await;
        };
        // The handshake is part of the head too: a client that opens TLS
        // and goes silent holds its slot only as long as a silent plaintext
        // one (and, idle meanwhile, may be closed to make room).
        let handshake = tokio::select! {
            () = stop.cancelled() => return,
            handshake = tokio::time::timeout(header_read_timeout, tls.accept(tcp)) => handshake,
        };
        match handshake {
            Ok(Ok(io)) => serve_io(io, peer, service, stop, conn).await,
            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
            Err(_elapsed) => tracing::debug!(%peer, "TLS handshake timed out"),
        }
    };
    tokio::select! {
        biased;
        () = served => {}
        closed = slot.closed() => match closed {
            Closed::Evicted => tracing::debug!(%peer, "idle connection closed to make room"),
            Closed::Idle => tracing::trace!(%peer, "idle connection timed out"),
        },
    }
}

/// What a connection is read from and written to: TCP, or TLS over it.
trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

/// Serves one connection's (decrypted) bytes: HTTP/2 if they open with the
/// preface, else HTTP/1.1. ALPN is not needed to tell them apart.
async fn serve_io(
    mut io: impl Io,
    peer: SocketAddr,
    service: impl HttpService,
    stop: CancellationToken,
    conn: ConnHandle,
) {
    let header_read_timeout = conn.registry.limits.header_read_timeout;
    // The bytes that tell the protocol are part of the head: a
    // connection that stays silent is closed like one that trickles.
    let sniffed = tokio::select! {
        () = stop.cancelled() => return,
        sniffed = tokio::time::timeout(header_read_timeout, sniff(&mut io)) => sniffed,
    };
    let Ok(Ok((is_h2, seen))) = sniffed else {
        return;
    };
    let io = Stall::new(Rewind { seen, io }, conn.registry.limits.write_timeout);
    let peer = ConnectInfo(peer);
    if is_h2 {
        serve_h2(io, peer, service, stop, conn).await;
    } else {
        serve_h1(io, peer, service, stop, conn).await;
    }
}

/// Reads until the bytes either are the HTTP/2 preface or cannot become it.
/// Returns which, and the bytes read (the protocol reads them again).
async fn sniff(tcp: &mut (impl AsyncRead + Unpin)) -> io::Result<(bool, Bytes)> {
    let mut seen = BytesMut::with_capacity(PREFACE.len());
    loop {
        if tcp.read_buf(&mut seen).await? == 0 {
            // Closed early: HTTP/1.1 reports what is there (or nothing).
            return Ok((false, seen.freeze()));
        }
        let n = seen.len().min(PREFACE.len());
        if seen[..n] != PREFACE[..n] {
            return Ok((false, seen.freeze()));
        }
        if n == PREFACE.len() {
            return Ok((true, seen.freeze()));
        }
    }
}

/// A stream whose first bytes were already read: they are read again first.
#[derive(Debug)]
struct Rewind<T> {
    seen: Bytes,
    io: T,
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.seen.has_remaining() {
            let n = self.seen.len().min(buf.remaining());
            buf.put_slice(&self.seen[..n]);
            self.seen.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// A connection whose writes must make progress: once the socket has taken
/// no byte for the write timeout while the protocol has bytes to write, the
/// write (or flush) fails with `TimedOut`. The protocol then ends the
/// connection and drops its answers, giving their bytes back to the budget:
/// a client that never reads cannot hold them.
///
/// The timer is made the first time a write has to wait and reset only when
/// a new wait begins, so a socket that keeps up costs nothing.
struct Stall<T> {
    io: T,
    limit: Duration,
    /// When the current wait fails; `None` until a write first waits.
    timer: Option<Pin<Box<Sleep>>>,
    /// A write is waiting and `timer` is set for that wait.
    waiting: bool,
}

impl<T> Stall<T> {
    fn new(io: T, limit: Duration) -> Self {
        Stall {
            io,
            limit,
            timer: None,
            waiting: false,
        }
    }

    /// `polled`, a write or flush, unless it has waited for the limit.
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if polled.is_ready() {
            self.waiting = false;
            return polled;
        }
        if self.limit.is_zero() {
            return Poll::Pending;
        }
        if !self.waiting {
            self.waiting = true;
            let at = Instant::now() + self.limit;
            match self.timer.as_mut() {
                Some(timer) => timer.as_mut().reset(at),
                None => self.timer = Some(Box::pin(tokio::time::sleep_until(at))),
            }
        }
        if let Some(timer) = self.timer.as_mut()
            && timer.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer read nothing for the write timeout",
            )));
        }
        Poll::Pending
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Stall<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Stall<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_shutdown(cx);
        self.watch(cx, polled)
    }
}

// ---- Limits ---------------------------------------------------------------------

/// The open connections: counts per address, and each connection's
/// [`ConnState`]. What the caps and "close the longest idle first" read.
///
/// The map is locked when a connection opens or closes, and when the caps
/// make it choose one to close. A request does not touch it: it counts
/// itself in and out of its connection's atomics, which the registry reads
/// only when it has to choose.
pub(crate) struct Registry {
    limits: ConnectionLimits,
    /// What request bodies and unsent answers of every connection hold.
    budget: Arc<MemoryBudget>,
    /// How a request is refused in its binding's words.
    wire: Wire,
    open: Mutex<Open>,
    /// The clock `ConnState::idle_since` counts from.
    epoch: Instant,
    /// Signalled when a connection closes, or becomes idle while the accept
    /// loop waits for room (`waiting`): a full accept loop may then make
    /// room.
    changed: Notify,
    /// Accept loops waiting on `changed`: an idle transition signals it
    /// only then, so a request pays for the signal only on a full server.
    waiting: AtomicUsize,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    conns: HashMap<u64, Entry>,
    per_ip: HashMap<IpAddr, usize>,
}

struct Entry {
    ip: IpAddr,
    state: Arc<ConnState>,
}

/// What a connection and the registry share: whether a request is in
/// flight and since when it is idle, written by the connection's requests,
/// read by the registry when it must close one; and the registry's word
/// to close it.
struct ConnState {
    /// Requests whose answer is not yet sent in full.
    in_flight: AtomicUsize,
    /// When `in_flight` last became 0 (or the accept), in nanoseconds
    /// since the registry's epoch.
    idle_since: AtomicU64,
    /// Set (then `wake` woken) to close the connection to make room.
    evicted: AtomicBool,
    /// The connection's task, woken when it is evicted.
    wake: AtomicWaker,
    /// An HTTP/1.1 connection: waiting for a request head is bounded by
    /// the header read timeout too (see [`Slot::closed`]).
    head_bounded: AtomicBool,
}

impl ConnState {
    /// `Some(idle since)` while no request is in flight.
    fn idle_since(&self, epoch: Instant) -> Option<Instant> {
        (self.in_flight.load(Ordering::SeqCst) == 0)
            .then(|| epoch + Duration::from_nanos(self.idle_since.load(Ordering::Relaxed)))
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.wake.wake();
    }
}

impl Open {
    /// Removes a connection's entry (a no-op once it was evicted).
    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.conns.remove(&id)?;
        if let Some(n) = self.per_ip.get_mut(&entry.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&entry.ip);
            }
        }
        Some(entry)
    }

    /// Closes the connection idle the longest (of `ip`, if given); `false`
    /// when every one has a request in flight.
    fn evict_idlest(&mut self, ip: Option<IpAddr>, epoch: Instant) -> bool {
        let idlest = self
            .conns
            .iter()
            .filter(|(_, e)| ip.is_none_or(|ip| e.ip == ip))
            .filter_map(|(id, e)| Some((e.state.idle_since(epoch)?, *id)))
            .min()
            .map(|(_, id)| id);
        match idlest.and_then(|id| self.remove(id)) {
            Some(entry) => {
                entry.state.evict();
                true
            }
            None => false,
        }
    }
}

impl Registry {
    pub(crate) fn new(limits: ConnectionLimits) -> Self {
        Registry {
            budget: MemoryBudget::new(limits.max_buffered_bytes),
            wire: Wire::default(),
            limits,
            open: Mutex::new(Open::default()),
            epoch: Instant::now(),
            changed: Notify::new(),
            waiting: AtomicUsize::new(0),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // The map stays consistent across a panic elsewhere: every change
        // to it is a few lines that cannot panic.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Now, as `ConnState::idle_since` counts it.
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// A slot for a new connection from `ip`, closing the idlest connection
    /// (of that address, else of all) when a cap is reached; `None` when
    /// the cap is reached and nothing is idle.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Full> {
        let mut open = self.open();
        let from_ip = open.per_ip.get(&ip).copied().unwrap_or(0);
        if from_ip >= self.limits.max_connections_per_ip && !open.evict_idlest(Some(ip), self.epoch)
        {
            return Err(Full::Address);
        }
        if open.conns.len() >= self.limits.max_connections && !open.evict_idlest(None, self.epoch) {
            return Err(Full::Server);
        }
        let id = open.next_id;
        open.next_id += 1;
        let state = Arc::new(ConnState {
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(self.now()),
            evicted: AtomicBool::new(false),
            wake: AtomicWaker::new(),
            head_bounded: AtomicBool::new(false),
        });
        open.conns.insert(
            id,
            Entry {
                ip,
                state: state.clone(),
            },
        );
        *open.per_ip.entry(ip).or_insert(0) += 1;
        METRICS.connections.inc();
        Ok(Slot {
            handle: ConnHandle {
                registry: self.clone(),
                state,
            },
            id,
            _open: METRICS.open_connections.track(),
        })
    }

    /// Counts the caller among those waiting for room until the guard is
    /// dropped: taken before looking for room, so a connection that turns
    /// idle after the look signals `changed`.
    fn waiting_for_room(&self) -> WaitingForRoom<'_> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        WaitingForRoom(self)
    }

    #[cfg(test)]
    fn open_count(&self) -> usize {
        self.open().conns.len()
    }
}

/// Why [`Registry::admit`] found no room: every connection of the address,
/// or of the whole server, has a request in flight.
#[derive(Debug)]
pub(crate) enum Full {
    Address,
    Server,
}

/// An accept loop waiting for room (see [`Registry::waiting_for_room`]).
struct WaitingForRoom<'a>(&'a Registry);

impl Drop for WaitingForRoom<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Why [`Slot::closed`] ended a connection.
enum Closed {
    Evicted,
    Idle,
}

/// A connection's place in the [`Registry`]; given back when dropped.
pub(crate) struct Slot {
    handle: ConnHandle,
    id: u64,
    /// `switchboard_open_connections` counts the slot while it lives.
    _open: switchboard_telemetry::metrics::GaugeGuard,
}

impl Slot {
    fn handle(&self) -> ConnHandle {
        self.handle.clone()
    }

    /// Resolves when the connection must close: the registry closed it to
    /// make room, or it has had no request in flight for the idle timeout
    /// (for HTTP/1.1 also the header read timeout: waiting for a request
    /// head, which is being idle, is bounded by it, from the accept or the
    /// end of the previous answer until the head is complete).
    ///
    /// Polled beside the connection on every wake-up of its task, so it
    /// keeps to atomics and one timer that is reset only when it fires.
    async fn closed(&self) -> Closed {
        let registry = &self.handle.registry;
        let state = &self.handle.state;
        let limits = &registry.limits;
        let limit = || {
            if state.head_bounded.load(Ordering::Relaxed) {
                limits.idle_timeout.min(limits.header_read_timeout)
            } else {
                limits.idle_timeout
            }
        };
        // Until the protocol is known the sniff, TLS and HTTP/2 handshakes
        // have their own timeouts; the first look is no later than these.
        let first = Instant::now() + limit().min(limits.header_read_timeout);
        let mut timer = pin!(tokio::time::sleep_until(first));
        poll_fn(|cx| {
            state.wake.register(cx.waker());
            if state.evicted.load(Ordering::Acquire) {
                return Poll::Ready(Closed::Evicted);
            }
            while timer.as_mut().poll(cx).is_ready() {
                let now = Instant::now();
                let next = match state.idle_since(registry.epoch) {
                    Some(since) if since + limit() <= now => return Poll::Ready(Closed::Idle),
                    Some(since) => since + limit(),
                    // Busy now; look again a limit later (it may have been
                    // idle only since then).
                    None => now + limit(),
                };
                timer.as_mut().reset(next);
            }
            Poll::Pending
        })
        .await
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let removed = self.handle.registry.open().remove(self.id);
        if removed.is_some() {
            self.handle.registry.changed.notify_waiters();
        }
    }
}

/// What a request needs of its connection's slot.
#[derive(Clone)]
pub(crate) struct ConnHandle {
    registry: Arc<Registry>,
    state: Arc<ConnState>,
}

impl ConnHandle {
    /// Marks a request in flight until the guard is dropped.
    fn busy(&self) -> Busy {
        self.state.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    /// Bounds waiting for a request head by the header read timeout (see
    /// [`Slot::closed`]).
    fn bound_head_reads(&self) {
        self.state.head_bounded.store(true, Ordering::Relaxed);
    }
}

/// A request in flight (see [`ConnHandle::busy`]).
struct Busy(ConnHandle);

impl Drop for Busy {
    fn drop(&mut self) {
        let ConnHandle { registry, state } = &self.0;
        // Stamped before the count drops, so a registry that sees the
        // connection idle sees when it became so (or a later stamp).
        state.idle_since.store(registry.now(), Ordering::Relaxed);
        if state.in_flight.fetch_sub(1, Ordering::SeqCst) == 1
            // SeqCst with the accept loop's count-then-admit: either it
            // sees this connection idle, or this sees it waiting.
            && registry.waiting.load(Ordering::SeqCst) > 0
        {
            registry.changed.notify_waiters();
        }
    }
}

/// One request through `service`, on both protocols: the peer address in
/// its extensions, the connection busy until its answer is sent, its body
/// held to the minimum rate and charged to the memory budget, and `408
/// Request Timeout` (closing the connection) in place of whatever the
/// handler made of a body cut off, or the budget's refusal in place of what
/// it made of a body that did not fit. An answer is charged from here until
/// its bytes are written; one of known size that does not fit is refused
/// before anything of it is sent.
///
/// The service is called here, before the returned future runs, so each
/// connection calls the one service it holds: cloning it for every request
/// would copy the boxed layers around it (an allocation each).
///
/// The body comes as the protocol reads it and is boxed into a [`Body`]
/// here, once: with its pacing and charging, when it has any.
fn answer<S: HttpService, B>(
    service: &mut S,
    req: Request<B>,
    peer: Peer,
    conn: &ConnHandle,
) -> impl Future<Output = Result<Response<Body>, Infallible>> + Send + use<S, B>
where
    B: http_body::Body<Data = Bytes, Error: Into<axum::BoxError>> + Unpin + Send + 'static,
{
    let busy = conn.busy();
    let registry = &conn.registry;
    let (mut parts, body) = req.into_parts();
    parts.extensions.insert(peer);
    // Where a refusal goes, if there can be one.
    let budget = registry
        .budget
        .is_on()
        .then(|| (registry.budget.clone(), registry.wire.binding(&parts)));
    let grace = registry.limits.body_deadline(0);
    // Shared with the body, if it is paced or charged: how it ended, and
    // what it holds of the budget until both it and this call are done.
    let mut intake = None;
    let body = if !body.is_end_stream() && (grace.is_some() || budget.is_some()) {
        let start = Instant::now();
        let state = intake.insert(Arc::new(IntakeState {
            too_slow: AtomicBool::new(false),
            over_budget: AtomicBool::new(false),
            charged: AtomicUsize::new(0),
            budget: budget.as_ref().map(|(b, _)| b.clone()),
        }));
        Body::new(Intake {
            body,
            registry: registry.clone(),
            start,
            received: 0,
            next_by: grace.map(|grace| start + grace),
            deadline: None,
            state: state.clone(),
        })
    } else {
        Body::new(body)
    };
    let call = service.call(Request::from_parts(parts, body));
    async move {
        let Ok(resp) = call.await;
        if let Some(intake) = intake {
            if intake.too_slow.load(Ordering::Relaxed) {
                return Ok(request_timeout());
            }
            if intake.over_budget.load(Ordering::Relaxed)
                && let Some((_, binding)) = budget
            {
                return Ok(over_budget(binding, true));
            }
        }
        if resp.body().is_end_stream() {
            return Ok(resp);
        }
        let Some((budget, binding)) = budget else {
            return Ok(resp.map(|body| Body::new(Held::new(body, busy, None))));
        };
        // An answer of known size is charged whole before its head is
        // sent, so one that does not fit is refused cleanly; a stream's
        // frames are charged one by one as they come.
        let prepaid = match resp.body().size_hint().exact() {
            Some(n) => match budget.charge(usize::try_from(n).unwrap_or(usize::MAX)) {
                Some(charge) => Some(charge),
                None => return Ok(over_budget(binding, false)),
            },
            None => None,
        };
        let charging = Charging {
            budget,
            prepaid,
            grpc: binding == Binding::Grpc,
        };
        Ok(resp.map(|body| Body::new(Held::new(body, busy, Some(charging)))))
    }
}

/// The answer to a request whose body came too slowly.
#[cold]
fn request_timeout() -> Response<Body> {
    let mut resp = Response::new(Body::from("the request body arrived too slowly\n"));
    *resp.status_mut() = http::StatusCode::REQUEST_TIMEOUT;
    let headers = resp.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// Which binding a request is for, as far as a refusal must speak its
/// language: gRPC by content type, JSON-RPC by its endpoint's paths, the
/// rest as REST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    Grpc,
    JsonRpc,
    Rest,
}

/// What the connection layer knows of the bindings: the JSON-RPC paths.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wire {
    rpc_paths: Arc<[String]>,
}

impl Wire {
    pub(crate) fn new(rpc_paths: &[String]) -> Self {
        Wire {
            rpc_paths: rpc_paths.into(),
        }
    }

    fn binding(&self, parts: &http::request::Parts) -> Binding {
        let grpc = parts
            .headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
        if grpc {
            Binding::Grpc
        } else if parts.method == http::Method::POST
            && self.rpc_paths.iter().any(|p| p == parts.uri.path())
        {
            Binding::JsonRpc
        } else {
            Binding::Rest
        }
    }
}

/// Seconds a client refused by the memory budget is asked to wait.
const OVER_BUDGET_RETRY_AFTER: &str = "1";

/// Why a request was refused by the memory budget.
fn over_budget_error() -> A2AError {
    A2AError::ResourceExhausted(
        "the server holds all the request and answer bytes it may; retry later".into(),
    )
}

/// The refusal of a request the memory budget has no room for, in its
/// binding's words: HTTP 503 with `Retry-After` and a JSON-RPC error or a
/// `google.rpc.Status` (status `UNAVAILABLE`, reason `RESOURCE_EXHAUSTED`),
/// or for gRPC a trailers-only UNAVAILABLE. `close` when the request's body
/// was not read to its end (HTTP/1.1 cannot read the next request then).
#[cold]
fn over_budget(binding: Binding, close: bool) -> Response<Body> {
    tracing::debug!(?binding, "request refused: over the memory budget");
    let err = over_budget_error();
    let mut resp = match binding {
        Binding::Grpc => {
            let mut resp = Response::new(Body::empty());
            resp.headers_mut().extend(grpc_unavailable(&err));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/grpc"),
            );
            resp
        }
        Binding::JsonRpc | Binding::Rest => {
            let body = if binding == Binding::JsonRpc {
                switchboard_protocol::jsonrpc::error_body(
                    &switchboard_protocol::jsonrpc::RequestId::Null,
                    &err,
                )
            } else {
                let status = crate::errors::ErrorStatus {
                    http: http::StatusCode::SERVICE_UNAVAILABLE,
                    grpc: crate::errors::GrpcCode::Unavailable,
                };
                crate::errors::rest_error_body(&err, status)
            };
            let mut resp = Response::new(Body::from(body));
            *resp.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
            let headers = resp.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            headers.insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(OVER_BUDGET_RETRY_AFTER),
            );
            resp
        }
    };
    if close {
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

/// `grpc-status: 14` (UNAVAILABLE) and the message of `err`: the headers of
/// a trailers-only refusal, or the trailers ending a refused stream.
fn grpc_unavailable(err: &A2AError) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(2);
    map.insert(
        "grpc-status",
        HeaderValue::from(crate::errors::GrpcCode::Unavailable as i32),
    );
    if let Ok(message) = HeaderValue::from_str(&err.to_string()) {
        map.insert("grpc-message", message);
    }
    map
}

/// Why a request body ended early.
#[derive(Debug)]
enum BodyCut {
    /// It fell below the minimum rate.
    TooSlow,
    /// Its next bytes did not fit the memory budget.
    OverBudget,
}

impl std::fmt::Display for BodyCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BodyCut::TooSlow => "the request body arrived too slowly",
            BodyCut::OverBudget => "the request body does not fit the memory budget",
        })
    }
}

impl std::error::Error for BodyCut {}

/// What a request body and its call share: how the body ended, and the bytes
/// it charged, given back when both the body and the call are done (the
/// bytes a handler buffered live that long).
struct IntakeState {
    too_slow: AtomicBool,
    over_budget: AtomicBool,
    charged: AtomicUsize,
    budget: Option<Arc<MemoryBudget>>,
}

impl Drop for IntakeState {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            budget.give_back(*self.charged.get_mut());
        }
    }
}

/// A request body held to [`ConnectionLimits::body_deadline`] (each byte
/// that arrives buys time, and a body that falls behind ends in an error)
/// and charged to the memory budget as it arrives (a body whose next bytes
/// do not fit ends in an error).
struct Intake<B> {
    body: B,
    registry: Arc<Registry>,
    start: Instant,
    received: u64,
    /// When the next byte is due; `None` without a minimum rate.
    next_by: Option<Instant>,
    /// The timer for `next_by`, made the first time the body has to be
    /// waited for: most bodies arrive with their head, and a timer made
    /// (and registered with the runtime's wheel) for each of them would
    /// cost every request for nothing.
    deadline: Option<Pin<Box<Sleep>>>,
    state: Arc<IntakeState>,
}

impl<B> http_body::Body for Intake<B>
where
    B: http_body::Body<Data = Bytes, Error: Into<axum::BoxError>> + Unpin,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        if self.state.too_slow.load(Ordering::Relaxed)
            || self.state.over_budget.load(Ordering::Relaxed)
        {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.body).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let len = data.len();
                    if let Some(budget) = &self.state.budget {
                        // The bytes, and what the binding decodes from them.
                        let charge = len.saturating_mul(crate::budget::BODY_CHARGE_FACTOR);
                        if !budget.take(charge) {
                            self.state.over_budget.store(true, Ordering::Relaxed);
                            return Poll::Ready(Some(Err(BodyCut::OverBudget.into())));
                        }
                        self.state.charged.fetch_add(charge, Ordering::Relaxed);
                    }
                    self.received += len as u64;
                    if let Some(after) = self.registry.limits.body_deadline(self.received) {
                        let at = self.start + after;
                        self.next_by = Some(at);
                        if let Some(deadline) = self.deadline.as_mut() {
                            deadline.as_mut().reset(at);
                        }
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(other) => Poll::Ready(other.map(|r| r.map_err(Into::into))),
            Poll::Pending => {
                let Some(next_by) = self.next_by else {
                    return Poll::Pending;
                };
                let deadline = self
                    .deadline
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(next_by)));
                ready!(deadline.as_mut().poll(cx));
                self.state.too_slow.store(true, Ordering::Relaxed);
                Poll::Ready(Some(Err(BodyCut::TooSlow.into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// How an answer pays for its bytes: from what was charged before its head
/// was sent (an answer of known size), else frame by frame.
struct Charging {
    budget: Arc<MemoryBudget>,
    prepaid: Option<Charge>,
    /// A gRPC answer: one that does not fit ends with UNAVAILABLE trailers
    /// rather than a broken stream.
    grpc: bool,
}

impl Charging {
    /// `data` carrying its charge; `None` when it does not fit.
    fn pay(&mut self, data: Bytes) -> Option<Bytes> {
        let len = data.len();
        let charge = match self.prepaid.as_mut() {
            Some(prepaid) if prepaid.bytes() >= len => prepaid.split(len),
            _ => self.budget.charge(len)?,
        };
        Some(charge.attach(data))
    }
}

/// An answer's body that keeps its connection busy until sent (or dropped)
/// and, under a memory budget, hands out each data frame carrying its
/// charge, so the bytes count until the protocol has written them.
struct Held {
    body: Body,
    charging: Option<Charging>,
    ended: bool,
    _busy: Busy,
}

impl Held {
    fn new(body: Body, busy: Busy, charging: Option<Charging>) -> Self {
        Held {
            body,
            charging,
            ended: false,
            _busy: busy,
        }
    }
}

impl http_body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let frame = ready!(Pin::new(&mut self.body).poll_frame(cx));
        let Some(charging) = self.charging.as_mut() else {
            return Poll::Ready(frame);
        };
        let frame = match frame {
            Some(Ok(frame)) => frame,
            other => return Poll::Ready(other),
        };
        let data = match frame.into_data() {
            Ok(data) => data,
            Err(frame) => return Poll::Ready(Some(Ok(frame))),
        };
        if let Some(data) = charging.pay(data) {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        // A frame of a stream that does not fit: the stream ends here (a
        // client resumes it later from the last event it got).
        tracing::debug!("answer cut off: over the memory budget");
        let grpc = charging.grpc;
        self.ended = true;
        if grpc {
            let trailers = grpc_unavailable(&over_budget_error());
            return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
        }
        Poll::Ready(Some(Err(axum::Error::new(BodyCut::OverBudget))))
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

// ---- HTTP/1.1 -------------------------------------------------------------------

async fn serve_h1(
    io: Stall<Rewind<impl Io>>,
    peer: Peer,
    service: impl HttpService,
    stop: CancellationToken,
    conn: ConnHandle,
) {
    // The header read timeout is the slot's (`Slot::closed`): it runs
    // while the connection waits for a head, from the accept or the end of
    // the previous answer, so it also bounds the wait between requests.
    // hyper's own would do the same with a timer made, registered and
    // dropped for every request.
    conn.bound_head_reads();
    // hyper calls with `&self`, one request at a time; the lock is never
    // contended, it only lends `answer` the `&mut` a tower service wants.
    let service = Mutex::new(service);
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let mut service = service.lock().unwrap_or_else(PoisonError::into_inner);
        answer(&mut *service, req, peer, &conn)
    });
    // With upgrades, so a route added from outside can take over the
    // connection (`hyper::upgrade::on`, e.g. a WebSocket).
    let conn = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(hyper_util::rt::TokioIo::new(io), service)
        .with_upgrades();
    let mut conn = pin!(conn);
    tokio::select! {
        done = conn.as_mut() => {
            if let Err(e) = done {
                tracing::trace!(error = %e, "HTTP/1.1 connection ended");
            }
            return;
        }
        () = stop.cancelled() => {}
    }
    conn.as_mut().graceful_shutdown();
    if let Err(e) = conn.await {
        tracing::trace!(error = %e, "HTTP/1.1 connection ended");
    }
}

// ---- HTTP/2 ---------------------------------------------------------------------

/// hyper's defaults, so a client sees the same server it saw before.
const WINDOW: u32 = 1024 * 1024;
const MAX_FRAME_SIZE: u32 = 16 * 1024;
const MAX_HEADER_LIST_SIZE: u32 = 16 * 1024;
const MAX_SEND_BUFFER_SIZE: usize = 400 * 1024;
const MAX_CONCURRENT_STREAMS: u32 = 200;
const MAX_LOCAL_ERROR_RESET_STREAMS: usize = 1024;

type Stream = Pin<Box<dyn Future<Output = ()> + Send>>;

async fn serve_h2(
    io: Stall<Rewind<impl Io>>,
    peer: Peer,
    mut service: impl HttpService,
    stop: CancellationToken,
    handle: ConnHandle,
) {
    let header_read_timeout = handle.registry.limits.header_read_timeout;
    let write_timeout = handle.registry.limits.write_timeout;
    let handshake = h2::server::Builder::new()
        .initial_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .max_frame_size(MAX_FRAME_SIZE)
        .max_header_list_size(MAX_HEADER_LIST_SIZE)
        .max_send_buffer_size(MAX_SEND_BUFFER_SIZE)
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESET_STREAMS))
        .handshake::<_, Bytes>(io);
    let mut conn = tokio::select! {
        () = stop.cancelled() => return,
        conn = tokio::time::timeout(header_read_timeout, handshake) => match conn {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => {
                tracing::trace!(error = %e, "HTTP/2 handshake failed");
                return;
            }
            Err(_elapsed) => return,
        },
    };
    let mut stopping = pin!(stop.cancelled());
    let mut closing = false;
    // The stream being served on this task, if any.
    let mut here: Option<Stream> = None;
    poll_fn(move |cx| {
        if !closing && stopping.as_mut().poll(cx).is_ready() {
            closing = true;
            conn.graceful_shutdown();
        }
        loop {
            // Polling the connection reads what arrived, writes what the
            // streams queued, and hands over the streams that opened.
            match conn.poll_accept(cx) {
                Poll::Ready(Some(Ok((req, respond)))) => {
                    let (parts, recv) = req.into_parts();
                    let body = Incoming {
                        length: content_length(&parts.headers),
                        recv,
                        data_done: false,
                        done: false,
                    };
                    let call = answer(
                        &mut service,
                        Request::from_parts(parts, body),
                        peer,
                        &handle,
                    );
                    let stream = Box::pin(serve_stream(call, respond, write_timeout));
                    if here.is_none() {
                        here = Some(stream);
                    } else {
                        tokio::spawn(stream);
                    }
                    continue;
                }
                Poll::Ready(Some(Err(e))) => {
                    tracing::trace!(error = %e, "HTTP/2 connection ended");
                    return Poll::Ready(());
                }
                // Closed, and every stream done.
                Poll::Ready(None) => return Poll::Ready(()),
                Poll::Pending => {}
            }
            if let Some(stream) = here.as_mut()
                && stream.as_mut().poll(cx).is_ready()
            {
                here = None;
                // Its answer is queued: poll the connection to write it.
                continue;
            }
            return Poll::Pending;
        }
    })
    .await;
}

/// One stream: the request's answer (`call`, from [`answer`]) back to the
/// client.
async fn serve_stream(
    call: impl Future<Output = Result<Response<Body>, Infallible>>,
    mut respond: SendResponse<Bytes>,
    write_timeout: Duration,
) {
    let mut call = pin!(call);
    // The answer, or `None` once the client resets the stream: it no longer
    // wants the answer, and dropping the call cancels the handler.
    let answer = poll_fn(|cx| match call.as_mut().poll(cx) {
        Poll::Ready(Ok(resp)) => Poll::Ready(Some(resp)),
        Poll::Ready(Err(never)) => match never {},
        Poll::Pending => match respond.poll_reset(cx) {
            Poll::Ready(_) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        },
    })
    .await;
    let Some(resp) = answer else { return };
    let (mut head, body) = resp.into_parts();
    strip_connection_headers(&mut head.headers);
    head.headers.entry(header::DATE).or_insert_with(date);
    if body.is_end_stream() {
        let _ = respond.send_response(Response::from_parts(head, ()), true);
        return;
    }
    if let Some(len) = body.size_hint().exact() {
        head.headers
            .entry(header::CONTENT_LENGTH)
            .or_insert_with(|| HeaderValue::from(len));
    }
    if let Ok(tx) = respond.send_response(Response::from_parts(head, ()), false)
        && let Err(e) = pipe(body, tx, write_timeout).await
    {
        tracing::debug!(error = %e, "HTTP/2 answer not sent in full");
    }
}

/// Sends `body` on `tx` under the client's flow control: a data frame waits
/// for send capacity before the next frame is read from the body, and is
/// handed to h2 only as far as the capacity goes, so h2 never queues more
/// than the client's window allows and a slow reader holds a stream back
/// instead of filling the server's memory. A stream that gets no capacity
/// for `write_timeout` while it has bytes to send is reset (`CANCEL`),
/// which drops the rest of its answer.
async fn pipe(
    body: Body,
    mut tx: SendStream<Bytes>,
    write_timeout: Duration,
) -> Result<(), h2::Error> {
    let mut body = pin!(body);
    // A data frame read from the body, waiting for capacity (and whether it
    // ends the stream).
    let mut waiting: Option<(Bytes, bool)> = None;
    // The write timeout's timer, made the first time the stream waits for
    // capacity, and whether it is set for the current wait.
    let mut stall: Option<Pin<Box<Sleep>>> = None;
    let mut stalled = false;
    poll_fn(|cx| {
        loop {
            // Registered on every pass, so a reset wakes the task even while
            // it waits for the body or for capacity.
            if let Poll::Ready(reason) = tx.poll_reset(cx)? {
                return Poll::Ready(Err(reason.into()));
            }
            if let Some((mut data, eos)) = waiting.take() {
                loop {
                    let capacity = tx.capacity();
                    if capacity == 0 {
                        match tx.poll_capacity(cx) {
                            Poll::Pending => {
                                if !write_timeout.is_zero() {
                                    if !stalled {
                                        stalled = true;
                                        let at = Instant::now() + write_timeout;
                                        match stall.as_mut() {
                                            Some(timer) => timer.as_mut().reset(at),
                                            None => {
                                                stall = Some(Box::pin(tokio::time::sleep_until(at)));
                                            }
                                        }
                                    }
                                    if let Some(timer) = stall.as_mut()
                                        && timer.as_mut().poll(cx).is_ready()
                                    {
                                        tracing::debug!(
                                            "HTTP/2 stream reset: its reader granted no window for the write timeout"
                                        );
                                        tx.send_reset(h2::Reason::CANCEL);
                                        return Poll::Ready(Ok(()));
                                    }
                                }
                                waiting = Some((data, eos));
                                return Poll::Pending;
                            }
                            Poll::Ready(Some(Ok(_))) => continue,
                            Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                            // The stream is gone (reset, or the connection closed).
                            Poll::Ready(None) => return Poll::Ready(Ok(())),
                        }
                    }
                    stalled = false;
                    if capacity >= data.len() {
                        tx.send_data(data, eos)?;
                        break;
                    }
                    tx.send_data(data.split_to(capacity), false)?;
                    tx.reserve_capacity(claim(data.len()));
                }
                if eos {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            match ready!(body.as_mut().poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let eos = body.is_end_stream();
                        if data.is_empty() {
                            // Needs no capacity (it may be the end marker).
                            tx.send_data(data, eos)?;
                            if eos {
                                return Poll::Ready(Ok(()));
                            }
                        } else {
                            tx.reserve_capacity(claim(data.len()));
                            waiting = Some((data, eos));
                        }
                    }
                    Err(frame) => {
                        if let Ok(trailers) = frame.into_trailers() {
                            tx.reserve_capacity(0);
                            tx.send_trailers(trailers)?;
                            return Poll::Ready(Ok(()));
                        }
                        // A frame kind HTTP/2 has no place for: skipped.
                    }
                },
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "response body failed");
                    tx.send_reset(h2::Reason::INTERNAL_ERROR);
                    return Poll::Ready(Ok(()));
                }
                None => {
                    // Ended without trailers and without an end-of-stream
                    // data frame: send an empty one.
                    tx.send_data(Bytes::new(), true)?;
                    return Poll::Ready(Ok(()));
                }
            }
        }
    })
    .await
}

/// The capacity a stream claims for `left` bytes to send: all of them, up
/// to what h2 buffers per stream. h2 assigns a stream no more than its
/// window, so a claim never holds back the connection's window from the
/// other streams.
fn claim(left: usize) -> usize {
    left.min(MAX_SEND_BUFFER_SIZE)
}

/// A request body: data frames (each returning its flow-control capacity as
/// it is read, so the client may send more), then the trailers if any.
struct Incoming {
    recv: RecvStream,
    /// What the declared `content-length` leaves to read (the size hint).
    length: Option<u64>,
    data_done: bool,
    done: bool,
}

impl http_body::Body for Incoming {
    type Data = Bytes;
    type Error = h2::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, h2::Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        if !self.data_done {
            match ready!(self.recv.poll_data(cx)) {
                Some(Ok(data)) => {
                    let _ = self.recv.flow_control().release_capacity(data.len());
                    if let Some(left) = self.length.as_mut() {
                        *left = left.saturating_sub(data.len() as u64);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                None => self.data_done = true,
            }
        }
        let trailers = ready!(self.recv.poll_trailers(cx));
        self.done = true;
        match trailers {
            Ok(Some(trailers)) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
            Ok(None) => Poll::Ready(None),
            Err(e) => Poll::Ready(Some(Err(e))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.recv.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        match self.length {
            Some(left) => SizeHint::with_exact(left),
            None => SizeHint::default(),
        }
    }
}

/// The `content-length` of a request, if it declares one (h2 itself rejects
/// a body that does not match it).
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// Headers that belong to one HTTP/1.1 connection and are malformed in
/// HTTP/2 (RFC 9113 §8.2.2): dropped from answers, with those `connection`
/// names.
fn strip_connection_headers(headers: &mut HeaderMap) {
    const HOP: [HeaderName; 4] = [
        header::TRANSFER_ENCODING,
        header::UPGRADE,
        header::TE,
        HeaderName::from_static("keep-alive"),
    ];
    for name in &HOP {
        headers.remove(name);
    }
    headers.remove("proxy-connection");
    if let Some(connection) = headers.remove(header::CONNECTION)
        && let Ok(names) = connection.to_str()
    {
        for name in names.split(',') {
            headers.remove(name.trim());
        }
    }
}

/// The `date` header value for now, formatted once a second per thread.
fn date() -> HeaderValue {
    use std::cell::RefCell;
    thread_local! {
        static NOW: RefCell<Option<(u64, HeaderValue)>> = const { RefCell::new(None) };
    }
    let now = SystemTime::now();
    let secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    NOW.with_borrow_mut(|cached| match cached {
        Some((at, value)) if *at == secs => value.clone(),
        _ => {
            let value = HeaderValue::from_str(&httpdate::fmt_http_date(now))
                .unwrap_or(HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"));
            *cached = Some((secs, value.clone()));
            value
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_headers_are_stripped() {
        let mut h = HeaderMap::new();
        h.insert(header::CONNECTION, HeaderValue::from_static("close, x-hop"));
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
        strip_connection_headers(&mut h);
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h.contains_key(header::CONTENT_TYPE));
    }

    #[test]
    fn date_is_an_http_date() {
        let d = date();
        let s = d.to_str().unwrap_or_default();
        assert!(httpdate::parse_http_date(s).is_ok(), "{s}");
    }

    /// Serves one connection whose client sends `sent` and then nothing,
    /// over TLS when `tls` is given; checks it is closed without an answer
    /// and its slot given back, and returns how long that took.
    async fn serve_silent(sent: &[u8], tls: Option<TlsAcceptor>) -> Duration {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let mut client = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        client
            .write_all(sent)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let (tcp, peer) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
        let service = tower::service_fn(|_req: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(Body::empty()))
        });
        let registry = Arc::new(Registry::new(ConnectionLimits::default()));
        let slot = registry
            .admit(peer.ip())
            .unwrap_or_else(|e| panic!("{e:?}"));
        let started = tokio::time::Instant::now();
        connection(tcp, peer, service, tls, CancellationToken::new(), slot).await;
        let took = started.elapsed();
        assert_eq!(registry.open_count(), 0, "the slot is given back");
        let mut rest = Vec::new();
        let n = client
            .read_to_end(&mut rest)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(n, 0, "closed without an answer");
        took
    }

    /// A connection that sends nothing is closed once the header read
    /// timeout passes (tokio's clock is paused, so the test does not wait
    /// for it).
    #[tokio::test(start_paused = true)]
    async fn a_silent_connection_is_closed() {
        let took = serve_silent(b"", None).await;
        assert!(took >= ConnectionLimits::default().header_read_timeout);
    }

    #[tokio::test]
    async fn the_preface_is_told_apart_from_http1() {
        for (sent, h2) in [
            (PREFACE, true),
            (&b"POST / HTTP/1.1\r\nhost: x\r\n\r\n"[..], false),
            (&b"PRI * HTTP/1.1\r\n\r\n"[..], false),
            (&b"P"[..], false),
        ] {
            let listener = TcpListener::bind("127.0.0.1:0")
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
            let sent = sent.to_vec();
            let expected = sent.clone();
            let client = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt as _;
                let mut c = TcpStream::connect(addr)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                // Byte by byte: the sniffer must wait for the rest, not guess.
                for b in sent {
                    c.write_all(&[b]).await.unwrap_or_else(|e| panic!("{e}"));
                    c.flush().await.unwrap_or_else(|e| panic!("{e}"));
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                // Keep the socket open for a while, then close.
                tokio::time::sleep(Duration::from_millis(50)).await;
            });
            let (mut tcp, _) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
            let (is_h2, seen) = sniff(&mut tcp).await.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(is_h2, h2);
            // Nothing past what was needed is lost: Rewind gives it back.
            let mut io = Rewind { seen, io: tcp };
            let mut all = Vec::new();
            io.read_to_end(&mut all)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(all, expected);
            client.await.unwrap_or_else(|e| panic!("{e}"));
        }
    }
    // ---- Limits, on a paused clock: no test waits for a timeout ----------------

    use tokio::io::AsyncWriteExt as _;

    /// Serves a handler that reads the whole body and answers its length;
    /// `/hold` first waits until `release` is notified.
    async fn start(limits: ConnectionLimits) -> (SocketAddr, Hold) {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let hold = Hold::default();
        let held = hold.clone();
        let service = tower::service_fn(move |req: Request<Body>| {
            let held = held.clone();
            async move {
                if req.uri().path() == "/hold" {
                    held.entered.notify_one();
                    held.release.notified().await;
                }
                let answer = match axum::body::to_bytes(req.into_body(), usize::MAX).await {
                    Ok(body) => Response::new(Body::from(body.len().to_string())),
                    Err(_) => {
                        let mut resp = Response::new(Body::empty());
                        *resp.status_mut() = http::StatusCode::BAD_REQUEST;
                        resp
                    }
                };
                Ok::<_, Infallible>(answer)
            }
        });
        tokio::spawn(serve(
            listener,
            service,
            limits,
            Wire::default(),
            None,
            CancellationToken::new(),
        ));
        (addr, hold)
    }

    /// `/hold` requests: signalled when one is in the handler; released by
    /// the test.
    #[derive(Clone, Default)]
    struct Hold {
        entered: Arc<Notify>,
        release: Arc<Notify>,
    }

    async fn connect(addr: SocketAddr, sent: &[u8]) -> TcpStream {
        let mut c = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        c.write_all(sent).await.unwrap_or_else(|e| panic!("{e}"));
        c
    }

    /// Everything the server sends until it closes the connection.
    async fn until_closed(c: &mut TcpStream) -> String {
        let mut all = Vec::new();
        // A reset is a close too.
        let _ = c.read_to_end(&mut all).await;
        String::from_utf8_lossy(&all).into_owned()
    }

    const GET: &[u8] = b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";

    /// Writes one byte of `bytes` a second until the server stops reading.
    fn trickle(mut c: tokio::net::tcp::OwnedWriteHalf, bytes: &'static [u8]) {
        tokio::spawn(async move {
            for b in bytes.iter().cycle() {
                if c.write_all(&[*b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickled_head_is_cut_off_whole() {
        let limits = ConnectionLimits::default();
        let (addr, _) = start(limits.clone()).await;
        let (mut read, write) = connect(addr, b"").await.into_split();
        let started = Instant::now();
        trickle(
            write,
            b"GET / HTTP/1.1\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        );
        let mut got = Vec::new();
        let _ = read.read_to_end(&mut got).await;
        assert!(got.is_empty(), "no answer: {got:?}");
        // Bytes kept coming, yet the head as a whole ran out of time (the
        // sniffed bytes get their own timeout, so at most twice).
        let took = started.elapsed();
        assert!(
            took >= limits.header_read_timeout && took <= 3 * limits.header_read_timeout,
            "{took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickled_body_gets_408() {
        let (addr, _) = start(ConnectionLimits::default()).await;
        let (mut read, mut write) = connect(addr, b"").await.into_split();
        write
            .write_all(b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 50000000\r\n\r\n")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        trickle(write, b"x");
        let mut got = Vec::new();
        let _ = read.read_to_end(&mut got).await;
        let got = String::from_utf8_lossy(&got);
        assert!(got.starts_with("HTTP/1.1 408"), "{got}");
        assert!(
            got.to_ascii_lowercase().contains("connection: close"),
            "{got}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_at_the_minimum_rate_is_read() {
        let (addr, _) = start(ConnectionLimits {
            body_min_rate: 1,
            body_read_timeout: Duration::from_secs(2),
            ..ConnectionLimits::default()
        })
        .await;
        let (mut read, mut write) = connect(addr, b"").await.into_split();
        write
            .write_all(
                b"POST / HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 20\r\n\r\n",
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // 2 bytes a second, twice the minimum.
        tokio::spawn(async move {
            for _ in 0..10 {
                let _ = write.write_all(b"ab").await;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        let mut got = Vec::new();
        let _ = read.read_to_end(&mut got).await;
        let got = String::from_utf8_lossy(&got);
        assert!(
            got.starts_with("HTTP/1.1 200") && got.ends_with("20"),
            "{got}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_server_closes_the_longest_idle_first() {
        let limits = ConnectionLimits {
            max_connections: 2,
            header_read_timeout: Duration::from_secs(3600),
            idle_timeout: Duration::from_secs(3600),
            ..ConnectionLimits::default()
        };
        let (addr, _) = start(limits).await;
        let mut oldest = connect(addr, b"G").await;
        let _younger = connect(addr, b"G").await;
        let mut fresh = connect(addr, GET).await;
        let started = Instant::now();
        let answer = until_closed(&mut fresh).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert_eq!(until_closed(&mut oldest).await, "");
        assert!(
            started.elapsed() < Duration::from_secs(3600),
            "closed to make room, not timed out"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn one_address_gets_its_share() {
        let limits = ConnectionLimits {
            max_connections_per_ip: 1,
            header_read_timeout: Duration::from_secs(3600),
            idle_timeout: Duration::from_secs(3600),
            ..ConnectionLimits::default()
        };
        let (addr, hold) = start(limits).await;
        // The address's one connection, idle: closed to make room.
        let mut idle = connect(addr, b"G").await;
        let mut busy = connect(
            addr,
            b"GET /hold HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        )
        .await;
        hold.entered.notified().await;
        let started = Instant::now();
        assert_eq!(until_closed(&mut idle).await, "");
        assert!(started.elapsed() < Duration::from_secs(3600));
        // Now its one connection is busy: another is refused at once.
        let mut refused = connect(addr, GET).await;
        assert_eq!(until_closed(&mut refused).await, "");
        hold.release.notify_one();
        assert!(until_closed(&mut busy).await.starts_with("HTTP/1.1 200"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_full_of_busy_connections_stops_accepting_until_one_ends() {
        let limits = ConnectionLimits {
            max_connections: 1,
            ..ConnectionLimits::default()
        };
        let (addr, hold) = start(limits).await;
        let mut busy = connect(
            addr,
            b"GET /hold HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        )
        .await;
        hold.entered.notified().await;
        let mut waiting = connect(addr, GET).await;
        // Nothing can be closed to make room: no answer, however long.
        let mut first = [0_u8; 1];
        let early = tokio::time::timeout(Duration::from_secs(5), waiting.read(&mut first)).await;
        assert!(
            early.is_err(),
            "answered while the server was full: {early:?}"
        );
        hold.release.notify_one();
        assert!(until_closed(&mut busy).await.starts_with("HTTP/1.1 200"));
        // The busy one's slot is free: the waiting client is accepted and answered.
        assert!(until_closed(&mut waiting).await.starts_with("HTTP/1.1 200"));
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_kept_alive_connection_is_closed() {
        let limits = ConnectionLimits {
            idle_timeout: Duration::from_secs(5),
            header_read_timeout: Duration::from_secs(3600),
            ..ConnectionLimits::default()
        };
        let (addr, _) = start(limits).await;
        let mut c = connect(addr, b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").await;
        let started = Instant::now();
        let answer = until_closed(&mut c).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_secs(5) && took < Duration::from_secs(3600),
            "{took:?}"
        );
    }

    // ---- TLS: the handshake is held to the same limits -------------------------

    /// A server certificate for `localhost`/127.0.0.1 and the config of a
    /// client that trusts it.
    struct TestTls {
        _dir: tempfile::TempDir,
        acceptor: TlsAcceptor,
        client: tokio_rustls::TlsConnector,
    }

    fn test_tls() -> TestTls {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
            .unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cert = dir.path().join("cert.pem");
        let key = dir.path().join("key.pem");
        std::fs::write(&cert, made.cert.pem()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&key, made.signing_key.serialize_pem()).unwrap_or_else(|e| panic!("{e}"));
        let tls = crate::ServerTls::from_pem_files(&cert, &key).unwrap_or_else(|e| panic!("{e}"));
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(made.cert.der().clone())
            .unwrap_or_else(|e| panic!("{e}"));
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_root_certificates(roots)
        .with_no_client_auth();
        TestTls {
            _dir: dir,
            acceptor: TlsAcceptor::from(tls.config()),
            client: tokio_rustls::TlsConnector::from(Arc::new(client)),
        }
    }

    /// A client that opens TLS and sends nothing more (here: the first
    /// bytes of a record header) is closed once the header read timeout
    /// passes, and gives its slot back.
    #[tokio::test(start_paused = true)]
    async fn a_silent_tls_client_is_closed() {
        let tls = test_tls();
        let took = serve_silent(&[0x16, 0x03, 0x01], Some(tls.acceptor)).await;
        let limits = ConnectionLimits::default();
        assert!(took >= limits.header_read_timeout, "{took:?}");
        assert!(
            took < limits.idle_timeout,
            "closed by the handshake timeout, not the idle timeout: {took:?}"
        );
    }

    /// A silent TLS client holds a slot like any other: when the server is
    /// full it is the idle connection closed to make room, and the TLS
    /// client that came after it is served.
    #[tokio::test(start_paused = true)]
    async fn a_silent_tls_client_is_closed_to_make_room() {
        let tls = test_tls();
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let service = tower::service_fn(|_req: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(Body::from("hello")))
        });
        let limits = ConnectionLimits {
            max_connections: 1,
            header_read_timeout: Duration::from_secs(3600),
            idle_timeout: Duration::from_secs(3600),
            ..ConnectionLimits::default()
        };
        tokio::spawn(serve(
            listener,
            service,
            limits,
            Wire::default(),
            Some(tls.acceptor),
            CancellationToken::new(),
        ));
        let mut silent = connect(addr, &[0x16]).await;
        let started = Instant::now();
        let tcp = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let name =
            rustls::pki_types::ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}"));
        let mut fresh = tls
            .client
            .connect(name, tcp)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        fresh.write_all(GET).await.unwrap_or_else(|e| panic!("{e}"));
        let mut answer = Vec::new();
        let _ = fresh.read_to_end(&mut answer).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.ends_with("hello"),
            "{answer}"
        );
        assert_eq!(until_closed(&mut silent).await, "");
        assert!(
            started.elapsed() < Duration::from_secs(3600),
            "closed to make room, not timed out"
        );
    }
}
