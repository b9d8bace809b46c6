//! The AG-UI → A2A bridge under the official AG-UI client (issue 20's
//! interop acceptance).
//!
//! Each test starts an A2A agent — `switchboard serve` with the demo agent,
//! `serve --agent echo-message` (a text-only agent), or the official Python
//! SDK's sample agent (`interop/py/sample_server.py`) — and `switchboard
//! bridge` in front of it, then runs `interop/agui/bridge.mjs`: the real
//! `@ag-ui/client` 1.0.0 `HttpAgent` making runs the way an AG-UI app does
//! (`addMessage`, `runAgent` with `forwardedProps.a2a` and `resume`), its
//! schema enforcement and `verifyEvents` on. The script prints what the
//! client built after every run (messages, state, interrupts, outcome);
//! these tests assert on it.
//!
//! The node packages and the Python venv come from `interop/setup.sh`;
//! without them the tests are skipped with a message, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set (as it is in CI).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};

/// Runs `bridge.mjs` against the bridge at `url` with `scenarios`; its
/// report (panics when the script fails).
fn drive(node: &Path, url: &str, scenarios: &[&str]) -> Value {
    proc::agui_node_report(
        node,
        "bridge.mjs",
        std::iter::once(url).chain(scenarios.iter().copied()),
    )
}

/// Checks that the official client took `run` as it came: no verifier or
/// schema failure, no `RUN_ERROR`, `RUN_STARTED` first, and the outcome
/// `outcome`.
fn assert_clean(what: &str, run: &Value, outcome: &str) {
    assert_eq!(run["failure"], Value::Null, "{what}: {run}");
    assert_eq!(run["runErrors"], json!([]), "{what}: {run}");
    assert_eq!(run["types"][0], "RUN_STARTED", "{what}: {run}");
    assert_eq!(
        run["types"].as_array().unwrap().last().unwrap(),
        "RUN_FINISHED",
        "{what}: {run}"
    );
    assert_eq!(run["outcome"], outcome, "{what}: {run}");
}

/// The string `field` of each message in the list `of[list]`, in order
/// (e.g. the roles of a report's `messages`).
fn each_message<'a>(of: &'a Value, list: &str, field: &str) -> Vec<&'a str> {
    of[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} in {of}"))
        .iter()
        .map(|m| m[field].as_str().unwrap())
        .collect()
}

/// The question a run that paused on an interrupt asked.
fn interrupt_question(run: &Value) -> &str {
    run["pendingInterrupts"][0]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no pending interrupt in {run}"))
}

/// Checks that no two messages of `of` share an id.
fn assert_unique_ids(what: &str, of: &Value) {
    let ids = each_message(of, "messages", "id");
    let unique: HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "{what}: {ids:?}");
}

