//! `switchboard mcp`: A2A agents as the tools of an MCP server.
//!
//! The process fetches each agent's card once at start (a card that cannot
//! be fetched is an error before anything is served, exit code 2) and
//! serves [`switchboard_mcp::McpFront`] over them: each skill a tool, each
//! call an A2A task followed to its result (the library's docs say how).
//! This module is the flags, the callers and the socket.
//!
//! **Agents.** `--agent URL` (an agent's base URL or its card's URL),
//! repeatable; `--agent PREFIX=URL` names the prefix of that agent's tools
//! (with several agents each tool is `<prefix>__<skill>`, the prefix made
//! from the card's name by default). The agents are called with the
//! client's credential flags and variables (`--header`, `--api-key` /
//! `SWITCHBOARD_API_KEY`, `--token` / `SWITCHBOARD_TOKEN`, `--oauth-*`,
//! `--ca-cert`, `--verify-card`, `--binding`, `--protocol-version`,
//! `--timeout`: [`AgentArgs`], the client's own), over whichever binding
//! the card offers.
//!
//! **Transports.** Without `--listen`, MCP over stdin/stdout (what an MCP
//! host's `mcpServers` entry starts): stdout carries MCP only, logs go to
//! stderr. With `--listen ADDR`, MCP's streamable HTTP at `--path` (`/mcp`),
//! behind `serve`'s caller authentication ([`crate::auth_args`]: API keys
//! or JWTs; without them everyone, on a loopback address only) and its
//! connection limits; one line on stdout once it accepts connections:
//! `switchboard mcp listening on http://<addr><path> (<n> tools from <agents>)`.
//! The server-side settings read `SWITCHBOARD_MCP_<FLAG>` variables
//! ([`McpArgs::command`]), so one environment can configure `serve` and
//! `mcp` apart; the agents' credentials keep the client's variables.
//!
//! **Stop.** stdio: when the host closes stdin. HTTP: Ctrl-C or SIGTERM.

use std::time::Duration;

use anyhow::Context;
use switchboard_mcp::{HttpOptions, McpAgent, McpFront, McpOptions, split_spec};

use crate::client::AgentArgs;
use crate::front::FrontServing;

/// The settings of `switchboard mcp` (see the module docs).
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// An A2A agent whose skills become tools: its base URL or its card's
    /// URL, optionally `PREFIX=URL`. Repeatable.
    #[arg(long = "agent", required = true, value_name = "[PREFIX=]URL")]
    pub agents: Vec<String>,
    /// Serve MCP's streamable HTTP on this address (port 0 picks a free
    /// one) instead of stdio.
    #[arg(long, env = "SWITCHBOARD_MCP_LISTEN", value_name = "ADDR")]
    pub listen: Option<String>,
    /// The path of the streamable HTTP endpoint.
    #[arg(long, env = "SWITCHBOARD_MCP_PATH", default_value = "/mcp")]
    pub path: String,
    /// A `Host` the HTTP endpoint accepts besides the loopback names (the
    /// name clients reach it by when it listens on another address).
    /// Repeatable.
    #[arg(
        long = "allowed-host",
        env = "SWITCHBOARD_MCP_ALLOWED_HOST",
        value_delimiter = ',',
        value_name = "HOST"
    )]
    pub allowed_hosts: Vec<String>,
    /// Largest MCP request body accepted over HTTP, in bytes.
    #[arg(long, env = "SWITCHBOARD_MCP_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// The longest an agent may stay silent during a tool call, in seconds;
    /// past it the call is a tool error and the task is canceled.
    #[arg(
        long,
        env = "SWITCHBOARD_MCP_AGENT_TIMEOUT_SECS",
        default_value_t = 300
    )]
    pub agent_timeout_secs: u64,
    /// How the agents are reached: the client's credential, binding,
    /// version and trust flags (each agent gets the same).
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Who may call the HTTP endpoint, its connection limits and the logs
    /// (on stderr; `serve`'s flags).
    #[command(flatten)]
    pub serving: FrontServing,
}

/// The arguments that keep the client's variables: the agents' credentials.
const CLIENT_ENV: [&str; 4] = ["api_key", "token", "verify_card", "ca_cert"];

