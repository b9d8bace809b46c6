//! What the bridge tests share: a scripted agent hosted on a loopback
//! port, the bridge's router on another, and a reader of its answers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_agui::events::{Event, EventKind, Message as AguiMessage};
use switchboard_agui::proto::ProtoDecoder;
use switchboard_agui::sse::SseDecoder;
use switchboard_agui::{hitl::FORM_RESPONSE_TYPE, hitl::FORM_TYPE};
use switchboard_bridge::endpoint::{EndpointConfig, router};
use switchboard_bridge::{BackendFactory, RemoteBackend};
use switchboard_client::A2AClient;
use switchboard_core::{RequestHandler, agent_fn};
use switchboard_protocol::{AgentCard, Message, Part, PartContent, Role, TaskState, TaskStatus};
use switchboard_server::A2aServer;
use tokio::sync::Notify;

pub use switchboard_agui::run::RunEvents;

/// The AG-UI ids every test input uses: the agent must never see them.
pub const THREAD_ID: &str = "thread-SECRET-7f3a";
pub const RUN_ID: &str = "run-SECRET-91bc";

/// What the scripted agent saw and the switches a test pulls.
#[derive(Default)]
pub struct Script {
    /// Every message the agent received (`RequestContext::message`), in order.
    pub received: Mutex<Vec<Message>>,
    /// `/slow` waits for this after its first chunk.
    pub release: Notify,
    /// `/slow` signals this once its first chunk is out.
    pub reached: Notify,
}

impl Script {
    pub fn received(&self) -> Vec<Message> {
        self.received.lock().unwrap().clone()
    }
}

/// The scripted agent, by the first word of a new task's text:
/// - `/text`: a direct reply (no task);
/// - `/stream`: working, an artifact in two chunks, completed with a text;
/// - `/slow`: a first chunk, then waits for [`Script::release`], a second
///   chunk, completed;
/// - `/approve`: input-required with a question and an `a2a.hitl.form`;
///   the answer completes it with the values it got;
/// - `/ask`: input-required (plain question); any answer completes it;
/// - `/fail`: failed;
/// - `/silent`: working, then nothing until released;
/// - `/big N`: one artifact event of N MiB of text, completed.
pub fn scripted_handler(script: Arc<Script>) -> RequestHandler {
    let agent = agent_fn(move |ctx, events| {
        let script = script.clone();
        async move {
            script.received.lock().unwrap().push(ctx.message.clone());
            if ctx.is_follow_up() {
                let answer = ctx.message.parts.iter().find_map(|p| match &p.content {
                    PartContent::Data(d) if d["type"] == FORM_RESPONSE_TYPE => {
                        Some(d["values"].clone())
                    }
                    _ => None,
                });
                match answer {
                    Some(values) => events.complete_with(format!("approved: {values}")).await?,
                    None => events.complete_with(format!("got: {}", ctx.text())).await?,
                }
                return Ok(());
            }
            let text = ctx.text();
            match text.split_whitespace().next().unwrap_or("") {
                "/text" => events.reply_text("hello from the agent").await?,
                "/stream" => {
                    events.working("writing").await?;
                    let mut w = events.artifact_writer("story");
                    w.append(Part::text("Once upon ")).await?;
                    w.finish(Part::text("a time.")).await?;
                    events.complete_with("the end").await?;
                }
                "/slow" => {
                    events.working("writing slowly").await?;
                    let mut w = events.artifact_writer("slow");
                    w.append(Part::text("part one;")).await?;
                    script.reached.notify_one();
                    script.release.notified().await;
                    w.finish(Part::text("part two.")).await?;
                    events.complete().await?;
                }
                "/approve" => {
                    let question = Message::new(
                        Role::Agent,
                        vec![
                            Part::text("Approve the transfer?"),
                            Part::data(json!({
                                "type": FORM_TYPE, "formId": "f1", "title": "Approve?",
                                "fields": [{"name": "approved", "type": "boolean"}]
                            })),
                        ],
                    );
                    events
                        .status(
                            TaskStatus::new(TaskState::InputRequired).with_message(question),
                            None,
                        )
                        .await?;
                }
                "/big" => {
                    // One artifact event of N MiB of text.
                    let mib: usize = text
                        .split_whitespace()
                        .nth(1)
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(1);
                    let w = events.artifact_writer("big");
                    w.finish(Part::text("y".repeat(mib << 20))).await?;
                    events.complete().await?;
                }
                "/ask" => events.ask("what next?").await?,
                "/fail" => events.fail("the agent broke").await?,
                "/silent" => {
                    events.working("thinking").await?;
                    script.release.notified().await;
                    events.complete().await?;
                }
                _ => events.complete_with("?").await?,
            }
            Ok(())
        }
    });
    let card = AgentCard::new("scripted", "a scripted test agent", "1").with_streaming(true);
    RequestHandler::builder(agent, card).build()
}

