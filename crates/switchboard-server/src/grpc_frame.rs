//! gRPC calls framed by hand: every method of the 1.0 service, and the
//! unary methods of the 0.3 one.
//!
//! A gRPC message on the wire is a 5-byte prefix (compressed flag,
//! big-endian length) plus the protobuf bytes. A unary call is one such
//! frame each way: the answer is response headers, one frame and the
//! trailer `grpc-status: 0`. A server-streaming call (SendStreamingMessage,
//! SubscribeToTask) reads one request frame the same way and answers with
//! headers, one frame per item as the engine produces it, and trailers
//! carrying the outcome: `grpc-status: 0` when the stream ends, or the
//! error's `grpc-status`, `grpc-message` and `grpc-status-details-bin` when
//! an error ends it. An error before any answer is a trailers-only response
//! whose headers carry the status.
//!
//! The 1.0 methods are dispatched by name from the operation table ([`v1`]):
//! each row is [`GrpcBinding::unary`] or [`GrpcBinding::streaming`] of its
//! marker, so a new row is served with no code here, and tonic's generated
//! server trait (which would want one method per rpc) is not used. The 0.3
//! service's streaming methods still go to tonic (0.3 gains no operations).
//!
//! Why by hand: on the 2-core benchmark machine tonic's unary path cost
//! ~6 % of the server's CPU per SendMessage (see `bench/RESULTS.md`), and
//! gRPC has to stay within 20 % of JSON-RPC's throughput.
//!
//! What it keeps from tonic, so clients see no difference: the request
//! metadata handed to the method, the response metadata the method sets
//! (for a stream: `a2a-extensions`, `first-event-id`), UNIMPLEMENTED for a
//! `grpc-encoding` other than `identity` (compression is not enabled),
//! RESOURCE_EXHAUSTED for a message over the size limit, and error statuses
//! as trailers-only responses. Bytes that are not one valid protobuf message
//! for the method are an A2A Parse error (INVALID_ARGUMENT with a
//! `PARSE_ERROR` ErrorInfo).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::{BufMut, Bytes, BytesMut};
use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use http::{HeaderMap, HeaderValue};
use http_body::Frame;
use switchboard_proto::op;
use switchboard_proto::v03::a2a_service_server::A2aService as _;
use switchboard_protocol::Operation;
use tonic::Status;
use tonic::metadata::MetadataMap;

use crate::errors::ErrorTable;
use crate::grpc::{GrpcBinding, parse_error};
use crate::grpc_v03::GrpcV03;

type Request = http::Request<Body>;
type Response = http::Response<Body>;

/// The length of the frame prefix: compressed flag (1 byte) + length (4 bytes).
const PREFIX: usize = 5;

/// How one method is called: the service, the request and the size limit
/// in, the answer out.
pub(crate) type Call<S> = fn(S, Request, usize) -> BoxFuture<'static, Result<Response, Infallible>>;

/// `Some(call)` for the listed `"Method" => trait_fn` pairs, `None` for
/// any other name.
macro_rules! unary_methods {
    ($method:expr, $($name:literal => $f:ident),* $(,)?) => {
        Some(match $method {
            $($name => |s, req, max| {
                let table = s.table();
                crate::pin_in_place!(framed(req, max, table, move |r| async move { s.$f(r).await }, respond))
            },)*
            _ => return None,
        })
    };
}

/// The call of one 1.0 method: [`GrpcBinding::unary`] or
/// [`GrpcBinding::streaming`] of its operation's marker, answered by
/// [`respond`] or [`respond_stream`].
macro_rules! v1_call {
    ($serve:ident, $respond:ident, $name:ident) => {{
        let call: Call<GrpcBinding> = |s, req, max| {
            let table = s.table();
            let method = move |r| async move { s.$serve::<op::$name>(r).await };
            // Built in its box (see `pin_in_place!`), not copied there.
            crate::pin_in_place!(framed(req, max, table, method, $respond))
        };
        call
    }};
    (unary, $name:ident) => {
        v1_call!(unary, respond, $name)
    };
    (stream, $name:ident) => {
        v1_call!(streaming, respond_stream, $name)
    };
}

/// [`v1`], generated from the operation table.
macro_rules! v1_methods {
    ($(($name:ident, $handler:ident, $req:ty, $kind:ident $(, $resp:ty)?))*) => {
        /// The methods of `lf.a2a.v1.A2AService` (A2A 1.0), by name: one
        /// per row of the operation table; `None` for an unknown name.
        pub(crate) fn v1(method: &str) -> Option<Call<GrpcBinding>> {
            Some(match Operation::from_name(method)? {
                $(Operation::$name => v1_call!($kind, $name),)*
            })
        }
    };
}

