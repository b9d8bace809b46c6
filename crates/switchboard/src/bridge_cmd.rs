//! `switchboard bridge`: any AG-UI frontend in front of any A2A agent.
//!
//! The process fetches the agent's card once at start, builds one
//! `A2AClient` for the best interface the card offers (or the bindings
//! `--prefer-binding` names), and serves the bridge's AG-UI endpoint
//! (`switchboard_bridge::endpoint`, `POST /agui` by default) over it: every
//! run is a `RemoteBackend` call sequence against that agent
//! ([`switchboard_bridge::remote`] does all that; this module turns the
//! flags into its [`RemoteBridgeConfig`]). The
//! bridge's own behaviour (run modes, history, `/view` state, HITL, Engram)
//! is the library's; this module is the flags, the callers and the socket.
//!
//! CopilotKit's runtime routes are served beside it, under
//! `--copilotkit-path` (`/api/copilotkit`), over the same backend and
//! behind the same caller authentication (`switchboard_bridge::authenticated`;
//! `switchboard_bridge::copilotkit`): a CopilotKit app points its
//! `runtimeUrl` there.
//!
//! **Settings.** Each is a flag, a `SWITCHBOARD_BRIDGE_*` variable and a
//! key of the `--config` TOML file, layered as `serve`'s are
//! ([`crate::config`]: flag > variable > file > default; the file's keys
//! may sit in a `[bridge]` section). The caller-authentication flags
//! ([`crate::auth_args`]), the connection limits
//! ([`crate::limits_args::ConnectionArgs`]) and the log flags
//! ([`crate::log_args::LogArgs`]) are `serve`'s, read from
//! `SWITCHBOARD_BRIDGE_<FLAG>` here so one environment can configure a
//! server and the bridge in front of it separately ([`BridgeArgs::command`]
//! renames their variables).
//!
//! **Callers.** The bridge lets in whom `serve` would: API keys or JWTs
//! when configured; without them everyone, but only on a loopback address
//! (else it refuses to start unless `--allow-anonymous`). A refused caller
//! gets `401`/`403` before its body is read, and each caller sees only its
//! own tasks and contexts, though the agent sees every call as the
//! bridge's (`switchboard_bridge::remote_bridge` and `owner` say how). The
//! connections are `serve`'s ([`switchboard_server::serve_router`]): header
//! read and idle timeouts, body rate, connection caps.
//!
//! **Start and stop.** One line on stdout once it accepts connections:
//! `switchboard bridge listening on http://<addr><path> (agent: <name> at
//! <endpoint>, <binding>)`. A card that cannot be fetched is an error
//! before anything listens (exit code 2). Ctrl-C or SIGTERM stop accepting;
//! runs in flight get [`switchboard_server::SHUTDOWN_GRACE`] to end.

use std::ffi::OsString;
use std::time::Duration;

use anyhow::Context;
use switchboard_bridge::{
    BridgeConfig, EndpointConfig, RemoteBridge, RemoteBridgeConfig, RunConfig,
};

use crate::client::FrontAgentArgs;
use crate::config;
use crate::front::{FrontServing, FrontTarget};

