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
//! Signing keys (every notification carries an ES256 JWT whose `kid` is in
//! the server's `/.well-known/jwks.json`) are rotated in two steps:
//!
//! - `switchboard push rotate-key` makes a fresh key current; the old one
//!   stays published, so notifications signed with it (or still being
//!   retried) keep verifying;
//! - `switchboard push retire-key KID`, once those are past their token
//!   lifetime (5 minutes by default), removes the old key from the JWKS.
//!
//! Both act on the key set `serve` signs with: the key file (`--push-key-file
//! PATH`, or `--store sqlite://DB` for the file beside the database), or the
//! set the PostgreSQL replicas share (`--postgres-url URL`, or `--store
//! postgres://…`). A running server picks the change up without a restart:
//! from the file within a second (`switchboard_push::keys::spawn_file_reload`), from PostgreSQL
//! within `switchboard_push::shared_keys::REFRESH_INTERVAL`.
//!
//! The store URL is the one `serve` uses (`memory`, `sqlite://PATH`,
//! `postgres://…`). A SQLite file must already exist (a typo should not
//! create an empty database); `memory` is a fresh, empty store, accepted so
//! scripts can treat every store alike.
//!
//! What each command changes is `switchboard_push::admin`'s; this module
//! is the flags, the store or key set they name, and the output.
//!
//! Exit codes: 0 success; 1 some requested dead letter could not be
//! requeued, or the key cannot be retired (it is the current one, or no
//! published key has that `kid`); 2 usage or store error.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, bail};
use serde_json::json;
use switchboard_core::push::PushStore;
use switchboard_push::KeyError;
use switchboard_push::admin::{
    DeadLetters, KeyAdminError, Rotated, SigningKeys, dead_letter_json, not_requeued_reason,
    requeue_dead_letters, retire_key, rotate_key,
};

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

/// Which signing key set to change.
#[derive(Debug, Clone, clap::Args)]
pub struct KeyArgs {
    /// The server's store: `sqlite://PATH` means the key file beside the
    /// database, `postgres://…` the replicas' shared set.
    #[arg(long, env = "SWITCHBOARD_STORE")]
    pub store: Option<String>,
    /// The key file `serve` was started with (`--push-key-file`).
    #[arg(long, value_name = "PATH", conflicts_with = "postgres_url")]
    pub push_key_file: Option<std::path::PathBuf>,
    /// The PostgreSQL database whose shared key set to change.
    #[arg(long, value_name = "URL")]
    pub postgres_url: Option<String>,
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
        /// Print one JSON object at the end instead of a line per id:
        /// `{"requeued": [ID…], "failed": [{"id": ID, "reason": …}…]}`.
        #[arg(long)]
        json: bool,
    },
    /// Sign with a fresh key from now on; the old key stays in the JWKS.
    RotateKey {
        /// The key set.
        #[command(flatten)]
        keys: KeyArgs,
        /// Print one JSON object: `{"kid": NEW, "previous": OLD}`.
        #[arg(long)]
        json: bool,
    },
    /// Remove a rotated-out key from the JWKS (not the current one).
    RetireKey {
        /// The key's id, as in the JWKS. A thumbprint is base64url, so it
        /// can start with `-` and must still parse as the id, not a flag.
        #[arg(allow_hyphen_values = true)]
        kid: String,
        /// The key set.
        #[command(flatten)]
        keys: KeyArgs,
        /// Print one JSON object: `{"retired": KID}` (errors stay on stderr).
        #[arg(long)]
        json: bool,
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
                let list: Vec<_> = dead.iter().map(dead_letter_json).collect();
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
            json,
        } => {
            let push = open(&store.store).await?;
            let which = if all {
                DeadLetters::All {
                    task: task.as_deref(),
                }
            } else {
                DeadLetters::Ids(&ids)
            };
            let mut failed = Vec::new();
            let mut requeued = Vec::new();
            for (id, outcome) in requeue_dead_letters(push.as_ref(), &store.tenant, which).await? {
                if let Some(reason) = not_requeued_reason(outcome) {
                    writeln!(err, "{id}: {reason}")?;
                    failed.push(json!({ "id": id, "reason": reason }));
                } else {
                    requeued.push(id);
                    if !json {
                        writeln!(out, "requeued {id}")?;
                    }
                }
            }
            if json {
                writeln!(out, "{}", json!({ "requeued": requeued, "failed": failed }))?;
            } else if all && requeued.is_empty() && failed.is_empty() {
                writeln!(err, "no dead letters")?;
            }
            Ok(if failed.is_empty() { 0 } else { 1 })
        }
        PushCommand::RotateKey { keys, json } => {
            let Rotated { kid, previous: old } = rotate_key(&signing_keys(&keys).await?).await?;
            if json {
                writeln!(out, "{}", json!({ "kid": kid, "previous": old }))?;
            } else {
                writeln!(out, "{kid}")?;
            }
            writeln!(
                err,
                "signing with {kid} now; {old} stays published: retire it with `switchboard push retire-key {old}` once notifications signed with it have expired"
            )?;
            Ok(0)
        }
        PushCommand::RetireKey { kid, keys, json } => {
            match retire_key(&signing_keys(&keys).await?, &kid).await {
                Ok(true) => {
                    if json {
                        writeln!(out, "{}", json!({ "retired": kid }))?;
                    } else {
                        writeln!(out, "retired {kid}")?;
                    }
                    Ok(0)
                }
                Ok(false) => {
                    let e = KeyError::UnknownKid(kid);
                    writeln!(err, "switchboard push: {e}")?;
                    Ok(1)
                }
                Err(KeyAdminError::Keys(e @ KeyError::RetireCurrent(_))) => {
                    writeln!(err, "switchboard push: {e} (`switchboard push rotate-key`)")?;
                    Ok(1)
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// The key set the flags name, opened: a key file must exist, the shared
/// set's database must answer.
async fn signing_keys(args: &KeyArgs) -> anyhow::Result<SigningKeys> {
    Ok(match key_set(args)? {
        KeySetAt::File(path) => SigningKeys::open_file(&path)?,
        KeySetAt::Postgres(url) => SigningKeys::open_postgres(&url).await?,
    })
}

/// Where a signing key set lives.
enum KeySetAt {
    File(std::path::PathBuf),
    Postgres(String),
}

/// The key set the flags name, resolved like `serve` does.
fn key_set(args: &KeyArgs) -> anyhow::Result<KeySetAt> {
    if let Some(path) = &args.push_key_file {
        return Ok(KeySetAt::File(path.clone()));
    }
    if let Some(url) = &args.postgres_url {
        return Ok(KeySetAt::Postgres(url.clone()));
    }
    let Some(store) = &args.store else {
        bail!("which key set? give --push-key-file PATH, --store URL or --postgres-url URL");
    };
    if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        return Ok(KeySetAt::Postgres(store.clone()));
    }
    let cfg = Config {
        store: store.clone(),
        ..Config::default()
    };
    match crate::serve::push_key_path(&cfg) {
        Some(path) => Ok(KeySetAt::File(path)),
        None => bail!(
            "store {store:?} keeps its push signing keys in the server's memory only; nothing to change (give --push-key-file if serve used one)"
        ),
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
