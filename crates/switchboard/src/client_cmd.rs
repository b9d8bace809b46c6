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
//! | `get ID` | `GetTask` | the task with its history |
//! | `get ID --watch` | `GetTask` every `--interval` (0.5 s) | the task, then what changes, until it ends or needs input |
//! | `list` | `ListTasks` | a table of tasks |
//! | `cancel ID` | `CancelTask` | the task |
//! | `subscribe ID` | `SubscribeToTask` | each event as it arrives |
//!
//! Every subcommand takes `--url` (an agent base URL or card URL; default
//! from `SWITCHBOARD_URL`), `--header 'Name: value'` (repeatable),
//! `--timeout SECS` and `--json`.
//!
//! Default output is for people: `task 0194… [completed]`, status messages
//! as `  · working: thinking…`, artifact text printed as it streams. With
//! `--json` every output item is one line `{"type": …, "data": …}` where
//! `type` is `task`, `message`, `statusUpdate`, `artifactUpdate`, `card`,
//! `list` or `error`, and `data` is the A2A 1.0 JSON of the item (stream
//! items also carry `"seq"` when the server numbers its events).
//!
//! ## Task progress
//!
//! `stream`, `subscribe` and `get --watch` activate the task-progress
//! extension ([`TASK_PROGRESS_URI`], sent in `A2A-Extensions`) unless
//! `--no-progress` is given, and fold every progress payload with a
//! [`ProgressReducer`]:
//!
//! - On a terminal (stdout is a TTY, `TERM` is not `dumb`, no `--json`) the
//!   trackers are live progress bars below the output: one row per tracker
//!   (a bar with `progress/total`, or a spinner with the count when the total
//!   is unknown), then one `total` row. Finished trackers stay, marked `✓`
//!   (completed) or `✗` (failed); status lines and artifact text keep
//!   printing above the bars.
//! - Otherwise (a pipe, a file, `TERM=dumb`) progress is printed as plain
//!   lines, each at most once per change:
//!   `progress download 12/40 (30%) · index 3/25 (12%) · scan 7 — total 15/65 (23%)`
//!   (the total adds up the trackers whose total is known, unless the agent
//!   sent an aggregate with a total), and once per finished tracker
//!   `progress ✓ download 40/40 completed` (`✗ … failed`, `· … ended` for a
//!   tracker that stopped reporting without a status).
//! - A status update that only carries progress (its text is the agent's
//!   rendering of the same numbers) is shown as progress instead of a
//!   `· working: …` line.
//! - With `--json` the events are printed as always: the progress is inside
//!   them, in `metadata`.
//!
//! Exit codes: `0` success; `1` the task ended FAILED or REJECTED (or
//! CANCELED, for `send` and `stream`); `2` a usage, connection or protocol
//! error, described once on stderr.

use std::collections::HashSet;
use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, ClientBuilder, ClientError, EventStream};
use switchboard_protocol::progress::{
    ProgressReducer, ProgressTracker, TASK_PROGRESS_URI, TrackerStatus, format_amount,
};
use switchboard_protocol::{
    AgentCard, Artifact, GetTaskRequest, ListTasksRequest, ListTasksResponse, Message, Part,
    PartContent, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskState, TaskStatus,
};

/// Any serializable value as JSON (`null` if it cannot be serialized, which
/// plain data never fails to do).
macro_rules! to_json {
    ($v:expr) => {
        serde_json::to_value($v).unwrap_or(Value::Null)
    };
}

/// Exit code: the task ended in a state the caller should notice.
const EXIT_TASK_FAILED: u8 = 1;
/// Exit code: usage, connection or protocol error.
const EXIT_ERROR: u8 = 2;
/// Default pause between two GetTask calls of `get --watch`.
const DEFAULT_WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// How to reach the agent and how to print; shared by every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectArgs {
    /// Agent base URL (its card is read from /.well-known/agent-card.json)
    /// or the agent card's own URL.
    #[arg(long, env = "SWITCHBOARD_URL", value_name = "URL")]
    pub url: String,
    /// Print JSON Lines: one {"type": ..., "data": ...} object per line.
    #[arg(long)]
    pub json: bool,
    /// Extra HTTP header for every request, e.g. "Authorization: Bearer TOKEN"
    /// (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Time limit in seconds for each request (for streams: until the
    /// stream starts).
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Use this protocol binding of the card instead of the card's first
    /// usable interface.
    #[arg(long, value_enum, value_name = "BINDING")]
    pub binding: Option<Binding>,
    /// Speak this A2A version (from the card's interfaces for it) instead
    /// of the default choice (1.0 when offered, else 0.3).
    #[arg(long, value_name = "VERSION", value_parser = ["1.0", "0.3"])]
    pub protocol_version: Option<String>,
}

/// A protocol binding `--binding` can force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Binding {
    /// JSON-RPC 2.0 over HTTP (`JSONRPC`).
    Jsonrpc,
    /// HTTP+JSON, the REST binding (`HTTP+JSON`).
    Rest,
    /// gRPC (`GRPC`).
    Grpc,
}

impl Binding {
    /// The `protocolBinding` name in the card.
    pub fn card_name(self) -> &'static str {
        match self {
            Binding::Jsonrpc => switchboard_protocol::card::BINDING_JSONRPC,
            Binding::Rest => switchboard_protocol::card::BINDING_HTTP_JSON,
            Binding::Grpc => switchboard_protocol::card::BINDING_GRPC,
        }
    }
}

/// The message to send (for `send` and `stream`).
#[derive(Debug, Clone, clap::Args)]
pub struct MessageArgs {
    /// The message text; several words are joined with spaces.
    #[arg(required = true, value_name = "TEXT")]
    pub text: Vec<String>,
    /// Continue this conversation (context id).
    #[arg(long, value_name = "ID")]
    pub context_id: Option<String>,
    /// Continue this task (e.g. answer an input-required task).
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// A task this message refers to (repeatable).
    #[arg(long = "reference-task", value_name = "TASK_ID")]
    pub reference_tasks: Vec<String>,
    /// Return at most this many history messages with the task (0: none).
    #[arg(long, value_name = "N")]
    pub history_length: Option<i32>,
}

