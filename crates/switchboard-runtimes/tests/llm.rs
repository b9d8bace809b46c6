//! The LLM runtime through a real engine, against a scripted
//! OpenAI-compatible server on loopback (`scripted_model`): streamed
//! tokens and reasoning, tool calls to real A2A agents (one, and two in
//! parallel), asking the user, retries, a stream cut mid-way, cancel,
//! multi-turn memory and usage.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod engine;
mod scripted_model;

use std::sync::Arc;
use std::time::Duration;

use engine::status_text;
use scripted_model::{Model, Reply, answer, content, finish, reasoning, tool_call, usage};
use serde_json::{Value, json};
use switchboard_agui::hints::{PartHints, PartRole};
use switchboard_core::{CallContext, RequestHandler, agent_fn};
use switchboard_protocol::{AgentCard, Message, Part, StreamResponse, Task, TaskState};
use switchboard_runtimes::llm::{LlmAgent, LlmConfig, ToolConfig, tools};

fn config(model: &Model) -> LlmConfig {
    let mut config = LlmConfig::new(&model.base_url, "scripted");
    config.retry_backoff = Duration::from_millis(10);
    config.temperature = Some(0.0);
    config
}

fn serve(config: LlmConfig) -> RequestHandler {
    let agent = LlmAgent::new(config).unwrap();
    let card = agent.card("llm test", "answers with a scripted model");
    RequestHandler::builder(agent, card).build()
}

fn call() -> CallContext {
    CallContext::anonymous()
}

async fn send(h: &RequestHandler, message: Message) -> Task {
    engine::send(h, &call(), message).await
}

async fn get(h: &RequestHandler, id: &str) -> Task {
    engine::get(h, &call(), id).await
}

/// The `response` artifact's parts.
fn response_parts(task: &Task) -> Vec<Part> {
    task.artifacts
        .iter()
        .flatten()
        .find(|a| a.name.as_deref() == Some("response"))
        .unwrap_or_else(|| panic!("no response artifact: {task:?}"))
        .parts
        .clone()
}

/// The answer text: the response's text parts, reasoning and tools left out.
fn answer_text(task: &Task) -> String {
    response_parts(task)
        .iter()
        .filter(|p| PartHints::read(p).role() == PartRole::Text)
        .filter_map(Part::as_text)
        .collect()
}

/// An A2A agent on its own loopback port whose card is named `name`: it
/// answers each message with an artifact made by `answer`.
async fn tool_agent(name: &str, answer: fn(&str) -> String) -> (String, RequestHandler) {
    let agent = agent_fn(move |ctx, events| async move {
        events.artifact_text("result", answer(&ctx.text())).await?;
        Ok(())
    });
    let card = AgentCard::new(name, format!("the {name} tool"), "1.0").with_streaming(true);
    let handler = RequestHandler::builder(agent, card).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = switchboard_server::A2aServer::new(handler.clone()).public_url(&url);
    tokio::spawn(async move {
        server
            .serve(listener, std::future::pending())
            .await
            .unwrap();
    });
    (url, handler)
}

fn count_words(text: &str) -> String {
    format!("{} words", text.split_whitespace().count())
}

fn shout(text: &str) -> String {
    text.to_uppercase()
}

