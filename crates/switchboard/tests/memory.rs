//! Clients that make the server hold memory and never let go: readers that
//! stop reading (an HTTP/2 window left at zero, an HTTP/1.1 socket never
//! read) and many large request bodies at once. Against the real `serve`
//! with a small memory budget (`--max-buffered-bytes`, 32 MiB) and a short
//! write timeout (4 s), over real loopback sockets:
//!
//! - what the server holds stays under the budget: its peak resident set
//!   grows by less than the budget plus [`SLACK_MIB`] (without the budget
//!   the same attacks pin several times the budget);
//! - requests that do not fit are refused with 503 and `Retry-After` (the
//!   JSON-RPC or REST error body) instead of being buffered;
//! - a stalled reader's stream is reset, or its connection closed, after
//!   the write timeout, which gives its bytes back: a fresh request for the
//!   same large answer then succeeds.
//!
//! No timing assertions: the tests wait for events (an answer, a reset, a
//! closed socket) or poll a condition with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::time::Duration;

use bytes::Bytes;
use proc::{Serve, poll_until, rpc};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The server's memory budget in these tests.
const BUDGET: usize = 32 * 1024 * 1024;
/// What the resident set may grow by beyond the budget: answers being
/// serialized when they are refused (a task and its JSON per worker
/// thread), the allocator's own slack, buffers.
const SLACK_MIB: u64 = 64;
/// How long the tests wait for anything the server does by itself.
const WITHIN: Duration = Duration::from_secs(60);

fn serve(extra: &[&str]) -> Serve {
    let budget = BUDGET.to_string();
    let mut args = vec![
        "--agent",
        "echo-task",
        "--no-push",
        "--max-buffered-bytes",
        &budget,
        // Short, but long enough that a test client starved of CPU for a
        // moment on a loaded machine is not taken for a stalled reader.
        "--write-timeout-ms",
        "4000",
    ];
    args.extend_from_slice(extra);
    Serve::start_with("memory", &args)
}

/// A completed task whose history and artifact both hold `chars`
/// characters: its GetTask answer is about twice that.
async fn big_task(s: &Serve, chars: usize) -> String {
    let text = "m".repeat(chars);
    let task = rpc(&s.base(), "SendMessage", send_params(&text)).await;
    task["task"]["id"].as_str().unwrap().to_string()
}

fn send_params(text: &str) -> Value {
    json!({"message": {
        "role": "ROLE_USER",
        "messageId": uuid::Uuid::new_v4().to_string(),
        "parts": [{"text": text}],
    }})
}

/// `(VmRSS, VmHWM)` of the server in MiB.
fn memory_mib(s: &Serve) -> (u64, u64) {
    let (rss, hwm) = s.memory_kib();
    (rss / 1024, hwm / 1024)
}

/// Asserts the server's peak grew by less than the budget plus the slack
/// since `before` (its resident set then, in MiB).
fn assert_bounded(s: &Serve, before: u64, what: &str) {
    let (rss, peak) = memory_mib(s);
    let bound = (BUDGET as u64 >> 20) + SLACK_MIB;
    println!("{what}: RSS {before} MiB before, peak {peak} MiB, {rss} MiB now");
    assert!(
        peak.saturating_sub(before) < bound,
        "{what}: the peak grew by {} MiB, over the {bound} MiB the budget allows",
        peak - before
    );
}

/// GETs `/tasks/{id}` on a fresh HTTP/1.1 connection until it answers 200
/// (the budget has room for the whole answer again).
async fn until_served(s: &Serve, id: &str) {
    let url = format!("{}/tasks/{id}", s.base());
    poll_until(
        WITHIN,
        Duration::from_millis(100),
        "a fresh GetTask is served once the stalled readers are cut off",
        || async {
            reqwest::Client::new()
                .get(&url)
                .header("A2A-Version", "1.0")
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        },
        |status| *status == 200,
    )
    .await;
}

/// An HTTP/2 connection to `port` whose client grants no stream any
/// window (a reader that never reads), and the task driving it.
async fn zero_window_client(
    port: u16,
) -> (
    h2::client::SendRequest<Bytes>,
    tokio::task::JoinHandle<Result<(), h2::Error>>,
) {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (client, conn) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    (client, tokio::spawn(conn))
}