/// `switchboard client` subcommands: one A2A operation each.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ClientCommand {
    /// Fetch and show the agent card.
    Card {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
    },
    /// Send a message and wait until the task finishes or needs input.
    Send {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The message.
        #[command(flatten)]
        message: MessageArgs,
        /// Return as soon as the task exists instead of waiting.
        #[arg(long)]
        return_immediately: bool,
    },
    /// Send a message and print the task's events as they happen.
    Stream {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The message.
        #[command(flatten)]
        message: MessageArgs,
        /// Do not request the task-progress extension (no progress bars or
        /// progress lines).
        #[arg(long)]
        no_progress: bool,
    },
    /// Show a task (or, with --watch, follow it by polling).
    Get {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
        /// Return at most this many history messages (0: none).
        #[arg(long, value_name = "N")]
        history_length: Option<i32>,
        /// Poll the task until it finishes or needs input, printing what
        /// changes and its progress.
        #[arg(long)]
        watch: bool,
        /// With --watch: seconds between two polls (default 0.5).
        #[arg(long, value_name = "SECS", requires = "watch")]
        interval: Option<f64>,
        /// With --watch: do not request the task-progress extension.
        #[arg(long, requires = "watch")]
        no_progress: bool,
    },
    /// List tasks, most recently updated first.
    List {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// Only tasks of this context.
        #[arg(long, value_name = "ID")]
        context_id: Option<String>,
        /// Only tasks in this state (e.g. working, completed, input-required).
        #[arg(long, value_parser = parse_state, value_name = "STATE")]
        state: Option<TaskState>,
        /// Tasks per page (1-100; the agent's default is 50).
        #[arg(long, value_name = "N")]
        page_size: Option<i32>,
        /// Continue from this page token (printed after a full page).
        #[arg(long, value_name = "TOKEN")]
        page_token: Option<String>,
        /// Include each task's artifacts.
        #[arg(long)]
        include_artifacts: bool,
    },
    /// Cancel a task.
    Cancel {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
    },
    /// Follow a running task's events until it ends.
    Subscribe {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
        /// Do not request the task-progress extension (no progress bars or
        /// progress lines).
        #[arg(long)]
        no_progress: bool,
    },
}

impl ClientCommand {
    /// The connection and output options.
    fn conn(&self) -> &ConnectArgs {
        match self {
            ClientCommand::Card { conn }
            | ClientCommand::Send { conn, .. }
            | ClientCommand::Stream { conn, .. }
            | ClientCommand::Get { conn, .. }
            | ClientCommand::List { conn, .. }
            | ClientCommand::Cancel { conn, .. }
            | ClientCommand::Subscribe { conn, .. } => conn,
        }
    }

    /// Whether this command activates the task-progress extension.
    fn wants_progress(&self) -> bool {
        match self {
            ClientCommand::Stream { no_progress, .. }
            | ClientCommand::Subscribe { no_progress, .. } => !no_progress,
            ClientCommand::Get {
                watch, no_progress, ..
            } => *watch && !no_progress,
            _ => false,
        }
    }
}

fn parse_state(s: &str) -> Result<TaskState, String> {
    TaskState::parse(s).ok_or_else(|| {
        let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.label()).collect();
        format!("unknown state {s:?}; one of {}", names.join(", "))
    })
}

/// Runs one client subcommand, printing to stdout and stderr, and returns
/// the process exit code.
///
/// When stdout is a terminal (and `TERM` is not `dumb`), task progress is
/// drawn as live progress bars; otherwise it is printed as plain lines.
pub async fn run(cmd: ClientCommand) -> ExitCode {
    let live = live_terminal();
    ExitCode::from(run_inner(cmd, std::io::stdout(), std::io::stderr(), live).await)
}

/// [`run`] with explicit output streams (for tests and embedding); returns
/// the exit code as a number (0, 1 or 2). Progress is printed as plain
/// lines: the streams are not a terminal.
pub async fn run_with<O, E>(cmd: ClientCommand, stdout: O, stderr: E) -> u8
where
    O: Write + Send,
    E: Write + Send,
{
    run_inner(cmd, stdout, stderr, false).await
}

async fn run_inner<O, E>(cmd: ClientCommand, stdout: O, stderr: E, live: bool) -> u8
where
    O: Write + Send,
    E: Write + Send,
{
    let json = cmd.conn().json;
    let progress = (cmd.wants_progress() && !json).then(|| ProgressView::new(live));
    let mut out = Output {
        json,
        open_artifact: None,
        stdout,
        stderr,
        progress,
    };
    match execute(cmd, &mut out).await {
        Ok(code) => code,
        Err(err) => {
            out.close_artifact();
            out.end_progress();
            out.error(&err);
            EXIT_ERROR
        }
    }
}

/// `true` when stdout is a terminal that can draw progress bars.
#[cfg(not(test))]
fn live_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Test builds (including `switchboard-client`'s `cli_compiles`, which
/// includes this file without the `indicatif` dependency) never draw bars.
#[cfg(test)]
fn live_terminal() -> bool {
    false
}

/// A failure that ends the command with exit code 2.
#[derive(Debug)]
enum Failure {
    /// Bad command-line input.
    Usage(String),
    /// The client (connection, HTTP, protocol, decoding) failed.
    Client(ClientError),
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Failure::Client(e)
    }
}

async fn execute<O: Write, E: Write>(
    cmd: ClientCommand,
    out: &mut Output<O, E>,
) -> Result<u8, Failure> {
    match cmd {
        ClientCommand::Card { conn } => {
            let card = builder(&conn)?.fetch_card(&conn.url).await?;
            out.card(&card);
            Ok(0)
        }
        ClientCommand::Send {
            conn,
            message,
            return_immediately,
        } => {
            let client = connect(&conn, false).await?;
            let mut req = message_request(message);
            if return_immediately {
                req.configuration
                    .get_or_insert_with(SendMessageConfiguration::default)
                    .return_immediately = true;
            }
            match client.send_message(req).await? {
                SendMessageResponse::Task(task) => {
                    out.task(&task, false);
                    Ok(exit_for(Some(task.status.state), true))
                }
                SendMessageResponse::Message(msg) => {
                    out.message(&msg);
                    Ok(0)
                }
                other => {
                    out.unknown(&other);
                    Ok(0)
                }
            }
        }
        ClientCommand::Stream {
            conn,
            message,
            no_progress,
        } => {
            let client = connect(&conn, !no_progress).await?;
            let stream = client
                .send_streaming_message(message_request(message))
                .await?;
            let last = follow(stream, out).await?;
            Ok(exit_for(last, true))
        }
        ClientCommand::Get {
            conn,
            id,
            history_length,
            watch: true,
            interval,
            no_progress,
        } => {
            let pause = match interval {
                None => DEFAULT_WATCH_INTERVAL,
                Some(secs) => Duration::try_from_secs_f64(secs)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| {
                        Failure::Usage(format!("--interval {secs}: must be a positive number"))
                    })?,
            };
            let client = connect(&conn, !no_progress).await?;
            let request = GetTaskRequest {
                tenant: None,
                id,
                history_length,
            };
            watch(&client, request, pause, out).await
        }
        ClientCommand::Get {
            conn,
            id,
            history_length,
            ..
        } => {
            let client = connect(&conn, false).await?;
            let task = client
                .get_task(GetTaskRequest {
                    tenant: None,
                    id,
                    history_length,
                })
                .await?;
            out.task(&task, true);
            Ok(exit_for(Some(task.status.state), false))
        }
        ClientCommand::List {
            conn,
            context_id,
            state,
            page_size,
            page_token,
            include_artifacts,
        } => {
            let client = connect(&conn, false).await?;
            let page = client
                .list_tasks(ListTasksRequest {
                    context_id,
                    status: state,
                    page_size,
                    page_token,
                    include_artifacts: include_artifacts.then_some(true),
                    ..Default::default()
                })
                .await?;
            out.list(&page);
            Ok(0)
        }
        ClientCommand::Cancel { conn, id } => {
            let client = connect(&conn, false).await?;
            let task = client.cancel_task(id.as_str()).await?;
            out.task(&task, false);
            Ok(0)
        }
        ClientCommand::Subscribe {
            conn,
            id,
            no_progress,
        } => {
            let client = connect(&conn, !no_progress).await?;
            let stream = client.subscribe_to_task(id.as_str()).await?;
            let last = follow(stream, out).await?;
            Ok(exit_for(last, false))
        }
    }
}