switchboard_protocol::for_each_operation!(compact v1_methods);

/// The unary methods of `a2a.v1.A2AService` (A2A 0.3), by name; `None` for
/// the streaming methods (and unknown names), which tonic serves.
pub(crate) fn v03(method: &str) -> Option<Call<GrpcV03>> {
    unary_methods!(method,
        "SendMessage" => send_message,
        "GetTask" => get_task,
        "CancelTask" => cancel_task,
        "CreateTaskPushNotificationConfig" => create_task_push_notification_config,
        "GetTaskPushNotificationConfig" => get_task_push_notification_config,
        "ListTaskPushNotificationConfig" => list_task_push_notification_config,
        "GetAgentCard" => get_agent_card,
        "DeleteTaskPushNotificationConfig" => delete_task_push_notification_config,
    )
}

/// One call: read and decode the request frame, call `method`, and write
/// its answer with `respond` (one frame, or the stream's frames), or its
/// status as a trailers-only response.
async fn framed<Q, T, F, Fut>(
    req: Request,
    max: usize,
    table: ErrorTable,
    method: F,
    respond: fn(tonic::Response<T>) -> Response,
) -> Result<Response, Infallible>
where
    Q: prost::Message + Default,
    F: FnOnce(tonic::Request<Q>) -> Fut,
    Fut: Future<Output = Result<tonic::Response<T>, Status>>,
{
    let answer = async { method(read_request(req, max, table).await?).await }.await;
    Ok(answer.map_or_else(Status::into_http, respond))
}

/// The request as the method takes it: metadata, extensions and the one
/// message of the body, decoded.
async fn read_request<Q: prost::Message + Default>(
    req: Request,
    max: usize,
    table: ErrorTable,
) -> Result<tonic::Request<Q>, Status> {
    let (parts, body) = req.into_parts();
    check_encoding(&parts.headers)?;
    let frame = read_frame(body, max, table).await?;
    let message = Q::decode(frame.slice(PREFIX..))
        .map_err(|e| parse_error(table, format!("failed to decode Protobuf message: {e}")))?;
    let meta = MetadataMap::from_headers(parts.headers);
    Ok(tonic::Request::from_parts(meta, parts.extensions, message))
}

/// Compression is not enabled, so only `identity` (or no `grpc-encoding`)
/// is accepted, with tonic's status and `grpc-accept-encoding` otherwise.
fn check_encoding(headers: &HeaderMap) -> Result<(), Status> {
    match headers.get("grpc-encoding") {
        None => Ok(()),
        Some(v) if v == "identity" => Ok(()),
        Some(v) => {
            let mut status = Status::unimplemented(format!(
                "Content is compressed with `{}` which isn't supported",
                String::from_utf8_lossy(v.as_bytes())
            ));
            status.metadata_mut().insert(
                "grpc-accept-encoding",
                tonic::metadata::MetadataValue::from_static("identity"),
            );
            Err(status)
        }
    }
}

/// Reads the request body: exactly one uncompressed frame of at most `max`
/// message bytes. Returns the frame, prefix included. A message declared
/// larger than `max` is refused as soon as its prefix arrives.
async fn read_frame(body: Body, max: usize, table: ErrorTable) -> Result<Bytes, Status> {
    let mut chunks = body.into_data_stream();
    // The common case is one chunk holding the whole frame: keep it as is
    // and only copy when the frame comes in pieces.
    let mut first = Bytes::new();
    let mut joined = BytesMut::new();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| Status::internal(format!("reading the request: {e}")))?;
        if joined.is_empty() && first.is_empty() {
            first = chunk;
        } else {
            if !first.is_empty() {
                joined.extend_from_slice(&first);
                first = Bytes::new();
            }
            joined.extend_from_slice(&chunk);
        }
        let seen: &[u8] = if joined.is_empty() { &first } else { &joined };
        if let Some(len) = declared_len(seen, max)?
            && seen.len() > PREFIX + len
        {
            return Err(parse_error(
                table,
                "a unary call carries exactly one message".into(),
            ));
        }
    }
    let frame = if joined.is_empty() {
        first
    } else {
        joined.freeze()
    };
    match declared_len(&frame, max)? {
        None if frame.is_empty() => Err(parse_error(table, "the request has no message".into())),
        Some(len) if frame.len() == PREFIX + len => Ok(frame),
        _ => Err(parse_error(
            table,
            "the request message is truncated".into(),
        )),
    }
}

