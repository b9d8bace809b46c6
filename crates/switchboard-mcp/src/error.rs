//! What can go wrong, as types: [`FrontError`] when a front is built or
//! served, [`CallError`] for one tool call, mapped to MCP once
//! ([`CallError::into_response`]).

use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::json;
use switchboard_client::ClientError;

/// A front that cannot be built or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrontError {
    /// A front needs at least one agent.
    #[error("no agent to put in front of")]
    NoAgent,
    /// The client of an agent was built without its card (from an
    /// endpoint): the front cannot know its skills.
    #[error("the client for {0} holds no agent card: connect with the card's URL")]
    NoCard(String),
    /// The client refused an option (the task-progress extension header).
    #[error(transparent)]
    Client(ClientError),
    /// The MCP transport failed (stdio closed mid-handshake, …).
    #[error("MCP transport: {0}")]
    Serve(String),
}

/// Why a tool call did not end with the agent's result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The call names no tool of this server (an MCP protocol error).
    #[error("unknown tool: {0}")]
    UnknownTool(String),
    /// The arguments do not fit the tool's input schema (an MCP protocol
    /// error).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The agent could not be reached, or did not answer in time.
    #[error("cannot reach the agent at {endpoint}: {source}")]
    Unreachable {
        /// Where the agent was called.
        endpoint: String,
        /// What the client saw.
        source: ClientError,
    },
    /// The agent answered the call with an error.
    #[error("the agent refused the call: {0}")]
    Agent(ClientError),
    /// The agent said nothing for longer than the front waits.
    #[error("the agent sent nothing for {0:?}; its task was canceled")]
    Silent(Duration),
    /// The task failed.
    #[error("the agent's task {task_id} failed: {reason}")]
    Failed {
        /// The task.
        task_id: String,
        /// The agent's reason (its status message), or a placeholder.
        reason: String,
    },
    /// The agent rejected the task.
    #[error("the agent rejected task {task_id}: {reason}")]
    Rejected {
        /// The task.
        task_id: String,
        /// The agent's reason (its status message), or a placeholder.
        reason: String,
    },
    /// The task was canceled (by the MCP caller, or at the agent).
    #[error("the agent's task {task_id} was canceled")]
    Canceled {
        /// The task.
        task_id: String,
    },
    /// The agent needs credentials the front cannot give it.
    #[error(
        "the agent needs authentication ({schemes}) for task {task_id}: {message}; the task was canceled"
    )]
    AuthRequired {
        /// The task.
        task_id: String,
        /// The security schemes of the agent's card, comma-separated (or
        /// "a scheme its card does not name").
        schemes: String,
        /// What the agent said.
        message: String,
    },
    /// The user declined or dismissed the agent's question.
    #[error("the agent's question was not answered ({action}); task {task_id} was canceled")]
    NotAnswered {
        /// The task.
        task_id: String,
        /// `decline` or `cancel`.
        action: &'static str,
    },
    /// The call names a task that is not the caller's (or does not exist).
    #[error("no task {0} (of yours) at the agent")]
    UnknownTask(String),
    /// The agent's stream ended and the task is still running.
    #[error("the agent's task {0} is still running and the agent stopped answering")]
    Unfinished(String),
}

impl CallError {
    /// The error a client error is: the agent unreachable (transport,
    /// timeouts) or refusing.
    pub(crate) fn from_client(endpoint: &str, error: ClientError) -> Self {
        match error {
            ClientError::Transport { .. } => CallError::Unreachable {
                endpoint: endpoint.to_owned(),
                source: error,
            },
            other => CallError::Agent(other),
        }
    }

    /// A short machine-readable code, in the tool error's structured content.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::UnknownTool(_) => "unknown_tool",
            CallError::InvalidArguments(_) => "invalid_arguments",
            CallError::Unreachable { .. } => "agent_unreachable",
            CallError::Agent(_) => "agent_error",
            CallError::Silent(_) => "agent_silent",
            CallError::Failed { .. } => "task_failed",
            CallError::Rejected { .. } => "task_rejected",
            CallError::Canceled { .. } => "task_canceled",
            CallError::AuthRequired { .. } => "auth_required",
            CallError::NotAnswered { .. } => "not_answered",
            CallError::UnknownTask(_) => "unknown_task",
            CallError::Unfinished(_) => "task_unfinished",
        }
    }

    /// What MCP shows: a call that names no tool or has unusable arguments
    /// is a protocol error (`-32602`, as the MCP spec asks); everything the
    /// agent or its task did is a tool error (`isError: true`), which the
    /// model reads.
    pub fn into_response(self) -> Result<CallToolResponse, McpError> {
        match self {
            CallError::UnknownTool(_) | CallError::InvalidArguments(_) => {
                Err(McpError::invalid_params(self.to_string(), None))
            }
            other => {
                let mut result = CallToolResult::error(vec![ContentBlock::text(other.to_string())]);
                let mut details = json!({"error": other.code()});
                if let Some(task_id) = other.task_id() {
                    details["taskId"] = json!(task_id);
                }
                result.structured_content = Some(details);
                Ok(result.into())
            }
        }
    }

    fn task_id(&self) -> Option<&str> {
        match self {
            CallError::Failed { task_id, .. }
            | CallError::Rejected { task_id, .. }
            | CallError::Canceled { task_id }
            | CallError::AuthRequired { task_id, .. }
            | CallError::NotAnswered { task_id, .. } => Some(task_id),
            CallError::UnknownTask(task_id) | CallError::Unfinished(task_id) => Some(task_id),
            _ => None,
        }
    }
}
