//! What the client commands print: [`Output`] renders cards, tasks, messages,
//! stream events and task lists for people, or as JSON Lines with `--json`
//! (`{"type": …, "data": …}` per item, `data` being the A2A 1.0 JSON), and
//! reports failures once on stderr.
//!
//! Human output streams: an artifact's text is printed as its chunks arrive,
//! on one line (hinted blocks, such as tool calls, on lines of their own:
//! see [`crate::parts`]), and closed when another item comes. Task progress, when
//! followed, goes through the [`ProgressView`], which draws it as bars or as
//! plain lines; everything else printed meanwhile passes through it too, so
//! that it lands above the bars.

use std::collections::HashMap;
use std::fmt::Display;
use std::io::Write;

use serde_json::{Value, json};
use switchboard_client::{ClientError, flatten_chain};
use switchboard_protocol::{
    AgentCard, Artifact, ListTasksResponse, Message, Part, Role, SendMessageResponse,
    StreamResponse, Task, TaskState, TaskStatus,
};

use crate::parts::PartsView;
use crate::progress::ProgressView;
use crate::sanitize::printable;

/// The task a command last showed: id, context id and state (for a
/// next-step hint, see [`Output::seen`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The task.
    pub task_id: String,
    /// Its context.
    pub context_id: String,
    /// The state it was shown in.
    pub state: TaskState,
}

/// A failure to report ([`Output::error`]): what ends a command.
#[derive(Debug)]
pub enum Failure {
    /// Bad command-line input.
    Usage(String),
    /// The client (connection, HTTP, protocol, decoding) failed.
    Client(ClientError),
    /// The agent refused something its card explains: `note` says what it
    /// offers instead (see `offers`).
    Offered {
        /// The refusal.
        error: ClientError,
        /// What the card offers, e.g. `the agent offers JSONRPC 1.0, …`.
        note: String,
    },
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Failure::Client(e)
    }
}

/// Any serializable value as JSON (`null` if it cannot be serialized, which
/// plain data never fails to do).
macro_rules! to_json {
    ($v:expr) => {
        serde_json::to_value($v).unwrap_or(Value::Null)
    };
}

/// Writes results, human-readable or as JSON Lines. Write errors (a closed
/// pipe, as in `| head`) are ignored: there is nobody left to tell.
pub struct Output<O, E> {
    json: bool,
    /// The artifact whose text is being printed inline (human mode).
    open_artifact: Option<String>,
    stdout: O,
    stderr: E,
    /// Task progress being shown (human mode, extension activated).
    progress: Option<ProgressView>,
    /// The task shown last, for the next-step hint.
    seen: Option<Seen>,
    /// Streamed artifacts by id: the name (later chunks carry none) and
    /// where their hinted blocks stand.
    artifacts: HashMap<String, (String, PartsView)>,
}

impl<O, E> std::fmt::Debug for Output<O, E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("json", &self.json)
            .field("open_artifact", &self.open_artifact)
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

/// Streamed artifacts remembered at once; past it the oldest are forgotten
/// (a later chunk of one is then labelled by its id).
const ARTIFACTS_REMEMBERED: usize = 1024;

impl<O: Write, E: Write> Output<O, E> {
    /// An output to `stdout` and `stderr`; `progress` shows task progress
    /// (human mode only: with `json` the progress stays inside the events).
    pub fn new(json: bool, stdout: O, stderr: E, progress: Option<ProgressView>) -> Self {
        Output {
            json,
            open_artifact: None,
            stdout,
            stderr,
            progress,
            seen: None,
            artifacts: HashMap::new(),
        }
    }

    /// Prints one AG-UI event (`stream --agui`).
    pub fn agui(&mut self, event: &switchboard_agui::Event) {
        let line = crate::agui::render(event, self.json);
        self.line(line);
    }

    /// Prints one line.
    pub fn line(&mut self, s: impl Display) {
        self.write_text(&format!("{s}\n"));
    }

    /// Prints without a newline (for text that streams in).
    fn inline(&mut self, s: impl Display) {
        self.write_text(&s.to_string());
    }

    /// Writes to stdout, through the progress view (above its bars) when
    /// there is one. Human output is stripped of what a terminal would obey
    /// in agent text ([`printable`]).
    fn write_text(&mut self, text: &str) {
        let text = if self.json {
            std::borrow::Cow::Borrowed(text)
        } else {
            printable(text)
        };
        let text = text.as_ref();
        match self.progress.as_mut() {
            Some(p) => p.write(&mut self.stdout, text),
            None => write_through(&mut self.stdout, text),
        }
    }

    /// Shows the progress folded so far: updates the bars, or prints the
    /// plain progress lines that changed.
    fn show_progress(&mut self) {
        let mid_line = self.open_artifact.is_some();
        if let Some(p) = self.progress.as_mut() {
            p.show(&mut self.stdout, mid_line);
        }
    }

