//! Signed agent cards: the server signs its card with the push keys, our
//! client verifies it (pinned keys or the card origin's own JWKS) and
//! refuses tampered, foreign and unsigned cards; the official Python SDK
//! verifies our signature and we verify one the Python SDK made.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proc;
mod util;

use std::process::Command;

use axum::routing::get;
use serde_json::Value;
use switchboard_client::card_signature::{JwkSet, verify_card};
use switchboard_client::{CardSignatureError, CardTrust, ClientBuilder, ClientError};
use switchboard_core::RequestHandler;
use switchboard_protocol::{AgentCard, TaskState};
use switchboard_runtimes::builtin::{EchoTask, echo_card};
use switchboard_server::push::PushOptions;
use util::{TestServer, failure_stderr, success_stdout, task_of};

fn handler() -> RequestHandler {
    RequestHandler::builder(EchoTask, echo_card()).build()
}

async fn signed_server() -> TestServer {
    TestServer::start_with(
        |s| s.push(PushOptions::new()).unwrap().sign_card(true),
        handler(),
    )
    .await
}

async fn jwks(server: &TestServer) -> JwkSet {
    serde_json::from_value(server.get_json("/.well-known/jwks.json").await).unwrap()
}

/// Serves `card` as the agent card of a server on its own port (what a
/// proxy or cache in the middle, or an impostor, would serve).
async fn serve_card(card: Value) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/.well-known/agent-card.json",
        get(move || {
            let card = card.clone();
            async move { axum::Json(card) }
        }),
    );
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (base, task)
}

#[tokio::test]
async fn our_client_verifies_the_signed_card_and_talks_to_the_agent() {
    let server = signed_server().await;
    let card = server.card().await;
    let sig = &card["signatures"][0];
    assert!(
        sig["protected"].is_string() && sig["signature"].is_string(),
        "{card}"
    );

    let client = ClientBuilder::new()
        .verify_card(CardTrust::SameOrigin)
        .connect(&server.base)
        .await
        .unwrap();
    let reply = task_of(client.send_text("hi").await.unwrap());
    assert_eq!(reply.status.state, TaskState::Completed);
    assert_eq!(reply.artifacts()[0].text(), "hi", "echoed");

    let keys = jwks(&server).await;
    let pinned = ClientBuilder::new()
        .verify_card(CardTrust::Keys(keys.clone()))
        .fetch_card(&server.base)
        .await
        .unwrap();
    // The kid that signed is the server's current push key.
    let kid = verify_card(&pinned, &keys).unwrap();
    assert_eq!(Some(kid.as_str()), keys.keys[0].common.key_id.as_deref());
    server.stop().await;
}

#[tokio::test]
async fn tampered_foreign_and_unsigned_cards_are_refused() {
    let server = signed_server().await;
    let keys = jwks(&server).await;
    let card = server.card().await;

    // Every signed field counts, including one nested in an interface.
    let mut changes: Vec<(&str, Value)> = Vec::new();
    let mut c = card.clone();
    c["name"] = "impostor".into();
    changes.push(("name", c));
    let mut c = card.clone();
    c["supportedInterfaces"][0]["url"] = "http://127.0.0.1:9/".into();
    changes.push(("interface url", c));
    let mut c = card.clone();
    c["capabilities"]["streaming"] = false.into();
    changes.push(("capabilities.streaming", c));
    let mut c = card.clone();
    let s = c["signatures"][0]["signature"]
        .as_str()
        .unwrap()
        .to_string();
    c["signatures"][0]["signature"] = s.chars().rev().collect::<String>().into();
    changes.push(("signature", c));
    for (what, tampered) in changes {
        let (base, task) = serve_card(tampered).await;
        let err = ClientBuilder::new()
            .verify_card(CardTrust::Keys(keys.clone()))
            .connect(&base)
            .await
            .err()
            .unwrap_or_else(|| panic!("a card with a changed {what} was accepted"));
        assert!(
            matches!(
                err,
                ClientError::CardSignature(CardSignatureError::Invalid(_))
            ),
            "{what}: {err}"
        );
        assert!(err.to_string().contains("no valid signature"), "{err}");
        task.abort();
    }

    // The untouched card, served from elsewhere: pinned keys accept it,
    // but its jku is on another origin, so SameOrigin finds no key.
    let (base, task) = serve_card(card.clone()).await;
    ClientBuilder::new()
        .verify_card(CardTrust::Keys(keys.clone()))
        .fetch_card(&base)
        .await
        .unwrap();
    let err = ClientBuilder::new()
        .verify_card(CardTrust::SameOrigin)
        .fetch_card(&base)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no trusted key"), "{err}");
    task.abort();

    // Signed by another server's keys: not trusted.
    let other = signed_server().await;
    let other_card: AgentCard = serde_json::from_value(other.card().await).unwrap();
    let err = verify_card(&other_card, &keys).unwrap_err();
    assert!(err.to_string().contains("no trusted key"), "{err}");
    other.stop().await;

    // An unsigned card, when a signature is required.
    let plain = TestServer::start(handler()).await;
    let err = ClientBuilder::new()
        .verify_card(CardTrust::SameOrigin)
        .connect(&plain.base)
        .await
        .err()
        .unwrap();
    assert!(
        matches!(
            err,
            ClientError::CardSignature(CardSignatureError::Unsigned)
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "agent card signature: the agent card is not signed"
    );
    plain.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn the_official_python_sdk_verifies_our_card_and_we_verify_its() {
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let server = signed_server().await;
    let base = server.base.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(proc::repo_root().join("interop/py/signed_card.py"))
            .arg(&base)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert_eq!(
        stdout.lines().last(),
        Some("interop: 7 passed, 0 failed"),
        "{stdout}\n{stderr}"
    );

    let line = |prefix: &str| -> Value {
        let text = stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line"));
        serde_json::from_str(text).unwrap()
    };
    let python_card: AgentCard = serde_json::from_value(line("python-signed: ")).unwrap();
    let python_keys: JwkSet = serde_json::from_value(line("python-jwks: ")).unwrap();
    assert_eq!(verify_card(&python_card, &python_keys).unwrap(), "py-1");
    let mut forged = python_card.clone();
    forged.description.push('!');
    assert!(verify_card(&forged, &python_keys).is_err());
    server.stop().await;
}

/// `switchboard serve --sign-card` signs; `switchboard card --verify-card`
/// checks it, and refuses an unsigned server's card with the reason.
#[test]
fn the_cli_signs_with_serve_and_verifies_with_verify_card() {
    let cli = |base: &str| {
        Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["card", "--url", base, "--verify-card"])
            .output()
            .unwrap()
    };
    let signed = proc::Serve::start_with("memory", &["--sign-card"]);
    let out = cli(&signed.base());
    let stdout = success_stdout(&out);
    assert!(stdout.contains("switchboard demo"), "{stdout}");

    let plain = proc::Serve::start("memory");
    let stderr = failure_stderr(&cli(&plain.base()));
    assert!(stderr.contains("the agent card is not signed"), "{stderr}");

    let off = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--store", "memory", "--listen", "127.0.0.1:0"])
        .args(["--no-push", "--sign-card"])
        .output()
        .unwrap();
    let stderr = failure_stderr(&off);
    assert!(stderr.contains("turn push on"), "{stderr}");
}
