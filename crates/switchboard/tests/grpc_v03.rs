//! The A2A 0.3 gRPC binding (`a2a.v1.A2AService`) end to end over loopback:
//! a real server serving it beside the 1.0 service on the one HTTP port,
//! driven by our client (the card's GRPC/0.3 interface) and by a raw tonic
//! 0.3 client that shows resource names, `final`, status codes, ErrorInfo
//! details and metadata exactly as they go over the wire.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use switchboard_client::A2AClient;
use switchboard_proto::v03 as pb;
use switchboard_proto::v03::a2a_service_client::A2aServiceClient;
use switchboard_protocol::{A2AError, ListTasksRequest, Message, TaskState};
use switchboard_runtimes::builtin::demo_card;
use tonic::transport::Channel;
use tonic_types::StatusExt;
use util::*;

async fn server() -> TestServer {
    TestServer::start(demo_push_handler()).await
}

/// A raw tonic 0.3 client on the same port.
async fn raw(s: &TestServer) -> A2aServiceClient<Channel> {
    A2aServiceClient::connect(s.base.clone()).await.unwrap()
}

fn user(text: &str) -> pb::Message {
    switchboard_proto::convert03::message_to_proto(&Message::user_text(text))
}

fn send_req(text: &str) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        request: Some(user(text)),
        configuration: None,
        metadata: None,
    }
}

fn reason(st: &tonic::Status) -> String {
    let info = st.get_details_error_info().expect("an ErrorInfo detail");
    assert_eq!(info.domain, "a2a-protocol.org");
    info.reason
}

