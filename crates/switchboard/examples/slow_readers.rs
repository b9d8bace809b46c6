//! The slow-reader and many-bodies attacks of `bench/slow_readers.sh`,
//! against a `serve` on 127.0.0.1 (loopback only):
//!
//! ```text
//! slow_readers task PORT CHARS                  # prints the id of a task holding CHARS characters twice
//! slow_readers h2-zero-window PORT STREAMS HOLD_S ID...   # one HTTP/2 connection, window 0
//! slow_readers h1-no-read PORT CONNS HOLD_S ID            # HTTP/1.1 connections that never read
//! slow_readers bodies PORT CLIENTS BYTES                  # concurrent large bodies, one address
//! slow_readers latency PORT SECONDS                       # a normal client: small SendMessage calls
//! ```
//!
//! Each attack prints one line of what the server answered; `latency`
//! prints the median and p99 of its calls in milliseconds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

fn send_body(text: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {
            "role": "ROLE_USER",
            "messageId": uuid::Uuid::new_v4().to_string(),
            "parts": [{"text": text}],
        }},
    })
    .to_string()
}

/// One JSON-RPC POST on `c` (kept alive); the answer's status and body.
async fn post(c: &mut TcpStream, body: &str) -> (u16, Vec<u8>) {
    let head = format!(
        "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         a2a-version: 1.0\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).await.unwrap();
    c.write_all(body.as_bytes()).await.unwrap();
    read_answer(c).await
}

/// Reads one HTTP/1.1 answer with a `content-length`.
async fn read_answer(c: &mut TcpStream) -> (u16, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = c.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed before the head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = c.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed in the body");
        buf.extend_from_slice(&chunk[..n]);
    }
    (status, buf[head_end..head_end + len].to_vec())
}

async fn task(port: u16, chars: usize) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (status, body) = post(&mut c, &send_body(&"m".repeat(chars))).await;
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status, 200, "{v}");
    println!("{}", v["result"]["task"]["id"].as_str().unwrap());
}

async fn h2_zero_window(port: u16, streams: usize, hold: Duration, ids: &[String]) {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (client, conn) = h2::client::Builder::new()
        .initial_window_size(0)
        .max_concurrent_reset_streams(streams)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let connection = tokio::spawn(conn);
    let mut answers = Vec::new();
    for i in 0..streams {
        let mut client = client.clone().ready().await.unwrap();
        let req = http::Request::get(format!(
            "http://127.0.0.1:{port}/tasks/{}",
            ids[i % ids.len()]
        ))
        .header("a2a-version", "1.0")
        .body(())
        .unwrap();
        let (resp, _) = client.send_request(req, true).unwrap();
        answers.push(tokio::spawn(async move {
            let resp = resp.await?;
            let status = resp.status().as_u16();
            let mut body = resp.into_body();
            // Waits for data that never comes (no window), or the reset.
            let reset = match tokio::time::timeout(hold, body.data()).await {
                Ok(Some(Err(e))) => e.reason().is_some(),
                _ => false,
            };
            Ok::<_, h2::Error>((status, reset))
        }));
    }
    let (mut ok, mut refused, mut reset, mut other) = (0, 0, 0, 0);
    for a in answers {
        match a.await.unwrap() {
            Ok((status, was_reset)) => {
                match status {
                    200 => ok += 1,
                    503 => refused += 1,
                    _ => other += 1,
                }
                reset += usize::from(was_reset);
            }
            Err(e) => {
                if other == 0 {
                    eprintln!("first error: {e}");
                }
                other += 1;
            }
        }
    }
    println!(
        "h2 zero window: {streams} streams: {ok} × 200, {refused} × 503, {other} other; {reset} reset by the server within {hold:?}"
    );
    drop(client);
    connection.abort();
}

async fn h1_no_read(port: u16, conns: usize, hold: Duration, id: &str) {
    let mut open = Vec::new();
    for _ in 0..conns {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut c = socket.connect(([127, 0, 0, 1], port).into()).await.unwrap();
        let head =
            format!("GET /tasks/{id} HTTP/1.1\r\nhost: 127.0.0.1\r\na2a-version: 1.0\r\n\r\n");
        c.write_all(head.as_bytes()).await.unwrap();
        open.push(c);
    }
    tokio::time::sleep(hold).await;
    // What came: a refusal is whole; an admitted answer was cut off if
    // fewer bytes came than it has.
    let mut statuses = std::collections::BTreeMap::new();
    for mut c in open {
        let mut all = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut all)).await;
        let status = String::from_utf8_lossy(&all[..all.len().min(12)]).to_string();
        *statuses.entry(status).or_insert(0) += 1;
    }
    println!("h1 never read: {conns} connections, first bytes after {hold:?}: {statuses:?}");
}

async fn bodies(port: u16, clients: usize, bytes: usize) {
    let text = "b".repeat(bytes.saturating_sub(200));
    let body = std::sync::Arc::new(send_body(&text));
    let mut all = Vec::new();
    for _ in 0..clients {
        let body = body.clone();
        all.push(tokio::spawn(async move {
            let mut c = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
            let head = format!(
                "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
                 a2a-version: 1.0\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            c.write_all(head.as_bytes()).await.ok()?;
            let _ = c.write_all(body.as_bytes()).await;
            let mut answer = Vec::new();
            let _ = c.read_to_end(&mut answer).await;
            let status = String::from_utf8_lossy(&answer[..answer.len().min(12)]).to_string();
            Some(status)
        }));
    }
    let mut statuses = std::collections::BTreeMap::new();
    for a in all {
        let status = a.await.unwrap().unwrap_or_else(|| "connect failed".into());
        *statuses.entry(status).or_insert(0) += 1;
    }
    println!("bodies: {clients} × {bytes} B: {statuses:?}");
}

async fn latency(port: u16, seconds: u64) {
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut took = Vec::new();
    let mut failed = 0;
    let mut c = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    while Instant::now() < end {
        let start = Instant::now();
        let (status, _) = post(&mut c, &send_body("hello")).await;
        took.push(start.elapsed().as_secs_f64() * 1000.0);
        if status != 200 {
            failed += 1;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    took.sort_by(f64::total_cmp);
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    println!(
        "normal client: {} calls, {failed} failed, median {:.1} ms, p99 {:.1} ms",
        took.len(),
        at(0.5),
        at(0.99)
    );
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port: u16 = args[1].parse().unwrap();
    let n = |i: usize| -> usize { args[i].parse().unwrap() };
    match args[0].as_str() {
        "task" => task(port, n(2)).await,
        "h2-zero-window" => {
            h2_zero_window(port, n(2), Duration::from_secs(n(3) as u64), &args[4..]).await;
        }
        "h1-no-read" => h1_no_read(port, n(2), Duration::from_secs(n(3) as u64), &args[4]).await,
        "bodies" => bodies(port, n(2), n(3)).await,
        "latency" => latency(port, n(2) as u64).await,
        other => panic!("unknown mode {other}"),
    }
}
