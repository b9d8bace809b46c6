//! What the fronts in front of remote agents (`bridge`, `console`, `mcp
//! --listen`) share on the command line: the agent and the config file
//! ([`FrontTarget`]), `serve`'s caller, connection and log flags
//! ([`FrontServing`]) read from the front's own `SWITCHBOARD_<FRONT>_*`
//! variables ([`own_env`]), and the port: bound first, then who may call
//! decided for the address it got, by `serve`'s authentication flags
//! ([`crate::auth_args`]): API keys or JWTs when configured, else everyone
//! — but only on a loopback address, unless `--allow-anonymous`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use switchboard_server::{Anyone, Authenticator, Front};

use crate::auth_args::{self, AuthArgs};
use crate::config;
use crate::limits_args::ConnectionArgs;
use crate::log_args::LogArgs;

/// The agent a front stands in front of, and the front's config file.
#[derive(Debug, Clone, clap::Args)]
pub struct FrontTarget {
    /// TOML config file: keys are the flags with `_` for `-` (optionally
    /// in a section named after the command); flags and variables win
    /// over it.
    #[arg(long, env = "SWITCHBOARD_FRONT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The A2A agent: its base URL or its card's URL. Required (as a flag,
    /// the variable or the file's key).
    #[arg(long, env = "SWITCHBOARD_FRONT_AGENT", value_name = "URL")]
    pub agent: Option<String>,
}

/// `serve`'s flags, as a front serves its callers with them.
#[derive(Debug, Clone, clap::Args)]
pub struct FrontServing {
    /// Who may call the front (see [`crate::auth_args`]).
    #[command(flatten)]
    pub auth: AuthArgs,
    /// What one client may hold of the front's connections.
    #[command(flatten)]
    pub connections: ConnectionArgs,
    /// How and what to log, on stderr (see [`crate::log_args`]).
    #[command(flatten)]
    pub logging: LogArgs,
}

/// Gives every argument of `cmd` that reads a variable, except those
/// `keep(id)` names, the front's own: `SWITCHBOARD_<FRONT>_` and its id in
/// capitals (the flags shared with `serve` are declared with `serve`'s).
pub fn own_env(cmd: clap::Command, front: &str, keep: impl Fn(&str) -> bool) -> clap::Command {
    cmd.mut_args(|arg| {
        let id = arg.get_id().as_str().to_ascii_uppercase();
        if arg.get_env().is_some() && !keep(arg.get_id().as_str()) {
            arg.env(format!("SWITCHBOARD_{front}_{id}"))
        } else {
            arg
        }
    })
}

/// Parses `argv` (the tokens after the front's name) for `cmd`, with the
/// environment and the config file layered under it (see [`crate::config`]).
pub fn parse_layered<T: clap::FromArgMatches>(
    cmd: &clap::Command,
    argv: &[OsString],
) -> anyhow::Result<(T, config::Layered)> {
    let layered = config::parse_layered(cmd, argv, "config")?;
    let args = T::from_arg_matches(&layered.matches).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((args, layered))
}

/// Binds `listen` and picks the authenticator `auth` asks for there.
pub async fn bind(
    listen: &str,
    auth: &AuthArgs,
) -> anyhow::Result<(Front, Arc<dyn Authenticator>)> {
    let front = Front::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let authenticator: Arc<dyn Authenticator> =
        match auth_args::caller_schemes(auth, front.local_addr().ip())? {
            Some(schemes) => Arc::new(schemes),
            None => Arc::new(Anyone),
        };
    Ok((front, authenticator))
}

/// Serves `router` on `front` under the connection limits `connections`
/// asks for, until Ctrl-C or SIGTERM.
pub async fn serve(
    front: Front,
    router: Router,
    connections: &ConnectionArgs,
) -> anyhow::Result<()> {
    front.serve(router, connections.connection_limits()).await?;
    Ok(())
}

/// A command line's tokens, as the fronts' `resolve` takes them.
#[cfg(test)]
pub(crate) fn argv(args: &[&str]) -> Vec<std::ffi::OsString> {
    args.iter().map(std::ffi::OsString::from).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_agents_credentials_stay_out_of_help() {
        let commands = [
            crate::bridge_cmd::BridgeArgs::command(),
            #[cfg(feature = "console")]
            crate::console_cmd::ConsoleArgs::command(),
        ];
        for cmd in commands {
            for id in ["agent_bearer_token", "agent_header"] {
                let arg = cmd.get_arguments().find(|a| a.get_id() == id);
                assert!(
                    arg.is_some_and(clap::Arg::is_hide_env_values_set),
                    "{} {id}",
                    cmd.get_name()
                );
            }
        }
    }
}
