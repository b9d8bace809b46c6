//! Why an LLM run failed ([`LlmError`]): its text is the failed task's
//! status message, so each says what happened and, where it helps, what to
//! change. The API key never appears in one.

use std::time::Duration;

/// Why an LLM run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The model's server could not be reached (after the retries).
    #[error("could not reach the model at {endpoint} after {attempts} attempt(s): {reason}")]
    Connect {
        /// `<base_url>/chat/completions`.
        endpoint: String,
        /// Requests made.
        attempts: u32,
        /// The last error.
        reason: String,
    },
    /// The server answered with an error status (after the retries, for
    /// 429 and 5xx).
    #[error("the model's server answered {status} after {attempts} attempt(s): {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// Requests made.
        attempts: u32,
        /// The start of its answer.
        body: String,
    },
    /// Nothing came back within `first_token_timeout`.
    #[error("the model sent nothing within {0:?} (first_token_timeout)")]
    FirstTokenTimeout(Duration),
    /// The stream went silent for `idle_timeout`.
    #[error("the model's stream was silent for {0:?} (idle_timeout); it was dropped")]
    IdleTimeout(Duration),
    /// The stream broke after tokens went out (never retried: the caller
    /// has seen them).
    #[error("the model's stream was cut after {tokens} streamed chunk(s): {reason}")]
    Cut {
        /// Content deltas already streamed.
        tokens: usize,
        /// What happened.
        reason: String,
    },
    /// The answer outgrew `max_response_bytes`.
    #[error("the model's answer outgrew {0} bytes (max_response_bytes); it was dropped")]
    TooLarge(usize),
    /// An event-stream line outgrew `max_line_bytes`.
    #[error("the model sent an event line longer than {0} bytes (max_line_bytes)")]
    LineTooLong(usize),
    /// An event that is not a chat completion chunk (or an error event).
    #[error("the model's server sent {0}")]
    Upstream(String),
    /// The model kept calling tools for `max_rounds` requests.
    #[error("the model was still calling tools after {0} requests (max_rounds)")]
    Rounds(u32),
    /// A tool's card could not be read.
    #[error("tool {url}: {reason}")]
    Tool {
        /// Its configured URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// An answer arrived for a task no model conversation waits on.
    #[error(
        "no conversation is waiting for this answer: the server restarted or the task is not waiting; send a new message"
    )]
    NotWaiting,
    /// Too many tasks wait for answers.
    #[error("{0} tasks already wait for answers (max_waiting); answer or cancel one")]
    TooManyWaiting(usize),
}
