//! The gRPC front: where a request with content type `application/grpc…`
//! goes (feature `grpc`).
//!
//! The caller is authenticated first (the gate's authenticator; the methods
//! find the [`Identity`] in the request's extensions), then the path names
//! the service — 1.0's `lf.a2a.v1.A2AService` or 0.3's `a2a.v1.A2AService` —
//! and the method. The 1.0 methods and 0.3's unary ones are framed by hand
//! (`grpc_frame`); 0.3's streaming methods go to tonic. Dispatching here,
//! by prefix, rather than through tonic's own router keeps the gRPC path
//! one routing step long.

use std::convert::Infallible;

use axum::response::Response;
use futures::future::BoxFuture;
use switchboard_core::RequestHandler;
use switchboard_proto::v03::a2a_service_server::A2aServiceServer as ServerV03;
use switchboard_protocol::AgentCard;

use crate::errors::ErrorTable;
use crate::gate::{Gate, Identity};
use crate::grpc::{self, GrpcBinding};
use crate::grpc_frame;
use crate::grpc_v03::{self, GrpcV03};

/// Both gRPC services: 1.0 as the plain service (every method framed by
/// hand), 0.3 as tonic's server (streams) and as the plain service (unary
/// calls).
#[derive(Clone)]
pub(crate) struct GrpcFront {
    v1: GrpcBinding,
    v03: ServerV03<GrpcV03>,
    unary_v03: GrpcV03,
    max_message: usize,
}

impl GrpcFront {
    pub(crate) fn new(
        handler: &RequestHandler,
        gate: &Gate,
        table: ErrorTable,
        card: &AgentCard,
        max_message: usize,
    ) -> Self {
        let v1 = GrpcBinding::new(handler.clone(), gate.clone(), table);
        let v03 = GrpcV03::new(handler.clone(), gate.clone(), table, card);
        GrpcFront {
            v1,
            v03: grpc_v03::service(v03.clone(), max_message),
            unary_v03: v03,
            max_message,
        }
    }

    /// Routes an authenticated request to the service its path names.
    fn route(
        &self,
        req: axum::extract::Request,
    ) -> BoxFuture<'static, Result<Response, Infallible>> {
        let path = req.uri().path();
        let max = self.max_message;
        if let Some(method) = method_of(path, switchboard_proto::SERVICE_NAME) {
            match grpc_frame::v1(method) {
                Some(call) => call(self.v1.clone(), req, max),
                None => unimplemented(),
            }
        } else if let Some(method) = method_of(
            path,
            switchboard_proto::v03::a2a_service_server::SERVICE_NAME,
        ) {
            match grpc_frame::v03(method) {
                Some(unary) => unary(self.unary_v03.clone(), req, max),
                None => call_tonic(self.v03.clone(), req, self.unary_v03.table()),
            }
        } else {
            unimplemented()
        }
    }
}

/// What tonic answers for a service or method it does not have.
fn unimplemented() -> BoxFuture<'static, Result<Response, Infallible>> {
    let resp = tonic::Status::unimplemented("").into_http::<axum::body::Body>();
    Box::pin(std::future::ready(Ok(resp)))
}

/// Authenticates a gRPC request, then routes it.
pub(crate) fn call(
    gate: &Gate,
    front: &GrpcFront,
    mut req: axum::extract::Request,
) -> BoxFuture<'static, Result<Response, Infallible>> {
    if let Some(identity) = gate.fixed_identity(req.extensions()) {
        req.extensions_mut().insert(identity);
        return front.route(req);
    }
    // Authenticate before the method runs (or its body is read).
    let (gate, front) = (gate.clone(), front.clone());
    Box::pin(async move {
        let (mut parts, body) = req.into_parts();
        match gate.authenticate(&parts).await {
            Ok(identity) => {
                parts.extensions.insert::<Identity>(identity);
                front.route(http::Request::from_parts(parts, body)).await
            }
            Err(err) => Ok(grpc::status_of(front.v1.table(), &err).into_http()),
        }
    })
}

/// Calls one tonic service, with protobuf decode errors made A2A Parse errors.
fn call_tonic<S>(
    svc: S,
    req: axum::extract::Request,
    table: ErrorTable,
) -> BoxFuture<'static, Result<Response, Infallible>>
where
    S: tower::Service<
            axum::extract::Request,
            Response = http::Response<tonic::body::Body>,
            Error = Infallible,
        > + Send
        + 'static,
    S::Future: Send + 'static,
{
    use tower::ServiceExt as _;
    Box::pin(async move {
        let resp = svc.oneshot(req).await?;
        Ok(grpc::rewrite_decode_error(table, resp).map(axum::body::Body::new))
    })
}

/// The method a gRPC path (`/{service}/{method}`) names, if it names `service`.
fn method_of<'a>(path: &'a str, service: &str) -> Option<&'a str> {
    path.strip_prefix('/')?
        .strip_prefix(service)?
        .strip_prefix('/')
}
