//! `switchboard push …`: look at and act on push notification delivery,
//! straight in the store a server (or several replicas) runs on.
//!
//! A notification that failed on every attempt up to the retry limit is a
//! **dead letter**: the worker logs it at `warn` and keeps it in the store
//! with its payload, attempt count and last error, instead of dropping it.
//! These commands make that state visible and reversible:
//!
//! - `switchboard push dead-letters --store URL [--tenant T] [--task ID]
//!   [--json] [--limit N]` lists them, oldest first;
//! - `switchboard push retry --store URL ID… | --all` puts them back in the
//!   queue (pending, due now, attempts reset); a running server's worker
//!   then delivers them. A dead letter whose push config was deleted cannot
//!   be delivered and is left alone.
//!
//! The store URL is the one `serve` uses (`memory`, `sqlite://PATH`,
//! `postgres://…`). A SQLite file must already exist (a typo should not
//! create an empty database); `memory` is a fresh, empty store, accepted so
//! scripts can treat every store alike.
//!
//! Exit codes: 0 success; 1 some requested dead letter could not be
//! requeued; 2 usage or store error.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::json;
use switchboard_core::push::{OutboxItem, PushStore, Requeue};

use crate::serve::{Config, open_stores};

/// Where the dead letters are.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// The server's store: `memory`, `sqlite://PATH` or `postgres://…`.
    #[arg(long, env = "SWITCHBOARD_STORE")]
    pub store: String,
    /// The tenant whose dead letters to use (default: the default tenant).
    #[arg(long, default_value = "")]
    pub tenant: String,
}

/// `switchboard push` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum PushCommand {
    /// List dead letters: notifications given up on after the retry limit.
    DeadLetters {
        /// The store.
        #[command(flatten)]
        store: StoreArgs,
        /// Only this task's dead letters.
        #[arg(long)]
        task: Option<String>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// Show at most this many (oldest first).
        #[arg(long, default_value_t = 100, value_name = "N")]
        limit: usize,
    },
    /// Put dead letters back in the queue; a running server delivers them.
    Retry {
        /// The store.
        #[command(flatten)]
        store: StoreArgs,
        /// Ids of the dead letters (as listed by `push dead-letters`).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        ids: Vec<u64>,
        /// Requeue every dead letter of the tenant (of `--task`, if given).
        #[arg(long)]
        all: bool,
        /// With --all: only this task's dead letters.
        #[arg(long, requires = "all")]
        task: Option<String>,
    },
}

/// Runs a `push` subcommand; returns the exit code.
pub async fn run_with<O: Write, E: Write>(cmd: PushCommand, mut out: O, mut err: E) -> u8 {
    match run_inner(cmd, &mut out, &mut err).await {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "switchboard push: {e:#}");
            2
        }
    }
}

async fn run_inner(
    cmd: PushCommand,
    out: &mut impl Write,
    err: &mut impl Write,
) -> anyhow::Result<u8> {
    match cmd {
        PushCommand::DeadLetters {
            store,
            task,
            json,
            limit,
        } => {
            let push = open(&store.store).await?;
            let dead = push
                .list_dead_letters(&store.tenant, task.as_deref(), limit)
                .await
                .context("listing dead letters")?;
            if json {
                let list: Vec<_> = dead.iter().map(to_json).collect();
                writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
            } else if dead.is_empty() {
                writeln!(err, "no dead letters")?;
            } else {
                writeln!(
                    out,
                    "ID\tTASK\tCONFIG\tSEQ\tATTEMPTS\tQUEUED AT\tURL\tLAST ERROR"
                )?;
                for d in &dead {
                    writeln!(
                        out,
                        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                        d.id,
                        d.task_id,
                        d.config_id,
                        d.seq,
                        d.attempts,
                        d.created_at
                            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        if d.url.is_empty() {
                            "(config deleted)"
                        } else {
                            &d.url
                        },
                        d.last_error
                            .as_deref()
                            .unwrap_or("")
                            .replace(['\n', '\t'], " "),
                    )?;
                }
            }
            Ok(0)
        }
        PushCommand::Retry {
            store,
            ids,
            all,
            task,
        } => {
            let push = open(&store.store).await?;
            let ids = if all {
                push.list_dead_letters(&store.tenant, task.as_deref(), usize::MAX >> 1)
                    .await
                    .context("listing dead letters")?
                    .iter()
                    .map(|d| d.id)
                    .collect()
            } else {
                ids
            };
            let mut failed = 0_usize;
            let mut requeued = 0_usize;
            for id in ids {
                match push
                    .requeue_dead_letter(&store.tenant, id)
                    .await
                    .with_context(|| format!("requeueing dead letter {id}"))?
                {
                    Requeue::Requeued => {
                        requeued += 1;
                        writeln!(out, "requeued {id}")?;
                    }
                    Requeue::NotFound => {
                        failed += 1;
                        writeln!(err, "{id}: no such dead letter")?;
                    }
                    Requeue::ConfigDeleted => {
                        failed += 1;
                        writeln!(
                            err,
                            "{id}: its push config was deleted; left as a dead letter"
                        )?;
                    }
                }
            }
            if all && requeued == 0 && failed == 0 {
                writeln!(err, "no dead letters")?;
            }
            Ok(if failed > 0 { 1 } else { 0 })
        }
    }
}

/// Opens the push side of the store `url` names.
async fn open(url: &str) -> anyhow::Result<Arc<dyn PushStore>> {
    if let Some(rest) = url.strip_prefix("sqlite:") {
        let path = rest.trim_start_matches("//");
        let path = path.split('?').next().unwrap_or(path);
        if !path.contains(":memory:") && !std::path::Path::new(path).exists() {
            bail!("no SQLite database at {path}");
        }
    }
    let cfg = Config {
        store: url.to_string(),
        ..Config::default()
    };
    match open_stores(&cfg).await?.push {
        Some(push) => Ok(push),
        None => bail!("store {url:?} keeps no push notifications"),
    }
}

fn to_json(d: &OutboxItem) -> serde_json::Value {
    json!({
        "id": d.id,
        "tenant": d.tenant,
        "taskId": d.task_id,
        "configId": d.config_id,
        "seq": d.seq,
        "url": if d.url.is_empty() { None } else { Some(&d.url) },
        "attempts": d.attempts,
        "lastError": d.last_error,
        "queuedAt": d.created_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    })
}