/// Serves `router` on a loopback port; returns its address.
pub async fn serve(router: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    serve_on(listener, router);
    addr
}

fn serve_on(listener: tokio::net::TcpListener, router: axum::Router) {
    tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
}

/// Hosts `handler` as an A2A server on its own port (its card names that
/// port, so the client's discovery works); returns a client for it.
pub async fn host(handler: RequestHandler) -> A2AClient {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = A2aServer::new(handler).public_url(format!("http://{addr}"));
    serve_on(listener, server.router());
    A2AClient::connect(&format!("http://{addr}")).await.unwrap()
}

/// The scripted agent on its own port, and an A2A client for it.
pub async fn agent(script: Arc<Script>) -> (RequestHandler, A2AClient) {
    let handler = scripted_handler(script);
    let client = host(handler.clone()).await;
    (handler, client)
}

/// The bridge in front of `factory`, on its own port.
pub async fn bridge(factory: impl BackendFactory, config: EndpointConfig) -> Bridge {
    let addr = serve(router(factory, config)).await;
    // reqwest is built without a TLS provider of its own.
    switchboard_client::tls::install_default_provider();
    Bridge {
        url: format!("http://{addr}/agui"),
        http: reqwest::Client::new(),
    }
}

/// The scripted agent and the bridge in front of it (remote backend).
pub async fn setup() -> (Arc<Script>, A2AClient, Bridge) {
    let script = Arc::new(Script::default());
    let (_, client) = agent(script.clone()).await;
    let bridge = bridge(RemoteBackend::new(client.clone()), fast_config()).await;
    (script, client, bridge)
}

/// Short keep-alives and agent timeout, so failures show up fast.
pub fn fast_config() -> EndpointConfig {
    let mut config = EndpointConfig {
        keep_alive: Duration::from_millis(200),
        ..EndpointConfig::default()
    };
    config.run.agent_timeout = Duration::from_secs(5);
    config
}

pub struct Bridge {
    pub url: String,
    pub http: reqwest::Client,
}

/// A bridge's answer: status, headers and the decoded events.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub cache_control: String,
    pub body: Vec<u8>,
    pub events: Vec<Event>,
}

impl RunEvents for Answer {
    fn events(&self) -> &[Event] {
        &self.events
    }
}

impl Answer {
    /// Checks the official client's ordering rules and the bridge's own:
    /// RUN_STARTED first, exactly one terminal event, last.
    pub fn verified(self) -> Self {
        assert!(
            matches!(
                self.events.first().map(|e| &e.kind),
                Some(EventKind::RunStarted(_))
            ),
            "{:?}",
            self.types()
        );
        self.check_ended().unwrap();
        self
    }

    /// Asserts that the run ended in a RUN_ERROR with `code`; returns its
    /// message.
    pub fn run_error(&self, code: &str) -> String {
        let (got, message) = self
            .error()
            .unwrap_or_else(|| panic!("no RUN_ERROR: {:?}", self.types()));
        assert_eq!(got, code, "{message}");
        message
    }