/// The one task in the `/view` of `state`.
fn only_task(what: &str, state: &Value) -> Value {
    let tasks = state["view"]["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 1, "{what}: {state}");
    tasks.values().next().unwrap().clone()
}

/// The HITL_FORM activity message of `of` (there must be exactly one).
fn form_activity(what: &str, of: &Value) -> Value {
    let forms: Vec<&Value> = proc::report_messages(of, "activity")
        .into_iter()
        .filter(|m| m["activityType"] == "HITL_FORM")
        .collect();
    assert_eq!(forms.len(), 1, "{what}: {of}");
    forms[0].clone()
}

#[test]
fn the_official_client_drives_the_demo_agent_through_the_bridge() {
    let Some((node, serve, bridge)) = proc::agui_node_and_bridge("@ag-ui/client", &[], &[]) else {
        return;
    };
    let url = bridge.url();
    let report = drive(
        &node,
        &url,
        &["demo", "approve", "cancel", "inject", "reconnect"],
    );

    // Full runs on one thread: text, tool calls, reasoning, steps.
    let demo = &report["demo"];
    for name in ["analyse", "tool", "think", "steps"] {
        assert_clean(name, &demo["runs"][name], "success");
    }
    let analyse = &demo["runs"]["analyse"];
    assert!(
        proc::report_contents(analyse, "assistant").contains("Words: 2"),
        "{analyse}"
    );
    let new = each_message(analyse, "newMessages", "role");
    assert!(new.contains(&"assistant"), "{analyse}");
    let tool = &demo["runs"]["tool"];
    let results = proc::report_messages(tool, "tool");
    assert_eq!(results.len(), 2, "{tool}");
    assert_eq!(results[0]["content"], "2");
    let think = &demo["runs"]["think"];
    assert!(
        proc::report_contents(think, "reasoning").contains("The message has 3 words."),
        "{think}"
    );
    let steps = &demo["runs"]["steps"];
    assert!(
        proc::report_contents(steps, "assistant").contains("step 3 of 3"),
        "{steps}"
    );
    assert!(proc::report_contents(steps, "assistant").contains("finished 3 steps"));
    let final_state = &demo["final"]["state"];
    let view = &final_state["view"];
    let tasks = view["tasksById"].as_object().unwrap();
    assert_eq!(tasks.len(), 4, "{final_state}");
    // Every run after the first named no context: the bridge read the one
    // it had projected from the state the client sent back, so the agent
    // saw one conversation.
    let context = view["contextId"].as_str().unwrap();
    for (id, task) in tasks {
        assert_eq!(task["state"], "completed", "{id}: {task}");
        assert_eq!(task["contextId"], context, "{id}: {task}");
        assert_eq!(task["taskId"], id.as_str());
    }
    let listed = list_tasks(&serve.base(), context);
    let listed: HashSet<&str> = listed.iter().map(String::as_str).collect();
    let projected: HashSet<&str> = tasks.keys().map(String::as_str).collect();
    assert_eq!(listed, projected, "the agent's tasks in {context}");
    let artifacts = view["artifacts"].as_object().unwrap();
    assert!(!artifacts.is_empty(), "{final_state}");
    for (id, artifact) in artifacts {
        let owner = artifact["taskId"].as_str().unwrap();
        assert!(tasks.contains_key(owner), "{id}: {artifact}");
        assert!(artifact["parts"].as_array().is_some_and(|p| !p.is_empty()));
    }
    assert_unique_ids("demo", &demo["final"]);
    // The thread holds each user message once and an answer to each.
    assert_eq!(proc::report_messages(&demo["final"], "user").len(), 4);

    // HITL: interrupt with a form, resumed resolved.
    let approve = &report["approve"];
    let ask = &approve["runs"]["ask"];
    assert_clean("approve", ask, "interrupt");
    let interrupt_id = approve["interruptId"].as_str().unwrap();
    let interrupt = &ask["pendingInterrupts"][0];
    assert_eq!(interrupt["id"], interrupt_id);
    assert_eq!(interrupt["reason"], "input_required");
    assert_eq!(interrupt["metadata"]["form"]["formId"], "approve", "{ask}");
    assert_eq!(
        interrupt["responseSchema"]["properties"]["approved"]["type"],
        "boolean"
    );
    let form = form_activity("approve", ask);
    assert_eq!(form["id"], interrupt_id);
    assert_eq!(form["content"]["stage"], "awaiting_input");
    assert!(
        proc::report_contents(ask, "assistant").contains("Do you approve the deploy?"),
        "{ask}"
    );
    let pending = &ask["state"]["view"]["pendingInterrupts"][interrupt_id];
    assert_eq!(pending["interruptId"], interrupt_id, "{ask}");
    assert_eq!(pending["reason"], "input_required");
    assert_eq!(pending["formId"], "approve");
    let task_id = pending["taskId"].as_str().unwrap();
    assert_eq!(
        ask["state"]["view"]["tasksById"][task_id]["state"],
        "input-required"
    );
    let resume = &approve["runs"]["resume"];
    assert_clean("approve resume", resume, "success");
    assert_eq!(resume["pendingInterrupts"], json!([]));
    let done = &approve["final"];
    assert_eq!(
        done["state"]["view"]["pendingInterrupts"],
        json!({}),
        "{done}"
    );
    assert_eq!(
        only_task("approve", &done["state"])["state"],
        "completed",
        "{done}"
    );
    let form = form_activity("approve resume", done);
    assert_eq!(form["content"]["stage"], "completed", "{form}");
    assert_eq!(form["content"]["decision"]["status"], "resolved");
    assert_eq!(
        form["content"]["decision"]["payload"],
        json!({"approved": true, "comment": "ship it"})
    );
    assert!(
        proc::report_contents(done, "assistant").contains("approved"),
        "{done}"
    );
    assert_unique_ids("approve", done);

    // A second thread cancels its interrupt: the task is canceled.
    let cancel = &report["cancel"];
    assert_clean("cancel", &cancel["runs"]["ask"], "interrupt");
    let resume = &cancel["runs"]["resume"];
    assert_clean("cancel resume", resume, "cancelled");
    let done = &cancel["final"];
    assert_eq!(only_task("cancel", &done["state"])["state"], "canceled");
    assert_eq!(
        done["state"]["view"]["pendingInterrupts"],
        json!({}),
        "{done}"
    );
    let form = form_activity("cancel", done);
    assert_eq!(form["content"]["stage"], "cancelled", "{form}");
    assert_eq!(form["content"]["decision"]["status"], "cancelled");
    assert_ne!(
        approve["interruptId"], cancel["interruptId"],
        "each thread has its own task"
    );

    // Injection: an operator's send-mode run answers the task's question,
    // then a stream reconnect shows the task done.
    let inject = &report["inject"];
    let task_id = inject["taskId"].as_str().unwrap();
    let ask = &inject["runs"]["ask"];
    assert_clean("inject ask", ask, "interrupt");
    assert!(interrupt_question(ask).contains("name"), "{ask}");
    assert_eq!(
        ask["state"]["view"]["tasksById"][task_id]["state"],
        "input-required"
    );
    let injected = &inject["runs"]["injected"];
    assert_clean("inject send", injected, "success");
    assert!(
        !injected["types"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "TEXT_MESSAGE_CONTENT"),
        "a send run reports the task, not its content: {injected}"
    );
    let reconnect = &inject["runs"]["reconnect"];
    assert_clean("inject reconnect", reconnect, "success");
    assert_eq!(
        reconnect["types"].as_array().unwrap()[1..3],
        ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"],
        "{reconnect}"
    );
    let done = &inject["final"];
    assert_eq!(
        done["state"]["view"]["tasksById"][task_id]["state"], "completed",
        "{done}"
    );
    assert!(
        proc::report_contents(done, "assistant").contains("Ada"),
        "{done}"
    );
    assert_unique_ids("inject", done);

    // Reconnect mid-task: the aborted run's task, from its snapshot to its
    // end, nothing twice.
    let reconnect = &report["reconnect"];
    let started = &reconnect["runs"]["started"];
    assert_eq!(started["aborted"], true, "{started}");
    assert_eq!(started["failure"], Value::Null, "{started}");
    assert!(
        proc::report_contents(started, "assistant").contains("working: 1/6"),
        "{started}"
    );
    let resumed = &reconnect["runs"]["resumed"];
    assert_clean("reconnect", resumed, "success");
    assert_eq!(
        resumed["types"].as_array().unwrap()[..3],
        ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"],
        "{resumed}"
    );
    let done = &reconnect["final"];
    assert_unique_ids("reconnect", done);
    let text = proc::report_contents(done, "assistant");
    for i in 1..=6 {
        assert_eq!(
            text.matches(&format!("working: {i}/6 half-seconds"))
                .count(),
            1,
            "{text}"
        );
    }
    assert_eq!(text.matches("worked for 3 s").count(), 1, "{text}");
    let task_id = reconnect["taskId"].as_str().unwrap();
    assert_eq!(
        done["state"]["view"]["tasksById"][task_id]["state"],
        "completed"
    );
    assert_eq!(proc::report_messages(done, "user").len(), 1, "{done}");
}

/// The ids of the tasks `serve` at `base` holds in `context` (ListTasks).
fn list_tasks(base: &str, context: &str) -> Vec<String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let answer = rt.block_on(proc::rpc(base, "ListTasks", json!({"contextId": context})));
    answer["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_text_only_agent_through_the_bridge_is_plain_text() {
    let text_only = ["--agent", "echo-message"];
    let Some((node, _serve, bridge)) = proc::agui_node_and_bridge("@ag-ui/client", &text_only, &[])
    else {
        return;
    };
    let url = bridge.url();
    let report = drive(&node, &url, &["text"]);
    let text = &report["text"];
    for (name, said) in [("first", "hello there"), ("second", "and again")] {
        let run = &text["runs"][name];
        assert_clean(name, run, "success");
        // The legacy rule: a message-only agent is assistant text and
        // nothing else, no state.
        assert_eq!(
            run["types"],
            json!([
                "RUN_STARTED",
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
                "RUN_FINISHED"
            ]),
            "{name}: {run}"
        );
        let new = run["newMessages"].as_array().unwrap();
        assert_eq!(new.len(), 1, "{name}: {run}");
        assert_eq!(new[0]["role"], "assistant");
        assert_eq!(new[0]["content"], said);
    }
    let done = &text["final"];
    let roles = each_message(done, "messages", "role");
    assert_eq!(roles, ["user", "assistant", "user", "assistant"], "{done}");
    assert_eq!(done["state"], json!({}), "{done}");
}

#[test]
fn the_bridge_fronts_the_python_sdk_sample_over_each_binding() {
    let Some(node) = proc::interop_node("agui", "@ag-ui/client") else {
        return;
    };
    let Some(python) = proc::interop_python(".venv") else {
        return;
    };
    let sample = proc::PythonServer::start(&python, "py/sample_server.py");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        let bridge = proc::BridgeProc::start(&sample.base, &["--prefer-binding", binding]);
        let (url, line) = (bridge.url(), bridge.line.clone());
        assert!(line.ends_with(&format!(", {binding})")), "{line}");
        let report = drive(&node, &url, &["sample"]);
        let sample_run = &report["sample"];
        let runs = &sample_run["runs"];
        let what = |name: &str| format!("{binding} {name}");

        // Ordinary text: a task whose artifact echoes it in two chunks.
        let echo = &runs["echo"];
        assert_clean(&what("echo"), echo, "success");
        let task = only_task(&what("echo"), &echo["state"]);
        assert_eq!(task["state"], "completed", "{echo}");
        let artifacts = echo["state"]["view"]["artifacts"].as_object().unwrap();
        assert_eq!(artifacts.len(), 1, "{echo}");
        let artifact = artifacts.values().next().unwrap();
        assert_eq!(artifact["name"], "echo");
        assert_eq!(artifact["lastChunk"], true);
        let text: String = artifact["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect();
        assert_eq!(text, "echo: hello sample", "{artifact}");

        // A direct reply: just its text.
        let message = &runs["message"];
        assert_clean(&what("message"), message, "success");
        let new = message["newMessages"].as_array().unwrap();
        assert_eq!(new.len(), 1, "{message}");
        assert_eq!(new[0]["content"], "hi there");

        // /ask pauses; a send-mode run resumes it with the name.
        let ask = &runs["ask"];
        assert_clean(&what("ask"), ask, "interrupt");
        assert!(
            interrupt_question(ask).contains("What is your name?"),
            "{ask}"
        );
        let answer = &runs["answer"];
        assert_clean(&what("answer"), answer, "success");
        let task_id = sample_run["taskId"].as_str().unwrap();
        let done = &sample_run["final"];
        let view = &done["state"]["view"];
        assert_eq!(view["tasksById"][task_id]["state"], "completed", "{done}");
        assert_eq!(view["pendingInterrupts"], json!({}));
        let greeting = proc::view_artifact_text(view, Some(task_id));
        assert_eq!(greeting, "Hello, Ada!", "{done}");
        // One conversation: the later tasks continue the first's context.
        let context = view["contextId"].as_str().unwrap();
        for (id, task) in view["tasksById"].as_object().unwrap() {
            assert_eq!(task["contextId"], context, "{binding} {id}");
        }
        assert_unique_ids(&what("thread"), done);
    }
}
