//! The exec runtime: any program as an agent.
//!
//! Each message starts the configured program (argv only: the command and
//! its configured arguments, never a shell, so nothing a caller sends is
//! interpreted) in its own process group, in an explicit working directory
//! and environment. How it talks is the [`ExecMode`]:
//!
//! - **text** — the official `a2a-cli serve --exec` contract, so a program
//!   written for it runs here unchanged: the message's first text part on
//!   stdin, then end-of-file; the whole stdout becomes one text artifact
//!   when it exits (or, with `chunk`, artifact chunks split at the
//!   delimiter as they arrive); exit 0 completes the task, any other exit
//!   fails it with stderr's tail in the status message.
//! - **lines** — JSON lines both ways ([`lines`]): the program reads the
//!   message as one JSON object on stdin and writes one object per stdout
//!   line — `status`, `artifact` chunks, `progress` trackers (the
//!   task-progress extension), `ask` (the task turns input-required; the
//!   caller's answer on the same task arrives as an `answer` line on the
//!   program's stdin, the program still running), `complete`, `fail`.
//!
//! Bounds, each from [`ExecConfig`]: at most `max_concurrent` programs per
//! agent, running or waiting for an answer (a message beyond that is refused
//! with ResourceExhausted, not queued); `max_output_bytes` of stdout per run;
//! `timeout` per stretch of work; `ask_timeout` for an answer; a
//! `stderr_tail_bytes` tail of stderr kept. Cancel (and timeout, and server
//! shutdown) sends SIGTERM to the program's group and SIGKILL after
//! `kill_grace`; the run ends only once the program is reaped.

mod config;
mod error;
pub mod lines;
mod program;

pub use config::{ConfigError, ExecConfig, ExecMode};
pub use error::ExecError;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents, Tracker, async_trait};
use switchboard_protocol::progress::ProgressLimits;
use switchboard_protocol::{A2AError, AgentCard, Artifact, Part, PartContent};
use tokio::io::AsyncWriteExt as _;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use error::describe_exit;
use lines::{InputLine, ProgramLine, TrackerEnd};
use program::{Program, Read};

/// An agent that runs a program per message; see the module docs.
#[derive(Debug)]
pub struct ExecAgent {
    config: Arc<ExecConfig>,
    slots: Arc<Semaphore>,
    /// Lines-mode programs that asked a question, by task id.
    waiting: Arc<Mutex<HashMap<String, Waiting>>>,
    /// Tells a waiting program's expiry from a later wait of the same task.
    generation: AtomicU64,
}

/// A program parked on a question, with what its task's artifacts need.
#[derive(Debug)]
struct Waiting {
    program: Program,
    open: HashMap<String, String>,
    generation: u64,
}

/// How a lines-mode run ended.
enum LinesEnd {
    /// The program asked a question: keep it for the answer.
    Ask(HashMap<String, String>),
    /// Stop it now (cancel, timeout, an error): SIGTERM, then SIGKILL.
    Stop(Result<(), BoxError>),
    /// It said the task is over: let it exit within the grace, then stop it.
    Exit(Result<(), BoxError>),
}

impl ExecAgent {
    /// An agent running `config`'s program. Fails when the configuration
    /// cannot work ([`ExecConfig::validate`]).
    pub fn new(config: ExecConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(ExecAgent {
            slots: Arc::new(Semaphore::new(config.max_concurrent)),
            config: Arc::new(config),
            waiting: Arc::new(Mutex::new(HashMap::new())),
            generation: AtomicU64::new(0),
        })
    }

    /// Its settings.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// A card for this agent: streaming, and in lines mode the
    /// task-progress extension (programs report progress). Interfaces are
    /// filled in by the server.
    pub fn card(&self, name: impl Into<String>, description: impl Into<String>) -> AgentCard {
        let card =
            AgentCard::new(name, description, env!("CARGO_PKG_VERSION")).with_streaming(true);
        match self.config.mode {
            ExecMode::Lines => card.with_extension(ProgressLimits::default().to_extension()),
            ExecMode::Text => card,
        }
    }

    /// Programs running or waiting for an answer now.
    pub fn running(&self) -> usize {
        self.config.max_concurrent - self.slots.available_permits()
    }