/// Gives every server-side argument of `cmd` that reads a variable
/// `SWITCHBOARD_MCP_<ID>` ([`crate::front::own_env`]); the agents'
/// credentials keep the client's.
pub fn mcp_env(cmd: clap::Command) -> clap::Command {
    crate::front::own_env(cmd, "MCP", |id| {
        CLIENT_ENV.contains(&id) || id.starts_with("oauth")
    })
}

impl McpArgs {
    /// The `mcp` command with every setting.
    pub fn command() -> clap::Command {
        mcp_env(<Self as clap::Args>::augment_args(clap::Command::new(
            "mcp",
        )))
    }

    /// Parses `argv` (the tokens after `mcp`) with the environment.
    pub fn resolve(argv: &[std::ffi::OsString]) -> anyhow::Result<McpArgs> {
        let matches = Self::command()
            .no_binary_name(true)
            .try_get_matches_from(argv)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let args = <Self as clap::FromArgMatches>::from_arg_matches(&matches)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if !args.path.starts_with('/') {
            anyhow::bail!("--path {:?} must start with `/`", args.path);
        }
        if args.agent_timeout_secs == 0 {
            anyhow::bail!("--agent-timeout-secs must be at least 1");
        }
        Ok(args)
    }

    /// The clients of the agents, their cards fetched.
    pub async fn connect(&self) -> anyhow::Result<Vec<McpAgent>> {
        let options = self.agent.settings().options()?;
        let mut agents = Vec::new();
        for spec in &self.agents {
            let agent = McpAgent::connect_spec(options.builder(), spec).await;
            let url = split_spec(spec).1;
            agents.push(agent.with_context(|| format!("cannot use the agent at {url}"))?);
        }
        Ok(agents)
    }
}

/// Runs the MCP server (see the module docs).
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let agents = args.connect().await?;
    let options =
        McpOptions::default().with_agent_timeout(Duration::from_secs(args.agent_timeout_secs));
    let front = McpFront::with_options(agents, options)?;
    let Some(listen) = &args.listen else {
        tracing::info!(tools = front.tools().len(), "serving MCP on stdio");
        front.serve_stdio().await?;
        return Ok(());
    };
    let (front_port, authenticator) = crate::front::bind(listen, &args.serving.auth).await?;
    let addr = front_port.local_addr();
    let http = HttpOptions::default()
        .with_path(args.path.clone())
        .with_max_body_bytes(args.max_body_bytes)
        .allow_hosts(args.allowed_hosts.iter().cloned());
    let tools = front.tools().len();
    let names = args
        .agents
        .iter()
        .map(|spec| split_spec(spec).1)
        .collect::<Vec<_>>()
        .join(", ");
    tracing::info!(%addr, path = %args.path, tools, "serving MCP over streamable HTTP");
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard mcp listening on http://{addr}{} ({tools} tools from {names})",
        args.path
    );
    front
        .serve_http(
            front_port,
            http,
            authenticator,
            args.serving.connections.connection_limits(),
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::front::argv;

    #[test]
    fn defaults_and_checks() {
        let args = McpArgs::resolve(&argv(&["--agent", "w=http://127.0.0.1:2/?a=b"])).unwrap();
        assert_eq!(args.agents, ["w=http://127.0.0.1:2/?a=b"]);
        assert_eq!(args.path, "/mcp");
        assert!(args.listen.is_none());
        for bad in [
            &[][..],
            &["--agent=a", "--path=mcp"],
            &["--agent=a", "--agent-timeout-secs=0"],
        ] {
            assert!(McpArgs::resolve(&argv(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn server_settings_read_mcp_variables_and_credentials_the_clients() {
        let cmd = McpArgs::command();
        let env = |id: &str| {
            cmd.get_arguments()
                .find(|a| a.get_id() == id)
                .and_then(|a| a.get_env())
                .map(|e| e.to_string_lossy().into_owned())
        };
        assert_eq!(env("listen").as_deref(), Some("SWITCHBOARD_MCP_LISTEN"));
        assert_eq!(
            env("api_key_hash").as_deref(),
            Some("SWITCHBOARD_MCP_API_KEY_HASH")
        );
        assert_eq!(env("api_key").as_deref(), Some("SWITCHBOARD_API_KEY"));
        assert_eq!(env("token").as_deref(), Some("SWITCHBOARD_TOKEN"));
        assert_eq!(
            env("oauth_token_url").as_deref(),
            Some("SWITCHBOARD_OAUTH_TOKEN_URL")
        );
    }
}
