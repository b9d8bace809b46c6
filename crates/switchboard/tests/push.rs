//! Push notifications end to end over real loopback HTTP: the four config
//! operations over JSON-RPC and REST (validation, scoping, limits, the SSRF
//! refusal), the card and the JWKS, and a streamed demo task whose every
//! event reaches a real receiver in order, signed with a key from the
//! server's JWKS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod push_receiver;
mod util;

use std::sync::Arc;

use push_receiver::Receiver;
use serde_json::{Value, json};
use switchboard_client::push::PushVerifier;
use switchboard_core::{InMemoryStore, PushConfigLimits};
use util::push::PushServer;
use util::*;

async fn push_server() -> PushServer {
    let store = Arc::new(InMemoryStore::new());
    let limits = PushConfigLimits {
        allow_hosts: vec!["127.0.0.1".into()],
        max_configs_per_task: 3,
        ..Default::default()
    };
    PushServer::start(store, limits).await
}

fn msg(text: &str) -> Value {
    json!({"messageId": format!("m-{text}-{}", uuid()), "role": "ROLE_USER", "parts": [{"text": text}]})
}

fn result(v: &Value) -> Value {
    assert!(v.get("error").is_none(), "unexpected error: {v}");
    v["result"].clone()
}

fn error(v: &Value) -> (i64, String) {
    (
        v["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an error: {v}")),
        v["error"]["message"].as_str().unwrap().to_string(),
    )
}

