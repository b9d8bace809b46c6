//! `switchboard`: serve A2A agents and talk to any A2A agent from the terminal.
//!
//! This crate is glue: flags, config and output. The protocol lives in
//! `switchboard-protocol`, the engine in `switchboard-core`, the bindings in
//! `switchboard-server` and the client in `switchboard-client`.
//!
//! Exit codes: 0 success; 1 the task failed, was rejected or canceled;
//! 2 usage, connection or protocol error.

use switchboard::{auth_args, bridge_cmd, client, mcp_cmd, push_cmd, serve};

use std::ffi::OsString;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};

/// An A2A-native agent server and client.
#[derive(Debug, clap::Parser)]
#[command(name = "switchboard", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve an agent over A2A (JSON-RPC + SSE), storing tasks in SQLite by default.
    Serve(Box<serve::ServeArgs>),
    /// Serve an AG-UI endpoint in front of an A2A agent: any AG-UI frontend drives it.
    Bridge(Box<bridge_cmd::BridgeArgs>),
    /// Serve the web console in front of an A2A agent: its card, chat,
    /// tasks and wire frames in a browser.
    #[cfg(feature = "console")]
    Console(Box<switchboard::console_cmd::ConsoleArgs>),
    /// Serve A2A agents as MCP tools (stdio, or streamable HTTP with --listen).
    Mcp(Box<mcp_cmd::McpArgs>),
    /// Configuration: `config check` validates and prints what `serve` would use.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Push notification delivery: list and requeue dead letters, rotate and retire signing keys.
    #[command(subcommand)]
    Push(push_cmd::PushCommand),
    /// API keys for `serve --api-key-hash`: make one, or hash one read from stdin.
    #[command(subcommand)]
    Auth(auth_args::AuthCommand),
    #[command(flatten)]
    Client(Box<client::ClientCommand>),
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Validate the configuration (file, `SWITCHBOARD_*` variables, flags)
    /// and print the effective settings as TOML, secrets masked, each with
    /// where it came from. Takes every `serve` flag.
    Check(CheckArgs),
}

/// `config check`'s own flag, then every `serve` flag.
#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// Print one JSON object instead of TOML: each setting's key maps to
    /// `{"value", "source", "env"}`.
    #[arg(long = JSON_FLAG_NAME)]
    json: bool,
    #[command(flatten)]
    serve: Box<serve::ServeArgs>,
}

/// `--json`, which `config check` takes out of its arguments before they are
/// parsed again as `serve`'s (which has no such flag).
const JSON_FLAG_NAME: &str = "json";

/// A long-running server frees and reallocates millions of small task
/// objects of many sizes; glibc's malloc keeps the holes this leaves in its
/// per-thread arenas, so RSS crept up by 3-10 % between 100k and 1M tasks
/// with a constant number of live tasks (`bench/million.sh`). jemalloc's
/// size classes and page purging keep it flat.
///
/// Freed pages go back to the OS from jemalloc's background thread after
/// about a second instead of jemalloc's default ten, so RSS follows what is
/// live: `background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0`,
/// compiled in through `JEMALLOC_SYS_WITH_MALLOC_CONF` in
/// `.cargo/config.toml`. Operators can override it at run time with the
/// `_RJEM_MALLOC_CONF` environment variable.
#[cfg(all(feature = "jemalloc", not(target_env = "msvc")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    // `bridge` reads its own variables for the flags it shares with `serve`.
    let command = Cli::command()
        .mut_subcommand("bridge", bridge_cmd::bridge_env)
        .mut_subcommand("mcp", mcp_cmd::mcp_env);
    #[cfg(feature = "console")]
    let command = command.mut_subcommand("console", switchboard::console_cmd::console_env);
    let cli = Cli::from_arg_matches(&command.get_matches_from(&argv)).unwrap_or_else(|e| e.exit());
    // One rustls crypto provider in the process, ring: our own TLS configs
    // name it explicitly, and this default serves any library that asks for
    // the process default. `Err` only means one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The tokens after the subcommand: parsed again with the config file
    // layered under them (`switchboard::config`).
    let after = |words: usize| argv.get(1 + words..).unwrap_or_default().to_vec();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("switchboard: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async move {
        match cli.command {
            Command::Serve(_) => {
                let result = serve_main(&after(1)).await;
                switchboard_telemetry::logging::flush();
                exit_code("serve", result)
            }
            Command::Bridge(_) => {
                let result = bridge_main(&after(1)).await;
                switchboard_telemetry::logging::flush();
                exit_code("bridge", result)
            }
            #[cfg(feature = "console")]
            Command::Console(_) => {
                let result = console_main(&after(1)).await;
                switchboard_telemetry::logging::flush();
                exit_code("console", result)
            }
            Command::Mcp(_) => {
                let result = mcp_main(&after(1)).await;
                switchboard_telemetry::logging::flush();
                exit_code("mcp", result)
            }
            Command::Config(ConfigCommand::Check(args)) => {
                exit_code("config check", config_check(args.json, after(2)))
            }
            Command::Push(cmd) => {
                ExitCode::from(push_cmd::run_with(cmd, std::io::stdout(), std::io::stderr()).await)
            }
            Command::Auth(cmd) => ExitCode::from(auth_args::run(
                cmd,
                std::io::stdin().lock(),
                std::io::stdout(),
            )),
            Command::Client(cmd) => client::run(*cmd).await,
        }
    })
}

