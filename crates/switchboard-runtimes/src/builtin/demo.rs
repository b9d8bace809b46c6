//! The demo agent: real, deterministic work with no network, and every
//! A2A behaviour on demand.
//!
//! | you send | you get |
//! |---|---|
//! | any text | a task: two working statuses, then a `reply` artifact streamed in chunks (your text, its word and character counts, the text reversed), then completed |
//! | `/steps N` | a task with N working statuses (`step i of N`), then a summary artifact |
//! | `/ask` | a task in input-required asking for your name; answer on the same task and it completes with a greeting |
//! | `/approve WHAT` | a task in input-required with a question and an approval form (`a2a.hitl.form`: `approved` boolean, `comment` string); answer with an `a2a.hitl.formResponse` on the same task: `approved: true` completes with a `decision` artifact saying so, anything else with "declined"; or cancel the task |
//! | `/long [S]` | a task that works for S seconds (default 30), a status every 0.5 s; cancel it with CancelTask |
//! | `/progress [S]` | a job of about S seconds (default 6) with three concurrent progress trackers (task-progress extension) |
//! | `/fail [why]` | a task that fails with that reason |
//! | `/reject` | a task the agent rejects |
//! | `/auth` | a task in auth-required (nothing can satisfy it; cancel it) |
//! | `/think TEXT` | a task whose `answer` artifact streams AG-UI-hinted parts: reasoning, answer text and a code block |
//! | `/tool TEXT` | a task whose `answer` artifact holds hinted tool calls (`word_count` succeeds, `dictionary` fails), an error report and the answer |
//! | `/ui TEXT` | calls the first *frontend* tool the message offers (AG-UI `tools`, forwarded by the bridge in `metadata.agui.tools`) with `{"text": TEXT}`: input-required, the status message holding the hinted call; the tool's result (a `tool-result` data part) on the same task completes it with a `result` artifact quoting it |
//! | `/note TEXT` | adds TEXT to the UI's notes (`metadata.agui.state.notes`, as `bridge --forward-state` forwards the UI's state) and reports them as its own state (`agui_state` `{"notes": […]}`) |
//! | `/plan N` | a plan of N steps reported as its state (`agui_state` `{"plan": {"steps": [{"description", "status"}]}}`), each step marked `done` as it is worked on, then a summary |
//! | `/write TEXT` | a `write_document` tool call (hinted `agui_predict_state`: the `document` argument predicts the state's `document`), its result, then the document as its state |
//! | `/message TEXT` | a direct message reply, no task |
//! | `/help` | a direct message listing these commands |
//!
//! Served by `switchboard serve` by default (`--agent demo`); with a zero
//! [`DemoAgent::chunk_delay`] the tests drive every behaviour quickly.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_agui::TaskEventsExt;
use switchboard_agui::hints::{self, AGENT_STATE, PartHints};
use switchboard_agui::hitl::{FORM_TYPE, HitlForm, form_values};
use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents, async_trait};
use switchboard_protocol::progress::ProgressLimits;
use switchboard_protocol::{
    AgentCard, AgentSkill, Message, Part, PartContent, Role, TaskState, TaskStatus,
};

/// The `formId` of `/approve`'s form.
pub const APPROVAL_FORM: &str = "approve";

