//! Wire-level checks of the client's HTTP+JSON (REST) transport against a
//! scripted HTTP server: which method, path, query, headers and body each
//! operation sends, how the tenant lands in the path, how Google API error
//! bodies turn back into A2A errors, and how SSE streams (with `id:` and
//! `event: error`) are read.
//!
//! The scripted server is a few lines of tokio: it reads one HTTP/1.1
//! request, records it, writes the canned reply the test chose and closes
//! the connection (which also ends an SSE body). End-to-end runs against a
//! real switchboard server are in `crates/switchboard/tests/rest.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scripted;

use futures::StreamExt;
use scripted::{Seen, serve};
use serde_json::{Value, json};
use switchboard_client::protocol::{
    A2AError, AgentCard, AgentInterface, ListTasksRequest, Message, StreamResponse,
    TaskPushNotificationConfig, TaskState,
};
use switchboard_client::{A2AClient, ClientError};

/// The canned answer: status, content type, body.
type Reply = (u16, &'static str, String);

fn iface(binding: &str, url: String, tenant: Option<&str>) -> AgentInterface {
    AgentInterface {
        url,
        protocol_binding: binding.into(),
        tenant: tenant.map(String::from),
        protocol_version: "1.0".into(),
    }
}

/// A client on the HTTP+JSON interface of a card that lists JSON-RPC first.
fn rest_client(base: &str, tenant: Option<&str>) -> A2AClient {
    let mut card = AgentCard::new("scripted", "scripted", "1");
    card.supported_interfaces = vec![
        iface("JSONRPC", format!("{base}/rpc"), None),
        iface("HTTP+JSON", format!("{base}/api/"), tenant),
    ];
    let client = A2AClient::builder()
        .preferred_bindings(["HTTP+JSON"])
        .bearer_token("s3cret")
        .extension("urn:a")
        .from_card(card)
        .unwrap();
    assert_eq!(client.interface().protocol_binding, "HTTP+JSON");
    client
}

fn task_json(id: &str, state: &str) -> Value {
    json!({"id": id, "contextId": "ctx", "status": {"state": state}})
}

/// Answers each route with a plausible success.
fn happy(seen: &Seen) -> Reply {
    let path = seen.target.split('?').next().unwrap_or("");
    let body = if path.ends_with("/message:send") {
        json!({"task": task_json("t1", "TASK_STATE_COMPLETED")})
    } else if path.ends_with("/tasks") {
        json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0})
    } else if path.contains("/pushNotificationConfigs") && seen.method == "DELETE" {
        json!({})
    } else if path.ends_with("/pushNotificationConfigs") && seen.method == "GET" {
        json!({"configs": [], "nextPageToken": ""})
    } else if path.contains("/pushNotificationConfigs") {
        json!({"id": "c1", "taskId": "t1", "url": "https://example.com/hook"})
    } else if path.ends_with("/extendedAgentCard") {
        serde_json::to_value(AgentCard::new("ext", "extended", "1")).unwrap()
    } else {
        task_json("t1", "TASK_STATE_WORKING")
    };
    (200, "application/json", body.to_string())
}

