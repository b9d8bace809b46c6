//! `switchboard console`: the web console in front of any A2A agent.
//!
//! The console ([`switchboard_console::RemoteConsole`]) is served on its
//! own port; its calls reach the agent through [`switchboard_client`],
//! server-side, so a gRPC-only or A2A 0.3-only agent works from a browser. The agent's
//! credentials (`--agent-bearer-token`, `--agent-header`) are the
//! console's own and never reach the page.
//!
//! **Settings.** Each is a flag, a `SWITCHBOARD_CONSOLE_*` variable and a
//! key of the `--config` TOML file (optionally in a `[console]` section),
//! layered as `serve`'s are ([`crate::config`]). The caller-authentication,
//! connection-limit and log flags are `serve`'s, read from
//! `SWITCHBOARD_CONSOLE_<FLAG>` here ([`ConsoleArgs::command`]).
//!
//! **Callers.** The console lets in whom `serve` would: API keys or JWTs
//! when configured; without them everyone, but only on a loopback address
//! (else it refuses to start unless `--allow-anonymous`). Every caller acts
//! with the console's credentials for the agent, so a console shared by
//! several people shows each of them everyone's tasks: run one per person,
//! on loopback, as the default does.
//!
//! **Start and stop.** One line on stdout once it accepts connections:
//! `switchboard console listening on http://<addr>/console/ (agent: <name>
//! at <endpoint>, <binding> <version>)`. A card that cannot be fetched or
//! used is an error before anything listens (exit code 2). Ctrl-C or
//! SIGTERM stop it.

use std::ffi::OsString;

use anyhow::Context;
use switchboard_client::ClientBuilder;
use switchboard_console::{ConsoleConfig, RemoteConsole};

use crate::client::FrontAgentArgs;
use crate::front::{FrontServing, FrontTarget};

/// The settings of `switchboard console` (see the module docs).
#[derive(Debug, Clone, clap::Args)]
pub struct ConsoleArgs {
    /// The agent and the config file (its keys optionally in a
    /// `[console]` section).
    #[command(flatten)]
    pub target: FrontTarget,
    /// Address and port to listen on (port 0 picks a free one).
    #[arg(
        long,
        env = "SWITCHBOARD_CONSOLE_LISTEN",
        default_value = "127.0.0.1:8091"
    )]
    pub listen: String,
    /// How the console reaches the agent (`--agent-bearer-token`,
    /// `--agent-header`, `--prefer-binding`, `--prefer-version`).
    #[command(flatten)]
    pub agent_access: FrontAgentArgs,
    /// Who may use the console, its connection limits and its logs
    /// (`serve`'s flags).
    #[command(flatten)]
    pub serving: FrontServing,
}

/// Gives every argument of `cmd` that reads a variable the console's own,
/// `SWITCHBOARD_CONSOLE_<ID>` ([`crate::front::own_env`]).
pub fn console_env(cmd: clap::Command) -> clap::Command {
    crate::front::own_env(cmd, "CONSOLE", |_| false)
}

impl ConsoleArgs {
    /// The `console` command with every setting, each reading its
    /// `SWITCHBOARD_CONSOLE_*` variable.
    pub fn command() -> clap::Command {
        console_env(<Self as clap::Args>::augment_args(clap::Command::new(
            "console",
        )))
    }

    /// Parses `argv` (the tokens after `console`) with the environment and
    /// the config file layered under it (see [`crate::config`]).
    pub fn resolve(argv: &[OsString]) -> anyhow::Result<ConsoleArgs> {
        let (args, _) = crate::front::parse_layered::<Self>(&Self::command(), argv)?;
        args.agent()?;
        Ok(args)
    }

    /// The agent's URL.
    pub fn agent(&self) -> anyhow::Result<&str> {
        self.target.agent.as_deref().context(
            "no agent: give its URL with --agent, SWITCHBOARD_CONSOLE_AGENT or `agent` in the config file",
        )
    }

    /// The client settings every console call starts from.
    pub fn client(&self) -> ClientBuilder {
        self.agent_access.options().builder()
    }
}

/// Runs the console until Ctrl-C or SIGTERM (see the module docs).
pub async fn run(args: ConsoleArgs) -> anyhow::Result<()> {
    let agent = args.agent()?.to_owned();
    // The agent must be usable before anything listens.
    let console = RemoteConsole::connect(ConsoleConfig::new(&agent, args.client()))
        .await
        .with_context(|| format!("cannot use the agent at {agent}"))?;
    let (front, authenticator) = crate::front::bind(&args.listen, &args.serving.auth).await?;
    let addr = front.local_addr();
    let client = console.client();
    let name = client.card().map(|c| c.name.clone()).unwrap_or_default();
    let interface = client.interface();
    tracing::info!(%addr, agent = %name, endpoint = %client.endpoint(), "console");
    // One line on stdout that scripts can wait for.
    println!(
        "switchboard console listening on http://{addr}{}/ (agent: {name} at {}, {} {})",
        switchboard_console::BASE_PATH,
        client.endpoint(),
        interface.protocol_binding,
        interface.protocol_version,
    );
    let connections = &args.serving.connections;
    crate::front::serve(front, console.router(authenticator), connections).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::front::argv;

    #[test]
    fn defaults_flags_and_the_file() {
        let args = ConsoleArgs::resolve(&argv(&["--agent", "http://127.0.0.1:1"])).unwrap();
        assert_eq!(args.listen, "127.0.0.1:8091");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.toml");
        std::fs::write(
            &path,
            "[console]\nagent = \"http://agent\"\nlisten = \"127.0.0.1:0\"\nprefer_binding = [\"GRPC\"]\n",
        )
        .unwrap();
        let args = ConsoleArgs::resolve(&argv(&["--config", path.to_str().unwrap()])).unwrap();
        assert_eq!(args.target.agent.as_deref(), Some("http://agent"));
        assert_eq!(args.agent_access.prefer_binding, ["GRPC"]);
        for bad in [
            &[][..],
            &["--agent=a", "--prefer-binding=SOAP"],
            &["--agent=a", "--agent-header=novalue"],
            &["--agent=a", "--prefer-version=2.0"],
        ] {
            assert!(ConsoleArgs::resolve(&argv(bad)).is_err(), "{bad:?}");
        }
    }
}