/// The settings of `switchboard bridge` (see the module docs).
#[derive(Debug, Clone, clap::Args)]
pub struct BridgeArgs {
    /// The agent to bridge to and the config file (its keys optionally in
    /// a `[bridge]` section).
    #[command(flatten)]
    pub target: FrontTarget,
    /// Address and port to listen on (port 0 picks a free one).
    #[arg(
        long,
        env = "SWITCHBOARD_BRIDGE_LISTEN",
        default_value = "127.0.0.1:8090"
    )]
    pub listen: String,
    /// The path of the AG-UI endpoint.
    #[arg(long, env = "SWITCHBOARD_BRIDGE_PATH", default_value = "/agui")]
    pub path: String,
    /// The base path of CopilotKit's runtime routes (a CopilotKit app's
    /// `runtimeUrl`: `<base>/info`, `<base>/agent/<id>/run`, `…/connect`,
    /// `…/stop/<threadId>`, and the single-route `POST <base>`).
    #[arg(
        long,
        env = "SWITCHBOARD_BRIDGE_COPILOTKIT_PATH",
        default_value = switchboard_bridge::copilotkit::DEFAULT_BASE_PATH
    )]
    pub copilotkit_path: String,
    /// The agent id CopilotKit's routes serve the agent under; default:
    /// the name on the agent's card.
    #[arg(
        long,
        env = "SWITCHBOARD_BRIDGE_COPILOTKIT_AGENT_ID",
        value_name = "ID"
    )]
    pub copilotkit_agent_id: Option<String>,
    /// Forward AG-UI `system` and `developer` messages to the agent (as
    /// user content tagged with their role); dropped by default.
    #[arg(long, env = "SWITCHBOARD_BRIDGE_FORWARD_SYSTEM_MESSAGES")]
    pub forward_system_messages: bool,
    /// Route messages carrying the Engram extension (`urn:agui:engram:v1`)
    /// to the agent's config lane, and project its config changes into
    /// `/view/config`. Off: they are ordinary messages.
    #[arg(long, env = "SWITCHBOARD_BRIDGE_ENGRAM")]
    pub engram: bool,
    /// Forward the UI's own state (the AG-UI `state` but the bridge's
    /// `view`) to the agent in `metadata.agui.state`, for shared state.
    /// Off: the state stays in the UI (ADR 0001).
    #[arg(long, env = "SWITCHBOARD_BRIDGE_FORWARD_STATE")]
    pub forward_state: bool,
    /// Cancel a run's task (CancelTask) when its client goes away before
    /// the run ended. Off: the task keeps running, and a later run
    /// reconnects to it by its taskId.
    #[arg(long, env = "SWITCHBOARD_BRIDGE_CANCEL_ON_DISCONNECT")]
    pub cancel_on_disconnect: bool,
    /// The most bytes of earlier conversation a message into a new context
    /// carries (metadata.agui.history, with the input's context and tools):
    /// the most recent messages that fit go, and the agent is told how many
    /// were left out. Keep it below the agent's metadata limit.
    #[arg(
        long,
        env = "SWITCHBOARD_BRIDGE_MAX_HISTORY_BYTES",
        default_value_t = switchboard_bridge::options::DEFAULT_HISTORY_BYTES
    )]
    pub max_history_bytes: usize,
    /// How the bridge reaches the agent (`--agent-bearer-token`,
    /// `--agent-header`, `--prefer-binding`, `--prefer-version`).
    #[command(flatten)]
    pub agent_access: FrontAgentArgs,
    /// The longest the agent may stay silent in a run (an answer, or the
    /// next event of a stream), in seconds; past it the run ends with
    /// RUN_ERROR and the task is left as it is.
    #[arg(
        long,
        env = "SWITCHBOARD_BRIDGE_AGENT_TIMEOUT_SECS",
        default_value_t = 300
    )]
    pub agent_timeout_secs: u64,
    /// Largest RunAgentInput accepted, in bytes.
    #[arg(long, env = "SWITCHBOARD_BRIDGE_MAX_BODY_BYTES", default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// Seconds an SSE stream may stay quiet before a keep-alive comment.
    #[arg(long, env = "SWITCHBOARD_BRIDGE_KEEP_ALIVE_SECS", default_value_t = 15)]
    pub keep_alive_secs: u64,
    /// Who may call the bridge, its connection limits and its logs
    /// (`serve`'s flags).
    #[command(flatten)]
    pub serving: FrontServing,
}

/// Gives every argument of `cmd` that reads a variable the bridge's own,
/// `SWITCHBOARD_BRIDGE_<ID>` ([`crate::front::own_env`]).
pub fn bridge_env(cmd: clap::Command) -> clap::Command {
    crate::front::own_env(cmd, "BRIDGE", |_| false)
}

impl BridgeArgs {
    /// The `bridge` command with every setting, each reading its
    /// `SWITCHBOARD_BRIDGE_*` variable.
    pub fn command() -> clap::Command {
        bridge_env(<Self as clap::Args>::augment_args(clap::Command::new(
            "bridge",
        )))
    }

    /// Parses `argv` (the tokens after `bridge`) with the environment and
    /// the config file layered under it (see [`crate::config`]).
    pub fn layered(argv: &[OsString]) -> anyhow::Result<(BridgeArgs, config::Layered)> {
        let (args, layered) = crate::front::parse_layered::<Self>(&Self::command(), argv)?;
        args.validate()?;
        Ok((args, layered))
    }

    /// Resolves the settings from `argv`; see [`BridgeArgs::layered`].
    pub fn resolve(argv: &[OsString]) -> anyhow::Result<BridgeArgs> {
        Ok(Self::layered(argv)?.0)
    }

    /// What clap's parsers cannot check (the routes:
    /// [`RemoteBridgeConfig::check`]).
    pub fn validate(&self) -> anyhow::Result<()> {
        self.remote_config()?.check()?;
        if self.agent_timeout_secs == 0 {
            anyhow::bail!("agent_timeout_secs must be at least 1");
        }
        Ok(())
    }

    /// The agent's URL.
    pub fn agent(&self) -> anyhow::Result<&str> {
        self.target.agent.as_deref().context(
            "no agent to bridge to: give its URL with --agent, SWITCHBOARD_BRIDGE_AGENT or `agent` in the config file",
        )
    }

