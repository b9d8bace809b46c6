//! Transports: how one A2A operation travels over one protocol binding.
//!
//! The client above this module works in canonical types: it hands over an
//! [`A2aRequest`] and expects its [`A2aResponse`] (or a stream of
//! [`StreamEvent`]s) back. A [`Transport`] carries that across one binding:
//!
//! * [`jsonrpc`]: JSON-RPC 2.0 over HTTP POST, streams as SSE (A2A 1.0).
//! * [`rest`]: HTTP+JSON, one route per operation, streams as SSE (A2A 1.0).
//!   Both are [`HttpBinding`]s: the request goes out as its 1.0 JSON params
//!   and the answer is read back from 1.0 JSON, once for both, here.
//! * `grpc` (feature `grpc`, default): gRPC (`lf.a2a.v1.A2AService`) on
//!   tonic, server streams (A2A 1.0), typed: each operation's prost messages
//!   through `switchboard_proto`.
//! * [`v03`]: A2A 0.3 over JSON-RPC and HTTP+JSON: [`jsonrpc`] and [`rest`]
//!   in 0.3 mode, translating 1.0 ⇄ 0.3 JSON at the edge.
//! * `grpc_v03` (feature `grpc`): A2A 0.3 over gRPC (`a2a.v1.A2AService`),
//!   typed like `grpc` and on its connection code.
//!
//! Another binding is one more module here: implement [`Transport`] (or
//! [`HttpBinding`], for one over HTTP that speaks JSON) and add one
//! [`TransportFactory`] line to [`FACTORIES`]. Interface selection, tenant
//! handling and stream termination stay in the client.

#[cfg(feature = "grpc")]
pub(crate) mod grpc;
#[cfg(feature = "grpc")]
pub(crate) mod grpc_v03;
pub(crate) mod jsonrpc;
pub(crate) mod rest;
pub(crate) mod sse;
pub(crate) mod v03;

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use reqwest::header::HeaderMap;
use serde_json::Value;
use serde_json::value::RawValue;
use sse::{Event, SseParser};
use switchboard_protocol::card::{BINDING_HTTP_JSON, BINDING_JSONRPC};
use switchboard_protocol::{A2aRequest, A2aResponse, AgentInterface, Operation};

use crate::client::{EventStream, StreamEvent};
use crate::error::ClientError;
use crate::tap::WireRecorder;
use jsonrpc::JsonRpcTransport;
use rest::RestTransport;
use v03::is_v03;

/// One item of a stream, still as raw 1.0 JSON (a `StreamResponse`).
#[derive(Debug)]
pub(crate) struct RawEvent {
    /// The SSE `id:` of the event, when it is a number.
    pub seq: Option<u64>,
    /// The `result` of the event: a 1.0 `StreamResponse` object.
    pub result: Box<RawValue>,
}

/// A stream of raw events. It ends after the first error.
pub(crate) type RawStream = BoxStream<'static, Result<RawEvent, ClientError>>;

/// What a transport operation returns: a boxed future of its result.
pub(crate) type ClientFuture<'a, T> = BoxFuture<'a, Result<T, ClientError>>;

/// Carries A2A operations over one protocol binding, typed end to end: a
/// canonical [`A2aRequest`] in, its [`A2aResponse`] (or its stream of
/// [`StreamEvent`]s) out. How the request travels — which JSON-RPC method,
/// REST route or gRPC method — comes from the operation table
/// ([`switchboard_protocol::Operation`]).
pub(crate) trait Transport: Send + Sync + fmt::Debug {
    /// The endpoint URL requests go to.
    fn endpoint(&self) -> &str;

    /// A unary operation.
    fn call(&self, request: A2aRequest) -> ClientFuture<'_, A2aResponse>;

    /// A streaming operation. Errors that happen before the stream starts
    /// are returned here; errors afterwards are the stream's last item.
    /// `after` resumes a SubscribeToTask after that event (the HTTP
    /// bindings send it as `Last-Event-ID`, gRPC as `last-event-id`); a
    /// binding without such a parameter subscribes afresh, and the resume
    /// wrapper (`crate::resume`) drops the events already yielded.
    fn stream(&self, request: A2aRequest, after: Option<u64>) -> ClientFuture<'_, EventStream>;

