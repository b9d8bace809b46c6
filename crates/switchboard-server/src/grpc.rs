//! The gRPC binding of A2A 1.0: service `lf.a2a.v1.A2AService`, served on
//! the same port as HTTP (requests with content type `application/grpc…`
//! are routed here, everything else to axum). There is one method per row of
//! the operation table and no per-operation code: `grpc_frame` finds the
//! row by the method name in the path and frames the call by hand, and
//! `GrpcBinding::unary` / `GrpcBinding::streaming` serve any row
//! through its [`GrpcOperation`] marker.
//!
//! Each method converts the prost request into the canonical request
//! (`switchboard_proto::convert`), calls [`RequestHandler::handle`] as the
//! JSON-RPC and REST bindings do, and converts the answer back.
//! `SendStreamingMessage` and `SubscribeToTask` are server streams of
//! `StreamResponse`.
//!
//! ## Service parameters (request metadata)
//!
//! - `a2a-version`: negotiated exactly as the HTTP bindings do it
//!   ([`require_v1`]): missing means 0.3, which this 1.0 service refuses
//!   with VersionNotSupported.
//! - `a2a-extensions`: the requested extension URIs; the activated ones are
//!   echoed in the response metadata `a2a-extensions` (initial metadata, so a
//!   stream carries it too).
//! - `tenant`: the request message's `tenant` field selects the tenant
//!   (`""` = the default tenant); there is no tenant in the gRPC path.
//! - credentials (e.g. `authorization`): the server's authenticator reads
//!   them in the front, before the method runs (see [`crate::gate`]); a
//!   refused call is UNAUTHENTICATED or PERMISSION_DENIED.
//!
//! ## Resuming a subscription
//!
//! gRPC has no per-message ids, so a stream's response metadata carries
//! **`first-event-id`**: the per-task sequence number of the stream's first
//! item. Items of one stream are numbered consecutively, so item *k*
//! (0-based) has sequence `first-event-id + k` — the same numbers the SSE
//! bindings send as `id:`. A client that lost a `SubscribeToTask` stream
//! after seeing sequence *n* calls `SubscribeToTask` again with request
//! metadata **`last-event-id: n`** and receives exactly the events after *n*
//! ([`RequestHandler::resubscribe_to_task`]), with no task snapshot first.
//! A value that is not a number is InvalidParams. (`first-event-id` is
//! absent when the stream ended before its first item.)
//!
//! ## Errors
//!
//! An [`A2AError`] becomes a `tonic::Status` whose code comes from the
//! server's [`ErrorTable`] (the same table the REST binding uses, so the
//! v1.0.0/v1.0.1 switch applies here too), whose message is the error's
//! text, and whose `grpc-status-details-bin` is a `google.rpc.Status` with a
//! `google.rpc.ErrorInfo` (`reason` such as `TASK_NOT_FOUND`, domain
//! `a2a-protocol.org`, the error's metadata) plus a `google.rpc.BadRequest`
//! when field violations are known. A request message that breaks a rule
//! the proto cannot express (no `message`, a part without content, an
//! unknown enum number) is InvalidParams naming the field; bytes that are
//! not valid protobuf for the method are a Parse error (INVALID_ARGUMENT,
//! `PARSE_ERROR`) instead of gRPC's usual INTERNAL. An error in the middle
//! of a stream ends the stream with that status (in the trailers).

use std::pin::Pin;

use futures::{Stream, StreamExt};
use switchboard_core::{Answer, CallContext, EventStream, RequestHandler};
use switchboard_proto::v1 as pb;
use switchboard_proto::{ConvertError, GrpcOperation};
use switchboard_protocol::{A2AError, StreamResponse};
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::errors::ErrorTable;
use crate::gate::{Gate, Identity};
use crate::params::{last_event_id, require_v1};

/// The response metadata key with the sequence number of a stream's first item.
pub const FIRST_EVENT_ID: &str = "first-event-id";
/// The request metadata key a resumed `SubscribeToTask` names the last seen sequence with.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// The `google.rpc.ErrorInfo` domain of every A2A error.
const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// The service: the handler plus the error table. Cloned per call
/// (`grpc_frame`), so everything in it is cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct GrpcBinding {
    handler: RequestHandler,
    gate: Gate,
    table: ErrorTable,
}