/// One HTTP/2 connection whose client grants no stream any window, opening
/// many GetTask streams on two tasks with ~4 MB answers: without a budget
/// the server holds every answer for as long as the client keeps the
/// connection (60 × 4 MB). With it, answers that do not fit are refused
/// 503 before they are sent, and the admitted ones are reset (`CANCEL`)
/// after the write timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_window_readers_are_refused_over_the_budget_and_reset() {
    const STREAMS: usize = 60;
    let s = serve(&[]);
    let tasks = [big_task(&s, 2_000_000).await, big_task(&s, 2_000_000).await];
    let (before, _) = memory_mib(&s);

    let (client, connection) = zero_window_client(s.port).await;
    let mut pending = Vec::new();
    for i in 0..STREAMS {
        let mut client = client.clone().ready().await.unwrap();
        let req = http::Request::get(format!(
            "http://127.0.0.1:{}/tasks/{}",
            s.port,
            tasks[i % 2]
        ))
        .header("a2a-version", "1.0")
        .body(())
        .unwrap();
        let (resp, _) = client.send_request(req, true).unwrap();
        // Each answer's head is taken as soon as it comes: a refusal's body
        // gets no window either, so its stream is reset too, later.
        pending.push(tokio::spawn(resp));
    }
    let mut admitted = Vec::new();
    let mut refused = 0;
    let mut reset_early = 0;
    for resp in pending {
        let resp = match resp.await.unwrap() {
            Ok(resp) => resp,
            // A head and the reset that followed it read together (the
            // server's connection busy for the write timeout meanwhile):
            // the client library reports only the reset.
            Err(e) if e.reason() == Some(h2::Reason::CANCEL) => {
                reset_early += 1;
                continue;
            }
            Err(e) => panic!("GetTask failed: {e}"),
        };
        match resp.status().as_u16() {
            200 => admitted.push(resp.into_body()),
            503 => {
                assert_eq!(resp.headers()["retry-after"], "1");
                refused += 1;
            }
            other => panic!("GetTask answered {other}"),
        }
    }
    println!(
        "zero window: {} admitted, {refused} refused, {reset_early} reset before their head was read",
        admitted.len()
    );
    assert_bounded(&s, before, "zero window");
    assert!(refused > 0, "the answers that do not fit are refused");
    assert!(!admitted.is_empty(), "the answers that fit are admitted");

    // Every admitted stream is reset by the server: its reader granted no
    // window for the write timeout.
    for mut body in admitted {
        let got = tokio::time::timeout(WITHIN, body.data()).await;
        let Ok(Some(Err(e))) = got else {
            panic!("a stalled stream is reset, got {got:?}");
        };
        assert_eq!(e.reason(), Some(h2::Reason::CANCEL), "{e}");
    }
    // Which gave its bytes back: the same answer is served again.
    until_served(&s, &tasks[0]).await;
    drop(client);
    connection.abort();
}

