//! Why a proxied call failed ([`ProxyError`]): its text is the failed
//! task's status message, so each names the remote and what happened —
//! never a credential (the client's errors carry none: headers are not
//! part of them).

use std::time::Duration;

use switchboard_client::ClientError;

/// Why a call to the remote agent failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// No connection: refused, DNS, TLS, reset.
    #[error("the remote agent at {url} is unreachable: {message}")]
    Unreachable {
        /// The remote.
        url: String,
        /// What the client said.
        message: String,
    },
    /// It refused our credentials (HTTP 401/403, or the A2A
    /// authentication errors).
    #[error("the remote agent at {url} refused the call ({status}): check the proxy's credentials")]
    Refused {
        /// The remote.
        url: String,
        /// `HTTP 401`, or the A2A error.
        status: String,
    },
    /// No answer or event within `timeout`.
    #[error("the remote agent at {url} sent nothing for {after:?} (timeout)")]
    TimedOut {
        /// The remote.
        url: String,
        /// The limit.
        after: Duration,
    },
    /// It answered with an error.
    #[error("the remote agent at {url} answered: {message}")]
    Remote {
        /// The remote.
        url: String,
        /// Its error.
        message: String,
    },
    /// Its stream ended before its task finished or asked for input, and
    /// the task could not be read afterwards either.
    #[error("the remote agent at {url} ended its stream while its task was {state}")]
    Ended {
        /// The remote.
        url: String,
        /// The remote task's last state seen.
        state: String,
    },
    /// A follow-up message on a task that has no remote task.
    #[error("this task has no remote task to continue")]
    NoRemoteTask,
}

impl ProxyError {
    /// The client's error, as what happened on the way to `url`.
    pub(crate) fn from_client(url: &str, e: ClientError) -> Self {
        let url = url.to_string();
        match e {
            ClientError::Transport { message, .. } => ProxyError::Unreachable { url, message },
            ClientError::Http { status, .. } if status == 401 || status == 403 => {
                ProxyError::Refused {
                    url,
                    status: format!("HTTP {status}"),
                }
            }
            ClientError::Protocol(a2a)
                if matches!(
                    a2a,
                    switchboard_protocol::A2AError::Unauthenticated(_)
                        | switchboard_protocol::A2AError::PermissionDenied(_)
                ) =>
            {
                ProxyError::Refused {
                    url,
                    status: a2a.to_string(),
                }
            }
            other => ProxyError::Remote {
                url,
                message: other.to_string(),
            },
        }
    }

    /// A short word for the audit line.
    pub(crate) fn outcome(&self) -> &'static str {
        match self {
            ProxyError::Unreachable { .. } => "unreachable",
            ProxyError::Refused { .. } => "refused",
            ProxyError::TimedOut { .. } => "timeout",
            ProxyError::Remote { .. } => "remote-error",
            ProxyError::Ended { .. } => "stream-ended",
            ProxyError::NoRemoteTask => "no-remote-task",
        }
    }
}