/// The message length a frame prefix declares, once the prefix is complete.
fn declared_len(seen: &[u8], max: usize) -> Result<Option<usize>, Status> {
    let Some(prefix) = seen.get(..PREFIX) else {
        return Ok(None);
    };
    if prefix[0] != 0 {
        return Err(Status::internal(
            "protocol error: received message with compressed-flag but no grpc-encoding was specified",
        ));
    }
    let len = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    if len > max {
        return Err(Status::resource_exhausted(format!(
            "Error, decoded message length too large: found {len} bytes, the limit is: {max} bytes"
        )));
    }
    Ok(Some(len))
}

/// Headers (the method's metadata plus the content type), one frame, and
/// the trailer `grpc-status: 0`.
fn respond<R: prost::Message>(resp: tonic::Response<R>) -> Response {
    let (meta, message, extensions) = resp.into_parts();
    let frame = match encode(&message) {
        Ok(frame) => frame,
        Err(status) => return status.into_http(),
    };
    let body = Body::new(Frames {
        items: futures::stream::iter([Ok(frame)]),
        ended: false,
    });
    with_head(meta, extensions, body)
}

/// Headers (the method's metadata plus the content type), one frame per
/// item as the items come, and the trailers with the outcome.
fn respond_stream<R, S>(resp: tonic::Response<S>) -> Response
where
    R: prost::Message + 'static,
    S: Stream<Item = Result<R, Status>> + Unpin + Send + 'static,
{
    let (meta, items, extensions) = resp.into_parts();
    let body = Body::new(Frames {
        items: items.map(|item| item.and_then(|message| encode(&message))),
        ended: false,
    });
    with_head(meta, extensions, body)
}

/// The response: `body` under the method's metadata, as `application/grpc`.
fn with_head(meta: MetadataMap, extensions: http::Extensions, body: Body) -> Response {
    let mut headers = meta.into_headers();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    let mut out = http::Response::new(body);
    *out.headers_mut() = headers;
    *out.extensions_mut() = extensions;
    out
}

/// One message as a frame: prefix (uncompressed) and protobuf bytes.
fn encode<R: prost::Message>(message: &R) -> Result<Bytes, Status> {
    let len = message.encoded_len();
    let len32 = u32::try_from(len).map_err(|_| {
        Status::resource_exhausted(format!(
            "the response message ({len} bytes) does not fit a gRPC frame"
        ))
    })?;
    let mut frame = BytesMut::with_capacity(PREFIX + len);
    frame.put_u8(0);
    frame.put_u32(len32);
    message
        .encode(&mut frame)
        .map_err(|e| Status::internal(format!("encoding the response: {e}")))?;
    Ok(frame.freeze())
}

/// The trailers that end a call with `status`: `grpc-status`, and
/// `grpc-message` / `grpc-status-details-bin` when it has them.
fn trailers_of(status: &Status) -> HeaderMap {
    let mut trailers = HeaderMap::with_capacity(3);
    if status.add_header(&mut trailers).is_err() {
        // A message or detail that is no header value: the code still is.
        trailers.clear();
        trailers.insert("grpc-status", HeaderValue::from(status.code() as i32));
    }
    trailers
}

/// An answer's body: one data frame per encoded message, then the
/// trailers with the outcome (the first error ends the stream). A unary
/// answer is a stream of one.
struct Frames<S> {
    items: S,
    ended: bool,
}

