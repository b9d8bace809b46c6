//! The gRPC binding (A2A 1.0, service `lf.a2a.v1.A2AService`) on tonic.
//!
//! Typed end to end: the canonical request becomes its prost message
//! through the operation's [`GrpcOperation`] (`switchboard_proto`), the RPC
//! is made on the method path the operation table names, and the prost
//! answer becomes the canonical answer — no JSON on the way. Each request carries the metadata
//! `a2a-version: 1.0`, plus the client's extra headers and `a2a-extensions`
//! as metadata. The `tenant` travels in the request message, as the proto
//! defines it.
//!
//! The interface URL is a gRPC target: `host:port` (the form the spec uses
//! for gRPC interfaces) or `http://host:port` for cleartext HTTP/2, and
//! `https://host:port` for TLS (ALPN `h2`, the client's trusted roots: see
//! [`crate::tls`]).
//!
//! Errors: a status that carries a `google.rpc.ErrorInfo` of domain
//! `a2a-protocol.org` becomes the matching [`A2AError`] (by its `reason`,
//! with the ErrorInfo metadata restoring ids); any other status is a
//! transport error. Stream items are numbered from the response metadata
//! `first-event-id` (consecutive within a stream), like SSE ids.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use switchboard_proto::v1 as pb;
use switchboard_proto::{GrpcOperation, op};
use switchboard_protocol::card::BINDING_GRPC;
use switchboard_protocol::error::{ERROR_DOMAIN, ERROR_INFO_TYPE};
use switchboard_protocol::{
    A2AError, A2aRequest, A2aResponse, AgentInterface, Operation, StreamResponse,
};
use tokio::sync::OnceCell;
use tonic::transport::{Channel, Endpoint};
use tonic_types::StatusExt;

use super::{ClientFuture, Http, Transport, TransportFactory, is_v1};
use crate::client::{EventStream, StreamEvent};
use crate::error::ClientError;

pub(crate) const FACTORY: TransportFactory = TransportFactory {
    binding: BINDING_GRPC,
    supports_version: is_v1,
    build,
};

/// The response metadata key with the sequence number of a stream's first item.
pub(crate) const FIRST_EVENT_ID: &str = "first-event-id";