    fn start(&self, ctx: &RequestContext) -> Result<Program, BoxError> {
        let slot = self.slots.clone().try_acquire_owned().map_err(|_| {
            A2AError::ResourceExhausted(format!(
                "this agent runs at most {} programs at once (max_concurrent); try again later",
                self.config.max_concurrent
            ))
        })?;
        Ok(Program::spawn(
            &self.config,
            &ctx.task_id,
            &ctx.context_id,
            slot,
        )?)
    }

    /// Text mode: stdin gets the first text part, stdout is the answer.
    async fn run_text(
        &self,
        mut program: Program,
        ctx: &RequestContext,
        events: &TaskEvents,
    ) -> Result<(), BoxError> {
        let input = ctx
            .message
            .parts
            .iter()
            .find_map(|p| match &p.content {
                PartContent::Text(t) => Some(t.clone()),
                _ => None,
            })
            .unwrap_or_default();
        // Written beside the reads: a program that writes before it has
        // read all its input must not deadlock against us.
        if let Some(mut stdin) = program.take_stdin() {
            tokio::spawn(async move {
                let _ = stdin.write_all(input.as_bytes()).await;
                // Dropped here: the program reads end-of-file.
            });
        }
        let result = self.text_output(&mut program, events).await;
        program.stop(self.config.kill_grace).await;
        result
    }

    async fn text_output(
        &self,
        program: &mut Program,
        events: &TaskEvents,
    ) -> Result<(), BoxError> {
        let cfg = &self.config;
        events.working(format!("running {}", cfg.command)).await?;
        let deadline = Instant::now() + cfg.timeout;
        let delimiter = cfg.chunk.as_deref().map(str::as_bytes);
        let mut writer = delimiter.map(|_| events.artifact_writer("output"));
        let mut out = Vec::new();
        loop {
            let read = tokio::select! {
                biased;
                _ = events.cancelled() => return Ok(()),
                _ = tokio::time::sleep_until(deadline) => return Err(ExecError::TimedOut(cfg.timeout).into()),
                read = program.read_some(&mut out, cfg.max_output_bytes) => read?,
            };
            if let Read::Eof = read {
                break;
            }
            if let (Some(delimiter), Some(writer)) = (delimiter, writer.as_mut()) {
                while let Some(at) = find(&out, delimiter) {
                    let piece = String::from_utf8_lossy(&out[..at]).into_owned();
                    out.drain(..at + delimiter.len());
                    writer.append(Part::text(piece)).await?;
                }
            }
        }
        let status = tokio::select! {
            biased;
            _ = events.cancelled() => return Ok(()),
            _ = tokio::time::sleep_until(deadline) => return Err(ExecError::TimedOut(cfg.timeout).into()),
            status = program.wait() => status?,
        };
        if !status.success() {
            return Err(ExecError::Exited {
                status: describe_exit(status),
                stderr: program.stderr_tail(cfg.kill_grace).await,
            }
            .into());
        }
        let rest = String::from_utf8_lossy(&out).into_owned();
        match writer {
            Some(writer) => writer.finish(Part::text(rest)).await?,
            None => {
                let artifact = Artifact::new(vec![Part::text(rest)]).with_name("output");
                events
                    .batch()
                    .artifact(artifact)
                    .complete()
                    .commit()
                    .await?;
            }
        }
        Ok(())
    }

    /// Lines mode from the program's first line (or from an answer).
    async fn run_lines(
        &self,
        mut program: Program,
        mut open: HashMap<String, String>,
        events: &TaskEvents,
    ) -> Result<(), BoxError> {
        match self.lines(&mut program, &mut open, events).await {
            LinesEnd::Ask(open) => {
                self.park(events, program, open);
                Ok(())
            }
            LinesEnd::Stop(result) => {
                program.stop(self.config.kill_grace).await;
                result
            }
            LinesEnd::Exit(result) => {
                program.close_stdin();
                let _ = tokio::time::timeout(self.config.kill_grace, program.wait()).await;
                program.stop(self.config.kill_grace).await;
                result
            }
        }
    }