/// The same over gRPC: GetTask calls on one HTTP/2 connection whose client
/// grants no window. A gRPC answer is charged frame by frame, so a call
/// whose answer does not fit ends with the trailers `grpc-status: 14`
/// (UNAVAILABLE); an admitted one is reset after the write timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_window_grpc_calls_end_unavailable_over_the_budget_or_are_reset() {
    use prost::Message as _;
    const CALLS: usize = 40;
    let s = serve(&[]);
    let tasks = [big_task(&s, 2_000_000).await, big_task(&s, 2_000_000).await];
    let (before, _) = memory_mib(&s);

    let (client, connection) = zero_window_client(s.port).await;
    let mut calls = Vec::new();
    for i in 0..CALLS {
        let mut client = client.clone().ready().await.unwrap();
        let req = http::Request::post(format!(
            "http://127.0.0.1:{}/lf.a2a.v1.A2AService/GetTask",
            s.port
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(())
        .unwrap();
        let message = switchboard_proto::v1::GetTaskRequest {
            id: tasks[i % 2].clone(),
            ..Default::default()
        }
        .encode_to_vec();
        let mut frame = vec![0];
        frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
        frame.extend_from_slice(&message);
        let (resp, mut send) = client.send_request(req, false).unwrap();
        send.send_data(Bytes::from(frame), true).unwrap();
        // Each call's outcome, read as it comes: the trailers of a refusal
        // need no window, an admitted answer's data never gets any.
        calls.push(tokio::spawn(async move {
            let resp = resp.await?;
            assert_eq!(resp.status(), 200, "gRPC answers are HTTP 200");
            let mut body = resp.into_body();
            match tokio::time::timeout(WITHIN, body.data()).await {
                Ok(Some(Err(e))) => return Err(e),
                Ok(None) => {}
                other => panic!("no data can come without window: {other:?}"),
            }
            let trailers = body.trailers().await?.unwrap_or_default();
            Ok(trailers
                .get("grpc-status")
                .map(|v| v.to_str().unwrap_or_default().to_string()))
        }));
    }
    let (mut unavailable, mut reset) = (0, 0);
    for call in calls {
        match call.await.unwrap() {
            Ok(status) => {
                assert_eq!(status.as_deref(), Some("14"), "a refusal is UNAVAILABLE");
                unavailable += 1;
            }
            Err(e) => {
                assert_eq!(e.reason(), Some(h2::Reason::CANCEL), "{e}");
                reset += 1;
            }
        }
    }
    println!("gRPC zero window: {unavailable} UNAVAILABLE, {reset} reset");
    assert_bounded(&s, before, "gRPC zero window");
    assert!(
        unavailable > 0,
        "the answers that do not fit end UNAVAILABLE"
    );
    assert!(
        reset > 0,
        "the admitted answers are reset after the write timeout"
    );
    until_served(&s, &tasks[0]).await;
    drop(client);
    connection.abort();
}

/// HTTP/1.1 connections that ask for a ~7 MB answer (more than the kernel
/// buffers on loopback) and then read no more than its first bytes.
/// Without a budget each holds its answer until the client goes away.
/// With it, the ones that do not fit are refused, and the admitted ones
/// are closed after the write timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http1_readers_that_stop_reading_are_refused_and_closed() {
    const CONNECTIONS: usize = 20;
    const CHARS: usize = 3_500_000;
    let s = serve(&[]);
    let id = big_task(&s, CHARS).await;
    let (before, _) = memory_mib(&s);

    let mut conns = Vec::new();
    for _ in 0..CONNECTIONS {
        let socket = TcpSocket::new_v4().unwrap();
        // A small receive window, so the kernel takes little of the answer.
        socket.set_recv_buffer_size(4096).unwrap();
        let mut c = socket
            .connect(([127, 0, 0, 1], s.port).into())
            .await
            .unwrap();
        let head =
            format!("GET /tasks/{id} HTTP/1.1\r\nhost: 127.0.0.1\r\na2a-version: 1.0\r\n\r\n");
        c.write_all(head.as_bytes()).await.unwrap();
        conns.push(c);
    }
    // Each answer's first bytes: its status line.
    let mut admitted = Vec::new();
    let mut refused = 0;
    let mut refused_conns = Vec::new();
    for mut c in conns {
        let mut first = vec![0; 512];
        let n = tokio::time::timeout(WITHIN, c.read(&mut first))
            .await
            .unwrap()
            .unwrap();
        let head = String::from_utf8_lossy(&first[..n]).to_string();
        if head.starts_with("HTTP/1.1 200") {
            admitted.push((c, n));
        } else {
            assert!(head.starts_with("HTTP/1.1 503"), "{head}");
            assert!(
                head.to_ascii_lowercase().contains("retry-after: 1"),
                "{head}"
            );
            refused += 1;
            refused_conns.push(c);
        }
    }
    println!(
        "HTTP/1.1 non-readers: {} admitted, {refused} refused",
        admitted.len()
    );
    assert_bounded(&s, before, "HTTP/1.1 non-readers");
    assert!(refused > 0, "the answers that do not fit are refused");
    assert!(!admitted.is_empty(), "the answers that fit are admitted");

    // Each admitted connection is closed by the server, though its client
    // reads nothing more (the refused ones are closed by their clients).
    drop(refused_conns);
    poll_until(
        WITHIN,
        Duration::from_millis(100),
        "the server closes the connections whose readers stalled",
        || open_connections(&s),
        // The one asking.
        |open| *open == 1,
    )
    .await;
    // Which gave their bytes back: the same answer is served again.
    until_served(&s, &id).await;
    // Each was closed before its answer was whole.
    for (mut c, mut read) in admitted {
        let mut rest = Vec::new();
        let end = tokio::time::timeout(WITHIN, c.read_to_end(&mut rest))
            .await
            .unwrap();
        // A close with unread data may arrive as a reset.
        read += end.map_or(rest.len(), |n| n);
        assert!(
            read < 2 * CHARS,
            "a stalled answer is cut off: {read} bytes came"
        );
    }
}

