//! The SSRF guard: webhooks never reach internal addresses.
//!
//! A webhook URL is chosen by the client, and the server then makes an HTTP
//! request to it from inside its own network. Without a guard, a client
//! could point a webhook at `http://169.254.169.254/` (cloud metadata, often
//! with credentials), an admin port on `127.0.0.1`, or any host on the
//! private network: server-side request forgery.
//!
//! The guard is on by default and checks the address actually connected to:
//!
//! - **IP literals** in the URL are checked before anything is sent;
//! - **host names** are resolved by [`GuardedResolver`], which is the
//!   connector's DNS resolver: it refuses the name if *any* resolved address
//!   is blocked, and otherwise hands exactly those addresses to the
//!   connector, so a DNS answer that changes between a check and the connect
//!   (DNS rebinding) cannot slip through;
//! - **redirects are never followed** (a 3xx is a failed delivery), so a
//!   public receiver cannot bounce the request inward;
//! - **no proxy** is used.
//!
//! What is blocked is defined once, in
//! [`switchboard_core::push::blocked_address`]: loopback, private, link-local
//! (incl. metadata), CGNAT, unique-local, multicast, unspecified, and IPv4
//! embedded in IPv6 of those. An allowlist of exact host names or IPs
//! ([`SsrfPolicy::allow_hosts`]) bypasses the guard, for local testing.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use hyper_util::client::legacy::connect::dns::Name;
use switchboard_core::push::{SSRF_HINT, blocked_address, host_allowed};

/// Whether the guard is on and which hosts bypass it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsrfPolicy {
    /// Refuse internal addresses (default `true`).
    pub guard: bool,
    /// Exact host names or IP literals (case-insensitive) that bypass the guard.
    pub allow_hosts: Vec<String>,
}

impl Default for SsrfPolicy {
    fn default() -> Self {
        SsrfPolicy {
            guard: true,
            allow_hosts: Vec::new(),
        }
    }
}

impl SsrfPolicy {
    /// `true` when `host` bypasses the guard.
    pub fn allows(&self, host: &str) -> bool {
        !self.guard || host_allowed(&self.allow_hosts, host)
    }

    /// The refusal for connecting to `ip` (named `host` in the URL), if any.
    pub fn check(&self, host: &str, ip: IpAddr) -> Result<(), SsrfRefusal> {
        if self.allows(host) {
            return Ok(());
        }
        match blocked_address(ip) {
            None => Ok(()),
            Some(class) => Err(SsrfRefusal {
                host: host.to_string(),
                ip,
                class,
            }),
        }
    }
}

/// A refused destination, with the reason and the way out in its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SSRF guard refused {host}: {} is {class}; {SSRF_HINT}", display_ip(host, *ip))]
pub struct SsrfRefusal {
    /// The host as written in the URL.
    pub host: String,
    /// The address it is or resolved to.
    pub ip: IpAddr,
    /// Which blocked class the address is in.
    pub class: &'static str,
}

fn display_ip(host: &str, ip: IpAddr) -> String {
    let literal = host.trim_start_matches('[').trim_end_matches(']');
    if literal.parse::<IpAddr>().ok() == Some(ip) {
        ip.to_string()
    } else {
        format!("it resolved to {ip}, which")
    }
}

/// Name resolution, pluggable so tests can map names to any address without DNS.
pub trait Resolve: Send + Sync + fmt::Debug + 'static {
    /// The addresses of `host` (a name, never an IP literal).
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo` via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let host = host.to_string();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// A fixed table of names, for tests: unknown names fail to resolve.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    table: Vec<(String, Vec<IpAddr>)>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `host` → `ips`.
    pub fn with(mut self, host: &str, ips: &[IpAddr]) -> Self {
        self.table.push((host.to_ascii_lowercase(), ips.to_vec()));
        self
    }
}

impl Resolve for StaticResolver {
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let found = self
            .table
            .iter()
            .find(|(h, _)| h.eq_ignore_ascii_case(host))
            .map(|(_, ips)| ips.clone());
        let host = host.to_string();
        Box::pin(async move {
            found.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("no such host: {host}"))
            })
        })
    }
}

/// The connector's resolver: resolves, then applies the [`SsrfPolicy`] to
/// every address before the connector may use any of them.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    resolver: Arc<dyn Resolve>,
    policy: Arc<SsrfPolicy>,
}

impl GuardedResolver {
    /// Guards `resolver` with `policy`.
    pub fn new(resolver: Arc<dyn Resolve>, policy: Arc<SsrfPolicy>) -> Self {
        GuardedResolver { resolver, policy }
    }

    /// Resolves `host` and checks each address.
    pub async fn lookup(&self, host: &str) -> io::Result<Vec<IpAddr>> {
        let ips = self.resolver.resolve(host).await?;
        if ips.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host} has no addresses"),
            ));
        }
        for ip in &ips {
            // Refuse the whole name if any answer is internal: a mixed answer
            // is how rebinding attacks hedge their bets.
            self.policy
                .check(host, *ip)
                .map_err(|e| io::Error::new(io::ErrorKind::PermissionDenied, e))?;
        }
        Ok(ips)
    }
}

impl tower_service::Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let ips = this.lookup(name.as_str()).await?;
            // Port 0: the connector puts the URL's port in.
            Ok(ips
                .into_iter()
                .map(|ip| SocketAddr::new(ip, 0))
                .collect::<Vec<_>>()
                .into_iter())
        })
    }
}