/// The exit code of a command that either did its work or failed as a
/// whole (bad settings, a server that could not start or stopped on an
/// error): 2 after `switchboard <command>: <error>` on stderr.
fn exit_code(command: &str, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("switchboard {command}: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// `serve`: its settings from `argv` (the tokens after `serve`), the trace
/// exporter when the OTEL_* variables ask for one, the logs, the server.
async fn serve_main(argv: &[OsString]) -> anyhow::Result<()> {
    let cfg = serve::ServeArgs::resolve(argv)?;
    #[cfg(feature = "otel")]
    let (otel, layer) =
        match switchboard_telemetry::otel::OtelConfig::from_env().map_err(anyhow::Error::msg)? {
            None => (None, None),
            Some(otel_cfg) => {
                let (otel, layer) = switchboard_telemetry::otel::init(&otel_cfg)
                    .map_err(|e| anyhow::Error::new(e).context("starting the trace exporter"))?;
                (Some(otel), Some(layer))
            }
        };
    #[cfg(not(feature = "otel"))]
    let layer = None;
    cfg.logging.init(layer);
    let result = serve::run(cfg).await;
    // Export the spans still batched, whether the server stopped or failed.
    #[cfg(feature = "otel")]
    if let Some(otel) = otel {
        otel.shutdown().await;
    }
    result
}

/// `console`: its settings from `argv` (the tokens after `console`), the
/// logs, the console.
#[cfg(feature = "console")]
async fn console_main(argv: &[OsString]) -> anyhow::Result<()> {
    let args = switchboard::console_cmd::ConsoleArgs::resolve(argv)?;
    args.serving.logging.init(None);
    switchboard::console_cmd::run(args).await
}

/// `bridge`: its settings from `argv` (the tokens after `bridge`), the
/// logs, the bridge.
async fn bridge_main(argv: &[OsString]) -> anyhow::Result<()> {
    let args = bridge_cmd::BridgeArgs::resolve(argv)?;
    args.serving.logging.init(None);
    bridge_cmd::run(args).await
}

/// `mcp`: its settings from `argv` (the tokens after `mcp`), the logs (on
/// stderr: over stdio, stdout is MCP's), the server.
async fn mcp_main(argv: &[OsString]) -> anyhow::Result<()> {
    let args = mcp_cmd::McpArgs::resolve(argv)?;
    args.serving.logging.init(None);
    mcp_cmd::run(args).await
}

/// `config check`: the effective `serve` settings, as TOML or (`json`) one
/// JSON object, on stdout. `argv` holds `serve`'s flags and `--json`,
/// which is `config check`'s own and taken out first.
fn config_check(json: bool, argv: Vec<OsString>) -> anyhow::Result<()> {
    let flag = format!("--{JSON_FLAG_NAME}");
    let serve_argv: Vec<OsString> = argv.into_iter().filter(|a| *a != *flag).collect();
    let text = if json {
        serve::ServeArgs::check_json(&serve_argv).map(|v| format!("{v}\n"))?
    } else {
        serve::ServeArgs::check(&serve_argv)?
    };
    print!("{text}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        super::Cli::command().debug_assert();
    }

    /// Key ids are base64url thumbprints; one in 32 starts with `-`
    /// (found by CI: `retire-key -P…` was read as an unknown flag).
    #[test]
    fn a_kid_starting_with_a_hyphen_is_a_kid() {
        use clap::Parser;
        let cli = super::Cli::try_parse_from([
            "switchboard",
            "push",
            "retire-key",
            "-PfWq3",
            "--push-key-file",
            "keys.json",
        ])
        .map_err(|e| e.to_string());
        let debug = format!("{cli:?}");
        assert!(cli.is_ok(), "{debug}");
        assert!(debug.contains("\"-PfWq3\""), "{debug}");
        assert!(debug.contains("keys.json"), "{debug}");
    }

    /// Every command that prints a result (each leaf of the command tree
    /// but `serve`, `bridge`, `console` and `mcp`, which run servers) takes `--json`.
    #[test]
    fn every_leaf_command_takes_json() {
        fn leaves(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
            for sub in cmd.get_subcommands() {
                leaves(sub, format!("{path} {}", sub.get_name()), out);
            }
            if !cmd.has_subcommands() {
                out.push((path, cmd.clone()));
            }
        }
        let mut all = Vec::new();
        leaves(&super::Cli::command(), "switchboard".into(), &mut all);
        let mut checked = Vec::new();
        for (path, cmd) in &all {
            if [
                "switchboard serve",
                "switchboard bridge",
                "switchboard console",
                "switchboard mcp",
            ]
            .contains(&path.as_str())
            {
                continue;
            }
            let json = cmd.get_arguments().find(|a| a.get_id() == "json");
            assert!(json.is_some(), "`{path}` has no --json");
            assert_eq!(
                json.and_then(|a| a.get_long()),
                Some("json"),
                "`{path}`: the flag is spelled --json"
            );
            checked.push(path.as_str());
        }
        // The walk reached the nested commands too.
        for must in [
            "switchboard card",
            "switchboard config check",
            "switchboard push dead-letters",
            "switchboard push-config create",
            "switchboard auth new-key",
        ] {
            assert!(checked.contains(&must), "{must} not walked: {checked:?}");
        }
    }
}
