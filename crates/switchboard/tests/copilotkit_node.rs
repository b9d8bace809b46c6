//! CopilotKit's own client (`@copilotkit/core`'s `CopilotKitCore`, pinned
//! in `interop/agui/package.json`) against `switchboard bridge` in front of
//! `serve --agent demo`, and against `serve`'s own routes: no CopilotKit
//! runtime in between. `interop/agui/copilotkit.mjs` reads `/info`, runs a
//! thread, connects to it from a fresh page (a reload) and stops a long
//! task from the UI, in the client's default transport (which probes the
//! multi-route mode) and in its single-route one; it prints what the client
//! got, and these tests assert on it.
//!
//! The node packages come from `interop/setup.sh`; without them the tests
//! are skipped with a message, unless `SWITCHBOARD_REQUIRE_INTEROP` is set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use serde_json::Value;

/// The name on the demo agent's card: the agent's id at the routes.
const AGENT: &str = "switchboard demo";

fn drive(node: &std::path::Path, runtime_url: &str, transport: &str) -> Value {
    proc::agui_node_report(node, "copilotkit.mjs", [runtime_url, AGENT, transport])
}

/// The contents of the messages of `of` (a report's `run`, `connect`, …).
fn contents(of: &Value) -> Vec<String> {
    of["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages in {of}"))
        .iter()
        .map(|m| {
            format!(
                "{}: {}",
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap()
            )
        })
        .collect()
}

/// What the client must have got from a runtime at `runtime_url`.
fn check(report: &Value, transport: &str) {
    let info = &report["info"];
    assert_eq!(info["status"], "connected", "{report}");
    assert_eq!(info["agents"], serde_json::json!([AGENT]), "{report}");
    assert!(
        info["description"].as_str().unwrap().contains("Send /help"),
        "{info}"
    );
    assert_eq!(info["transport"], transport, "{info}");
    assert_eq!(report["errors"], serde_json::json!([]), "{report}");

    // A run: the demo agent's answer, in the client's messages.
    let run = &report["run"];
    assert_eq!(run["failure"], Value::Null, "{run}");
    let said = contents(run);
    assert_eq!(said[0], "user: hello copilot", "{said:?}");
    assert!(
        said.iter()
            .any(|m| m.starts_with("assistant: You said: hello copilot")),
        "{said:?}"
    );

    assert!(
        said.iter()
            .any(|m| m.starts_with("assistant: You said: second turn")),
        "{said:?}"
    );

    // A reload: the fresh page gets the whole thread back, answers included.
    let connect = &report["connect"];
    assert_eq!(connect["failure"], Value::Null, "{connect}");
    let back = contents(connect);
    for turn in ["hello copilot", "second turn"] {
        assert!(back.contains(&format!("user: {turn}")), "{back:?}");
        assert!(
            back.iter()
                .any(|m| m.starts_with(&format!("assistant: You said: {turn}"))),
            "{back:?}"
        );
    }
    assert_eq!(
        connect["state"]["view"]["contextId"], run["state"]["view"]["contextId"],
        "{connect}"
    );

    // The stop button: the stop route cancelled the thread's task.
    let stop = &report["stop"];
    assert_eq!(stop["failure"], Value::Null, "{stop}");
    assert_eq!(stop["stopping"], true, "{stop}");
    assert_eq!(stop["answer"]["status"], 200, "{stop}");
    assert_eq!(stop["answer"]["body"]["stopped"], true, "{stop}");
    let tasks = stop["later"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{stop}");
    assert_eq!(tasks[0]["state"], "canceled", "{stop}");
    assert_eq!(
        stop["answer"]["body"]["taskIds"][0], tasks[0]["taskId"],
        "{stop}"
    );
}

#[test]
fn copilotkits_client_drives_the_demo_agent_through_the_bridge() {
    let Some((node, _serve, bridge)) = proc::agui_node_and_bridge("@copilotkit/core", &[], &[])
    else {
        return;
    };
    let runtime = format!("http://127.0.0.1:{}/api/copilotkit", bridge.port);
    check(&drive(&node, &runtime, "auto"), "rest");
    check(&drive(&node, &runtime, "single"), "single");
}

#[test]
fn copilotkits_client_drives_serves_own_routes() {
    let Some(node) = proc::interop_node("agui", "@copilotkit/core") else {
        return;
    };
    let serve = proc::Serve::start("memory");
    let runtime = format!("{}/api/copilotkit", serve.base());
    check(&drive(&node, &runtime, "auto"), "rest");
}
