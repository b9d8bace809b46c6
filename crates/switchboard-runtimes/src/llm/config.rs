//! What an LLM agent talks to and within which limits ([`LlmConfig`]).

use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// One LLM agent's settings. Deserializes from the runtime's keys of an
/// `[[agents]]` table (unknown keys are refused, so a typo is an error);
/// durations are seconds (`idle_timeout = 30`, `retry_backoff = 0.5`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    /// The API's base URL, up to and including its version
    /// (`https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`): requests
    /// go to `<base_url>/chat/completions`.
    pub base_url: String,
    /// The model to ask for.
    pub model: String,
    /// The environment variable holding the API key, read once when the
    /// agent is built and sent as `Authorization: Bearer`; never logged nor
    /// shown. None: no key (local servers).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The system message that opens every conversation.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// Sampling temperature (the server's default when unset).
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling (the server's default when unset).
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Most tokens per model answer (the server's default when unset).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sampling seed, for servers that take one.
    #[serde(default)]
    pub seed: Option<i64>,
    /// Stop sequences.
    #[serde(default)]
    pub stop: Vec<String>,
    /// The tools the model may call: other A2A agents by card URL
    /// (`tools = [{ a2a = "http://127.0.0.1:8081" }]`).
    #[serde(default)]
    pub tools: Vec<ToolConfig>,
    /// MCP servers whose tools the model may call: a program over stdio
    /// (`mcp = [{ command = "npx", args = ["-y", "some-mcp-server"] }]`) or
    /// a streamable HTTP endpoint (`mcp = [{ url = "http://127.0.0.1:8090/mcp" }]`).
    #[serde(default)]
    pub mcp: Vec<super::mcp::McpConfig>,
    /// Offer the built-in `ask_user` tool: the task turns input-required
    /// with the model's question, and the answer (a message on the same
    /// task) goes back to the model as the tool's result.
    #[serde(default)]
    pub ask_user: bool,
    /// `tool_choice` of the first request of a task: `auto`, `required`,
    /// `none`, or a tool's function name (forces that call; small models
    /// call tools reliably only when forced). Unset: the server's default.
    #[serde(default)]
    pub tool_choice: Option<String>,
    /// `tool_choice` of the requests after a round of tool calls (default
    /// `auto`, so the model may call more or answer with the results;
    /// `none` makes it answer, and is what servers that cannot stream
    /// automatic tool choice, such as llama-cpp-python's, need).
    #[serde(default)]
    pub followup_tool_choice: Option<String>,
    /// Longest wait for a connection to the model's server.
    #[serde(default = "default_connect_timeout", deserialize_with = "seconds")]
    pub connect_timeout: Duration,
    /// Longest wait from a request to the first streamed event.
    #[serde(default = "default_first_token_timeout", deserialize_with = "seconds")]
    pub first_token_timeout: Duration,
    /// Longest silence between two streamed chunks.
    #[serde(default = "default_idle_timeout", deserialize_with = "seconds")]
    pub idle_timeout: Duration,
    /// Longest a tool call (an A2A task of another agent) may take.
    #[serde(default = "default_tool_timeout", deserialize_with = "seconds")]
    pub tool_timeout: Duration,
    /// Retries of a request that failed before any token went out
    /// (connection errors, 429, 5xx, a stream that broke before its first
    /// token); a stream cut after tokens went out is never retried.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// First backoff between retries, doubled each time (a `Retry-After`
    /// the server sends is honoured instead, up to `max_retry_wait`).
    #[serde(default = "default_retry_backoff", deserialize_with = "seconds")]
    pub retry_backoff: Duration,
    /// Longest wait before one retry (caps `Retry-After` and the backoff).
    #[serde(default = "default_max_retry_wait", deserialize_with = "seconds")]
    pub max_retry_wait: Duration,
    /// Most model requests (rounds of tool calls plus the answer) per run.
    #[serde(default = "default_max_rounds")]
    pub max_rounds: u32,
    /// Most bytes one streamed model answer may take; beyond it the stream
    /// is dropped and the task fails.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
    /// Longest line of the event stream.
    #[serde(default = "default_max_line_bytes")]
    pub max_line_bytes: usize,
    /// How many earlier tasks of the conversation (context) go to the model
    /// as history (0: none; at most 100).
    #[serde(default = "default_history_tasks")]
    pub history_tasks: usize,
    /// Most runs at once (each holds one model stream); a message beyond
    /// it is refused with ResourceExhausted, never queued.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
    /// Most tasks waiting for an `ask_user` answer at once.
    #[serde(default = "default_max_waiting")]
    pub max_waiting: usize,
    /// Most tool calls the model may make in one answer; the ones beyond
    /// are not made, and the model is told so in their results.
    #[serde(default = "default_max_tool_calls")]
    pub max_tool_calls: usize,
    /// Most bytes of a tool's result kept (and sent to the model); the
    /// rest is cut off, and the result says so.
    #[serde(default = "default_max_tool_result_bytes")]
    pub max_tool_result_bytes: usize,
}

/// A tool: another A2A agent, called with one `message` string.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// Its agent card's URL (or its base URL; the well-known path is tried).
    pub a2a: String,
    /// The function name the model sees (default: the card's name, made a
    /// valid function name).
    #[serde(default)]
    pub name: Option<String>,
    /// The function's description (default: the card's description).
    #[serde(default)]
    pub description: Option<String>,
}

