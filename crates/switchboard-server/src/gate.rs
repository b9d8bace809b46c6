//! The gate: what every binding does before an operation runs.
//!
//! A request passes the gate once, whatever its binding (JSON-RPC, REST,
//! gRPC, either A2A version, or a route added with [`crate::A2aServer::merge`]
//! that calls [`Gate::admit`] itself, like the AG-UI endpoints):
//!
//! 1. **Who is calling.** The server's [`Authenticator`] turns the request
//!    head (method, URI, headers — gRPC metadata are headers — and
//!    extensions such as the peer address) into an [`Identity`]: a principal
//!    and, when the credentials grant exactly one, a tenant. Without an
//!    authenticator every caller is [`switchboard_core::context::ANONYMOUS`].
//!    Refusals are [`A2AError::Unauthenticated`] (each binding's 401 /
//!    `UNAUTHENTICATED`, with the authenticator's `WWW-Authenticate`
//!    challenge) or [`A2AError::PermissionDenied`] (403 / `PERMISSION_DENIED`).
//! 2. **Which extensions apply.** `A2A-Extensions` (or the 0.3-era
//!    `X-A2A-Extensions`) names what the caller asks for; the agent's card
//!    decides what is activated, and a required extension the caller did not
//!    ask for is ExtensionSupportRequired.
//! 3. **Which tenant.** The binding hands the tenant the request names (path
//!    segment or `tenant` field) to [`CallContext::use_tenant`], which keeps
//!    a caller inside the tenant its credentials grant.
//!
//! Anonymous callers all share one principal, so they are told apart by the
//! address they connect from ([`Identity::client`], an IPv6 caller by its
//! /64): each address has its own request rate and its own quota of
//! concurrent tasks ([`CallContext::client`]), and one anonymous caller
//! cannot exhaust them for every other. The tasks they create still belong
//! to the one anonymous principal.
//!
//! The outcome is the [`CallContext`] every `RequestHandler` method takes.
//! Authentication runs before a body is read, so an unauthenticated caller
//! cannot make the server buffer a large body. The version rule stays with
//! the binding ([`crate::params`]): JSON-RPC picks the dialect by method name,
//! REST by path, gRPC by service.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use http::request::Parts;
use http::{HeaderMap, HeaderValue};
use switchboard_core::{CallContext, RequestHandler};
use switchboard_protocol::{A2AError, AgentCard, EXTENSIONS_HEADER};

use crate::params::requested_extensions;
use crate::rate::{RateLimiter, retry_after_header};

/// Turns a request head into the caller's [`Identity`].
///
/// One implementation serves every binding. It sees the head only, never
/// the body: decide from headers (`Authorization`, an API-key header), the
/// URI, or extensions the connection put there (the peer address is
/// `axum::extract::ConnectInfo<std::net::SocketAddr>`).
///
/// ```
/// use futures::future::BoxFuture;
/// use switchboard_protocol::A2AError;
/// use switchboard_server::{Authenticator, Identity};
///
/// /// Callers send `Authorization: Bearer <name>`; any name is accepted.
/// #[derive(Debug)]
/// struct NameIsToken;
///
/// impl Authenticator for NameIsToken {
///     fn authenticate<'a>(
///         &'a self,
///         head: &'a http::request::Parts,
///     ) -> BoxFuture<'a, Result<Identity, A2AError>> {
///         Box::pin(async move {
///             let token = head
///                 .headers
///                 .get(http::header::AUTHORIZATION)
///                 .and_then(|v| v.to_str().ok())
///                 .and_then(|v| v.strip_prefix("Bearer "))
///                 .ok_or_else(|| A2AError::Unauthenticated("a bearer token is required".into()))?;
///             Ok(Identity::new(token))
///         })
///     }
/// }
/// ```
pub trait Authenticator: Send + Sync + fmt::Debug + 'static {
    /// Who sent the request, or why it is refused:
    /// [`A2AError::Unauthenticated`] for missing or bad credentials,
    /// [`A2AError::PermissionDenied`] for a caller that may not call at all.
    /// Any other error is answered as it is.
    fn authenticate<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, Result<Identity, A2AError>>;

    /// The `WWW-Authenticate` value sent with an Unauthenticated answer on
    /// the HTTP bindings (e.g. `Bearer realm="agent"`), naming the scheme
    /// the caller should use.
    fn challenge(&self) -> Option<HeaderValue> {
        None
    }

    /// Writes how callers authenticate onto `card`: its
    /// `securitySchemes`, and `securityRequirements` naming them. The
    /// server calls this on the card it serves ([`crate::A2aServer::card`]),
    /// so the card always advertises what the gate demands; a card that
    /// advertised nothing while every call is refused would leave clients
    /// no way to learn how to get in. Must be idempotent (a card may be
    /// described already). The default writes nothing.
    fn describe(&self, card: &mut AgentCard) {
        let _ = card;
    }
}