    /// How the endpoint serves runs.
    pub fn endpoint_config(&self) -> EndpointConfig {
        EndpointConfig {
            path: self.path.clone(),
            body_limit: self.max_body_bytes,
            keep_alive: Duration::from_secs(self.keep_alive_secs.max(1)),
            run: RunConfig {
                bridge: BridgeConfig {
                    forward_system_messages: self.forward_system_messages,
                    engram: self.engram,
                    forward_state: self.forward_state,
                    cancel_on_disconnect: self.cancel_on_disconnect,
                    max_history_bytes: self.max_history_bytes,
                },
                agent_timeout: Duration::from_secs(self.agent_timeout_secs),
            },
        }
    }

    /// What the library serves: the agent, the client for it and the
    /// routes' settings.
    pub fn remote_config(&self) -> anyhow::Result<RemoteBridgeConfig> {
        let mut config = RemoteBridgeConfig::new(self.agent()?);
        config.client = self.agent_access.options().builder();
        config.endpoint = self.endpoint_config();
        config.copilotkit_path = self.copilotkit_path.clone();
        config.copilotkit_agent_id = self.copilotkit_agent_id.clone();
        Ok(config)
    }
}

/// Runs the bridge until Ctrl-C or SIGTERM (see the module docs).
pub async fn run(args: BridgeArgs) -> anyhow::Result<()> {
    let agent = args.agent()?;
    let bridge = RemoteBridge::connect(args.remote_config()?)
        .await
        .with_context(|| format!("cannot use the agent at {agent}"))?;
    let (front, authenticator) = crate::front::bind(&args.listen, &args.serving.auth).await?;
    let addr = front.local_addr();
    let client = bridge.client();
    let name = client.card().map(|c| c.name.clone()).unwrap_or_default();
    let endpoint = client.endpoint();
    let binding = &client.interface().protocol_binding;
    tracing::info!(
        %addr,
        agent = %name,
        %endpoint,
        %binding,
        copilotkit = %args.copilotkit_path,
        "bridging"
    );
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard bridge listening on http://{addr}{} (agent: {name} at {endpoint}, {binding})",
        args.path
    );
    let connections = &args.serving.connections;
    crate::front::serve(front, bridge.router(authenticator), connections).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::front::argv;

    #[test]
    fn defaults_and_flags() {
        let args = BridgeArgs::resolve(&argv(&["--agent", "http://127.0.0.1:1"])).unwrap();
        assert_eq!(args.listen, "127.0.0.1:8090");
        assert_eq!(args.path, "/agui");
        assert_eq!(args.copilotkit_path, "/api/copilotkit");
        assert_eq!(args.copilotkit_agent_id, None);
        let config = args.endpoint_config();
        assert_eq!(config.body_limit, 1 << 20);
        assert_eq!(config.keep_alive, Duration::from_secs(15));
        assert_eq!(config.run.agent_timeout, Duration::from_secs(300));
        assert!(!config.run.bridge.engram && !config.run.bridge.forward_system_messages);
        assert!(!config.run.bridge.forward_state);
        let args = BridgeArgs::resolve(&argv(&[
            "--agent=http://a",
            "--engram",
            "--prefer-binding=http+json",
            "--prefer-binding",
            "grpc",
            "--agent-header",
            "X-Team: blue",
        ]))
        .unwrap();
        assert!(args.endpoint_config().run.bridge.engram);
        assert_eq!(args.agent_access.prefer_binding, ["HTTP+JSON", "GRPC"]);
        assert_eq!(
            args.agent_access.agent_header,
            [("X-Team".into(), "blue".into())]
        );
        for bad in [
            &["--agent=a", "--prefer-binding=SOAP"][..],
            &["--agent=a", "--agent-header=novalue"],
            &["--agent=a", "--path=agui"],
            &["--agent=a", "--copilotkit-path=api"],
            &["--agent=a", "--copilotkit-path=/agui"],
            &[],
        ] {
            assert!(BridgeArgs::resolve(&argv(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_file_layers_under_the_flags_in_a_bridge_section() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        std::fs::write(
            &path,
            "[bridge]\nagent = \"http://agent\"\npath = \"/ui\"\nmax_connections_per_ip = 3\nagent_headers = [\"A: 1\"]\n",
        )
        .unwrap();
        let file = path.to_str().unwrap();
        let args = BridgeArgs::resolve(&argv(&["--config", file])).unwrap();
        assert_eq!(
            (args.target.agent.as_deref(), args.path.as_str()),
            (Some("http://agent"), "/ui")
        );
        assert_eq!(args.serving.connections.max_connections_per_ip, Some(3));
        let args = BridgeArgs::resolve(&argv(&[
            "--config",
            file,
            "--path=/x",
            "--agent-header=B: 2",
        ]))
        .unwrap();
        assert_eq!(args.path, "/x", "the flag wins");
        assert_eq!(
            args.agent_access.agent_header.len(),
            2,
            "flags add to the file"
        );
    }
}
