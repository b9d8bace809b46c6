//! The bridge in front of a remote agent, on a port of its own: what
//! `switchboard bridge --agent URL` runs, as two calls.
//!
//! [`RemoteBridge::connect`] fetches the agent's card once with the
//! bridge's client (an agent that cannot be reached or used is an error
//! before anything listens); every run is then a [`RemoteBackend`] call
//! sequence against the interface chosen. [`RemoteBridge::router`] is the
//! AG-UI endpoint and CopilotKit's runtime routes over that backend, behind
//! an authenticator ([`authenticated`](crate::authenticated): a refused
//! caller gets 401/403 before its body is read), for a
//! [`Front`](switchboard_server::Front) to serve until Ctrl-C or SIGTERM.
//!
//! The agent sees every call as the bridge's (the client's credentials),
//! so the bridge scopes tasks and contexts to its callers itself
//! ([`owner`](crate::owner)), with no state of its own.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use switchboard_bridge::{RemoteBridge, RemoteBridgeConfig};
//! use switchboard_server::{Anyone, ConnectionLimits, Front};
//!
//! let bridge = RemoteBridge::connect(RemoteBridgeConfig::new("http://127.0.0.1:8080")).await?;
//! let front = Front::bind("127.0.0.1:8090").await?;
//! println!("AG-UI at http://{}/agui", front.local_addr());
//! let router = bridge.router(Arc::new(Anyone));
//! front.serve(router, ConnectionLimits::default()).await?;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use axum::Router;
use switchboard_client::{A2AClient, ClientBuilder, ClientError};
use switchboard_server::Authenticator;

use crate::{CopilotKitConfig, EndpointConfig, RemoteBackend, copilotkit};

/// What a bridge in front of a remote agent talks to and how it serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RemoteBridgeConfig {
    /// The agent: its base URL or its card's URL.
    pub agent_url: String,
    /// The client the agent is called with (credentials, bindings).
    pub client: ClientBuilder,
    /// The AG-UI endpoint: path, body limit, keep-alive, runs.
    pub endpoint: EndpointConfig,
    /// The base path of CopilotKit's runtime routes
    /// ([`copilotkit::DEFAULT_BASE_PATH`]).
    pub copilotkit_path: String,
    /// The id CopilotKit's routes serve the agent under; `None`: the name
    /// on its card.
    pub copilotkit_agent_id: Option<String>,
}

impl RemoteBridgeConfig {
    /// The agent at `agent_url`, called with a default client, served with
    /// the default endpoint and CopilotKit paths.
    pub fn new(agent_url: impl Into<String>) -> Self {
        RemoteBridgeConfig {
            agent_url: agent_url.into(),
            client: ClientBuilder::new(),
            endpoint: EndpointConfig::default(),
            copilotkit_path: copilotkit::DEFAULT_BASE_PATH.to_owned(),
            copilotkit_agent_id: None,
        }
    }

    /// Whether the routes can be served as configured: both paths absolute
    /// and apart (CopilotKit's routes under the AG-UI path's own would
    /// shadow it).
    pub fn check(&self) -> Result<(), RemoteConfigError> {
        for (name, path) in [
            ("path", &self.endpoint.path),
            ("copilotkit_path", &self.copilotkit_path),
        ] {
            if !path.starts_with('/') {
                return Err(RemoteConfigError::RelativePath {
                    name,
                    path: path.clone(),
                });
            }
        }
        if self.copilotkit_path.trim_end_matches('/') == self.endpoint.path.trim_end_matches('/') {
            return Err(RemoteConfigError::SamePath);
        }
        Ok(())
    }
}

/// Why a [`RemoteBridgeConfig`] cannot be served ([`RemoteBridgeConfig::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteConfigError {
    /// A path that does not start with `/`.
    #[error("{name} {path:?} must start with `/`")]
    RelativePath {
        /// Which path: `path` (the AG-UI endpoint's) or `copilotkit_path`.
        name: &'static str,
        /// The path.
        path: String,
    },
    /// The AG-UI endpoint and CopilotKit's routes at one path.
    #[error("path and copilotkit_path must differ")]
    SamePath,
}

/// A bridge whose agent answered: its card fetched, ready to serve.
#[derive(Debug)]
pub struct RemoteBridge {
    config: RemoteBridgeConfig,
    client: A2AClient,
}

impl RemoteBridge {
    /// Connects to `config.agent_url` with `config.client`: the card is
    /// fetched once and an interface chosen, or the error says why not.
    pub async fn connect(config: RemoteBridgeConfig) -> Result<RemoteBridge, ClientError> {
        let client = config.client.clone().connect(&config.agent_url).await?;
        Ok(RemoteBridge { config, client })
    }

    /// The agent's client: its card (name, description), the endpoint and
    /// the binding chosen, for telling what the bridge serves.
    pub fn client(&self) -> &A2AClient {
        &self.client
    }

    /// The AG-UI endpoint and CopilotKit's routes over the agent, behind
    /// `authenticator`.
    pub fn router(self, authenticator: Arc<dyn Authenticator>) -> Router {
        let card = self.client.card();
        let name = card.map(|c| c.name.clone()).unwrap_or_default();
        let description = card.map(|c| c.description.clone()).unwrap_or_default();
        let copilotkit = CopilotKitConfig {
            base_path: self.config.copilotkit_path,
            agent_id: self.config.copilotkit_agent_id.unwrap_or(name),
            description,
            endpoint: self.config.endpoint.clone(),
        };
        let backend = RemoteBackend::new(self.client);
        crate::authenticated(
            crate::router(backend.clone(), self.config.endpoint)
                .merge(copilotkit::router(backend, copilotkit)),
            authenticator,
        )
    }
}
