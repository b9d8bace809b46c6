//! `A2aServer::ops` on a real socket: the probes, `/metrics` counting the
//! A2A calls served, and the request id echoed (or made) on every answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 exchange on a fresh connection: the status line, the
/// headers (lowercased names) and the body.
async fn exchange(
    addr: std::net::SocketAddr,
    request: &str,
) -> (u16, Vec<(String, String)>, String) {
    let mut conn = tokio::net::TcpStream::connect(addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        conn.read_to_end(&mut raw),
    )
    .await
    .expect("the server answers and closes")
    .unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    (status, headers, body.to_string())
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn ops_serves_probes_metrics_and_request_ids() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = common::echo_server()
        .public_url(format!("http://{addr}"))
        .ops();
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    let serving = tokio::spawn(server.serve(listener, async move { stopped.cancelled().await }));

    let get = |path: &str, extra: &str| {
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n")
    };
    let (status, _, body) = exchange(addr, &get("/healthz", "")).await;
    assert_eq!((status, body.contains("\"ok\"")), (200, true), "{body}");
    let (status, _, body) = exchange(addr, &get("/readyz", "")).await;
    assert_eq!((status, body.contains("\"ok\"")), (200, true), "{body}");

    // An A2A call, with a request id of the caller's: echoed back.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
    let post = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n\
         X-Request-Id: caller-id-1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{call}",
        call.len()
    );
    let (status, headers, body) = exchange(addr, &post).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(header(&headers, "x-request-id"), Some("caller-id-1"));
    // A request without one gets a new id; an insane one is replaced.
    let (_, headers, _) = exchange(addr, &get("/healthz", "X-Request-Id: a b\r\n")).await;
    let made = header(&headers, "x-request-id").unwrap();
    assert!(made.len() == 36 && made != "a b", "{made}");

    let (status, headers, body) = exchange(addr, &get("/metrics", "")).await;
    assert_eq!(status, 200);
    assert!(
        header(&headers, "content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(
        body.lines()
            .any(|l| l.starts_with("switchboard_requests_total{")
                && l.contains("operation=\"SendMessage\"")
                && l.contains("binding=\"jsonrpc\"")),
        "the SendMessage call is counted:\n{body}"
    );

    stop.cancel();
    serving.await.unwrap().unwrap();
}

#[tokio::test]
async fn without_ops_the_probes_are_not_served() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = common::echo_server().public_url(format!("http://{addr}"));
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    let serving = tokio::spawn(server.serve(listener, async move { stopped.cancelled().await }));
    let (status, headers, _) = exchange(
        addr,
        &format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(header(&headers, "x-request-id"), None);
    stop.cancel();
    serving.await.unwrap().unwrap();
}