    /// A streaming operation opted in to AG-UI (`Accept:
    /// application/x-agui-events`), resumed after `last_event_id`: the
    /// successful `text/event-stream` answer, or the error it was.
    #[cfg(feature = "agui")]
    fn open_agui(
        &self,
        _request: A2aRequest,
        _last_event_id: Option<String>,
    ) -> ClientFuture<'_, reqwest::Response> {
        Box::pin(std::future::ready(Err(no_agui())))
    }
}

/// What a binding without AG-UI answers.
#[cfg(feature = "agui")]
fn no_agui() -> ClientError {
    ClientError::Config("AG-UI streams need an A2A 1.0 JSON-RPC or HTTP+JSON interface".into())
}

/// What a binding in a 0.3 dialect answers when asked for AG-UI.
#[cfg(feature = "agui")]
pub(crate) fn agui_needs_v1() -> ClientError {
    ClientError::Config("AG-UI streams need an A2A 1.0 interface".into())
}

/// The `Accept` of an AG-UI stream.
#[cfg(feature = "agui")]
pub(crate) const AGUI_ACCEPT: &str = "application/x-agui-events";

/// `true` when an answer is `text/event-stream`.
pub(crate) fn is_sse(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

/// Where an HTTP binding's transport sends, with which HTTP settings, and
/// in which dialect: what the JSON-RPC and REST transports hold alike.
#[derive(Debug)]
pub(crate) struct HttpEndpoint {
    /// The interface URL (`http` or `https`).
    pub url: reqwest::Url,
    /// The HTTP settings requests go out with.
    pub http: Http,
    /// Speak A2A 0.3 instead of 1.0 (see [`v03`]).
    pub v03: bool,
}

impl HttpEndpoint {
    /// The endpoint at `url`; only `http` and `https` are served.
    pub(crate) fn new(url: &str, http: Http, v03: bool) -> Result<Self, ClientError> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| ClientError::Config(format!("invalid endpoint URL {url:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ClientError::Config(format!(
                "endpoint URL {parsed} is not http(s)"
            )));
        }
        Ok(HttpEndpoint {
            url: parsed,
            http,
            v03,
        })
    }

    /// What requests send in `A2A-Version`.
    pub(crate) fn version(&self) -> &'static str {
        if self.v03 {
            switchboard_protocol::v03::PROTOCOL_VERSION
        } else {
            "1.0"
        }
    }
}

/// An HTTP binding (JSON-RPC, REST; either in 1.0 or in the 0.3 dialect):
/// what differs between them is how an operation becomes a request and how
/// its answer is read, in 1.0 JSON. The [`Transport`] around those steps —
/// encode the request, send, open the stream, fall back to a whole answer
/// where a stream was asked for, decode the answer — is written once, for
/// every binding, below.
pub(crate) trait HttpBinding: Send + Sync + fmt::Debug {
    /// What reading the answer needs to know about the request (JSON-RPC:
    /// its id, which the answer must echo).
    type Call: Send + 'static;

    /// The transport for `endpoint` (refused when the binding cannot use
    /// its URL).
    fn new(endpoint: HttpEndpoint) -> Result<Self, ClientError>
    where
        Self: Sized;

    /// Where requests go, and in which dialect.
    fn http_endpoint(&self) -> &HttpEndpoint;

    /// `false` where a binding has no way to resume a stream, so
    /// `Last-Event-ID` is not sent (`crate::resume` drops what a fresh
    /// subscription repeats).
    fn resumes(&self) -> bool {
        true
    }

    /// The request for a 1.0 `method` and its params, expecting `accept`.
    fn request(
        &self,
        method: &'static str,
        params: Value,
        accept: &'static str,
    ) -> Result<(reqwest::RequestBuilder, Self::Call), ClientError>;

