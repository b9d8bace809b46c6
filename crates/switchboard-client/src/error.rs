//! What can go wrong when talking to an agent, as one error type.
//!
//! [`ClientError`] separates the failures a caller handles differently:
//!
//! * [`ClientError::Protocol`]: the agent understood the request and said no
//!   (a JSON-RPC `error` member: task not found, not cancelable, ...). The
//!   A2A error code is available through [`ClientError::code`].
//! * [`ClientError::Http`]: an HTTP error status without a JSON-RPC error in
//!   the body (a proxy's 502, an auth gateway's 401, a 404 for a wrong path).
//! * [`ClientError::TooLarge`]: the agent refused the request as too large
//!   (HTTP 413), whatever body it answered with.
//! * [`ClientError::Transport`]: the request never got an answer: connection
//!   refused, TLS failure, timeout, connection dropped mid-stream.
//! * [`ClientError::Decode`]: the agent answered, but not with what A2A says
//!   it must (bad JSON, a result of the wrong shape, a mismatched id).
//! * [`ClientError::NoSupportedInterface`]: the agent card offers no
//!   binding/version this client speaks.
//! * [`ClientError::Config`]: the caller's own input was unusable (a URL that
//!   does not parse, a header value with a newline).

use switchboard_protocol::A2AError;
use switchboard_protocol::jsonrpc::JsonRpcError;

/// Every error the client returns.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent answered with a JSON-RPC error. The server's code and
    /// message are kept (see [`ClientError::code`]).
    #[error("agent error {code}: {0}", code = .0.code())]
    Protocol(A2AError),
    /// An HTTP error status whose body is not a JSON-RPC error.
    #[error("HTTP {status} from the agent{}", body_suffix(.body))]
    Http {
        /// The HTTP status code.
        status: u16,
        /// The response body (truncated to a few KiB), for diagnostics.
        body: String,
    },
    /// The agent refused the request as too large (HTTP 413): its body is
    /// over the agent's limit. Told apart from other refusals because the
    /// caller's remedy differs (send less), whether the agent wrote its
    /// reason as a JSON-RPC error, a `google.rpc.Status` or plain text.
    #[error("the agent refused the request as too large: {message}")]
    TooLarge {
        /// The agent's message (its error's message, else the body's start).
        message: String,
    },
    /// The request could not be sent or its answer could not be read:
    /// connection refused, DNS, TLS, a timeout, a connection reset.
    #[error("transport error: {message}")]
    Transport {
        /// What happened, with the underlying causes joined by `: `.
        message: String,
        /// `true` when a configured timeout elapsed.
        timeout: bool,
    },
    /// The agent's answer is not valid A2A JSON.
    #[error("invalid response from the agent: {0}")]
    Decode(String),
    /// The agent card lists no interface this client can use.
    #[error("the agent offers no interface this client supports (offered: {})", offered_list(.offered))]
    NoSupportedInterface {
        /// The interfaces the card offered, as `BINDING VERSION at URL`.
        offered: Vec<String>,
    },
    /// The agent card's signatures were required and did not verify.
    #[error("agent card signature: {0}")]
    CardSignature(#[from] crate::card_signature::CardSignatureError),
    /// The client was given an unusable URL, header or option.
    #[error("invalid client configuration: {0}")]
    Config(String),
    /// No access token from the OAuth 2.0 token endpoint (see
    /// [`crate::oauth`]): unreachable, refused the client, or answered no
    /// token.
    #[error("OAuth2: {0}")]
    OAuth(String),
}

impl ClientError {
    /// The A2A / JSON-RPC error code, for [`ClientError::Protocol`] errors
    /// (e.g. `-32001` for "task not found"); `None` for every other kind.
    pub fn code(&self) -> Option<i32> {
        match self {
            ClientError::Protocol(e) => Some(e.code()),
            _ => None,
        }
    }

    /// The protocol error, when the agent answered with one.
    pub fn as_protocol(&self) -> Option<&A2AError> {
        match self {
            ClientError::Protocol(e) => Some(e),
            _ => None,
        }
    }

