//! The server as others extend it: a merged route, a tower layer, an
//! HTTP/1.1 upgrade and the authenticator hook — the hook and the layer
//! proven on every binding in both protocol versions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::time::Duration;

use axum::response::IntoResponse;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, ClientError};
use switchboard_core::{InMemoryStore, RequestHandler};
use switchboard_proto::v1 as pb;
use switchboard_proto::v1::a2a_service_client::A2aServiceClient;
use switchboard_protocol::error::{PERMISSION_DENIED_CODE, UNAUTHENTICATED_CODE};
use switchboard_protocol::{A2AError, SendMessageResponse, TaskState};
use switchboard_runtimes::builtin::{EchoTask, echo_card};
use switchboard_server::{A2aServer, Authenticator, Identity};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use util::{COMBOS, TestServer, V1};

/// `Authorization: Bearer NAME` is principal NAME; `NAME@TENANT` is bound
/// to TENANT; anything else is refused.
#[derive(Debug)]
struct Tokens;

impl Authenticator for Tokens {
    fn authenticate<'a>(
        &'a self,
        head: &'a http::request::Parts,
    ) -> BoxFuture<'a, Result<Identity, A2AError>> {
        Box::pin(async move {
            let token = head
                .headers
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .filter(|t| !t.is_empty())
                .ok_or_else(|| A2AError::Unauthenticated("a bearer token is required".into()))?;
            Ok(match token.split_once('@') {
                Some((name, tenant)) => Identity::new(name).with_tenant(tenant),
                None => Identity::new(token),
            })
        })
    }

    fn challenge(&self) -> Option<http::HeaderValue> {
        Some(http::HeaderValue::from_static("Bearer realm=\"test\""))
    }
}

const LAYER_HEADER: &str = "x-layered";

fn handler() -> RequestHandler {
    RequestHandler::builder(EchoTask, echo_card())
        .store(std::sync::Arc::new(InMemoryStore::new()))
        .build()
}

/// A server with every extension point in use.
async fn server() -> TestServer {
    TestServer::start_with(
        |s: A2aServer| {
            s.authenticator(Tokens)
                .route("/hello", axum::routing::get(|| async { "hello" }))
                .route("/echo-upgrade", axum::routing::get(upgrade))
                .layer(tower::util::MapResponseLayer::new(
                    |mut resp: axum::response::Response| {
                        resp.headers_mut()
                            .insert(LAYER_HEADER, http::HeaderValue::from_static("yes"));
                        resp
                    },
                ))
        },
        handler(),
    )
    .await
}

/// Takes the connection over (`101 Switching Protocols`) and echoes what
/// the client writes until it closes.
async fn upgrade(mut req: axum::extract::Request) -> axum::response::Response {
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        if let Ok(upgraded) = on_upgrade.await {
            let mut io = hyper_util::rt::TokioIo::new(upgraded);
            let mut buf = [0u8; 64];
            while let Ok(n) = io.read(&mut buf).await {
                if n == 0 || io.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    });
    (
        http::StatusCode::SWITCHING_PROTOCOLS,
        [
            (http::header::CONNECTION, "upgrade"),
            (http::header::UPGRADE, "echo"),
        ],
    )
        .into_response()
}