/// Lets every caller in, as the anonymous principal: the authenticator of a
/// router served with no scheme configured (whether that is acceptable —
/// on a loopback address, say — is the caller's decision, made before).
#[derive(Debug, Clone, Copy, Default)]
pub struct Anyone;

impl Authenticator for Anyone {
    fn authenticate<'a>(&'a self, _head: &'a Parts) -> BoxFuture<'a, Result<Identity, A2AError>> {
        Box::pin(async { Ok(Identity::anonymous()) })
    }
}

/// Who a caller is, as its credentials say.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// The principal: owner of the tasks the caller creates; only it sees them.
    pub principal: String,
    /// The one tenant the credentials grant, if they name one. A request
    /// naming another tenant is then PermissionDenied; naming none works in
    /// this one.
    pub tenant: Option<String>,
    /// The credentials carry the administrator scope or role (see
    /// `switchboard-auth`): the caller may get, list and cancel every task
    /// of its tenant (see `CallContext::admin`).
    pub admin: bool,
    /// For the anonymous principal: the client address its quotas are
    /// counted by ([`client_key`] of the peer address; see
    /// [`Identity::with_peer`]). `None` for everyone else.
    pub client: Option<IpAddr>,
}

impl Identity {
    /// A principal with access to any tenant it names.
    pub fn new(principal: impl Into<String>) -> Self {
        Identity {
            principal: principal.into(),
            tenant: None,
            admin: false,
            client: None,
        }
    }

    /// For the anonymous principal, records which client it is: the peer
    /// address the connection put in the request's `extensions`
    /// (`ConnectInfo`), as [`client_key`]. Other identities are returned
    /// as they are. The gate does this for every request it authenticates.
    pub fn with_peer(mut self, extensions: &http::Extensions) -> Self {
        if self.principal == switchboard_core::context::ANONYMOUS && self.client.is_none() {
            self.client = extensions
                .get::<axum::extract::ConnectInfo<SocketAddr>>()
                .map(|peer| client_key(peer.0.ip()));
        }
        self
    }

    /// The caller of a server without authentication.
    pub fn anonymous() -> Self {
        Identity::new(switchboard_core::context::ANONYMOUS)
    }

    /// Binds the identity to one tenant.
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = Some(tenant.into());
        self
    }

    /// Marks the identity as an administrator's (or not).
    pub fn with_admin(mut self, admin: bool) -> Self {
        self.admin = admin;
        self
    }
}

/// The address an anonymous caller connecting from `peer` is counted by: an
/// IPv4 address (also when written IPv4-mapped) as it is, an IPv6 address
/// by its /64, the block one subscriber usually holds whole, so a caller
/// cannot get a fresh quota from each of its 2^64 addresses.
pub fn client_key(peer: IpAddr) -> IpAddr {
    match peer {
        IpAddr::V4(_) => peer,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & !u128::from(u64::MAX))),
        },
    }
}

/// The preamble every binding runs: authentication, then the call context.
/// Cheap to clone; get the server's with [`crate::A2aServer::gate`].
#[derive(Clone)]
pub struct Gate {
    handler: RequestHandler,
    authenticator: Option<Arc<dyn Authenticator>>,
    /// Request rate per principal, when limited (see [`crate::rate`]).
    rate: Option<Arc<RateLimiter>>,
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("authenticator", &self.authenticator)
            .finish_non_exhaustive()
    }
}

impl Gate {
    pub(crate) fn new(
        handler: RequestHandler,
        authenticator: Option<Arc<dyn Authenticator>>,
        rate: Option<Arc<RateLimiter>>,
    ) -> Self {
        Gate {
            handler,
            authenticator,
            rate,
        }
    }

    /// The handler the gate admits callers to.
    pub fn handler(&self) -> &RequestHandler {
        &self.handler
    }