    /// Shows `text` on the live status line (a terminal, human output);
    /// `false` when there is none and the caller prints instead.
    fn set_live_status(&mut self, text: &str) -> bool {
        if self.json || self.open_artifact.is_some() {
            return false;
        }
        self.progress.as_mut().is_some_and(|p| p.set_status(text))
    }

    /// While a blocking call (`send`) runs: the live status line says so,
    /// on a terminal; nothing otherwise.
    pub fn waiting(&mut self, what: &str) {
        self.set_live_status(what);
    }

    /// The blocking call returned: its waiting line goes away.
    pub fn done_waiting(&mut self) {
        if let Some(p) = self.progress.as_mut() {
            p.clear_status();
        }
    }

    /// Whether output is JSON Lines (`--json`).
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// A hint for the next step, on stderr: never part of stdout (which
    /// may be JSON) and never in the way of a script reading it.
    pub fn hint(&mut self, text: &str) {
        let _ = writeln!(self.stderr, "{}", printable(text));
        let _ = self.stderr.flush();
    }

    /// Takes the bars down for good (they stay on screen as drawn last);
    /// later output goes below them.
    pub fn end_progress(&mut self) {
        if let Some(p) = self.progress.as_mut() {
            p.end(&mut self.stdout);
        }
    }

    /// Folds a stream item into the progress state; `true` when it carried a
    /// progress payload.
    fn fold_progress(&mut self, ev: &StreamResponse) -> bool {
        self.progress.as_mut().is_some_and(|p| p.fold(ev))
    }

