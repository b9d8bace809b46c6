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
//! [`switchboard_core::push::blocked_address`]: every IANA special-purpose
//! range (loopback, private, link-local incl. metadata, CGNAT,
//! documentation, benchmarking, reserved, unique-local, multicast, …) and
//! IPv4 carried in IPv6 of those. To that the guard adds the addresses of
//! **this server's host** ([`LocalAddresses`]; [`InterfaceAddresses`] reads
//! every interface at start and again every 30 s): a service bound to
//! `0.0.0.0` on the host answers on each of them, so a webhook to the
//! host's own public address would reach it. (An address the host is
//! reached by but does not hold, such as a cloud provider's 1:1 NAT
//! address, cannot be seen from inside; firewall it.) An allowlist of exact
//! host names or IPs ([`SsrfPolicy::allow_hosts`]) bypasses the guard, for
//! local testing.
//!
//! The same guard checks a config **when it is created**
//! ([`DestinationCheck`] on [`GuardedResolver`]): the host is resolved
//! (within [`CREATION_RESOLVE_TIMEOUT`]) and refused if any address is
//! blocked, and a name that does not resolve is refused too, so a client
//! learns at once that its webhook cannot work. Deliveries resolve again:
//! a name may point elsewhere by then.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use hyper_util::client::legacy::connect::dns::Name;
use switchboard_core::BoxError;
use switchboard_core::push::{
    DestinationCheck, SSRF_HINT, SpecialAddress, blocked_address, host_allowed,
};

/// Longest a config's creation waits for its webhook host to resolve.
pub const CREATION_RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// How often [`InterfaceAddresses`] reads the interfaces again by default.
pub const INTERFACE_REFRESH: Duration = Duration::from_secs(30);

/// The addresses of this server's host, which webhooks may not reach.
/// Injectable so tests can name any address as the host's own.
pub trait LocalAddresses: Send + Sync + fmt::Debug + 'static {
    /// `true` when `ip` is one of the host's addresses.
    fn contains(&self, ip: IpAddr) -> bool;
}

/// Every address of the host's network interfaces (`getifaddrs`), read
/// when made and again when a check finds the list older than the refresh
/// interval, so addresses added while serving (DHCP, a new interface) are
/// refused within that interval. A failed read keeps the previous list.
#[derive(Debug)]
pub struct InterfaceAddresses {
    refresh: Duration,
    read: Mutex<(Instant, Arc<[IpAddr]>)>,
}

impl InterfaceAddresses {
    /// Reads the interfaces now, and again every `refresh`.
    pub fn new(refresh: Duration) -> Self {
        InterfaceAddresses {
            refresh,
            read: Mutex::new((Instant::now(), Self::read().unwrap_or_default().into())),
        }
    }

    /// The addresses of every interface of this host, now.
    pub fn read() -> io::Result<Vec<IpAddr>> {
        Ok(if_addrs::get_if_addrs()?
            .into_iter()
            .map(|i| i.ip())
            .collect())
    }

    /// The list as of the last read, read again when stale.
    fn current(&self) -> Arc<[IpAddr]> {
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if read.0.elapsed() >= self.refresh {
            match Self::read() {
                Ok(ips) => read.1 = ips.into(),
                Err(e) => {
                    tracing::warn!(error = %e, "reading this host's interface addresses failed; keeping the previous list")
                }
            }
            read.0 = Instant::now();
        }
        read.1.clone()
    }
}

impl LocalAddresses for InterfaceAddresses {
    fn contains(&self, ip: IpAddr) -> bool {
        self.current().contains(&ip)
    }
}

/// A fixed list of the host's addresses, for tests.
#[derive(Debug, Clone, Default)]
pub struct FixedAddresses(pub Vec<IpAddr>);

impl LocalAddresses for FixedAddresses {
    fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(&ip)
    }
}

/// Whether the guard is on, which hosts bypass it, and what the host's own
/// addresses are.
#[derive(Debug, Clone)]
pub struct SsrfPolicy {
    /// Refuse internal addresses (default `true`).
    pub guard: bool,
    /// Exact host names or IP literals (case-insensitive) that bypass the guard.
    pub allow_hosts: Vec<String>,
    /// The host's own addresses (default: its interfaces, read every 30 s).
    pub local: Arc<dyn LocalAddresses>,
}

impl Default for SsrfPolicy {
    fn default() -> Self {
        SsrfPolicy {
            guard: true,
            allow_hosts: Vec::new(),
            local: Arc::new(InterfaceAddresses::new(INTERFACE_REFRESH)),
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
        let own = |ip: IpAddr| {
            self.local.contains(ip)
                || matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| self.local.contains(v4.into())))
        };
        let class = match blocked_address(ip) {
            Some(special) => Blocked::Special(special),
            None if own(ip) => Blocked::ThisHost,
            None => return Ok(()),
        };
        Err(SsrfRefusal {
            host: host.to_string(),
            ip,
            class,
        })
    }
}

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Blocked {
    /// It is in a special-purpose range.
    Special(SpecialAddress),
    /// It is an address of this server's host.
    ThisHost,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::Special(s) => s.fmt(f),
            Blocked::ThisHost => f.write_str("an address of this server's host"),
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
    /// Why the address is blocked.
    pub class: Blocked,
}

/// Why a webhook host is refused when its config is created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CreationRefusal {
    /// The host is, or resolves to, a blocked address.
    #[error(transparent)]
    Refused(#[from] SsrfRefusal),
    /// The name does not resolve (now): deliveries could not reach it.
    #[error(
        "{host} does not resolve ({source}); a webhook's host must resolve when its config is created"
    )]
    Unresolved {
        /// The host as written in the URL.
        host: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// The resolver gave no answer in time.
    #[error(
        "resolving {host} took longer than {timeout:?}; a webhook's host must resolve when its config is created"
    )]
    Timeout {
        /// The host as written in the URL.
        host: String,
        /// The limit.
        timeout: Duration,
    },
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

    /// The creation-time check of a webhook `host` (IPv6 literals in
    /// brackets): an IP literal against the policy, a name resolved within
    /// [`CREATION_RESOLVE_TIMEOUT`] and each of its addresses checked.
    pub async fn check_host(&self, host: &str) -> Result<(), CreationRefusal> {
        if self.policy.allows(host) {
            return Ok(());
        }
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<IpAddr>() {
            return Ok(self.policy.check(host, ip)?);
        }
        match tokio::time::timeout(CREATION_RESOLVE_TIMEOUT, self.lookup(host)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                match e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<SsrfRefusal>())
                {
                    Some(refusal) => Err(refusal.clone().into()),
                    None => Err(CreationRefusal::Unresolved {
                        host: host.to_string(),
                        source: e,
                    }),
                }
            }
            Err(_) => Err(CreationRefusal::Timeout {
                host: host.to_string(),
                timeout: CREATION_RESOLVE_TIMEOUT,
            }),
        }
    }
}

impl DestinationCheck for GuardedResolver {
    fn check<'a>(&'a self, host: &'a str) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(async move { self.check_host(host).await.map_err(BoxError::from) })
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