/// 1 for FAILED and REJECTED (and CANCELED when `canceled_is_failure`).
fn exit_for(state: Option<TaskState>, canceled_is_failure: bool) -> u8 {
    match state {
        Some(TaskState::Failed | TaskState::Rejected) => EXIT_TASK_FAILED,
        Some(TaskState::Canceled) if canceled_is_failure => EXIT_TASK_FAILED,
        _ => 0,
    }
}

fn builder(conn: &ConnectArgs) -> Result<ClientBuilder, Failure> {
    let mut b = A2AClient::builder();
    for h in &conn.headers {
        let Some((name, value)) = h.split_once(':') else {
            return Err(Failure::Usage(format!(
                "--header {h:?} is not in the form \"Name: value\""
            )));
        };
        b = b.header(name.trim(), value.trim());
    }
    if let Some(secs) = conn.timeout {
        let t = Duration::try_from_secs_f64(secs)
            .map_err(|e| Failure::Usage(format!("--timeout {secs}: {e}")))?;
        b = b.timeout(t);
    }
    if let Some(binding) = conn.binding {
        b = b.preferred_bindings([binding.card_name()]);
    }
    if let Some(v) = &conn.protocol_version {
        b = b.preferred_versions([v.clone()]);
    }
    Ok(b)
}

/// Connects; `progress` activates the task-progress extension.
async fn connect(conn: &ConnectArgs, progress: bool) -> Result<A2AClient, Failure> {
    let mut b = builder(conn)?;
    if progress {
        b = b.extension(TASK_PROGRESS_URI);
    }
    Ok(b.connect(&conn.url).await?)
}

fn message_request(args: MessageArgs) -> SendMessageRequest {
    let mut msg = Message::user_text(args.text.join(" "));
    msg.context_id = args.context_id;
    msg.task_id = args.task_id;
    msg.reference_task_ids = args.reference_tasks;
    let mut req = SendMessageRequest::new(msg);
    if args.history_length.is_some() {
        req.configuration = Some(SendMessageConfiguration {
            history_length: args.history_length,
            ..Default::default()
        });
    }
    req
}

/// Prints a stream to its end; returns the last task state seen.
async fn follow<O: Write, E: Write>(
    mut stream: EventStream,
    out: &mut Output<O, E>,
) -> Result<Option<TaskState>, Failure> {
    let mut last_state = None;
    let mut task_id = None;
    while let Some(item) = stream.next().await {
        let item = item?;
        if let Some(state) = item.event.state() {
            last_state = Some(state);
        }
        if task_id.is_none() {
            task_id = item
                .event
                .task_id()
                .filter(|t| !t.is_empty())
                .map(str::to_string);
        }
        out.event(&item.event, item.seq);
    }
    out.close_artifact();
    out.end_progress();
    if let (Some(id), Some(state)) = (&task_id, last_state) {
        out.summary(id, state);
    }
    Ok(last_state)
}

/// `get --watch`: polls the task until it is terminal or interrupted and
/// prints what changed; returns the exit code (as `get` does).
async fn watch<O: Write, E: Write>(
    client: &A2AClient,
    request: GetTaskRequest,
    pause: Duration,
    out: &mut Output<O, E>,
) -> Result<u8, Failure> {
    let mut previous: Option<Task> = None;
    loop {
        let task = client.get_task(request.clone()).await?;
        out.watched(previous.as_ref(), &task);
        let state = task.status.state;
        if state.is_terminal() || state.is_interrupted() {
            out.end_progress();
            out.summary(&task.id, state);
            return Ok(exit_for(Some(state), false));
        }
        previous = Some(task);
        tokio::time::sleep(pause).await;
    }
}

/// Writes results, human-readable or as JSON Lines. Write errors (a closed
/// pipe, as in `| head`) are ignored: there is nobody left to tell.
struct Output<O, E> {
    json: bool,
    /// The artifact whose text is being printed inline (human mode).
    open_artifact: Option<String>,
    stdout: O,
    stderr: E,
    /// Task progress being shown (human mode, extension activated).
    progress: Option<ProgressView>,
}

impl<O: Write, E: Write> Output<O, E> {
    /// Prints one line.
    fn line(&mut self, s: impl Display) {
        self.write_text(&format!("{s}\n"));
    }

    /// Prints without a newline (for text that streams in).
    fn inline(&mut self, s: impl Display) {
        self.write_text(&s.to_string());
    }

    /// Writes to stdout, above the progress bars when they are drawn. The
    /// bars are redrawn after whole lines only, so while they are up a
    /// line's start is held back until its end arrives.
    fn write_text(&mut self, text: &str) {
        let Output {
            stdout, progress, ..
        } = self;
        let live = progress
            .as_mut()
            .and_then(|p| p.live.as_mut().map(|l| (l, &mut p.held)));
        match live {
            Some((live, held)) => {
                held.push_str(text);
                if let Some(end) = held.rfind('\n') {
                    let lines: String = held.drain(..=end).collect();
                    live.print(&mut || {
                        let _ = stdout.write_all(lines.as_bytes());
                        let _ = stdout.flush();
                    });
                }
            }
            None => {
                let _ = stdout.write_all(text.as_bytes());
                let _ = stdout.flush();
            }
        }
    }

    /// Shows the reducer's current state: updates the bars, or prints the
    /// plain progress lines that changed.
    fn show_progress(&mut self) {
        let Some(p) = self.progress.as_mut() else {
            return;
        };
        if p.reducer.is_empty() {
            return;
        }
        if p.live_mode {
            if p.live.is_none() {
                p.live = new_live();
                // Bars are drawn below whole lines: end a half-printed one.
                if p.live.is_some() && self.open_artifact.is_some() {
                    let _ = self.stdout.write_all(b"\n");
                    let _ = self.stdout.flush();
                }
            }
            if let Some(live) = p.live.as_mut() {
                live.update(&p.reducer);
                return;
            }
        }
        let lines = p.plain_lines();
        for l in lines {
            self.line(l);
        }
    }