#[tokio::test]
async fn tokens_and_reasoning_stream_as_chunks_of_one_artifact_with_usage_in_metadata() {
    switchboard_client::tls::install_default_provider();
    let model = Model::start(vec![Reply::Stream(vec![
        reasoning("The user greets. "),
        reasoning("Greet back."),
        content("Hel"),
        content("lo!"),
        finish("stop"),
        usage(12, 3),
    ])])
    .await;
    let mut cfg = config(&model);
    cfg.system_prompt = Some("Be brief.".into());
    cfg.max_tokens = Some(64);
    let h = serve(cfg);
    let before = switchboard_telemetry::metrics::METRICS
        .llm_completion_tokens
        .get();
    let events = engine::stream(&h, &call(), "hi").await;
    let chunks: Vec<(PartRole, String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            StreamResponse::ArtifactUpdate(u) => Some(u),
            _ => None,
        })
        .flat_map(|u| {
            u.artifact
                .parts
                .iter()
                .map(|p| {
                    (
                        PartHints::read(p).role(),
                        p.as_text().unwrap_or_default().to_string(),
                        u.append,
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let reasoning: String = chunks
        .iter()
        .filter(|c| c.0 == PartRole::Reasoning)
        .map(|c| c.1.as_str())
        .collect();
    assert_eq!(reasoning, "The user greets. Greet back.", "{chunks:?}");
    let text: String = chunks
        .iter()
        .filter(|c| c.0 == PartRole::Text)
        .map(|c| c.1.as_str())
        .collect();
    assert_eq!(text, "Hello!", "{chunks:?}");
    assert!(
        !chunks[0].2 && chunks[1..].iter().all(|c| c.2),
        "one artifact, appended: {chunks:?}"
    );
    let Some(StreamResponse::StatusUpdate(last)) = events.last() else {
        panic!("ends with a status: {events:?}")
    };
    assert_eq!(last.status.state, TaskState::Completed);

    let task = get(&h, &last.task_id).await;
    assert_eq!(answer_text(&task), "Hello!");
    let usage = &task.metadata.as_ref().unwrap()["usage"];
    assert_eq!(usage["prompt_tokens"], 12, "{usage}");
    assert_eq!(usage["completion_tokens"], 3, "{usage}");
    assert_eq!(usage["total_tokens"], 15, "{usage}");
    assert_eq!(usage["model"], "scripted", "{usage}");
    assert!(
        switchboard_telemetry::metrics::METRICS
            .llm_completion_tokens
            .get()
            >= before + 3
    );
    let rendered = switchboard_telemetry::metrics::render();
    assert!(
        rendered.contains("switchboard_llm_tokens_total{kind=\"completion\"}"),
        "{rendered}"
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["model"], "scripted");
    assert_eq!(body["max_tokens"], 64);
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}])
    );
    assert!(body.get("tools").is_none(), "no tools configured: {body}");
}