    /// Asserts a RUN_ERROR with `code` whose message contains `part`.
    pub fn assert_run_error(&self, code: &str, part: &str) {
        let message = self.run_error(code);
        assert!(message.contains(part), "{message}");
    }

    /// The first MESSAGES_SNAPSHOT's messages.
    pub fn messages_snapshot(&self) -> Option<&[AguiMessage]> {
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::MessagesSnapshot(s) => Some(s.messages.as_slice()),
            _ => None,
        })
    }

    /// The first STATE_SNAPSHOT's document.
    pub fn state_snapshot(&self) -> Option<&Value> {
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::StateSnapshot(s) => Some(&s.snapshot),
            _ => None,
        })
    }
}

/// The id of the task a state document describes: the serve-side shape
/// (`/a2a/taskId`) or the bridge view (`/view/tasksById`).
pub fn task_id_in(state: &Value) -> Option<String> {
    if let Some(id) = state.pointer("/a2a/taskId").and_then(Value::as_str) {
        return Some(id.to_owned());
    }
    state
        .pointer("/view/tasksById")
        .and_then(Value::as_object)
        .and_then(|m| m.keys().next().cloned())
}

/// A `RunAgentInput` with the test ids, `messages` and `forwarded_props`.
pub fn input(messages: Value, forwarded: Value) -> Value {
    json!({
        "threadId": THREAD_ID,
        "runId": RUN_ID,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": forwarded,
    })
}

pub fn user(id: &str, text: &str) -> Value {
    json!({"id": id, "role": "user", "content": text})
}

impl Bridge {
    /// POSTs `body` as JSON and reads the whole SSE answer.
    pub async fn run(&self, body: &Value) -> Answer {
        self.post(body.to_string(), "application/json", None).await
    }

    /// Runs [`input`]`(messages, forwarded)`; its answer must pass
    /// [`Answer::verified`].
    pub async fn run_verified(&self, messages: Value, forwarded: Value) -> Answer {
        self.run(&input(messages, forwarded)).await.verified()
    }

    /// Runs one user message (id `u1`) saying `text`; the answer is verified.
    pub async fn say(&self, text: &str, forwarded: Value) -> Answer {
        self.run_verified(json!([user("u1", text)]), forwarded)
            .await
    }

    /// Reconnects to `task_id` in `mode` (no new message); the answer is
    /// verified.
    pub async fn reconnect(&self, mode: &str, task_id: &str) -> Answer {
        let forwarded = json!({"a2a": {"mode": mode, "taskId": task_id}});
        self.run_verified(json!([]), forwarded).await
    }

    pub async fn post(&self, body: String, content_type: &str, accept: Option<&str>) -> Answer {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", content_type)
            .body(body);
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        let response = tokio::time::timeout(Duration::from_secs(30), request.send())
            .await
            .expect("the bridge answers")
            .unwrap();
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default()
        };
        let content_type = header("content-type");
        let cache_control = header("cache-control");
        let body = tokio::time::timeout(Duration::from_secs(30), response.bytes())
            .await
            .expect("the run ends")
            .unwrap()
            .to_vec();
        let events = if status != 200 {
            Vec::new()
        } else if content_type == switchboard_agui::sse::PROTO_MEDIA_TYPE {
            let mut decoder = ProtoDecoder::new();
            let events = decoder.push(&body).unwrap();
            assert!(decoder.is_idle());
            events
        } else {
            let mut decoder = SseDecoder::new();
            let events = decoder.push(&body).unwrap();
            assert!(decoder.is_idle());
            events.into_iter().map(|e| e.event).collect()
        };
        Answer {
            status,
            content_type,
            cache_control,
            body,
            events,
        }
    }
}

/// Asserts that nothing the agent received carries the AG-UI run's ids.
pub fn assert_no_agui_ids(script: &Script) {
    let received = script.received();
    assert!(!received.is_empty());
    for m in received {
        let json = serde_json::to_string(&m).unwrap();
        assert!(!json.contains(THREAD_ID), "threadId leaked: {json}");
        assert!(!json.contains(RUN_ID), "runId leaked: {json}");
    }
}
