//! One trace across three processes: this test's client → `serve` A (the
//! relay agent) → `serve` B (echo), exported over OTLP/gRPC to a receiver
//! in this test (the OTLP `TraceService`, opentelemetry-proto's generated
//! server, on a loopback port).
//!
//! Checked: every span shares the client's trace id, and the parent links
//! go client call → A's request → A's agent run → A's client call → B's
//! request → B's agent run; a gRPC call carries `traceparent` as metadata
//! the same way; and a push delivery is the child of the agent run that
//! committed its event, its `traceparent` header naming the delivery span.
//! A second test exports over OTLP/HTTP (`http/protobuf`) instead.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use proc::Serve;
use serde_json::json;
use switchboard_client::A2AClient;
use switchboard_client::protocol::SendMessageResponse;
use switchboard_telemetry::otel::OtelConfig;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// One exported span, flattened.
#[derive(Debug, Clone)]
struct Span {
    service: String,
    name: String,
    /// Ids as lowercase hex, as `traceparent` writes them.
    trace_id: String,
    span_id: String,
    parent: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The in-test OTLP collector: keeps every span it is sent.
#[derive(Debug, Clone, Default)]
struct Receiver {
    spans: Arc<Mutex<Vec<Span>>>,
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.record(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Receiver {
    /// Keeps the spans of one export, flattened.
    fn record(&self, request: ExportTraceServiceRequest) {
        let mut spans = self.spans.lock().unwrap();
        for rs in request.resource_spans {
            let service = rs
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| kv.value.as_ref()?.value.as_ref())
                .map(|v| match v {
                    any_value::Value::StringValue(s) => s.clone(),
                    other => format!("{other:?}"),
                })
                .unwrap_or_default();
            for ss in rs.scope_spans {
                for s in ss.spans {
                    spans.push(Span {
                        service: service.clone(),
                        name: s.name,
                        trace_id: hex(&s.trace_id),
                        span_id: hex(&s.span_id),
                        parent: hex(&s.parent_span_id),
                    });
                }
            }
        }
    }

    async fn start(self) -> String {
        let router = tonic::service::Routes::new(TraceServiceServer::new(self)).into_axum_router();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        url
    }

    /// The same collector over OTLP/HTTP: `POST /v1/traces` with a
    /// protobuf body; returns the base URL (the exporter appends the route).
    async fn start_http(self) -> String {
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(
                move |headers: axum::http::HeaderMap, body: axum::body::Bytes| async move {
                    assert_eq!(
                        headers.get("content-type").and_then(|v| v.to_str().ok()),
                        Some("application/x-protobuf")
                    );
                    let request = <ExportTraceServiceRequest as prost::Message>::decode(body)
                        .expect("an OTLP protobuf body");
                    self.record(request);
                    (
                        [("content-type", "application/x-protobuf")],
                        prost::Message::encode_to_vec(&ExportTraceServiceResponse::default()),
                    )
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    fn snapshot(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }

    /// The one span of `service` named `name` (with `pred`), waiting for
    /// it to be exported (a condition polled with a deadline).
    async fn find(&self, service: &str, name: &str, pred: impl Fn(&Span) -> bool) -> Span {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let found: Vec<Span> = self
                .snapshot()
                .into_iter()
                .filter(|s| s.service == service && s.name == name && pred(s))
                .collect();
            if let [one] = found.as_slice() {
                return one.clone();
            }
            assert!(
                found.len() < 2,
                "{service}/{name}: more than one: {found:#?}"
            );
            assert!(
                Instant::now() < deadline,
                "no {service}/{name} exported; got {:#?}",
                self.snapshot()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// `serve`'s arguments for the echo agent.
const ECHO: &[&str] = &["--agent", "echo-task"];

/// `serve` on a memory store with `args`, exporting its spans to the
/// collector at `endpoint` as `service`, with the OTel settings `env` on
/// top; its log is `<dir>/<service>.log`.
fn traced_serve(
    endpoint: &str,
    service: &str,
    args: &[&str],
    env: &[(&str, &str)],
    dir: &std::path::Path,
) -> Serve {
    let mut vars = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
        ("OTEL_SERVICE_NAME", service),
    ];
    vars.extend_from_slice(env);
    Serve::start_env("memory", args, &vars, &dir.join(format!("{service}.log")))
}

#[tokio::test(flavor = "multi_thread")]
async fn client_to_a_to_b_is_one_trace() {
    let receiver = Receiver::default();
    let endpoint = receiver.clone().start().await;
    let dir = tempfile::tempdir().unwrap();
    let echo_pushing = ["--agent", "echo-task", "--push-allow-host", "127.0.0.1"];
    let mut b = traced_serve(&endpoint, "agent-b", &echo_pushing, &[], dir.path());
    let mut a = traced_serve(&endpoint, "agent-a", &["--agent", "relay"], &[], dir.path());

    // This process is the client, traced into the same receiver.
    let (otel, layer) =
        switchboard_telemetry::otel::init(&OtelConfig::new(&endpoint, "client")).unwrap();
    tracing_subscriber::registry().with(layer).init();

    let root = tracing::info_span!("test.root");
    let answer = async {
        let client = A2AClient::connect(&a.base()).await.unwrap();
        client
            .send_text(format!("{} hello trace", b.base()))
            .await
            .unwrap()
    }
    .instrument(root.clone())
    .await;
    match answer {
        SendMessageResponse::Message(m) => assert_eq!(m.text(), "hello trace"),
        other => panic!("the relay answers with a message: {other:?}"),
    }
    // gRPC: the same context travels as metadata.
    let grpc = async {
        let client = A2AClient::builder()
            .preferred_bindings(["GRPC"])
            .connect(&b.base())
            .await
            .unwrap();
        assert_eq!(client.interface().protocol_binding, "GRPC");
        client.send_text("over grpc").await.unwrap()
    };
    grpc.instrument(tracing::info_span!("test.grpc")).await;
    // A push delivery, from B's agent run.
    // A webhook that reports the `traceparent` of each notification.
    let (hook, mut pushed) = proc::webhook(|headers, _| {
        let tp = headers.get("traceparent").and_then(|v| v.to_str().ok());
        tp.map(str::to_string)
    })
    .await;
    let push_call = async {
        let client = A2AClient::connect(&b.base()).await.unwrap();
        client
            .call(switchboard_client::protocol::A2aRequest::SendMessage(
                serde_json::from_value(json!({
                    "message": {"role": "ROLE_USER", "messageId": "p1", "parts": [{"text": "pushed"}]},
                    "configuration": {"taskPushNotificationConfig": {"url": hook}}
                }))
                .unwrap(),
            ))
            .await
            .unwrap()
    };
    push_call.instrument(tracing::info_span!("test.push")).await;
    let delivered_tp = tokio::time::timeout(Duration::from_secs(20), pushed.recv())
        .await
        .expect("a notification arrives")
        .unwrap()
        .expect("the notification carries traceparent");

    drop(root);
    otel.shutdown().await;
    // SIGTERM: each server flushes its batched spans on the way out.
    assert!(a.terminate(Duration::from_secs(20)), "{}", a.log());
    assert!(b.terminate(Duration::from_secs(20)), "{}", b.log());

    let any = |_: &Span| true;
    let test_root = receiver.find("client", "test.root", any).await;
    let trace = test_root.trace_id.clone();
    assert_eq!(trace.len(), 32);
    // A span of the parent's trace whose parent it is.
    let child_of = |parent: &Span| {
        let (trace, id) = (parent.trace_id.clone(), parent.span_id.clone());
        move |s: &Span| s.trace_id == trace && s.parent == id
    };
    // One trace down the call chain, each span the child of the one before:
    // this process's call, A's request and run, A's call to B, B's request
    // and run.
    let chain = [
        ("client", "a2a.client SendMessage"),
        ("agent-a", "a2a.server SendMessage"),
        ("agent-a", "a2a.agent run"),
        ("agent-a", "a2a.client SendMessage"),
        ("agent-b", "a2a.server SendMessage"),
        ("agent-b", "a2a.agent run"),
    ];
    let mut spans = vec![test_root];
    for (service, name) in chain {
        let parent = spans.last().unwrap();
        let span = receiver.find(service, name, child_of(parent)).await;
        spans.push(span);
    }
    let a_run = &spans[3];
    // A fetched B's card inside its run, as one more child.
    receiver
        .find("agent-b", "a2a.server", child_of(a_run))
        .await;

    // gRPC: B's request span is the child of this process's call span.
    let grpc_root = receiver.find("client", "test.grpc", any).await;
    let grpc_call = receiver
        .find("client", "a2a.client SendMessage", child_of(&grpc_root))
        .await;
    receiver
        .find("agent-b", "a2a.server SendMessage", child_of(&grpc_call))
        .await;

    // Push: the delivery span is a child of B's run for that task, and the
    // header the webhook got names the delivery span.
    let push_root = receiver.find("client", "test.push", any).await;
    let push_trace = push_root.trace_id.clone();
    let push_run = receiver
        .find("agent-b", "a2a.agent run", |s| s.trace_id == push_trace)
        .await;
    // The header names the delivery span; that span is the run's child.
    let fields: Vec<&str> = delivered_tp.split('-').collect();
    assert_eq!(fields.len(), 4, "{delivered_tp}");
    assert_eq!(fields[1], push_trace, "{delivered_tp}");
    let delivery = receiver
        .find("agent-b", "a2a.push deliver", |s| s.span_id == fields[2])
        .await;
    assert_eq!(delivery.trace_id, push_trace);
    assert_eq!(delivery.parent, push_run.span_id);
}

/// Sends a JSON-RPC SendMessage of `text` (also its message id) to `base`,
/// with `traceparent` when given; the answer's HTTP status.
async fn send_message(
    http: &reqwest::Client,
    base: &str,
    text: &str,
    traceparent: Option<&str>,
) -> reqwest::StatusCode {
    let mut request = http.post(base).header("a2a-version", "1.0").json(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": {"role": "ROLE_USER", "messageId": text, "parts": [{"text": text}]}
        }}),
    );
    if let Some(tp) = traceparent {
        request = request.header("traceparent", tp);
    }
    request.send().await.unwrap().status()
}

/// `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`: `serve` exports its spans
/// over OTLP/HTTP to `<endpoint>/v1/traces`, with the caller's
/// `traceparent` as the parent.
#[tokio::test(flavor = "multi_thread")]
async fn spans_reach_an_otlp_http_collector() {
    let receiver = Receiver::default();
    let endpoint = receiver.clone().start_http().await;
    let dir = tempfile::tempdir().unwrap();
    let over_http = [("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")];
    let mut serve = traced_serve(&endpoint, "agent-http", ECHO, &over_http, dir.path());
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let traceparent = format!("00-{trace}-{parent}-01");
    let http = reqwest::Client::new();
    let status = send_message(&http, &serve.base(), "over http", Some(&traceparent)).await;
    assert!(status.is_success(), "{}", serve.log());
    // SIGTERM flushes the batch.
    assert!(serve.terminate(Duration::from_secs(20)), "{}", serve.log());
    let request = receiver
        .find("agent-http", "a2a.server SendMessage", |s| {
            s.trace_id == trace && s.parent == parent
        })
        .await;
    receiver
        .find("agent-http", "a2a.agent run", |s| {
            s.trace_id == trace && s.parent == request.span_id
        })
        .await;
}

/// Head sampling (`OTEL_TRACES_SAMPLER`): `serve` decides before it makes a
/// span. Parent-based: a caller's sampled `traceparent` is recorded, an
/// unsampled one is not; new traces follow the ratio. An unsampled request
/// makes no span at all, not even its agent run's.
#[tokio::test(flavor = "multi_thread")]
async fn the_sampler_decides_before_spans_are_made() {
    let receiver = Receiver::default();
    let endpoint = receiver.clone().start().await;
    let dir = tempfile::tempdir().unwrap();
    let sampler = [
        ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
        ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
    ];
    // 240 requests from one anonymous address: past its request rate.
    let args = [ECHO, &["--rate-per-second", "0"]].concat();
    let mut serve = traced_serve(&endpoint, "sampled", &args, &sampler, dir.path());
    let http = reqwest::Client::new();
    let base = serve.base();
    let trace = |n: u32| format!("4bf92f3577b34da6a3ce929d{n:08x}");
    // Callers that decided: 20 sampled, 20 not.
    for n in 0..40 {
        let flags = if n % 2 == 0 { "01" } else { "00" };
        let traceparent = format!("00-{}-00f067aa0ba902b7-{flags}", trace(n));
        let status = send_message(&http, &base, &format!("p{n}"), Some(&traceparent)).await;
        assert!(status.is_success(), "{}", serve.log());
    }
    // New traces: a quarter of 200.
    for n in 0..200 {
        let status = send_message(&http, &base, &format!("r{n}"), None).await;
        assert!(status.is_success(), "{}", serve.log());
    }
    assert!(serve.terminate(Duration::from_secs(20)), "{}", serve.log());
    // The 20 sampled callers' requests and runs arrive (the last one
    // waited for; the batch is flushed at exit, in one piece).
    receiver
        .find("sampled", "a2a.agent run", |s| s.trace_id == trace(38))
        .await;
    let spans = receiver.snapshot();
    let requests: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "a2a.server SendMessage")
        .collect();
    let runs = spans.iter().filter(|s| s.name == "a2a.agent run").count();
    let from_callers: Vec<&str> = requests
        .iter()
        .filter(|s| s.parent == "00f067aa0ba902b7")
        .map(|s| s.trace_id.as_str())
        .collect();
    let sampled_callers: Vec<String> = (0..40).step_by(2).map(trace).collect();
    assert_eq!(
        from_callers.len(),
        20,
        "every sampled caller, no unsampled one: {from_callers:?}"
    );
    assert!(
        from_callers
            .iter()
            .all(|t| sampled_callers.iter().any(|s| s == t))
    );
    let new_traces = requests.len() - from_callers.len();
    assert!(
        (35..=65).contains(&new_traces),
        "about a quarter of 200 new traces recorded: {new_traces}"
    );
    assert_eq!(
        runs,
        requests.len(),
        "one run span per recorded request, none else"
    );
}