/// The sequence number of a stream's first event, from its response
/// metadata (`None` when the server does not say).
fn first_event_id<T>(resp: &tonic::Response<T>) -> Option<u64> {
    resp.metadata()
        .get(FIRST_EVENT_ID)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

fn build(iface: &AgentInterface, http: &Http) -> Result<Box<dyn Transport>, ClientError> {
    Ok(Box::new(GrpcTransport::new(&iface.url, http.clone())?))
}

/// gRPC, A2A 1.0.
#[derive(Debug)]
pub(crate) struct GrpcTransport {
    /// The target as given (`host:port`).
    target: String,
    endpoint: Endpoint,
    /// Connected on first use: building a client must not need a runtime.
    channel: OnceCell<Channel>,
    http: Http,
}

impl GrpcTransport {
    pub(crate) fn new(target: &str, http: Http) -> Result<Self, ClientError> {
        let target = target.trim();
        let uri = match target.split_once("://") {
            Some(("http" | "https", _)) => target.to_string(),
            Some((scheme, _)) if !scheme.contains(['.', ':']) => {
                return Err(ClientError::Config(format!(
                    "gRPC target {target:?} has an unknown scheme"
                )));
            }
            _ => format!("http://{target}"),
        };
        let tls = uri.starts_with("https://");
        let mut endpoint = Endpoint::from_shared(uri)
            .map_err(|e| ClientError::Config(format!("invalid gRPC target {target:?}: {e}")))?
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true);
        if let Some(t) = http.timeout {
            endpoint = endpoint.connect_timeout(t);
        }
        if tls {
            endpoint = endpoint
                .tls_config(http.roots.grpc_config())
                .map_err(|e| ClientError::Config(format!("gRPC TLS for {target:?}: {e}")))?;
        }
        Ok(GrpcTransport {
            target: target.to_string(),
            endpoint,
            channel: OnceCell::new(),
            http,
        })
    }

    /// The connection, made on first use (shared with the 0.3 transport).
    pub(crate) async fn channel(&self) -> Result<Channel, ClientError> {
        let channel = self
            .channel
            .get_or_try_init(|| async {
                self.endpoint
                    .connect()
                    .await
                    .map_err(|e| ClientError::Transport {
                        message: format!(
                            "connecting to {}: {}",
                            self.target,
                            crate::error::flatten_chain(&e)
                        ),
                        timeout: false,
                    })
            })
            .await?
            .clone();
        Ok(channel)
    }

    /// Wraps a message with the service parameters as metadata.
    fn request<T>(&self, body: T) -> tonic::Request<T> {
        self.request_as(body, "1.0")
    }

    /// [`Self::request`] naming protocol `version` in `a2a-version`.
    pub(crate) fn request_as<T>(&self, body: T, version: &'static str) -> tonic::Request<T> {
        let mut req = tonic::Request::new(body);
        let meta = req.metadata_mut();
        meta.insert(
            "a2a-version",
            tonic::metadata::MetadataValue::from_static(version),
        );
        for (name, value) in &self.http.request_headers() {
            if let Ok(v) = tonic::metadata::MetadataValue::try_from(value.as_bytes())
                && let Ok(k) = tonic::metadata::MetadataKey::from_bytes(name.as_str().as_bytes())
            {
                meta.append(k, v);
            }
        }
        // The call's span context as W3C `traceparent` metadata, when tracing is on.
        if let Some(tp) = switchboard_telemetry::trace::current()
            && let Ok(v) = tonic::metadata::MetadataValue::try_from(tp.to_string())
        {
            meta.insert(switchboard_telemetry::trace::TRACEPARENT, v);
        }
        req
    }

    /// Runs `fut` within the client's timeout.
    pub(crate) async fn timed<T>(
        &self,
        method: &'static str,
        fut: impl Future<Output = Result<T, tonic::Status>>,
    ) -> Result<T, ClientError> {
        match self.http.timeout {
            Some(t) => tokio::time::timeout(t, fut)
                .await
                .map_err(|_| ClientError::timeout(method, t))?,
            None => fut.await,
        }
        .map_err(|s| from_status(&s))
    }

    /// A gRPC client on the shared connection, ready to send.
    async fn grpc(&self) -> Result<tonic::client::Grpc<Channel>, ClientError> {
        let mut grpc = tonic::client::Grpc::new(self.channel().await?)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX);
        grpc.ready().await.map_err(|e| ClientError::Transport {
            message: format!("gRPC connection to {}: {e}", self.target),
            timeout: false,
        })?;
        Ok(grpc)
    }

    /// One unary method, any operation: the canonical request to its prost
    /// message, the call, the prost answer to the canonical answer.
    async fn unary<O>(&self, request: &A2aRequest) -> Result<A2aResponse, ClientError>
    where
        O: GrpcOperation,
        O::Response: prost::Message + Default,
    {
        let name = O::OPERATION.name();
        let msg = O::wire_request(request).ok_or_else(|| wrong_request(name))?;
        let mut grpc = self.grpc().await?;
        let codec = tonic_prost::ProstCodec::<O::Request, O::Response>::default();
        let resp = self
            .timed(name, grpc.unary(self.request(msg), O::path(), codec))
            .await?;
        O::answer(resp.into_inner()).map_err(decode)
    }

    /// One server-streaming method, any operation, resumed after `after`
    /// (request metadata `last-event-id`, as SSE's `Last-Event-ID`).
    async fn server_stream<O>(
        &self,
        request: &A2aRequest,
        after: Option<u64>,
    ) -> Result<EventStream, ClientError>
    where
        O: GrpcOperation<Response = pb::StreamResponse>,
    {
        let name = O::OPERATION.name();
        let msg = O::wire_request(request).ok_or_else(|| wrong_request(name))?;
        let req = resumed(self.request(msg), after);
        let mut grpc = self.grpc().await?;
        let codec = tonic_prost::ProstCodec::<O::Request, pb::StreamResponse>::default();
        let resp = self
            .timed(name, grpc.server_streaming(req, O::path(), codec))
            .await?;
        Ok(event_stream(resp, StreamResponse::try_from))
    }
}

/// `req` resumed after event `after`, when given: the request metadata
/// `last-event-id`, as SSE's `Last-Event-ID`.
pub(crate) fn resumed<T>(mut req: tonic::Request<T>, after: Option<u64>) -> tonic::Request<T> {
    if let Some(after) = after {
        req.metadata_mut().insert(
            super::LAST_EVENT_ID,
            tonic::metadata::MetadataValue::from(after),
        );
    }
    req
}

/// A server stream's items as events, each made canonical by `convert` and
/// numbered from the response's `first-event-id` (consecutive within a
/// stream); the stream ends after the first error.
pub(crate) fn event_stream<T: Send + 'static>(
    resp: tonic::Response<tonic::Streaming<T>>,
    convert: fn(T) -> Result<StreamResponse, switchboard_proto::ConvertError>,
) -> EventStream {
    let first = first_event_id(&resp);
    let items = resp.into_inner().enumerate().map(move |(k, item)| {
        let item = item.map_err(|s| from_status(&s))?;
        Ok(StreamEvent {
            seq: first.map(|f| f + k as u64),
            event: convert(item).map_err(decode)?,
        })
    });
    items.boxed()
}