    async fn lines(
        &self,
        program: &mut Program,
        open: &mut HashMap<String, String>,
        events: &TaskEvents,
    ) -> LinesEnd {
        let cfg = &self.config;
        let deadline = Instant::now() + cfg.timeout;
        let mut trackers: HashMap<String, Tracker> = HashMap::new();
        let mut number = 0;
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = tokio::select! {
                biased;
                _ = events.cancelled() => return LinesEnd::Stop(Ok(())),
                _ = tokio::time::sleep_until(deadline) => return LinesEnd::Stop(Err(ExecError::TimedOut(cfg.timeout).into())),
                read = program.read_line(&mut line, cfg.max_output_bytes) => read,
            };
            match read {
                Err(e) => return LinesEnd::Stop(Err(e.into())),
                Ok(Read::Eof) => break,
                Ok(_) => {}
            }
            number += 1;
            let text = String::from_utf8_lossy(&line);
            if text.trim().is_empty() {
                continue;
            }
            let parsed = match serde_json::from_str::<ProgramLine>(text.trim()) {
                Ok(parsed) => parsed,
                Err(e) => {
                    program.stop(cfg.kill_grace).await;
                    return LinesEnd::Stop(Err(ExecError::Protocol {
                        line: number,
                        reason: e.to_string(),
                        stderr: program.stderr_tail(cfg.kill_grace).await,
                    }
                    .into()));
                }
            };
            let step = apply(parsed, open, &mut trackers, events).await;
            match step {
                Ok(Step::Next) => {}
                Ok(Step::Asked) => return LinesEnd::Ask(std::mem::take(open)),
                Ok(Step::Over) => return LinesEnd::Exit(Ok(())),
                Err(e) if matches!(e.downcast_ref::<ExecError>(), Some(ExecError::Failed(_))) => {
                    return LinesEnd::Exit(Err(e));
                }
                Err(e) => return LinesEnd::Stop(Err(e)),
            }
        }
        let status = tokio::select! {
            biased;
            _ = events.cancelled() => return LinesEnd::Stop(Ok(())),
            _ = tokio::time::sleep_until(deadline) => return LinesEnd::Stop(Err(ExecError::TimedOut(cfg.timeout).into())),
            status = program.wait() => status,
        };
        match status {
            Ok(s) if s.success() => LinesEnd::Exit(Ok(())),
            Ok(s) => LinesEnd::Exit(Err(ExecError::Exited {
                status: describe_exit(s),
                stderr: program.stderr_tail(cfg.kill_grace).await,
            }
            .into())),
            Err(e) => LinesEnd::Stop(Err(e.into())),
        }
    }

    /// Keeps `program` for the answer to its question, until `ask_timeout`
    /// or until the task ends without one (a cancel reaches no run then).
    fn park(&self, events: &TaskEvents, program: Program, open: HashMap<String, String>) {
        let task_id = events.task_id();
        let generation = self.generation.fetch_add(1, Ordering::Relaxed);
        let Ok(mut waiting) = self.waiting.lock() else {
            return; // dropped: killed (kill_on_drop)
        };
        waiting.insert(
            task_id.to_string(),
            Waiting {
                program,
                open,
                generation,
            },
        );
        drop(waiting);
        let map: Weak<Mutex<HashMap<String, Waiting>>> = Arc::downgrade(&self.waiting);
        let (task_id, wait, grace, events) = (
            task_id.to_string(),
            self.config.ask_timeout,
            self.config.kill_grace,
            events.clone(),
        );
        tokio::spawn(async move {
            let why = tokio::select! {
                _ = tokio::time::sleep(wait) => "no answer within ask_timeout",
                _ = events.finished() => "the task ended while the program waited for an answer",
            };
            let expired = map.upgrade().and_then(|map| {
                let mut map = map.lock().ok()?;
                match map.get(&task_id) {
                    Some(w) if w.generation == generation => map.remove(&task_id),
                    _ => None,
                }
            });
            if let Some(mut expired) = expired {
                tracing::info!(task_id, why, "stopping the program");
                expired.program.stop(grace).await;
            }
        });
    }

    fn take_waiting(&self, task_id: &str) -> Option<Waiting> {
        self.waiting.lock().ok()?.remove(task_id)
    }
}

/// What one program line did.
enum Step {
    Next,
    Asked,
    Over,
}

