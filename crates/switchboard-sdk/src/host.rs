//! A whole server from plain settings: what `switchboard serve` runs, by a
//! call.
//!
//! [`Host::bind`] takes an agent, its card and a [`HostSettings`] (no
//! command line: fill it in, or deserialize the parts that are serde
//! structs) and sets up everything around the agent:
//!
//! - the store opened from a URL ([`crate::store::open_with`]: `memory`,
//!   `sqlite://PATH`, `postgres://…` as one replica of a set), with
//!   retention and the engine's limits and quotas
//!   ([`LimitsSettings`]);
//! - the listener, with TLS when a certificate and key are given (replaced
//!   files picked up without a restart);
//! - authentication from [`AuthSettings`]
//!   (no scheme: anonymous on loopback only), written on the card;
//! - push notifications with their signing keys (a file beside the SQLite
//!   database, one set shared in the PostgreSQL database, or in memory);
//! - `/healthz`, `/readyz`, `/metrics` (or metrics on a listener of their
//!   own), the access log, the AG-UI endpoint at `/agui` and CopilotKit's
//!   routes, the web console (feature `console`);
//! - more agents under path prefixes ([`AgentSpec`], each `[[agents]]`
//!   table), reloaded on SIGHUP from an [`AgentsSource`].
//!
//! [`Host::serve`] then serves until its shutdown future resolves (pass
//! [`crate::shutdown_signal`] to drain on Ctrl-C or SIGTERM), stops the push
//! worker, and leaves the replica set. Between the two, the caller knows
//! the address it listens on ([`Host::local_addr`], port 0 picks one) and
//! can say so.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use switchboard_sdk::host::{Host, HostSettings};
//! use switchboard_sdk::prelude::*;
//! let agent = agent_fn(|_ctx, events| async move {
//!     events.reply_text("hello").await?;
//!     Ok(())
//! });
//! let card = AgentCard::new("hello", "Says hello", "1.0");
//! let settings = HostSettings {
//!     listen: "127.0.0.1:0".into(),
//!     store: "sqlite://hello.db".into(),
//!     ..HostSettings::default()
//! };
//! let host = Host::bind(agent, card, settings).await?;
//! println!("listening on {}", host.url());
//! host.serve(shutdown_signal()).await?;
//! # Ok(()) }
//! ```
//!
//! With `store = "postgres://…"` several hosts may share one database:
//! each runs a delivery worker, they claim notifications with
//! `FOR UPDATE SKIP LOCKED`, and they sign with one key set stored in the
//! database (a rotation on one reaches the others within the push crate's
//! `shared_keys::REFRESH_INTERVAL`), unless [`PushSettings::key_file`]
//! gives each its own file.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use switchboard_auth::settings::{AuthSettings, SettingsError};
use switchboard_bridge::AguiEndpoint as _;
use switchboard_core::{AgentExecutor, Cluster, HandlerConfig, RequestHandler, Retention};
use switchboard_core::{PushStore, TaskStore};
use switchboard_protocol::AgentCard;
use switchboard_runtimes::spec::{AgentSpec, BuildError};
use switchboard_server::push::{PushOptions, RetryPolicy};
use switchboard_server::settings::LimitsSettings;
use switchboard_server::{A2aServer, MountError, ServerTls};
use tokio_util::sync::CancellationToken;

use crate::store::{OpenError, OpenedStore, StoreOptions, mask_url_credentials};

mod card;
mod keys;

pub use card::{ExtendedCardError, extended_card};
pub use keys::{PushKeysError, load_push_keys, push_key_path};

