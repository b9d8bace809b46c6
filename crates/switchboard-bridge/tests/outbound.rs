//! What the agent receives through the bridge: the A2A messages captured at
//! the agent (the scripted agent records every `RequestContext::message`),
//! for a conversation the agent has not seen — the history, the gating and
//! remapping of system/developer messages, the Engram lane — never the
//! AG-UI run's ids.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use serde_json::{Value, json};
use switchboard_bridge::options::ENGRAM_URI;
use switchboard_bridge::{BridgeConfig, RemoteBackend};
use switchboard_protocol::{Message, PartContent, Role};

/// A conversation that started elsewhere: a system prompt, a user turn,
/// the assistant's answer, a developer note, and the new user turn.
fn conversation() -> Value {
    json!([
        {"id": "s1", "role": "system", "content": "You are terse."},
        user("u1", "/stream hi"),
        {"id": "a1", "role": "assistant", "content": "Hello!"},
        {"id": "d1", "role": "developer", "content": "Prefer trains."},
        user("u2", "/stream book Oslo"),
    ])
}

/// The scripted agent behind a bridge configured with `bridge`.
async fn bridged(bridge: BridgeConfig) -> (Arc<Script>, Bridge) {
    let script = Arc::new(Script::default());
    let (_, client) = agent(script.clone()).await;
    let mut config = fast_config();
    config.run.bridge = bridge;
    (
        script.clone(),
        common::bridge(RemoteBackend::new(client), config).await,
    )
}

/// The one message the agent received.
fn only_message(script: &Script) -> Message {
    let received = script.received();
    assert_eq!(received.len(), 1, "{received:?}");
    received.into_iter().next().unwrap()
}

/// `(AG-UI role, text)` of each part, from its `metadata.agui` tag.
fn tagged(parts: &Value) -> Vec<(String, String)> {
    parts
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let role = p["metadata"]["agui"]["role"].as_str().unwrap().to_owned();
            (role, p["text"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn the_history_reaches_the_agent_and_system_messages_are_gated() {
    let (script, bridge) = bridged(BridgeConfig::default()).await;
    bridge.run_verified(conversation(), json!({})).await;
    let message = only_message(&script);
    // The turn is the new user message; the developer note is dropped.
    assert_eq!(message.role, Role::User);
    assert_eq!(message.text(), "/stream book Oslo");
    let json = serde_json::to_value(&message).unwrap();
    assert_eq!(
        tagged(&json["parts"]),
        [("user".into(), "/stream book Oslo".into())]
    );
    // The earlier turns travel as A2A messages, the system prompt dropped.
    let history = json["metadata"]["agui"]["history"].as_array().unwrap();
    let roles: Vec<&str> = history
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["ROLE_USER", "ROLE_AGENT"]);
    assert_eq!(
        tagged(&history[0]["parts"]),
        [("user".into(), "/stream hi".into())]
    );
    assert_eq!(
        tagged(&history[1]["parts"]),
        [("assistant".into(), "Hello!".into())]
    );
    let text = json.to_string();
    for gated in ["You are terse.", "Prefer trains."] {
        assert!(!text.contains(gated), "{gated} was forwarded: {text}");
    }
    assert!(message.extensions.is_empty(), "{:?}", message.extensions);
    assert_no_agui_ids(&script);
}

#[tokio::test]
async fn forwarded_system_messages_are_user_content_tagged_with_their_role() {
    let config = BridgeConfig {
        forward_system_messages: true,
        ..BridgeConfig::default()
    };
    let (script, bridge) = bridged(config).await;
    bridge.run_verified(conversation(), json!({})).await;
    let json = serde_json::to_value(only_message(&script)).unwrap();
    assert_eq!(json["role"], "ROLE_USER");
    assert_eq!(
        tagged(&json["parts"]),
        [
            ("developer".into(), "Prefer trains.".into()),
            ("user".into(), "/stream book Oslo".into())
        ]
    );
    let history = json["metadata"]["agui"]["history"].as_array().unwrap();
    let roles: Vec<&str> = history
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["ROLE_USER", "ROLE_USER", "ROLE_AGENT"]);
    assert_eq!(
        tagged(&history[0]["parts"]),
        [("system".into(), "You are terse.".into())]
    );
    assert_no_agui_ids(&script);
}

#[tokio::test]
async fn an_engram_message_goes_to_the_config_lane_only_when_enabled() {
    let config_message = json!([{
        "id": "c1", "role": "user", "content": "set the tone",
        "metadata": {ENGRAM_URI: {"tone": "formal"}}
    }]);
    // Enabled: a config message, the extension named on the message.
    let engram = BridgeConfig {
        engram: true,
        ..BridgeConfig::default()
    };
    let (script, bridge) = bridged(engram).await;
    bridge.run_verified(config_message.clone(), json!({})).await;
    let message = only_message(&script);
    assert_eq!(message.extensions, [ENGRAM_URI]);
    let data: Vec<(&Value, Option<&Value>)> = message
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Data(d) => Some((d, p.metadata.as_ref().and_then(|m| m.get(ENGRAM_URI)))),
            _ => None,
        })
        .collect();
    assert_eq!(data.len(), 1, "{:?}", message.parts);
    let (config, tagged_with) = data[0];
    assert_eq!(config["type"], "engram.config");
    assert_eq!(config["tone"], "formal");
    // The part names its lane too (ADR 0002): the payload under the URI.
    assert_eq!(tagged_with, Some(&json!({"tone": "formal"})));
    // Disabled (the default): an ordinary message, its text, nothing of Engram.
    let (script, bridge) = bridged(BridgeConfig::default()).await;
    bridge.run_verified(config_message, json!({})).await;
    let message = only_message(&script);
    assert_eq!(message.text(), "set the tone");
    assert!(message.extensions.is_empty());
    let text = serde_json::to_string(&message).unwrap();
    assert!(!text.contains(ENGRAM_URI), "{text}");
    assert!(!text.contains("a2ui.org"), "{text}");
}

/// A run that names a context the agent has no task in yet (a CopilotKit
/// thread's first run names its thread's context) carries the history as a
/// new context does; once the agent has a task there, a run names it and
/// sends only its turn.
#[tokio::test]
async fn a_named_context_without_tasks_gets_the_history_and_then_only_turns() {
    let (script, bridge) = bridged(BridgeConfig::default()).await;
    // The context of thread "t1" of the (anonymous) caller, as the
    // CopilotKit routes name it.
    let context =
        switchboard_bridge::Owner::of(switchboard_core::ANONYMOUS).thread_context_id("t1");
    let named = json!({"a2a": {"contextId": context}});
    bridge.run_verified(conversation(), named.clone()).await;
    let first = serde_json::to_value(only_message(&script)).unwrap();
    assert_eq!(first["contextId"], context.as_str());
    let history = first["metadata"]["agui"]["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{first}");

    let mut next = conversation();
    let turns = next.as_array_mut().unwrap();
    turns.push(json!({"id": "a2", "role": "assistant", "content": "Booked."}));
    turns.push(user("u3", "/stream thanks"));
    bridge.run_verified(next, named).await;
    let received = script.received();
    assert_eq!(received.len(), 2, "{received:?}");
    let second = serde_json::to_value(&received[1]).unwrap();
    assert_eq!(second["contextId"], context.as_str());
    assert!(second["metadata"]["agui"]["history"].is_null(), "{second}");
    assert_eq!(
        tagged(&second["parts"]),
        [("user".into(), "/stream thanks".into())]
    );
}
