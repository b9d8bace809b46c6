//! `serve`'s logs, text and JSON: an access line per request with its
//! request id (also returned as `X-Request-Id`), no ANSI codes in a file,
//! and no secret of a run that used them all: the store URL's password,
//! `Authorization` and `X-API-Key` headers, credentials in a query string,
//! push config tokens and credentials.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proc;

use proc::{Serve, call, send_rpc};
use serde_json::{Value, json};

/// Every secret of the run contains this; none may reach the log.
const MARK: &str = "s3cr3t";

async fn store_url(test: &str) -> String {
    match switchboard_store_postgres::testing::fresh_database_or_skip(test).await {
        // A password the trust-auth test server ignores, but `serve` sees.
        Some(url) => url.replacen("@", &format!(":pw-{MARK}@"), 1),
        None => "memory".into(),
    }
}

async fn exercise(base: &str) {
    // Credentials in headers, on the JSON-RPC binding.
    let params = json!({
        "message": {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": "hi"}]},
        "configuration": {"returnImmediately": true}});
    let (bearer, key) = (format!("Bearer bearer-{MARK}"), format!("key-{MARK}"));
    let headers = [
        ("Authorization", bearer.as_str()),
        ("X-API-Key", key.as_str()),
        ("X-Request-Id", "caller-id-1"),
    ];
    let resp = send_rpc(base, "SendMessage", params, &headers).await;
    assert_eq!(
        resp.headers()["x-request-id"],
        "caller-id-1",
        "a sane id is kept"
    );
    let answer: Value = resp.json().await.unwrap();
    let task = answer["result"]["task"]["id"].as_str().unwrap().to_string();
    // Push config credentials.
    let created = call(
        base,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "url": "https://hooks.example.com/a", "token": format!("token-{MARK}"),
               "authentication": {"scheme": "Bearer", "credentials": format!("cred-{MARK}")}}),
    )
    .await;
    assert!(created.get("result").is_some(), "{created}");
    // A credential in a query string, on REST; an id with a space is replaced.
    let resp = reqwest::Client::new()
        .get(format!(
            "{base}/tasks/{task}?historyLength=1&access_token=q-{MARK}"
        ))
        .header("A2A-Version", "1.0")
        .header("X-Request-Id", "not sane")
        .send()
        .await
        .unwrap();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_string();
    assert!(id != "not sane" && id.len() == 36, "{id}");
}

fn run(format: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = rt.block_on(store_url("logs_have_no_secrets"));
    let mut serve = Serve::start_logging(
        &store,
        &[
            "--log-format",
            format,
            "--log",
            "debug",
            // The webhook's name resolves nowhere; configs are checked by name.
            "--push-allow-host",
            "hooks.example.com",
        ],
        &log,
    );
    rt.block_on(exercise(&serve.base()));
    assert!(serve.terminate(std::time::Duration::from_secs(30)));
    (std::fs::read_to_string(&log).unwrap(), store)
}

fn check_common(text: &str, store: &str) {
    assert!(!text.contains(MARK), "a secret reached the log:\n{text}");
    assert!(!text.contains('\x1b'), "no ANSI codes in a file");
    if store != "memory" {
        assert!(text.contains(":***@"), "the store URL is logged masked");
    }
}

#[test]
fn json_logs_have_access_lines_and_no_secrets() {
    let (text, store) = run("json");
    check_common(&text, &store);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let access: Vec<&Value> = lines
        .iter()
        .filter(|l| l["target"] == "switchboard::access")
        .collect();
    assert_eq!(access.len(), 3, "one line per request: {access:?}");
    let first = access
        .iter()
        .find(|l| l["request_id"] == "caller-id-1")
        .unwrap();
    assert_eq!(first["method"], "POST");
    assert_eq!(first["path"], "/");
    assert_eq!(first["binding"], "jsonrpc");
    assert_eq!(first["status"], 200);
    assert!(first["duration_ms"].as_f64().unwrap() >= 0.0);
    assert!(access.iter().any(|l| l["binding"] == "rest"), "{access:?}");
    assert!(
        lines
            .iter()
            .all(|l| l["level"].is_string() && l["timestamp"].is_string()),
        "every line has level and timestamp"
    );
}

#[test]
fn text_logs_have_access_lines_and_no_secrets() {
    let (text, store) = run("text");
    check_common(&text, &store);
    let access: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("switchboard::access"))
        .collect();
    assert_eq!(access.len(), 3, "{text}");
    assert!(
        // String fields are quoted in the text form.
        access
            .iter()
            .any(|l| l.contains("request_id=\"caller-id-1\"") && l.contains("binding=\"jsonrpc\"")),
        "{access:?}"
    );
}