    /// The 1.0 result in a whole (non-SSE) answer: a unary one, or a
    /// streaming call's answer that was not a stream (an error, or one result).
    fn read_body(
        &self,
        method: &'static str,
        status: reqwest::StatusCode,
        body: &[u8],
        call: &Self::Call,
    ) -> Result<Box<RawValue>, ClientError>;

    /// The 1.0 results in a `text/event-stream` answer. An error found
    /// before the first event may be returned here.
    fn read_events(
        &self,
        method: &'static str,
        resp: reqwest::Response,
        call: Self::Call,
    ) -> impl Future<Output = Result<RawStream, ClientError>> + Send;
}

impl<B: HttpBinding> Transport for B {
    fn endpoint(&self) -> &str {
        self.http_endpoint().url.as_str()
    }

    fn call(&self, request: A2aRequest) -> ClientFuture<'_, A2aResponse> {
        Box::pin(async move {
            let (op, params) = (request.operation(), to_params(&request)?);
            let (req, call) = self.request(op.name(), params, "application/json")?;
            let (status, body) = self.http_endpoint().http.send_unary(req).await?;
            let raw = self.read_body(op.name(), status, &body, &call)?;
            A2aResponse::from_json(op, raw.get()).map_err(|e| mismatch(op, &e))
        })
    }

    fn stream(&self, request: A2aRequest, after: Option<u64>) -> ClientFuture<'_, EventStream> {
        Box::pin(async move {
            let (op, params) = (request.operation(), to_params(&request)?);
            let method = op.name();
            let (req, call) = self.request(method, params, "text/event-stream")?;
            let after = after.filter(|_| self.resumes());
            let raw = match self
                .http_endpoint()
                .http
                .open_stream(req, method, after)
                .await?
            {
                StreamAnswer::Sse(resp) => self.read_events(method, resp, call).await?,
                // An error before the stream started, or a server that
                // answered a streaming call with one result.
                StreamAnswer::Whole(status, body) => {
                    let result = self.read_body(method, status, &body, &call)?;
                    stream::iter([Ok(RawEvent { seq: None, result })]).boxed()
                }
            };
            Ok(raw
                .map(move |item| {
                    let raw = item?;
                    let event =
                        serde_json::from_str(raw.result.get()).map_err(|e| mismatch(op, &e))?;
                    Ok(StreamEvent {
                        seq: raw.seq,
                        event,
                    })
                })
                .boxed())
        })
    }

    #[cfg(feature = "agui")]
    fn open_agui(
        &self,
        request: A2aRequest,
        last_event_id: Option<String>,
    ) -> ClientFuture<'_, reqwest::Response> {
        Box::pin(async move {
            // AG-UI streams exist only in 1.0.
            if self.http_endpoint().v03 {
                return Err(agui_needs_v1());
            }
            let (op, params) = (request.operation(), to_params(&request)?);
            let method = op.name();
            let (req, call) = self.request(method, params, AGUI_ACCEPT)?;
            let answer = self
                .http_endpoint()
                .http
                .open_stream_after(req, method, last_event_id);
            match answer.await? {
                StreamAnswer::Sse(resp) => Ok(resp),
                StreamAnswer::Whole(status, body) => {
                    self.read_body(method, status, &body, &call)?;
                    Err(ClientError::Decode(format!(
                        "{method} answered with one result, not an AG-UI stream"
                    )))
                }
            }
        })
    }
}

/// A request as JSON params.
fn to_params(request: &A2aRequest) -> Result<Value, ClientError> {
    serde_json::to_value(request).map_err(|e| {
        ClientError::Config(format!(
            "cannot serialize {} params: {e}",
            request.operation()
        ))
    })
}

/// An answer that is not the operation's result type.
fn mismatch(op: Operation, e: &serde_json::Error) -> ClientError {
    ClientError::Decode(format!("{op} result does not match the A2A schema: {e}"))
}

/// The `Last-Event-ID` header name (SSE, WHATWG HTML §9.2): the last event
/// id a client saw, sent when it reconnects.
pub(crate) const LAST_EVENT_ID: &str = "last-event-id";