/// A request that reached the wrong method: a bug in the dispatch below.
fn wrong_request(method: &str) -> ClientError {
    ClientError::Config(format!("the request is not a {method} request"))
}

/// A unary call of a streaming operation or the other way round.
pub(crate) fn wrong_kind(op: Operation, streaming: bool) -> ClientError {
    let kind = if streaming { "a stream" } else { "one answer" };
    ClientError::Config(format!("{op} does not answer with {kind}"))
}

macro_rules! grpc_unary_call {
    (unary, $this:ident, $name:ident, $request:ident) => {
        $this.unary::<op::$name>(&$request).await
    };
    (stream, $this:ident, $name:ident, $request:ident) => {
        Err(wrong_kind(Operation::$name, false))
    };
}

macro_rules! grpc_stream_call {
    (unary, $this:ident, $name:ident, $request:ident, $after:ident) => {
        Err(wrong_kind(Operation::$name, true))
    };
    (stream, $this:ident, $name:ident, $request:ident, $after:ident) => {
        $this.server_stream::<op::$name>(&$request, $after).await
    };
}

/// The [`Transport`] impl: each operation to its generic call, generated
/// from the operation table.
macro_rules! grpc_transport {
    ($(($name:ident, $handler:ident, $req:ty, $kind:ident $(, $resp:ty)?))*) => {
        impl Transport for GrpcTransport {
            fn endpoint(&self) -> &str {
                &self.target
            }

            fn call(&self, request: A2aRequest) -> ClientFuture<'_, A2aResponse> {
                Box::pin(async move {
                    match request.operation() {
                        $(Operation::$name => grpc_unary_call!($kind, self, $name, request),)*
                    }
                })
            }

            fn stream(
                &self,
                request: A2aRequest,
                after: Option<u64>,
            ) -> ClientFuture<'_, EventStream> {
                Box::pin(async move {
                    match request.operation() {
                        $(Operation::$name => grpc_stream_call!($kind, self, $name, request, after),)*
                    }
                })
            }
        }
    };
}

switchboard_protocol::for_each_operation!(compact grpc_transport);

pub(crate) fn decode(e: switchboard_proto::ConvertError) -> ClientError {
    ClientError::Decode(e.to_string())
}

/// A gRPC status as a client error: an A2A error when it carries an A2A
/// `ErrorInfo`, a transport error otherwise.
pub(crate) fn from_status(status: &tonic::Status) -> ClientError {
    let info = status.get_details_error_info();
    if let Some(info) = info.filter(|i| i.domain == ERROR_DOMAIN)
        && let Some(code) = A2AError::code_for_reason(&info.reason)
    {
        let data = json!([{
            "@type": ERROR_INFO_TYPE,
            "reason": info.reason,
            "domain": info.domain,
            "metadata": info.metadata,
        }]);
        return ClientError::Protocol(A2AError::from_wire(
            code,
            status.message().to_string(),
            Some(&data),
        ));
    }
    ClientError::Transport {
        message: format!("gRPC status {:?}: {}", status.code(), status.message()),
        timeout: status.code() == tonic::Code::DeadlineExceeded,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_reason_has_a_code_that_round_trips() {
        for e in [
            A2AError::Parse("x".into()),
            A2AError::InvalidRequest("x".into()),
            A2AError::MethodNotFound("m".into()),
            A2AError::invalid_params("x"),
            A2AError::Internal("x".into()),
            A2AError::TaskNotFound("t".into()),
            A2AError::PushNotificationNotSupported,
            A2AError::UnsupportedOperation("x".into()),
            A2AError::ContentTypeNotSupported("x".into()),
            A2AError::InvalidAgentResponse("x".into()),
            A2AError::ExtendedAgentCardNotConfigured,
            A2AError::ExtensionSupportRequired("u".into()),
            A2AError::VersionNotSupported("0.3".into()),
            A2AError::Unauthenticated("x".into()),
            A2AError::PermissionDenied("x".into()),
        ] {
            assert_eq!(
                A2AError::code_for_reason(e.reason()),
                Some(e.code()),
                "{e:?}"
            );
        }
    }

    #[test]
    fn targets() {
        let http = crate::ClientBuilder::new().http().unwrap();
        assert!(GrpcTransport::new("127.0.0.1:9", http.clone()).is_ok());
        assert!(GrpcTransport::new("http://localhost:9", http.clone()).is_ok());
        assert!(GrpcTransport::new("https://localhost:9", http.clone()).is_ok());
        assert!(GrpcTransport::new("ftp://localhost:9", http).is_err());
    }
}
