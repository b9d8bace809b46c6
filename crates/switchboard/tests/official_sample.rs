//! The official A2A helloworld sample, as published for a2a-sdk 1.3, under
//! our client, our CLI and our bridge.
//!
//! That sample's card lists its one interface in `supportedInterfaces`
//! (the 1.0 field) without a `protocolVersion`; the official SDK only warns.
//! `interop/py/helloworld_sample.py` serves the same card on the official
//! Python SDK. Each test starts it and checks that what a user runs against
//! it works: `A2AClient::connect`, `switchboard send`, `switchboard bridge`.
//!
//! The Python venv comes from `interop/setup.sh`; without it the tests are
//! skipped with a message, unless `SWITCHBOARD_REQUIRE_INTEROP` is set (as
//! in CI).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use switchboard_agui::run::RunEvents;
use switchboard_agui::sse::SseDecoder;
use switchboard_protocol::{Message, SendMessageResponse, TaskState};

/// What the sample answers to `text`.
fn reply(text: &str) -> String {
    format!("Hello, World! I have received your request ({text})")
}

#[tokio::test]
async fn the_client_takes_an_unversioned_interface_as_1_0() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    switchboard_client::tls::install_default_provider();
    let sample = proc::PythonServer::start(&python, "py/helloworld_sample.py");
    let card: serde_json::Value =
        proc::get_json(&format!("{}/.well-known/agent-card.json", sample.base)).await;
    // The sample's card is as published: no protocolVersion on its interface.
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert!(
        card["supportedInterfaces"][0]
            .get("protocolVersion")
            .is_none(),
        "{card}"
    );

    let client = switchboard_client::A2AClient::connect(&sample.base)
        .await
        .unwrap();
    assert_eq!(client.interface().protocol_version, "1.0");
    let answer = client.send_message(Message::user_text("hi")).await.unwrap();
    let SendMessageResponse::Task(task) = answer else {
        panic!("the sample answers with a task: {answer:?}");
    };
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert!(
        task.artifacts()
            .iter()
            .any(|a| a.text().contains(&reply("hi"))),
        "{task:?}"
    );
}

#[test]
fn the_cli_sends_to_the_sample() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let sample = proc::PythonServer::start(&python, "py/helloworld_sample.py");
    let out = proc::switchboard_without_env()
        .args(["send", "--url", &sample.base, "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains(&reply("hi")),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(!stderr.contains("offers no interface"), "stderr: {stderr}");
}

#[tokio::test]
async fn the_bridge_fronts_the_sample() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let sample = proc::PythonServer::start(&python, "py/helloworld_sample.py");
    let bridge = proc::BridgeProc::start(&sample.base, &[]);
    assert!(bridge.line.contains("JSONRPC"), "{}", bridge.line);
    let input = json!({
        "threadId": "thread-hw",
        "runId": "run-hw",
        "messages": [{"id": "u1", "role": "user", "content": "hello sample"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    });
    let response = reqwest::Client::new()
        .post(bridge.url())
        .header("content-type", "application/json")
        .body(input.to_string())
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body = response.bytes().await.unwrap();
    let mut decoder = SseDecoder::new();
    let events: Vec<_> = decoder
        .push(&body)
        .unwrap()
        .into_iter()
        .map(|e| e.event)
        .collect();
    assert!(decoder.is_idle());
    struct Run(Vec<switchboard_agui::events::Event>);
    impl RunEvents for Run {
        fn events(&self) -> &[switchboard_agui::events::Event] {
            &self.0
        }
    }
    let run = Run(events);
    run.check_ended().unwrap();
    run.check_succeeded().unwrap();
    assert!(
        run.text().contains(&reply("hello sample")),
        "{}",
        run.text()
    );
}