/// Sends `req`, shown first to the call's wire recorder when there is one
/// (see [`crate::tap`]).
async fn send(
    req: reqwest::RequestBuilder,
    wire: Option<&WireRecorder>,
) -> reqwest::Result<reqwest::Response> {
    let Some(wire) = wire else {
        return req.send().await;
    };
    let (client, request) = req.build_split();
    let request = request?;
    wire.request(&request);
    client.execute(request).await
}

/// Adds the current span's `traceparent` (W3C Trace Context) when tracing
/// is on; see `switchboard_telemetry::trace`.
fn with_traceparent(req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
    match switchboard_telemetry::trace::current() {
        Some(tp) => req.header(switchboard_telemetry::trace::TRACEPARENT, tp.to_string()),
        None => req,
    }
}

/// HTTP settings shared by the card fetch and every HTTP-based transport.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    /// The connection pool.
    pub client: reqwest::Client,
    /// Headers added to every request (caller's extra headers, `A2A-Extensions`).
    pub headers: HeaderMap,
    /// Total time limit of a unary request; for a stream, the limit for the
    /// response headers to arrive.
    pub timeout: Option<Duration>,
    /// The CAs `https` servers are checked against (gRPC builds its TLS
    /// from them).
    #[cfg(feature = "grpc")]
    pub roots: crate::tls::TrustedRoots,
    /// OAuth 2.0 access tokens, when the client uses them (see [`crate::oauth`]).
    pub tokens: Option<std::sync::Arc<crate::oauth::TokenSource>>,
}