/// Help text for `/help`, kept in sync with the module docs.
pub const HELP: &str = "\
switchboard demo agent — commands:
  any text        a task that streams a reply artifact and completes
  /steps N        N working statuses, then a summary
  /ask            asks for your name (input-required); answer on the same task
  /approve WHAT   asks to approve WHAT with a form (input-required, a2a.hitl.form);
                  answer with an a2a.hitl.formResponse on the same task, or cancel it
  /long [S]       works for S seconds (default 30); cancel it with CancelTask
  /progress [S]   ~S seconds (default 6) of three concurrent tasks with live progress
                  (activate https://a2a-protocol.org/extensions/task-progress/v1)
  /fail [why]     fails with that reason
  /reject         the agent rejects the task
  /auth           waits in auth-required until canceled
  /think TEXT     reasoning, then an answer and a code block (AG-UI hinted parts)
  /tool TEXT      tool calls with a result and a failure (AG-UI hinted parts)
  /ui TEXT        calls the first frontend tool you offer (AG-UI tools) and waits
                  (input-required) for its result on the same task
  /note TEXT      adds TEXT to the notes of your state, reports them as its state
  /plan N         a plan of N steps in its state, each marked done as it goes
  /write TEXT     writes TEXT with a write_document tool call whose argument
                  predicts the document in its state
  /message TEXT   a direct message reply, no task
  /help           this text";

/// The demo agent.
#[derive(Debug, Default)]
pub struct DemoAgent {
    /// Pause between streamed chunks (lets streams be watched; zero in tests).
    pub chunk_delay: Duration,
}

/// The demo agent's card (interfaces are filled in by the server).
pub fn demo_card() -> AgentCard {
    AgentCard::new(
        "switchboard demo",
        "Analyses text and demonstrates every A2A task behaviour: streaming artifacts, multi-step status, input-required, cancellation, failure and direct replies. Send /help.",
        env!("CARGO_PKG_VERSION"),
    )
    .with_streaming(true)
    .with_extension(ProgressLimits::default().to_extension())
    .with_skill(
        AgentSkill::new("analyse", "Analyse text", "Counts words and characters and reverses your text, streamed in chunks.", &["text", "demo"])
            .with_examples(&["hello world"]),
    )
    .with_skill(
        AgentSkill::new("agui", "AG-UI features", "What AG-UI frontends show through an A2A agent: reasoning (/think), backend tools (/tool), frontend tools (/ui), shared state (/note), a plan in the state (/plan), predicted state (/write).", &["agui", "demo"])
            .with_examples(&["/think count these words", "/tool hello there", "/ui hello", "/note buy milk", "/plan 3", "/write Once upon a time"]),
    )
    .with_skill(
        AgentSkill::new("lifecycle", "Task life-cycle demos", "Commands that show each task state: /steps, /ask, /approve, /long, /fail, /reject, /auth, /message.", &["demo"])
            .with_examples(&["/ask", "/approve the deploy", "/long 10", "/steps 3"]),
    )
}

#[async_trait]
impl AgentExecutor for DemoAgent {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        let text = ctx.text();
        // A follow-up to /approve answers its form.
        if let Some(form) = ctx
            .task
            .as_ref()
            .and_then(|t| t.status.message.as_ref())
            .and_then(HitlForm::find)
            .filter(|f| f.form_id == APPROVAL_FORM)
        {
            return decide(&form, &ctx.message, &events).await;
        }
        // A follow-up to /ui carries the frontend tool's result.
        if let Some(call) = ctx
            .task
            .as_ref()
            .and_then(|t| t.status.message.as_ref())
            .and_then(awaited_call)
        {
            return tool_answered(&call, &ctx.message, &events).await;
        }
        // A follow-up to /ask carries the answer.
        if ctx.is_follow_up() {
            let name = text.trim();
            let name = if name.is_empty() { "stranger" } else { name };
            events.working("got your answer").await?;
            events
                .artifact_text("greeting", format!("Hello, {name}! Nice to meet you."))
                .await?;
            return Ok(());
        }
        let trimmed = text.trim();
        let (cmd, arg) = match trimmed.strip_prefix('/') {
            Some(rest) => {
                let mut it = rest.splitn(2, char::is_whitespace);
                (it.next().unwrap_or(""), it.next().unwrap_or("").trim())
            }
            None => ("", trimmed),
        };
        match cmd {
            "" => self.analyse(arg, &events).await,
            "help" => Ok(events.reply_text(HELP).await?),
            "message" => Ok(events
                .reply(Message::new(
                    Role::Agent,
                    vec![Part::text(format!("You said: {arg}"))],
                ))
                .await?),
            "steps" => {
                let n: u32 = arg.parse().unwrap_or(3).clamp(1, 100);
                for i in 1..=n {
                    events.working(format!("step {i} of {n}")).await?;
                    tokio::time::sleep(self.chunk_delay).await;
                }
                events
                    .artifact_text("summary", format!("finished {n} steps"))
                    .await?;
                Ok(())
            }
            "think" => self.think(arg, &events).await,
            "ui" => frontend_tool(arg, &ctx.message, &events).await,
            "note" => note(arg, &ctx.message, &events).await,
            "plan" => {
                self.plan(arg.parse().unwrap_or(3).clamp(1, 20), &events)
                    .await
            }
            "write" => write(arg, &events).await,
            "tool" => self.tool(arg, &events).await,
            "ask" => Ok(events
                .ask("What is your name? (reply on this task)")
                .await?),
            "approve" => {
                let what = if arg.is_empty() { "the request" } else { arg };
                let form = json!({
                    "type": FORM_TYPE,
                    "formId": APPROVAL_FORM,
                    "title": format!("Approve {what}?"),
                    "fields": [
                        {"name": "approved", "type": "boolean", "label": "Approve", "required": true},
                        {"name": "comment", "type": "string", "label": "Comment"},
                    ],
                    "metadata": {"subject": what},
                });
                let question = Message::new(
                    Role::Agent,
                    vec![
                        Part::text(format!(
                            "Do you approve {what}? Answer with the form (approved, and a comment if you like)."
                        )),
                        Part::data(form),
                    ],
                );
                let status = TaskStatus::new(TaskState::InputRequired).with_message(question);
                Ok(events.status(status, None).await?)
            }
            "long" => {
                let secs: u64 = arg.parse().unwrap_or(30).clamp(1, 3600);
                let ticks = secs * 2;
                for i in 1..=ticks {
                    events
                        .working(format!("working: {i}/{ticks} half-seconds"))
                        .await?;
                    tokio::select! {
                        _ = events.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    }
                }
                events
                    .artifact_text("result", format!("worked for {secs} s"))
                    .await?;
                Ok(())
            }
            "progress" => {
                let secs: f64 = arg.parse().unwrap_or(6.0_f64).clamp(1.0, 600.0);
                self.progress_job(secs, &events).await
            }
            "fail" => {
                events.working("about to fail").await?;
                let why = if arg.is_empty() {
                    "you asked me to fail"
                } else {
                    arg
                };
                Ok(events.fail(why).await?)
            }
            "reject" => Ok(events
                .reject("this agent declines the task, as requested")
                .await?),
            "auth" => {
                events.require_auth("authenticate out of band, then send a message on this task (this demo only accepts cancel)").await?;
                events.cancelled().await;
                Ok(())
            }
            other => Ok(events
                .reply_text(format!("unknown command /{other}\n\n{HELP}"))
                .await?),
        }
    }
}

