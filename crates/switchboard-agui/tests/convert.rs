//! The converter over a matrix of A2A streams: parts with and without hints,
//! statuses, chunked and interleaved artifacts, tool results and errors,
//! every ending, progress, and a reconnect at every point of every stream.
//!
//! Each scenario is checked three ways: the events pass the official
//! client's ordering rules ([`Verifier`]); folded the way a client folds
//! them ([`ClientView`]) they give the expected messages, state and
//! outcome; and a converter resumed after any frame's id sends exactly the
//! rest of the stream.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use serde_json::{Value, json};
use switchboard_agui::convert::Projection;
use switchboard_agui::events::*;
use switchboard_agui::hints::{self, PartHints};
use switchboard_agui::{Converter, ConverterOptions, Frame, ResumePoint, Verifier, patch};
use switchboard_protocol::progress::TASK_PROGRESS_URI;
use switchboard_protocol::{
    Artifact, Message, Metadata, Part, Role, StreamResponse, Task, TaskArtifactUpdateEvent,
    TaskState, TaskStatus, TaskStatusUpdateEvent,
};

const TASK: &str = "task-1";
const CTX: &str = "ctx-1";

fn task() -> StreamResponse {
    StreamResponse::Task(Task {
        id: TASK.into(),
        context_id: CTX.into(),
        status: TaskStatus::new(TaskState::Submitted),
        artifacts: Some(vec![]),
        history: Some(vec![Message::user_text("hi")]),
        metadata: None,
    })
}

fn msg(id: &str, parts: Vec<Part>) -> Message {
    let mut m = Message::new(Role::Agent, parts);
    m.message_id = id.into();
    m
}

fn status(state: TaskState, message: Option<Message>) -> StreamResponse {
    let mut s = TaskStatus::new(state);
    s.message = message;
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: TASK.into(),
        context_id: CTX.into(),
        status: s,
        metadata: None,
    })
}

fn say(state: TaskState, id: &str, text: &str) -> StreamResponse {
    status(state, Some(msg(id, vec![Part::text(text)])))
}

fn art(id: &str, parts: Vec<Part>, append: bool, last: bool) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: TASK.into(),
        context_id: CTX.into(),
        artifact: Artifact::new(parts).with_id(id).with_name(id),
        append,
        last_chunk: last,
        metadata: None,
    })
}

/// The first chunk of artifact `id`, more to come.
fn opens(id: &str, part: Part) -> StreamResponse {
    art(id, vec![part], false, false)
}

/// A chunk appended to artifact `id`, more to come.
fn appends(id: &str, part: Part) -> StreamResponse {
    art(id, vec![part], true, false)
}

fn done() -> StreamResponse {
    status(TaskState::Completed, None)
}

/// A stream numbered like a task log: seq 1, 2, 3, …
fn numbered(items: Vec<StreamResponse>) -> Vec<(u64, StreamResponse)> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, it)| (i as u64 + 1, it))
        .collect()
}

fn convert_all(conv: &mut Converter, items: &[(u64, StreamResponse)]) -> Vec<Frame> {
    items
        .iter()
        .flat_map(|(seq, it)| conv.convert(Some(*seq), it))
        .collect()
}

/// What a client makes of the events.
#[derive(Debug, Default)]
struct ClientView {
    /// id → (role, content)
    messages: BTreeMap<String, (String, String)>,
    /// order of first appearance
    order: Vec<String>,
    /// tool call id → (name, args)
    tool_calls: BTreeMap<String, (String, String)>,
    /// tool call id → (content, is_error)
    results: BTreeMap<String, (String, bool)>,
    state: Value,
    activities: BTreeMap<String, Value>,
    outcomes: Vec<Option<RunFinishedOutcome>>,
    run_ids: Vec<String>,
    errors: Vec<(String, Option<String>)>,
    flagged_errors: Vec<String>,
}

impl ClientView {
    fn fold(frames: &[Frame]) -> ClientView {
        let events: Vec<Event> = frames.iter().map(|f| f.event.clone()).collect();
        if let Err(e) = Verifier::verify_all(&events) {
            panic!(
                "the stream breaks the client's rules: {e}\n{}",
                dump(frames)
            );
        }
        let mut v = ClientView {
            state: Value::Null,
            ..Default::default()
        };
        for e in &events {
            v.apply(e);
        }
        v
    }

    fn new_message(&mut self, id: &str, role: &str) {
        self.messages
            .insert(id.into(), (role.into(), String::new()));
        if !self.order.iter().any(|o| o == id) {
            self.order.push(id.into());
        }
    }

    fn apply(&mut self, e: &Event) {
        match &e.kind {
            EventKind::RunStarted(r) => self.run_ids.push(r.run_id.clone()),
            EventKind::TextMessageStart(m) => {
                self.new_message(&m.message_id, "assistant");
                if e.metadata
                    .as_ref()
                    .is_some_and(|md| md["a2a"]["error"] == true)
                {
                    self.flagged_errors.push(m.message_id.clone());
                }
            }
            EventKind::TextMessageContent(m) => {
                self.messages.get_mut(&m.message_id).unwrap().1 += &m.delta;
            }
            EventKind::ReasoningMessageStart(m) => self.new_message(&m.message_id, "reasoning"),
            EventKind::ReasoningMessageContent(m) => {
                self.messages.get_mut(&m.message_id).unwrap().1 += &m.delta;
            }
            EventKind::ToolCallStart(t) => {
                self.tool_calls.insert(
                    t.tool_call_id.clone(),
                    (t.tool_call_name.clone(), String::new()),
                );
            }
            EventKind::ToolCallArgs(t) => {
                self.tool_calls.get_mut(&t.tool_call_id).unwrap().1 += &t.delta;
            }
            EventKind::ToolCallResult(r) => {
                let Content::Text(c) = &r.content else {
                    panic!("text results only")
                };
                let is_error = e
                    .metadata
                    .as_ref()
                    .is_some_and(|md| md["a2a"]["isError"] == true);
                self.results
                    .insert(r.tool_call_id.clone(), (c.clone(), is_error));
            }
            EventKind::StateSnapshot(s) => self.state = s.snapshot.clone(),
            EventKind::StateDelta(d) => patch::apply(&mut self.state, &d.delta)
                .unwrap_or_else(|err| panic!("a state delta does not apply: {err}")),
            EventKind::ActivitySnapshot(a) => {
                self.activities
                    .insert(a.message_id.clone(), Value::Object(a.content.clone()));
            }
            EventKind::ActivityDelta(a) => {
                let doc = self
                    .activities
                    .get_mut(&a.message_id)
                    .expect("an activity delta before its snapshot");
                patch::apply(doc, &a.patch).expect("an activity delta does not apply");
            }
            EventKind::RunFinished(f) => self.outcomes.push(f.outcome.clone()),
            EventKind::RunError(r) => self.errors.push((r.message.clone(), r.code.clone())),
            _ => {}
        }
    }