async fn apply(
    line: ProgramLine,
    open: &mut HashMap<String, String>,
    trackers: &mut HashMap<String, Tracker>,
    events: &TaskEvents,
) -> Result<Step, BoxError> {
    match line {
        ProgramLine::Status { text } => events.working(text).await?,
        ProgramLine::Artifact {
            id,
            name,
            text,
            data,
            media_type,
            last,
        } => {
            let mut parts: Vec<Part> = text.map(Part::text).into_iter().collect();
            parts.extend(data.map(Part::data));
            if parts.is_empty() {
                return Err("an artifact line needs `text` or `data`".into());
            }
            if let Some(media_type) = media_type {
                parts = parts
                    .into_iter()
                    .map(|p| p.with_media_type(media_type.clone()))
                    .collect();
            }
            let key = id
                .or_else(|| name.clone())
                .unwrap_or_else(|| "output".into());
            let (artifact, append) = match open.get(&key) {
                Some(artifact_id) => (Artifact::new(parts).with_id(artifact_id.clone()), true),
                None => {
                    let artifact =
                        Artifact::new(parts).with_name(name.unwrap_or_else(|| key.clone()));
                    open.insert(key.clone(), artifact.artifact_id.clone());
                    (artifact, false)
                }
            };
            if last {
                open.remove(&key);
            }
            events.artifact_chunk(artifact, append, last).await?;
        }
        ProgramLine::Progress {
            tracker,
            progress,
            total,
            message,
            state,
        } => {
            let handle = match trackers.get(&tracker) {
                Some(handle) => {
                    if let Some(total) = total {
                        handle.set_total(total).await?;
                    }
                    match (progress, message.clone()) {
                        (Some(p), Some(m)) => handle.set_with_message(p, m).await?,
                        (Some(p), None) => handle.set(p).await?,
                        (None, Some(m)) => handle.set_message(m).await?,
                        (None, None) => {}
                    }
                    handle.clone()
                }
                None => {
                    let mut builder = events.progress().tracker(tracker.clone());
                    if let Some(total) = total {
                        builder = builder.total(total);
                    }
                    if let Some(p) = progress {
                        builder = builder.progress(p);
                    }
                    if let Some(m) = message.clone() {
                        builder = builder.message(m);
                    }
                    let handle = builder.start().await?;
                    trackers.insert(tracker.clone(), handle.clone());
                    handle
                }
            };
            match state {
                Some(TrackerEnd::Completed) => {
                    trackers.remove(&tracker);
                    handle.complete().await?;
                }
                Some(TrackerEnd::Failed) => {
                    trackers.remove(&tracker);
                    handle
                        .fail(message.unwrap_or_else(|| "failed".into()))
                        .await?;
                }
                None => {}
            }
        }
        ProgramLine::Ask { text } => {
            events.ask(text).await?;
            return Ok(Step::Asked);
        }
        ProgramLine::Complete { text } => {
            match text {
                Some(text) => events.complete_with(text).await?,
                None => events.complete().await?,
            }
            return Ok(Step::Over);
        }
        ProgramLine::Fail { text } => return Err(ExecError::Failed(text).into()),
    }
    Ok(Step::Next)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[async_trait]
impl AgentExecutor for ExecAgent {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        if ctx.is_follow_up() {
            // Only a program that asked a question takes a message on its task.
            let Some(mut waiting) = self.take_waiting(&ctx.task_id) else {
                return Err(ExecError::NotWaiting.into());
            };
            let answer = InputLine::Answer {
                text: ctx.text(),
                message: &ctx.message,
            };
            waiting.program.write(&answer.to_line()).await;
            events.working("answered").await?;
            return self.run_lines(waiting.program, waiting.open, &events).await;
        }
        let mut program = self.start(&ctx)?;
        match self.config.mode {
            ExecMode::Text => self.run_text(program, &ctx, &events).await,
            ExecMode::Lines => {
                let first = InputLine::Message {
                    text: ctx.text(),
                    message: &ctx.message,
                    task_id: &ctx.task_id,
                    context_id: &ctx.context_id,
                };
                program.write(&first.to_line()).await;
                if let Err(e) = events
                    .working(format!("running {}", self.config.command))
                    .await
                {
                    program.stop(self.config.kill_grace).await;
                    return Err(e.into());
                }
                self.run_lines(program, HashMap::new(), &events).await
            }
        }
    }
}
