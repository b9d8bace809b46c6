//! The AG-UI view of every demo behaviour, checked by the official client.
//!
//! Each behaviour runs on the demo agent in-process; its A2A stream goes
//! through `switchboard_agui::Converter` and is written twice, as SSE
//! frames and as protobuf frames. `interop/agui/check.mjs` then replays each
//! file to `@ag-ui/client` 1.0.0's `HttpAgent` over loopback — so the
//! client's own schema enforcement and `verifyEvents` run — and decodes the
//! protobuf frames with `@ag-ui/proto`, comparing them with the SSE events.
//! This test asserts on what the client built: messages, state, interrupts,
//! run errors.
//!
//! The node packages are installed by `interop/setup.sh`; without them the
//! test is skipped with a message, unless `SWITCHBOARD_REQUIRE_INTEROP` is
//! set (as it is in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::ffi::OsStr;
use std::path::Path;

use futures::StreamExt;
use serde_json::Value;
use switchboard_agui::{Converter, ConverterOptions, Frame, proto, sse};
use switchboard_core::{CallContext, RequestHandler};
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{CancelTaskRequest, Message, SendMessageRequest, StreamResponse};
use switchboard_runtimes::builtin::{DemoAgent, demo_card};

/// Runs `text` on the demo agent and converts its stream. With `cancel`,
/// the task is canceled once its second item arrived.
async fn frames_of(h: &RequestHandler, call: &CallContext, text: &str, cancel: bool) -> Vec<Frame> {
    let mut stream = h
        .send_streaming_message(call, SendMessageRequest::new(Message::user_text(text)))
        .await
        .unwrap();
    let mut conv = Converter::new(ConverterOptions::default());
    let mut frames = Vec::new();
    let mut n = 0;
    while let Some(item) = stream.next().await {
        let item = item.unwrap();
        n += 1;
        if cancel && n == 2 {
            let (StreamResponse::Task(_) | StreamResponse::StatusUpdate(_)) = &item.event else {
                panic!("unexpected second item")
            };
            let id = item.event.task_id().unwrap().to_owned();
            h.cancel_task(
                call,
                CancelTaskRequest {
                    tenant: None,
                    id,
                    metadata: None,
                },
            )
            .await
            .unwrap();
        }
        frames.extend(conv.convert_logged(&item));
    }
    assert!(conv.is_over() || frames.iter().any(|f| f.event.type_name() == "RUN_FINISHED"));
    frames
}