impl Http {
    /// The headers every request carries: the caller's, `A2A-Extensions`,
    /// and the current OAuth access token as a bearer token.
    pub(crate) fn request_headers(&self) -> HeaderMap {
        let mut headers = self.headers.clone();
        if let Some(token) = self.tokens.as_ref().and_then(|t| t.latest())
            && let Ok(mut value) =
                reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
        {
            value.set_sensitive(true);
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        headers
    }
}

/// At most this much of an unexpected HTTP body is kept in an error.
const MAX_ERROR_BODY: usize = 4096;

/// The error for an HTTP answer the binding cannot read as an A2A error:
/// the status and the start of the body.
pub(crate) fn http_error(status: reqwest::StatusCode, body: &[u8]) -> ClientError {
    let mut text = String::from_utf8_lossy(body).into_owned();
    if text.len() > MAX_ERROR_BODY {
        let mut cut = MAX_ERROR_BODY;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    ClientError::Http {
        status: status.as_u16(),
        body: text,
    }
}

/// The `null` result of operations that return nothing.
pub(crate) fn null_raw() -> Box<RawValue> {
    RawValue::NULL.to_owned()
}

/// Reads an SSE body as a stream of raw events. Events without data are
/// skipped; `result` reads each other event's data into its result (the
/// event's `id:` becomes its `seq`). The stream ends after the first error,
/// whether the connection's or one `result` returns.
pub(crate) fn sse_stream<F>(resp: reqwest::Response, result: F) -> RawStream
where
    F: FnMut(&Event) -> Result<Box<RawValue>, ClientError> + Send + 'static,
{
    struct Reading<F> {
        body: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
        parser: SseParser,
        /// Events parsed and not yet handed out.
        ready: std::collections::VecDeque<Event>,
        result: F,
        done: bool,
        /// The call's wire recorder, taken while the stream is opened.
        wire: Option<WireRecorder>,
    }
    let reading = Reading {
        body: resp.bytes_stream().boxed(),
        parser: SseParser::default(),
        ready: std::collections::VecDeque::new(),
        result,
        done: false,
        wire: WireRecorder::current(),
    };
    stream::unfold(reading, |mut r| async move {
        if r.done {
            return None;
        }
        let item = loop {
            if let Some(event) = r.ready.pop_front() {
                if event.data.trim().is_empty() {
                    continue;
                }
                break (r.result)(&event).map(|result| RawEvent {
                    seq: event.id.trim().parse().ok(),
                    result,
                });
            }
            match r.body.next().await {
                None => return None,
                Some(Err(e)) => break Err(ClientError::transport(&e)),
                Some(Ok(chunk)) => {
                    if let Some(wire) = &r.wire {
                        wire.chunk(&chunk);
                    }
                    match r.parser.push(&chunk) {
                        Ok(events) => r.ready.extend(events),
                        Err(e) => break Err(ClientError::Decode(e.to_string())),
                    }
                }
            }
        };
        r.done = item.is_err();
        Some((item, r))
    })
    .boxed()
}

/// What the server answered a streaming request with.
pub(crate) enum StreamAnswer {
    /// A successful `text/event-stream` response: read it as SSE.
    Sse(reqwest::Response),
    /// Anything else, read whole: an error before the stream started, or a
    /// server that answered a streaming call with one unary result.
    Whole(reqwest::StatusCode, bytes::Bytes),
}

/// The request plumbing the HTTP bindings (JSON-RPC and REST) share.
impl Http {
    /// Sends a unary request under the client's total timeout and reads
    /// the whole answer.
    pub(crate) async fn send_unary(
        &self,
        mut req: reqwest::RequestBuilder,
    ) -> Result<(reqwest::StatusCode, bytes::Bytes), ClientError> {
        req = with_traceparent(req);
        if let Some(t) = self.timeout {
            req = req.timeout(t);
        }
        let wire = WireRecorder::current();
        let resp = send(req, wire.as_ref())
            .await
            .map_err(|e| ClientError::transport(&e))?;
        let status = resp.status();
        let headers = wire.as_ref().map(|_| resp.headers().clone());
        let body = resp.bytes().await.map_err(|e| ClientError::transport(&e))?;
        if let (Some(wire), Some(headers)) = (wire, headers) {
            wire.response(status, &headers, &body);
        }
        Ok((status, body))
    }

    /// [`Http::send_unary`] for a document the client fetches (a card, a
    /// JWKS): the body is read chunk by chunk and refused past `max` bytes,
    /// so a hostile or broken server cannot make the client buffer without
    /// bound. `None` for the body when it was too large.
    pub(crate) async fn send_bounded(
        &self,
        mut req: reqwest::RequestBuilder,
        max: usize,
    ) -> Result<(reqwest::StatusCode, Option<bytes::Bytes>), ClientError> {
        req = with_traceparent(req);
        if let Some(t) = self.timeout {
            req = req.timeout(t);
        }
        let mut resp = req.send().await.map_err(|e| ClientError::transport(&e))?;
        let status = resp.status();
        if resp.content_length().is_some_and(|n| n > max as u64) {
            return Ok((status, None));
        }
        let mut body = bytes::BytesMut::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| ClientError::transport(&e))? {
            if body.len() + chunk.len() > max {
                return Ok((status, None));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, Some(body.freeze())))
    }

    /// Sends a streaming request, resumed after event `after` when given
    /// (`Last-Event-ID`). A total timeout would cut long streams, so the
    /// limit only covers the wait for the response headers (and the body
    /// read of an answer that is not a stream).
    pub(crate) async fn open_stream(
        &self,
        req: reqwest::RequestBuilder,
        method: &'static str,
        after: Option<u64>,
    ) -> Result<StreamAnswer, ClientError> {
        self.open_stream_after(req, method, after.map(|n| n.to_string()))
            .await
    }

    /// [`Http::open_stream`] with any `Last-Event-ID` (an AG-UI stream's
    /// ids are `<seq>.<i>`, not numbers).
    pub(crate) async fn open_stream_after(
        &self,
        mut req: reqwest::RequestBuilder,
        method: &'static str,
        after: Option<String>,
    ) -> Result<StreamAnswer, ClientError> {
        if let Some(after) = after {
            req = req.header(LAST_EVENT_ID, after);
        }
        req = with_traceparent(req);
        let wire = WireRecorder::current();
        let resp = match self.timeout {
            Some(t) => tokio::time::timeout(t, send(req, wire.as_ref()))
                .await
                .map_err(|_| ClientError::timeout(method, t))?,
            None => send(req, wire.as_ref()).await,
        }
        .map_err(|e| ClientError::transport(&e))?;
        let status = resp.status();
        if status.is_success() && is_sse(&resp) {
            // The body follows chunk by chunk, as the stream reads it.
            if let Some(wire) = wire {
                wire.response(status, resp.headers(), &[]);
            }
            return Ok(StreamAnswer::Sse(resp));
        }
        let headers = wire.as_ref().map(|_| resp.headers().clone());
        let body = self.read_body(resp, method).await?;
        if let (Some(wire), Some(headers)) = (wire, headers) {
            wire.response(status, &headers, &body);
        }
        Ok(StreamAnswer::Whole(status, body))
    }

    /// Reads a whole (non-SSE) answer to a streaming call, within the
    /// client's timeout: streaming requests have no overall timeout, since a
    /// stream may last long, so the body read of a non-stream answer gets one.
    async fn read_body(
        &self,
        resp: reqwest::Response,
        method: &'static str,
    ) -> Result<bytes::Bytes, ClientError> {
        match self.timeout {
            Some(t) => tokio::time::timeout(t, resp.bytes())
                .await
                .map_err(|_| ClientError::timeout(method, t))?,
            None => resp.bytes().await,
        }
        .map_err(|e| ClientError::transport(&e))
    }
}

pub(crate) type BuildFn = fn(&AgentInterface, &Http) -> Result<Box<dyn Transport>, ClientError>;

/// How to recognise and build one transport.
pub(crate) struct TransportFactory {
    /// The binding name as written in `protocolBinding` (compared
    /// case-insensitively).
    pub binding: &'static str,
    /// Whether this transport speaks the interface's `protocolVersion`.
    pub supports_version: fn(&str) -> bool,
    /// Builds the transport.
    pub build: BuildFn,
}

impl TransportFactory {
    /// The factory of the [`HttpBinding`] `B` for interfaces named
    /// `binding`, of version 1.x, or 0.3 when `V03` (the 0.3 dialect of
    /// the same binding).
    const fn http<B: HttpBinding + 'static, const V03: bool>(binding: &'static str) -> Self {
        TransportFactory {
            binding,
            supports_version: if V03 { is_v03 } else { is_v1 },
            build: build_http::<B, V03>,
        }
    }
}

