//! The gRPC binding end to end over loopback: a real server (gRPC and HTTP
//! on one port), driven by our client with the GRPC interface chosen and by
//! a raw tonic client that shows the status codes, ErrorInfo details and
//! metadata exactly as they go over the wire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::time::Duration;

use futures::StreamExt;
use switchboard_client::A2AClient;
use switchboard_core::RequestHandler;
use switchboard_proto::v1 as pb;
use switchboard_proto::v1::a2a_service_client::A2aServiceClient;
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{A2AError, ListTasksRequest, Message, SendMessageResponse, TaskState};
use switchboard_runtimes::builtin::{DemoAgent, demo_card};
use switchboard_server::ErrorTable;
use tonic::transport::Channel;
use tonic_types::StatusExt;
use util::*;

async fn server() -> TestServer {
    TestServer::start(demo_push_handler()).await
}

/// A raw tonic client on the same port.
async fn raw(s: &TestServer) -> A2aServiceClient<Channel> {
    A2aServiceClient::connect(s.base.clone()).await.unwrap()
}

/// A request with `a2a-version: 1.0`.
fn v1<T>(body: T) -> tonic::Request<T> {
    with_metadata(tonic::Request::new(body), "a2a-version", "1.0")
}

fn user(text: &str) -> pb::Message {
    (&Message::user_text(text)).into()
}

fn send_req(text: &str, tenant: &str) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        tenant: tenant.into(),
        message: Some(user(text)),
        ..Default::default()
    }
}

