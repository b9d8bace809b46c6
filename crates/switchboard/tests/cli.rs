//! `switchboard client …` end to end: the commands' argument parsing, then
//! every command run in-process (`switchboard::client::run_with`) against
//! the real `switchboard serve` with the demo agent (`tests/proc`), checking
//! what it prints (human and `--json`) and its exit codes.
//!
//! `run_with` writes to buffers, which are not a terminal: task progress
//! comes out as plain `progress …` lines. The bars drawn on a terminal are
//! tested in the crate's unit tests (on a `vt100` screen) and in
//! `progress_cli.rs` (the real binary in a pseudo-terminal).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::io::Write;
use std::time::Duration;

use clap::Parser;
use proc::Serve;
use serde_json::Value;
use switchboard::client::{self, ClientCommand};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A stand-in for the `switchboard client` parent command.
#[derive(Debug, Parser)]
#[command(name = "client")]
struct Cli {
    #[command(subcommand)]
    cmd: ClientCommand,
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
            assert_eq!(conn.agent.headers, ["Authorization: Bearer t"]);
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
    assert_eq!(client::run(cmd).await, std::process::ExitCode::from(2));
}

/// An output buffer that another task can wait on while the CLI writes it:
/// every write is announced to the watchers.
#[derive(Debug, Clone)]
struct SharedBuf(watch::Sender<Vec<u8>>);

impl SharedBuf {
    fn new() -> SharedBuf {
        SharedBuf(watch::Sender::new(Vec::new()))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }

    /// Waits (10 s at most) until the text contains `needle`; returns the
    /// text at that moment.
    async fn wait_for(&self, needle: &str) -> String {
        let mut rx = self.0.subscribe();
        // Reduced to a bool at once: the `Ref` that `wait_for` returns
        // holds the buffer's lock, which the writer needs.
        let seen = tokio::time::timeout(
            Duration::from_secs(10),
            rx.wait_for(|b| String::from_utf8_lossy(b).contains(needle)),
        )
        .await
        .is_ok_and(|found| found.is_ok());
        assert!(seen, "no {needle:?} in output: {}", self.text());
        self.text()
    }
}

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.send_modify(|b| b.extend_from_slice(buf));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs one CLI invocation; returns (exit code, stdout, stderr).
async fn cli(args: &[&str]) -> (u8, String, String) {
    cli_into(args, SharedBuf::new()).await
}

async fn cli_into(args: &[&str], out: SharedBuf) -> (u8, String, String) {
    let mut argv = vec!["client"];
    argv.extend_from_slice(args);
    let cmd = Cli::try_parse_from(argv).unwrap().cmd;
    let err = SharedBuf::new();
    let code = tokio::time::timeout(
        Duration::from_secs(30),
        client::run_with(cmd, out.clone(), err.clone()),
    )
    .await
    .unwrap_or_else(|_| panic!("`client {}` did not finish in 30 s", args.join(" ")));
    (code, out.text(), err.text())
}