    pub fn json_line(&mut self, kind: &str, data: Value, seq: Option<u64>) {
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

    pub fn unknown(&mut self, resp: &SendMessageResponse) {
        self.wrapped(to_json!(resp), None);
    }

    pub fn card(&mut self, card: &AgentCard) {
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
        for line in security_lines(card) {
            self.line(line);
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

    /// Remembers `task` as the one shown last.
    fn saw_task(&mut self, task: &Task) {
        self.seen = Some(Seen {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            state: task.status.state,
        });
    }

    /// The task shown last (its latest state), if any.
    pub fn seen(&self) -> Option<&Seen> {
        self.seen.as_ref()
    }

    pub fn task(&mut self, task: &Task, with_history: bool) {
        self.saw_task(task);
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
        let live = if text.is_empty() {
            status.state.label().to_string()
        } else {
            format!("{}: {text}", status.state.label())
        };
        if matches!(status.state, TaskState::Working | TaskState::Submitted) {
            if self.set_live_status(&live) {
                return;
            }
        } else {
            // Printed below too (it stays in the scrollback), but the live
            // line must not go on saying "working" once the task stopped.
            self.set_live_status(&live);
        }
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

    pub fn message(&mut self, msg: &Message) {
        if self.json {
            return self.json_line("message", to_json!(msg), None);
        }
        self.line(format!(
            "{}: {}",
            role(msg.role),
            indent_rest(&parts_text(&msg.parts, "\n"), "  ")
        ));
    }

    pub fn event(&mut self, ev: &StreamResponse, seq: Option<u64>) {
        let carried = self.fold_progress(ev);
        match ev {
            StreamResponse::Task(t) => self.saw_task(t),
            StreamResponse::StatusUpdate(u) => {
                self.seen = Some(Seen {
                    task_id: u.task_id.clone(),
                    context_id: u.context_id.clone(),
                    state: u.status.state,
                });
            }
            _ => {}
        }
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
                if self.artifacts.len() >= ARTIFACTS_REMEMBERED && !self.artifacts.contains_key(id)
                {
                    self.artifacts.clear();
                }
                let (name, view) = self.artifacts.entry(id.clone()).or_insert_with(|| {
                    (artifact_name(&u.artifact).to_string(), PartsView::default())
                });
                if let Some(named) = u.artifact.name.as_deref().filter(|n| !n.is_empty()) {
                    named.clone_into(name);
                }
                if !u.append {
                    // A chunk that does not append replaces the artifact.
                    *view = PartsView::default();
                }
                let label = name.clone();
                let text = indent_rest(&view.render(&u.artifact.parts, ""), "    ");
                let continues = u.append && self.open_artifact.as_deref() == Some(id.as_str());
                if !continues {
                    self.close_artifact();
                    self.inline(format!("  ▸ {label}: "));
                }
                self.inline(text);
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
    pub fn watched(&mut self, previous: Option<&Task>, task: &Task) {
        self.saw_task(task);
        let carried = self.progress.as_mut().is_some_and(|p| p.fold_task(task));
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
    pub fn summary(&mut self, id: &str, state: TaskState) {
        if !self.json {
            self.line(format!("task {id} [{}]", state.label()));
        }
    }

    /// Ends an artifact line that was being printed inline.
    pub fn close_artifact(&mut self) {
        if self.open_artifact.take().is_some() {
            self.line("");
        }
    }

    pub fn list(&mut self, page: &ListTasksResponse) {
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
    pub fn error(&mut self, failure: &Failure) {
        let (message, data) = match failure {
            Failure::Usage(msg) => (msg.clone(), json!({ "kind": "usage", "message": msg })),
            Failure::Client(e) => (flatten_chain(e), client_error_json(e, None)),
            Failure::Offered { error, note } => (
                format!("{}; {note}", flatten_chain(error)),
                client_error_json(error, Some(note)),
            ),
        };
        if self.json {
            self.json_line("error", data, None);
        }
        let _ = writeln!(self.stderr, "error: {}", printable(&message));
        let _ = self.stderr.flush();
    }
}

/// `true` for an update whose status only restates its progress payload: a
/// working update that carried trackers. Such updates are shown as progress,
/// not as a status line. Terminal and interrupted updates always print.
pub fn progress_only(carried: bool, state: TaskState) -> bool {
    carried && !state.is_terminal() && !state.is_interrupted()
}

fn error_kind(e: &ClientError) -> &'static str {
    match e {
        ClientError::Protocol(_) => "protocol",
        ClientError::Http { .. } => "http",
        ClientError::Transport { .. } => "transport",
        ClientError::Decode(_) => "decode",
        ClientError::NoSupportedInterface { .. } => "noSupportedInterface",
        ClientError::Config(_) => "config",
        ClientError::TooLarge { .. } => "tooLarge",
        _ => "other",
    }
}

/// The `data` of an error line: `kind`, `message`, the A2A `code` when
/// the agent sent one, and what the agent `offered` when that is known.
fn client_error_json(e: &ClientError, offered: Option<&String>) -> Value {
    let mut data = json!({ "kind": error_kind(e), "message": e.to_string() });
    if let Some(map) = data.as_object_mut() {
        if let Some(code) = e.code() {
            map.insert("code".into(), json!(code));
        }
        if let Some(note) = offered {
            map.insert("offered".into(), json!(note));
        }
    }
    data
}

fn role(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Agent => "agent",
        _ => "?",
    }
}

/// What a caller needs to get in: each security scheme, the flag that
/// answers it, and which of them the agent requires.
fn security_lines(card: &AgentCard) -> Vec<String> {
    if card.security_schemes.is_empty() {
        return Vec::new();
    }
    let mut lines = vec!["  security:".to_string()];
    for (name, scheme) in &card.security_schemes {
        lines.push(format!("    {name}: {}", describe_scheme(scheme)));
    }
    let required: Vec<String> = card
        .security_requirements
        .iter()
        .map(|r| r.schemes.keys().cloned().collect::<Vec<_>>().join(" and "))
        .filter(|r| !r.is_empty())
        .collect();
    if !required.is_empty() {
        lines.push(format!("    required: {}", required.join(", or ")));
    }
    lines
}

/// One security scheme (its A2A 1.0 form, or the 0.3 OpenAPI form) and the
/// client flag that answers it.
fn describe_scheme(scheme: &Value) -> String {
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    if let Some(http) = scheme
        .get("httpAuthSecurityScheme")
        .or_else(|| (scheme.get("type").and_then(Value::as_str) == Some("http")).then_some(scheme))
    {
        let kind = field(http, "scheme");
        let format = field(http, "bearerFormat");
        let format = if format.is_empty() {
            String::new()
        } else {
            format!(" ({format})")
        };
        return if kind.eq_ignore_ascii_case("bearer") {
            format!("HTTP bearer token{format}; pass --token")
        } else {
            format!("HTTP {kind}{format}; pass --header 'Authorization: …'")
        };
    }
    if let Some(key) = scheme.get("apiKeySecurityScheme").or_else(|| {
        (scheme.get("type").and_then(Value::as_str) == Some("apiKey")).then_some(scheme)
    }) {
        let (location, name) = (field(key, "location"), field(key, "name"));
        let location = if location.is_empty() {
            field(key, "in")
        } else {
            location
        };
        return if location == "header" && name.eq_ignore_ascii_case("x-api-key") {
            format!("API key in the {name} header; pass --api-key")
        } else {
            format!("API key in {location} {name}")
        };
    }
    if scheme.get("oauth2SecurityScheme").is_some()
        || scheme.get("type").and_then(Value::as_str) == Some("oauth2")
    {
        return "OAuth 2.0; pass --oauth-token-url and --oauth-client-id".into();
    }
    if let Some(oidc) = scheme.get("openIdConnectSecurityScheme") {
        return format!("OpenID Connect ({})", field(oidc, "openIdConnectUrl"));
    }
    if scheme.get("mtlsSecurityScheme").is_some() {
        return "mutual TLS".into();
    }
    scheme.to_string()
}

fn artifact_name(a: &Artifact) -> &str {
    a.name
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or(&a.artifact_id)
}

/// The printable content of parts (see [`PartsView`]).
fn parts_text(parts: &[Part], sep: &str) -> String {
    PartsView::default().render(parts, sep)
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

/// Writes and flushes at once: output is followed as it happens.
pub fn write_through<W: Write>(out: &mut W, text: &str) {
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