fn write(dir: &Path, name: &str, frames: &[Frame]) {
    let mut text = Vec::new();
    let mut bin = Vec::new();
    for f in frames {
        sse::write_sse_frame(&mut text, f.id.as_deref(), &f.event);
        proto::write_frame(&mut bin, &f.event).unwrap();
    }
    std::fs::write(dir.join(format!("{name}.sse")), text).unwrap();
    std::fs::write(dir.join(format!("{name}.proto")), bin).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_client_accepts_every_demo_behaviour() {
    let Some(node) = proc::interop_node("agui", "@ag-ui/client") else {
        return;
    };
    let h = RequestHandler::builder(DemoAgent::default(), demo_card()).build();
    let plain = CallContext::anonymous();
    // As a binding does: the caller asks for the extension, the handler activates it.
    let mut with_progress = CallContext::anonymous().with_extensions_header(TASK_PROGRESS_URI);
    h.activate_extensions(&mut with_progress).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, bool); 11] = [
        ("analyse", "hello world", false),
        ("steps", "/steps 2", false),
        ("ask", "/ask", false),
        ("approve", "/approve the deploy", false),
        ("fail", "/fail because I said so", false),
        ("reject", "/reject", false),
        ("message", "/message hi", false),
        ("think", "/think count these words", false),
        ("tool", "/tool hello there", false),
        ("cancel", "/long 30", true),
        ("progress", "/progress 1", false),
    ];
    for (name, text, cancel) in cases {
        let call = if name == "progress" {
            &with_progress
        } else {
            &plain
        };
        let frames = frames_of(&h, call, text, cancel).await;
        write(dir.path(), name, &frames);
    }

    let report = proc::agui_node_report(&node, "check.mjs", [dir.path().as_os_str()]);

    for (name, _, _) in cases {
        let r = &report[name];
        assert!(
            r["protoDecodeError"].is_null(),
            "{name}: {}",
            r["protoDecodeError"]
        );
        assert_eq!(r["protoMismatches"], serde_json::json!([]), "{name}");
        for enc in ["sse", "proto"] {
            assert!(
                r[enc]["failure"].is_null(),
                "{name} over {enc}: {}",
                r[enc]["failure"]
            );
            assert_eq!(r[enc]["types"][0], "RUN_STARTED", "{name} over {enc}");
        }
        // Both encodings build the same thing in the client.
        for key in [
            "messages",
            "state",
            "pendingInterrupts",
            "runErrors",
            "types",
        ] {
            assert_eq!(
                r["sse"][key], r["proto"][key],
                "{name}: {key} differs by encoding"
            );
        }
    }
    let run = |name: &str| report[name]["sse"].clone();

    let analyse = run("analyse");
    assert!(
        proc::report_contents(&analyse, "assistant").contains("Words: 2"),
        "{analyse}"
    );
    assert_eq!(analyse["state"]["a2a"]["status"]["state"], "completed");
    assert!(
        analyse["state"]["a2a"]["artifacts"]
            .as_object()
            .unwrap()
            .len()
            == 1
    );

    let steps = run("steps");
    assert!(proc::report_contents(&steps, "assistant").contains("step 2 of 2"));
    assert!(proc::report_contents(&steps, "assistant").contains("finished 2 steps"));

    let ask = run("ask");
    let interrupts = ask["pendingInterrupts"].as_array().unwrap();
    assert_eq!(interrupts.len(), 1, "{ask}");
    assert_eq!(interrupts[0]["reason"], "input_required");
    assert!(interrupts[0]["message"].as_str().unwrap().contains("name"));
    assert_eq!(ask["state"]["a2a"]["status"]["state"], "input-required");

    // A form: the interrupt carries it and its schema; the HITL_FORM
    // activity shows it awaiting input.
    let approve = run("approve");
    let interrupt = &approve["pendingInterrupts"][0];
    assert_eq!(
        interrupt["metadata"]["form"]["formId"], "approve",
        "{approve}"
    );
    assert_eq!(
        interrupt["responseSchema"]["properties"]["approved"]["type"],
        "boolean"
    );
    let form = proc::report_messages(&approve, "activity");
    assert_eq!(form.len(), 1, "{approve}");
    assert_eq!(form[0]["activityType"], "HITL_FORM");
    assert_eq!(form[0]["id"], interrupt["id"]);
    assert_eq!(form[0]["content"]["stage"], "awaiting_input");
    assert!(
        proc::report_contents(&approve, "assistant").contains("Do you approve the deploy?"),
        "{approve}"
    );

    let fail = run("fail");
    assert_eq!(fail["runErrors"][0]["code"], "a2a:failed");
    assert_eq!(fail["runErrors"][0]["message"], "because I said so");
    assert_eq!(run("reject")["runErrors"][0]["code"], "a2a:rejected");

    assert_eq!(
        proc::report_contents(&run("message"), "assistant"),
        "You said: hi"
    );

    let think = run("think");
    assert!(
        proc::report_contents(&think, "reasoning").contains("The message has 3 words."),
        "{think}"
    );
    let answer = proc::report_contents(&think, "assistant");
    assert!(
        answer.contains("Your message has 3 words, counted like this:"),
        "{answer}"
    );
    assert!(answer.contains("```\n\"count these words\".split_whitespace().count() == 3\n```"));

    let tool = run("tool");
    let results = proc::report_messages(&tool, "tool");
    assert_eq!(results.len(), 2, "{tool}");
    assert!(
        results[0]["toolCallId"]
            .as_str()
            .unwrap()
            .ends_with("-word_count")
    );
    assert_eq!(results[0]["content"], "2");
    assert!(results[1]["content"].as_str().unwrap().contains("offline"));
    let calls: Vec<String> = proc::report_messages(&tool, "assistant")
        .iter()
        .flat_map(|m| m["toolCalls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(calls, ["word_count", "dictionary"]);
    assert!(proc::report_contents(&tool, "assistant").contains("answering without it"));
    assert!(proc::report_contents(&tool, "reasoning").contains("count the words"));

    let cancel = run("cancel");
    assert_eq!(cancel["state"]["a2a"]["status"]["state"], "canceled");
    assert_eq!(
        cancel["types"].as_array().unwrap().last().unwrap(),
        "RUN_FINISHED"
    );
    assert!(cancel["runErrors"].as_array().unwrap().is_empty());

    let progress = run("progress");
    let activity = proc::report_messages(&progress, "activity");
    assert_eq!(activity.len(), 1, "{progress}");
    assert_eq!(activity[0]["activityType"], "a2a-task-progress");
    let trackers = activity[0]["content"]["trackers"].as_array().unwrap();
    assert!(!trackers.is_empty());
}

/// The official client against a live `serve`, opted in on the A2A
/// endpoints themselves (`interop/agui/live.mjs`): JSON-RPC with `Accept:
/// application/x-agui-events`, REST with `?format=agui`, and protobuf.
#[test]
fn the_official_client_consumes_the_opt_in_endpoints() {
    let Some(node) = proc::interop_node("agui", "@ag-ui/client") else {
        return;
    };
    let serve = proc::Serve::start("memory");
    let texts = [
        "/think why",
        "/tool one two",
        "/ask",
        "/fail no luck",
        "hello",
    ];
    let base = serve.base();
    let args = std::iter::once(base.as_str()).chain(texts);
    let report = proc::agui_node_report(&node, "live.mjs", args.map(OsStr::new));
    for text in texts {
        for binding in ["jsonrpc", "rest", "proto"] {
            let r = &report[text][binding];
            assert_eq!(r["failure"], Value::Null, "{text} over {binding}: {r}");
            assert_eq!(r["types"][0], "RUN_STARTED", "{text} over {binding}");
        }
    }
    for binding in ["jsonrpc", "rest", "proto"] {
        let think = &report["/think why"][binding];
        assert!(
            !proc::report_messages(think, "reasoning").is_empty(),
            "{think}"
        );
        assert!(
            proc::report_contents(think, "assistant").contains("```"),
            "{think}"
        );
        assert_eq!(think["state"]["a2a"]["status"]["state"], "completed");
        let tool = &report["/tool one two"][binding];
        assert!(!proc::report_messages(tool, "tool").is_empty(), "{tool}");
        let ask = &report["/ask"][binding];
        assert_eq!(
            ask["pendingInterrupts"][0]["reason"], "input_required",
            "{ask}"
        );
        let fail = &report["/fail no luck"][binding];
        assert_eq!(fail["runErrors"][0]["code"], "a2a:failed", "{fail}");
        assert!(proc::report_contents(&report["hello"][binding], "assistant").contains("hello"));
    }
}