/// Many clients each send most of a 3 MB request body and pause: without
/// a budget the server buffers all of them (30 × 2.5 MB, and more while
/// they are collected). With it, the bodies whose bytes do not fit are
/// refused with 503, the JSON-RPC error and `Retry-After`, and the admitted
/// ones, completed, are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_large_bodies_are_refused_over_the_budget() {
    const CLIENTS: usize = 30;
    const SENT_FIRST: usize = 2_500_000;
    // Long enough that the paused bodies are not cut off for their rate.
    let s = serve(&["--body-read-timeout-ms", "120000"]);
    let (before, _) = memory_mib(&s);
    let body = json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "SendMessage",
        "params": send_params(&"b".repeat(3_000_000)),
    })
    .to_string()
    .into_bytes();
    let head = format!(
        "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         a2a-version: 1.0\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );

    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).await.unwrap();
        c.write_all(head.as_bytes()).await.unwrap();
        // The server may refuse (and close) while this is being written.
        let _ = c.write_all(&body[..SENT_FIRST]).await;
        clients.push(tokio::spawn(answer_of(c)));
    }
    // Every client whose bytes did not fit gets its refusal, while the
    // others wait for the rest of their bodies. The budget holds at most
    // BUDGET / SENT_FIRST of them.
    let most_admitted = BUDGET / SENT_FIRST;
    let refusals = poll_until(
        WITHIN,
        Duration::from_millis(100),
        "the bodies that do not fit are refused",
        || async { clients.iter().filter(|c| c.is_finished()).count() },
        |refused| *refused >= CLIENTS - most_admitted,
    )
    .await;
    println!("large bodies: {refusals} refused of {CLIENTS}");
    assert_bounded(&s, before, "large bodies");
    let mut waiting = Vec::new();
    for client in clients {
        if client.is_finished() {
            let (status, headers, text) = client.await.unwrap().unwrap();
            assert_eq!(status, 503, "{headers}\n{text}");
            assert!(headers.contains("retry-after: 1"), "{headers}");
            let error: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(error["error"]["code"], -31429, "{text}");
        } else {
            waiting.push(client);
        }
    }
    assert!(!waiting.is_empty(), "the bodies that fit are admitted");
    // Their clients go away, and with them the bytes they held.
    for client in waiting {
        client.abort();
    }
    // With the paused bodies gone, a whole one is served.
    let text = "c".repeat(3_000_000);
    let served = poll_until(
        WITHIN,
        Duration::from_millis(100),
        "a large body is served once the paused ones are gone",
        || async {
            proc::call(&s.base(), "SendMessage", send_params(&text))
                .await
                .get("result")
                .is_some()
        },
        |served| *served,
    )
    .await;
    assert!(served);
}

/// The server's `switchboard_open_connections`, asked on a connection of
/// its own (which counts).
async fn open_connections(s: &Serve) -> u64 {
    let text = reqwest::get(format!("{}/metrics", s.base()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("switchboard_open_connections "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no switchboard_open_connections in\n{text}"))
}

/// Reads one HTTP/1.1 answer to its end (the server closes after a
/// refusal): status, lower-cased head, body.
async fn answer_of(mut c: TcpStream) -> std::io::Result<(u16, String, String)> {
    let mut all = Vec::new();
    // Closing with the rest of the body unread, the server's kernel may
    // reset the connection: what came before the reset is the answer.
    let _ = c.read_to_end(&mut all).await;
    let all = String::from_utf8_lossy(&all).to_string();
    let (head, body) = all.split_once("\r\n\r\n").unwrap_or((&all, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, head.to_ascii_lowercase(), body.to_string()))
}
