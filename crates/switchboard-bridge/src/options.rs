//! What a run is for, and how the bridge is configured.
//!
//! AG-UI has no field for A2A addressing, so a run names its mode and task
//! in the app-specific passthrough, under one namespaced key:
//!
//! ```json
//! {"forwardedProps": {"a2a": {"mode": "send", "taskId": "…", "contextId": "…"}}}
//! ```
//!
//! - `mode` — `"stream"` (the default): a long-lived run that follows the
//!   task until it ends or interrupts. `"send"`: a short-lived control run
//!   that injects a message into a running task, or, with no new message,
//!   reconnects to it. `"cancel"`: a short control run that cancels the
//!   task `taskId` names (`CancelTask`) and finishes with the task in the
//!   state; a task that has ended already is reported as it is. (AG-UI's
//!   `abortRun()` only ends the client's own run; this stops the work.)
//! - `taskId` — the A2A task the run addresses (an injection, a reconnect,
//!   a resume). Without it a streamed run starts a new task.
//! - `contextId` — the A2A context to continue. Without it the bridge uses
//!   the task's context, or the one it projected into the client's state
//!   on an earlier run (`/view/contextId`), or lets the agent start one.
//!
//! Anything else under `forwardedProps` is the app's and is ignored; a
//! malformed `a2a` object or an unknown mode is
//! [`BridgeError::InvalidOptions`].

use serde::Deserialize;
use serde_json::Value;
use switchboard_agui::events::RunAgentInput;

use crate::BridgeError;

/// The key under `forwardedProps` that carries [`RunOptions`].
pub const FORWARDED_PROPS_KEY: &str = "a2a";

/// The Engram extension (seed 003, Decision 2; `docs/adr/0002`): messages
/// that carry it go to the agent's config lane. One definition, the
/// converter's, which projects the config the agent reports.
pub use switchboard_agui::view::ENGRAM_URI;

/// How long a run lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Follow the task until it is terminal or interrupted.
    #[default]
    Stream,
    /// Inject a message (or reconnect) and finish.
    Send,
    /// Cancel the named task and finish.
    Cancel,
}

/// The run's A2A addressing, from `forwardedProps.a2a`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunOptions {
    /// The run mode.
    #[serde(default)]
    pub mode: Mode,
    /// The task the run addresses.
    pub task_id: Option<String>,
    /// The context to continue.
    pub context_id: Option<String>,
}

impl RunOptions {
    /// Reads the options of `input` (the defaults when it has none).
    pub fn from_input(input: &RunAgentInput) -> Result<RunOptions, BridgeError> {
        let Some(props) = &input.forwarded_props else {
            return Ok(RunOptions::default());
        };
        match props.get(FORWARDED_PROPS_KEY) {
            None | Some(Value::Null) => Ok(RunOptions::default()),
            Some(value) => {
                let options = RunOptions::deserialize(value).map_err(|e| {
                    BridgeError::InvalidOptions(format!(
                        "forwardedProps.{FORWARDED_PROPS_KEY}: {e}"
                    ))
                })?;
                for (name, id) in [
                    ("taskId", &options.task_id),
                    ("contextId", &options.context_id),
                ] {
                    if id.as_deref().is_some_and(|id| id.trim().is_empty()) {
                        return Err(BridgeError::InvalidOptions(format!(
                            "forwardedProps.{FORWARDED_PROPS_KEY}.{name} is empty"
                        )));
                    }
                }
                Ok(options)
            }
        }
    }
}

/// The bridge's configuration (flags of `switchboard bridge`, keys of the
/// `[bridge]` table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeConfig {
    /// Forward `system` and `developer` messages (off by default: they are
    /// the UI's instructions to its own model, not to a remote agent). When
    /// on they travel as `user` messages tagged with their AG-UI role.
    pub forward_system_messages: bool,
    /// Route messages that carry the Engram extension to the agent's config
    /// lane (off by default; without it they are ordinary messages).
    pub engram: bool,
    /// Forward the UI's own state — the client's `state` but the bridge's
    /// `view` — in `metadata.agui.state` (off by default, ADR 0001: the
    /// state is the UI's, and may hold what the UI keeps of its own ids;
    /// on, for shared state, it reaches the agent as the UI wrote it).
    pub forward_state: bool,
    /// Cancel the task (`CancelTask`) when the client goes away before its
    /// run ended (off by default: the task keeps running and a later run
    /// reconnects to it).
    pub cancel_on_disconnect: bool,
    /// The most bytes of earlier conversation a message into a new context
    /// carries (`metadata.agui.history`, with the `context` and `tools` the
    /// input holds; [`DEFAULT_HISTORY_BYTES`]). The most recent messages
    /// that fit are sent and the agent is told how many were left out
    /// (`metadata.agui.historyOmitted`); keep it below the agent's metadata
    /// limit.
    pub max_history_bytes: usize,
}

/// The default [`BridgeConfig::max_history_bytes`]: half of switchboard's
/// own metadata limit (64 KiB), so the message's other metadata fits too.
pub const DEFAULT_HISTORY_BYTES: usize = 32 * 1024;

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            forward_system_messages: false,
            engram: false,
            forward_state: false,
            cancel_on_disconnect: false,
            max_history_bytes: DEFAULT_HISTORY_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn input(props: Value) -> RunAgentInput {
        RunAgentInput {
            thread_id: "t".into(),
            run_id: "r".into(),
            forwarded_props: Some(props),
            ..RunAgentInput::default()
        }
    }

    #[test]
    fn defaults_to_a_streamed_run_without_a_task() {
        for props in [json!({}), json!({"other": 1}), json!({"a2a": null})] {
            assert_eq!(
                RunOptions::from_input(&input(props)),
                Ok(RunOptions::default())
            );
        }
        assert_eq!(
            RunOptions::from_input(&RunAgentInput::default()),
            Ok(RunOptions::default())
        );
    }

    #[test]
    fn reads_mode_task_and_context() {
        let options = RunOptions::from_input(&input(
            json!({"a2a": {"mode": "send", "taskId": "t1", "contextId": "c1"}}),
        ));
        assert_eq!(
            options,
            Ok(RunOptions {
                mode: Mode::Send,
                task_id: Some("t1".into()),
                context_id: Some("c1".into()),
            })
        );
    }

    #[test]
    fn rejects_unknown_modes_keys_and_empty_ids() {
        assert_eq!(
            RunOptions::from_input(&input(json!({"a2a": {"mode": "cancel", "taskId": "t1"}})))
                .map(|o| o.mode),
            Ok(Mode::Cancel)
        );
        for props in [
            json!({"a2a": {"mode": "poll"}}),
            json!({"a2a": {"mode": 3}}),
            json!({"a2a": {"taskid": "t1"}}),
            json!({"a2a": "send"}),
            json!({"a2a": {"taskId": " "}}),
        ] {
            let err = RunOptions::from_input(&input(props.clone())).unwrap_err();
            assert_eq!(err.code(), "bridge:invalid_options", "{props}");
            assert!(err.to_string().contains("forwardedProps.a2a"), "{err}");
        }
    }
}