    /// Takes the bars down for good (they stay on screen as drawn last);
    /// later output goes below them.
    fn end_progress(&mut self) {
        let Some(p) = self.progress.as_mut() else {
            return;
        };
        if let Some(mut live) = p.live.take() {
            live.finish(&p.reducer);
            if !p.held.is_empty() {
                let _ = self.stdout.write_all(p.held.as_bytes());
                let _ = writeln!(self.stdout);
                let _ = self.stdout.flush();
                p.held.clear();
            }
        }
        // Followed no further: nothing is live any more.
        p.live_mode = false;
    }

    /// Folds a stream item into the progress state; `true` when it carried a
    /// progress payload.
    fn fold_progress(&mut self, ev: &StreamResponse) -> bool {
        self.progress.as_mut().is_some_and(|p| p.reducer.apply(ev))
    }

    fn json_line(&mut self, kind: &str, data: Value, seq: Option<u64>) {
        let mut obj = json!({ "type": kind, "data": data });
        if let (Some(seq), Some(map)) = (seq, obj.as_object_mut()) {
            map.insert("seq".into(), json!(seq));
        }
        self.line(obj);
    }

    /// Emits a 1.0 wrapper object (`{"task": …}`) as `{"type":"task","data":…}`.
    fn wrapped(&mut self, value: Value, seq: Option<u64>) {
        match value {
            Value::Object(map) if map.len() == 1 => {
                for (kind, data) in map {
                    self.json_line(&kind, data, seq);
                }
            }
            other => self.json_line("unknown", other, seq),
        }
    }

    fn unknown(&mut self, resp: &SendMessageResponse) {
        self.wrapped(to_json!(resp), None);
    }

    fn card(&mut self, card: &AgentCard) {
        if self.json {
            return self.json_line("card", to_json!(card), None);
        }
        self.line(format!("{} {}", card.name, card.version));
        if !card.description.is_empty() {
            self.line(indent(&card.description, "  "));
        }
        self.line("  interfaces:");
        if card.supported_interfaces.is_empty() {
            self.line("    (none)");
        }
        for i in &card.supported_interfaces {
            let tenant = match i.tenant.as_deref() {
                Some(t) if !t.is_empty() => format!("  (tenant {t})"),
                _ => String::new(),
            };
            self.line(format!(
                "    {} {}  {}{tenant}",
                i.protocol_binding, i.protocol_version, i.url
            ));
        }
        let caps = &card.capabilities;
        let yes_no = |v: Option<bool>| if v == Some(true) { "yes" } else { "no" };
        self.line(format!(
            "  streaming: {}, push notifications: {}, extended card: {}",
            yes_no(caps.streaming),
            yes_no(caps.push_notifications),
            yes_no(caps.extended_agent_card)
        ));
        for ext in &caps.extensions {
            let required = if ext.required { " (required)" } else { "" };
            self.line(format!("  extension {}{required}", ext.uri));
        }
        if !card.skills.is_empty() {
            self.line("  skills:");
        }
        for s in &card.skills {
            self.line(format!("    {} ({}): {}", s.name, s.id, s.description));
            if !s.examples.is_empty() {
                let examples: Vec<String> = s.examples.iter().map(|e| format!("{e:?}")).collect();
                self.line(format!("      e.g. {}", examples.join(", ")));
            }
        }
    }

    fn task(&mut self, task: &Task, with_history: bool) {
        if self.json {
            return self.json_line("task", to_json!(task), None);
        }
        self.task_header(task, with_history);
        if task.status.message.is_some() {
            self.status(&task.status);
        }
        for a in task.artifacts() {
            self.artifact_line(a);
        }
    }

    /// `task ID [state]  context C`, then the history if asked for.
    fn task_header(&mut self, task: &Task, with_history: bool) {
        self.line(format!(
            "task {} [{}]  context {}",
            task.id,
            task.status.state.label(),
            task.context_id
        ));
        if with_history {
            for m in task.history() {
                self.line(format!(
                    "  {}: {}",
                    role(m.role),
                    indent_rest(&parts_text(&m.parts, "\n"), "    ")
                ));
            }
        }
    }

    /// `  ▸ name: text` for a whole artifact.
    fn artifact_line(&mut self, a: &Artifact) {
        self.line(format!(
            "  ▸ {}: {}",
            artifact_name(a),
            indent_rest(&parts_text(&a.parts, ""), "    ")
        ));
    }

    fn status(&mut self, status: &TaskStatus) {
        let text = status
            .message
            .as_ref()
            .map(|m| parts_text(&m.parts, " "))
            .unwrap_or_default();
        if text.is_empty() {
            self.line(format!("  · {}", status.state.label()));
        } else {
            self.line(format!(
                "  · {}: {}",
                status.state.label(),
                indent_rest(&text, "    ")
            ));
        }
    }

    fn message(&mut self, msg: &Message) {
        if self.json {
            return self.json_line("message", to_json!(msg), None);
        }
        self.line(format!(
            "{}: {}",
            role(msg.role),
            indent_rest(&parts_text(&msg.parts, "\n"), "  ")
        ));
    }

    fn event(&mut self, ev: &StreamResponse, seq: Option<u64>) {
        let carried = self.fold_progress(ev);
        if self.json {
            return self.wrapped(to_json!(ev), seq);
        }
        match ev {
            StreamResponse::Task(t) => {
                self.close_artifact();
                self.line(format!(
                    "task {} [{}]  context {}",
                    t.id,
                    t.status.state.label(),
                    t.context_id
                ));
                if t.status.message.is_some() && !progress_only(carried, t.status.state) {
                    self.status(&t.status);
                }
            }
            StreamResponse::StatusUpdate(u) => {
                self.close_artifact();
                // A terminal state without a message is the summary line's job.
                if (u.status.message.is_some() || !u.status.state.is_terminal())
                    && !progress_only(carried, u.status.state)
                {
                    self.status(&u.status);
                }
            }
            StreamResponse::ArtifactUpdate(u) => {
                let id = &u.artifact.artifact_id;
                let continues = u.append && self.open_artifact.as_deref() == Some(id.as_str());
                if !continues {
                    self.close_artifact();
                    self.inline(format!("  ▸ {}: ", artifact_name(&u.artifact)));
                }
                self.inline(parts_text(&u.artifact.parts, ""));
                self.open_artifact = Some(id.clone());
                if u.last_chunk {
                    self.close_artifact();
                }
            }
            StreamResponse::Message(m) => {
                self.close_artifact();
                self.message(m);
            }
            other => {
                self.close_artifact();
                self.line(format!("(unknown event) {}", to_json!(other)));
            }
        }
        if carried || ev.state().is_some_and(TaskState::is_terminal) {
            self.show_progress();
        }
    }

