//! Authentication the SDK way (feature `auth`): an authenticator given to
//! `A2aServer` guards the bindings and advertises itself on the card with
//! no further call; an extended card nobody could fetch is warned about.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use common::{Running, json_of, key_holder};
use serde_json::{Value, json};
use switchboard_sdk::auth::Schemes;
use switchboard_sdk::prelude::*;

const KEY: &str = "sdk-test-key-0123456789";

fn handler(extended: bool) -> RequestHandler {
    let agent = agent_fn(|ctx, events| async move {
        events.reply_text(format!("echo: {}", ctx.text())).await?;
        Ok(())
    });
    let card = AgentCard::new("guarded", "Echoes for key holders", "1.0");
    let mut builder = RequestHandler::builder(agent, card.clone());
    if extended {
        builder = builder.extended_card(card);
    }
    builder.build()
}

fn schemes() -> Schemes {
    key_holder(KEY)
}

fn send(id: u32) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "SendMessage",
        "params": {"message": {"messageId": format!("m{id}"), "role": "ROLE_USER",
                   "parts": [{"text": "hi"}]}}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authenticator_guards_the_server_and_is_on_its_card() {
    let running = Running::start(|base| {
        A2aServer::new(handler(false))
            .public_url(base)
            .authenticator(schemes())
    })
    .await;
    let base = running.base.clone();
    let http = reqwest::Client::new();

    // The card says how to get in, though the card was never described.
    let card = json_of(http.get(format!("{base}/.well-known/agent-card.json"))).await;
    let schemes = card["securitySchemes"]
        .as_object()
        .expect("no securitySchemes");
    assert_eq!(schemes.len(), 1, "{card}");
    let (name, scheme) = schemes.iter().next().unwrap();
    assert!(scheme.get("apiKeySecurityScheme").is_some(), "{card}");
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {name: {"list": []}}}]),
        "{card}"
    );

    // Without the key: refused before the agent sees anything.
    let refused = http.post(&base).json(&send(1)).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    // With it: served.
    let served = json_of(http.post(&base).header("x-api-key", KEY).json(&send(2))).await;
    assert!(served["result"].is_object(), "{served}");

    running.stop().await;
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log lines written while `build` assembles a server's router.
fn warnings_of(build: impl FnOnce() -> A2aServer) -> String {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let _ = build().router();
    });
    String::from_utf8(captured.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn an_extended_card_without_an_authenticator_is_warned_about() {
    let warned = warnings_of(|| A2aServer::new(handler(true)));
    assert!(
        warned.contains("extended agent card") && warned.contains("no authenticator"),
        "{warned:?}"
    );
    // With an authenticator, or without an extended card: nothing to say.
    assert_eq!(
        warnings_of(|| A2aServer::new(handler(true)).authenticator(schemes())),
        ""
    );
    assert_eq!(warnings_of(|| A2aServer::new(handler(false))), "");
}