/// The ErrorInfo reason and domain of a status.
fn reason(st: &tonic::Status) -> (String, String) {
    let info = st.get_details_error_info().expect("an ErrorInfo detail");
    (info.reason, info.domain)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_lists_grpc_after_jsonrpc_and_rest() {
    let s = server().await;
    let c = s.grpc_client("1.0").await;
    let card = c.card().unwrap();
    let bindings: Vec<&str> = card
        .supported_interfaces
        .iter()
        .map(|i| i.protocol_binding.as_str())
        .collect();
    // The 1.0 interfaces first, then the 0.3 ones (gRPC after the HTTP ones).
    assert_eq!(
        bindings,
        [
            "JSONRPC",
            "HTTP+JSON",
            "GRPC",
            "JSONRPC",
            "HTTP+JSON",
            "GRPC"
        ]
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_with_our_client_over_grpc() {
    let s = server().await;
    let c = s.grpc_client("1.0").await;

    // SendMessage: a task, and a direct message.
    let task = task_of(c.send_text("hello grpc").await.unwrap());
    assert_eq!(task.status.state, TaskState::Completed);
    assert!(task.artifacts()[0].text().contains("hello grpc"));
    assert_direct_message(&c).await;

    // SendStreamingMessage: task first, completed last, consecutive numbers.
    stream_to_completion(&c, "stream me").await;

    // GetTask, with historyLength 0.
    let got = c.get_task(get_with_history(&task.id, 0)).await.unwrap();
    assert_eq!(got.id, task.id);
    assert!(got.history.is_none());
    assert_eq!(got.artifacts(), task.artifacts());

    // ListTasks: all four response fields, filter by state.
    let list = c
        .list_tasks(ListTasksRequest {
            status: Some(TaskState::Completed),
            page_size: Some(10),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(list.total_size, 2);
    assert_eq!(list.tasks.len(), 2);
    assert_eq!(list.next_page_token, "");

    // A long task: SubscribeToTask, then CancelTask ends the subscription.
    let long = send_long(&c).await;
    subscribe_then_cancel(&c, &long).await;

    // Push notification configs: create, get, list, delete.
    push_config_round_trip(&c, long.id.as_str(), "http://127.0.0.1:9/hook").await;

    // GetExtendedAgentCard: the demo card declares none.
    let err = protocol_error(c.get_extended_agent_card().await.unwrap_err());
    assert!(
        matches!(
            err,
            A2AError::ExtendedAgentCardNotConfigured | A2AError::UnsupportedOperation(_)
        ),
        "{err:?}"
    );

    // Errors arrive typed, with their ids.
    assert_typed_errors(&c, &task).await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_codes_and_error_details() {
    let s = server().await;
    let mut g = raw(&s).await;

    // No a2a-version means 0.3, which this server does not serve.
    let st = g
        .get_task(tonic::Request::new(pb::GetTaskRequest {
            id: "x".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::FailedPrecondition);
    assert_eq!(
        reason(&st),
        ("VERSION_NOT_SUPPORTED".into(), "a2a-protocol.org".into())
    );

    let st = g
        .get_task(v1(pb::GetTaskRequest {
            id: "nope".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::NotFound);
    assert_eq!(reason(&st).0, "TASK_NOT_FOUND");
    assert_eq!(
        st.get_details_error_info().unwrap().metadata["taskId"],
        "nope"
    );

    // A message without content in a part: InvalidParams naming the field.
    let mut bad = send_req("x", "");
    bad.message.as_mut().unwrap().parts[0].content = None;
    let st = g.send_message(v1(bad)).await.unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);
    assert_eq!(reason(&st).0, "INVALID_PARAMS");
    assert_eq!(
        st.get_details_bad_request().unwrap().field_violations[0].field,
        "part.content"
    );
    // No message at all.
    let st = g
        .send_message(v1(pb::SendMessageRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);

    // A bad page size is the handler's InvalidParams.
    let st = g
        .list_tasks(v1(pb::ListTasksRequest {
            page_size: Some(1000),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);

    // Cancel a finished task: FAILED_PRECONDITION (v1.0.1 table).
    let done = g.send_message(v1(send_req("hi", ""))).await.unwrap();
    let Some(pb::send_message_response::Payload::Task(t)) = done.into_inner().payload else {
        panic!("expected a task")
    };
    let st = g
        .cancel_task(v1(pb::CancelTaskRequest {
            id: t.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::FailedPrecondition);
    assert_eq!(reason(&st).0, "TASK_NOT_CANCELABLE");

    // Subscribing to a finished task.
    let st = g
        .subscribe_to_task(v1(pb::SubscribeToTaskRequest {
            id: t.id,
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(reason(&st).0, "UNSUPPORTED_OPERATION");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_v1_0_0_table_applies_to_grpc_too() {
    let s =
        TestServer::start_with(|s| s.error_table(ErrorTable::V1_0_0), demo_push_handler()).await;
    let mut g = raw(&s).await;
    let st = g
        .get_task(tonic::Request::new(pb::GetTaskRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::Unimplemented);
    assert_eq!(reason(&st).0, "VERSION_NOT_SUPPORTED");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_are_negotiated_and_echoed() {
    let s = server().await;
    let mut g = raw(&s).await;
    let progress = || with_metadata(v1(send_req("hi", "")), "a2a-extensions", TASK_PROGRESS_URI);
    let resp = g.send_message(progress()).await.unwrap();
    assert_eq!(echoed_extensions(&resp), Some(TASK_PROGRESS_URI));
    // Not requested: not echoed.
    let resp = g.send_message(v1(send_req("hi", ""))).await.unwrap();
    assert_eq!(echoed_extensions(&resp), None);
    // Streams echo it in their initial metadata.
    let resp = g.send_streaming_message(progress()).await.unwrap();
    assert_eq!(echoed_extensions(&resp), Some(TASK_PROGRESS_URI));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenants_are_separate() {
    let s = server().await;
    let mut g = raw(&s).await;
    let resp = g
        .send_message(v1(send_req("in acme", "acme")))
        .await
        .unwrap();
    let Some(pb::send_message_response::Payload::Task(t)) = resp.into_inner().payload else {
        panic!("expected a task")
    };
    let get = |tenant: &str| {
        v1(pb::GetTaskRequest {
            tenant: tenant.into(),
            id: t.id.clone(),
            history_length: None,
        })
    };
    assert_eq!(g.get_task(get("acme")).await.unwrap().into_inner().id, t.id);
    let st = g.get_task(get("")).await.unwrap_err();
    assert_eq!(st.code(), tonic::Code::NotFound);
    let st = g.get_task(get("other")).await.unwrap_err();
    assert_eq!(st.code(), tonic::Code::NotFound);

    // Our client copies the interface's tenant into every request.
    let mut card = s.grpc_client("1.0").await.card().unwrap().clone();
    for i in &mut card.supported_interfaces {
        i.tenant = Some("acme".into());
    }
    let c = A2AClient::builder()
        .preferred_bindings(["GRPC"])
        .from_card(card)
        .unwrap();
    assert_eq!(c.get_task(t.id.as_str()).await.unwrap().id, t.id);
    let mine = task_of(c.send_text("also acme").await.unwrap());
    let listed = g
        .list_tasks(v1(pb::ListTasksRequest {
            tenant: "acme".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.total_size, 2);
    assert!(listed.tasks.iter().any(|x| x.id == mine.id));
    s.stop().await;
}

/// A dropped stream resumes exactly with `last-event-id`: the pieces
/// reassemble into the uninterrupted sequence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_resumes_after_last_event_id() {
    let s = server().await;
    let mut g = raw(&s).await;
    let resp = g
        .send_streaming_message(v1(send_req("/steps 4", "")))
        .await
        .unwrap();
    let first = first_event_id(&resp);
    let full = grpc_items(resp).await;
    assert!(full.len() >= 5, "{full:?}");
    let Some(pb::stream_response::Payload::Task(t)) = &full[0].payload else {
        panic!("a task first")
    };
    // Saw the first two items, then lost the stream.
    let seen = first + 1;
    let subscribe = v1(pb::SubscribeToTaskRequest {
        id: t.id.clone(),
        ..Default::default()
    });
    let resp = g
        .subscribe_to_task(resuming(subscribe, &seen.to_string()))
        .await
        .unwrap();
    assert_eq!(first_event_id(&resp), seen + 1);
    assert_eq!(grpc_items(resp).await, full[2..].to_vec());

    // A resume key that is not a number is InvalidParams.
    let subscribe = v1(pb::SubscribeToTaskRequest {
        id: t.id.clone(),
        ..Default::default()
    });
    let st = g
        .subscribe_to_task(resuming(subscribe, "x"))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);
    s.stop().await;
}

/// HTTP still works on the port that serves gRPC.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_and_grpc_share_the_port() {
    let s = server().await;
    let c = A2AClient::builder()
        .preferred_bindings(["JSONRPC"])
        .connect(&s.base)
        .await
        .unwrap();
    let t = task_of(c.send_text("via json-rpc").await.unwrap());
    let g = s.grpc_client("1.0").await;
    assert_eq!(g.get_task(t.id.as_str()).await.unwrap().id, t.id);
    s.stop().await;
}

/// One HTTP/2 connection (one tonic channel) carries many calls at once:
/// the server runs one on the connection's task and spawns the others
/// (`switchboard-server/src/conn.rs`). Every call gets its own answer, and
/// streams on the same connection deliver every event meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_share_one_connection() {
    let s = server().await;
    let channel = raw(&s).await;
    let unary = (0..64).map(|k| {
        let mut c = channel.clone();
        async move {
            let text = format!("call number {k}");
            let resp = c.send_message(v1(send_req(&text, ""))).await.unwrap();
            let task = match resp.into_inner().payload {
                Some(pb::send_message_response::Payload::Task(t)) => t,
                other => panic!("expected a task, got {other:?}"),
            };
            let art = &task.artifacts[0].parts[0];
            match &art.content {
                Some(pb::part::Content::Text(t)) => {
                    assert!(t.contains(&text), "{t:?} for {text:?}")
                }
                other => panic!("expected text, got {other:?}"),
            }
        }
    });
    let streams = (0..4).map(|k| {
        let mut c = channel.clone();
        async move {
            let items: Vec<_> = c
                .send_streaming_message(v1(send_req(&format!("stream {k}"), "")))
                .await
                .unwrap()
                .into_inner()
                .collect()
                .await;
            let last = items.last().unwrap().as_ref().unwrap();
            match &last.payload {
                Some(pb::stream_response::Payload::StatusUpdate(u)) => assert_eq!(
                    u.status.as_ref().unwrap().state,
                    pb::TaskState::Completed as i32
                ),
                other => panic!("expected the final status, got {other:?}"),
            }
            assert!(items.iter().all(Result::is_ok));
        }
    });
    tokio::join!(
        futures::future::join_all(unary),
        futures::future::join_all(streams)
    );
    s.stop().await;
}

/// `switchboard send --binding grpc` uses the card's GRPC interface: the
/// card's JSON-RPC interface points at a closed port, so only gRPC can
/// answer; without `--binding` the CLI takes the card's first interface and
/// fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_binding_override_picks_grpc() {
    use switchboard_protocol::AgentInterface;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://{}/", dead.local_addr().unwrap());
    drop(dead);
    let mut card = demo_card();
    card.supported_interfaces = vec![
        AgentInterface {
            url: dead_url,
            protocol_binding: "JSONRPC".into(),
            tenant: None,
            protocol_version: "1.0".into(),
        },
        AgentInterface {
            url: addr.to_string(),
            protocol_binding: "GRPC".into(),
            tenant: None,
            protocol_version: "1.0".into(),
        },
    ];
    let handler = RequestHandler::builder(
        DemoAgent {
            chunk_delay: Duration::ZERO,
        },
        card,
    )
    .build();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(
        switchboard_server::A2aServer::new(handler)
            .public_url(format!("http://{addr}"))
            .serve(listener, async move {
                let _ = rx.await;
            }),
    );
    let url = format!("http://{addr}");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = ["send", "--url", &url, "--json", "--timeout", "10"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a.push("hello cli".into());
        a
    };
    let out = run_cli(args(&["--binding", "grpc"])).await;
    let stdout = success_stdout(&out);
    assert!(stdout.contains("TASK_STATE_COMPLETED"), "{stdout}");
    let out = run_cli(args(&[])).await;
    assert!(!out.status.success(), "JSON-RPC points at a closed port");
    let _ = tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(15), server).await;
}

/// Bytes that are not the method's message are a Parse error
/// (INVALID_ARGUMENT, PARSE_ERROR), not INTERNAL; other errors still work
/// afterwards. Push operations without push support are
/// PUSH_NOTIFICATION_NOT_SUPPORTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_and_unsupported_push() {
    let s = TestServer::start(demo_handler()).await;
    let channel = s.grpc_channel().await;
    // A GetTask whose `id` (field 2) arrives as a varint instead of a string.
    let id_as_varint = VarintFields {
        second: 7,
        ..Default::default()
    };
    let path = "/lf.a2a.v1.A2AService/GetTask";
    assert_parse_error(channel.clone(), path, v1(id_as_varint)).await;

    let mut g = A2aServiceClient::new(channel);
    let st = g
        .create_task_push_notification_config(v1(pb::TaskPushNotificationConfig {
            task_id: "t".into(),
            url: "http://127.0.0.1:9/".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::FailedPrecondition);
    assert_eq!(reason(&st).0, "PUSH_NOTIFICATION_NOT_SUPPORTED");
    s.stop().await;
}

/// gRPC calls to a service or method this server does not have are
/// UNIMPLEMENTED (as tonic answers them), whatever their path looks like:
/// a service whose name only starts like A2A's, a missing method, or a path
/// that is no gRPC path at all. The real services still answer after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_grpc_services_and_methods_are_unimplemented() {
    let s = server().await;
    let channel = s.grpc_channel().await;
    for path in [
        "/lf.a2a.v1.A2AServiceX/SendMessage",
        "/lf.a2a.v1.A2AService/NoSuchMethod",
        "/a2a.v1.A2AService/NoSuchMethod",
        "/grpc.health.v1.Health/Check",
        "/lf.a2a.v1.A2AService",
    ] {
        let st = raw_unary_error(channel.clone(), path, v1(pb::GetTaskRequest::default())).await;
        assert_eq!(st.code(), tonic::Code::Unimplemented, "{path}: {st:?}");
    }
    let mut g = A2aServiceClient::new(channel);
    let out = g.send_message(v1(send_req("hi", ""))).await.unwrap();
    assert!(out.into_inner().payload.is_some());
    s.stop().await;
}

/// Posts `chunks` (sent as separate DATA frames) to a gRPC path over h2c
/// and returns the response headers and body. A status in the headers is a
/// trailers-only answer.
async fn post_frames(
    s: &TestServer,
    path: &str,
    extra: &[(&str, &str)],
    chunks: Vec<Vec<u8>>,
) -> (http::HeaderMap, Vec<u8>) {
    let client = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let stream = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    let mut req = client
        .post(format!("{}{path}", s.base))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(reqwest::Body::wrap_stream(stream));
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200, "gRPC answers are HTTP 200");
    let headers = resp.headers().clone();
    (headers, resp.bytes().await.unwrap().to_vec())
}

/// A gRPC frame: flag, big-endian length, message.
fn frame(flag: u8, msg: &[u8]) -> Vec<u8> {
    let mut out = vec![flag];
    out.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

/// Unary calls are framed by hand (not by tonic): a frame split across
/// DATA frames, even inside its prefix, is reassembled; every malformed
/// body gets the status its kind calls for, before any method runs — Parse
/// (INVALID_ARGUMENT, PARSE_ERROR) for no message, a truncated one or two
/// messages; INTERNAL for a compressed flag without `grpc-encoding`;
/// UNIMPLEMENTED (with `grpc-accept-encoding: identity`) for a compression
/// the server does not offer; RESOURCE_EXHAUSTED as soon as a prefix
/// declares more than the size limit. Both services, 1.0 and 0.3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unary_frames_are_checked_by_hand() {
    use prost::Message as _;
    let s = server().await;
    let send = "/lf.a2a.v1.A2AService/SendMessage";

    // One frame in three DATA frames, the prefix itself split.
    let whole = frame(0, &send_req("split", "").encode_to_vec());
    let chunks = vec![
        whole[..2].to_vec(),
        whole[2..9].to_vec(),
        whole[9..].to_vec(),
    ];
    let (h, body) = post_frames(&s, send, &[], chunks).await;
    assert!(h.get("grpc-status").is_none(), "not trailers-only: {h:?}");
    assert_eq!(h["content-type"], "application/grpc");
    // A content length would make some clients (curl) stop before the trailers.
    assert!(h.get("content-length").is_none(), "{h:?}");
    assert_eq!(body[0], 0, "uncompressed");
    let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
    assert_eq!(body.len(), 5 + len, "exactly one frame");
    let out = pb::SendMessageResponse::decode(&body[5..]).unwrap();
    let task = task_of(SendMessageResponse::try_from(out).unwrap());
    assert_eq!(task.status.state, TaskState::Completed);

    let get = "/lf.a2a.v1.A2AService/GetTask";
    let msg = pb::GetTaskRequest {
        id: task.id.clone(),
        ..Default::default()
    }
    .encode_to_vec();
    let status = |h: &http::HeaderMap| {
        let st = tonic::Status::from_header_map(h).expect("a trailers-only status");
        (st.code(), st)
    };
    let parse_errors: [(&str, Vec<Vec<u8>>); 4] = [
        ("no message", vec![]),
        ("a prefix only", vec![frame(0, &msg)[..3].to_vec()]),
        ("truncated", vec![frame(0, &msg)[..8].to_vec()]),
        ("two messages", vec![frame(0, &msg), frame(0, &msg)]),
    ];
    for (what, chunks) in parse_errors {
        let (h, _) = post_frames(&s, get, &[], chunks).await;
        let (code, st) = status(&h);
        assert_eq!(code, tonic::Code::InvalidArgument, "{what}: {st:?}");
        assert_eq!(reason(&st).0, "PARSE_ERROR", "{what}");
    }

    let (h, _) = post_frames(&s, get, &[], vec![frame(1, &msg)]).await;
    assert_eq!(status(&h).0, tonic::Code::Internal, "compressed flag alone");

    let (h, _) = post_frames(&s, get, &[("grpc-encoding", "gzip")], vec![frame(0, &msg)]).await;
    assert_eq!(status(&h).0, tonic::Code::Unimplemented, "gzip");
    assert_eq!(h["grpc-accept-encoding"], "identity");
    let (h, _) = post_frames(
        &s,
        get,
        &[("grpc-encoding", "identity")],
        vec![frame(0, &msg)],
    )
    .await;
    assert!(
        h.get("grpc-status").is_none(),
        "identity is no compression: {h:?}"
    );

    // Declares 4 GiB - 1 and sends 3 bytes of it: refused on the prefix.
    let huge = vec![vec![0, 0xff, 0xff, 0xff, 0xff, 1, 2, 3]];
    let (h, _) = post_frames(&s, get, &[], huge).await;
    let (code, st) = status(&h);
    assert_eq!(code, tonic::Code::ResourceExhausted, "{st:?}");

    // The 0.3 service goes the same way.
    let (h, _) = post_frames(
        &s,
        "/a2a.v1.A2AService/GetTask",
        &[],
        vec![frame(0, &msg), frame(0, &msg)],
    )
    .await;
    let (code, st) = status(&h);
    assert_eq!(code, tonic::Code::InvalidArgument, "0.3: {st:?}");

    // The connection-level state is intact: a normal call still works.
    let mut g = raw(&s).await;
    let t = g
        .get_task(v1(pb::GetTaskRequest {
            id: task.id,
            ..Default::default()
        }))
        .await
        .unwrap();
    assert_eq!(
        t.into_inner().status.unwrap().state,
        pb::TaskState::Completed as i32
    );
    s.stop().await;
}
