//! Compiles the `switchboard client` CLI module and checks it end to end.
//!
//! `crates/switchboard/src/client_cmd.rs` belongs to the `switchboard`
//! binary, but it depends only on this crate (plus clap, futures, tokio and
//! serde_json), so it is included here by path: the client crate's CI then
//! catches any API change that breaks the CLI, and the CLI's behaviour
//! (output formats, exit codes) is tested against the official Python SDK
//! sample server from `interop/` (skipped like `official_samples.rs` when
//! the interop setup is missing).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../switchboard/src/client_cmd.rs"]
mod client_cmd;
mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{CommandFactory, Parser};
use client_cmd::ClientCommand;
use serde_json::Value;
use switchboard_client::A2AClient;
use switchboard_client::protocol::ListTasksRequest;
use tokio::task::JoinHandle;

/// A stand-in for the `switchboard client` parent command.
#[derive(Debug, Parser)]
#[command(name = "client")]
struct Cli {
    #[command(subcommand)]
    cmd: ClientCommand,
}

#[test]
fn clap_definition_is_valid() {
    Cli::command().debug_assert();
}

#[test]
fn arguments_parse() {
    let cli = Cli::try_parse_from([
        "client",
        "send",
        "--url",
        "http://x",
        "--context-id",
        "c1",
        "--reference-task",
        "a",
        "--reference-task",
        "b",
        "--return-immediately",
        "--header",
        "Authorization: Bearer t",
        "/long",
        "5",
    ])
    .unwrap();
    match cli.cmd {
        ClientCommand::Send {
            conn,
            message,
            return_immediately,
        } => {
            assert_eq!(conn.url, "http://x");
            assert_eq!(message.text, ["/long", "5"]);
            assert_eq!(message.reference_tasks, ["a", "b"]);
            assert_eq!(message.context_id.as_deref(), Some("c1"));
            assert!(return_immediately);
            assert_eq!(conn.headers, ["Authorization: Bearer t"]);
        }
        other => panic!("{other:?}"),
    }
    let cli = Cli::try_parse_from([
        "client",
        "list",
        "--url",
        "http://x",
        "--state",
        "input-required",
        "--json",
    ])
    .unwrap();
    assert!(matches!(
        cli.cmd,
        ClientCommand::List { state: Some(_), .. }
    ));
    assert!(
        Cli::try_parse_from(["client", "list", "--url", "http://x", "--state", "bogus"]).is_err()
    );
    assert!(Cli::try_parse_from(["client", "send", "--url", "http://x"]).is_err());
}

#[test]
fn progress_flags_parse() {
    let cli = Cli::try_parse_from([
        "client",
        "get",
        "--url",
        "http://x",
        "--watch",
        "--interval",
        "0.25",
        "--no-progress",
        "t1",
    ])
    .unwrap();
    match cli.cmd {
        ClientCommand::Get {
            id,
            watch,
            interval,
            no_progress,
            ..
        } => {
            assert_eq!(id, "t1");
            assert!(watch && no_progress);
            assert_eq!(interval, Some(0.25));
        }
        other => panic!("{other:?}"),
    }
    // --interval and --no-progress only make sense with --watch.
    for flag in [&["--interval", "1"][..], &["--no-progress"][..]] {
        let mut argv = vec!["client", "get", "--url", "http://x", "t1"];
        argv.extend_from_slice(flag);
        assert!(Cli::try_parse_from(argv).is_err(), "{flag:?}");
    }
    for cmd in ["stream", "subscribe"] {
        let cli = Cli::try_parse_from(["client", cmd, "--url", "http://x", "--no-progress", "x"])
            .unwrap();
        assert!(matches!(
            cli.cmd,
            ClientCommand::Stream {
                no_progress: true,
                ..
            } | ClientCommand::Subscribe {
                no_progress: true,
                ..
            }
        ));
    }
}

#[tokio::test]
async fn run_reports_usage_errors_with_exit_code_2() {
    let cmd = Cli::try_parse_from(["client", "get", "--url", "http://x", "--header", "bad", "t"])
        .unwrap()
        .cmd;
    assert_eq!(client_cmd::run(cmd).await, std::process::ExitCode::from(2));
}

/// A growable output buffer that another task can read while the CLI runs.
#[derive(Debug, Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl SharedBuf {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs one CLI invocation; returns (exit code, stdout, stderr).
async fn cli(args: &[&str]) -> (u8, String, String) {
    cli_into(args, SharedBuf::default()).await
}

async fn cli_into(args: &[&str], out: SharedBuf) -> (u8, String, String) {
    let mut argv = vec!["client"];
    argv.extend_from_slice(args);
    let cmd = Cli::try_parse_from(argv).unwrap().cmd;
    let err = SharedBuf::default();
    let code = tokio::time::timeout(
        Duration::from_secs(30),
        client_cmd::run_with(cmd, out.clone(), err.clone()),
    )
    .await
    .unwrap_or_else(|_| panic!("`client {}` did not finish in 30 s", args.join(" ")));
    (code, out.text(), err.text())
}