    /// One poll of `get --watch`: the whole task the first time, then only
    /// what changed (JSON: the task again, when it changed).
    fn watched(&mut self, previous: Option<&Task>, task: &Task) {
        let carried = self
            .progress
            .as_mut()
            .is_some_and(|p| p.reducer.apply_task(task));
        if self.json {
            if previous != Some(task) {
                self.json_line("task", to_json!(task), None);
            }
            return;
        }
        let state = task.status.state;
        let show_status = task.status.message.is_some() && !progress_only(carried, state);
        match previous {
            None => {
                self.task_header(task, true);
                if show_status {
                    self.status(&task.status);
                }
                for a in task.artifacts() {
                    self.artifact_line(a);
                }
            }
            Some(prev) => {
                // A terminal state without a message is the summary line's job.
                if prev.status != task.status
                    && (show_status || (task.status.message.is_none() && !state.is_terminal()))
                {
                    self.status(&task.status);
                }
                for a in task.artifacts() {
                    if !prev.artifacts().contains(a) {
                        self.artifact_line(a);
                    }
                }
            }
        }
        self.show_progress();
    }

    /// The last line of a followed stream: `task ID [state]`.
    fn summary(&mut self, id: &str, state: TaskState) {
        if !self.json {
            self.line(format!("task {id} [{}]", state.label()));
        }
    }

    /// Ends an artifact line that was being printed inline.
    fn close_artifact(&mut self) {
        if self.open_artifact.take().is_some() {
            self.line("");
        }
    }

    fn list(&mut self, page: &ListTasksResponse) {
        if self.json {
            return self.json_line("list", to_json!(page), None);
        }
        let rows: Vec<[String; 4]> = page
            .tasks
            .iter()
            .map(|t| {
                [
                    t.id.clone(),
                    t.status.state.label().to_string(),
                    t.context_id.clone(),
                    t.status
                        .timestamp
                        .map(|ts| ts.format("%Y-%m-%d %H:%M:%S").to_string())
                        .unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        let header = ["ID", "STATE", "CONTEXT", "UPDATED (UTC)"].map(String::from);
        let mut widths = header.each_ref().map(|h| h.chars().count());
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for r in std::iter::once(&header).chain(&rows) {
            let cells: Vec<String> = r
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            self.line(cells.join("  ").trim_end());
        }
        self.line(format!(
            "{} of {} task(s)",
            page.tasks.len(),
            page.total_size
        ));
        if !page.next_page_token.is_empty() {
            self.line(format!("next page: --page-token {}", page.next_page_token));
        }
    }

    /// Reports a failure: once on stderr, and as a JSON line in `--json` mode.
    fn error(&mut self, failure: &Failure) {
        let (message, data) = match failure {
            Failure::Usage(msg) => (msg.clone(), json!({ "kind": "usage", "message": msg })),
            Failure::Client(e) => {
                let mut data = json!({ "kind": error_kind(e), "message": e.to_string() });
                if let (Some(code), Some(map)) = (e.code(), data.as_object_mut()) {
                    map.insert("code".into(), json!(code));
                }
                (error_chain(e), data)
            }
        };
        if self.json {
            self.json_line("error", data, None);
        }
        let _ = writeln!(self.stderr, "error: {message}");
        let _ = self.stderr.flush();
    }
}

/// `true` for an update whose status only restates its progress payload: a
/// working update that carried trackers. Such updates are shown as progress,
/// not as a status line. Terminal and interrupted updates always print.
fn progress_only(carried: bool, state: TaskState) -> bool {
    carried && !state.is_terminal() && !state.is_interrupted()
}

/// The progress of the followed task and how it is being shown.
#[derive(Debug)]
struct ProgressView {
    reducer: ProgressReducer,
    /// Draw bars (stdout is a terminal) rather than plain lines.
    live_mode: bool,
    /// The bars, once the first tracker arrived (live mode).
    live: Option<Live>,
    /// Output held back while the bars are drawn: the start of a line.
    held: String,
    /// Finished trackers already reported with a final line (plain mode).
    reported: HashSet<String>,
    /// The last `progress …` line printed (plain mode).
    last_line: Option<String>,
}

impl ProgressView {
    fn new(live_mode: bool) -> Self {
        ProgressView {
            reducer: ProgressReducer::new(),
            live_mode,
            live: None,
            held: String::new(),
            reported: HashSet::new(),
            last_line: None,
        }
    }

    /// The plain lines to print now: one final line per tracker that
    /// finished since the last call, then the running line if it changed.
    fn plain_lines(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        // A tracker that runs again (same id) may finish again.
        let active: Vec<&str> = self
            .reducer
            .active()
            .iter()
            .map(|t| t.id.as_str())
            .collect();
        self.reported.retain(|id| !active.contains(&id.as_str()));
        for t in self.reducer.finished() {
            if self.reported.insert(t.id.clone()) {
                lines.push(finished_line(t));
            }
        }
        if let Some(line) = running_line(&self.reducer)
            && self.last_line.as_ref() != Some(&line)
        {
            lines.push(line.clone());
            self.last_line = Some(line);
        }
        lines
    }
}

/// How a tracker ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Running,
    Completed,
    Failed,
    /// Stopped reporting (left the snapshots, or the task ended) without a
    /// terminal status.
    Ended,
}

impl Mark {
    fn of(t: &ProgressTracker, finished: bool) -> Mark {
        match t.status {
            Some(TrackerStatus::Completed) => Mark::Completed,
            Some(TrackerStatus::Failed) => Mark::Failed,
            _ if finished => Mark::Ended,
            _ => Mark::Running,
        }
    }

    fn glyph(self) -> &'static str {
        match self {
            Mark::Running => " ",
            Mark::Completed => "✓",
            Mark::Failed => "✗",
            Mark::Ended => "·",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Mark::Running => "running",
            Mark::Completed => "completed",
            Mark::Failed => "failed",
            Mark::Ended => "ended",
        }
    }
}

/// `12/40 (30%)`, `7` (total unknown), `?/40`, or `` (nothing known).
fn amount(progress: Option<f64>, total: Option<f64>) -> String {
    match (progress, total) {
        (Some(p), Some(t)) => {
            let mut s = format!("{}/{}", format_amount(p), format_amount(t));
            if let Some(f) = fraction(p, t) {
                s.push_str(&format!(" ({}%)", percent(f)));
            }
            s
        }
        (Some(p), None) => format_amount(p),
        (None, Some(t)) => format!("?/{}", format_amount(t)),
        (None, None) => String::new(),
    }
}

/// `p / t` in `0..=1` when it means something.
fn fraction(p: f64, t: f64) -> Option<f64> {
    (t > 0.0 && p.is_finite() && t.is_finite()).then(|| (p / t).clamp(0.0, 1.0))
}

/// A fraction as a whole percentage, rounded down (100 only when done).
fn percent(f: f64) -> u64 {
    (f * 100.0).floor() as u64
}

/// `id amount`, e.g. `download 12/40 (30%)`.
fn tracker_text(t: &ProgressTracker) -> String {
    let a = amount(t.progress, t.total);
    if a.is_empty() {
        t.id.clone()
    } else {
        format!("{} {a}", t.id)
    }
}

/// The overall figure: the agent's aggregate when it has a total, else the
/// sum over every tracker seen (running and finished) whose total is known.
/// `None` when there is nothing to add up.
fn overall(reducer: &ProgressReducer) -> Option<(f64, Option<f64>)> {
    if let Some(a) = reducer.aggregate()
        && let (Some(p), Some(t)) = (a.progress, a.total)
    {
        return Some((p, Some(t)));
    }
    let known: Vec<&ProgressTracker> = reducer
        .finished()
        .iter()
        .chain(reducer.active())
        .filter(|t| t.total.is_some())
        .collect();
    if known.is_empty() {
        return reducer
            .aggregate()
            .and_then(|a| a.progress)
            .map(|p| (p, None));
    }
    let progress = known.iter().filter_map(|t| t.progress).sum();
    let total = known.iter().filter_map(|t| t.total).sum();
    Some((progress, Some(total)))
}

/// The plain running line, when a tracker is active:
/// `progress download 12/40 (30%) · index 3/25 (12%) · scan 7 — total 15/65 (23%)`.
fn running_line(reducer: &ProgressReducer) -> Option<String> {
    if reducer.active().is_empty() {
        return None;
    }
    let trackers: Vec<String> = reducer.active().iter().map(tracker_text).collect();
    let mut line = format!("progress {}", trackers.join(" · "));
    if let Some((p, t)) = overall(reducer) {
        line.push_str(&format!(" — total {}", amount(Some(p), t)));
    }
    Some(line)
}

/// The plain final line of a tracker: `progress ✓ download 40/40 completed`.
fn finished_line(t: &ProgressTracker) -> String {
    let mark = Mark::of(t, true);
    let a = amount(t.progress, t.total);
    let a = a.split(" (").next().unwrap_or_default();
    let a = if a.is_empty() {
        String::new()
    } else {
        format!(" {a}")
    };
    format!("progress {} {}{a} {}", mark.glyph(), t.id, mark.word())
}

/// What one row of the live display shows.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    /// The tracker id, or `total`.
    label: String,
    /// `Some(fraction)` draws a bar, `None` a spinner.
    fraction: Option<f64>,
    mark: Mark,
    /// The amount and the tracker's message, e.g. `12/40 30%  download: 12 files`.
    text: String,
}

