//! What an exec agent runs and within which limits ([`ExecConfig`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// How the program talks to the agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecMode {
    /// The `a2a-cli --exec` contract: the message's first text part on
    /// stdin (then closed), stdout the answer (one text artifact, or
    /// chunks split at [`ExecConfig::chunk`]), exit 0 completes and any
    /// other exit fails the task with stderr's tail.
    #[default]
    #[serde(alias = "a2a-cli")]
    Text,
    /// JSON lines both ways: one object per stdout line (status, artifact
    /// chunk, progress, ask, complete, fail), the message and later answers
    /// as one object per stdin line. See the crate README's "Hosting agents".
    #[serde(alias = "jsonl", alias = "json-lines")]
    Lines,
}

/// One exec agent's settings. Deserializes from the runtime's keys of an
/// `[[agents]]` table (unknown keys are refused, so a typo is an error);
/// durations are seconds (`timeout = 30`, `kill_grace = 0.5`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecConfig {
    /// The program: a path, or a name looked up in the `PATH` it is given.
    /// Run directly, never through a shell.
    pub command: String,
    /// Its arguments, as they are (no shell, no interpolation of anything
    /// a caller sent).
    #[serde(default)]
    pub args: Vec<String>,
    /// How it talks ([`ExecMode::Text`] by default).
    #[serde(default)]
    pub mode: ExecMode,
    /// Text mode: stream stdout as artifact chunks split at this delimiter
    /// (`a2a-cli --chunk`), instead of one artifact at exit.
    #[serde(default)]
    pub chunk: Option<String>,
    /// The program's working directory (default: the server's).
    #[serde(default)]
    pub working_dir: Option<PathBuf>,
    /// Variables set for the program. Its environment is only these, the
    /// ones named in [`pass_env`](Self::pass_env) and `A2A_TASK_ID` /
    /// `A2A_CONTEXT_ID`: the server's own secrets never leak into it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of the server's environment passed through (default `PATH`).
    #[serde(default = "default_pass_env")]
    pub pass_env: Vec<String>,
    /// Longest a run may take (the time waiting for an answer not counted);
    /// then it is stopped and the task fails.
    #[serde(default = "default_timeout", deserialize_with = "seconds")]
    pub timeout: Duration,
    /// After SIGTERM (cancel, timeout, shutdown), how long the program has
    /// to exit before SIGKILL.
    #[serde(default = "default_kill_grace", deserialize_with = "seconds")]
    pub kill_grace: Duration,
    /// Most programs running (or waiting for an answer) at once; a message
    /// beyond it is refused with the A2A error ResourceExhausted, never queued.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
    /// Most bytes a run may write on stdout; beyond it the program is
    /// stopped and the task fails.
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: usize,
    /// How many of stderr's last bytes a failed task's status quotes.
    #[serde(default = "default_stderr_tail_bytes")]
    pub stderr_tail_bytes: usize,
    /// Lines mode: how long a program that asked a question waits for the
    /// answer before it is stopped (the answer then fails the task); a
    /// cancel of the waiting task stops it at once.
    #[serde(default = "default_ask_timeout", deserialize_with = "seconds")]
    pub ask_timeout: Duration,
}

fn default_pass_env() -> Vec<String> {
    vec!["PATH".into()]
}
fn default_timeout() -> Duration {
    Duration::from_secs(300)
}
fn default_kill_grace() -> Duration {
    Duration::from_secs(5)
}
fn default_max_concurrent() -> usize {
    4
}
fn default_max_output_bytes() -> usize {
    8 * 1024 * 1024
}
fn default_stderr_tail_bytes() -> usize {
    2048
}
fn default_ask_timeout() -> Duration {
    Duration::from_secs(600)
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
    /// `command` is empty.
    #[error("`command` is empty: name the program to run")]
    NoCommand,
    /// `max_concurrent` is 0.
    #[error("`max_concurrent` is 0: the agent could never run")]
    NoSlots,
    /// `chunk` is empty, or set in lines mode.
    #[error("`chunk` {0}")]
    Chunk(&'static str),
    /// `working_dir` is not a directory.
    #[error("`working_dir` {0} is not a directory")]
    WorkingDir(String),
}

impl ExecConfig {
    /// A text-mode agent running `command` with every other setting at its
    /// default.
    pub fn new(command: impl Into<String>) -> Self {
        ExecConfig {
            command: command.into(),
            args: Vec::new(),
            mode: ExecMode::Text,
            chunk: None,
            working_dir: None,
            env: BTreeMap::new(),
            pass_env: default_pass_env(),
            timeout: default_timeout(),
            kill_grace: default_kill_grace(),
            max_concurrent: default_max_concurrent(),
            max_output_bytes: default_max_output_bytes(),
            stderr_tail_bytes: default_stderr_tail_bytes(),
            ask_timeout: default_ask_timeout(),
        }
    }

    /// The same with these arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// The same in `mode`.
    pub fn mode(mut self, mode: ExecMode) -> Self {
        self.mode = mode;
        self
    }

    /// Checks what deserializing cannot.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.command.trim().is_empty() {
            return Err(ConfigError::NoCommand);
        }
        if self.max_concurrent == 0 {
            return Err(ConfigError::NoSlots);
        }
        match (&self.chunk, self.mode) {
            (Some(c), _) if c.is_empty() => return Err(ConfigError::Chunk("is empty")),
            (Some(_), ExecMode::Lines) => {
                return Err(ConfigError::Chunk(
                    "applies to text mode only (lines mode streams artifact lines)",
                ));
            }
            _ => {}
        }
        if let Some(dir) = &self.working_dir
            && !dir.is_dir()
        {
            return Err(ConfigError::WorkingDir(dir.display().to_string()));
        }
        Ok(())
    }
}