/// Runs one CLI invocation in the background; its stdout can be watched.
fn spawn_cli(args: &[&str]) -> (JoinHandle<(u8, String, String)>, SharedBuf) {
    let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = SharedBuf::default();
    let watch = out.clone();
    let handle = tokio::spawn(async move {
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        cli_into(&refs, out).await
    });
    (handle, watch)
}

/// Waits (10 s at most) until `buf` contains `needle`.
async fn wait_for_output(buf: &SharedBuf, needle: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !buf.text().contains(needle) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {needle:?} in output: {}",
            buf.text()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

#[tokio::test]
async fn cli_against_the_python_sample() {
    let Some(server) = common::start(common::Sdk::Python).await else {
        return;
    };
    let url = server.base.as_str();

    let (code, out, err) = cli(&["card", "--url", url]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Switchboard Interop Sample (python)"), "{out}");
    assert!(out.contains("JSONRPC 1.0"), "{out}");

    let (code, out, err) = cli(&["card", "--url", url, "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "card");

    // send: human output, then JSON.
    let (code, out, err) = cli(&["send", "--url", url, "hello", "cli"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("task ") && out.contains("[completed]"),
        "{out}"
    );
    assert!(out.contains("hello cli"), "{out}");
    let (code, out, _) = cli(&["send", "--url", url, "--json", "/message", "hi"]).await;
    assert_eq!(code, 0);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "message");
    assert_eq!(lines[0]["data"]["role"], "ROLE_AGENT");

    // stream: artifact text inline, summary last.
    let (code, out, err) = cli(&["stream", "--url", url, "hello", "stream"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("▸ echo: echo: hello stream\n"), "{out}");
    assert!(out.contains("  · working: working"), "{out}");
    assert!(out.trim_end().ends_with("[completed]"), "{out}");
    let (code, out, _) = cli(&["stream", "--url", url, "--json", "hello", "json"]).await;
    assert_eq!(code, 0);
    let lines = json_lines(&out);
    assert_eq!(lines.first().unwrap()["type"], "task");
    assert!(lines.iter().any(|l| l["type"] == "artifactUpdate"));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "statusUpdate");
    assert_eq!(last["data"]["status"]["state"], "TASK_STATE_COMPLETED");

    // A long task: send without waiting, get, list, subscribe + cancel.
    let (code, out, _) = cli(&[
        "send",
        "--url",
        url,
        "--json",
        "--return-immediately",
        "/long",
        "30",
    ])
    .await;
    assert_eq!(code, 0);
    let task = &json_lines(&out)[0];
    let id = task["data"]["id"].as_str().unwrap().to_string();
    let ctx = task["data"]["contextId"].as_str().unwrap().to_string();

    let (code, out, _) = cli(&["get", "--url", url, &id]).await;
    assert_eq!(code, 0);
    assert!(out.contains(&id), "{out}");

    let (code, out, _) = cli(&["list", "--url", url, "--context-id", &ctx]).await;
    assert_eq!(code, 0);
    assert!(out.starts_with("ID"), "{out}");
    assert!(out.contains(&id), "{out}");

    let (subscribe, sub_out) = spawn_cli(&["subscribe", "--url", url, &id]);
    // Cancel once the subscriber has its first item (the task snapshot).
    wait_for_output(&sub_out, "task ").await;
    let (code, out, err) = cli(&["cancel", "--url", url, &id]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[canceled]"), "{out}");
    let (code, out, err) = subscribe.await.unwrap();
    assert_eq!(code, 0, "subscribe: canceled is not a failure: {err}");
    assert!(out.trim_end().ends_with("[canceled]"), "{out}");

    // Errors: exit 2, one line on stderr; in --json also an error line.
    let (code, out, err) = cli(&["get", "--url", url, "no-such-task"]).await;
    assert_eq!(code, 2);
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: agent error -32001"), "{err}");
    let (code, out, _) = cli(&["subscribe", "--url", url, "--json", &id]).await;
    assert_eq!(code, 2);
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "error");
    assert_eq!(lines[0]["data"]["code"], -32004);
    let (code, _, err) = cli(&["card", "--url", "http://127.0.0.1:9/"]).await;
    assert_eq!(code, 2);
    assert!(err.starts_with("error: transport error"), "{err}");
    let (code, _, err) = cli(&["get", "--url", url, "--header", "nocolon", "x"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("--header"), "{err}");

    // A streamed task that gets canceled exits with 1.
    let ctx = uuid::Uuid::new_v4().to_string();
    let (stream, _) = spawn_cli(&["stream", "--url", url, "--context-id", &ctx, "/long", "30"]);
    let client = A2AClient::connect(url).await.unwrap();
    let task_id = loop {
        let page = client
            .list_tasks(ListTasksRequest {
                context_id: Some(ctx.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
        if let Some(t) = page.tasks.first() {
            break t.id.clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    client.cancel_task(task_id.as_str()).await.unwrap();
    let (code, out, err) = stream.await.unwrap();
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.trim_end().ends_with("[canceled]"), "{out}");
}