impl Row {
    fn tracker(t: &ProgressTracker, finished: bool) -> Row {
        let mark = Mark::of(t, finished);
        let fraction = t
            .total
            .map(|total| fraction(t.progress.unwrap_or(0.0), total).unwrap_or(1.0));
        let mut text = match (t.progress, t.total, fraction) {
            (p, Some(total), Some(f)) => format!(
                "{}/{} {:>3}%",
                format_amount(p.unwrap_or(0.0)),
                format_amount(total),
                percent(f)
            ),
            (p, _, _) => p.map(format_amount).unwrap_or_default(),
        };
        let note = match (mark, t.message.as_deref()) {
            (Mark::Failed | Mark::Ended, Some(m)) => format!("{} ({m})", mark.word()),
            (Mark::Failed | Mark::Ended, None) => mark.word().to_string(),
            (_, Some(m)) => m.to_string(),
            (_, None) => String::new(),
        };
        if !note.is_empty() {
            text.push_str("  ");
            text.push_str(&note);
        }
        Row {
            label: t.id.clone(),
            fraction,
            mark,
            text,
        }
    }

    /// The `total` row: finished once no tracker is running.
    fn total(reducer: &ProgressReducer) -> Row {
        let done = reducer.active().is_empty();
        let (p, t) = overall(reducer).unwrap_or((0.0, None));
        let fraction = t.map(|t| fraction(p, t).unwrap_or(1.0));
        let mut text = match (t, fraction) {
            (Some(t), Some(f)) => format!(
                "{}/{} {:>3}%",
                format_amount(p),
                format_amount(t),
                percent(f)
            ),
            _ => format_amount(p),
        };
        if let Some(m) = reducer.aggregate().and_then(|a| a.message.as_deref()) {
            text.push_str("  ");
            text.push_str(m);
        }
        // Done: failed if one failed, ended if one just stopped reporting,
        // completed if all completed.
        let marks: Vec<Mark> = reducer
            .finished()
            .iter()
            .map(|t| Mark::of(t, true))
            .collect();
        let mark = if !done {
            Mark::Running
        } else if marks.contains(&Mark::Failed) {
            Mark::Failed
        } else if marks.contains(&Mark::Ended) {
            Mark::Ended
        } else {
            Mark::Completed
        };
        Row {
            label: "total".to_string(),
            fraction,
            mark,
            text,
        }
    }

    /// A row per tracker (finished ones first, then the running ones), then
    /// the total.
    fn all(reducer: &ProgressReducer) -> Vec<Row> {
        let mut rows: Vec<Row> = reducer
            .finished()
            .iter()
            .map(|t| Row::tracker(t, true))
            .chain(reducer.active().iter().map(|t| Row::tracker(t, false)))
            .collect();
        rows.push(Row::total(reducer));
        rows
    }
}

/// A live progress display: given the reducer's state it draws the rows;
/// output printed meanwhile goes above them.
trait LiveView {
    /// Redraws for the current state.
    fn update(&mut self, reducer: &ProgressReducer);
    /// Runs `print` with the bars taken down, then redraws them.
    fn print(&mut self, print: &mut dyn FnMut());
    /// Draws the final state and leaves the bars on screen, for good.
    fn finish(&mut self, reducer: &ProgressReducer);
}

#[cfg(not(test))]
type Live = live::Bars;
/// Test builds have no `indicatif` (see [`live_terminal`]), so no bars.
#[cfg(test)]
type Live = std::convert::Infallible;

#[cfg(not(test))]
fn new_live() -> Option<Live> {
    Some(live::Bars::new())
}

#[cfg(test)]
fn new_live() -> Option<Live> {
    None
}

#[cfg(test)]
impl LiveView for std::convert::Infallible {
    fn update(&mut self, _: &ProgressReducer) {
        match *self {}
    }
    fn print(&mut self, _: &mut dyn FnMut()) {
        match *self {}
    }
    fn finish(&mut self, _: &ProgressReducer) {
        match *self {}
    }
}

/// Live bars with `indicatif`: one row per tracker (a bar when its total is
/// known, a spinner with the count when not), then the `total` row.
#[cfg(not(test))]
mod live {
    use std::time::Duration;

    use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
    use switchboard_protocol::progress::ProgressReducer;

    use super::{LiveView, Mark, Row};

    /// Bar positions are fractions of this (amounts may be fractional).
    const SCALE: u64 = 10_000;
    /// Spinner frame interval.
    const TICK: Duration = Duration::from_millis(120);

    /// One drawn row.
    #[derive(Debug)]
    struct Drawn {
        label: String,
        bar: ProgressBar,
        /// What it shows now (`None`: nothing yet).
        shown: Option<Row>,
    }

