//! The AG-UI Dojo's feature list, each row end to end: an AG-UI frontend
//! (the official `@ag-ui/client` 1.0.0 `HttpAgent`, its schema enforcement
//! and `verifyEvents` on, as in any AG-UI app) drives an A2A agent through
//! `switchboard bridge`. The agent is `switchboard serve` with the demo
//! agent (for subagents, `serve --agent relay` delegating to it).
//!
//! Each test runs one feature of `interop/agui/dojo.mjs` and asserts on the
//! events the client received (types, order, payloads) and on what its
//! reducer built. The README's table "The AG-UI Dojo through the bridge"
//! names the A2A side of each row.
//!
//! The node packages come from `interop/setup.sh`; without them the tests
//! are skipped with a message, unless `SWITCHBOARD_REQUIRE_INTEROP` is set
//! (as it is in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use serde_json::{Value, json};

/// [`dojo_with`] and no flags.
fn dojo(feature: &str) -> Option<Value> {
    dojo_with(feature, &[])
}

/// Runs `feature` of `dojo.mjs` against a bridge (with `flags`) in front
/// of the demo agent; `None` when the node packages are not installed.
fn dojo_with(feature: &str, flags: &[&str]) -> Option<Value> {
    let (node, _serve, bridge) = proc::agui_node_and_bridge("@ag-ui/client", &[], flags)?;
    let report = proc::agui_node_report(&node, "dojo.mjs", [bridge.url().as_str(), feature]);
    assert_no_warnings(&report);
    Some(report)
}

/// The client warned about nothing: no field stripped, no event dropped,
/// no patch that did not apply, no protocol version it does not know.
fn assert_no_warnings(report: &Value) {
    assert_eq!(report["warnings"], json!([]), "{}", report["warnings"]);
}

/// Checks that the official client took `run` as it came — no verifier or
/// schema failure, no `RUN_ERROR` — that it began with `RUN_STARTED`
/// carrying the protocol version, ended with `RUN_FINISHED`, and that the
/// outcome is `outcome`.
fn assert_clean(what: &str, run: &Value, outcome: &str) {
    assert_eq!(run["failure"], Value::Null, "{what}: {run}");
    assert_eq!(run["runErrors"], json!([]), "{what}: {run}");
    let started = &run["events"][0];
    assert_eq!(started["type"], "RUN_STARTED", "{what}: {run}");
    assert_eq!(
        started["protocolVersion"],
        switchboard_agui::PROTOCOL_VERSION,
        "{what}: {started}"
    );
    let types = types(run);
    assert_eq!(types.last(), Some(&"RUN_FINISHED"), "{what}: {types:?}");
    assert_eq!(run["outcome"], outcome, "{what}: {run}");
}

