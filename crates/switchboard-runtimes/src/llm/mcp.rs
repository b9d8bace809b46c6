//! MCP servers as the model's tools, on the official Rust MCP SDK (`rmcp`).
//!
//! Each `mcp` entry is one server: a program started once per agent and
//! spoken to over its stdin/stdout (`command`, `args`; its environment only
//! `env` and the `pass_env` variables, never a shell), or a streamable HTTP
//! endpoint (`url`). Its tools (`tools/list`) become the model's functions
//! as they are — name (with `prefix__` when set), description and input
//! schema — and a call is `tools/call` with the model's arguments; the text
//! of its content is the result, and `isError` makes it a failed call. The
//! connection is made on first use and kept; a server that fails a call is
//! connected again on the next run.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LlmError;
use super::tools::function_name;

/// Metadata key on a tool-call part: the MCP server called (its URL or command).
pub const MCP_SERVER: &str = "mcp_server";

/// One MCP server's settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// A program speaking MCP on stdin/stdout (run directly, no shell).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it (its environment is only these and `pass_env`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of the server's environment passed through (default `PATH`).
    #[serde(default = "default_pass_env")]
    pub pass_env: Vec<String>,
    /// Or a streamable HTTP endpoint (`http://127.0.0.1:8090/mcp`).
    #[serde(default)]
    pub url: Option<String>,
    /// Prefix of its tools' function names (`prefix__tool`), to tell the
    /// tools of several servers apart.
    #[serde(default)]
    pub prefix: Option<String>,
}

fn default_pass_env() -> Vec<String> {
    vec!["PATH".into()]
}

impl McpConfig {
    /// What names it in errors and in tool-call parts.
    pub fn label(&self) -> String {
        match (&self.url, &self.command) {
            (Some(url), _) => url.clone(),
            (None, Some(command)) => command.clone(),
            (None, None) => "(nothing)".into(),
        }
    }
}

/// The connected servers and their tools.
pub(crate) struct McpTools {
    servers: Vec<RunningService<RoleClient, ()>>,
    labels: Vec<String>,
    tools: Vec<McpTool>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("servers", &self.labels)
            .field("tools", &self.tools)
            .finish()
    }
}

/// One MCP tool as the model sees it.
#[derive(Debug, Clone)]
pub(crate) struct McpTool {
    /// The function name (prefixed).
    pub(crate) function: String,
    /// The server's own name for it.
    name: String,
    description: String,
    schema: Value,
    server: usize,
}

impl McpTools {
    /// Connects every server and lists its tools, within `timeout` each.
    pub(crate) async fn connect(
        configs: &[McpConfig],
        timeout: Duration,
    ) -> Result<Self, LlmError> {
        let mut out = McpTools {
            servers: Vec::new(),
            labels: Vec::new(),
            tools: Vec::new(),
        };
        for config in configs {
            let label = config.label();
            let error = |reason: String| LlmError::Tool {
                url: label.clone(),
                reason,
            };
            let service = tokio::time::timeout(timeout, start(config))
                .await
                .map_err(|_| error(format!("the MCP server did not start within {timeout:?}")))?
                .map_err(error)?;
            let listed = tokio::time::timeout(timeout, service.list_all_tools())
                .await
                .map_err(|_| error(format!("tools/list took longer than {timeout:?}")))?
                .map_err(|e| error(format!("tools/list failed: {e}")))?;
            let server = out.servers.len();
            for tool in listed {
                let base = function_name(&tool.name);
                let function = match &config.prefix {
                    Some(prefix) => function_name(&format!("{prefix}__{base}")),
                    None => base,
                };
                out.tools.push(McpTool {
                    function,
                    name: tool.name.to_string(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    schema: Value::Object((*tool.input_schema).clone()),
                    server,
                });
            }
            out.servers.push(service);
            out.labels.push(label);
        }
        Ok(out)
    }

    pub(crate) fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The server a tool belongs to, as configured.
    pub(crate) fn label(&self, tool: &McpTool) -> &str {
        &self.labels[tool.server]
    }

    /// Calls `tool` with the model's `arguments` (JSON text): the text of
    /// its content, at most `max` bytes, or why it failed.
    pub(crate) async fn call(
        &self,
        tool: &McpTool,
        arguments: &str,
        max: usize,
    ) -> Result<String, String> {
        let arguments = match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) | Err(_) if arguments.trim().is_empty() => Default::default(),
            _ => return Err(format!("the arguments are not a JSON object: {arguments}")),
        };
        let params = CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments);
        let result = self.servers[tool.server]
            .call_tool(params)
            .await
            .map_err(|e| format!("tools/call failed: {e}"))?;
        let mut text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        if text.is_empty()
            && let Some(structured) = &result.structured_content
        {
            text = structured.to_string();
        }
        if text.len() > max {
            let mut end = max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[the tool's result was cut off here: max_tool_result_bytes]");
        }
        if result.is_error == Some(true) {
            Err(text)
        } else {
            Ok(text)
        }
    }
}

impl McpTool {
    /// The function the model sees.
    pub(crate) fn function(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.function,
                "description": self.description,
                "parameters": self.schema,
            },
        })
    }
}

async fn start(config: &McpConfig) -> Result<RunningService<RoleClient, ()>, String> {
    match (&config.url, &config.command) {
        (Some(url), None) => {
            switchboard_client::tls::install_default_provider();
            let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.as_str());
            ().serve(transport)
                .await
                .map_err(|e| format!("could not open an MCP session: {e}"))
        }
        (None, Some(command)) => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&config.args).env_clear();
            for var in &config.pass_env {
                if let Ok(value) = std::env::var(var) {
                    cmd.env(var, value);
                }
            }
            cmd.envs(&config.env);
            let transport = rmcp::transport::TokioChildProcess::new(cmd)
                .map_err(|e| format!("could not start {command:?}: {e}"))?;
            ().serve(transport)
                .await
                .map_err(|e| format!("could not open an MCP session: {e}"))
        }
        _ => Err("name either `command` or `url`".into()),
    }
}