/// Everything a [`Host`] serves with besides its agent. The default: on
/// 127.0.0.1:8080, tasks in memory, push on, the hybrid card, `/agui`
/// and the console on, every limit its default, no authentication (so
/// loopback only).
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// Address and port to listen on (port 0 picks a free one).
    pub listen: String,
    /// Where tasks live: `memory`, `sqlite://PATH` or `postgres://…`.
    pub store: String,
    /// The URL clients use to reach this server (default: `http://<listen>`).
    pub public_url: Option<String>,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// `memory`: how many finished tasks to keep.
    pub memory_max_terminal_tasks: usize,
    /// `memory`: most bytes of tasks and event logs to hold.
    pub memory_max_bytes: u64,
    /// `postgres`: the lease a replica holds on the tasks it runs.
    pub replica_lease: Duration,
    /// Which finished tasks to delete (default: keep them).
    pub retention: Retention,
    /// How often retention runs.
    pub retention_interval: Duration,
    /// Push notifications (`None`: off; the push operations then answer
    /// PushNotificationNotSupported).
    pub push: Option<PushSettings>,
    /// Serve the hybrid card (1.0 plus the 0.3 fields 0.3 clients need).
    pub hybrid_card: bool,
    /// The root's card is a directory of the mounted agents (one skill per
    /// agent, naming its card; [`A2aServer::directory_card`]) instead of the
    /// root agent's own.
    pub directory_card: bool,
    /// Sign the card with the push signing keys (needs push).
    pub sign_card: bool,
    /// A JSON file over the public card for authenticated callers
    /// ([`extended_card`]).
    pub extended_card: Option<PathBuf>,
    /// Advertised URLs per binding (`GRPC`, `JSONRPC`, `HTTP+JSON`) instead
    /// of those derived from the public URL.
    pub interface_urls: Vec<(String, String)>,
    /// Serve HTTPS with this certificate chain (PEM; needs `tls_key`).
    pub tls_cert: Option<PathBuf>,
    /// The private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// How often the certificate files are checked for a change.
    pub tls_reload: Duration,
    /// Serve AG-UI at `/agui` and CopilotKit's routes at `/api/copilotkit`.
    pub agui_endpoint: bool,
    /// At `/agui`: forward `system` and `developer` messages to the agent.
    pub agui_forward_system_messages: bool,
    /// Serve the web console at `/console/` (feature `console`; on by
    /// default with it, and refused without it).
    pub console: bool,
    /// Who may call.
    pub auth: AuthSettings,
    /// Serve `/metrics` only on this address instead of beside the bindings.
    pub metrics_listen: Option<String>,
    /// Every limit, each optional.
    pub limits: LimitsSettings,
    /// More agents under path prefixes.
    pub agents: Vec<AgentSpec>,
    /// Where the agents are read again on SIGHUP (`None`: no reload).
    pub reload_agents: Option<AgentsSource>,
}

impl Default for HostSettings {
    fn default() -> Self {
        HostSettings {
            listen: "127.0.0.1:8080".into(),
            store: "memory".into(),
            public_url: None,
            max_body_bytes: switchboard_server::DEFAULT_MAX_BODY_BYTES,
            memory_max_terminal_tasks: 100_000,
            memory_max_bytes: 512 * 1024 * 1024,
            replica_lease: Duration::from_secs(10),
            retention: Retention::default(),
            retention_interval: Duration::from_secs(60),
            push: Some(PushSettings::default()),
            hybrid_card: true,
            directory_card: false,
            sign_card: false,
            extended_card: None,
            interface_urls: Vec::new(),
            tls_cert: None,
            tls_key: None,
            tls_reload: Duration::from_secs(5),
            agui_endpoint: true,
            agui_forward_system_messages: false,
            console: cfg!(feature = "console"),
            auth: AuthSettings::default(),
            metrics_listen: None,
            limits: LimitsSettings::default(),
            agents: Vec::new(),
            reload_agents: None,
        }
    }
}

/// How push notifications are delivered.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// Webhook hosts exempt from the SSRF guard (exact names or IPs).
    pub allow_hosts: Vec<String>,
    /// The signing keys' file (default: see [`push_key_path`] and
    /// [`load_push_keys`]).
    pub key_file: Option<PathBuf>,
    /// When to retry a failed delivery, and when to give up.
    pub retry: RetryPolicy,
    /// After a crash, how soon an unsettled delivery is retried.
    pub lease: Duration,
}

impl Default for PushSettings {
    fn default() -> Self {
        PushSettings {
            allow_hosts: Vec::new(),
            key_file: None,
            retry: RetryPolicy {
                base: Duration::from_secs(1),
                max: Duration::from_secs(600),
                max_attempts: 15,
            },
            lease: Duration::from_secs(60),
        }
    }
}

/// The error an [`AgentsSource`] gives.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Where the mounted agents are read again on SIGHUP (a config file): the
/// whole list, checked as at start. Each agent whose table is unchanged
/// keeps serving (its tasks, runs and streams carry on); new and changed
/// ones are built; dropped ones are unmounted (see
/// [`switchboard_server::mount`] for their running tasks). A list that
/// cannot be read or an agent that cannot be built is refused with a log
/// line, and the agents serving keep serving.
#[derive(Clone)]
pub struct AgentsSource {
    label: String,
    read: Arc<dyn Fn() -> Result<Vec<AgentSpec>, BoxError> + Send + Sync>,
}