fn violation(st: &tonic::Status) -> String {
    st.get_details_bad_request()
        .expect("a BadRequest detail")
        .field_violations[0]
        .field
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_with_our_client_over_grpc_03() {
    let s = server().await;
    let c = s.grpc_client("0.3").await;
    let c10 = A2AClient::connect(&s.base).await.unwrap();

    // SendMessage: a task (readable over 1.0 too), and a direct message.
    let task = task_of(c.send_text("hello grpc 0.3").await.unwrap());
    assert_eq!(task.status.state, TaskState::Completed);
    assert!(task.artifacts()[0].text().contains("hello grpc 0.3"));
    assert_eq!(c10.get_task(task.id.as_str()).await.unwrap().id, task.id);
    assert_direct_message(&c).await;

    // SendStreamingMessage: task first, completed last, consecutive numbers.
    stream_to_completion(&c, "stream me").await;

    // GetTask with a history length.
    let got = c.get_task(get_with_history(&task.id, 1)).await.unwrap();
    assert_eq!(got.id, task.id);
    assert_eq!(got.history().len(), 1);
    assert_eq!(got.artifacts(), task.artifacts());

    // ListTasks does not exist in 0.3.
    let err = protocol_error(c.list_tasks(ListTasksRequest::default()).await.unwrap_err());
    assert!(matches!(err, A2AError::UnsupportedOperation(_)), "{err:?}");

    // A long task: TaskSubscription, then CancelTask ends the subscription.
    let long = send_long(&c).await;
    subscribe_then_cancel(&c, &long).await;

    // Push notification configs: create, get, list, delete.
    let gone = push_config_round_trip(&c, long.id.as_str(), "http://127.0.0.1:9/hook").await;
    let err = protocol_error(gone);
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{err:?}");

    // The extended card is 0.3's GetAgentCard, which also answers for the
    // public card; so a card that declares no extended card gets the
    // spec's UnsupportedOperation from the client, as on other bindings.
    let err = protocol_error(c.get_extended_agent_card().await.unwrap_err());
    assert!(matches!(err, A2AError::UnsupportedOperation(_)), "{err:?}");
    // A card that declares one: the client asks GetAgentCard and reads the
    // served card, 0.3 view.
    let mut declared = c.card().unwrap().clone();
    declared.capabilities.extended_agent_card = Some(true);
    let c = A2AClient::builder()
        .preferred_bindings(["GRPC"])
        .preferred_versions(["0.3"])
        .from_card(declared)
        .unwrap();
    let card = c.get_extended_agent_card().await.unwrap();
    assert_eq!(card.name, demo_card().name);
    let ifaces: Vec<(&str, &str)> = card
        .supported_interfaces
        .iter()
        .map(|i| (i.protocol_binding.as_str(), i.protocol_version.as_str()))
        .collect();
    assert_eq!(
        ifaces,
        [("JSONRPC", "0.3"), ("HTTP+JSON", "0.3"), ("GRPC", "0.3")]
    );

    // Errors arrive typed, with their ids.
    assert_typed_errors(&c, &task).await;
    s.stop().await;
}

/// The wire: `final` on the last status update, resource names, the card's
/// 0.3 fields, and the two services side by side on one port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_03_wire_as_sent() {
    let s = server().await;
    let mut g = raw(&s).await;

    // A stream: only the last status update is final.
    let resp = g
        .send_streaming_message(send_req("/steps 3"))
        .await
        .unwrap();
    assert!(first_event_id(&resp) >= 1, "numbered from 1");
    let items = grpc_items(resp).await;
    let Some(pb::stream_response::Payload::Task(t)) = &items[0].payload else {
        panic!("a task first: {items:?}")
    };
    let finals: Vec<bool> = items
        .iter()
        .filter_map(|i| match &i.payload {
            Some(pb::stream_response::Payload::StatusUpdate(u)) => Some(u.r#final),
            _ => None,
        })
        .collect();
    assert_eq!(finals.last(), Some(&true), "{items:?}");
    assert!(finals[..finals.len() - 1].iter().all(|f| !f), "{finals:?}");
    let Some(pb::stream_response::Payload::StatusUpdate(last)) = &items.last().unwrap().payload
    else {
        panic!("a status update last")
    };
    assert_eq!(
        last.status.as_ref().unwrap().state,
        pb::TaskState::Completed as i32
    );

    // GetTask by resource name; parts under `content`.
    let got = g
        .get_task(pb::GetTaskRequest {
            name: format!("tasks/{}", t.id),
            history_length: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.id, t.id);
    assert!(matches!(
        got.history[0].content[0].part,
        Some(pb::part::Part::Text(ref x)) if x == "/steps 3"
    ));

    // Push configs by name; Get with an empty config id is the first one.
    let created = g
        .create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
            parent: format!("tasks/{}", t.id),
            config_id: "cfg1".into(),
            config: Some(pb::TaskPushNotificationConfig {
                name: String::new(),
                push_notification_config: Some(pb::PushNotificationConfig {
                    url: "http://127.0.0.1:9/hook".into(),
                    authentication: Some(pb::AuthenticationInfo {
                        schemes: vec!["Bearer".into()],
                        credentials: "secret".into(),
                    }),
                    ..Default::default()
                }),
            }),
        })
        .await
        .unwrap()
        .into_inner();
    let name = format!("tasks/{}/pushNotificationConfigs/cfg1", t.id);
    assert_eq!(created.name, name);
    let first = g
        .get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest {
            name: format!("tasks/{}/pushNotificationConfigs/", t.id),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first, created);
    assert_eq!(
        first
            .push_notification_config
            .unwrap()
            .authentication
            .unwrap()
            .schemes,
        ["Bearer"]
    );
    let listed = g
        .list_task_push_notification_config(pb::ListTaskPushNotificationConfigRequest {
            parent: format!("tasks/{}", t.id),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.configs, [created]);
    g.delete_task_push_notification_config(pb::DeleteTaskPushNotificationConfigRequest {
        name: name.clone(),
    })
    .await
    .unwrap();
    let st = g
        .get_task_push_notification_config(pb::GetTaskPushNotificationConfigRequest { name })
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::NotFound);

    // GetAgentCard: the 0.3 card fields.
    let card = g
        .get_agent_card(pb::GetAgentCardRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(card.protocol_version, "0.3.0");
    assert_eq!(card.preferred_transport, "JSONRPC");
    assert!(card.url.starts_with(&s.base), "{}", card.url);
    let transports: Vec<&str> = card
        .additional_interfaces
        .iter()
        .map(|i| i.transport.as_str())
        .collect();
    assert_eq!(transports, ["JSONRPC", "HTTP+JSON", "GRPC"]);
    assert!(card.capabilities.unwrap().streaming);

    // The 1.0 service on the same port still answers (and still refuses
    // calls that name no version).
    let mut g10 =
        switchboard_proto::v1::a2a_service_client::A2aServiceClient::connect(s.base.clone())
            .await
            .unwrap();
    let st = g10
        .get_task(switchboard_proto::v1::GetTaskRequest {
            id: t.id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&st), "VERSION_NOT_SUPPORTED");
    let req = tonic::Request::new(switchboard_proto::v1::GetTaskRequest {
        id: t.id.clone(),
        ..Default::default()
    });
    let req = with_metadata(req, "a2a-version", "1.0");
    assert_eq!(g10.get_task(req).await.unwrap().into_inner().id, t.id);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_codes_and_error_details() {
    let s = server().await;
    let mut g = raw(&s).await;

    // A 0.3 service asked for 1.0.
    let req = tonic::Request::new(pb::GetTaskRequest {
        name: "tasks/x".into(),
        history_length: 0,
    });
    let st = g
        .get_task(with_metadata(req, "a2a-version", "1.0"))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::FailedPrecondition);
    assert_eq!(reason(&st), "VERSION_NOT_SUPPORTED");
    // An explicit 0.3 is fine.
    let req = tonic::Request::new(pb::GetTaskRequest {
        name: "tasks/nope".into(),
        history_length: 0,
    });
    let st = g
        .get_task(with_metadata(req, "a2a-version", "0.3"))
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::NotFound);
    assert_eq!(reason(&st), "TASK_NOT_FOUND");
    assert_eq!(
        st.get_details_error_info().unwrap().metadata["taskId"],
        "nope"
    );

    // Names of the wrong shape: InvalidParams naming the field.
    for name in ["", "nope", "tasks/", "tasks/a/b"] {
        let st = g
            .get_task(pb::GetTaskRequest {
                name: name.into(),
                history_length: 0,
            })
            .await
            .unwrap_err();
        assert_eq!(st.code(), tonic::Code::InvalidArgument, "{name:?}");
        assert_eq!(reason(&st), "INVALID_PARAMS");
        assert_eq!(violation(&st), "name");
    }
    let st = g
        .list_task_push_notification_config(pb::ListTaskPushNotificationConfigRequest {
            parent: "task/x".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(violation(&st), "parent");
    let st = g
        .delete_task_push_notification_config(pb::DeleteTaskPushNotificationConfigRequest {
            name: "tasks/x/pushNotificationConfigs/".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);

    // No message; a part without content; a config without its body.
    let st = g
        .send_message(pb::SendMessageRequest::default())
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);
    assert_eq!(violation(&st), "request");
    let mut bad = send_req("x");
    bad.request.as_mut().unwrap().content[0].part = None;
    let st = g.send_message(bad).await.unwrap_err();
    assert_eq!(violation(&st), "part.part");
    let st = g
        .create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/x".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::InvalidArgument);

    // Cancel a finished task; subscribe to one.
    let done = g.send_message(send_req("hi")).await.unwrap();
    let Some(pb::send_message_response::Payload::Task(t)) = done.into_inner().payload else {
        panic!("expected a task")
    };
    assert_eq!(
        t.status.as_ref().unwrap().state,
        pb::TaskState::Completed as i32
    );
    let st = g
        .cancel_task(pb::CancelTaskRequest {
            name: format!("tasks/{}", t.id),
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::FailedPrecondition);
    assert_eq!(reason(&st), "TASK_NOT_CANCELABLE");
    let st = g
        .task_subscription(pb::TaskSubscriptionRequest {
            name: format!("tasks/{}", t.id),
        })
        .await
        .unwrap_err();
    assert_eq!(reason(&st), "UNSUPPORTED_OPERATION");
    s.stop().await;
}

/// TaskSubscription resumes after `last-event-id` like the 1.0 service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_subscription_resumes_after_last_event_id() {
    let s = server().await;
    let mut g = raw(&s).await;
    let resp = g
        .send_streaming_message(send_req("/steps 4"))
        .await
        .unwrap();
    let first = first_event_id(&resp);
    let full = grpc_items(resp).await;
    assert!(full.len() >= 5, "{full:?}");
    let Some(pb::stream_response::Payload::Task(t)) = &full[0].payload else {
        panic!("a task first")
    };
    let seen = first + 1;
    let subscribe = tonic::Request::new(pb::TaskSubscriptionRequest {
        name: format!("tasks/{}", t.id),
    });
    let resp = g
        .task_subscription(resuming(subscribe, &seen.to_string()))
        .await
        .unwrap();
    assert_eq!(grpc_items(resp).await, full[2..].to_vec());
    s.stop().await;
}

/// `switchboard send --binding grpc --protocol-version 0.3` goes over the
/// 0.3 service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_picks_grpc_03() {
    let s = server().await;
    let out = run_cli([
        "send",
        "--url",
        &s.base,
        "--json",
        "--timeout",
        "10",
        "--binding",
        "grpc",
        "--protocol-version",
        "0.3",
        "hello cli 0.3",
    ])
    .await;
    let stdout = success_stdout(&out);
    assert!(stdout.contains("TASK_STATE_COMPLETED"), "{stdout}");
    assert!(stdout.contains("hello cli 0.3"), "{stdout}");
    s.stop().await;
}

/// Bytes that are not the method's message are a Parse error on the 0.3
/// service too; extensions are echoed; push operations without push support
/// are PUSH_NOTIFICATION_NOT_SUPPORTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_extensions_and_unsupported_push() {
    use switchboard_protocol::progress::TASK_PROGRESS_URI;
    let s = TestServer::start(demo_handler()).await;
    let channel = s.grpc_channel().await;
    // A GetTask whose `name` (field 1) arrives as a varint instead of a string.
    let name_as_varint = VarintFields {
        first: 7,
        ..Default::default()
    };
    let path = "/a2a.v1.A2AService/GetTask";
    assert_parse_error(channel.clone(), path, tonic::Request::new(name_as_varint)).await;

    let mut g = A2aServiceClient::new(channel);
    let req = tonic::Request::new(send_req("hi"));
    let req = with_metadata(req, "a2a-extensions", TASK_PROGRESS_URI);
    let resp = g.send_streaming_message(req).await.unwrap();
    assert_eq!(echoed_extensions(&resp), Some(TASK_PROGRESS_URI));
    let resp = g.send_message(send_req("hi")).await.unwrap();
    assert_eq!(echoed_extensions(&resp), None);

    let st = g
        .create_task_push_notification_config(pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t".into(),
            config_id: String::new(),
            config: Some(pb::TaskPushNotificationConfig {
                name: String::new(),
                push_notification_config: Some(pb::PushNotificationConfig {
                    url: "http://127.0.0.1:9/".into(),
                    ..Default::default()
                }),
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(st.code(), tonic::Code::FailedPrecondition);
    assert_eq!(reason(&st), "PUSH_NOTIFICATION_NOT_SUPPORTED");
    s.stop().await;
}