/// Runs one CLI invocation in the background; its stdout can be watched.
fn spawn_cli(args: &[&str]) -> (JoinHandle<(u8, String, String)>, SharedBuf) {
    let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = SharedBuf::new();
    let watch = out.clone();
    let handle = tokio::spawn(async move {
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        cli_into(&refs, out).await
    });
    (handle, watch)
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

/// The task id of the first `task ID [state] …` line.
fn first_task_id(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("task "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no task line in {out}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_against_the_demo_agent() {
    let server = Serve::start_with("memory", &["--agent", "demo"]);
    let base = server.base();
    let url = base.as_str();

    let (code, out, err) = cli(&["card", "--url", url]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("switchboard demo "), "{out}");
    assert!(out.contains(&format!("JSONRPC 1.0  {url}")), "{out}");
    assert!(out.contains("  skills:"), "{out}");

    let (code, out, err) = cli(&["card", "--url", url, "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "card");
    assert_eq!(lines[0]["data"]["name"], "switchboard demo");

    // send: human output, then JSON.
    let (code, out, err) = cli(&["send", "--url", url, "hello", "cli"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("task ") && out.contains("[completed]"),
        "{out}"
    );
    assert!(out.contains("  ▸ reply: You said: hello cli\n"), "{out}");
    let (code, out, _) = cli(&["send", "--url", url, "--json", "/message", "hi"]).await;
    assert_eq!(code, 0);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "message");
    assert_eq!(lines[0]["data"]["role"], "ROLE_AGENT");
    assert_eq!(lines[0]["data"]["parts"][0]["text"], "You said: hi");

    // stream: status lines, artifact text inline, summary last.
    let (code, out, err) = cli(&["stream", "--url", url, "hello", "stream"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  · working: reading your message\n"), "{out}");
    assert!(out.contains("  ▸ reply: You said: hello stream\n"), "{out}");
    assert!(out.contains("Reversed: maerts olleh\n"), "{out}");
    assert!(out.trim_end().ends_with("[completed]"), "{out}");
    let (code, out, _) = cli(&["stream", "--url", url, "--json", "hello", "json"]).await;
    assert_eq!(code, 0);
    let lines = json_lines(&out);
    assert_eq!(lines.first().unwrap()["type"], "task");
    assert!(lines.iter().any(|l| l["type"] == "artifactUpdate"));
    assert!(lines.iter().all(|l| l["seq"].is_u64()), "{out}");
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
    assert!(out.starts_with(&format!("task {id} [")), "{out}");
    assert!(out.contains("  user: /long 30"), "{out}");

    let (code, out, _) = cli(&["list", "--url", url, "--context-id", &ctx]).await;
    assert_eq!(code, 0);
    assert!(out.starts_with("ID"), "{out}");
    assert!(out.contains(&id), "{out}");
    assert!(out.contains("1 of 1 task(s)"), "{out}");

    let (subscribe, sub_out) = spawn_cli(&["subscribe", "--url", url, &id]);
    // Cancel once the subscriber has its first item (the task snapshot).
    sub_out.wait_for(&format!("task {id}")).await;
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

    // A task that fails exits with 1; a streamed task that gets canceled too.
    let (code, out, _) = cli(&["send", "--url", url, "/fail", "on", "purpose"]).await;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("[failed]") && out.contains("on purpose"),
        "{out}"
    );
    let (stream, stream_out) = spawn_cli(&["stream", "--url", url, "/long", "30"]);
    let task_id = first_task_id(&stream_out.wait_for("task ").await);
    let (code, _, err) = cli(&["cancel", "--url", url, &task_id]).await;
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = stream.await.unwrap();
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.trim_end().ends_with("[canceled]"), "{out}");
}

/// Progress, when stdout is not a terminal: plain lines, no control
/// sequences, each line once, a final line per tracker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_off_a_terminal_is_plain_lines() {
    let server = Serve::start_with("memory", &["--agent", "demo"]);
    let (code, out, err) = cli(&["stream", "--url", &server.base(), "/progress", "1"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('\x1b'), "control sequences: {out:?}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.windows(2).all(|w| w[0] != w[1]),
        "a line repeated: {out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("progress download ") && l.contains(" — total ")),
        "{out}"
    );
    proc::assert_one_final_progress_line_per_tracker(&out);
    assert!(lines.last().unwrap().ends_with("[completed]"), "{out}");
}

/// `push-config create|get|list|delete` over every binding and version the
/// client speaks, against the real server; secrets never printed back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_commands_on_every_binding_and_version() {
    let server = Serve::start_with(
        "memory",
        &["--agent", "demo", "--push-allow-host", "127.0.0.1"],
    );
    let base = server.base();
    let url = base.as_str();
    for (binding, version) in [
        ("jsonrpc", "1.0"),
        ("rest", "1.0"),
        ("grpc", "1.0"),
        ("jsonrpc", "0.3"),
        ("rest", "0.3"),
        ("grpc", "0.3"),
    ] {
        let how = [
            "--url",
            url,
            "--binding",
            binding,
            "--protocol-version",
            version,
        ];
        // The command words; the rest of its arguments are pushed after
        // them, and the connection flags go last.
        let with =
            |args: &[&'static str]| -> Vec<String> { args.iter().map(|s| s.to_string()).collect() };
        let run = |mut argv: Vec<String>| async move {
            argv.extend(how.iter().map(|s| s.to_string()));
            let refs: Vec<&str> = argv.iter().map(String::as_str).collect();
            cli(&refs).await
        };
        let mut send = with(&["send", "--json", "--return-immediately"]);
        send.extend(["/long".to_string(), "30".to_string()]);
        let (code, out, err) = run(send).await;
        assert_eq!(code, 0, "{binding} {version}: {err}");
        let task = json_lines(&out)[0]["data"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let hook = format!("http://127.0.0.1:9/hook-{binding}-{version}");
        let config_id = format!("cfg-{binding}-{}", version.replace('.', ""));

        // create: human output, secrets masked.
        let mut create = with(&["push-config", "create"]);
        create.extend(
            [
                "--task-id",
                &task,
                "--webhook-url",
                &hook,
                "--webhook-token",
                "tok-SECRET",
                "--auth-scheme",
                "Bearer",
                "--credentials",
                "cred-SECRET",
                "--id",
                &config_id,
            ]
            .map(String::from),
        );
        let (code, out, err) = run(create).await;
        assert_eq!(code, 0, "{binding} {version}: {err}");
        assert!(
            out.starts_with(&format!("push config {config_id}  task {task}\n")),
            "{binding} {version}: {out}"
        );
        assert!(out.contains(&format!("  url: {hook}\n")), "{out}");
        assert!(out.contains("  authentication: Bearer ****\n"), "{out}");
        assert!(
            !out.contains("SECRET") && !err.contains("SECRET"),
            "{out}{err}"
        );

        // get (JSON): the same config, masked.
        let mut get = with(&["push-config", "get", "--json", "--task-id"]);
        get.extend([task.clone(), config_id.clone()]);
        let (code, out, err) = run(get).await;
        assert_eq!(code, 0, "{binding} {version}: {err}");
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 1, "{out}");
        assert_eq!(lines[0]["type"], "pushConfig");
        assert_eq!(lines[0]["data"]["id"], config_id.as_str());
        assert_eq!(lines[0]["data"]["url"], hook.as_str());
        assert!(!out.contains("SECRET"), "{out}");

        // list: one.
        let mut list = with(&["push-config", "list", "--task-id"]);
        list.push(task.clone());
        let (code, out, err) = run(list.clone()).await;
        assert_eq!(code, 0, "{binding} {version}: {err}");
        assert!(
            out.contains(&format!("{config_id}  {hook}  (Bearer)")),
            "{out}"
        );
        assert!(out.trim_end().ends_with("1 push config(s)"), "{out}");

        // delete, then list is empty and get is an error (exit 2).
        let mut delete = with(&["push-config", "delete", "--json", "--task-id"]);
        delete.extend([task.clone(), config_id.clone()]);
        let (code, out, err) = run(delete).await;
        assert_eq!(code, 0, "{binding} {version}: {err}");
        assert_eq!(json_lines(&out)[0]["type"], "deleted", "{out}");
        let (code, out, _) = run(list).await;
        assert_eq!(code, 0);
        assert!(out.trim_end().ends_with("0 push config(s)"), "{out}");
        let mut get = with(&["push-config", "get", "--task-id"]);
        get.extend([task.clone(), config_id.clone()]);
        let (code, _, err) = run(get).await;
        assert_eq!(code, 2, "{binding} {version}: deleted config still there");
        assert!(err.starts_with("error: "), "{err}");
        let mut cancel = with(&["cancel"]);
        cancel.push(task);
        run(cancel).await;
    }
}

/// Refusals name what the agent offers: a binding or version the card does
/// not have, and an operation the agent turned off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_name_what_the_agent_offers() {
    let server = Serve::start_with("memory", &["--agent", "demo", "--no-push"]);
    let base = server.base();
    let url = base.as_str();
    // Push is off: the refusal lists the card's capabilities.
    let (code, out, err) = cli(&["push-config", "list", "--url", url, "--task-id", "t1"]).await;
    assert_eq!(code, 2, "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("; the agent's card offers: streaming yes, push notifications no"),
        "{err}"
    );
    let (code, out, _) = cli(&[
        "push-config",
        "list",
        "--json",
        "--url",
        url,
        "--task-id",
        "t1",
    ])
    .await;
    assert_eq!(code, 2);
    let line = &json_lines(&out)[0];
    assert_eq!(line["type"], "error");
    assert!(
        line["data"]["offered"]
            .as_str()
            .is_some_and(|o| o.contains("push notifications no")),
        "{out}"
    );

    // A binding the card does not offer: the error lists what it does. The
    // card is the real server's with its gRPC interfaces taken out, served
    // on its own loopback port.
    let mut card: Value = proc::get_json(&format!("{url}/.well-known/agent-card.json")).await;
    card["supportedInterfaces"]
        .as_array_mut()
        .unwrap()
        .retain(|i| i["protocolBinding"] != "GRPC");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let card_url = format!("http://{}/card.json", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/card.json",
        axum::routing::get(move || {
            let card = card.clone();
            async move { axum::Json(card) }
        }),
    );
    let card_server = tokio::spawn(async move { axum::serve(listener, app).await });
    let (code, _, err) = cli(&["send", "--url", &card_url, "--binding", "grpc", "hi"]).await;
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.ends_with(
            "; --binding GRPC asked for; the agent offers JSONRPC 1.0, HTTP+JSON 1.0, \
             JSONRPC 0.3, HTTP+JSON 0.3\n"
        ),
        "{err}"
    );
    // Without the forced binding the same card works.
    let (code, out, err) = cli(&["send", "--url", &card_url, "hi"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("You said: hi"), "{out}");
    card_server.abort();

    // A message to a finished task is refused with UnsupportedOperation too,
    // for a reason no capability explains: the error alone, no card note.
    let (code, out, err) = cli(&["send", "--url", url, "--json", "hi"]).await;
    assert_eq!(code, 0, "{err}");
    let task = &json_lines(&out)[0]["data"];
    let (id, context) = (
        task["id"].as_str().unwrap(),
        task["contextId"].as_str().unwrap(),
    );
    let (code, _, err) = cli(&[
        "send",
        "--url",
        url,
        "--task-id",
        id,
        "--context-id",
        context,
        "again",
    ])
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is completed and cannot accept messages"),
        "{err}"
    );
    assert!(!err.contains("card offers"), "{err}");
}