impl GrpcBinding {
    pub(crate) fn new(handler: RequestHandler, gate: Gate, table: ErrorTable) -> Self {
        GrpcBinding {
            handler,
            gate,
            table,
        }
    }

    pub(crate) fn table(&self) -> ErrorTable {
        self.table
    }
}

/// Rewrites tonic's answer to a request message that is not valid protobuf
/// (for the 0.3 service's streaming methods, which tonic serves).
///
/// tonic answers those itself, before any method runs, with INTERNAL (the
/// gRPC convention for parse errors). For A2A that is a bad request like any
/// other: it becomes the table's status for a Parse error (INVALID_ARGUMENT)
/// with a `PARSE_ERROR` ErrorInfo. Such answers are trailers-only, so the
/// status is in the response headers.
pub(crate) fn rewrite_decode_error<B: Default>(
    table: ErrorTable,
    resp: http::Response<B>,
) -> http::Response<B> {
    let is_decode_error = resp.headers().get("grpc-status").is_some_and(|v| v == "13")
        && Status::from_header_map(resp.headers())
            .is_some_and(|s| s.message().starts_with("failed to decode Protobuf message"));
    if !is_decode_error {
        return resp;
    }
    let message = Status::from_header_map(resp.headers())
        .map(|s| s.message().to_string())
        .unwrap_or_default();
    parse_error(table, message).into_http()
}

/// The status of a request body that is not the method's message (A2A
/// Parse error: INVALID_ARGUMENT with a `PARSE_ERROR` ErrorInfo).
pub(crate) fn parse_error(table: ErrorTable, message: String) -> Status {
    status_of(table, &A2AError::Parse(message))
}

/// The gRPC form of `err`, following `table`.
pub fn status_of(table: ErrorTable, err: &A2AError) -> Status {
    let code = tonic::Code::from_i32(table.status(err).grpc.code());
    let mut details = ErrorDetails::with_error_info(
        err.reason(),
        ERROR_DOMAIN,
        err.metadata()
            .into_iter()
            .collect::<std::collections::HashMap<_, _>>(),
    );
    if let A2AError::InvalidParams { violations, .. } = err {
        for v in violations {
            details.add_bad_request_violation(v.field.clone(), v.description.clone());
        }
    }
    Status::with_error_details(code, err.to_string(), details)
}

/// The caller's identity, which the front (`Dispatch`) put into the
/// request's extensions after running the gate's authenticator. A request
/// without one never passed the gate: refused rather than served as anyone.
pub(crate) fn identity<T>(req: &Request<T>) -> Result<&Identity, Status> {
    req.extensions()
        .get::<Identity>()
        .ok_or_else(|| Status::internal("the request was not authenticated"))
}

pub(crate) fn invalid(e: ConvertError) -> A2AError {
    A2AError::invalid_field(e.field(), e.to_string())
}

/// The items of a streaming method's answer.
pub(crate) type ItemStream = WireStream<pb::StreamResponse>;

impl GrpcBinding {
    /// Reads the service parameters and builds the call (the checks and
    /// their order match the HTTP bindings: version, then extensions).
    fn call<T>(&self, req: &Request<T>, tenant: &str) -> Result<CallContext, Status> {
        let headers: &http::HeaderMap = req.metadata().as_ref();
        // `lf.a2a.v1` is the 1.0 service: like the 1.0 REST routes, a call
        // that names no version (= 0.3) or 0.3 is refused.
        require_v1(headers, None).map_err(|e| self.status(&e))?;
        let mut call = self
            .gate
            .call_context(identity(req)?, headers)
            .map_err(|e| self.status(&e))?;
        call.use_tenant(tenant).map_err(|e| self.status(&e))?;
        call.resume_after = last_event_id(headers).map_err(|e| self.status(&e))?;
        Ok(call)
    }

    fn status(&self, err: &A2AError) -> Status {
        status_of(self.table, err)
    }

