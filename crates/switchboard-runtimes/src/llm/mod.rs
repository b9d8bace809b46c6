//! The LLM runtime: a model behind any OpenAI-compatible Chat Completions
//! endpoint (OpenAI, vLLM, llama.cpp's server, Ollama) as an agent.
//!
//! Each message becomes a conversation with the model — the
//! `system_prompt`, the context's earlier tasks as history (the user's
//! messages and the agent's answers, read from the store, so memory
//! survives restarts), then the message — sent with `stream: true`. The
//! answer streams into one artifact, `response`, as it comes:
//!
//! - content deltas as text parts (appended chunks; AG-UI-hinted as one
//!   text block, so A2A clients see plain text and AG-UI UIs a message);
//! - `reasoning_content` / `reasoning` deltas as reasoning-hinted parts;
//! - tool calls (deltas assembled by index, parallel calls included) as
//!   tool-call parts, then each result as a tool-result part, after which
//!   the results go back to the model and the loop continues, at most
//!   `max_rounds` requests per run. Tools are other A2A agents ([`tools`]),
//!   the tools of MCP servers over stdio or streamable HTTP ([`mcp`]) and,
//!   when `ask_user` is on, a built-in tool that turns the task
//!   input-required with the model's question; the answer on the same task
//!   is the tool's result and the loop goes on.
//!
//! The `usage` the server reports (asked for with `stream_options:
//! {include_usage: true}`) is summed over the run's requests into the
//! task's metadata (`usage`: `model`, `prompt_tokens`, `completion_tokens`,
//! `total_tokens`) and counted in `/metrics`
//! (`switchboard_llm_tokens_total`).
//!
//! Failures: connection errors, 429 and 5xx are retried with doubling
//! backoff (a `Retry-After` honoured, capped) while no token of the
//! request went out; a stream cut after tokens went out fails the task
//! with the reason (the caller has seen part of an answer, so it is never
//! silently restarted). Timeouts bound the connection, the wait for the
//! first event, and the silence between chunks; `max_response_bytes` and
//! `max_line_bytes` bound what a server can make us read. A cancel drops
//! the upstream stream at once (the connection closes, which stops
//! generation on servers that watch for it).

mod config;
mod error;
pub mod mcp;
mod sse;
pub(crate) mod stream;
pub mod tools;

pub use config::{ConfigError, LlmConfig, ToolConfig};
pub use error::LlmError;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use switchboard_agui::hints::{self, PartHints, PartRole};
use switchboard_core::{
    AgentExecutor, ArtifactWriter, BoxError, EmitError, RequestContext, TaskEvents, async_trait,
};
use switchboard_protocol::{A2AError, AgentCard, Part, Role, Task, TaskState, TaskStatus};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use mcp::{McpTool, McpTools};
use stream::{ToolCall, Usage};
use tools::{A2aTool, ASK_USER, Started};

/// The task metadata key holding the run's token usage.
pub const USAGE_KEY: &str = "usage";

/// An agent answering with a model; see the module docs.
pub struct LlmAgent {
    config: Arc<LlmConfig>,
    http: reqwest::Client,
    /// Read from `api_key_env` when built; never logged (not in `Debug`).
    api_key: Option<String>,
    slots: Arc<Semaphore>,
    /// The tool agents, once their cards were read.
    tools: tokio::sync::Mutex<Option<Arc<Vec<A2aTool>>>>,
    /// The MCP servers, once connected (dropped after a failed call, so the
    /// next run connects again).
    mcp: tokio::sync::Mutex<Option<Arc<McpTools>>>,
    /// Conversations waiting for an `ask_user` answer, by task id.
    waiting: Arc<Mutex<HashMap<String, Parked>>>,
}

impl std::fmt::Debug for LlmAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmAgent")
            .field("config", &self.config)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

/// A conversation parked on a question to the user.
#[derive(Debug)]
struct Parked {
    conversation: Conversation,
    /// The `ask_user` call the answer is the result of.
    call_id: String,
}

/// Where a run is: the messages so far, and what it used.
#[derive(Debug, Clone, Default)]
struct Conversation {
    messages: Vec<Value>,
    rounds: u32,
    usage: Usage,
    reported_usage: bool,
}

