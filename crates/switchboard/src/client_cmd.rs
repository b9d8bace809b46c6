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
//! Exit codes: `0` success; `1` the task ended FAILED or REJECTED (or
//! CANCELED, for `send` and `stream`); `2` a usage, connection or protocol
//! error, described once on stderr.

use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, ClientBuilder, ClientError, EventStream};
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
    },
    /// Show a task.
    Get {
        /// Connection and output options.
        #[command(flatten)]
        conn: ConnectArgs,
        /// The task id.
        id: String,
        /// Return at most this many history messages (0: none).
        #[arg(long, value_name = "N")]
        history_length: Option<i32>,
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
    },
}

fn parse_state(s: &str) -> Result<TaskState, String> {
    TaskState::parse(s).ok_or_else(|| {
        let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.label()).collect();
        format!("unknown state {s:?}; one of {}", names.join(", "))
    })
}

/// Runs one client subcommand, printing to stdout and stderr, and returns
/// the process exit code.
pub async fn run(cmd: ClientCommand) -> ExitCode {
    ExitCode::from(run_with(cmd, std::io::stdout(), std::io::stderr()).await)
}

/// [`run`] with explicit output streams (for tests and embedding); returns
/// the exit code as a number (0, 1 or 2).
pub async fn run_with<O, E>(cmd: ClientCommand, stdout: O, stderr: E) -> u8
where
    O: Write + Send,
    E: Write + Send,
{
    let json = match &cmd {
        ClientCommand::Card { conn }
        | ClientCommand::Send { conn, .. }
        | ClientCommand::Stream { conn, .. }
        | ClientCommand::Get { conn, .. }
        | ClientCommand::List { conn, .. }
        | ClientCommand::Cancel { conn, .. }
        | ClientCommand::Subscribe { conn, .. } => conn.json,
    };
    let mut out = Output {
        json,
        open_artifact: None,
        stdout,
        stderr,
    };
    match execute(cmd, &mut out).await {
        Ok(code) => code,
        Err(err) => {
            out.close_artifact();
            out.error(&err);
            EXIT_ERROR
        }
    }
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
            let client = connect(&conn).await?;
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
        ClientCommand::Stream { conn, message } => {
            let client = connect(&conn).await?;
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
        } => {
            let client = connect(&conn).await?;
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
            let client = connect(&conn).await?;
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
            let client = connect(&conn).await?;
            let task = client.cancel_task(id.as_str()).await?;
            out.task(&task, false);
            Ok(0)
        }
        ClientCommand::Subscribe { conn, id } => {
            let client = connect(&conn).await?;
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
    Ok(b)
}

async fn connect(conn: &ConnectArgs) -> Result<A2AClient, Failure> {
    Ok(builder(conn)?.connect(&conn.url).await?)
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
    if let (Some(id), Some(state)) = (&task_id, last_state) {
        out.summary(id, state);
    }
    Ok(last_state)
}

/// Writes results, human-readable or as JSON Lines. Write errors (a closed
/// pipe, as in `| head`) are ignored: there is nobody left to tell.
struct Output<O, E> {
    json: bool,
    /// The artifact whose text is being printed inline (human mode).
    open_artifact: Option<String>,
    stdout: O,
    stderr: E,
}

impl<O: Write, E: Write> Output<O, E> {
    /// Prints one line.
    fn line(&mut self, s: impl Display) {
        let _ = writeln!(self.stdout, "{s}");
        let _ = self.stdout.flush();
    }

    /// Prints without a newline (for text that streams in).
    fn inline(&mut self, s: impl Display) {
        let _ = write!(self.stdout, "{s}");
        let _ = self.stdout.flush();
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
        if task.status.message.is_some() {
            self.status(&task.status);
        }
        for a in task.artifacts() {
            self.line(format!(
                "  ▸ {}: {}",
                artifact_name(a),
                indent_rest(&parts_text(&a.parts, ""), "    ")
            ));
        }
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
                if t.status.message.is_some() {
                    self.status(&t.status);
                }
            }
            StreamResponse::StatusUpdate(u) => {
                self.close_artifact();
                // A terminal state without a message is the summary line's job.
                if u.status.message.is_some() || !u.status.state.is_terminal() {
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

    #[test]
    fn json_lines_unwrap_the_stream_wrapper() {
        let mut buf = Vec::new();
        let mut out = Output {
            json: true,
            open_artifact: None,
            stdout: &mut buf,
            stderr: std::io::sink(),
        };
        let msg = StreamResponse::Message(Message::agent_text("hi"));
        out.event(&msg, Some(7));
        let v: Value = serde_json::from_slice(&buf).unwrap_or_default();
        assert_eq!(v["type"], "message");
        assert_eq!(v["seq"], 7);
        assert_eq!(v["data"]["parts"][0]["text"], "hi");
    }
}
