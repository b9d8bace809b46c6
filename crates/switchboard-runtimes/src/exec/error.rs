//! Why a run failed ([`ExecError`]): its text is the failed task's status
//! message, so each says what happened and what to change.

use std::time::Duration;

/// Why an exec run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The program could not be started.
    #[error("could not start {command:?}: {source}")]
    Spawn {
        /// The configured command.
        command: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// It wrote more on stdout than `max_output_bytes` allows.
    #[error(
        "the program wrote more than {limit} bytes on stdout (max_output_bytes); it was stopped"
    )]
    OutputTooLarge {
        /// The limit.
        limit: usize,
    },
    /// It ran longer than `timeout`.
    #[error("the program ran longer than {0:?} (timeout); it was stopped")]
    TimedOut(Duration),
    /// It exited unsuccessfully.
    #[error("the program {status}{}", stderr_suffix(.stderr))]
    Exited {
        /// How it exited (`exited with code 2`, `was killed by signal 9`).
        status: String,
        /// stderr's tail.
        stderr: String,
    },
    /// In lines mode, a stdout line that is not one of the mode's objects.
    #[error("stdout line {line} is not a JSON-lines message: {reason}{}", stderr_suffix(.stderr))]
    Protocol {
        /// Its number (1-based).
        line: usize,
        /// What is wrong with it.
        reason: String,
        /// stderr's tail.
        stderr: String,
    },
    /// The program said the task failed (lines mode `fail`).
    #[error("{0}")]
    Failed(String),
    /// An answer arrived for a task whose program is gone.
    #[error(
        "no program is waiting for this answer: it exited, waited longer than ask_timeout, or the server restarted"
    )]
    NotWaiting,
    /// Reading or writing its pipes failed.
    #[error("talking to the program failed: {0}")]
    Io(#[from] std::io::Error),
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {stderr}")
    }
}

/// How a program exited, in words.
pub(crate) fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => format!("ended ({status})"),
    }
}