impl AgentsSource {
    /// A source named `label` (e.g. the file's path, for the log).
    pub fn new(
        label: impl Into<String>,
        read: impl Fn() -> Result<Vec<AgentSpec>, BoxError> + Send + Sync + 'static,
    ) -> Self {
        AgentsSource {
            label: label.into(),
            read: Arc::new(read),
        }
    }
}

impl std::fmt::Debug for AgentsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentsSource")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// Why a [`Host`] could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The store could not be opened (its URL without the password).
    #[error("opening the store {store}")]
    Store {
        /// The URL, password masked.
        store: String,
        /// Why.
        #[source]
        source: OpenError,
    },
    /// The address could not be bound.
    #[error("binding {addr}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The metrics address could not be bound.
    #[error("binding metrics_listen {addr}")]
    BindMetrics {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The authentication settings are wrong or would serve everyone off
    /// loopback.
    #[error(transparent)]
    Auth(#[from] SettingsError),
    /// A mounted agent's authentication settings are wrong.
    #[error("the auth of agent {name:?}")]
    AgentAuth {
        /// The agent.
        name: String,
        /// Why.
        #[source]
        source: SettingsError,
    },
    /// The extended card file.
    #[error(transparent)]
    ExtendedCard(#[from] ExtendedCardError),
    /// The certificate or key could not be loaded.
    #[error("loading the TLS certificate")]
    Tls(#[source] switchboard_server::tls::TlsError),
    /// Only one of `tls_cert` and `tls_key` is set.
    #[error("{0} is set but {1} is not: TLS needs both")]
    TlsHalf(&'static str, &'static str),
    /// The push signing keys.
    #[error(transparent)]
    PushKeys(#[from] PushKeysError),
    /// Push could not be wired.
    #[error("enabling push notifications")]
    Push(#[source] switchboard_server::push::PushError),
    /// `console` without switchboard-sdk's `console` feature.
    #[error("the console needs switchboard-sdk's `console` feature")]
    NoConsole,
    /// `sign_card` without push.
    #[error("sign_card signs the card with the push signing keys: turn push on, or sign_card off")]
    SignCardWithoutPush,
    /// A mounted agent could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A mounted agent could not be mounted.
    #[error("mounting agent {name:?} at {path}")]
    Mount {
        /// The agent.
        name: String,
        /// Its path.
        path: String,
        /// Why.
        #[source]
        source: MountError,
    },
}

/// A server set up and listening, not yet serving: see the module docs.
pub struct Host {
    server: A2aServer,
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    url: String,
    public_url: String,
    metrics_addr: Option<SocketAddr>,
    cluster: Option<Arc<dyn Cluster>>,
    background: CancellationToken,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("addr", &self.addr)
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

/// Opens the store `settings` name, with their memory bounds, lease and
/// storage quota.
pub async fn open_store(settings: &HostSettings) -> Result<OpenedStore, HostError> {
    let options = StoreOptions {
        memory_max_terminal_tasks: settings.memory_max_terminal_tasks,
        memory_max_bytes: settings.memory_max_bytes,
        storage_quota: settings.limits.storage_quota(),
        replica_lease: settings.replica_lease,
    };
    crate::store::open_with(&settings.store, &options)
        .await
        .map_err(|source| HostError::Store {
            store: mask_url_credentials(&settings.store),
            source,
        })
}

impl Host {
    /// Opens the store, binds the listener and sets up the server around
    /// `agent` (see the module docs); nothing is served until
    /// [`Host::serve`].
    pub async fn bind(
        agent: impl AgentExecutor,
        card: AgentCard,
        settings: HostSettings,
    ) -> Result<Host, HostError> {
        let cfg = Arc::new(settings);
        let stores = open_store(&cfg).await?;
        let listener = tokio::net::TcpListener::bind(&cfg.listen)
            .await
            .map_err(|source| HostError::Bind {
                addr: cfg.listen.clone(),
                source,
            })?;
        let addr = listener.local_addr()?;
        // The server writes the schemes on the card it serves.
        let authenticator = switchboard_auth::settings::caller_schemes(&cfg.auth, addr.ip())?;
        let extended = match &cfg.extended_card {
            Some(path) => Some(extended_card(&card, path)?),
            None => None,
        };
        let tls = server_tls(&cfg)?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        if tls.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "serving plaintext HTTP on a non-loopback address: credentials and task data \
                 cross the network unencrypted (set tls_cert and tls_key, or terminate TLS in front)"
            );
        }
        let public_url = cfg
            .public_url
            .clone()
            .unwrap_or_else(|| format!("{scheme}://{addr}"));
        let background = CancellationToken::new();
        let lease = cfg.replica_lease;
        let handler_config = HandlerConfig {
            // Look for orphans a few times per lease, at most every 2 s.
            orphan_sweep_interval: (lease / 4).min(Duration::from_secs(2)),
            retention: cfg.retention,
            retention_interval: cfg.retention_interval,
            limits: cfg.limits.engine_limits(),
            quotas: cfg.limits.quotas(),
            ..Default::default()
        };
        let mut builder = stores.builder(RequestHandler::builder(agent, card));
        builder = builder.config(handler_config.clone());
        if let Some(extended) = extended {
            builder = builder.extended_card(extended);
        }
        let push = push_options(&cfg, &stores, &background).await?;
        let handler = builder.build();
        let mut server = A2aServer::new(handler.clone())
            .public_url(&public_url)
            .max_body_bytes(cfg.max_body_bytes)
            .hybrid_card(cfg.hybrid_card)
            .directory_card(cfg.directory_card)
            .connection_limits(cfg.limits.connection_limits())
            .request_rate(cfg.limits.request_rate());
        let metrics_push = stores.push().cloned().filter(|_| cfg.push.is_some());
        let metrics_addr = match &cfg.metrics_listen {
            None => {
                server = server.ops();
                None
            }
            Some(listen) => {
                let listener = tokio::net::TcpListener::bind(listen)
                    .await
                    .map_err(|source| HostError::BindMetrics {
                        addr: listen.clone(),
                        source,
                    })?;
                let addr = listener.local_addr()?;
                server = server.ops_without_metrics();
                serve_metrics(listener, metrics_push, background.clone());
                Some(addr)
            }
        };
        for (binding, url) in &cfg.interface_urls {
            server = server.interface_url(binding, url);
        }
        let mount_env = MountEnv {
            cfg: cfg.clone(),
            tasks: stores.tasks().clone(),
            cluster: stores.cluster().cloned(),
            handler_config,
            listen: addr.ip(),
        };
        let mut serving = Vec::new();
        for spec in &cfg.agents {
            let agent = mounted_agent(&mount_env, spec).await?;
            server =
                server
                    .mount(&spec.path, agent.clone())
                    .map_err(|source| HostError::Mount {
                        name: spec.name.clone(),
                        path: spec.path.clone(),
                        source,
                    })?;
            serving.push((spec.clone(), agent));
        }
        if let Some(auth) = authenticator {
            server = server.authenticator(auth);
        }
        if let Some(tls) = tls {
            server = server.tls(tls);
        }
        if cfg.agui_endpoint {
            // Behind the server's gate, as the A2A bindings are; CopilotKit's
            // runtime routes beside it, the agent under its card's name.
            let card = handler.card();
            let copilotkit = switchboard_bridge::CopilotKitConfig {
                base_path: switchboard_bridge::copilotkit::DEFAULT_BASE_PATH.into(),
                agent_id: card.name.clone(),
                description: card.description.clone(),
                endpoint: agui_config(&cfg),
            };
            server = server
                .agui_endpoint(agui_config(&cfg))
                .copilotkit_endpoint(copilotkit);
        }
        #[cfg(not(feature = "console"))]
        if cfg.console {
            return Err(HostError::NoConsole);
        }
        #[cfg(feature = "console")]
        if cfg.console {
            // The console's calls go back into this server with the caller's
            // own credentials, through its gate: over loopback when it listens
            // there or on every address, else to the address it listens on.
            use switchboard_console::A2aServerConsole as _;
            server = server.console(self_url(scheme, addr, &public_url));
        }
        if let Some(options) = push {
            server = server
                .push(options)
                .map_err(HostError::Push)?
                .sign_card(cfg.sign_card);
        } else if cfg.sign_card {
            return Err(HostError::SignCardWithoutPush);
        }
        if let Some(source) = cfg.reload_agents.clone() {
            // Last: agents mounted at a reload get the server's settings as
            // they are now.
            let reloader = server.mount_reloader();
            reload_on_sighup(source, mount_env, reloader, serving);
        }
        Ok(Host {
            server,
            listener,
            addr,
            url: format!("{scheme}://{addr}"),
            public_url,
            metrics_addr,
            cluster: stores.cluster().cloned(),
            background,
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` or `https://ADDR` of the listening address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The URL the card advertises (the public URL, else [`Host::url`]).
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// Where `/metrics` is served when it has a listener of its own.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Serves until `shutdown` resolves, then drains: no new connections,
    /// running tasks told to stop and given time, the push worker stopped
    /// (notifications being sent finish, the rest stay queued), this
    /// replica's share handed back to the others.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HostError> {
        let result = self.server.serve(self.listener, shutdown).await;
        if let Some(cluster) = &self.cluster {
            cluster.leave().await;
        }
        // The key refresh and key file watch, and the metrics listener.
        self.background.cancel();
        tracing::info!("stopped");
        Ok(result?)
    }
}

fn serve_metrics(
    listener: tokio::net::TcpListener,
    push: Option<Arc<dyn PushStore>>,
    shutdown: CancellationToken,
) {
    tokio::spawn(async move {
        if let Err(e) = switchboard_server::ops::serve_metrics(listener, push, shutdown).await {
            tracing::error!(error = %e, "the metrics listener failed");
        }
    });
}

/// How push runs, when the settings and the store allow it: the allowed
/// hosts, retry policy and lease, and the signing keys of
/// [`load_push_keys`]. `A2aServer::push` wires the rest.
async fn push_options(
    cfg: &HostSettings,
    stores: &OpenedStore,
    shutdown: &CancellationToken,
) -> Result<Option<PushOptions>, HostError> {
    let Some(push) = cfg.push.as_ref().filter(|_| stores.push().is_some()) else {
        return Ok(None);
    };
    let keys = load_push_keys(&cfg.store, push.key_file.as_deref(), stores, shutdown).await?;
    let options = push.allow_hosts.iter().fold(
        PushOptions::new()
            .keys(keys)
            .retry(push.retry.clone())
            .lease(push.lease),
        |options, host| options.allow_host(host),
    );
    Ok(Some(options))
}

/// Where the server reaches itself: TLS certificates name the public host,
/// so over TLS that is the public URL; plaintext goes to the listening
/// address (loopback for a wildcard one).
#[cfg(feature = "console")]
fn self_url(scheme: &str, addr: SocketAddr, public_url: &str) -> String {
    if scheme == "https" {
        return public_url.to_owned();
    }
    let ip = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => std::net::Ipv6Addr::LOCALHOST.into(),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

/// What every mounted agent is built with, at start and at a reload.
#[derive(Clone)]
struct MountEnv {
    cfg: Arc<HostSettings>,
    tasks: Arc<dyn TaskStore>,
    cluster: Option<Arc<dyn Cluster>>,
    handler_config: HandlerConfig,
    listen: std::net::IpAddr,
}

/// A mounted agent as a server of its own, on the same store and engine
/// settings as the root agent, its tasks in a namespace of its own (its
/// path: one agent never finds another's tasks). Retention is the root
/// handler's (one store, purged once); crash recovery is each agent's, of
/// its own namespace (its runtime may resume its tasks); push is the root
/// server's, shared by [`A2aServer::mount`]. Each agent serves AG-UI at
/// `<path>/agui` when `agui_endpoint` is on.
async fn mounted_agent(env: &MountEnv, spec: &AgentSpec) -> Result<A2aServer, HostError> {
    let MountEnv {
        cfg,
        tasks,
        cluster,
        handler_config,
        listen,
    } = env;
    let (executor, card) = spec.build().await?;
    let limits = spec.limits.as_ref().map(|l| l.over(&cfg.limits));
    let mut builder = RequestHandler::builder(executor, card)
        .store(tasks.clone())
        .namespace(&spec.path)
        .config(HandlerConfig {
            retention: Retention::default(),
            quotas: limits
                .as_ref()
                .map_or_else(|| handler_config.quotas.clone(), |l| l.quotas()),
            ..handler_config.clone()
        });
    if let Some(cluster) = cluster.clone() {
        builder = builder.cluster(cluster);
    }
    let mut server = A2aServer::new(builder.build())
        .max_body_bytes(cfg.max_body_bytes)
        .hybrid_card(cfg.hybrid_card);
    // Without its own, an agent keeps the server's gate and rate
    // (`A2aServer::mount`).
    if let Some(limits) = &limits {
        server = server.request_rate(limits.request_rate());
    }
    if let Some(auth) = &spec.auth {
        let schemes = switchboard_auth::settings::caller_schemes(auth, *listen)
            .map_err(|source| HostError::AgentAuth {
                name: spec.name.clone(),
                source,
            })?
            .unwrap_or_else(|| switchboard_auth::Schemes::new().allow_anonymous(true));
        server = server.authenticator(schemes);
    }
    if cfg.agui_endpoint {
        // `<path>/agui`, behind the agent's gate as its bindings are.
        server = server.agui_endpoint(agui_config(cfg));
    }
    Ok(server)
}

/// On each SIGHUP, the agents again from `source`
/// ([`switchboard_runtimes::spec::reload`]); a list that does not read, or
/// an agent that cannot be built, is refused with a log line and the agents
/// serving keep serving.
fn reload_on_sighup(
    source: AgentsSource,
    env: MountEnv,
    reloader: switchboard_server::mount::MountReloader,
    mut serving: Vec<(AgentSpec, A2aServer)>,
) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(hangups) => hangups,
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP cannot be handled: the agents are not reloaded");
            return;
        }
    };
    let file = source.label.clone();
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            let build = |spec: AgentSpec| {
                let env = env.clone();
                async move {
                    let server = mounted_agent(&env, &spec).await?;
                    Ok::<_, HostError>((spec, server))
                }
            };
            let next = match (source.read)() {
                Ok(specs) => switchboard_runtimes::spec::reload(specs, &serving, build)
                    .await
                    .map_err(|e| error_chain(&e)),
                Err(e) => Err(error_chain(&*e)),
            };
            match next {
                Ok(next) => {
                    let mounts = next
                        .iter()
                        .map(|(spec, server)| (spec.path.clone(), server.clone()))
                        .collect();
                    match reloader.replace(mounts) {
                        Ok(()) => {
                            tracing::info!(%file, agents = ?reloader.paths(), "agents reloaded");
                            serving = next;
                        }
                        Err(e) => {
                            tracing::error!(%file, error = %e, "agents not reloaded; the old ones keep serving");
                        }
                    }
                }
                Err(error) => {
                    tracing::error!(%file, %error, "agents not reloaded; the old ones keep serving");
                }
            }
        }
    });
}

/// `error: its cause: …`, for a log line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut shown = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        shown = format!("{shown}: {cause}");
        source = cause.source();
    }
    shown
}

