//! A scripted OpenAI-compatible Chat Completions server on 127.0.0.1: a
//! stand-in for a remote model. Each request takes the next [`Reply`] of
//! the script (a 500 once it runs out) and is recorded; streams are
//! `data: {json}` events as the real servers send them.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::{Value, json};

/// What the server does with one request.
pub enum Reply {
    /// 200 with these chunks as `data:` events, then `data: [DONE]`.
    Stream(Vec<Value>),
    /// This status (with `Retry-After`, if given) and a JSON error body.
    Status(u16, Option<&'static str>),
    /// 200, these chunks, then the connection broken (no `[DONE]`).
    Cut(Vec<Value>),
    /// 200, these chunks, then silence until the client goes away.
    Hang(Vec<Value>),
}

#[derive(Clone, Default)]
struct Shared {
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Value>>>,
    /// Each request's `Authorization` header.
    authorization: Arc<Mutex<Vec<Option<String>>>>,
    /// Streams whose client went away (their body was dropped unfinished).
    closed: Arc<AtomicUsize>,
}

/// The running server.
pub struct Model {
    /// `http://127.0.0.1:PORT/v1`, a `base_url`.
    pub base_url: String,
    shared: Shared,
}

impl Model {
    pub async fn start(script: Vec<Reply>) -> Model {
        let shared = Shared {
            script: Arc::new(Mutex::new(script.into())),
            ..Shared::default()
        };
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Model {
            base_url: format!("http://{addr}/v1"),
            shared,
        }
    }

    /// The request bodies so far.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Each request's `Authorization` header.
    pub fn authorization(&self) -> Vec<Option<String>> {
        self.shared.authorization.lock().unwrap().clone()
    }

    /// Hanging streams whose client went away.
    pub fn closed(&self) -> usize {
        self.shared.closed.load(Ordering::SeqCst)
    }

    /// Waits (polling, up to 20 s) until `n` hanging streams were closed by the client.
    pub async fn wait_closed(&self, n: usize) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while self.closed() < n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the client never closed the stream"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

struct Closed(Arc<AtomicUsize>);

impl Drop for Closed {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn events(chunks: Vec<Value>) -> Vec<Result<Bytes, std::io::Error>> {
    chunks
        .into_iter()
        .map(|c| Ok(Bytes::from(format!("data: {c}\n\n"))))
        .collect()
}

async fn chat(
    State(shared): State<Shared>,
    headers: axum::http::HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    shared.requests.lock().unwrap().push(body.0);
    shared.authorization.lock().unwrap().push(
        headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    );
    let reply = shared.script.lock().unwrap().pop_front();
    let sse = [("content-type", "text/event-stream")];
    match reply {
        None => (StatusCode::INTERNAL_SERVER_ERROR, "script exhausted").into_response(),
        Some(Reply::Status(status, retry_after)) => {
            let mut response = (
                StatusCode::from_u16(status).unwrap(),
                axum::Json(json!({"error": {"message": format!("scripted {status}")}})),
            )
                .into_response();
            if let Some(after) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", after.parse().unwrap());
            }
            response
        }
        Some(Reply::Stream(chunks)) => {
            let mut items = events(chunks);
            items.push(Ok(Bytes::from_static(b"data: [DONE]\n\n")));
            (sse, Body::from_stream(futures::stream::iter(items))).into_response()
        }
        Some(Reply::Cut(chunks)) => {
            // The break comes after a pause, so the chunks before it are
            // written first (the server writes when the body is pending).
            let cut = futures::stream::once(async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                Err(std::io::Error::other("scripted cut"))
            });
            let stream = futures::stream::iter(events(chunks)).chain(cut);
            (sse, Body::from_stream(stream)).into_response()
        }
        Some(Reply::Hang(chunks)) => {
            let guard = Closed(shared.closed.clone());
            let stream = futures::stream::iter(events(chunks))
                .chain(futures::stream::pending())
                .map(move |item| {
                    let _ = &guard;
                    item
                });
            (sse, Body::from_stream(stream)).into_response()
        }
    }
}

/// A chunk with a content delta.
pub fn content(text: &str) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
}

/// A chunk with a reasoning delta (`reasoning_content`, as DeepSeek and vLLM write it).
pub fn reasoning(text: &str) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"reasoning_content": text}, "finish_reason": null}]})
}

/// The chunk that ends the answer.
pub fn finish(reason: &str) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// The usage chunk (`stream_options.include_usage`): no choices.
pub fn usage(prompt: u64, completion: u64) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
}

/// A tool-call delta: the first one of a call carries its id and name.
pub fn tool_call(index: u64, id: Option<&str>, name: Option<&str>, arguments: &str) -> Value {
    let mut call = json!({"index": index, "function": {"arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": null}]})
}

/// A whole answer streamed as these content pieces.
pub fn answer(pieces: &[&str]) -> Reply {
    let mut chunks: Vec<Value> = pieces.iter().map(|p| content(p)).collect();
    chunks.push(finish("stop"));
    chunks.push(usage(10, pieces.len() as u64));
    Reply::Stream(chunks)
}