async fn new_task(s: &TestServer) -> String {
    let r = result(
        &s.rpc(
            "SendMessage",
            json!({"message": msg("/steps 1"), "configuration": {"returnImmediately": false}}),
        )
        .await,
    );
    r["task"]["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn card_and_jwks_announce_push() {
    let p = push_server().await;
    let s = &p.server;
    let card = s.card().await;
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    let (status, body, _) = s
        .send(reqwest::Method::GET, "/.well-known/jwks.json", None, &[])
        .await;
    assert_eq!(status, 200);
    let jwks: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(jwks["keys"][0]["kid"], p.keys.current_kid().as_str());
    assert_eq!(jwks["keys"][0]["kty"], "EC");
    assert_eq!(jwks["keys"][0]["crv"], "P-256");
    assert!(
        jwks["keys"][0].get("d").is_none(),
        "no private key material"
    );
    // Rotation shows at once.
    let new_kid = p.keys.rotate().unwrap();
    let jwks = s.get_json("/.well-known/jwks.json").await;
    assert_eq!(jwks["keys"].as_array().unwrap().len(), 2);
    assert_eq!(jwks["keys"][0]["kid"], new_kid.as_str());
}

#[tokio::test]
async fn config_operations_over_json_rpc() {
    let p = push_server().await;
    let s = &p.server;
    let task = new_task(s).await;

    // Create with a server-assigned id, and with the client's id.
    let created = result(
        &s.rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://hooks.example.com/a",
                   "token": "t-a", "authentication": {"scheme": "Bearer", "credentials": "xyz"}}),
        )
        .await,
    );
    let a_id = created["id"].as_str().unwrap().to_string();
    assert!(!a_id.is_empty());
    assert_eq!(created["taskId"], task.as_str());
    assert_eq!(created["url"], "https://hooks.example.com/a");
    assert_eq!(created["authentication"]["scheme"], "Bearer");
    let b = result(
        &s.rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "id": "b", "url": "http://127.0.0.1:9/b"}),
        )
        .await,
    );
    assert_eq!(b["id"], "b");

    // Get.
    let got = result(
        &s.rpc(
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": a_id}),
        )
        .await,
    );
    assert_eq!(got, created);
    let (code, _) = error(
        &s.rpc(
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "nope"}),
        )
        .await,
    );
    assert_eq!(code, -32001, "a missing config is TaskNotFound");

    // List, paged.
    let page = result(
        &s.rpc(
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task, "pageSize": 1}),
        )
        .await,
    );
    assert_eq!(page["configs"].as_array().unwrap().len(), 1);
    assert_eq!(page["configs"][0]["id"], a_id.as_str());
    let token = page["nextPageToken"].as_str().unwrap().to_string();
    assert!(!token.is_empty());
    let page2 = result(
        &s.rpc(
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task, "pageSize": 1, "pageToken": token}),
        )
        .await,
    );
    assert_eq!(page2["configs"][0]["id"], "b");
    assert_eq!(page2["nextPageToken"], "");

    // The per-task limit (3 here).
    result(
        &s.rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://hooks.example.com/c"}),
        )
        .await,
    );
    let (code, message) = error(
        &s.rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://hooks.example.com/d"}),
        )
        .await,
    );
    assert_eq!(code, -32602);
    assert!(message.contains("already has 3"), "{message}");

    // Validation with clear messages.
    for (params, needle) in [
        (
            json!({"taskId": task, "url": "not a url"}),
            "not an absolute URL",
        ),
        (
            json!({"taskId": task, "url": "file:///etc/passwd"}),
            "http or https",
        ),
        (
            json!({"taskId": task, "url": "http://192.168.0.10/x"}),
            "--push-allow-host",
        ),
        (
            json!({"taskId": task, "url": "http://[fe80::1]/x"}),
            "link-local",
        ),
        (
            json!({"taskId": task, "url": "https://hooks.example.com/x", "authentication": {"scheme": ""}}),
            "authentication.scheme",
        ),
        (json!({"url": "https://hooks.example.com/x"}), "taskId"),
    ] {
        let (code, message) = error(&s.rpc("CreateTaskPushNotificationConfig", params).await);
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains(needle), "{needle}: {message}");
    }
    let (code, _) = error(
        &s.rpc(
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "no-such-task", "url": "https://hooks.example.com/x"}),
        )
        .await,
    );
    assert_eq!(code, -32001);

    // Delete is idempotent.
    for _ in 0..2 {
        let r = s
            .rpc(
                "DeleteTaskPushNotificationConfig",
                json!({"taskId": task, "id": "b"}),
            )
            .await;
        assert!(r.get("error").is_none(), "{r}");
    }
    let page = result(
        &s.rpc("ListTaskPushNotificationConfigs", json!({"taskId": task}))
            .await,
    );
    assert_eq!(page["configs"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn config_operations_over_rest() {
    let p = push_server().await;
    let s = &p.server;
    let task = new_task(s).await;
    let base = format!("{}/tasks/{task}/pushNotificationConfigs", s.base);
    let send = |req: reqwest::RequestBuilder| async move {
        let resp = req.header("A2A-Version", "1.0").send().await.unwrap();
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        (status, body)
    };
    let (status, created) = send(
        s.http
            .post(&base)
            .header("Content-Type", "application/json")
            .body(json!({"url": "https://hooks.example.com/r", "token": "tk"}).to_string()),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["taskId"], task.as_str());
    let (status, got) = send(s.http.get(format!("{base}/{id}"))).await;
    assert_eq!(status, 200);
    assert_eq!(got, created);
    let (status, list) = send(s.http.get(format!("{base}?pageSize=10"))).await;
    assert_eq!(status, 200);
    assert_eq!(list["configs"][0]["id"], id.as_str());
    let (status, err) = send(
        s.http
            .post(&base)
            .header("Content-Type", "application/json")
            .body(json!({"url": "http://169.254.169.254/latest"}).to_string()),
    )
    .await;
    assert_eq!(status, 400, "{err}");
    assert!(err.to_string().contains("metadata"), "{err}");
    let (status, _) = send(s.http.delete(format!("{base}/{id}"))).await;
    assert_eq!(status, 200);
    let (status, _) = send(s.http.delete(format!("{base}/{id}"))).await;
    assert_eq!(status, 200, "delete is idempotent");
    let (status, err) = send(s.http.get(format!("{base}/{id}"))).await;
    assert_eq!(status, 404, "{err}");
}

/// A streamed demo task with an inline config: the receiver gets exactly
/// the events the stream showed, in the same order, each signed with a key
/// from the server's JWKS.
#[tokio::test]
async fn a_streamed_task_is_delivered_in_order() {
    let p = push_server().await;
    let s = &p.server;
    let rx = Receiver::start().await;
    let frames = s
        .sse(
            "SendStreamingMessage",
            json!({"message": msg("/steps 6"), "configuration": {"taskPushNotificationConfig":
                {"url": rx.url(), "token": "secret-token",
                 "authentication": {"scheme": "Bearer", "credentials": "abc"}}}}),
        )
        .await
        .collect()
        .await;
    let streamed: Vec<Value> = frames.iter().map(|f| f.data["result"].clone()).collect();
    let n = streamed.len();
    assert!(n >= 9, "{n} events");
    let got = rx
        .wait_until(20, "streamed task", |got| got.len() >= n)
        .await;
    assert_eq!(got.len(), n);
    let verifier =
        PushVerifier::from_jwks_url(format!("{}/.well-known/jwks.json", s.base), rx.url())
            .issuer(&s.base);
    for (i, (r, frame)) in got.iter().zip(&streamed).enumerate() {
        assert_eq!(&r.json(), frame, "event {} matches the stream", i + 1);
        let v = verifier.verify(&r.headers, &r.body).await.unwrap();
        assert_eq!(v.claims.seq, i as u64 + 1);
        assert_eq!(v.token.as_deref(), Some("secret-token"));
        assert_eq!(r.headers["authorization"], "Bearer abc");
        assert_eq!(r.headers["content-type"], "application/a2a+json");
    }
    assert!(got[0].json().get("task").is_some(), "starts with the Task");
    assert_eq!(
        got[n - 1].json()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}

/// Task-progress data reaches a webhook only when the caller that created
/// the config activated the extension, like every other output.
#[tokio::test]
async fn progress_reaches_a_webhook_only_when_its_creator_activated_it() {
    const URI: &str = switchboard_protocol::progress::TASK_PROGRESS_URI;
    let p = push_server().await;
    let s = &p.server;
    let (with, without) = (Receiver::start().await, Receiver::start().await);
    for (rx, headers) in [
        (&with, vec![("A2A-Version", "1.0"), ("A2A-Extensions", URI)]),
        (&without, vec![("A2A-Version", "1.0")]),
    ] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": msg("/progress 1"),
            "configuration": {"taskPushNotificationConfig": {"url": rx.url()}}}});
        let (_, v, _) = s.post_json(&body.to_string(), &headers).await;
        assert_eq!(
            result(&v)["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
    }
    let done = |got: &[push_receiver::Received]| {
        got.last()
            .is_some_and(|r| r.json()["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
    };
    let got_with = with.wait_until(20, "activated webhook", done).await;
    let got_without = without.wait_until(20, "plain webhook", done).await;
    let carries =
        |r: &push_receiver::Received| r.body.windows(URI.len()).any(|w| w == URI.as_bytes());
    let with_progress = got_with.iter().filter(|r| carries(r)).count();
    assert!(
        with_progress >= 3,
        "the activating creator's webhook sees progress ({with_progress} events)"
    );
    assert_eq!(
        got_without.iter().filter(|r| carries(r)).count(),
        0,
        "the other sees none"
    );
    assert!(
        got_without.len() >= 3,
        "but still gets every event ({})",
        got_without.len()
    );
    // What was hidden is gone from the signed body itself, so signatures still verify.
    let verifier =
        PushVerifier::from_jwks_url(format!("{}/.well-known/jwks.json", s.base), without.url());
    for r in &got_without {
        verifier.verify(&r.headers, &r.body).await.unwrap();
    }
}

/// The SSRF guard of the real `serve` at creation (issue "security:" 3): a
/// webhook to this machine's own non-loopback address (a listener bound to
/// every interface is there), a name that resolves to loopback, and a name
/// that does not resolve are refused with InvalidParams naming the field
/// and why, inline in SendMessage and by CreateTaskPushNotificationConfig;
/// the listener receives nothing.
#[tokio::test]
async fn serve_refuses_webhooks_to_its_own_host_and_names_resolving_inward() {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = proc::Serve::start("memory");
    let base = serve.base();
    let task =
        proc::rpc(&base, "SendMessage", json!({"message": msg("hello")})).await["task"]["id"]
            .as_str()
            .unwrap()
            .to_string();

    let mut refused: Vec<(String, &str)> = Vec::new();
    match switchboard_push::InterfaceAddresses::read()
        .unwrap()
        .into_iter()
        .find(|ip| !ip.is_loopback())
    {
        Some(std::net::IpAddr::V4(v4)) => refused.push((format!("http://{v4}:{port}/hook"), "")),
        Some(std::net::IpAddr::V6(v6)) => {
            refused.push((format!("http://[{v6}]:{port}/hook"), ""));
        }
        None => eprintln!("skipped the own-address case: no non-loopback interface address"),
    }
    // The machine's own name, when it resolves, resolves to one of its
    // addresses (or loopback, as /etc/hosts often says).
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    if !hostname.is_empty()
        && tokio::net::lookup_host((hostname.as_str(), 0))
            .await
            .is_ok()
    {
        refused.push((format!("http://{hostname}:{port}/hook"), "resolved to"));
    } else {
        eprintln!("skipped the host-name case: {hostname:?} does not resolve");
    }
    refused.push((
        format!("http://no-such-host.invalid:{port}/hook"),
        "does not resolve",
    ));

    for (url, needle) in &refused {
        let created = proc::call(
            &base,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": url}),
        )
        .await;
        let (code, message) = error(&created);
        assert_eq!(code, -32602, "{url}: {created}");
        assert!(message.contains("url"), "{url}: {message}");
        assert!(message.contains(needle), "{url}: {message}");
        if *needle != "does not resolve" {
            assert!(message.contains("--push-allow-host"), "{url}: {message}");
        }
        eprintln!("{url}: {message}");

        let sent = proc::call(
            &base,
            "SendMessage",
            json!({"message": msg("again"),
                   "configuration": {"taskPushNotificationConfig": {"url": url}}}),
        )
        .await;
        let (code, message) = error(&sent);
        assert_eq!(code, -32602, "{url}: {sent}");
        assert!(
            message.contains("configuration.taskPushNotificationConfig.url"),
            "{url}: {message}"
        );
    }
    let accepted = listener.accept();
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the listener was reached: {accepted:?}"
    );
}