#[tokio::test]
async fn every_operation_has_its_route() {
    let (base, log) = serve(happy).await;
    let client = rest_client(&base, None);
    assert_eq!(client.endpoint(), format!("{base}/api/"));

    client.send_message(Message::user_text("hi")).await.unwrap();
    let req = switchboard_client::protocol::GetTaskRequest {
        tenant: None,
        id: "t/1:x".into(),
        history_length: Some(2),
    };
    client.get_task(req).await.unwrap();
    client
        .list_tasks(ListTasksRequest {
            context_id: Some("c 1".into()),
            status: Some(TaskState::Working),
            page_size: Some(10),
            include_artifacts: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    client.cancel_task("t1").await.unwrap();
    client
        .create_push_config(TaskPushNotificationConfig {
            tenant: None,
            id: None,
            task_id: Some("t1".into()),
            url: "https://example.com/hook".into(),
            token: None,
            authentication: None,
        })
        .await
        .unwrap();
    client.get_push_config(("t1", "c1")).await.unwrap();
    client.list_push_configs("t1").await.unwrap();
    client.delete_push_config(("t1", "c1")).await.unwrap();
    assert_eq!(client.get_extended_agent_card().await.unwrap().name, "ext");

    let seen = log.lock().unwrap().clone();
    // Query pairs in a fixed order, whatever the JSON map order is.
    let normalize = |target: &str| match target.split_once('?') {
        Some((path, q)) => {
            let mut pairs: Vec<&str> = q.split('&').collect();
            pairs.sort();
            format!("{path}?{}", pairs.join("&"))
        }
        None => target.to_string(),
    };
    let got: Vec<(String, String)> = seen
        .iter()
        .map(|s| (s.method.clone(), normalize(&s.target)))
        .collect();
    let want = [
        ("POST", "/api/message:send"),
        ("GET", "/api/tasks/t%2F1%3Ax?historyLength=2"),
        (
            "GET",
            "/api/tasks?contextId=c+1&includeArtifacts=true&pageSize=10&status=TASK_STATE_WORKING",
        ),
        ("POST", "/api/tasks/t1:cancel"),
        ("POST", "/api/tasks/t1/pushNotificationConfigs"),
        ("GET", "/api/tasks/t1/pushNotificationConfigs/c1"),
        ("GET", "/api/tasks/t1/pushNotificationConfigs"),
        ("DELETE", "/api/tasks/t1/pushNotificationConfigs/c1"),
        ("GET", "/api/extendedAgentCard"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(m, p)| (m.to_string(), p.to_string()))
            .collect::<Vec<_>>()
    );
    for s in &seen {
        assert_eq!(
            s.headers.get("a2a-version").map(String::as_str),
            Some("1.0")
        );
        assert_eq!(
            s.headers.get("authorization").map(String::as_str),
            Some("Bearer s3cret")
        );
        assert_eq!(
            s.headers.get("a2a-extensions").map(String::as_str),
            Some("urn:a")
        );
    }
    // Bodies: the message, `{}` for cancel, the config without its taskId.
    assert_eq!(seen[0].body["message"]["parts"][0]["text"], "hi");
    assert_eq!(
        seen[0].headers.get("content-type").map(String::as_str),
        Some("application/json")
    );
    assert_eq!(seen[3].body, json!({}));
    assert_eq!(seen[4].body, json!({"url": "https://example.com/hook"}));
    assert!(seen[1].body.is_null(), "GET has no body");
}

#[tokio::test]
async fn tenant_goes_into_the_path() {
    let (base, log) = serve(happy).await;
    let client = rest_client(&base, Some("team a"));
    client.send_message(Message::user_text("hi")).await.unwrap();
    client.get_task("t1").await.unwrap();
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen[0].target, "/api/team%20a/message:send");
    assert!(
        seen[0].body.get("tenant").is_none(),
        "the path carries the tenant"
    );
    assert_eq!(seen[1].target, "/api/team%20a/tasks/t1");
    // A tenant REST cannot express is refused before sending.
    let client = rest_client(&base, Some("extendedAgentCard"));
    let err = client.get_task("t1").await.unwrap_err();
    assert!(matches!(err, ClientError::Config(_)), "{err:?}");
    assert_eq!(log.lock().unwrap().len(), 2);
}

fn google(code: u16, status: &str, message: &str, reason: Option<&str>, metadata: Value) -> String {
    let details = match reason {
        Some(r) => json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": r, "domain": "a2a-protocol.org", "metadata": metadata}]),
        None => json!([]),
    };
    json!({"error": {"code": code, "status": status, "message": message, "details": details}})
        .to_string()
}

/// A reply carrying a Google API error, with the HTTP status its `code` names.
fn google_reply(
    code: u16,
    status: &str,
    message: &str,
    reason: Option<&str>,
    metadata: Value,
) -> Reply {
    let body = google(code, status, message, reason, metadata);
    (code, "application/json", body)
}

#[tokio::test]
async fn google_errors_become_a2a_errors() {
    let (base, _log) = serve(|seen| {
        let path = seen.target.as_str();
        if path.contains("missing") {
            google_reply(
                404,
                "NOT_FOUND",
                "Task not found: missing",
                Some("TASK_NOT_FOUND"),
                json!({"taskId": "missing"}),
            )
        } else if path.contains(":cancel") {
            // v1.0.0 table: 409.
            google_reply(
                409,
                "FAILED_PRECONDITION",
                "Task cannot be canceled: task t1 is TASK_STATE_COMPLETED",
                Some("TASK_NOT_CANCELABLE"),
                json!({"taskId": "t1", "state": "TASK_STATE_COMPLETED"}),
            )
        } else if path.contains("noreason") {
            google_reply(415, "INVALID_ARGUMENT", "bad type", None, json!({}))
        } else if path.contains("/tasks?") || path.ends_with("/tasks") {
            google_reply(
                400,
                "UNIMPLEMENTED",
                "A2A version '0.3' is not supported",
                Some("VERSION_NOT_SUPPORTED"),
                json!({"version": "0.3"}),
            )
        } else if path.contains("proxy") {
            (502, "text/html", "<html>bad gateway</html>".into())
        } else {
            (200, "application/json", "not json".into())
        }
    })
    .await;
    let client = rest_client(&base, None);
    let err = client.get_task("missing").await.unwrap_err();
    assert_eq!(
        err.as_protocol(),
        Some(&A2AError::TaskNotFound("missing".into()))
    );
    assert_eq!(err.code(), Some(-32001));
    let err = client.cancel_task("t1").await.unwrap_err();
    assert_eq!(
        err.as_protocol(),
        Some(&A2AError::TaskNotCancelable {
            task_id: "t1".into(),
            state: "TASK_STATE_COMPLETED".into()
        })
    );
    let err = client.get_task("noreason").await.unwrap_err();
    assert_eq!(err.code(), Some(-32005), "falls back to the HTTP status");
    let err = client
        .list_tasks(ListTasksRequest::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.as_protocol(),
        Some(&A2AError::VersionNotSupported("0.3".into()))
    );
    let err = client.get_task("proxy").await.unwrap_err();
    assert!(
        matches!(err, ClientError::Http { status: 502, .. }),
        "{err:?}"
    );
    let err = client.get_task("ok-but-garbage").await.unwrap_err();
    assert!(matches!(err, ClientError::Decode(_)), "{err:?}");
}

#[tokio::test]
async fn streams_read_ids_and_error_events() {
    let (base, log) = serve(|seen| {
        if seen.target.contains("refused") {
            return google_reply(404, "NOT_FOUND", "Task not found: refused", Some("TASK_NOT_FOUND"), json!({"taskId": "refused"}));
        }
        let task = json!({"task": task_json("t1", "TASK_STATE_SUBMITTED")});
        let working = json!({"statusUpdate": {"taskId": "t1", "contextId": "ctx", "status": {"state": "TASK_STATE_WORKING"}}});
        let err = google(500, "INTERNAL", "Internal error: store failed", Some("INTERNAL_ERROR"), json!({}));
        let body = format!(
            ": keep-alive\n\nid: 1\ndata: {task}\n\nid: 2\ndata: {working}\n\nevent: error\ndata: {err}\n\nid: 3\ndata: {working}\n\n"
        );
        (200, "text/event-stream", body)
    })
    .await;
    let client = rest_client(&base, Some("acme"));
    let mut events = client
        .send_streaming_message(Message::user_text("go"))
        .await
        .unwrap();
    let first = events.next().await.unwrap().unwrap();
    assert_eq!(first.seq, Some(1));
    assert!(matches!(first.event, StreamResponse::Task(_)));
    let second = events.next().await.unwrap().unwrap();
    assert_eq!(second.seq, Some(2));
    let err = events.next().await.unwrap().unwrap_err();
    assert_eq!(
        err.as_protocol(),
        Some(&A2AError::Internal("store failed".into()))
    );
    assert!(events.next().await.is_none(), "an error ends the stream");

    let mut sub = client.subscribe_to_task("t1").await.unwrap();
    assert_eq!(sub.next().await.unwrap().unwrap().seq, Some(1));
    let err = client.subscribe_to_task("refused").await.err().unwrap();
    assert_eq!(err.code(), Some(-32001));

    let seen = log.lock().unwrap().clone();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].target.as_str()),
        ("POST", "/api/acme/message:stream")
    );
    assert_eq!(
        seen[0].headers.get("accept").map(String::as_str),
        Some("text/event-stream")
    );
    assert_eq!(
        (seen[1].method.as_str(), seen[1].target.as_str()),
        ("GET", "/api/acme/tasks/t1:subscribe")
    );
}