/// Completes an `/approve` task from the answer to its `form`: approved
/// when the answer's `a2a.hitl.formResponse` says `approved: true`,
/// declined otherwise (no such part, or anything else).
async fn decide(form: &HitlForm, answer: &Message, events: &TaskEvents) -> Result<(), BoxError> {
    let values = form_values(answer, &form.form_id)
        .cloned()
        .unwrap_or(Value::Null);
    let subject = form
        .data
        .get("metadata")
        .and_then(|m| m["subject"].as_str())
        .unwrap_or("the request");
    let mut decision = if values["approved"] == true {
        format!("approved: {subject}")
    } else {
        format!("declined: {subject}")
    };
    if let Some(comment) = values["comment"].as_str().filter(|c| !c.is_empty()) {
        decision.push_str(&format!(" ({comment})"));
    }
    events.working("got your decision").await?;
    events.artifact_text("decision", decision).await?;
    Ok(())
}

/// What the bridge forwards of the AG-UI run in the message's metadata
/// (`metadata.agui.<key>`).
fn agui_metadata<'m>(message: &'m Message, key: &str) -> Option<&'m Value> {
    message.metadata.as_ref()?.get("agui")?.get(key)
}

/// A status update whose metadata reports `state` as the agent's own
/// (`agui_state`: AG-UI UIs show it in the bridge's `/view/state`).
async fn report_state(events: &TaskEvents, note: &str, state: Value) -> Result<(), BoxError> {
    let status = TaskStatus::new(TaskState::Working).with_message(Message::agent_text(note));
    let metadata = switchboard_protocol::Metadata::from_iter([(AGENT_STATE.to_owned(), state)]);
    Ok(events.status(status, Some(metadata)).await?)
}

/// `/ui`: calls the first frontend tool the message offers with
/// `{"text": TEXT}` and waits (input-required) for the client to run it.
async fn frontend_tool(text: &str, message: &Message, events: &TaskEvents) -> Result<(), BoxError> {
    let tool = agui_metadata(message, "tools")
        .and_then(Value::as_array)
        .and_then(|tools| tools.first())
        .and_then(|tool| tool["name"].as_str());
    let Some(tool) = tool else {
        return Ok(events
            .reply_text("/ui calls a frontend tool, and this message offers none (AG-UI tools)")
            .await?);
    };
    let id = format!("{}-{tool}", events.task_id());
    let call = hints::tool_call_part(&id, tool, json!({"text": text}));
    let question = Message::new(Role::Agent, vec![call]);
    let status = TaskStatus::new(TaskState::InputRequired).with_message(question);
    Ok(events.status(status, None).await?)
}