    /// The display.
    #[derive(Debug)]
    pub(super) struct Bars {
        multi: MultiProgress,
        rows: Vec<Drawn>,
        total: Option<Drawn>,
        /// Width of the label column (the longest label so far).
        label_width: usize,
    }

    impl Bars {
        pub(super) fn new() -> Self {
            Bars {
                multi: MultiProgress::with_draw_target(ProgressDrawTarget::stdout()),
                rows: Vec::new(),
                total: None,
                label_width: 0,
            }
        }

        /// `⠋ label [=====>    ] text` running, `✓ label [==========] text`
        /// once finished; rows without a total have no bar.
        fn style(row: &Row) -> ProgressStyle {
            let mark = match row.mark {
                Mark::Running => "{spinner:.cyan}",
                other => other.glyph(),
            };
            let bar = match (row.fraction.is_some(), row.mark) {
                (false, _) => "",
                (true, Mark::Running) => " [{bar:30.cyan/blue}]",
                (true, Mark::Completed) => " [{bar:30.green}]",
                (true, Mark::Failed) => " [{bar:30.red}]",
                (true, Mark::Ended) => " [{bar:30.yellow}]",
            };
            ProgressStyle::with_template(&format!("{mark} {{prefix}}{bar} {{wide_msg}}"))
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ")
        }

        /// Brings one drawn row to `row`; `relabel` when the label column
        /// got wider.
        fn apply(drawn: &mut Drawn, row: Row, width: usize, relabel: bool) {
            let bar = &drawn.bar;
            if relabel {
                bar.set_prefix(format!("{:<width$}", row.label));
            }
            let old = drawn.shown.take();
            if old.as_ref() == Some(&row) {
                drawn.shown = old;
                return;
            }
            let was_finished = old.as_ref().is_some_and(|o| o.mark != Mark::Running);
            if was_finished && row.mark == Mark::Running {
                // The same id runs again.
                bar.reset();
            }
            let restyle = old.as_ref().is_none_or(|o| {
                o.mark != row.mark || o.fraction.is_some() != row.fraction.is_some()
            });
            if restyle {
                bar.set_style(Self::style(&row));
            }
            if let Some(f) = row.fraction {
                bar.set_position((f * SCALE as f64).round() as u64);
            }
            bar.set_message(row.text.clone());
            match row.mark {
                Mark::Running if restyle => bar.enable_steady_tick(TICK),
                Mark::Running => {}
                _ => {
                    // `abandon` keeps the position (`finish` would fill the bar).
                    bar.disable_steady_tick();
                    bar.abandon();
                }
            }
            drawn.shown = Some(row);
        }

        /// A bar already showing `row`, so that it is never drawn half set up.
        fn new_bar(row: &Row, width: usize) -> ProgressBar {
            let position = row
                .fraction
                .map_or(0, |f| (f * SCALE as f64).round() as u64);
            ProgressBar::new(SCALE)
                .with_style(Self::style(row))
                .with_prefix(format!("{:<width$}", row.label))
                .with_message(row.text.clone())
                .with_position(position)
        }
    }

    impl LiveView for Bars {
        fn update(&mut self, reducer: &ProgressReducer) {
            let mut rows = Row::all(reducer);
            let widest = rows.iter().map(|r| r.label.chars().count()).max();
            let width = self.label_width.max(widest.unwrap_or(0));
            let relabel = width != self.label_width;
            self.label_width = width;
            let Some(total_row) = rows.pop() else {
                return;
            };
            let total = self.total.get_or_insert_with(|| Drawn {
                label: total_row.label.clone(),
                bar: self.multi.add(Self::new_bar(&total_row, width)),
                shown: None,
            });
            for row in rows {
                let i = match self.rows.iter().position(|d| d.label == row.label) {
                    Some(i) => i,
                    None => {
                        let bar = self
                            .multi
                            .insert_before(&total.bar, Self::new_bar(&row, width));
                        self.rows.push(Drawn {
                            label: row.label.clone(),
                            bar,
                            shown: None,
                        });
                        self.rows.len() - 1
                    }
                };
                if let Some(d) = self.rows.get_mut(i) {
                    Self::apply(d, row, width, relabel);
                }
            }
            Self::apply(total, total_row, width, relabel);
        }

        fn print(&mut self, print: &mut dyn FnMut()) {
            self.multi.suspend(print);
        }

        fn finish(&mut self, reducer: &ProgressReducer) {
            self.update(reducer);
            // Whatever is still running (the task stopped for input, or the
            // stream broke) stays as it was last drawn.
            for d in self.rows.iter().chain(&self.total) {
                if !d.bar.is_finished() {
                    d.bar.disable_steady_tick();
                    d.bar.abandon();
                }
            }
        }
    }
}

fn error_kind(e: &ClientError) -> &'static str {
    match e {
        ClientError::Protocol(_) => "protocol",
        ClientError::Http { .. } => "http",
        ClientError::Transport { .. } => "transport",
        ClientError::Decode(_) => "decode",
        ClientError::NoSupportedInterface { .. } => "noSupportedInterface",
        ClientError::Config(_) => "config",
        _ => "other",
    }
}

/// An error and its causes on one line, each cause once.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
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

fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Agent => "agent",
        _ => "?",
    }
}

fn artifact_name(a: &Artifact) -> &str {
    a.name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(&a.artifact_id)
}

/// The printable content of parts: text as is, other kinds as placeholders.
fn parts_text(parts: &[Part], sep: &str) -> String {
    let pieces: Vec<String> = parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(t) => t.clone(),
            PartContent::Data(v) => v.to_string(),
            PartContent::Url(u) => format!("<{u}>"),
            PartContent::Raw(b) => format!(
                "[{} bytes{}]",
                b.len(),
                p.media_type
                    .as_deref()
                    .map(|m| format!(" {m}"))
                    .unwrap_or_default()
            ),
            _ => "[unsupported part]".to_string(),
        })
        .collect();
    pieces.join(sep)
}