    fn texts(&self) -> Vec<(String, String)> {
        self.order
            .iter()
            .map(|id| self.messages[id].clone())
            .collect()
    }
}

fn dump(frames: &[Frame]) -> String {
    frames
        .iter()
        .map(|f| format!("{:?} {}", f.id, serde_json::to_string(&f.event).unwrap()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs a scenario: converts, verifies, checks every reconnect point and
/// returns the client's view.
fn run(items: Vec<StreamResponse>) -> (ClientView, Vec<Frame>) {
    run_with(ConverterOptions::default, items)
}

/// [`run`] with converters made with `options`.
fn run_with(
    options: impl Fn() -> ConverterOptions,
    items: Vec<StreamResponse>,
) -> (ClientView, Vec<Frame>) {
    let items = numbered(items);
    let frames = convert_all(&mut Converter::new(options()), &items);
    // The same items give the same events: ids are derived, never random.
    assert_eq!(frames, convert_all(&mut Converter::new(options()), &items));
    let view = ClientView::fold(&frames);
    for (k, frame) in frames.iter().enumerate() {
        let id = frame
            .id
            .as_deref()
            .expect("every frame of a task stream has an id");
        let point = ResumePoint::parse(id).unwrap();
        let mut resumed = Converter::resuming(options(), point);
        let rest = convert_all(&mut resumed, &items);
        assert_eq!(
            rest,
            frames[k + 1..].to_vec(),
            "resuming after {id} is not the rest of the stream"
        );
    }
    (view, frames)
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn the_text_parts_of_one_status_message_are_lines() {
    let (v, _) = run(vec![
        task(),
        status(
            TaskState::Working,
            Some(msg(
                "s1",
                vec![
                    Part::text("first"),
                    Part::text("second"),
                    Part::text("third"),
                ],
            )),
        ),
        done(),
    ]);
    // As `Message::text` (and so a reconnect's history) has it.
    assert_eq!(v.texts(), owned(&[("assistant", "first\nsecond\nthird")]));
}

#[test]
fn plain_statuses_and_a_chunked_artifact() {
    let (v, frames) = run(vec![
        task(),
        say(TaskState::Working, "s1", "reading"),
        art("reply", vec![Part::text("a")], false, false),
        art("reply", vec![Part::text("b")], true, false),
        art("reply", vec![Part::text("c")], true, true),
        done(),
    ]);
    assert_eq!(
        v.texts(),
        owned(&[("assistant", "reading"), ("assistant", "abc")])
    );
    assert_eq!(v.run_ids, [TASK]);
    assert_eq!(
        v.outcomes,
        [Some(RunFinishedOutcome::Success {
            pending_tool_call_ids: None
        })]
    );
    let reply = &v.state["a2a"]["artifacts"]["reply"];
    assert_eq!(
        reply["parts"],
        json!([{"text": "a"}, {"text": "b"}, {"text": "c"}])
    );
    assert_eq!(reply["lastChunk"], true);
    assert_eq!(v.state["a2a"]["status"]["state"], "completed");
    assert_eq!(v.state["a2a"]["taskId"], TASK);
    // One snapshot, then deltas only.
    let snapshots = frames
        .iter()
        .filter(|f| f.event.type_name() == "STATE_SNAPSHOT")
        .count();
    assert_eq!(snapshots, 1);
    assert_eq!(frames[0].event.type_name(), "RUN_STARTED");
    assert_eq!(frames.last().unwrap().event.type_name(), "RUN_FINISHED");
    // Ids: the last event of an item carries the bare seq.
    assert_eq!(frames.last().unwrap().id.as_deref(), Some("6"));
}

#[test]
fn interleaved_hinted_blocks_in_one_artifact() {
    let (v, _) = run(vec![
        task(),
        opens("ans", hints::thinking_part("let me ", "t1", 0)),
        appends("ans", hints::thinking_part("think", "t1", 0)),
        art("ans", vec![hints::text_part("Hello", "x1", 1)], true, false),
        art(
            "ans",
            vec![
                hints::text_part(" world", "x1", 1),
                hints::thinking_part("again", "t2", 2),
                hints::code_part("fn main() {}", "c1", 3),
            ],
            true,
            false,
        ),
        art(
            "ans",
            vec![
                hints::tool_call_part("call-1", "search", json!({"q": "rust"})),
                hints::tool_result_part("call-1", "3 hits", None),
                hints::tool_call_part("call-2", "fetch", json!({})),
                hints::tool_result_part("call-2", "", Some("timeout")),
            ],
            true,
            false,
        ),
        art("ans", vec![hints::text_part("done", "x2", 6)], true, true),
        done(),
    ]);
    assert_eq!(
        v.texts(),
        owned(&[
            ("reasoning", "let me think"),
            ("assistant", "Hello world"),
            ("reasoning", "again"),
            ("assistant", "```\nfn main() {}\n```"),
            ("assistant", "done"),
        ])
    );
    assert_eq!(
        v.tool_calls["call-1"],
        ("search".to_string(), r#"{"q":"rust"}"#.to_string())
    );
    assert_eq!(v.tool_calls["call-2"].0, "fetch");
    assert_eq!(v.results["call-1"], ("3 hits".to_string(), false));
    assert_eq!(v.results["call-2"], ("timeout".to_string(), true));
}

#[test]
fn two_artifacts_streamed_at_once_stay_apart() {
    let (v, _) = run(vec![
        task(),
        art("a", vec![Part::text("a1 ")], false, false),
        art("b", vec![Part::text("b1 ")], false, false),
        art("a", vec![Part::text("a2")], true, false),
        art("b", vec![Part::text("b2")], true, true),
        art("a", vec![Part::text(" a3")], true, true),
        done(),
    ]);
    assert_eq!(
        v.texts(),
        owned(&[("assistant", "a1 a2 a3"), ("assistant", "b1 b2")])
    );
    assert_eq!(
        v.state["a2a"]["artifacts"]["b"]["parts"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_replaced_artifact_is_a_new_message() {
    let (v, _) = run(vec![
        task(),
        art("r", vec![Part::text("draft")], false, false),
        art("r", vec![Part::text("final")], false, true),
        done(),
    ]);
    assert_eq!(
        v.texts(),
        owned(&[("assistant", "draft"), ("assistant", "final")])
    );
    assert_eq!(
        v.state["a2a"]["artifacts"]["r"]["parts"],
        json!([{"text": "final"}])
    );
}

#[test]
fn data_parts_go_to_the_state_only() {
    let (v, _) = run(vec![
        task(),
        art(
            "table",
            vec![Part::data(json!({"rows": [1, 2]}))],
            false,
            true,
        ),
        done(),
    ]);
    assert!(v.texts().is_empty());
    assert_eq!(
        v.state["a2a"]["artifacts"]["table"]["parts"][0]["data"],
        json!({"rows": [1, 2]})
    );
}

#[test]
fn hinted_blocks_continue_across_status_messages_and_unprefixed_keys_work() {
    let hector = |k: &str, text: &str| {
        let mut md = Metadata::new();
        md.insert("event_type".into(), json!(k));
        md.insert("block_id".into(), json!("think-1"));
        Part::text(text).with_metadata(md)
    };
    let (v, _) = run(vec![
        task(),
        status(
            TaskState::Working,
            Some(msg("s1", vec![hector("thinking", "step one, ")])),
        ),
        status(
            TaskState::Working,
            Some(msg("s2", vec![hector("thinking", "step two")])),
        ),
        say(TaskState::Working, "s3", "plain note"),
        status(
            TaskState::Completed,
            Some(msg("s4", vec![hints::error_part("partial failure")])),
        ),
    ]);
    assert_eq!(
        v.texts(),
        owned(&[
            ("reasoning", "step one, step two"),
            ("assistant", "plain note"),
            ("assistant", "partial failure"),
        ])
    );
    assert_eq!(v.flagged_errors.len(), 1);
    let h = PartHints::read(&hector("thinking", "x"));
    assert_eq!(h.block_id.as_deref(), Some("think-1"));
}

#[test]
fn cancellation_closes_open_blocks_and_ends_cancelled() {
    let (v, frames) = run(vec![
        task(),
        opens("ans", hints::thinking_part("hmm", "t", 0)),
        appends("ans", hints::text_part("partial", "x", 1)),
        status(TaskState::Canceled, None),
    ]);
    assert_eq!(
        v.texts(),
        owned(&[("reasoning", "hmm"), ("assistant", "partial")])
    );
    assert_eq!(v.outcomes, [Some(RunFinishedOutcome::Cancelled)]);
    let tail: Vec<&str> = frames
        .iter()
        .rev()
        .take(2)
        .map(|f| f.event.type_name())
        .collect();
    assert_eq!(tail, ["RUN_FINISHED", "STATE_DELTA"]);
}

#[test]
fn failed_and_rejected_are_run_errors() {
    for (state, code) in [
        (TaskState::Failed, "a2a:failed"),
        (TaskState::Rejected, "a2a:rejected"),
    ] {
        let (v, frames) = run(vec![
            task(),
            art("x", vec![Part::text("half")], false, false),
            say(state, "s9", "disk full"),
        ]);
        assert_eq!(
            v.errors,
            [("disk full".to_string(), Some(code.to_string()))]
        );
        assert!(v.outcomes.is_empty());
        assert_eq!(frames.last().unwrap().event.type_name(), "RUN_ERROR");
        // The reason is not repeated as a chat message.
        assert_eq!(v.texts(), owned(&[("assistant", "half")]));
    }
    // Without a message there is still a reason.
    let (v, _) = run(vec![task(), status(TaskState::Failed, None)]);
    assert_eq!(v.errors[0].0, "the task failed");
}

#[test]
fn input_required_is_an_interrupt_and_a_continued_log_is_a_new_run() {
    let (v, frames) = run(vec![
        task(),
        say(TaskState::InputRequired, "q", "What is your name?"),
        say(TaskState::Working, "w", "got it"),
        art("greeting", vec![Part::text("Hello, Ada")], false, true),
        done(),
    ]);
    let Some(RunFinishedOutcome::Interrupt { interrupts }) = &v.outcomes[0] else {
        panic!("the first run ends in an interrupt: {:?}", v.outcomes)
    };
    // Named by the status message ("q"), as a GetTask snapshot names it too.
    assert_eq!(interrupts[0].id, format!("{TASK}:q"));
    assert_eq!(interrupts[0].reason, "input_required");
    assert_eq!(interrupts[0].message.as_deref(), Some("What is your name?"));
    assert_eq!(interrupts[0].metadata.as_ref().unwrap()["taskId"], TASK);
    assert_eq!(v.run_ids, [TASK.to_string(), format!("{TASK}:1")]);
    assert!(matches!(
        v.outcomes[1],
        Some(RunFinishedOutcome::Success { .. })
    ));
    // The interrupt is preceded by a full state snapshot.
    let i = frames
        .iter()
        .position(|f| f.event.type_name() == "RUN_FINISHED")
        .unwrap();
    assert_eq!(frames[i - 1].event.type_name(), "STATE_SNAPSHOT");
    assert_eq!(
        v.texts(),
        owned(&[
            ("assistant", "What is your name?"),
            ("assistant", "got it"),
            ("assistant", "Hello, Ada"),
        ])
    );
}

#[test]
fn auth_required_is_an_interrupt_with_its_own_reason() {
    let (v, _) = run(vec![task(), say(TaskState::AuthRequired, "a", "log in")]);
    let Some(RunFinishedOutcome::Interrupt { interrupts }) = &v.outcomes[0] else {
        panic!("an interrupt")
    };
    assert_eq!(interrupts[0].reason, "a2a:auth_required");
}

#[test]
fn progress_is_one_activity_snapshot_then_deltas() {
    let progress = |n: u32, text: &str| {
        let mut md = Metadata::new();
        md.insert(
            TASK_PROGRESS_URI.into(),
            json!({"trackers": [{"id": "dl", "progress": n, "total": 3}]}),
        );
        let mut s = TaskStatus::new(TaskState::Working);
        s.message = Some(msg(&format!("p{n}"), vec![Part::text(text)]));
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: TASK.into(),
            context_id: CTX.into(),
            status: s,
            metadata: Some(md),
        })
    };
    let (v, frames) = run(vec![
        task(),
        progress(1, "dl: 1/3"),
        progress(2, "dl: 2/3"),
        progress(3, "dl: 3/3"),
        done(),
    ]);
    let id = format!("{TASK}:progress");
    assert_eq!(v.activities[&id]["trackers"][0]["progress"], 3);
    let kinds: Vec<&str> = frames
        .iter()
        .map(|f| f.event.type_name())
        .filter(|t| t.starts_with("ACTIVITY"))
        .collect();
    assert_eq!(
        kinds,
        ["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "ACTIVITY_DELTA"]
    );
    // The progress summaries are not chat messages.
    assert!(v.texts().is_empty());
}

#[test]
fn a_direct_message_reply_is_a_run_with_one_message() {
    let reply = Message::agent_text("pong").with_context_id(CTX);
    let id = reply.message_id.clone();
    let mut conv = Converter::new(ConverterOptions::default());
    let frames = conv.convert(None, &StreamResponse::Message(reply));
    let v = ClientView::fold(&frames);
    assert_eq!(v.texts(), owned(&[("assistant", "pong")]));
    assert_eq!(v.run_ids, [id]);
    assert!(frames.iter().all(|f| f.id.is_none()));
    assert!(conv.is_over());
}

#[test]
fn a_snapshot_mid_task_renders_what_it_holds() {
    let mut t = Task {
        id: TASK.into(),
        context_id: CTX.into(),
        status: TaskStatus::new(TaskState::Working)
            .with_message(msg("s1", vec![Part::text("halfway")])),
        artifacts: Some(vec![Artifact::new(vec![Part::text("so far")]).with_id("r")]),
        history: None,
        metadata: None,
    };
    t.status.timestamp = None;
    let (v, _) = run(vec![StreamResponse::Task(t), done()]);
    assert_eq!(
        v.texts(),
        owned(&[("assistant", "so far"), ("assistant", "halfway")])
    );
}

#[test]
fn a_broken_stream_ends_in_run_error_without_id() {
    let mut conv = Converter::new(ConverterOptions::default());
    let mut frames = conv.convert(Some(1), &task());
    frames.extend(conv.convert(Some(2), &art("a", vec![Part::text("x")], false, false)));
    frames.extend(conv.fail("connection lost", "a2a:stream_broken"));
    let v = ClientView::fold(&frames);
    assert_eq!(v.errors[0].1.as_deref(), Some("a2a:stream_broken"));
    assert!(frames.last().unwrap().id.is_none());
    assert!(conv.fail("again", "x").is_empty());
}

#[test]
fn options_name_the_run_and_echo_the_input() {
    let input = RunAgentInput {
        thread_id: "thread-9".into(),
        run_id: "run-9".into(),
        ..Default::default()
    };
    let mut conv = Converter::new(ConverterOptions {
        thread_id: Some("thread-9".into()),
        run_id: Some("run-9".into()),
        input: Some(input.clone()),
        timestamps: true,
        projection: Projection::A2a,
    });
    let frames = conv.convert(Some(1), &task());
    let EventKind::RunStarted(r) = &frames[0].event.kind else {
        panic!("run started first")
    };
    assert_eq!(
        (r.thread_id.as_str(), r.run_id.as_str()),
        ("thread-9", "run-9")
    );
    assert_eq!(r.input.as_deref(), Some(&input));
    assert_eq!(r.protocol_version.as_deref(), Some("1.0"));
    assert!(frames.iter().all(|f| f.event.timestamp.is_some()));
}

#[test]
fn resume_ids_parse_and_refuse_garbage() {
    assert_eq!(
        ResumePoint::parse("12").unwrap(),
        ResumePoint {
            seq: 12,
            index: None
        }
    );
    assert_eq!(
        ResumePoint::parse("12.3").unwrap(),
        ResumePoint {
            seq: 12,
            index: Some(3)
        }
    );
    for bad in ["", "x", "1.", "1.x", "-1"] {
        assert!(ResumePoint::parse(bad).is_err(), "{bad}");
    }
}

mod random {
    //! Random streams: any mix of parts, hints, artifacts and chunk flags,
    //! ending in any state, must satisfy the client's rules and resume exactly.
    use super::*;
    use proptest::prelude::*;

    fn part() -> impl Strategy<Value = Part> {
        prop_oneof![
            "[a-z \\n]{0,6}".prop_map(Part::text),
            ("[a-z]{0,4}", 0..2u8).prop_map(|(t, b)| hints::thinking_part(t, &format!("t{b}"), 0)),
            ("[a-z]{0,4}", 0..2u8).prop_map(|(t, b)| hints::text_part(t, &format!("x{b}"), 1)),
            "[a-z]{0,4}".prop_map(|t| hints::code_part(t, "c", 2)),
            (0..3u8).prop_map(|i| hints::tool_call_part(&format!("call{i}"), "t", json!({"i": i}))),
            (0..3u8, any::<bool>()).prop_map(|(i, bad)| hints::tool_result_part(
                &format!("call{i}"),
                "ok",
                bad.then_some("bad")
            )),
            "[a-z]{1,4}".prop_map(hints::error_part),
            Just(Part::data(json!({"k": [1, 2]}))),
            // Another agent's output: text, reasoning and tool calls of
            // one of two subagent runs.
            ("[a-z]{0,4}", 0..2u8).prop_map(|(t, s)| subagent(s, Part::text(t))),
            ("[a-z]{0,4}", 0..2u8).prop_map(|(t, s)| subagent(s, hints::thinking_part(t, "st", 0))),
            (0..2u8).prop_map(|s| subagent(
                s,
                hints::tool_call_part(&format!("sub-call{s}"), "t", json!({}))
            )),
            Just(predicted(hints::tool_call_part(
                "write",
                "write",
                json!({"d": "x"})
            ))),
        ]
    }

    fn subagent(run: u8, part: Part) -> Part {
        PartHints::default()
            .from_subagent(&format!("sub{run}"), "helper")
            .apply(part)
    }

    fn predicted(mut part: Part) -> Part {
        part.metadata.get_or_insert_with(Metadata::new).insert(
            hints::PREDICT_STATE.to_owned(),
            json!([{"state_key": "d", "tool_argument": "d"}]),
        );
        part
    }

    fn item() -> impl Strategy<Value = StreamResponse> {
        prop_oneof![
            3 => (0..2u8, proptest::collection::vec(part(), 1..3), any::<bool>(), any::<bool>())
                .prop_map(|(a, parts, append, last)| art(&format!("art{a}"), parts, append, last)),
            1 => proptest::collection::vec(part(), 1..3)
                .prop_map(|parts| status(TaskState::Working, Some(msg("m", parts)))),
            1 => "[a-z]{1,5}".prop_map(|t| say(TaskState::Working, &format!("s-{t}"), &t)),
        ]
    }

    fn ending() -> impl Strategy<Value = StreamResponse> {
        prop_oneof![
            Just(done()),
            Just(status(TaskState::Canceled, None)),
            Just(say(TaskState::Failed, "f", "broke")),
            Just(say(TaskState::Rejected, "r", "no")),
            Just(say(TaskState::InputRequired, "q", "more?")),
            Just(status(
                TaskState::InputRequired,
                Some(msg(
                    "ui",
                    vec![hints::tool_call_part("ui-call", "show", json!({}))]
                ))
            )),
        ]
    }

    /// Status message ids made unique per stream, as A2A's are.
    fn unique_status_ids(body: Vec<StreamResponse>) -> Vec<StreamResponse> {
        body.into_iter()
            .enumerate()
            .map(|(i, it)| match it {
                StreamResponse::StatusUpdate(mut u) => {
                    if let Some(m) = &mut u.status.message {
                        m.message_id = format!("{}-{i}", m.message_id);
                    }
                    StreamResponse::StatusUpdate(u)
                }
                other => other,
            })
            .collect()
    }

    /// `cases` runs, none of them saved: a failure prints its case.
    fn config(cases: u32) -> ProptestConfig {
        ProptestConfig {
            cases,
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    /// A task's stream: the task, up to `len` of `body`'s items (status
    /// message ids made unique) and `end`'s item, if any.
    fn stream(
        body: impl Strategy<Value = StreamResponse>,
        len: std::ops::Range<usize>,
        end: impl Strategy<Value = Option<StreamResponse>>,
    ) -> impl Strategy<Value = Vec<StreamResponse>> {
        (proptest::collection::vec(body, len), end).prop_map(|(body, end)| {
            let mut items = vec![task()];
            items.extend(unique_status_ids(body));
            items.extend(end);
            items
        })
    }

    proptest! {
        #![proptest_config(config(128))]
        #[test]
        fn any_stream_is_valid_and_resumable(
            items in stream(item(), 0..8, ending().prop_map(Some)),
        ) {
            let (view, frames) = run(items);
            prop_assert_eq!(frames[0].event.type_name(), "RUN_STARTED");
            let last = frames.last().unwrap().event.type_name();
            prop_assert!(last == "RUN_FINISHED" || last == "RUN_ERROR", "{}", last);
            prop_assert!(view.run_ids.len() == 1);
        }
    }

    /// The state document the module docs describe, folded straight from
    /// the A2A items (up to the first terminal one): the oracle the
    /// client's copy must equal.
    fn expected_state(items: &[StreamResponse]) -> Value {
        let mut artifacts = serde_json::Map::new();
        let mut status = Value::Null;
        let put_status = |s: &TaskStatus| {
            let mut v = json!({"state": s.state.label()});
            if let Some(m) = &s.message {
                v["message"] = json!(m.text());
            }
            if let Some(ts) = &s.timestamp {
                v["timestamp"] = json!(switchboard_protocol::serde_util::format_timestamp(ts));
            }
            v
        };
        let put_artifact = |artifacts: &mut serde_json::Map<String, Value>,
                            a: &Artifact,
                            append: bool,
                            last: bool| {
            let parts: Vec<Value> = a
                .parts
                .iter()
                .map(|p| serde_json::to_value(p).unwrap())
                .collect();
            match artifacts.get_mut(&a.artifact_id) {
                Some(entry) if append => {
                    entry["parts"].as_array_mut().unwrap().extend(parts);
                    entry["lastChunk"] = json!(last);
                }
                _ => {
                    let mut entry = json!({"parts": parts, "lastChunk": last});
                    if let Some(n) = &a.name {
                        entry["name"] = json!(n);
                    }
                    if let Some(d) = &a.description {
                        entry["description"] = json!(d);
                    }
                    artifacts.insert(a.artifact_id.clone(), entry);
                }
            }
        };
        for item in items {
            match item {
                StreamResponse::Task(t) => {
                    for a in t.artifacts() {
                        put_artifact(&mut artifacts, a, false, true);
                    }
                    status = put_status(&t.status);
                }
                StreamResponse::ArtifactUpdate(u) => {
                    put_artifact(&mut artifacts, &u.artifact, u.append, u.last_chunk)
                }
                StreamResponse::StatusUpdate(u) => status = put_status(&u.status),
                _ => unreachable!("the generator makes no other items"),
            }
            if item.is_final() {
                break;
            }
        }
        json!({"a2a": {"taskId": TASK, "contextId": CTX, "status": status, "artifacts": artifacts}})
    }

    fn state_item() -> impl Strategy<Value = StreamResponse> {
        let progress = |n: u32| {
            let mut md = Metadata::new();
            md.insert(
                TASK_PROGRESS_URI.into(),
                json!({"trackers": [{"id": "p", "progress": n}]}),
            );
            let mut s = TaskStatus::new(TaskState::Working);
            s.message = Some(msg(&format!("p{n}"), vec![Part::text(format!("{n}/3"))]));
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: TASK.into(),
                context_id: CTX.into(),
                status: s,
                metadata: Some(md),
            })
        };
        prop_oneof![
            // Chunks of three artifacts: new, appended, replaced, renamed.
            4 => (0..3u8, proptest::collection::vec(part(), 1..3), any::<bool>(), any::<bool>())
                .prop_map(|(a, parts, append, last)| art(&format!("art/{a}"), parts, append, last)),
            1 => (0..3u8, "[a-z]{1,3}", any::<bool>()).prop_map(|(a, name, append)| {
                let mut artifact = Artifact::new(vec![Part::text(name.clone())])
                    .with_id(format!("art/{a}"))
                    .with_name(name.clone());
                artifact.description = (name.len() > 1).then(|| format!("about {name}"));
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: TASK.into(),
                    context_id: CTX.into(),
                    artifact,
                    append,
                    last_chunk: false,
                    metadata: None,
                })
            }),
            // Statuses: with and without text, repeated ones, progress.
            1 => "[a-c]{1,2}".prop_map(|t| say(TaskState::Working, &format!("s-{t}"), &t)),
            1 => Just(status(TaskState::Working, None)),
            1 => (1..3u32).prop_map(progress),
            // A pause mid-log: the next item starts a new run.
            1 => Just(say(TaskState::InputRequired, "q", "more?")),
        ]
    }

    proptest! {
        #![proptest_config(config(256))]
        /// The incremental state: whatever the A2A items, the STATE_SNAPSHOT
        /// with every STATE_DELTA after it applied (in order, each one
        /// cleanly) is the state document of everything converted.
        #[test]
        fn snapshot_plus_deltas_is_the_final_state(
            items in stream(state_item(), 0..12, proptest::option::of(ending())),
        ) {
            let mut converter = Converter::new(ConverterOptions::default());
            let frames = convert_all(&mut converter, &numbered(items.clone()));
            // ClientView applies every delta, failing on one that does not apply.
            let view = ClientView::fold(&frames);
            let expected = expected_state(&items);
            prop_assert_eq!(&view.state, &expected);
            prop_assert_eq!(&converter.state(), &expected);
        }
    }

    proptest! {
        #![proptest_config(config(128))]
        /// The view projection over the same streams: valid, resumable, its
        /// snapshot plus deltas is the converter's document, the client's
        /// own keys survive, and the task and artifacts agree with the
        /// `{"a2a": …}` oracle.
        #[test]
        fn any_stream_in_the_view_is_valid_and_resumable(
            items in stream(state_item(), 0..10, proptest::option::of(ending())),
        ) {
            let options = || ConverterOptions {
                input: Some(RunAgentInput {
                    state: Some(json!({"ui": {"tab": 1}, "view": {"config": {"k": 1}}})),
                    ..Default::default()
                }),
                projection: Projection::View,
                ..Default::default()
            };
            let (view, frames) = run_with(options, items.clone());
            prop_assert_eq!(frames[0].event.type_name(), "RUN_STARTED");
            let mut converter = Converter::new(options());
            convert_all(&mut converter, &numbered(items.clone()));
            prop_assert_eq!(&view.state, &converter.state());
            prop_assert_eq!(&view.state["ui"], &json!({"tab": 1}));
            prop_assert_eq!(&view.state["view"]["config"], &json!({"k": 1}));
            prop_assert_eq!(&view.state["view"]["contextId"], &json!(CTX));
            let oracle = &expected_state(&items)["a2a"];
            let task = &view.state["view"]["tasksById"][TASK];
            prop_assert_eq!(&task["state"], &oracle["status"]["state"]);
            prop_assert_eq!(&task["message"], &oracle["status"]["message"]);
            let artifacts = view.state["view"]["artifacts"].as_object().unwrap();
            prop_assert_eq!(artifacts.len(), oracle["artifacts"].as_object().unwrap().len());
            for (id, entry) in artifacts {
                prop_assert_eq!(&entry["taskId"], &json!(TASK));
                prop_assert_eq!(&entry["parts"], &oracle["artifacts"][id]["parts"]);
                prop_assert_eq!(&entry["lastChunk"], &oracle["artifacts"][id]["lastChunk"]);
                prop_assert_eq!(&entry["name"], &oracle["artifacts"][id]["name"]);
            }
        }
    }
}

mod view_projection {
    //! The bridge's projection (ADR 0003): the view document, Engram config,
    //! HITL forms and resume runs, and legacy text-only agents.
    use super::*;
    use switchboard_agui::PendingInterrupt;
    use switchboard_agui::convert::{HITL_FORM_ACTIVITY, interrupt_id};
    use switchboard_agui::hitl::FORM_TYPE;
    use switchboard_agui::view::ENGRAM_URI;

    fn options(projection: Projection, state: Value) -> ConverterOptions {
        ConverterOptions {
            thread_id: Some("thread-1".into()),
            run_id: Some("run-1".into()),
            input: Some(RunAgentInput {
                thread_id: "thread-1".into(),
                run_id: "run-1".into(),
                state: Some(state),
                ..Default::default()
            }),
            projection,
            ..Default::default()
        }
    }

    fn view(state: Value) -> impl Fn() -> ConverterOptions {
        move || options(Projection::View, state.clone())
    }

    fn types(frames: &[Frame]) -> Vec<&'static str> {
        frames.iter().map(|f| f.event.type_name()).collect()
    }

    fn with_metadata(item: StreamResponse, key: &str, value: Value) -> StreamResponse {
        let mut md = Metadata::new();
        md.insert(key.into(), value);
        match item {
            StreamResponse::StatusUpdate(mut u) => {
                u.metadata = Some(md);
                StreamResponse::StatusUpdate(u)
            }
            StreamResponse::ArtifactUpdate(mut u) => {
                u.metadata = Some(md);
                StreamResponse::ArtifactUpdate(u)
            }
            other => other,
        }
    }

    #[test]
    fn the_view_keeps_the_clients_state_and_tracks_the_task() {
        let client = json!({
            "draft": "unsent text",
            "view": {
                "contextId": "ctx-0",
                "tasksById": {"t0": {"taskId": "t0", "contextId": "ctx-0", "state": "completed"}},
                "config": {"theme": "dark"},
                "somethingElse": 1,
            },
        });
        let (v, frames) = run_with(
            view(client),
            vec![
                task(),
                say(TaskState::Working, "s1", "reading"),
                opens("reply", Part::text("a")),
                appends("reply", Part::text("b")),
                art("reply", vec![Part::text("c")], true, true),
                done(),
            ],
        );
        let mut state = v.state.clone();
        let timestamp = state["view"]["tasksById"][TASK]
            .as_object_mut()
            .unwrap()
            .remove("timestamp");
        assert!(timestamp.is_some_and(|t| t.is_string()));
        assert_eq!(
            state,
            json!({
                "draft": "unsent text",
                "view": {
                    "contextId": CTX,
                    "tasksById": {
                        "t0": {"taskId": "t0", "contextId": "ctx-0", "state": "completed"},
                        TASK: {"taskId": TASK, "contextId": CTX, "state": "completed"},
                    },
                    "pendingInterrupts": {},
                    "artifacts": {"reply": {
                        "taskId": TASK, "name": "reply", "lastChunk": true,
                        "parts": [{"text": "a"}, {"text": "b"}, {"text": "c"}],
                    }},
                    "config": {"theme": "dark"},
                    "state": {},
                },
            })
        );
        // The first state event is a snapshot that keeps the client's keys;
        // everything after it is a delta.
        let states: Vec<&Frame> = frames
            .iter()
            .filter(|f| f.event.type_name().starts_with("STATE_"))
            .collect();
        let EventKind::StateSnapshot(first) = &states[0].event.kind else {
            panic!("a snapshot first")
        };
        assert_eq!(first.snapshot["draft"], "unsent text");
        assert!(
            states[1..]
                .iter()
                .all(|f| f.event.type_name() == "STATE_DELTA")
        );
        // Appended chunks are one add per part, never a whole-entry replace.
        let ops: Vec<(String, String)> = states[1..]
            .iter()
            .flat_map(|f| match &f.event.kind {
                EventKind::StateDelta(d) => d.delta.clone(),
                _ => vec![],
            })
            .filter(|op| op.path.starts_with("/view/artifacts/reply"))
            .map(|op| (format!("{:?}", op.op), op.path))
            .collect();
        assert_eq!(
            ops,
            [
                ("Add".to_string(), "/view/artifacts/reply".to_string()),
                (
                    "Add".to_string(),
                    "/view/artifacts/reply/parts/1".to_string()
                ),
                (
                    "Add".to_string(),
                    "/view/artifacts/reply/parts/2".to_string()
                ),
                (
                    "Replace".to_string(),
                    "/view/artifacts/reply/lastChunk".to_string()
                ),
            ]
        );
    }

    #[test]
    fn engram_config_is_merged_into_the_view_key_by_key() {
        let items = vec![
            task(),
            with_metadata(
                say(TaskState::Working, "s1", "configuring"),
                ENGRAM_URI,
                json!({"model": "m1", "temperature": 1}),
            ),
            with_metadata(
                art("out", vec![Part::text("x")], false, true),
                ENGRAM_URI,
                json!({"temperature": 2}),
            ),
            with_metadata(done(), ENGRAM_URI, json!("not an object")),
        ];
        let (v, frames) = run_with(
            view(json!({"view": {"config": {"model": "m1"}}})),
            items.clone(),
        );
        assert_eq!(
            v.state["view"]["config"],
            json!({"model": "m1", "temperature": 2})
        );
        let config_ops: Vec<String> = frames
            .iter()
            .flat_map(|f| match &f.event.kind {
                EventKind::StateDelta(d) => d.delta.clone(),
                _ => vec![],
            })
            .filter(|op| op.path.starts_with("/view/config"))
            .map(|op| format!("{:?} {} {}", op.op, op.path, op.value.unwrap()))
            .collect();
        // "model" did not change: no operation for it.
        assert_eq!(
            config_ops,
            [
                "Add /view/config/temperature 1",
                "Replace /view/config/temperature 2"
            ]
        );
        // The a2a projection has no config.
        let (a2a, _) = run(items);
        assert!(a2a.state.get("view").is_none());
        assert!(a2a.state["a2a"].get("config").is_none());
    }

    fn form() -> Value {
        json!({
            "type": FORM_TYPE, "formId": "approve-1", "title": "Approve the transfer?",
            "fields": [
                {"name": "approved", "type": "boolean", "required": true},
                {"name": "comment", "type": "string"},
            ],
        })
    }

    fn ask_status(state: TaskState) -> TaskStatus {
        TaskStatus::new(state).with_message(msg(
            "ask-1",
            vec![Part::text("Approve the transfer?"), Part::data(form())],
        ))
    }

    fn asking() -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: TASK.into(),
            context_id: CTX.into(),
            status: ask_status(TaskState::InputRequired),
            metadata: None,
        })
    }

    /// The task as GetTask (or a stream's first item) shows it while it waits.
    fn waiting_task(state: TaskState) -> Task {
        Task {
            id: TASK.into(),
            context_id: CTX.into(),
            status: ask_status(state),
            artifacts: None,
            history: None,
            metadata: None,
        }
    }

    const INTERRUPT: &str = "task-1:ask-1";

    #[test]
    fn a_form_is_an_interrupt_with_its_form_schema_and_activity() {
        for projection in [Projection::A2a, Projection::View] {
            let (v, frames) = run_with(
                || options(projection, json!({})),
                vec![task(), say(TaskState::Working, "w", "checking"), asking()],
            );
            let Some(RunFinishedOutcome::Interrupt { interrupts }) = &v.outcomes[0] else {
                panic!("an interrupt: {:?}", v.outcomes)
            };
            let interrupt = &interrupts[0];
            assert_eq!(interrupt.id, INTERRUPT);
            assert_eq!(interrupt.reason, "input_required");
            assert_eq!(interrupt.message.as_deref(), Some("Approve the transfer?"));
            let metadata = interrupt.metadata.as_ref().unwrap();
            assert_eq!(metadata["form"], form());
            assert_eq!(metadata["taskId"], TASK);
            assert_eq!(
                interrupt.response_schema.clone().map(Value::Object),
                Some(json!({
                    "type": "object",
                    "properties": {
                        "approved": {"type": "boolean"},
                        "comment": {"type": "string"},
                    },
                    "required": ["approved"],
                }))
            );
            // The activity, then the full state, then the interrupt.
            assert_eq!(
                types(&frames)[frames.len() - 3..],
                ["ACTIVITY_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]
            );
            let EventKind::ActivitySnapshot(a) = &frames[frames.len() - 3].event.kind else {
                panic!("the form activity")
            };
            assert_eq!(a.activity_type, HITL_FORM_ACTIVITY);
            assert_eq!(
                v.activities[INTERRUPT],
                json!({"stage": "awaiting_input", "taskId": TASK, "form": form(),
                       "text": "Approve the transfer?"})
            );
            // Text and activity messages share ids: the question's is its own.
            let question_ids: Vec<&str> = frames
                .iter()
                .filter_map(|f| match &f.event.kind {
                    EventKind::TextMessageStart(m) => Some(m.message_id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(question_ids.last(), Some(&"task-1:ask-1:question"));
            // The question is the run's last assistant message; the form is not text.
            assert_eq!(
                v.texts(),
                owned(&[
                    ("assistant", "checking"),
                    ("assistant", "Approve the transfer?")
                ])
            );
            if projection == Projection::View {
                assert_eq!(
                    v.state["view"]["pendingInterrupts"],
                    json!({INTERRUPT: {"interruptId": INTERRUPT, "taskId": TASK,
                        "contextId": CTX, "reason": "input_required", "formId": "approve-1"}})
                );
                assert_eq!(
                    v.state["view"]["tasksById"][TASK]["state"],
                    "input-required"
                );
            }
        }
        // A GetTask snapshot names the same interrupt and form.
        let pending = PendingInterrupt::of_task(&waiting_task(TaskState::InputRequired)).unwrap();
        assert_eq!(pending.id, INTERRUPT);
        assert_eq!(pending.form.map(|f| Value::Object(f.data)), Some(form()));
        assert_eq!(
            PendingInterrupt::of_task(&waiting_task(TaskState::Working)),
            None
        );
        // Without a status message the stream's seq names it.
        assert_eq!(interrupt_id(TASK, None, 7), "task-1:7");
    }

    /// The first run (interrupted), then a resume run answering it with
    /// `resume`, fed `rest`: both runs' frames, and the client's view of
    /// them in one stream (the client keeps its messages across runs).
    fn interrupted_then_resumed(
        projection: Projection,
        resume: ResumeEntry,
        rest: Vec<StreamResponse>,
    ) -> (ClientView, Vec<Frame>, Vec<Frame>) {
        let first_items = numbered(vec![task(), asking()]);
        let first = convert_all(
            &mut Converter::new(options(projection, json!({"draft": 1}))),
            &first_items,
        );
        let client_state = ClientView::fold(&first).state;
        let pending = PendingInterrupt::of_task(&waiting_task(TaskState::InputRequired)).unwrap();
        let mut resumed =
            Converter::for_resume_run(options(projection, client_state), &[resume], &[pending]);
        let second: Vec<Frame> = rest
            .iter()
            .enumerate()
            .flat_map(|(i, item)| resumed.convert(Some(3 + i as u64), item))
            .collect();
        let both: Vec<Frame> = first.iter().chain(&second).cloned().collect();
        (ClientView::fold(&both), first, second)
    }

    #[test]
    fn a_resume_run_shows_the_decision_then_streams_to_completion() {
        for projection in [Projection::A2a, Projection::View] {
            let (v, _, second) = interrupted_then_resumed(
                projection,
                ResumeEntry {
                    interrupt_id: INTERRUPT.into(),
                    status: ResumeStatus::Resolved,
                    payload: Some(json!({"approved": true})),
                    metadata: None,
                },
                vec![
                    // The task as it was when the answer arrived: no new interrupt.
                    StreamResponse::Task(waiting_task(TaskState::InputRequired)),
                    say(TaskState::Working, "w2", "approved, transferring"),
                    art("receipt", vec![Part::text("done: approved")], false, true),
                    done(),
                ],
            );
            assert_eq!(
                types(&second)[..3],
                ["RUN_STARTED", "ACTIVITY_DELTA", "STATE_SNAPSHOT"]
            );
            let EventKind::ActivityDelta(d) = &second[1].event.kind else {
                panic!("the decision")
            };
            assert_eq!(d.message_id, INTERRUPT);
            assert_eq!(d.activity_type, HITL_FORM_ACTIVITY);
            assert_eq!(
                v.activities[INTERRUPT],
                json!({"stage": "completed", "taskId": TASK, "form": form(),
                       "text": "Approve the transfer?",
                       "decision": {"status": "resolved", "payload": {"approved": true}}})
            );
            // The question is not repeated; the run ends in success.
            assert_eq!(
                v.texts(),
                owned(&[
                    ("assistant", "Approve the transfer?"),
                    ("assistant", "approved, transferring"),
                    ("assistant", "done: approved"),
                ])
            );
            assert_eq!(v.outcomes.len(), 2);
            assert!(matches!(
                v.outcomes[1],
                Some(RunFinishedOutcome::Success { .. })
            ));
            if projection == Projection::View {
                let EventKind::StateSnapshot(s) = &second[2].event.kind else {
                    panic!("the state")
                };
                assert_eq!(s.snapshot["view"]["pendingInterrupts"], json!({}));
                assert_eq!(s.snapshot["draft"], 1);
                assert_eq!(v.state["view"]["pendingInterrupts"], json!({}));
                assert_eq!(v.state["view"]["tasksById"][TASK]["state"], "completed");
            }
        }
    }

    #[test]
    fn a_cancelled_resume_shows_the_decision_and_ends_cancelled() {
        for projection in [Projection::A2a, Projection::View] {
            let (v, _, second) = interrupted_then_resumed(
                projection,
                ResumeEntry {
                    interrupt_id: INTERRUPT.into(),
                    status: ResumeStatus::Cancelled,
                    payload: None,
                    metadata: None,
                },
                // What CancelTask answers.
                vec![StreamResponse::Task(Task {
                    status: TaskStatus::new(TaskState::Canceled),
                    ..waiting_task(TaskState::Canceled)
                })],
            );
            assert_eq!(
                types(&second),
                [
                    "RUN_STARTED",
                    "ACTIVITY_DELTA",
                    "STATE_SNAPSHOT",
                    "STATE_DELTA",
                    "RUN_FINISHED"
                ]
            );
            assert_eq!(
                v.activities[INTERRUPT]["decision"],
                json!({"status": "cancelled"})
            );
            assert_eq!(v.activities[INTERRUPT]["stage"], "cancelled");
            assert_eq!(v.outcomes[1], Some(RunFinishedOutcome::Cancelled));
            if projection == Projection::View {
                assert_eq!(v.state["view"]["pendingInterrupts"], json!({}));
                assert_eq!(v.state["view"]["tasksById"][TASK]["state"], "canceled");
            }
        }
    }

    #[test]
    fn a_log_that_goes_on_past_a_form_marks_it_submitted_then_completed() {
        let (v, frames) = run_with(
            view(json!({})),
            vec![
                task(),
                asking(),
                say(TaskState::Working, "w", "thanks"),
                done(),
            ],
        );
        assert_eq!(v.run_ids.len(), 2);
        let deltas: Vec<Vec<PatchOp>> = frames
            .iter()
            .filter_map(|f| match &f.event.kind {
                EventKind::ActivityDelta(d) => Some(d.patch.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            deltas,
            [
                vec![PatchOp::replace("/stage", json!("submitted"))],
                vec![PatchOp::replace("/stage", json!("completed"))],
            ]
        );
        assert_eq!(v.activities[INTERRUPT]["stage"], "completed");
        assert_eq!(v.state["view"]["pendingInterrupts"], json!({}));
    }

    /// The events that are not about state.
    fn without_state(frames: &[Frame]) -> Vec<Frame> {
        frames
            .iter()
            .filter(|f| !f.event.type_name().starts_with("STATE_"))
            .cloned()
            .collect()
    }

    #[test]
    fn a_direct_text_reply_is_the_same_in_both_projections_without_state() {
        let reply = StreamResponse::Message(
            msg("reply-1", vec![Part::text("pong"), Part::text(" again")]).with_context_id(CTX),
        );
        let a2a = Converter::new(options(Projection::A2a, json!({"x": 1}))).convert(None, &reply);
        let view = Converter::new(options(Projection::View, json!({"x": 1}))).convert(None, &reply);
        assert_eq!(view, a2a);
        assert_eq!(
            types(&view),
            [
                "RUN_STARTED",
                "TEXT_MESSAGE_START",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_CONTENT",
                "TEXT_MESSAGE_END",
                "RUN_FINISHED"
            ]
        );
        ClientView::fold(&view);
    }

    #[test]
    fn a_task_of_status_texts_gives_the_same_text_events_in_both_projections() {
        let items = vec![
            task(),
            say(TaskState::Working, "s1", "thinking"),
            say(TaskState::Working, "s2", "still thinking"),
            say(TaskState::Completed, "s3", "the answer is 42"),
        ];
        let (a2a_view, a2a) = run_with(|| options(Projection::A2a, json!({})), items.clone());
        let (view_view, view) = run_with(view(json!({})), items);
        assert_eq!(without_state(&view), without_state(&a2a));
        assert_eq!(view_view.texts(), a2a_view.texts());
        assert_eq!(
            view_view.texts(),
            owned(&[
                ("assistant", "thinking"),
                ("assistant", "still thinking"),
                ("assistant", "the answer is 42"),
            ])
        );
    }
}
