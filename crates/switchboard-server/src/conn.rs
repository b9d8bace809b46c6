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

use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, ready};
use std::time::{Duration, SystemTime};

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::{Buf, Bytes, BytesMut};
use h2::server::SendResponse;
use h2::{RecvStream, SendStream};
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, Response};
use http_body::{Body as _, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::Service;

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
/// returns when all have.
pub(crate) async fn serve(
    listener: TcpListener,
    service: impl HttpService,
    stop: CancellationToken,
) -> io::Result<()> {
    let connections = TaskTracker::new();
    loop {
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
        // Without TCP_NODELAY small SSE frames wait for delayed ACKs (~40 ms each).
        let _ = tcp.set_nodelay(true);
        connections.spawn(connection(tcp, peer, service.clone(), stop.clone()));
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

/// How long a new connection may take to send the bytes that tell its
/// protocol; one that stays silent longer is closed, so idle sockets cannot
/// pile up before the first request.
const FIRST_BYTES: Duration = Duration::from_secs(30);

async fn connection(
    mut tcp: TcpStream,
    peer: SocketAddr,
    service: impl HttpService,
    stop: CancellationToken,
) {
    let sniffed = tokio::select! {
        () = stop.cancelled() => return,
        sniffed = tokio::time::timeout(FIRST_BYTES, sniff(&mut tcp)) => sniffed,
    };
    let Ok(Ok((is_h2, seen))) = sniffed else {
        return;
    };
    let io = Rewind { seen, io: tcp };
    let peer = ConnectInfo(peer);
    if is_h2 {
        serve_h2(io, peer, service, stop).await;
    } else {
        serve_h1(io, peer, service, stop).await;
    }
}

/// Reads until the bytes either are the HTTP/2 preface or cannot become it.
/// Returns which, and the bytes read (the protocol reads them again).
async fn sniff(tcp: &mut TcpStream) -> io::Result<(bool, Bytes)> {
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

// ---- HTTP/1.1 -------------------------------------------------------------------

async fn serve_h1(
    io: Rewind<TcpStream>,
    peer: Peer,
    service: impl HttpService,
    stop: CancellationToken,
) {
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let mut req = req.map(Body::new);
        req.extensions_mut().insert(peer);
        service.clone().call(req)
    });
    // With upgrades, so a route added from outside can take over the
    // connection (`hyper::upgrade::on`, e.g. a WebSocket).
    let conn = hyper::server::conn::http1::Builder::new()
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
    io: Rewind<TcpStream>,
    peer: Peer,
    service: impl HttpService,
    stop: CancellationToken,
) {
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
        conn = handshake => match conn {
            Ok(conn) => conn,
            Err(e) => {
                tracing::trace!(error = %e, "HTTP/2 handshake failed");
                return;
            }
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
                    let stream = Box::pin(serve_stream(service.clone(), peer, req, respond));
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

/// One stream: the request to the service, its answer back to the client.
async fn serve_stream(
    mut service: impl HttpService,
    peer: Peer,
    req: Request<RecvStream>,
    mut respond: SendResponse<Bytes>,
) {
    let (mut parts, recv) = req.into_parts();
    parts.extensions.insert(peer);
    let length = content_length(&parts.headers);
    let body = Body::new(Incoming {
        recv,
        length,
        data_done: false,
        done: false,
    });
    let mut call = pin!(service.call(Request::from_parts(parts, body)));
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
        && let Err(e) = pipe(body, tx).await
    {
        tracing::debug!(error = %e, "HTTP/2 answer not sent in full");
    }
}

/// Sends `body` on `tx` under the client's flow control: a data frame waits
/// for send capacity before the next frame is read from the body, so a
/// slow reader holds a stream back instead of filling the server's memory.
async fn pipe(body: Body, mut tx: SendStream<Bytes>) -> Result<(), h2::Error> {
    let mut body = pin!(body);
    // A data frame read from the body, waiting for capacity (and whether it
    // ends the stream).
    let mut waiting: Option<(Bytes, bool)> = None;
    poll_fn(|cx| {
        loop {
            // Registered on every pass, so a reset wakes the task even while
            // it waits for the body or for capacity.
            if let Poll::Ready(reason) = tx.poll_reset(cx)? {
                return Poll::Ready(Err(reason.into()));
            }
            if let Some((data, eos)) = waiting.take() {
                while tx.capacity() == 0 {
                    match tx.poll_capacity(cx) {
                        Poll::Pending => {
                            waiting = Some((data, eos));
                            return Poll::Pending;
                        }
                        Poll::Ready(Some(Ok(0))) => {}
                        Poll::Ready(Some(Ok(_))) => break,
                        Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                        // The stream is gone (reset, or the connection closed).
                        Poll::Ready(None) => return Poll::Ready(Ok(())),
                    }
                }
                tx.send_data(data, eos)?;
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
                            // One byte claimed, not the whole frame: h2 raises
                            // the claim to what is buffered, and a large claim
                            // per waiting stream would starve the others.
                            tx.reserve_capacity(1);
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

    /// A connection that sends nothing is closed once `FIRST_BYTES` pass
    /// (tokio's clock is paused, so the test does not wait for it).
    #[tokio::test(start_paused = true)]
    async fn a_silent_connection_is_closed() {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let mut client = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let (tcp, peer) = listener.accept().await.unwrap_or_else(|e| panic!("{e}"));
        let service = tower::service_fn(|_req: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(Body::empty()))
        });
        let started = tokio::time::Instant::now();
        connection(tcp, peer, service, CancellationToken::new()).await;
        assert!(started.elapsed() >= FIRST_BYTES);
        let mut rest = Vec::new();
        let n = client
            .read_to_end(&mut rest)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(n, 0, "closed without an answer");
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
}