    /// Step 1: the caller's identity (anonymous without an authenticator;
    /// an anonymous identity carries its client address, see
    /// [`Identity::with_peer`]).
    pub async fn authenticate(&self, head: &Parts) -> Result<Identity, A2AError> {
        let identity = match &self.authenticator {
            Some(auth) => auth.authenticate(head).await?,
            None => Identity::anonymous(),
        };
        Ok(identity.with_peer(&head.extensions))
    }

    /// Step 2: the call context of an authenticated caller, in the tenant
    /// its credentials grant (if any), with the extensions it asked for
    /// activated, once the caller's request rate allows the call (see
    /// [`crate::rate`]; ResourceExhausted otherwise). The binding then
    /// applies the request's tenant with [`CallContext::use_tenant`].
    pub fn call_context(
        &self,
        identity: &Identity,
        headers: &HeaderMap,
    ) -> Result<CallContext, A2AError> {
        // Anonymous callers share one principal: each client address has
        // its own bucket. One whose address is unknown (no connection info,
        // as in a router driven in-process) cannot be told apart, and is
        // not limited.
        if let Some(rate) = &self.rate
            && (identity.principal != switchboard_core::context::ANONYMOUS
                || identity.client.is_some())
        {
            rate.take(
                &identity.principal,
                identity.client,
                std::time::Instant::now(),
            )?;
        }
        let mut call =
            CallContext::anonymous().with_extensions_header(&requested_extensions(headers));
        call.principal.clone_from(&identity.principal);
        call.admin = identity.admin;
        call.client = identity.client;
        if let Some(tenant) = &identity.tenant {
            call.tenant.clone_from(tenant);
            call.credential_tenant = Some(tenant.clone());
        }
        self.handler.activate_extensions(&mut call)?;
        Ok(call)
    }

    /// The identity of every caller when no authenticator is set, so a
    /// binding can skip the asynchronous step; `None` when callers must be
    /// authenticated one by one.
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn fixed_identity(&self, extensions: &http::Extensions) -> Option<Identity> {
        self.authenticator
            .is_none()
            .then(|| Identity::anonymous().with_peer(extensions))
    }

    /// Steps 1 and 2 together, for an HTTP request head.
    pub async fn admit(&self, head: &Parts) -> Result<CallContext, A2AError> {
        let identity = self.authenticate(head).await?;
        self.call_context(&identity, &head.headers)
    }

    /// The authenticator's `WWW-Authenticate` challenge, for 401 answers.
    pub fn challenge(&self) -> Option<HeaderValue> {
        self.authenticator.as_ref().and_then(|a| a.challenge())
    }

    /// The response headers an answer to `call` carries: the activated
    /// extensions in `A2A-Extensions`.
    pub fn echo_headers(call: &CallContext) -> Vec<(&'static str, String)> {
        if call.activated_extensions.is_empty() {
            Vec::new()
        } else {
            vec![(EXTENSIONS_HEADER, call.activated_extensions.join(","))]
        }
    }

    /// The headers an error answer carries besides its body: the challenge
    /// on Unauthenticated, `Retry-After` on ResourceExhausted.
    pub(crate) fn error_headers(&self, err: &A2AError) -> Vec<(&'static str, String)> {
        match (err, self.challenge()) {
            (A2AError::Unauthenticated(_), Some(c)) => c
                .to_str()
                .map(|c| vec![("www-authenticate", c.to_string())])
                .unwrap_or_default(),
            (A2AError::ResourceExhausted(_), _) => self
                .rate
                .as_ref()
                .map(|r| vec![retry_after_header(&r.rate())])
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn anonymous_clients_are_keyed_by_address_and_ipv6_by_its_64() {
        let key = |s: &str| client_key(s.parse().unwrap()).to_string();
        assert_eq!(key("127.0.0.2"), "127.0.0.2");
        assert_eq!(key("::ffff:127.0.0.2"), "127.0.0.2");
        assert_eq!(key("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::");
        assert_eq!(key("2001:db8:1:2:ffff::1"), "2001:db8:1:2::");

        let mut ext = http::Extensions::new();
        ext.insert(axum::extract::ConnectInfo(SocketAddr::from((
            [127, 0, 0, 2],
            5000,
        ))));
        let anonymous = Identity::anonymous().with_peer(&ext);
        assert_eq!(anonymous.client, Some(IpAddr::from([127, 0, 0, 2])));
        assert_eq!(
            Identity::new("key:alice").with_peer(&ext).client,
            None,
            "authenticated callers are their principal"
        );
    }
}