/// How a round of tool calls ended.
enum ToolsEnd {
    /// Every result is in the conversation: ask the model again.
    Next,
    /// The model asked the user (this call id, this question).
    Ask(String, String),
    /// The task was canceled.
    Canceled,
}

impl LlmAgent {
    /// An agent over `config`'s model. Fails when the configuration cannot
    /// work, or `api_key_env` names an unset variable.
    pub fn new(config: LlmConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        let api_key = match &config.api_key_env {
            Some(var) => {
                Some(std::env::var(var).map_err(|_| ConfigError::MissingKey(var.clone()))?)
            }
            None => None,
        };
        let http = http_client(&config)?;
        Ok(LlmAgent {
            slots: Arc::new(Semaphore::new(config.max_concurrent)),
            config: Arc::new(config),
            http,
            api_key,
            tools: tokio::sync::Mutex::new(None),
            mcp: tokio::sync::Mutex::new(None),
            waiting: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Its settings.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// A card for this agent (streaming). Interfaces are the server's.
    pub fn card(&self, name: impl Into<String>, description: impl Into<String>) -> AgentCard {
        AgentCard::new(name, description, env!("CARGO_PKG_VERSION")).with_streaming(true)
    }

    fn slot(&self) -> Result<OwnedSemaphorePermit, A2AError> {
        self.slots.clone().try_acquire_owned().map_err(|_| {
            A2AError::ResourceExhausted(format!(
                "this agent runs at most {} conversations at once (max_concurrent); try again later",
                self.config.max_concurrent
            ))
        })
    }

    /// The tool agents, their cards read on first use (and again after a
    /// failure: a tool agent may start after this one).
    async fn tools(&self) -> Result<Arc<Vec<A2aTool>>, LlmError> {
        let mut slot = self.tools.lock().await;
        if let Some(tools) = &*slot {
            return Ok(tools.clone());
        }
        let mut resolved: Vec<A2aTool> = Vec::new();
        for config in &self.config.tools {
            let tool = A2aTool::resolve(config, self.config.connect_timeout).await?;
            if tool.name == ASK_USER || resolved.iter().any(|t| t.name == tool.name) {
                return Err(LlmError::Tool {
                    url: config.a2a.clone(),
                    reason: format!(
                        "its function name {:?} is taken; set `name` to tell them apart",
                        tool.name
                    ),
                });
            }
            resolved.push(tool);
        }
        let tools = Arc::new(resolved);
        *slot = Some(tools.clone());
        Ok(tools)
    }

    /// The MCP servers, connected on first use.
    async fn mcp_tools(&self) -> Result<Arc<McpTools>, LlmError> {
        let mut slot = self.mcp.lock().await;
        if let Some(tools) = &*slot {
            return Ok(tools.clone());
        }
        let tools =
            Arc::new(McpTools::connect(&self.config.mcp, self.config.connect_timeout).await?);
        *slot = Some(tools.clone());
        Ok(tools)
    }

    /// Forgets the MCP connections (after a failed call).
    async fn reset_mcp(&self) {
        *self.mcp.lock().await = None;
    }

    /// The conversation a new task starts: system prompt, history, message.
    async fn opening(
        &self,
        ctx: &RequestContext,
        events: &TaskEvents,
    ) -> Result<Conversation, BoxError> {
        let mut messages = Vec::new();
        if let Some(system) = &self.config.system_prompt {
            messages.push(json!({"role": "system", "content": system}));
        }
        if self.config.history_tasks > 0 {
            for task in events.context_tasks(self.config.history_tasks).await? {
                history_of(&task, &mut messages);
            }
        }
        messages.push(json!({"role": "user", "content": ctx.text()}));
        Ok(Conversation {
            messages,
            ..Conversation::default()
        })
    }

    fn request_body(&self, conv: &Conversation, tools: &[A2aTool], mcp: &McpTools) -> Value {
        let cfg = &self.config;
        let mut body = Map::new();
        body.insert("model".into(), json!(cfg.model));
        body.insert("messages".into(), Value::Array(conv.messages.clone()));
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
        if let Some(t) = cfg.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(p) = cfg.top_p {
            body.insert("top_p".into(), json!(p));
        }
        if let Some(n) = cfg.max_tokens {
            body.insert("max_tokens".into(), json!(n));
        }
        if let Some(s) = cfg.seed {
            body.insert("seed".into(), json!(s));
        }
        if !cfg.stop.is_empty() {
            body.insert("stop".into(), json!(cfg.stop));
        }
        let mut functions: Vec<Value> = tools.iter().map(A2aTool::function).collect();
        functions.extend(mcp.tools().iter().map(McpTool::function));
        if cfg.ask_user {
            functions.push(tools::ask_user_function());
        }
        if !functions.is_empty() {
            body.insert("tools".into(), Value::Array(functions));
            // One choice opens a task, another follows tool results.
            let choice = if conv.rounds <= 1 {
                cfg.tool_choice.as_deref()
            } else {
                Some(cfg.followup_tool_choice.as_deref().unwrap_or("auto"))
            };
            if let Some(choice) = choice {
                let choice = match choice {
                    "auto" | "none" | "required" => json!(choice),
                    name => json!({"type": "function", "function": {"name": name}}),
                };
                body.insert("tool_choice".into(), choice);
            }
        }
        Value::Object(body)
    }

    /// The model loop from `conv`: rounds of requests and tool calls until
    /// the model answers, asks the user, or the task is canceled.
    /// `note`: the working status to set as the first request goes out
    /// (the two overlap, so the store's commit adds nothing to the time to
    /// the first token).
    async fn converse(
        &self,
        mut conv: Conversation,
        events: &TaskEvents,
        mut note: Option<&str>,
    ) -> Result<(), BoxError> {
        let tools = self.tools().await?;
        let mcp = self.mcp_tools().await?;
        let mut out = Output::new(events);
        loop {
            if conv.rounds >= self.config.max_rounds {
                return Err(LlmError::Rounds(self.config.max_rounds).into());
            }
            conv.rounds += 1;
            let body = self.request_body(&conv, &tools, &mcp);
            let Some(answer) = self.ask_model(&body, events, &mut out, note.take()).await? else {
                return Ok(()); // canceled: the stream is dropped
            };
            if let Some(usage) = answer.usage {
                conv.usage.add(usage);
                conv.reported_usage = true;
                let metrics = &switchboard_telemetry::metrics::METRICS;
                metrics.llm_prompt_tokens.add(usage.prompt);
                metrics.llm_completion_tokens.add(usage.completion);
            }
            if answer.tool_calls.is_empty() {
                break;
            }
            let calls: Vec<Value> = answer
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                           "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            // A string even when empty: OpenAI takes null there, but
            // llama.cpp's Python server refuses it.
            let content = json!(answer.text);
            conv.messages
                .push(json!({"role": "assistant", "content": content, "tool_calls": calls}));
            out.end_block();
            match self
                .call_tools(
                    &answer.tool_calls,
                    &tools,
                    &mcp,
                    &mut conv,
                    events,
                    &mut out,
                )
                .await?
            {
                ToolsEnd::Next => {}
                ToolsEnd::Canceled => return Ok(()),
                ToolsEnd::Ask(call_id, question) => {
                    out.finish().await?;
                    return self.park(events, conv, call_id, question).await;
                }
            }
        }
        out.finish().await?;
        let status = TaskStatus::new(TaskState::Completed);
        if conv.reported_usage {
            events
                .status_with_task_metadata(status, self.usage_metadata(&conv))
                .await?;
        } else {
            events.status(status, None).await?;
        }
        Ok(())
    }

    fn usage_metadata(&self, conv: &Conversation) -> switchboard_protocol::Metadata {
        let mut metadata = Map::new();
        metadata.insert(
            USAGE_KEY.into(),
            json!({
                "model": self.config.model,
                "prompt_tokens": conv.usage.prompt,
                "completion_tokens": conv.usage.completion,
                "total_tokens": conv.usage.total,
                "requests": conv.rounds,
            }),
        );
        metadata
    }

    /// Runs one round's tool calls: every A2A call started (its task id
    /// known) before the call parts go out, then their results awaited
    /// together; `ask_user` last.
    async fn call_tools(
        &self,
        calls: &[ToolCall],
        tools: &[A2aTool],
        mcp: &McpTools,
        conv: &mut Conversation,
        events: &TaskEvents,
        out: &mut Output,
    ) -> Result<ToolsEnd, BoxError> {
        let mut ask: Option<&ToolCall> = None;
        let mut started = Vec::new();
        let mut mcp_calls: Vec<(&ToolCall, &McpTool)> = Vec::new();
        let max = self.config.max_tool_calls;
        for (i, call) in calls.iter().enumerate() {
            if i >= max {
                let refusal =
                    format!("not called: at most {max} tool calls per answer (max_tool_calls)");
                started.push((call, None, Err(refusal)));
                continue;
            }
            if call.name == ASK_USER && self.config.ask_user {
                if ask.is_none() {
                    ask = Some(call);
                    continue;
                }
                started.push((call, None, Err("ask one question at a time".to_owned())));
                continue;
            }
            if let Some(tool) = mcp.tools().iter().find(|t| t.function == call.name) {
                mcp_calls.push((call, tool));
                continue;
            }
            match tools.iter().find(|t| t.name == call.name) {
                Some(tool) => started.push((call, Some(tool), Ok(()))),
                None => {
                    started.push((call, None, Err(format!("there is no tool {:?}", call.name))))
                }
            }
        }
        let starts = futures::future::join_all(started.iter().map(|(call, tool, ok)| async move {
            match (tool, ok) {
                (Some(tool), Ok(())) => Some(
                    tool.start(&call.arguments, self.config.max_tool_result_bytes)
                        .await,
                ),
                _ => None,
            }
        }));
        let starts = tokio::select! {
            biased;
            _ = events.cancelled() => return Ok(ToolsEnd::Canceled),
            s = tokio::time::timeout(self.config.tool_timeout, starts) => s,
        };
        let Ok(starts) = starts else {
            // Not even started in time: every call failed.
            for (call, _, _) in &started {
                out.tool_call(call, None, None).await?;
                let error = format!(
                    "the tool did not start within {:?}",
                    self.config.tool_timeout
                );
                out.tool_result(&call.id, "", Some(&error)).await?;
                conv.messages
                    .push(tool_message(&call.id, &format!("error: {error}")));
            }
            return Ok(ToolsEnd::Next);
        };
        let mut running = Vec::new();
        for ((call, tool, refused), start) in started.iter().zip(starts) {
            match (start, refused) {
                (Some(Started::Running(run)), _) => {
                    let ids = (run.task_id.clone(), run.context_id.clone());
                    out.tool_call(
                        call,
                        tool.map(|t| (tools::A2A_AGENT_URL, t.url.as_str())),
                        Some(ids),
                    )
                    .await?;
                    running.push((*call, Some(run), None));
                }
                (Some(Started::Failed(e)), _) => {
                    out.tool_call(
                        call,
                        tool.map(|t| (tools::A2A_AGENT_URL, t.url.as_str())),
                        None,
                    )
                    .await?;
                    running.push((*call, None, Some(e)));
                }
                (None, Err(e)) => {
                    out.tool_call(call, None, None).await?;
                    running.push((*call, None, Some(e.clone())));
                }
                (None, Ok(())) => {}
            }
        }
        for (call, tool) in &mcp_calls {
            out.tool_call(call, Some((mcp::MCP_SERVER, mcp.label(tool))), None)
                .await?;
        }
        if let Some(call) = ask {
            out.tool_call(call, None, None).await?;
        }
        let cancels: Vec<_> = running
            .iter()
            .filter_map(|(_, run, _)| run.as_ref().map(|r| r.canceler()))
            .collect();
        let max_result = self.config.max_tool_result_bytes;
        let a2a_results =
            futures::future::join_all(running.into_iter().map(|(call, run, error)| async move {
                let result = match (run, error) {
                    (Some(run), _) => run.finish().await,
                    (None, Some(e)) => Err(e),
                    (None, None) => Err("not called".to_owned()),
                };
                (call, result, false)
            }));
        let mcp_results =
            futures::future::join_all(mcp_calls.iter().map(|(call, tool)| async move {
                let result = mcp.call(tool, &call.arguments, max_result).await;
                let broken = matches!(&result, Err(e) if e.starts_with("tools/call failed"));
                (*call, result, broken)
            }));
        let results = async {
            let (mut a, m) = futures::join!(a2a_results, mcp_results);
            a.extend(m);
            a
        };
        let results = tokio::select! {
            biased;
            _ = events.cancelled() => {
                cancels.iter().for_each(|c| c());
                return Ok(ToolsEnd::Canceled);
            }
            r = tokio::time::timeout(self.config.tool_timeout, results) => r,
        };
        let results = match results {
            Ok(results) => results,
            Err(_) => {
                cancels.iter().for_each(|c| c());
                return Err(format!(
                    "a tool call took longer than {:?} (tool_timeout)",
                    self.config.tool_timeout
                )
                .into());
            }
        };
        if results.iter().any(|(_, _, broken)| *broken) {
            self.reset_mcp().await;
        }
        // In the order the model made the calls.
        let mut results = results;
        results.sort_by_key(|(call, _, _)| calls.iter().position(|c| c.id == call.id));
        for (call, result, _) in results {
            let text = match &result {
                Ok(text) => {
                    out.tool_result(&call.id, text, None).await?;
                    text.clone()
                }
                Err(e) => {
                    out.tool_result(&call.id, "", Some(e)).await?;
                    format!("error: {e}")
                }
            };
            conv.messages.push(tool_message(&call.id, &text));
        }
        if let Some(call) = ask {
            return Ok(ToolsEnd::Ask(
                call.id.clone(),
                tools::question_argument(&call.arguments),
            ));
        }
        Ok(ToolsEnd::Next)
    }

    /// Keeps the conversation for the answer to `question` and turns the
    /// task input-required. Dropped when the task ends without an answer.
    async fn park(
        &self,
        events: &TaskEvents,
        conversation: Conversation,
        call_id: String,
        question: String,
    ) -> Result<(), BoxError> {
        let task_id = events.task_id().to_owned();
        {
            let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
            if waiting.len() >= self.config.max_waiting {
                return Err(LlmError::TooManyWaiting(self.config.max_waiting).into());
            }
            waiting.insert(
                task_id.clone(),
                Parked {
                    conversation,
                    call_id,
                },
            );
        }
        if let Err(e) = events.ask(question).await {
            self.take_waiting(&task_id);
            return Err(e.into());
        }
        let map = Arc::downgrade(&self.waiting);
        let events = events.clone();
        tokio::spawn(async move {
            events.finished().await;
            if let Some(map) = map.upgrade() {
                map.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&task_id);
            }
        });
        Ok(())
    }

    fn take_waiting(&self, task_id: &str) -> Option<Parked> {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(task_id)
    }
}

#[async_trait]
impl AgentExecutor for LlmAgent {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        let _slot = self.slot()?;
        if ctx.is_follow_up() {
            let Some(parked) = self.take_waiting(&ctx.task_id) else {
                return Err(LlmError::NotWaiting.into());
            };
            let mut conv = parked.conversation;
            conv.messages
                .push(tool_message(&parked.call_id, &ctx.text()));
            return self.converse(conv, &events, Some("answered")).await;
        }
        let conv = self.opening(&ctx, &events).await?;
        self.converse(conv, &events, Some("asking the model")).await
    }
}

fn tool_message(call_id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": call_id, "content": content})
}

/// An earlier task as chat history: the user's messages, then the agent's
/// answer (the text of its artifacts, reasoning and tool parts left out).
fn history_of(task: &Task, messages: &mut Vec<Value>) {
    for m in task.history() {
        if m.role == Role::User {
            let text = m.text();
            if !text.is_empty() {
                messages.push(json!({"role": "user", "content": text}));
            }
        }
    }
    let answer: Vec<String> = task
        .artifacts()
        .iter()
        .map(|a| {
            a.parts
                .iter()
                .filter(|p| matches!(PartHints::read(p).role(), PartRole::Plain | PartRole::Text))
                .filter_map(Part::as_text)
                .collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .collect();
    if !answer.is_empty() {
        messages.push(json!({"role": "assistant", "content": answer.join("\n")}));
    }
}

/// The run's `response` artifact: its chunks hinted for AG-UI (text and
/// reasoning blocks, tool calls and results), written as they come.
pub(crate) struct Output {
    events: TaskEvents,
    writer: Option<ArtifactWriter>,
    next_index: u64,
    open: Option<(PartRole, String, u64)>,
    chunks: usize,
}

impl Output {
    fn new(events: &TaskEvents) -> Self {
        Output {
            events: events.clone(),
            writer: None,
            next_index: 0,
            open: None,
            chunks: 0,
        }
    }

    /// Chunks sent so far.
    pub(crate) fn chunks(&self) -> usize {
        self.chunks
    }

    fn id(&mut self) -> String {
        self.writer
            .get_or_insert_with(|| self.events.artifact_writer("response"))
            .artifact_id()
            .to_owned()
    }

    async fn send(&mut self, part: Part) -> Result<(), EmitError> {
        let writer = self
            .writer
            .get_or_insert_with(|| self.events.artifact_writer("response"));
        writer.append(part).await?;
        self.chunks += 1;
        Ok(())
    }

    fn block(&mut self, role: PartRole) -> (String, u64) {
        if let Some((open, id, index)) = &self.open
            && *open == role
        {
            return (id.clone(), *index);
        }
        let index = self.take_index();
        let id = format!("{}-b{index}", self.id());
        self.open = Some((role, id.clone(), index));
        (id, index)
    }

    fn take_index(&mut self) -> u64 {
        self.open = None;
        let i = self.next_index;
        self.next_index += 1;
        i
    }

    fn end_block(&mut self) {
        self.open = None;
    }

    pub(crate) async fn text(&mut self, text: String) -> Result<(), EmitError> {
        let (id, index) = self.block(PartRole::Text);
        self.send(hints::text_part(text, &id, index)).await
    }

    pub(crate) async fn thinking(&mut self, text: String) -> Result<(), EmitError> {
        let (id, index) = self.block(PartRole::Reasoning);
        self.send(hints::thinking_part(text, &id, index)).await
    }

    async fn tool_call(
        &mut self,
        call: &ToolCall,
        origin: Option<(&str, &str)>,
        task: Option<(Option<String>, Option<String>)>,
    ) -> Result<(), EmitError> {
        let index = self.take_index();
        let arguments = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
        let mut part = with_index(
            hints::tool_call_part(&call.id, &call.name, arguments),
            index,
        );
        let metadata = part.metadata.get_or_insert_with(Default::default);
        if let Some((key, value)) = origin {
            metadata.insert(key.into(), json!(value));
        }
        if let Some((task_id, context_id)) = task {
            if let Some(id) = task_id {
                metadata.insert(tools::A2A_TASK_ID.into(), json!(id));
            }
            if let Some(id) = context_id {
                metadata.insert(tools::A2A_CONTEXT_ID.into(), json!(id));
            }
        }
        self.send(part).await
    }

    async fn tool_result(
        &mut self,
        call_id: &str,
        content: &str,
        error: Option<&str>,
    ) -> Result<(), EmitError> {
        let index = self.take_index();
        self.send(with_index(
            hints::tool_result_part(call_id, content, error),
            index,
        ))
        .await
    }

    /// The last chunk (an empty continuation of the open block).
    async fn finish(&mut self) -> Result<(), EmitError> {
        let part = match self.open.clone() {
            Some((PartRole::Reasoning, id, i)) => hints::thinking_part("", &id, i),
            Some((_, id, i)) => hints::text_part("", &id, i),
            None => {
                let i = self.take_index();
                let id = format!("{}-b{i}", self.id());
                hints::text_part("", &id, i)
            }
        };
        self.open = None;
        self.next_index = 0;
        match self.writer.take() {
            Some(writer) => writer.finish(part).await,
            None => Ok(()),
        }
    }
}

fn with_index(part: Part, index: u64) -> Part {
    PartHints {
        block_index: Some(index),
        ..PartHints::default()
    }
    .apply(part)
}

/// The HTTP client: connect timeout, no overall timeout (answers stream),
/// rustls with ring and the Mozilla roots.
fn http_client(config: &LlmConfig) -> Result<reqwest::Client, ConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| ConfigError::Tool(format!("TLS configuration: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| ConfigError::BaseUrl(format!("{}: {e}", config.base_url)))
}
