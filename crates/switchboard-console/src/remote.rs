//! The console in front of a remote agent, on a port of its own: what
//! `switchboard console --agent URL` runs, as two calls.
//!
//! [`RemoteConsole::connect`] fetches the agent's card with the console's
//! client, so an agent that cannot be reached or used is an error before
//! anything listens. [`RemoteConsole::router`] is the console behind an
//! authenticator (with `/` redirecting to it), for a
//! [`Front`](switchboard_server::Front) to serve until Ctrl-C or SIGTERM. Every caller acts with the console's
//! credentials for the agent, so a console shared by several people shows
//! each of them everyone's tasks: serve one per person, on loopback.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use switchboard_client::ClientBuilder;
//! use switchboard_console::{ConsoleConfig, RemoteConsole};
//! use switchboard_server::{Anyone, ConnectionLimits, Front};
//!
//! let config = ConsoleConfig::new("http://127.0.0.1:8080", ClientBuilder::new());
//! let console = RemoteConsole::connect(config).await?;
//! let front = Front::bind("127.0.0.1:8091").await?;
//! println!("console at http://{}/console/", front.local_addr());
//! let router = console.router(Arc::new(Anyone));
//! front.serve(router, ConnectionLimits::default()).await?;
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use axum::Router;
use switchboard_client::{A2AClient, ClientError};
use switchboard_server::Authenticator;

use crate::ConsoleConfig;

/// A console whose agent answered: its card fetched, ready to serve.
#[derive(Debug)]
pub struct RemoteConsole {
    client: A2AClient,
    config: ConsoleConfig,
}

impl RemoteConsole {
    /// Fetches the card at `config.agent_url` with `config.client`.
    pub async fn connect(config: ConsoleConfig) -> Result<RemoteConsole, ClientError> {
        Ok(RemoteConsole {
            client: config.client.clone().connect(&config.agent_url).await?,
            config,
        })
    }

    /// The client the card came with (its name, the endpoint and interface
    /// picked).
    pub fn client(&self) -> &A2AClient {
        &self.client
    }

    /// The console behind `authenticator` at [`BASE_PATH`](crate::BASE_PATH), and `/`
    /// redirecting to it.
    pub fn router(self, authenticator: Arc<dyn Authenticator>) -> Router {
        crate::authenticated(self.config, authenticator).route(
            "/",
            axum::routing::get(|| async { axum::response::Redirect::to("/console/") }),
        )
    }
}