    /// Turns a handler stream into a gRPC stream of 1.0 `StreamResponse`s.
    async fn stream(
        &self,
        call: &CallContext,
        events: EventStream,
    ) -> Result<Response<ItemStream>, Status> {
        stream_response(self.table, call, events, pb::StreamResponse::from).await
    }
}

/// Wraps an answer, echoing the activated extensions (both services).
pub(crate) fn reply<T>(call: &CallContext, body: T) -> Response<T> {
    let mut resp = Response::new(body);
    echo_extensions(call, resp.metadata_mut());
    resp
}

/// A server stream of `T` items, as both services send them.
pub(crate) type WireStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Turns a handler stream into a gRPC stream, each event written by
/// `to_wire` (the 1.0 or the 0.3 `StreamResponse`). Waits for the first
/// item so its sequence number can go into the `first-event-id` metadata;
/// an error before the first item is the call's answer.
pub(crate) async fn stream_response<T: 'static>(
    table: ErrorTable,
    call: &CallContext,
    mut events: EventStream,
    to_wire: impl Fn(StreamResponse) -> T + Send + 'static,
) -> Result<Response<WireStream<T>>, Status> {
    let first = events.next().await;
    let first_seq = match &first {
        Some(Ok(ev)) => Some(ev.seq),
        Some(Err(e)) => return Err(status_of(table, e)),
        None => None,
    };
    let items = futures::stream::iter(first)
        .chain(events)
        .map(move |item| match item {
            Ok(ev) => Ok(to_wire(ev.event)),
            Err(e) => Err(status_of(table, &e)),
        });
    let mut resp = reply(call, Box::pin(items) as WireStream<T>);
    if let Some(seq) = first_seq {
        resp.metadata_mut()
            .insert(FIRST_EVENT_ID, MetadataValue::from(seq));
    }
    Ok(resp)
}

pub(crate) fn echo_extensions(call: &CallContext, meta: &mut tonic::metadata::MetadataMap) {
    let echo = call.activated_extensions.join(",");
    if echo.is_empty() {
        return;
    }
    // Extension URIs are ASCII; one that is not cannot be echoed.
    if let Ok(v) = echo.parse() {
        meta.insert(EXTENSIONS_KEY, v);
    }
}

/// `A2A-Extensions` as a gRPC metadata key (lowercase).
const EXTENSIONS_KEY: &str = "a2a-extensions";

impl GrpcBinding {
    /// Runs one call of operation `O`: the wire request to the canonical
    /// one, then [`RequestHandler::handle`].
    async fn handle<O: GrpcOperation>(
        &self,
        request: Request<O::Request>,
    ) -> Result<(CallContext, Answer), Status> {
        let call = self.call(&request, O::tenant(request.get_ref()))?;
        let req = O::request(request.into_inner()).map_err(|e| self.status(&invalid(e)))?;
        let answer = self
            .handler
            .handle(&call, req)
            .await
            .map_err(|e| self.status(&e))?;
        Ok((call, answer))
    }

    /// One unary method, any operation: [`Self::handle`], then the answer
    /// back to the wire.
    pub(crate) async fn unary<O: GrpcOperation>(
        &self,
        request: Request<O::Request>,
    ) -> Result<Response<O::Response>, Status> {
        match self.handle::<O>(request).await? {
            (call, Answer::Unary(answer)) => O::response(answer)
                .map(|body| reply(&call, body))
                .ok_or_else(|| mismatch(O::OPERATION)),
            (_, Answer::Stream(_)) => Err(mismatch(O::OPERATION)),
        }
    }

    /// One streaming method, any operation.
    pub(crate) async fn streaming<O: GrpcOperation>(
        &self,
        request: Request<O::Request>,
    ) -> Result<Response<ItemStream>, Status> {
        match self.handle::<O>(request).await? {
            (call, Answer::Stream(events)) => self.stream(&call, events).await,
            (_, Answer::Unary(_)) => Err(mismatch(O::OPERATION)),
        }
    }
}

/// An answer of the wrong kind for its operation: a bug, never the caller's fault.
fn mismatch(op: switchboard_protocol::Operation) -> Status {
    Status::internal(format!("{op}: the engine answered another operation"))
}