fn default_connect_timeout() -> Duration {
    Duration::from_secs(10)
}
fn default_first_token_timeout() -> Duration {
    Duration::from_secs(120)
}
fn default_idle_timeout() -> Duration {
    Duration::from_secs(60)
}
fn default_tool_timeout() -> Duration {
    Duration::from_secs(300)
}
fn default_retries() -> u32 {
    3
}
fn default_retry_backoff() -> Duration {
    Duration::from_millis(500)
}
fn default_max_retry_wait() -> Duration {
    Duration::from_secs(30)
}
fn default_max_rounds() -> u32 {
    8
}
fn default_max_response_bytes() -> usize {
    4 * 1024 * 1024
}
fn default_max_line_bytes() -> usize {
    256 * 1024
}
fn default_history_tasks() -> usize {
    20
}
fn default_max_concurrent() -> usize {
    16
}
fn default_max_waiting() -> usize {
    256
}
fn default_max_tool_calls() -> usize {
    8
}
fn default_max_tool_result_bytes() -> usize {
    64 * 1024
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| serde::de::Error::custom(format!("{secs} is not a number of seconds")))
}

/// A setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `base_url` is not an http(s) URL.
    #[error("`base_url` {0:?} is not an http:// or https:// URL")]
    BaseUrl(String),
    /// `model` is empty.
    #[error("`model` is empty: name the model to ask for")]
    NoModel,
    /// `api_key_env` names a variable that is not set.
    #[error("`api_key_env`: the environment variable {0} is not set")]
    MissingKey(String),
    /// A limit is 0.
    #[error("`{0}` is 0: the agent could never answer")]
    Zero(&'static str),
    /// `history_tasks` is over 100.
    #[error("`history_tasks` is {0}; at most 100")]
    History(usize),
    /// A tool has no URL, or two tools share a function name.
    #[error("tool {0}")]
    Tool(String),
}

impl LlmConfig {
    /// An agent asking `model` at `base_url`, every other setting at its
    /// default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            system_prompt: None,
            temperature: None,
            top_p: None,
            max_tokens: None,
            seed: None,
            stop: Vec::new(),
            tools: Vec::new(),
            mcp: Vec::new(),
            ask_user: false,
            tool_choice: None,
            followup_tool_choice: None,
            connect_timeout: default_connect_timeout(),
            first_token_timeout: default_first_token_timeout(),
            idle_timeout: default_idle_timeout(),
            tool_timeout: default_tool_timeout(),
            retries: default_retries(),
            retry_backoff: default_retry_backoff(),
            max_retry_wait: default_max_retry_wait(),
            max_rounds: default_max_rounds(),
            max_response_bytes: default_max_response_bytes(),
            max_line_bytes: default_max_line_bytes(),
            history_tasks: default_history_tasks(),
            max_concurrent: default_max_concurrent(),
            max_waiting: default_max_waiting(),
            max_tool_calls: default_max_tool_calls(),
            max_tool_result_bytes: default_max_tool_result_bytes(),
        }
    }

    /// Checks what deserializing cannot (not the API key's variable: that
    /// is read when the agent is built).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let url = self.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ConfigError::BaseUrl(self.base_url.clone()));
        }
        if self.model.trim().is_empty() {
            return Err(ConfigError::NoModel);
        }
        for (name, value) in [
            ("max_concurrent", self.max_concurrent),
            ("max_rounds", self.max_rounds as usize),
            ("max_response_bytes", self.max_response_bytes),
            ("max_line_bytes", self.max_line_bytes),
            ("max_waiting", self.max_waiting),
            ("max_tool_calls", self.max_tool_calls),
            ("max_tool_result_bytes", self.max_tool_result_bytes),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        if self.history_tasks > 100 {
            return Err(ConfigError::History(self.history_tasks));
        }
        for tool in &self.tools {
            if tool.a2a.trim().is_empty() {
                return Err(ConfigError::Tool("has an empty `a2a` URL".into()));
            }
        }
        for server in &self.mcp {
            match (&server.command, &server.url) {
                (Some(c), None) if !c.trim().is_empty() => {}
                (None, Some(u)) if u.starts_with("http://") || u.starts_with("https://") => {}
                _ => {
                    return Err(ConfigError::Tool(
                        "`mcp` entries name either a `command` or an http(s) `url`".into(),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `<base_url>/chat/completions`.
    pub fn endpoint(&self) -> String {
        format!(
            "{}/chat/completions",
            self.base_url.trim().trim_end_matches('/')
        )
    }
}