/// Our client on one binding and version, with `token` as its bearer token.
async fn client(base: &str, binding: &str, version: &str, token: Option<&str>) -> A2AClient {
    let mut b = A2AClient::builder()
        .preferred_bindings([binding])
        .preferred_versions([version])
        .timeout(Duration::from_secs(20));
    if let Some(t) = token {
        b = b.bearer_token(t);
    }
    let c = b.connect(base).await.unwrap();
    assert_eq!(
        (
            c.interface().protocol_binding.as_str(),
            c.interface().protocol_version.as_str()
        ),
        (binding, version)
    );
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_binding_authenticates_and_owns_tasks() {
    let s = server().await;
    for (binding, version) in COMBOS {
        let combo = format!("{binding} {version}");
        // No credentials: the binding's authentication error, no task.
        let anon = client(&s.base, binding, version, None).await;
        let err = anon.send_text("hi").await.unwrap_err();
        assert_eq!(err.code(), Some(UNAUTHENTICATED_CODE), "{combo}: {err}");

        // Alice's task is hers: Bob gets TaskNotFound, not the task.
        let alice = client(&s.base, binding, version, Some("alice")).await;
        let task = match alice.send_text("hi").await.unwrap() {
            SendMessageResponse::Task(t) => t,
            other => panic!("{combo}: {other:?}"),
        };
        assert_eq!(task.status.state, TaskState::Completed, "{combo}");
        assert_eq!(alice.get_task(task.id.as_str()).await.unwrap().id, task.id);
        let bob = client(&s.base, binding, version, Some("bob")).await;
        let err = bob.get_task(task.id.as_str()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::Protocol(A2AError::TaskNotFound(_))),
            "{combo}: {err}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_have_each_bindings_form() {
    let s = server().await;
    let http = reqwest::Client::new();
    let rpc = json!({"jsonrpc": "2.0", "id": 7, "method": "ListTasks", "params": {}});

    // JSON-RPC: HTTP 401 with the challenge and a JSON-RPC error body.
    let (status, body, headers) = s.post_json(&rpc.to_string(), V1).await;
    assert_eq!(status, 401);
    assert_eq!(headers["www-authenticate"], "Bearer realm=\"test\"");
    assert_eq!(headers[LAYER_HEADER], "yes");
    assert_eq!(body["error"]["code"], UNAUTHENTICATED_CODE);

    // A tenant the credentials do not grant: 403 on JSON-RPC ...
    let resp = http
        .post(s.url())
        .header("A2A-Version", "1.0")
        .bearer_auth("carol@acme")
        .json(&json!({"jsonrpc": "2.0", "id": 8, "method": "ListTasks", "params": {"tenant": "other"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 403);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], PERMISSION_DENIED_CODE);

    // ... and on REST; the granted tenant works.
    for (path, token, status, name) in [
        ("/tasks", None, 401, "UNAUTHENTICATED"),
        ("/other/tasks", Some("carol@acme"), 403, "PERMISSION_DENIED"),
        ("/acme/tasks", Some("carol@acme"), 200, ""),
        ("/tasks", Some("carol@acme"), 200, ""),
    ] {
        let mut req = http
            .get(format!("{}{path}", s.base))
            .header("A2A-Version", "1.0");
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), status, "{path} {token:?}");
        assert_eq!(resp.headers()[LAYER_HEADER], "yes");
        if status == 401 {
            assert_eq!(resp.headers()["www-authenticate"], "Bearer realm=\"test\"");
        }
        let body: Value = resp.json().await.unwrap();
        if !name.is_empty() {
            assert_eq!(body["error"]["status"], name, "{path}");
        }
    }

    // gRPC: UNAUTHENTICATED / PERMISSION_DENIED statuses, layer header too.
    let mut grpc = A2aServiceClient::connect(s.base.clone()).await.unwrap();
    let call = |token: Option<&str>, tenant: &str| {
        let mut r = tonic::Request::new(pb::ListTasksRequest {
            tenant: tenant.into(),
            ..Default::default()
        });
        r.metadata_mut()
            .insert("a2a-version", "1.0".parse().unwrap());
        if let Some(t) = token {
            r.metadata_mut()
                .insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        r
    };
    let status = grpc.list_tasks(call(None, "")).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    assert_eq!(status.metadata().get(LAYER_HEADER).unwrap(), "yes");
    let status = grpc
        .list_tasks(call(Some("carol@acme"), "other"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::PermissionDenied);
    let ok = grpc
        .list_tasks(call(Some("carol@acme"), "acme"))
        .await
        .unwrap();
    assert_eq!(ok.metadata().get(LAYER_HEADER).unwrap(), "yes");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merged_routes_are_served_inside_the_layers() {
    let s = server().await;
    let http = reqwest::Client::new();
    // The added route needs no credentials (it does not call the gate) ...
    let resp = http.get(format!("{}/hello", s.base)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()[LAYER_HEADER], "yes");
    assert_eq!(resp.text().await.unwrap(), "hello");
    // ... nor does the public card; both pass the layer.
    let resp = http
        .get(format!("{}/.well-known/agent-card.json", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()[LAYER_HEADER], "yes");
    // Unknown paths still reach the REST binding's catch-all.
    let resp = http
        .get(format!("{}/nope/nope/nope", s.base))
        .header("A2A-Version", "1.0")
        .bearer_auth("alice")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    s.stop().await;
}

#[tokio::test]
async fn http1_connections_can_be_upgraded() {
    let s = server().await;
    let addr = s.base.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(
        b"GET /echo-upgrade HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n",
    )
    .await
    .unwrap();
    // Read the 101 answer's head.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut byte))
            .await
            .expect("the upgrade answer in time")
            .unwrap();
        assert_eq!(n, 1, "closed before the answer: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    // The connection is the route's now: it echoes.
    tcp.write_all(b"ping").await.unwrap();
    let mut echo = [0u8; 4];
    tokio::time::timeout(Duration::from_secs(10), tcp.read_exact(&mut echo))
        .await
        .expect("the echo in time")
        .unwrap();
    assert_eq!(&echo, b"ping");
    drop(tcp);
    s.stop().await;
}
