//! How a bridged run fails.
//!
//! Every failure ends the run with one `RUN_ERROR` whose `message` says what
//! went wrong and whose `code` ([`BridgeError::code`]) lets a UI tell the
//! kinds apart. A request the bridge cannot even read (not JSON, not a
//! `RunAgentInput`) is answered the same way: the AG-UI client only shows
//! errors that arrive as events.

/// Why a run could not be carried out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BridgeError {
    /// The request body is not a valid `RunAgentInput`.
    #[error("invalid RunAgentInput: {0}")]
    InvalidInput(String),
    /// `forwardedProps.a2a` is malformed or names an unknown mode.
    #[error("invalid run options: {0}")]
    InvalidOptions(String),
    /// The run addresses a task that is not in the run's context (or not
    /// visible to the caller).
    #[error("task {task_id} does not belong to context {context_id}")]
    ContextMismatch {
        /// The task the run named.
        task_id: String,
        /// The context the run is in.
        context_id: String,
    },
    /// The run names a context that is not one of the caller's (see
    /// [`crate::owner`]).
    #[error("context {0} not found")]
    UnknownContext(String),
    /// `resume` does not answer exactly the pending interrupts.
    #[error("invalid resume: {0}")]
    InvalidResume(String),
    /// There is nothing to send: no message the agent has not seen, no
    /// resume, no task to reconnect to.
    #[error("nothing to send: {0}")]
    NothingToSend(String),
    /// The agent could not be reached (connection refused, timeout, TLS).
    #[error("agent unavailable: {0}")]
    AgentUnavailable(String),
    /// The agent refused the bridge's request as too large (HTTP 413): the
    /// run's message (its history, context, tools and state included) is
    /// over the agent's body limit.
    #[error("the agent refused the request as too large: {0}")]
    RequestTooLarge(String),
    /// The agent answered with an A2A error.
    #[error("agent error {code}: {message}")]
    Agent {
        /// The A2A (JSON-RPC) error code.
        code: i64,
        /// The agent's message.
        message: String,
    },
    /// The agent answered something that is not A2A.
    #[error("the agent's answer is not valid A2A: {0}")]
    AgentProtocol(String),
}

impl BridgeError {
    /// The `code` of the `RUN_ERROR` that reports this failure.
    pub fn code(&self) -> &'static str {
        match self {
            BridgeError::InvalidInput(_) => "bridge:invalid_input",
            BridgeError::InvalidOptions(_) => "bridge:invalid_options",
            BridgeError::ContextMismatch { .. } => "bridge:context_mismatch",
            BridgeError::UnknownContext(_) => "bridge:unknown_context",
            BridgeError::InvalidResume(_) => "bridge:invalid_resume",
            BridgeError::NothingToSend(_) => "bridge:nothing_to_send",
            BridgeError::AgentUnavailable(_) => "bridge:agent_unavailable",
            BridgeError::RequestTooLarge(_) => "bridge:request_too_large",
            BridgeError::Agent { .. } => "bridge:agent_error",
            BridgeError::AgentProtocol(_) => "bridge:agent_protocol",
        }
    }
}