fn types(run: &Value) -> Vec<&str> {
    run["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

/// The events of `run` of type `kind`.
fn events<'a>(run: &'a Value, kind: &str) -> Vec<&'a Value> {
    run["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

/// The position of the first event of `run` that `matches`.
fn position(run: &Value, what: &str, matches: impl Fn(&Value) -> bool) -> usize {
    run["events"]
        .as_array()
        .unwrap()
        .iter()
        .position(matches)
        .unwrap_or_else(|| panic!("no {what} in {:?}", types(run)))
}

/// Every operation of the run's `STATE_DELTA`s, in order.
fn delta_ops(run: &Value) -> Vec<&Value> {
    events(run, "STATE_DELTA")
        .into_iter()
        .flat_map(|e| e["delta"].as_array().unwrap())
        .collect()
}

#[test]
fn agentic_chat_streams_the_agents_text() {
    let Some(report) = dojo("agentic_chat") else {
        return;
    };
    let run = &report["run"];
    assert_clean("chat", run, "success");
    let types = types(run);
    let start = types
        .iter()
        .position(|t| *t == "TEXT_MESSAGE_START")
        .unwrap();
    let content = types
        .iter()
        .position(|t| *t == "TEXT_MESSAGE_CONTENT")
        .unwrap();
    let end = types.iter().position(|t| *t == "TEXT_MESSAGE_END").unwrap();
    assert!(start < content && content < end, "{types:?}");
    // The reply artifact streams in chunks: several deltas of one message.
    assert!(events(run, "TEXT_MESSAGE_CONTENT").len() >= 4, "{types:?}");
    let text = proc::report_contents(run, "assistant");
    assert!(text.contains("You said: hello world"), "{text}");
    assert!(text.contains("Words: 2"), "{text}");
}

#[test]
fn human_in_the_loop_interrupts_and_resumes_the_same_task() {
    let Some(report) = dojo("human_in_the_loop") else {
        return;
    };
    let ask = &report["ask"];
    assert_clean("ask", ask, "interrupt");
    let interrupt = &ask["pendingInterrupts"][0];
    assert_eq!(interrupt["id"], report["interruptId"]);
    assert_eq!(interrupt["reason"], "input_required");
    assert_eq!(interrupt["metadata"]["form"]["formId"], "approve", "{ask}");
    let resume = &report["resume"];
    assert_clean("resume", resume, "success");
    assert_eq!(resume["pendingInterrupts"], json!([]));
    let text = proc::report_contents(resume, "assistant");
    assert!(text.contains("approved: the deploy (ship it)"), "{text}");
    let tasks = resume["state"]["view"]["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "one task, paused and resumed: {tasks:?}");
}

#[test]
fn backend_tool_rendering_shows_calls_and_results() {
    let Some(report) = dojo("backend_tool_rendering") else {
        return;
    };
    let run = &report["run"];
    assert_clean("tool", run, "success");
    let starts = events(run, "TOOL_CALL_START");
    let names: Vec<&str> = starts
        .iter()
        .map(|e| e["toolCallName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["word_count", "dictionary"], "{run}");
    let call = starts[0]["toolCallId"].as_str().unwrap();
    let args = position(run, "word_count's args", |e| {
        e["type"] == "TOOL_CALL_ARGS" && e["toolCallId"] == call
    });
    let result = position(run, "word_count's result", |e| {
        e["type"] == "TOOL_CALL_RESULT" && e["toolCallId"] == call
    });
    assert!(args < result, "{:?}", types(run));
    let args: Value = serde_json::from_str(run["events"][args]["delta"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"text": "hello there"}));
    let results = proc::report_messages(run, "tool");
    assert_eq!(results.len(), 2, "{run}");
    assert_eq!(results[0]["content"], "2");
    assert_eq!(results[0]["toolCallId"], call);
    assert!(
        results[1]["content"]
            .as_str()
            .unwrap()
            .contains("the dictionary is offline"),
        "{run}"
    );
}

#[test]
fn tool_based_generative_ui_calls_a_frontend_tool_and_takes_its_result() {
    let Some(report) = dojo("tool_based_generative_ui") else {
        return;
    };
    // The agent calls the tool the client offered; the run ends with the
    // call pending, nothing answering it.
    let call = &report["call"];
    assert_clean("call", call, "success");
    let id = report["toolCallId"].as_str().unwrap();
    assert_eq!(call["pendingToolCallIds"], json!([id]), "{call}");
    let start = events(call, "TOOL_CALL_START");
    assert_eq!(start.len(), 1, "{call}");
    assert_eq!(start[0]["toolCallName"], "show_card");
    assert_eq!(start[0]["toolCallId"], id);
    let args = events(call, "TOOL_CALL_ARGS");
    let args: Value = serde_json::from_str(args[0]["delta"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"text": "a haiku"}));
    assert!(events(call, "TOOL_CALL_RESULT").is_empty(), "{call}");
    let finished = events(call, "RUN_FINISHED");
    assert_eq!(
        finished[0]["outcome"],
        json!({"type": "success", "pendingToolCallIds": [id]})
    );
    let tasks = call["state"]["view"]["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let (task_id, task) = tasks.iter().next().unwrap();
    assert_eq!(task["state"], "input-required", "{task}");
    assert_eq!(call["state"]["view"]["pendingInterrupts"], json!({}));

    // The client's result, in its next run, reaches the same task.
    let answer = &report["answer"];
    assert_clean("answer", answer, "success");
    let text = proc::report_contents(answer, "assistant");
    assert!(text.contains("show_card answered: card shown"), "{text}");
    let tasks = answer["state"]["view"]["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "the same task: {tasks:?}");
    assert_eq!(tasks[task_id]["state"], "completed", "{tasks:?}");
    // The call is not shown again.
    assert!(events(answer, "TOOL_CALL_START").is_empty(), "{answer}");
}

#[test]
fn shared_state_goes_both_ways() {
    // The UI's state reaches the agent only when the bridge is told so.
    let Some(report) = dojo_with("shared_state", &["--forward-state"]) else {
        return;
    };
    // The UI's notes reached the agent, whose notes came back in /view/state.
    let first = &report["first"];
    assert_clean("first note", first, "success");
    assert_eq!(
        first["state"]["view"]["state"]["notes"],
        json!(["buy milk", "call mom"]),
        "{}",
        first["state"]
    );
    assert_eq!(first["state"]["notes"], json!(["buy milk"]), "the UI's own");
    // The UI edited its notes: the agent starts from the edit, and the
    // change reaches the UI as a delta of the agent's state.
    let second = &report["second"];
    assert_clean("second note", second, "success");
    assert_eq!(
        second["state"]["view"]["state"]["notes"],
        json!(["buy bread", "water plants"]),
        "{}",
        second["state"]
    );
    assert!(
        delta_ops(second).iter().any(|op| op["path"]
            .as_str()
            .unwrap()
            .starts_with("/view/state/notes")),
        "{:?}",
        delta_ops(second)
    );
}

#[test]
fn agentic_generative_ui_updates_the_plan_while_the_agent_works() {
    let Some(report) = dojo("agentic_generative_ui") else {
        return;
    };
    let run = &report["run"];
    assert_clean("plan", run, "success");
    let ops = delta_ops(run);
    let planned = ops
        .iter()
        .position(|op| op["path"] == "/view/state/plan")
        .unwrap_or_else(|| panic!("{ops:?}"));
    assert_eq!(ops[planned]["op"], "add");
    let steps = ops[planned]["value"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert!(steps.iter().all(|s| s["status"] == "pending"), "{steps:?}");
    // Then one delta per step done, in order, each before the run ends.
    let done: Vec<&str> = ops[planned..]
        .iter()
        .filter(|op| op["value"] == "done")
        .map(|op| op["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        done,
        [
            "/view/state/plan/steps/0/status",
            "/view/state/plan/steps/1/status",
            "/view/state/plan/steps/2/status",
        ],
        "{ops:?}"
    );
    let steps = run["state"]["view"]["state"]["plan"]["steps"]
        .as_array()
        .unwrap();
    assert!(steps.iter().all(|s| s["status"] == "done"), "{steps:?}");
    let text = proc::report_contents(run, "assistant");
    assert!(text.contains("planned and did 3 steps"), "{text}");
}

#[test]
fn predictive_state_updates_precede_the_tool_call_they_predict_from() {
    let Some(report) = dojo("predictive_state_updates") else {
        return;
    };
    let run = &report["run"];
    assert_clean("write", run, "success");
    let predict = position(run, "PredictState", |e| {
        e["type"] == "CUSTOM" && e["name"] == "PredictState"
    });
    assert_eq!(
        run["events"][predict]["value"],
        json!([{"state_key": "document", "tool": "write_document", "tool_argument": "document"}])
    );
    let start = position(run, "write_document's start", |e| {
        e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "write_document"
    });
    let args = position(run, "write_document's args", |e| {
        e["type"] == "TOOL_CALL_ARGS"
    });
    assert!(predict < start && start < args, "{:?}", types(run));
    let document = "It was a dark and stormy night";
    // What the UI predicted from the arguments, and what the agent's state
    // then said.
    assert_eq!(
        report["predicted"].as_array().unwrap().last(),
        Some(&json!({"document": document})),
        "{report}"
    );
    assert_eq!(run["state"]["view"]["state"]["document"], document);
    let set = position(run, "the document in the state", |e| {
        e["type"] == "STATE_DELTA"
            && e["delta"]
                .as_array()
                .unwrap()
                .iter()
                .any(|op| op["path"] == "/view/state/document")
    });
    assert!(args < set, "{:?}", types(run));
}

#[test]
fn reasoning_comes_before_the_answer() {
    let Some(report) = dojo("agentic_chat_reasoning") else {
        return;
    };
    let run = &report["run"];
    assert_clean("think", run, "success");
    let types = types(run);
    let reasoning: Vec<&str> = types
        .iter()
        .copied()
        .filter(|t| t.starts_with("REASONING_"))
        .collect();
    assert_eq!(
        reasoning,
        [
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_END",
        ]
    );
    let end = types.iter().position(|t| *t == "REASONING_END").unwrap();
    let answer = position(run, "the answer", |e| {
        e["type"] == "TEXT_MESSAGE_CONTENT"
            && e["delta"].as_str().unwrap().starts_with("Your message has")
    });
    assert!(end < answer, "{types:?}");
    let thought = proc::report_contents(run, "reasoning");
    assert!(thought.contains("The message has 3 words."), "{thought}");
    let answer = proc::report_contents(run, "assistant");
    assert!(answer.contains("Your message has 3 words"), "{answer}");
}

#[test]
fn subagents_show_the_delegated_agents_output_as_its_run() {
    let Some(node) = proc::interop_node("agui", "@ag-ui/client") else {
        return;
    };
    let demo = proc::Serve::start("memory");
    let relay = proc::Serve::start_with("memory", &["--agent", "relay"]);
    let bridge = proc::BridgeProc::start(&relay.base(), &[]);
    let report = proc::agui_node_report(
        &node,
        "dojo.mjs",
        [bridge.url().as_str(), "subagents", demo.base().as_str()],
    );
    assert_no_warnings(&report);
    let run = &report["run"];
    assert_clean("relay", run, "success");
    let started = events(run, "SUBAGENT_STARTED");
    assert_eq!(started.len(), 1, "{:?}", types(run));
    assert_eq!(started[0]["name"], "switchboard demo");
    let sub = started[0]["subagentRunId"].as_str().unwrap();
    // The delegated agent's text, and nothing else, is its run's.
    let types = types(run);
    let begin = types.iter().position(|t| *t == "SUBAGENT_STARTED").unwrap();
    let finish = types
        .iter()
        .position(|t| *t == "SUBAGENT_FINISHED")
        .unwrap();
    for (i, event) in run["events"].as_array().unwrap().iter().enumerate() {
        let kind = event["type"].as_str().unwrap();
        if kind.starts_with("TEXT_MESSAGE_") {
            assert!(begin < i && i < finish, "{types:?}");
            assert_eq!(event["subagentRunId"], sub, "{event}");
        }
    }
    let finished = &run["events"][finish];
    assert_eq!(finished["subagentRunId"], sub);
    assert_eq!(finished["outcome"], json!({"type": "success"}));
    assert_eq!(types[finish + 1], "RUN_FINISHED", "{types:?}");
    let answer = proc::report_messages(run, "assistant");
    assert_eq!(answer.len(), 1, "{run}");
    assert_eq!(answer[0]["subagentRunId"], sub, "{run}");
    let text = answer[0]["content"].as_str().unwrap();
    assert!(text.contains("You said: hello subagent"), "{text}");
}