impl<S> http_body::Body for Frames<S>
where
    S: Stream<Item = Result<Bytes, Status>> + Unpin,
{
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let outcome = match std::task::ready!(self.items.poll_next_unpin(cx)) {
            Some(Ok(frame)) => return Poll::Ready(Some(Ok(Frame::data(frame)))),
            Some(Err(status)) => status,
            None => Status::ok(""),
        };
        self.ended = true;
        Poll::Ready(Some(Ok(Frame::trailers(trailers_of(&outcome)))))
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;

    use prost::Message as _;
    use switchboard_proto::v1 as pb;

    use super::*;

    /// A request carrying `message` as its one frame.
    fn request(message: &impl prost::Message) -> Request {
        let body = message.encode_to_vec();
        let mut frame = vec![0];
        frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
        frame.extend_from_slice(&body);
        http::Request::new(Body::from(frame))
    }

    fn item(text: &str) -> pb::StreamResponse {
        pb::StreamResponse {
            payload: Some(pb::stream_response::Payload::Message(pb::Message {
                message_id: text.into(),
                ..Default::default()
            })),
        }
    }

    /// The body's data frames, decoded, and its trailers.
    async fn read(mut body: Body) -> (Vec<pb::StreamResponse>, Option<HeaderMap>) {
        let mut items = Vec::new();
        let mut trailers = None;
        while let Some(frame) =
            std::future::poll_fn(|cx| http_body::Body::poll_frame(Pin::new(&mut body), cx)).await
        {
            let frame = frame.unwrap_or_else(|e| panic!("body error: {e}"));
            assert!(trailers.is_none(), "nothing after the trailers");
            match frame.into_data() {
                Ok(data) => {
                    assert_eq!(data[0], 0, "uncompressed");
                    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
                    assert_eq!(data.len(), PREFIX + len, "one whole message per frame");
                    items.push(pb::StreamResponse::decode(&data[PREFIX..]).unwrap_or_default());
                }
                Err(frame) => trailers = frame.into_trailers().ok(),
            }
        }
        (items, trailers)
    }

    type Items = futures::stream::Iter<std::vec::IntoIter<Result<pb::StreamResponse, Status>>>;

    /// Serves one streaming call whose method answers `items`, with
    /// `first-event-id: 7` in its metadata.
    async fn stream(items: Vec<Result<pb::StreamResponse, Status>>) -> Response {
        let req = request(&pb::SubscribeToTaskRequest::default());
        let method = |r| async move {
            let _: tonic::Request<pb::SubscribeToTaskRequest> = r;
            let mut resp = tonic::Response::new(futures::stream::iter(items));
            resp.metadata_mut()
                .insert("first-event-id", tonic::metadata::MetadataValue::from(7));
            Ok(resp)
        };
        let answer = framed(req, 1024, ErrorTable::default(), method, respond_stream);
        match answer.await {
            Ok(resp) => resp,
            Err(never) => match never {},
        }
    }

    #[tokio::test]
    async fn a_stream_is_one_frame_per_item_then_an_ok_status() {
        let resp = stream(vec![Ok(item("a")), Ok(item("b"))]).await;
        assert_eq!(resp.headers()["content-type"], "application/grpc");
        assert_eq!(resp.headers()["first-event-id"], "7");
        assert!(
            resp.headers().get("grpc-status").is_none(),
            "not trailers-only"
        );
        let (items, trailers) = read(resp.into_body()).await;
        assert_eq!(items, [item("a"), item("b")]);
        let trailers = trailers.unwrap_or_default();
        assert_eq!(trailers["grpc-status"], "0");
        assert!(trailers.get("grpc-message").is_none());
    }

    #[tokio::test]
    async fn an_error_ends_the_stream_with_its_status_in_the_trailers() {
        let failed = Status::with_details(
            tonic::Code::NotFound,
            "task t-1 is gone, 100%",
            Bytes::from_static(b"details"),
        );
        let resp = stream(vec![Ok(item("a")), Err(failed), Ok(item("never sent"))]).await;
        let (items, trailers) = read(resp.into_body()).await;
        assert_eq!(items, [item("a")], "nothing after the error");
        let trailers = trailers.unwrap_or_default();
        let status = Status::from_header_map(&trailers).unwrap_or_else(|| Status::ok(""));
        assert_eq!(status.code(), tonic::Code::NotFound);
        assert_eq!(status.message(), "task t-1 is gone, 100%");
        assert_eq!(status.details(), b"details");
    }

    #[tokio::test]
    async fn an_error_before_the_stream_is_a_trailers_only_answer() {
        let req = request(&pb::SubscribeToTaskRequest::default());
        let method = |r| async move {
            let _: tonic::Request<pb::SubscribeToTaskRequest> = r;
            Err::<tonic::Response<Items>, _>(Status::not_found("no such task"))
        };
        let answer = framed(req, 1024, ErrorTable::default(), method, respond_stream);
        let resp = match answer.await {
            Ok(resp) => resp,
            Err(never) => match never {},
        };
        assert_eq!(resp.headers()["grpc-status"], "5");
        let (items, trailers) = read(resp.into_body()).await;
        assert!(items.is_empty() && trailers.is_none());
    }
}
