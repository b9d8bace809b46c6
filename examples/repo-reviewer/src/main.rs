//! An agent that reviews a directory of this machine, on `switchboard-sdk`
//! alone: JSON-RPC, REST and gRPC on SQLite behind an API key, with `/agui`,
//! `/healthz` and `/metrics`. Send it a path: it walks the tree on the
//! blocking pool (`TaskEvents::spawn_blocking`), reports files and bytes
//! read as task progress, writes its report in chunks and asks with a form
//! whether to keep it (yes completes the task, no cancels it). Cancelling
//! the task stops the walk before its next read. It reads whatever the
//! process can, hence the key:
//! `SWITCHBOARD_API_KEY_HASH=$(switchboard auth hash-key KEY) cargo run -p
//! repo-reviewer -- --listen 127.0.0.1:9090 --store sqlite://reviews.db`
//! prints its URL on the first line of stdout.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use switchboard_sdk::agui::TaskEventsExt;
use switchboard_sdk::agui::hitl::{form_part, form_values};
use switchboard_sdk::auth::{ApiKeys, Schemes};
use switchboard_sdk::prelude::*;
use switchboard_sdk::protocol::progress::ProgressLimits;

/// Files and lines per file name extension.
type Kinds = BTreeMap<String, (u64, u64)>;

/// Every regular file under `dir` with its size, in name order (symlinks
/// and `.git` skipped).
fn list(dir: &Path, run: &BlockingRun, out: &mut Vec<(PathBuf, u64)>) -> Result<(), BoxError> {
    let mut entries = std::fs::read_dir(dir)?.collect::<Result<Vec<_>, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        run.check()?;
        let kind = entry.file_type()?;
        if kind.is_dir() && entry.file_name() != ".git" {
            list(&entry.path(), run, out)?;
        } else if kind.is_file() {
            out.push((entry.path(), entry.metadata()?.len()));
        }
    }
    Ok(())
}

/// Lists `dir`, then reads every file in 64 KiB chunks counting lines, with
/// a cancel check before each read and two progress trackers.
fn walk(dir: &Path, run: &BlockingRun) -> Result<Kinds, BoxError> {
    let mut files = Vec::new();
    list(dir, run, &mut files)?;
    let total: u64 = files.iter().map(|(_, size)| size).sum();
    let tracker = |id: &str, total: u64| {
        let builder = run.events().progress().tracker(id).total(total);
        run.block_on(builder.message(format!("{id} reviewed")).start())
    };
    let (walked, read) = (
        tracker("files", files.len() as u64)?,
        tracker("bytes", total)?,
    );
    let (mut buf, mut done, mut kinds) = (vec![0; 64 * 1024], 0, Kinds::new());
    for (path, _) in files {
        let mut lines = 0;
        // An unreadable file counts as empty rather than ending the review.
        let mut file = std::fs::File::open(&path).ok();
        while let Some(f) = file.as_mut() {
            run.check()?;
            let n = f.read(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            lines += buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
            done += n as u64;
            run.block_on(read.set(done.min(total)))?; // files may grow meanwhile
        }
        run.block_on(walked.advance(1))?;
        let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
        let kind = kinds.entry(ext.unwrap_or_else(|| "-".into())).or_default();
        *kind = (kind.0 + 1, kind.1 + lines);
    }
    run.block_on(read.complete())?;
    run.block_on(walked.complete())?;
    Ok(kinds)
}

/// Pauses the task on a form with one field, `keep`.
async fn ask_keep(events: &TaskEvents, question: &str) -> Result<(), EmitError> {
    let field = json!({"name": "keep", "type": "boolean", "label": "Keep it", "required": true});
    let form = form_part("keep", "Keep the report?", json!([field]));
    events.ask_form(question, form).await
}

/// A path starts a review; the answer to the form ends it.
async fn review(ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
    if ctx.is_follow_up() {
        let keep = form_values(&ctx.message, "keep").map(|v| v["keep"] == true);
        match keep {
            Some(true) => events.complete_with("report kept").await?,
            Some(false) => events.set_state(TaskState::Canceled, None).await?,
            None => ask_keep(&events, "Answer the form: keep the report?").await?,
        }
        return Ok(());
    }
    let dir = PathBuf::from(ctx.text().trim());
    events
        .working(format!("reviewing {}", dir.display()))
        .await?;
    // Cancelled, this returns at once and the walk stops at its next check.
    let kinds = events.spawn_blocking(move |run| walk(&dir, &run)).await??;
    let (files, lines) = kinds.values().fold((0, 0), |(f, l), k| (f + k.0, l + k.1));
    let mut report = events.artifact_writer("report");
    for (ext, (f, l)) in kinds {
        report
            .append(Part::text(format!("{ext}: {f} files, {l} lines\n")))
            .await?;
    }
    report
        .finish(Part::text(format!("total: {files} files, {lines} lines\n")))
        .await?;
    Ok(ask_keep(&events, &format!("Keep the report on {files} files?")).await?)
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |flag: &str, default: &str| {
        let at = args.iter().position(|a| a == flag);
        at.and_then(|i| args.get(i + 1))
            .map_or(default.to_string(), String::clone)
    };
    let hash = std::env::var("SWITCHBOARD_API_KEY_HASH")
        .map_err(|_| "set SWITCHBOARD_API_KEY_HASH (`switchboard auth hash-key KEY`)")?;
    let keys = ApiKeys::new().key(&hash, "reviewer", None, false)?;
    let card = AgentCard::new("repo-reviewer", "Reviews a directory", "1.0")
        .with_streaming(true)
        .with_extension(ProgressLimits::default().to_extension());
    let store = switchboard_sdk::store::open(&arg("--store", "sqlite://reviews.db")).await?;
    let builder = RequestHandler::builder(agent_fn(review), card);
    let handler = store.builder(builder).build();
    let listener = tokio::net::TcpListener::bind(arg("--listen", "127.0.0.1:9090")).await?;
    let url = format!("http://{}", listener.local_addr()?);
    println!("{url}");
    A2aServer::new(handler)
        .public_url(url)
        .authenticator(Schemes::new().with(keys))
        .agui_endpoint(EndpointConfig::default())
        .ops()
        .serve(listener, shutdown_signal())
        .await?;
    Ok(())
}