/// Indents every line of `text` by `prefix`.
fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Indents every line but the first (which follows a label).
fn indent_rest(text: &str, prefix: &str) -> String {
    text.replace('\n', &format!("\n{prefix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_final_state() {
        assert_eq!(exit_for(Some(TaskState::Completed), true), 0);
        assert_eq!(exit_for(Some(TaskState::InputRequired), true), 0);
        assert_eq!(exit_for(Some(TaskState::Failed), false), EXIT_TASK_FAILED);
        assert_eq!(exit_for(Some(TaskState::Rejected), true), EXIT_TASK_FAILED);
        assert_eq!(exit_for(Some(TaskState::Canceled), true), EXIT_TASK_FAILED);
        assert_eq!(exit_for(Some(TaskState::Canceled), false), 0);
        assert_eq!(exit_for(None, true), 0);
    }

    #[test]
    fn states_parse_by_label_or_proto_name() {
        assert_eq!(parse_state("working"), Ok(TaskState::Working));
        assert_eq!(
            parse_state("TASK_STATE_INPUT_REQUIRED"),
            Ok(TaskState::InputRequired)
        );
        assert!(parse_state("nope").is_err_and(|e| e.contains("completed")));
    }

    #[test]
    fn streamed_artifact_chunks_print_inline() {
        let ev = |append: bool, last: bool, text: &str| {
            let v = json!({"artifactUpdate": {"taskId": "t", "contextId": "c",
                "artifact": {"artifactId": "a", "name": "echo", "parts": [{"text": text}]},
                "append": append, "lastChunk": last}});
            serde_json::from_value::<StreamResponse>(v).unwrap_or_else(|e| panic!("{e}"))
        };
        let mut buf = Vec::new();
        let mut out = Output {
            json: false,
            open_artifact: None,
            stdout: &mut buf,
            stderr: std::io::sink(),
            progress: None,
        };
        out.event(&ev(false, false, "echo: "), None);
        out.event(&ev(true, false, "hel"), None);
        out.event(&ev(true, true, "lo"), None);
        out.event(&ev(false, false, "second"), None);
        out.close_artifact();
        assert_eq!(
            String::from_utf8_lossy(&buf),
            "  ▸ echo: echo: hello\n  ▸ echo: second\n"
        );
    }

    /// A working status update carrying these trackers (and its text).
    fn progress_update(state: &str, text: &str, trackers: Value) -> StreamResponse {
        let md = json!({ TASK_PROGRESS_URI: { "trackers": trackers } });
        let v = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": state, "message": {"messageId": "m", "role": "ROLE_AGENT",
                "parts": [{"text": text}], "metadata": md}},
            "metadata": md}});
        serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"))
    }

    fn plain_output(buf: &mut Vec<u8>) -> Output<&mut Vec<u8>, std::io::Sink> {
        Output {
            json: false,
            open_artifact: None,
            stdout: buf,
            stderr: std::io::sink(),
            progress: Some(ProgressView::new(false)),
        }
    }

    #[test]
    fn plain_progress_lines_print_once_per_change() {
        let mut buf = Vec::new();
        let mut out = plain_output(&mut buf);
        let working = "TASK_STATE_WORKING";
        out.event(
            &progress_update(
                working,
                "download 12/40, scan 7",
                json!([{"id": "download", "progress": 12, "total": 40},
                       {"id": "index", "progress": 3, "total": 25},
                       {"id": "scan", "progress": 7}]),
            ),
            None,
        );
        // The same numbers again: nothing new to print.
        out.event(
            &progress_update(
                working,
                "again",
                json!([{"id": "download", "progress": 12, "total": 40},
                       {"id": "index", "progress": 3, "total": 25},
                       {"id": "scan", "progress": 7}]),
            ),
            None,
        );
        out.event(
            &progress_update(
                working,
                "download done",
                json!([{"id": "download", "progress": 40, "total": 40, "status": "completed"},
                       {"id": "index", "progress": 4, "total": 25, "status": "failed"},
                       {"id": "scan", "progress": 9}]),
            ),
            None,
        );
        // The task ends while `scan` still runs: it ended without a status.
        let done = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"}}});
        out.event(
            &serde_json::from_value(done).unwrap_or_else(|e| panic!("{e}")),
            None,
        );
        assert_eq!(
            String::from_utf8_lossy(&buf),
            "progress download 12/40 (30%) · index 3/25 (12%) · scan 7 — total 15/65 (23%)\n\
             progress ✓ download 40/40 completed\n\
             progress ✗ index 4/25 failed\n\
             progress scan 9 — total 44/65 (67%)\n\
             progress · scan 9 ended\n"
        );
    }

    #[test]
    fn status_lines_that_only_restate_progress_are_not_printed() {
        assert!(progress_only(true, TaskState::Working));
        assert!(!progress_only(false, TaskState::Working));
        assert!(!progress_only(true, TaskState::Failed));
        assert!(!progress_only(true, TaskState::InputRequired));
        // Without a progress view the status line prints as before.
        let mut buf = Vec::new();
        let mut out = plain_output(&mut buf);
        out.progress = None;
        out.event(
            &progress_update(
                "TASK_STATE_WORKING",
                "download 1/40",
                json!([{"id": "download", "progress": 1, "total": 40}]),
            ),
            None,
        );
        assert_eq!(
            String::from_utf8_lossy(&buf),
            "  · working: download 1/40\n"
        );
    }

    #[test]
    fn rows_are_bars_or_spinners_with_marks() {
        let mut r = ProgressReducer::new();
        let md = |trackers: Value| {
            serde_json::from_value::<switchboard_protocol::Metadata>(
                json!({ TASK_PROGRESS_URI: { "trackers": trackers } }),
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        r.apply_metadata(&md(json!([
            {"id": "download", "progress": 10, "total": 40, "message": "10 files"},
            {"id": "scan", "progress": 7},
            {"id": "odd", "progress": 0.5, "total": 2}
        ])));
        let rows = Row::all(&r);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].label, "download");
        assert_eq!(rows[0].fraction, Some(0.25));
        assert_eq!(rows[0].mark, Mark::Running);
        assert_eq!(rows[0].text, "10/40  25%  10 files");
        assert_eq!(rows[1].fraction, None);
        assert_eq!(rows[1].text, "7");
        assert_eq!(rows[2].text, "0.5/2  25%");
        assert_eq!(rows[3].label, "total");
        assert_eq!(rows[3].text, "10.5/42  25%");
        assert_eq!(rows[3].mark, Mark::Running);
        r.apply_metadata(&md(json!([
            {"id": "download", "progress": 40, "total": 40, "status": "completed"},
            {"id": "scan", "progress": 9, "status": "failed", "message": "disk full"}
        ])));
        let rows = Row::all(&r);
        let by = |id: &str| rows.iter().find(|row| row.label == id).cloned();
        let download = by("download").unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!(
            (download.mark, download.fraction),
            (Mark::Completed, Some(1.0))
        );
        let scan = by("scan").unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!(scan.mark, Mark::Failed);
        assert_eq!(scan.text, "9  failed (disk full)");
        // `odd` left the snapshot without a status.
        let odd = by("odd").unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!(odd.mark, Mark::Ended);
        let total = by("total").unwrap_or_else(|| panic!("{rows:?}"));
        assert_eq!(total.mark, Mark::Failed);
        assert_eq!(total.text, "40.5/42  96%");
    }

    #[test]
    fn json_lines_unwrap_the_stream_wrapper() {
        let mut buf = Vec::new();
        let mut out = Output {
            json: true,
            open_artifact: None,
            stdout: &mut buf,
            stderr: std::io::sink(),
            progress: None,
        };
        let msg = StreamResponse::Message(Message::agent_text("hi"));
        out.event(&msg, Some(7));
        let v: Value = serde_json::from_slice(&buf).unwrap_or_default();
        assert_eq!(v["type"], "message");
        assert_eq!(v["seq"], 7);
        assert_eq!(v["data"]["parts"][0]["text"], "hi");
    }
}
