//! `switchboard client …`: talk to any A2A agent from a terminal or a script.
//!
//! Each subcommand is one A2A operation, run through
//! [`switchboard_client::A2AClient`]:
//!
//! | command | operation | prints |
//! |---|---|---|
//! | `card` | fetch the agent card | name, interfaces, capabilities, skills |
//! | `send TEXT…` | `SendMessage` | the finished (or interrupted) task, or the reply |
//! | `stream TEXT…` | `SendStreamingMessage` | each event as it arrives |
//! | `stream --agui TEXT…` | `SendStreamingMessage` as AG-UI | one line per AG-UI event (`agui.rs`) |
//! | `get ID` | `GetTask` | the task with its history |
//! | `get ID --watch` | `GetTask` every `--interval` (0.5 s) | the task, then what changes, until it ends or needs input |
//! | `list` | `ListTasks` | a table of tasks |
//! | `cancel ID` | `CancelTask` | the task |
//! | `subscribe ID` | `SubscribeToTask` | each event as it arrives |
//! | `push-config create\|get\|list\|delete` | the push-notification-config operations | the config(s), secrets masked (`push_config`) |
//!
//! Every subcommand takes `--url` (an agent base URL or card URL; default
//! from `SWITCHBOARD_URL`), `--header 'Name: value'` (repeatable),
//! `--timeout SECS` and `--json`.
//!
//! Default output is for people: `task 0194… [completed]`, status messages
//! as `  · working: thinking…`, artifact text printed as it streams. With
//! `--json` every output item is one line `{"type": …, "data": …}` where
//! `type` is `task`, `message`, `statusUpdate`, `artifactUpdate`, `card`,
//! `list`, `pushConfig`, `pushConfigList`, `deleted` or `error`, and `data`
//! is the A2A 1.0 JSON of the item (stream items also carry `"seq"` when the
//! server numbers its events). The other commands' `--json` (`push …`,
//! `auth …`, `config check`) prints one JSON document, described in each
//! flag's help.
//!
//! ## Task progress, the live status line, hints and refusals
//!
//! `stream`, `subscribe` and `get --watch` activate the task-progress
//! extension ([`TASK_PROGRESS_URI`], sent in `A2A-Extensions`) unless
//! `--no-progress` is given. On a terminal (stdout is a TTY, `TERM` is not
//! `dumb`, no `--json`) the trackers are live bars below the output and the
//! task's `working` statuses one line redrawn in place; elsewhere both are
//! plain lines, each printed once (`switchboard_printer::progress`,
//! `switchboard_printer::status_line`). With `--json` the events are
//! printed as always: the progress is inside them, in `metadata`.
//!
//! When a task stops at input-required or auth-required, stderr gets the
//! exact `send` command that goes on (`switchboard_printer::hints`). A
//! refusal the agent card explains (no interface for
//! `--binding`/`--protocol-version`, an operation or content type not
//! supported, a required extension) is reported with what the card offers
//! (`switchboard_printer::offers`; in `--json` the error line's
//! `offered`).
//!
//! Exit codes: `0` success; `1` the task ended FAILED or REJECTED (or
//! CANCELED, for `send` and `stream`); `2` a usage, connection or protocol
//! error, described once on stderr.
//!
//! ## Modules
//!
//! `args` is the clap command line; `run` makes the calls and decides the
//! exit code; `push_config` as above. What is printed
//! (human or JSON Lines, progress as bars or lines, hinted parts) is
//! `switchboard_printer`'s.
//!
//! [`TASK_PROGRESS_URI`]: switchboard_protocol::progress::TASK_PROGRESS_URI

mod args;
mod push_config;
mod run;
#[cfg(test)]
mod tests;

use std::io::Write;
use std::process::ExitCode;

use indicatif::ProgressDrawTarget;

pub use args::{
    AgentArgs, Binding, ClientCommand, ConnectArgs, FrontAgentArgs, MessageArgs, OAuthArgs,
};
pub use push_config::PushConfigCommand;

use run::{EXIT_ERROR, execute};
use switchboard_printer::bars::Bars;
use switchboard_printer::{Output, ProgressView, draws_bars, hints, offers};

/// How often the live display (status line and bars) may be redrawn.
const REDRAWS_PER_SECOND: u8 = 10;

/// Runs one client subcommand, printing to stdout and stderr, and returns
/// the process exit code.
///
/// When stdout is a terminal (and `TERM` is not `dumb`), task progress is
/// drawn as live progress bars; otherwise it is printed as plain lines.
pub async fn run(cmd: ClientCommand) -> ExitCode {
    use std::io::IsTerminal;
    let term = std::env::var_os("TERM");
    // At most 10 redraws a second: a chatty agent must not flood the
    // terminal (or a slow SSH link) with frames nobody can read.
    let bars = draws_bars(std::io::stdout().is_terminal(), term.as_deref())
        .then(|| ProgressDrawTarget::stdout_with_hz(REDRAWS_PER_SECOND));
    ExitCode::from(run_inner(cmd, std::io::stdout(), std::io::stderr(), bars).await)
}

/// [`run`] with explicit output streams (for tests and embedding); returns
/// the exit code as a number (0, 1 or 2). Progress is printed as plain
/// lines: the streams are not a terminal.
pub async fn run_with<O, E>(cmd: ClientCommand, stdout: O, stderr: E) -> u8
where
    O: Write + Send,
    E: Write + Send,
{
    run_inner(cmd, stdout, stderr, None).await
}

/// Runs `cmd`; progress (if the command follows any) is drawn as bars on
/// `bars` when given, else printed as plain lines.
async fn run_inner<O, E>(
    cmd: ClientCommand,
    stdout: O,
    stderr: E,
    bars: Option<ProgressDrawTarget>,
) -> u8
where
    O: Write + Send,
    E: Write + Send,
{
    let conn = cmd.conn().clone();
    let capabilities = cmd.relies_on_capabilities();
    let json = conn.json;
    // On a terminal, the commands that follow a task get the live display
    // (status line, bars); elsewhere progress, when followed, is plain lines.
    let progress = match bars {
        _ if json => None,
        Some(target) if cmd.wants_progress() || cmd.shows_live_status() => {
            Some(ProgressView::bars(Bars::new(target)))
        }
        _ if cmd.wants_progress() => Some(ProgressView::plain()),
        _ => None,
    };
    let mut out = Output::new(json, stdout, stderr, progress);
    match execute(cmd, &mut out).await {
        Ok(code) => {
            out.end_progress();
            let settings = conn.agent.settings();
            let in_env = |var: &str| std::env::var_os(var).is_some();
            let hint = out
                .seen()
                .and_then(|seen| hints::next_step(&conn.url, &settings, seen, in_env));
            if let Some(hint) = hint {
                out.hint(&hint);
            }
            code
        }
        Err(err) => {
            out.close_artifact();
            out.end_progress();
            let settings = conn.agent.settings();
            out.error(&offers::explain(&conn.url, &settings, capabilities, err).await);
            EXIT_ERROR
        }
    }
}