/// The tool call an input-required status message makes (a `/ui` task waiting).
fn awaited_call(message: &Message) -> Option<hints::ToolCallHint> {
    message.parts.iter().find_map(|part| {
        let h = PartHints::read(part);
        (h.role() == hints::PartRole::ToolCall)
            .then(|| hints::read_tool_call(part, &h))
            .flatten()
    })
}

/// Completes a `/ui` task with the result the client sent for `call`
/// (a `tool-result` data part, as the bridge forwards AG-UI tool messages).
async fn tool_answered(
    call: &hints::ToolCallHint,
    answer: &Message,
    events: &TaskEvents,
) -> Result<(), BoxError> {
    let result = answer.parts.iter().find_map(|p| match &p.content {
        PartContent::Data(d)
            if d["type"] == "tool-result" && d["toolCallId"] == call.id.as_str() =>
        {
            Some(match &d["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        }
        _ => None,
    });
    let Some(result) = result else {
        return Ok(events
            .fail(format!("expected the result of tool call {}", call.id))
            .await?);
    };
    events.working("got the tool's result").await?;
    events
        .artifact_text("result", format!("{} answered: {result}", call.name))
        .await?;
    Ok(())
}

/// `/note`: the UI's notes (its state, forwarded by the bridge) plus TEXT,
/// reported as the agent's state.
async fn note(text: &str, message: &Message, events: &TaskEvents) -> Result<(), BoxError> {
    let mut notes: Vec<Value> = agui_metadata(message, "state")
        .and_then(|s| s["notes"].as_array())
        .cloned()
        .unwrap_or_default();
    if !text.is_empty() {
        notes.push(Value::from(text));
    }
    let count = notes.len();
    report_state(events, "noting", json!({"notes": notes})).await?;
    events
        .artifact_text("noted", format!("{count} notes"))
        .await?;
    Ok(())
}

/// `/write`: a `write_document` tool call whose `document` argument
/// predicts the state's `document`, its result, then that state.
async fn write(text: &str, events: &TaskEvents) -> Result<(), BoxError> {
    let document = if text.is_empty() {
        "Once upon a time"
    } else {
        text
    };
    events.working("writing").await?;
    let id = format!("{}-write_document", events.task_id());
    let mut call = hints::tool_call_part(&id, "write_document", json!({"document": document}));
    call.metadata.get_or_insert_with(Default::default).insert(
        hints::PREDICT_STATE.to_owned(),
        json!([{"state_key": "document", "tool_argument": "document"}]),
    );
    let mut writer = events.artifact_writer("document");
    writer.append(call).await?;
    writer
        .finish(hints::tool_result_part(&id, "written", None))
        .await?;
    report_state(events, "written", json!({"document": document})).await?;
    Ok(())
}

impl DemoAgent {
    /// `/plan`: a plan of `n` steps as the agent's state, each step marked
    /// `done` (a new state report: the UI gets the one step's change) as
    /// it is worked on.
    async fn plan(&self, n: u32, events: &TaskEvents) -> Result<(), BoxError> {
        let mut steps: Vec<Value> = (1..=n)
            .map(|i| json!({"description": format!("step {i}"), "status": "pending"}))
            .collect();
        report_state(events, "planned", json!({"plan": {"steps": steps}})).await?;
        for i in 0..steps.len() {
            self.pause().await;
            steps[i]["status"] = json!("done");
            let note = format!("step {} of {n} done", i + 1);
            report_state(events, &note, json!({"plan": {"steps": steps}})).await?;
        }
        events
            .artifact_text("summary", format!("planned and did {n} steps"))
            .await?;
        Ok(())
    }

    /// Three pieces of work in parallel, each with its own tracker: a
    /// download of 40 files, an index of 25 shards, and a scan whose size is
    /// unknown until it ends. Each reports as it goes; the emitter keeps
    /// every update a full snapshot and within the declared rate.
    async fn progress_job(&self, secs: f64, events: &TaskEvents) -> Result<(), BoxError> {
        events.working("starting three jobs").await?;
        let progress = events.progress();
        let jobs = [
            ("download", Some(40_u32), "files"),
            ("index", Some(25), "shards"),
            ("scan", None, "folders"),
        ];
        let mut handles = Vec::new();
        for (i, (id, total, unit)) in jobs.into_iter().enumerate() {
            let mut builder = progress.tracker(id).message(format!("{id}: starting"));
            if let Some(t) = total {
                builder = builder.total(t);
            }
            let tracker = builder.start().await?;
            let events = events.clone();
            // Different speeds so the bars move independently.
            let steps = total.unwrap_or(30);
            let pause = Duration::from_secs_f64(secs * (1.0 - 0.2 * i as f64) / f64::from(steps));
            handles.push(tokio::spawn(async move {
                for n in 1..=steps {
                    tokio::select! {
                        _ = events.cancelled() => return Ok(()),
                        _ = tokio::time::sleep(pause) => {}
                    }
                    tracker
                        .set_with_message(n, format!("{id}: {n} {unit}"))
                        .await?;
                }
                tracker.complete().await
            }));
        }
        for h in handles {
            h.await.map_err(|e| format!("a demo job crashed: {e}"))??;
        }
        if events.is_cancelled() {
            return Ok(());
        }
        events
            .artifact_text(
                "report",
                "downloaded 40 files, indexed 25 shards, scanned 30 folders",
            )
            .await?;
        Ok(())
    }

    async fn pause(&self) {
        if !self.chunk_delay.is_zero() {
            tokio::time::sleep(self.chunk_delay).await;
        }
    }

    /// `/think`: the parts a reasoning model streams, hinted for AG-UI UIs
    /// (seed 004): two thinking chunks of one block, the answer in two text
    /// chunks, then a code block. A2A clients see one ordinary artifact.
    async fn think(&self, text: &str, events: &TaskEvents) -> Result<(), BoxError> {
        let (text, words) = words_of(text);
        events.working("thinking").await?;
        let mut answer = events.agui_writer("answer");
        answer
            .thinking(format!("The message has {words} words. "))
            .await?;
        self.pause().await;
        answer
            .thinking("Counting is enough; I will also show how.")
            .await?;
        self.pause().await;
        answer
            .text(format!("Your message has {words} words"))
            .await?;
        answer.text(", counted like this:").await?;
        self.pause().await;
        answer
            .code(format!("{:?}.split_whitespace().count() == {words}", text))
            .await?;
        answer.finish().await?;
        Ok(())
    }

    /// `/tool`: tool calls as hinted parts — one that succeeds, one that
    /// fails — an error report, and the answer.
    async fn tool(&self, text: &str, events: &TaskEvents) -> Result<(), BoxError> {
        let (text, words) = words_of(text);
        events.working("calling tools").await?;
        let mut answer = events.agui_writer("answer");
        answer
            .thinking("I will count the words with a tool.")
            .await?;
        let count_id = format!("{}-word_count", events.task_id());
        answer
            .tool_call(&count_id, "word_count", json!({"text": text}))
            .await?;
        self.pause().await;
        answer.tool_result(&count_id, &words.to_string()).await?;
        let lookup_id = format!("{}-dictionary", events.task_id());
        let first = text.split_whitespace().next().unwrap_or("");
        answer
            .tool_call(&lookup_id, "dictionary", json!({"word": first}))
            .await?;
        self.pause().await;
        answer
            .tool_error(&lookup_id, "the dictionary is offline in this demo")
            .await?;
        answer
            .error("the dictionary tool failed; answering without it")
            .await?;
        answer
            .text(format!("word_count says your message has {words} words."))
            .await?;
        answer.finish().await?;
        Ok(())
    }

    async fn analyse(&self, text: &str, events: &TaskEvents) -> Result<(), BoxError> {
        events.working("reading your message").await?;
        let words = text.split_whitespace().count();
        let chars = text.chars().count();
        let reversed: String = text.chars().rev().collect();
        events.working("composing the reply").await?;
        let lines = [
            format!("You said: {text}\n"),
            format!("Words: {words}\n"),
            format!("Characters: {chars}\n"),
            format!("Reversed: {reversed}"),
        ];
        let mut writer = events.artifact_writer("reply");
        let last = lines.len() - 1;
        for (i, line) in lines.into_iter().enumerate() {
            if !self.chunk_delay.is_zero() {
                tokio::time::sleep(self.chunk_delay).await;
            }
            if i == last {
                return Ok(writer.finish(Part::text(line)).await?);
            }
            writer.append(Part::text(line)).await?;
        }
        Ok(())
    }
}

/// What `/think` and `/tool` count the words of: the message, or a sample
/// when it is empty (the commands alone still show every kind of part);
/// and how many words it has.
fn words_of(text: &str) -> (&str, usize) {
    let text = if text.is_empty() { "hello world" } else { text };
    (text, text.split_whitespace().count())
}
