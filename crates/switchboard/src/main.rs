//! `switchboard`: serve A2A agents and talk to any A2A agent from the terminal.
//!
//! This crate is glue: flags, config and output. The protocol lives in
//! `switchboard-protocol`, the engine in `switchboard-core`, the bindings in
//! `switchboard-server` and the client in `switchboard-client`.
//!
//! Exit codes: 0 success; 1 the task failed, was rejected or canceled;
//! 2 usage, connection or protocol error.

use switchboard::{client, push_cmd, serve};

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// An A2A-native agent server and client.
#[derive(Debug, Parser)]
#[command(name = "switchboard", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve an agent over A2A (JSON-RPC + SSE), storing tasks in SQLite by default.
    Serve(serve::ServeArgs),
    /// Push notification delivery: list and requeue dead letters, rotate and retire signing keys.
    #[command(subcommand)]
    Push(push_cmd::PushCommand),
    #[command(flatten)]
    Client(client::ClientCommand),
}

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
    let cli = Cli::parse();
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
            Command::Serve(args) => {
                init_logging();
                match serve::run(args).await {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("switchboard serve: {e:#}");
                        ExitCode::from(2)
                    }
                }
            }
            Command::Push(cmd) => {
                ExitCode::from(push_cmd::run_with(cmd, std::io::stdout(), std::io::stderr()).await)
            }
            Command::Client(cmd) => client::run(cmd).await,
        }
    })
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWITCHBOARD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