#[tokio::test]
async fn a_tool_call_runs_an_a2a_agent_and_its_task_is_referenced() {
    switchboard_client::tls::install_default_provider();
    let (url, tool) = tool_agent("word counter", count_words).await;
    let model = Model::start(vec![
        Reply::Stream(vec![
            tool_call(0, Some("call_a"), Some("word_counter"), "{\"mess"),
            tool_call(0, None, None, "age\": \"one two three\"}"),
            finish("tool_calls"),
            usage(20, 5),
        ]),
        answer(&["That is ", "3 words."]),
    ])
    .await;
    let mut cfg = config(&model);
    cfg.tools = vec![ToolConfig {
        a2a: url.clone(),
        name: None,
        description: None,
    }];
    cfg.tool_choice = Some("word_counter".into());
    let h = serve(cfg);
    let task = send(&h, Message::user_text("count: one two three")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(answer_text(&task), "That is 3 words.");

    let parts = response_parts(&task);
    let call_part = parts
        .iter()
        .find(|p| PartHints::read(p).role() == PartRole::ToolCall)
        .expect("a tool-call part");
    let metadata = call_part.metadata.as_ref().unwrap();
    assert_eq!(metadata[tools::A2A_AGENT_URL], url.as_str());
    let sub_id = metadata[tools::A2A_TASK_ID].as_str().unwrap();
    let sub = get(&tool, sub_id).await;
    assert_eq!(
        sub.status.state,
        TaskState::Completed,
        "the tool's own task: {sub:?}"
    );
    let result_part = parts
        .iter()
        .find(|p| PartHints::read(p).role() == PartRole::ToolResult)
        .expect("a tool-result part");
    let hints = PartHints::read(result_part);
    let result = switchboard_agui::hints::read_tool_result(result_part, &hints).unwrap();
    assert_eq!(
        (result.tool_call_id.as_str(), result.content.as_str()),
        ("call_a", "3 words")
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let function = &requests[0]["tools"][0]["function"];
    assert_eq!(function["name"], "word_counter");
    assert_eq!(function["description"], "the word counter tool");
    assert_eq!(function["parameters"]["required"], json!(["message"]));
    assert_eq!(
        requests[0]["tool_choice"],
        json!({"type": "function", "function": {"name": "word_counter"}})
    );
    assert_eq!(
        requests[1]["tool_choice"], "auto",
        "the forced choice opens the task only"
    );
    let messages = requests[1]["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 2]["tool_calls"][0]["id"], "call_a");
    assert_eq!(
        messages[n - 2]["tool_calls"][0]["function"]["arguments"],
        "{\"message\": \"one two three\"}"
    );
    assert_eq!(
        messages[n - 1],
        json!({"role": "tool", "tool_call_id": "call_a", "content": "3 words"})
    );
    let usage = &task.metadata.as_ref().unwrap()["usage"];
    assert_eq!(
        usage["prompt_tokens"], 30,
        "summed over both requests: {usage}"
    );
    assert_eq!(usage["requests"], 2, "{usage}");
}

#[tokio::test]
async fn two_parallel_tool_calls_each_get_their_result() {
    switchboard_client::tls::install_default_provider();
    let (count_url, count) = tool_agent("counter", count_words).await;
    let (shout_url, shout_handler) = tool_agent("shouter", shout).await;
    let model = Model::start(vec![
        Reply::Stream(vec![
            tool_call(0, Some("c1"), Some("counter"), "{\"message\":\"a b\"}"),
            tool_call(1, Some("c2"), Some("shouter"), "{\"message\":"),
            tool_call(1, None, None, "\"hey\"}"),
            finish("tool_calls"),
        ]),
        answer(&["done"]),
    ])
    .await;
    let mut cfg = config(&model);
    cfg.tools = [count_url, shout_url]
        .into_iter()
        .map(|a2a| ToolConfig {
            a2a,
            name: None,
            description: None,
        })
        .collect();
    let h = serve(cfg);
    let task = send(&h, Message::user_text("both")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    let requests = model.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(messages[n - 3]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(
        messages[n - 2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "2 words"})
    );
    assert_eq!(
        messages[n - 1],
        json!({"role": "tool", "tool_call_id": "c2", "content": "HEY"})
    );
    // Each call part names its own agent's task.
    let parts = response_parts(&task);
    let subtasks: Vec<String> = parts
        .iter()
        .filter(|p| PartHints::read(p).role() == PartRole::ToolCall)
        .map(|p| {
            p.metadata.as_ref().unwrap()[tools::A2A_TASK_ID]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(subtasks.len(), 2);
    assert_eq!(
        get(&count, &subtasks[0]).await.status.state,
        TaskState::Completed
    );
    assert_eq!(
        get(&shout_handler, &subtasks[1]).await.status.state,
        TaskState::Completed
    );
}

#[tokio::test]
async fn a_429_is_retried_and_the_answer_then_streams() {
    let model = Model::start(vec![Reply::Status(429, Some("0")), answer(&["ok"])]).await;
    let h = serve(config(&model));
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(answer_text(&task), "ok");
    assert_eq!(model.requests().len(), 2, "one retry");
}

#[tokio::test]
async fn server_errors_beyond_the_retry_budget_fail_the_task_with_the_reason() {
    let model = Model::start(vec![
        Reply::Status(500, None),
        Reply::Status(502, None),
        Reply::Status(503, None),
        answer(&["never"]),
    ])
    .await;
    let mut cfg = config(&model);
    cfg.retries = 2;
    let h = serve(cfg);
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let why = status_text(&task.status);
    assert!(
        why.contains("503") && why.contains("3 attempt(s)") && why.contains("scripted 503"),
        "{why}"
    );
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn a_stream_cut_after_tokens_fails_the_task_and_is_not_retried() {
    let model = Model::start(vec![
        Reply::Cut(vec![content("Hel"), content("lo")]),
        answer(&["never"]),
    ])
    .await;
    let h = serve(config(&model));
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    let why = status_text(&task.status);
    assert!(why.contains("cut"), "{why}");
    assert_eq!(answer_text(&task), "Hello", "what streamed stays");
    assert_eq!(model.requests().len(), 1, "no retry after tokens went out");
}

#[tokio::test]
async fn cancel_drops_the_upstream_stream() {
    let model = Model::start(vec![Reply::Hang(vec![content("thinking very long")])]).await;
    let h = serve(config(&model));
    let task = engine::start(&h, &call(), "go on forever").await.unwrap();
    // Wait for the first token, so the stream is surely open.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let t = get(&h, &task.id).await;
        if t.artifacts.as_ref().is_some_and(|a| !a.is_empty()) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "no token: {t:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(model.closed(), 0);
    let canceled = engine::cancel(&h, &call(), &task.id).await;
    assert_eq!(canceled.status.state, TaskState::Canceled);
    model.wait_closed(1).await;
}

#[tokio::test]
async fn the_second_task_of_a_context_sends_the_first_exchange_as_history() {
    let model = Model::start(vec![
        Reply::Stream(vec![
            reasoning("a name"),
            content("Hi "),
            content("Ada."),
            finish("stop"),
        ]),
        answer(&["Ada."]),
    ])
    .await;
    let h = serve(config(&model));
    let first = send(&h, Message::user_text("My name is Ada.")).await;
    assert_eq!(first.status.state, TaskState::Completed, "{first:?}");
    let mut second = Message::user_text("What is my name?");
    second.context_id = Some(first.context_id.clone());
    let second = send(&h, second).await;
    assert_eq!(second.status.state, TaskState::Completed, "{second:?}");
    let requests = model.requests();
    assert_eq!(
        requests[1]["messages"],
        json!([
            {"role": "user", "content": "My name is Ada."},
            {"role": "assistant", "content": "Hi Ada."},
            {"role": "user", "content": "What is my name?"},
        ]),
        "reasoning is not history"
    );
    // Another context starts afresh.
    let model2 = Model::start(vec![answer(&["?"])]).await;
    let h2 = serve(config(&model2));
    send(&h2, Message::user_text("Who am I?")).await;
    assert_eq!(
        model2.requests()[0]["messages"].as_array().unwrap().len(),
        1
    );
}

#[tokio::test]
async fn ask_user_turns_the_task_input_required_and_the_answer_continues_the_loop() {
    let model = Model::start(vec![
        Reply::Stream(vec![
            tool_call(
                0,
                Some("q1"),
                Some("ask_user"),
                "{\"question\":\"Which city?\"}",
            ),
            finish("tool_calls"),
        ]),
        answer(&["Paris it is."]),
    ])
    .await;
    let mut cfg = config(&model);
    cfg.ask_user = true;
    let h = serve(cfg);
    let task = send(&h, Message::user_text("book a hotel")).await;
    assert_eq!(task.status.state, TaskState::InputRequired, "{task:?}");
    assert_eq!(status_text(&task.status), "Which city?");
    let functions: Vec<Value> = model.requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].clone())
        .collect();
    assert_eq!(functions, vec![json!("ask_user")]);

    let mut answer_msg = Message::user_text("Paris");
    answer_msg.task_id = Some(task.id.clone());
    answer_msg.context_id = Some(task.context_id.clone());
    let done = send(&h, answer_msg).await;
    assert_eq!(done.status.state, TaskState::Completed, "{done:?}");
    let requests = model.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "q1", "content": "Paris"})
    );
    let texts: Vec<String> = done
        .artifacts
        .iter()
        .flatten()
        .map(|a| {
            a.parts
                .iter()
                .filter(|p| PartHints::read(p).role() == PartRole::Text)
                .filter_map(Part::as_text)
                .collect()
        })
        .collect();
    assert!(texts.iter().any(|t| t == "Paris it is."), "{texts:?}");
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_is_stopped_after_max_rounds() {
    let (url, _tool) = tool_agent("counter", count_words).await;
    let looping = || {
        Reply::Stream(vec![
            tool_call(0, Some("c"), Some("counter"), "{\"message\":\"x\"}"),
            finish("tool_calls"),
        ])
    };
    let model = Model::start(vec![looping(), looping(), looping()]).await;
    let mut cfg = config(&model);
    cfg.max_rounds = 2;
    cfg.tools = vec![ToolConfig {
        a2a: url,
        name: None,
        description: None,
    }];
    let h = serve(cfg);
    let task = send(&h, Message::user_text("loop")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    assert!(
        status_text(&task.status).contains("max_rounds"),
        "{}",
        status_text(&task.status)
    );
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn the_api_key_is_read_from_its_variable_sent_as_a_bearer_token_and_never_shown() {
    // A variable every test process has; its value stands in for a key.
    let (var, key) = ("HOME", std::env::var("HOME").unwrap());
    let model = Model::start(vec![answer(&["ok"])]).await;
    let mut cfg = config(&model);
    cfg.api_key_env = Some(var.into());
    let agent = LlmAgent::new(cfg).unwrap();
    assert!(!format!("{agent:?}").contains(&key), "{agent:?}");
    let card = agent.card("k", "k");
    let h = RequestHandler::builder(agent, card).build();
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(model.authorization(), vec![Some(format!("Bearer {key}"))]);
    let without = Model::start(vec![answer(&["ok"])]).await;
    send(&serve(config(&without)), Message::user_text("hi")).await;
    assert_eq!(without.authorization(), vec![None]);
}

#[tokio::test]
async fn a_stream_broken_before_its_first_token_is_retried() {
    let model = Model::start(vec![Reply::Cut(vec![]), answer(&["fine"])]).await;
    let h = serve(config(&model));
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    assert_eq!(answer_text(&task), "fine");
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_silent_stream_fails_the_task_after_idle_timeout_and_is_dropped() {
    let model = Model::start(vec![Reply::Hang(vec![content("and then")])]).await;
    let mut cfg = config(&model);
    cfg.idle_timeout = Duration::from_millis(200);
    let h = serve(cfg);
    let task = send(&h, Message::user_text("hi")).await;
    assert_eq!(task.status.state, TaskState::Failed, "{task:?}");
    assert!(
        status_text(&task.status).contains("idle_timeout"),
        "{}",
        status_text(&task.status)
    );
    model.wait_closed(1).await;
}

#[tokio::test]
async fn tool_calls_beyond_max_tool_calls_are_not_made_and_results_are_cut_at_their_limit() {
    switchboard_client::tls::install_default_provider();
    let (url, tool) = tool_agent("shouter", shout).await;
    let long = "a".repeat(100);
    let args = format!("{{\"message\":\"{long}\"}}");
    let model = Model::start(vec![
        Reply::Stream(vec![
            tool_call(0, Some("c1"), Some("shouter"), &args),
            tool_call(1, Some("c2"), Some("shouter"), &args),
            tool_call(2, Some("c3"), Some("shouter"), &args),
            finish("tool_calls"),
        ]),
        answer(&["ok"]),
    ])
    .await;
    let mut cfg = config(&model);
    cfg.max_tool_calls = 2;
    cfg.max_tool_result_bytes = 10;
    cfg.tools = vec![ToolConfig {
        a2a: url,
        name: None,
        description: None,
    }];
    let h = serve(cfg);
    let task = send(&h, Message::user_text("three at once")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    let requests = model.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let results: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(results.len(), 3, "{messages:?}");
    for cut in &results[..2] {
        assert!(
            cut.starts_with("AAAAAAAAAA\n") && cut.contains("max_tool_result_bytes"),
            "{cut}"
        );
    }
    assert!(results[2].contains("max_tool_calls"), "{}", results[2]);
    let listed = tool
        .list_tasks(&call(), switchboard_protocol::ListTasksRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.tasks.len(), 2, "two calls were made");
}

/// An MCP server (streamable HTTP, on loopback) whose tools are `agent`'s:
/// switchboard's own MCP front, on the official Rust MCP SDK.
async fn mcp_server(agent_url: &str) -> String {
    let client = switchboard_client::A2AClient::connect(agent_url)
        .await
        .unwrap();
    let front =
        switchboard_mcp::McpFront::new(vec![switchboard_mcp::McpAgent::new(client)]).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = switchboard_mcp::HttpOptions::default().allow_hosts([addr.to_string()]);
    let auth: Arc<dyn switchboard_server::gate::Authenticator> =
        Arc::new(switchboard_auth::Schemes::new().allow_anonymous(true));
    let router = front.router(options, auth);
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn an_mcp_servers_tools_are_offered_and_called_over_streamable_http() {
    switchboard_client::tls::install_default_provider();
    let (agent_url, _agent) = tool_agent("word counter", count_words).await;
    let mcp_url = mcp_server(&agent_url).await;
    let model = Model::start(vec![
        Reply::Stream(vec![
            tool_call(
                0,
                Some("m1"),
                Some("words__send_message"),
                "{\"message\":\"one two\"}",
            ),
            finish("tool_calls"),
        ]),
        answer(&["Two."]),
    ])
    .await;
    let mut cfg = config(&model);
    cfg.mcp = vec![switchboard_runtimes::llm::mcp::McpConfig {
        command: None,
        args: Vec::new(),
        env: Default::default(),
        pass_env: Vec::new(),
        url: Some(mcp_url.clone()),
        prefix: Some("words".into()),
    }];
    let h = serve(cfg);
    let task = send(&h, Message::user_text("count: one two")).await;
    assert_eq!(task.status.state, TaskState::Completed, "{task:?}");
    let requests = model.requests();
    let function = &requests[0]["tools"][0]["function"];
    assert_eq!(function["name"], "words__send_message", "{function}");
    assert!(
        function["parameters"]["properties"]["message"].is_object(),
        "{function}"
    );
    let messages = requests[1]["messages"].as_array().unwrap();
    let result = messages.last().unwrap();
    assert_eq!(result["tool_call_id"], "m1");
    assert!(
        result["content"].as_str().unwrap().contains("2 words"),
        "{result}"
    );
    let call_part = response_parts(&task)
        .into_iter()
        .find(|p| PartHints::read(p).role() == PartRole::ToolCall)
        .unwrap();
    assert_eq!(
        call_part.metadata.as_ref().unwrap()[switchboard_runtimes::llm::mcp::MCP_SERVER],
        mcp_url.as_str()
    );
}
