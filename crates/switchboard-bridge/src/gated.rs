//! The AG-UI endpoint behind a server's gate.
//!
//! An AG-UI endpoint is a door into the agent like the A2A bindings, so it
//! must let in exactly whom they let in. Authentication is an HTTP layer in
//! front of the route ([`authenticated_router`]), not the backend factory:
//! a refused caller gets `401` with the scheme's `WWW-Authenticate`
//! challenge (or `403`) before its body is read, as on the A2A bindings,
//! instead of a `200` stream that only holds a `RUN_ERROR`; clients and
//! proxies see an auth failure as one.
//!
//! [`AguiEndpoint::agui_endpoint`] mounts the endpoint on an
//! [`A2aServer`] over the agent it hosts: the layer is the server's own
//! [`Gate`] (its authenticator, its request rate), taken when the server is
//! assembled, and each run calls the handler with the call context the gate
//! makes of the caller (tenant, admin, extensions), so a run sees the tasks
//! the caller would see over A2A. `switchboard serve --agui-endpoint` is
//! this call; `switchboard bridge` uses [`authenticated_router`] over a
//! remote agent.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use switchboard_protocol::A2AError;
use switchboard_server::errors::{ErrorTable, rest_error_body};
use switchboard_server::{A2aServer, Authenticator, Gate, Identity};

use crate::backend::{Admit, BackendFactory, HostedAgent};
use crate::copilotkit::CopilotKitConfig;
use crate::endpoint::{EndpointConfig, router};
use crate::owner::Caller;

/// The AG-UI endpoint over `factory`, behind a layer that lets in only the
/// callers `authenticator` accepts (see the module docs). The caller's
/// [`Identity`] is in the request's extensions for the factory, and so is
/// its principal as a [`Caller`]: a `RemoteBackend` scopes the caller's
/// tasks and contexts to it ([`crate::owner`]).
pub fn authenticated_router(
    factory: impl BackendFactory,
    config: EndpointConfig,
    authenticator: Arc<dyn Authenticator>,
) -> Router {
    authenticated(router(factory, config), authenticator)
}

/// Any of the bridge's routers (the AG-UI endpoint, CopilotKit's routes,
/// both merged) behind the layer of [`authenticated_router`]: only the
/// callers `authenticator` accepts get in, each with its [`Identity`] and
/// [`Caller`] in the request's extensions.
pub fn authenticated(routes: Router, authenticator: Arc<dyn Authenticator>) -> Router {
    routes.layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let authenticator = authenticator.clone();
            async move {
                let (mut head, body) = request.into_parts();
                match authenticator.authenticate(&head).await {
                    Ok(identity) => {
                        let identity = identity.with_peer(&head.extensions);
                        // The remote backend scopes the caller's runs to it.
                        head.extensions.insert(Caller(identity.principal.clone()));
                        head.extensions.insert(identity);
                        next.run(Request::from_parts(head, body)).await
                    }
                    Err(error) => refusal(&error, authenticator.challenge()),
                }
            }
        },
    ))
}

/// The answer to a caller the authenticator refused: the REST binding's
/// status and error body, with the challenge on a 401.
fn refusal(error: &A2AError, challenge: Option<HeaderValue>) -> Response {
    let status = ErrorTable::V1_0_0.status(error);
    let mut response = (
        status.http,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(rest_error_body(error, status)),
    )
        .into_response();
    if status.http == StatusCode::UNAUTHORIZED
        && let Some(challenge) = challenge
    {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// A server's [`Gate`] as the authenticator of [`authenticated_router`]:
/// the endpoint lets in whom the server's A2A bindings let in.
#[derive(Debug)]
pub struct GateAuthenticator(pub Gate);

impl Authenticator for GateAuthenticator {
    fn authenticate<'a>(
        &'a self,
        head: &'a http::request::Parts,
    ) -> futures::future::BoxFuture<'a, Result<Identity, A2AError>> {
        Box::pin(self.0.authenticate(head))
    }

    fn challenge(&self) -> Option<HeaderValue> {
        self.0.challenge()
    }
}

/// The hosted agent as `gate` admits callers to it: [`HostedAgent`] over
/// [`Gate::handler`], each run with the call context the gate makes of the
/// caller the authentication layer let in.
fn hosted_agent(gate: &Gate) -> HostedAgent {
    let admit_gate = gate.clone();
    let admit: Admit = Arc::new(move |head| {
        // Put there by the router's authentication layer.
        let call = match head.extensions.get::<Identity>() {
            Some(identity) => admit_gate.call_context(identity, &head.headers),
            None => Err(A2AError::Unauthenticated(
                "the AG-UI endpoint's caller was not authenticated".into(),
            )),
        };
        Box::pin(std::future::ready(call))
    });
    HostedAgent::new(gate.handler().clone(), admit)
}

/// The AG-UI endpoint over the agent `gate` admits callers to
/// ([`HostedAgent`] over [`Gate::handler`]), behind that gate.
pub fn hosted_router(gate: Gate, config: EndpointConfig) -> Router {
    authenticated_router(
        hosted_agent(&gate),
        config,
        Arc::new(GateAuthenticator(gate)),
    )
}

/// CopilotKit's runtime routes ([`crate::copilotkit`]) over the agent
/// `gate` admits callers to, behind that gate.
pub fn hosted_copilotkit_router(gate: Gate, config: CopilotKitConfig) -> Router {
    authenticated(
        crate::copilotkit::router(hosted_agent(&gate), config),
        Arc::new(GateAuthenticator(gate)),
    )
}

/// The AG-UI endpoint on an [`A2aServer`] (see the module docs).
pub trait AguiEndpoint {
    /// Serves AG-UI runs over the hosted agent at `config.path` (`/agui` by
    /// default), on the server's port and behind its gate: the same
    /// authenticator and request rate as the A2A bindings, whenever they
    /// are set on the server.
    #[must_use]
    fn agui_endpoint(self, config: EndpointConfig) -> Self;

    /// Serves CopilotKit's runtime routes over the hosted agent under
    /// `config.base_path` (`/api/copilotkit` by default), behind the
    /// server's gate as [`agui_endpoint`](Self::agui_endpoint) is, so a
    /// CopilotKit app points its `runtimeUrl` at the server itself.
    #[must_use]
    fn copilotkit_endpoint(self, config: CopilotKitConfig) -> Self;
}

impl AguiEndpoint for A2aServer {
    fn agui_endpoint(self, config: EndpointConfig) -> Self {
        self.gated_routes(move |gate| hosted_router(gate, config.clone()))
    }

    fn copilotkit_endpoint(self, config: CopilotKitConfig) -> Self {
        self.gated_routes(move |gate| hosted_copilotkit_router(gate, config.clone()))
    }
}
