//! A scripted HTTP server for wire-level client tests: a few lines of tokio
//! on 127.0.0.1 that read one HTTP/1.1 request per connection (headers,
//! then `Content-Length` bytes), record it, and write the canned reply the
//! test chose, then close the connection (which also ends an SSE body).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Names in lower case.
    pub headers: HashMap<String, String>,
    /// The JSON body; `Null` when there is none (or it is not JSON).
    pub body: Value,
}

impl Seen {
    /// A header by name, in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// What the server answers.
pub enum Reply {
    /// A complete response.
    Http {
        status: u16,
        content_type: &'static str,
        body: String,
    },
    /// Never answer (for timeouts).
    Hang,
}

/// A complete response: status, content type, body.
impl From<(u16, &'static str, String)> for Reply {
    fn from((status, content_type, body): (u16, &'static str, String)) -> Reply {
        Reply::Http {
            status,
            content_type,
            body,
        }
    }
}

/// Every request the server saw, in order.
pub type Log = Arc<Mutex<Vec<Seen>>>;

/// Starts the scripted server; returns its base URL and the request log.
pub async fn serve<R: Into<Reply>>(
    handler: impl Fn(&Seen) -> R + Send + Sync + 'static,
) -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let handler = Arc::new(handler);
    let log2 = log.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            let log = log2.clone();
            tokio::spawn(async move {
                let Some(seen) = read_request(&mut sock).await else {
                    return;
                };
                log.lock().unwrap().push(seen.clone());
                match handler(&seen).into() {
                    Reply::Hang => {
                        // Holds the connection open without a word.
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                    Reply::Http {
                        status,
                        content_type,
                        body,
                    } => {
                        let head = format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = sock.write_all(head.as_bytes()).await;
                        let _ = sock.write_all(body.as_bytes()).await;
                        let _ = sock.shutdown().await;
                    }
                }
            });
        }
    });
    (base, log)
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let header_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&buf[header_end..]).unwrap_or(Value::Null);
    Some(Seen {
        method,
        target,
        headers,
        body,
    })
}
