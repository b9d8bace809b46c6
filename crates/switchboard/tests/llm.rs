//! An `llm` agent on a real `serve` (`[[agents]]`, `runtime = "llm"`) in
//! front of a scripted OpenAI-compatible server on loopback, driven by
//! `switchboard stream`, `send` and `cancel`: tokens and reasoning stream
//! through the CLI, the second message of a conversation carries the first
//! exchange, usage reaches the task and `/metrics`, and a cancel closes the
//! model's stream.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
#[path = "../../switchboard-runtimes/tests/scripted_model/mod.rs"]
mod scripted_model;

use proc::{Serve, get, success_stdout_of, switchboard_without_env};
use scripted_model::{Model, Reply, answer, content, finish, reasoning, usage};
use serde_json::{Value, json};

/// A config whose `/assistant` is an `llm` agent on the scripted model at
/// `base`, with `extra` lines added to its table.
fn assistant_config(base: &str, extra: &str) -> String {
    format!(
        r#"
agent = "echo-message"

[[agents]]
name = "assistant"
path = "/assistant"
runtime = "llm"
base_url = "{base}"
model = "scripted"
{extra}
"#
    )
}

fn start(dir: &tempfile::TempDir, model: &Model) -> Serve {
    let extra = "system_prompt = \"Be brief.\"\ntemperature = 0\nretry_backoff = 0.01";
    Serve::start_configured_sqlite(
        dir.path(),
        "llm",
        &assistant_config(&model.base_url, extra),
        &[],
    )
}

/// Runs the CLI with `args`; its stdout as JSON lines (it must succeed).
/// It blocks its thread: the tests run on a multi-threaded runtime, so the
/// scripted model keeps answering meanwhile.
fn cli(args: &[&str]) -> Vec<Value> {
    let out = switchboard_without_env().args(args).output().unwrap();
    success_stdout_of(&format!("{args:?} failed: "), &out)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The text parts of every artifact update's chunk, in order, with the
/// AG-UI event type each part is hinted as.
fn chunks(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter_map(|l| {
            l["data"].get("artifactUpdate").or_else(|| {
                (l["type"] == "artifactUpdate" || l["type"] == "artifact-update")
                    .then_some(&l["data"])
            })
        })
        .flat_map(|u| {
            u["artifact"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|p| {
            (
                p["metadata"]["agui_event_type"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                p["text"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_agent_streams_through_the_cli_and_remembers_the_conversation() {
    let model = Model::start(vec![
        Reply::Stream(vec![
            reasoning("A greeting."),
            content("Hello, "),
            content("Ada!"),
            finish("stop"),
            usage(9, 4),
        ]),
        answer(&["You are ", "Ada."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let serve = start(&dir, &model);
    let url = format!("{}/assistant", serve.base());

    let card: Value = get(&format!("{url}/.well-known/agent-card.json"), &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(card["name"], "assistant", "{card}");
    assert_eq!(card["capabilities"]["streaming"], true, "{card}");

    let lines = cli(&["stream", "--json", "--url", &url, "I", "am", "Ada"]);
    let chunks = chunks(&lines);
    let thinking: String = chunks
        .iter()
        .filter(|c| c.0 == "thinking")
        .map(|c| c.1.as_str())
        .collect();
    let text: String = chunks
        .iter()
        .filter(|c| c.0 == "content_block")
        .map(|c| c.1.as_str())
        .collect();
    assert_eq!(thinking, "A greeting.", "{lines:#?}");
    assert_eq!(text, "Hello, Ada!", "{lines:#?}");
    let last = serde_json::to_string(lines.last().unwrap()).unwrap();
    assert!(last.contains("TASK_STATE_COMPLETED"), "{last}");
    let context = lines
        .iter()
        .find_map(|l| {
            let s = serde_json::to_string(l).unwrap();
            let v: Value = serde_json::from_str(&s).unwrap();
            find_key(&v, "contextId")
        })
        .expect("a context id");

    let lines = cli(&[
        "send",
        "--json",
        "--url",
        &url,
        "--context-id",
        &context,
        "Who",
        "am",
        "I?",
    ]);
    let task = lines
        .iter()
        .find_map(|l| (l["type"] == "task").then(|| l["data"].clone()))
        .unwrap_or_else(|| panic!("a task: {lines:#?}"));
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["metadata"]["usage"]["completion_tokens"], 2, "{task}");

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1]["messages"],
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "I am Ada"},
            {"role": "assistant", "content": "Hello, Ada!"},
            {"role": "user", "content": "Who am I?"},
        ])
    );

    let metrics = get(&format!("{}/metrics", serve.base()), &[])
        .await
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("switchboard_llm_tokens_total{kind=\"completion\"} 6"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_through_the_cli_closes_the_models_stream() {
    let model = Model::start(vec![Reply::Hang(vec![content("a very long story")])]).await;
    let dir = tempfile::tempdir().unwrap();
    let serve = start(&dir, &model);
    let url = format!("{}/assistant", serve.base());
    let lines = cli(&[
        "send",
        "--json",
        "--return-immediately",
        "--url",
        &url,
        "tell",
        "me",
    ]);
    let task_id = lines
        .iter()
        .find_map(|l| find_key(l, "id").filter(|_| l["type"] == "task"))
        .unwrap_or_else(|| panic!("a task: {lines:#?}"));
    // Its first token arrived: the model's stream is open.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let task = cli(&["get", "--json", "--url", &url, &task_id]);
        if serde_json::to_string(&task)
            .unwrap()
            .contains("a very long story")
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no token: {task:#?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let canceled = cli(&["cancel", "--json", "--url", &url, &task_id]);
    assert!(
        serde_json::to_string(&canceled)
            .unwrap()
            .contains("TASK_STATE_CANCELED"),
        "{canceled:#?}"
    );
    model.wait_closed(1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_over_stdio_is_a_tool_switchboard_mcp_in_front_of_an_agent() {
    // The tool: an echo agent on its own serve, as MCP tools by `switchboard mcp` over stdio.
    let echo = Serve::start_with("memory", &["--agent", "echo-task"]);
    let model = Model::start(vec![
        Reply::Stream(vec![
            scripted_model::tool_call(0, Some("t1"), Some("echo"), "{\"message\":\"ping\"}"),
            finish("tool_calls"),
        ]),
        answer(&["It said ping."]),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mcp = format!(
        "mcp = [{{ command = {bin:?}, args = [\"mcp\", \"--agent\", \"{echo}\"] }}]",
        bin = env!("CARGO_BIN_EXE_switchboard"),
        echo = echo.base(),
    );
    let config = assistant_config(&model.base_url, &mcp);
    let serve = Serve::start_configured_sqlite(dir.path(), "mcp", &config, &[]);
    let url = format!("{}/assistant", serve.base());
    let lines = cli(&["send", "--json", "--url", &url, "say", "ping"]);
    let task = lines
        .iter()
        .find_map(|l| (l["type"] == "task").then(|| l["data"].clone()))
        .unwrap_or_else(|| panic!("a task: {lines:#?}"));
    assert_eq!(
        task["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{task}\n{}",
        serve.log()
    );
    let requests = model.requests();
    assert_eq!(
        requests[0]["tools"][0]["function"]["name"], "echo",
        "{}",
        requests[0]
    );
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(result["tool_call_id"], "t1", "{result}");
    assert!(
        result["content"].as_str().unwrap().contains("ping"),
        "{result}"
    );
}

fn find_key(v: &Value, key: &str) -> Option<String> {
    match v {
        Value::Object(map) => map
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| map.values().find_map(|v| find_key(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}