    /// `true` when a configured timeout elapsed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Transport { timeout: true, .. })
    }

    /// Builds a [`ClientError::Protocol`] from the `error` member of a
    /// JSON-RPC response.
    ///
    /// Codes of the A2A table keep their variant; any other code (e.g. a
    /// server-defined `-32000`) becomes [`A2AError::Internal`] with the
    /// original code written into the message, so it is not lost.
    pub(crate) fn from_rpc(err: &JsonRpcError) -> Self {
        let a2a = err.to_a2a_error();
        if a2a.code() == err.code {
            ClientError::Protocol(a2a)
        } else {
            ClientError::Protocol(A2AError::Internal(format!(
                "{} (JSON-RPC error code {})",
                err.message, err.code
            )))
        }
    }

    /// The error for an HTTP 413 answer, with the agent's reason: the
    /// message of the A2A error `protocol` read from the body, else the
    /// body's text.
    pub(crate) fn too_large(protocol: Option<&A2AError>, body: &[u8]) -> Self {
        let message = match protocol {
            Some(e) => e.to_string(),
            None => {
                let text: String = String::from_utf8_lossy(body)
                    .trim()
                    .chars()
                    .take(MAX_TOO_LARGE_TEXT)
                    .collect();
                if text.is_empty() {
                    "HTTP 413".to_owned()
                } else {
                    text
                }
            }
        };
        ClientError::TooLarge { message }
    }

    /// Wraps a `reqwest` error, flattening its cause chain into one line.
    pub(crate) fn transport(err: &reqwest::Error) -> Self {
        ClientError::Transport {
            message: flatten_chain(err),
            timeout: err.is_timeout(),
        }
    }

    /// A timeout of `what` after `after`.
    pub(crate) fn timeout(what: &str, after: std::time::Duration) -> Self {
        ClientError::Transport {
            message: format!("{what} timed out after {after:?}"),
            timeout: true,
        }
    }
}

/// An error and its causes on one line, joined with `: `, each cause once:
/// one whose text the line already holds is skipped (hyper and reqwest
/// repeat themselves). The client's own messages and the CLI use it.
pub fn flatten_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        cur = e.source();
    }
    out
}

/// The message the server sent, for an error built by
/// [`A2AError::from_code`] (which stores it in the variant's text field);
/// variants without such a field show their standard text.
/// At most this much of a plain-text 413 body becomes the error's message.
const MAX_TOO_LARGE_TEXT: usize = 1024;

fn body_suffix(body: &str) -> String {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!(": {trimmed}")
    }
}

fn offered_list(offered: &[String]) -> String {
    if offered.is_empty() {
        "nothing".to_string()
    } else {
        offered.join(", ")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn rpc(code: i32, message: &str) -> ClientError {
        ClientError::from_rpc(&JsonRpcError {
            code,
            message: message.into(),
            data: None,
        })
    }

    #[test]
    fn protocol_errors_show_code_and_server_message() {
        let e = rpc(-32001, "Task not found: t9");
        assert_eq!(e.code(), Some(-32001));
        assert!(matches!(e.as_protocol(), Some(A2AError::TaskNotFound(_))));
        assert_eq!(e.to_string(), "agent error -32001: Task not found: t9");
        let e = rpc(-32002, "Task cannot be canceled");
        assert_eq!(e.to_string(), "agent error -32002: Task cannot be canceled");
        let e = rpc(-32602, "bad field");
        assert_eq!(
            e.to_string(),
            "agent error -32602: Invalid parameters: bad field"
        );
    }

    #[test]
    fn unknown_codes_keep_the_code_in_the_message() {
        let e = rpc(-32050, "quota exceeded");
        assert_eq!(e.code(), Some(-32603));
        assert_eq!(
            e.to_string(),
            "agent error -32603: Internal error: quota exceeded (JSON-RPC error code -32050)"
        );
    }

    #[test]
    fn other_kinds_have_no_code() {
        let e = ClientError::Http {
            status: 502,
            body: " bad gateway \n".into(),
        };
        assert_eq!(e.code(), None);
        assert_eq!(e.to_string(), "HTTP 502 from the agent: bad gateway");
        assert!(ClientError::timeout("GetTask", std::time::Duration::from_secs(1)).is_timeout());
        let e = ClientError::NoSupportedInterface { offered: vec![] };
        assert!(e.to_string().ends_with("(offered: nothing)"));
    }
}