/// Builds the [`HttpBinding`] `B` for an interface, in the 0.3 dialect when
/// `V03` (see [`TransportFactory::http`]).
pub(crate) fn build_http<B: HttpBinding + 'static, const V03: bool>(
    iface: &AgentInterface,
    http: &Http,
) -> Result<Box<dyn Transport>, ClientError> {
    let endpoint = HttpEndpoint::new(&iface.url, http.clone(), V03)?;
    Ok(Box::new(B::new(endpoint)?))
}

impl fmt::Debug for TransportFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportFactory")
            .field("binding", &self.binding)
            .finish_non_exhaustive()
    }
}

/// Every transport this client implements, in no particular order (the
/// order of preference comes from the card or the builder).
pub(crate) static FACTORIES: &[TransportFactory] = &[
    TransportFactory::http::<JsonRpcTransport, false>(BINDING_JSONRPC),
    TransportFactory::http::<RestTransport, false>(BINDING_HTTP_JSON),
    #[cfg(feature = "grpc")]
    grpc::FACTORY,
    TransportFactory::http::<JsonRpcTransport, true>(BINDING_JSONRPC),
    TransportFactory::http::<RestTransport, true>(BINDING_HTTP_JSON),
    #[cfg(feature = "grpc")]
    grpc_v03::FACTORY,
];

/// The factory that can serve `iface`, if any.
pub(crate) fn factory_for(iface: &AgentInterface) -> Option<&'static TransportFactory> {
    FACTORIES.iter().find(|f| {
        f.binding
            .eq_ignore_ascii_case(iface.protocol_binding.trim())
            && (f.supports_version)(iface.protocol_version.trim())
    })
}

/// `true` for `1`, `1.0`, `1.1`, ... (A2A negotiates on Major.Minor).
pub(crate) fn is_v1(version: &str) -> bool {
    version == "1" || version.starts_with("1.")
}