/// The `/agui` settings (and CopilotKit's routes'): the bridge's AG-UI
/// endpoint over the hosted agent, mounted behind the server's gate
/// ([`switchboard_bridge::AguiEndpoint::agui_endpoint`]).
fn agui_config(cfg: &HostSettings) -> switchboard_bridge::EndpointConfig {
    use switchboard_bridge::{BridgeConfig, EndpointConfig, RunConfig};
    EndpointConfig {
        body_limit: cfg.max_body_bytes,
        run: RunConfig {
            bridge: BridgeConfig {
                forward_system_messages: cfg.agui_forward_system_messages,
                ..BridgeConfig::default()
            },
            ..RunConfig::default()
        },
        ..EndpointConfig::default()
    }
}

/// The listener's TLS, when `tls_cert` and `tls_key` are set (both or neither).
fn server_tls(cfg: &HostSettings) -> Result<Option<ServerTls>, HostError> {
    match (&cfg.tls_cert, &cfg.tls_key) {
        (None, None) => Ok(None),
        (Some(cert), Some(key)) => {
            let tls = ServerTls::from_pem_files(cert, key)
                .map_err(HostError::Tls)?
                .reload_interval(cfg.tls_reload);
            Ok(Some(tls))
        }
        (Some(_), None) => Err(HostError::TlsHalf("tls_cert", "tls_key")),
        (None, Some(_)) => Err(HostError::TlsHalf("tls_key", "tls_cert")),
    }
}

#[cfg(test)]
mod tests;
