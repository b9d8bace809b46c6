//! Unit tests: the wire form of events, both encodings, hints, patches and
//! the verifier. The converter's matrix is in `tests/convert.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use switchboard_protocol::{Part, PartContent};

use crate::events::*;
use crate::hints::{self, PartHints, PartRole};
use crate::patch;
use crate::proto;
use crate::sse::{self, Encoding, SseDecoder};
use crate::verify::Verifier;

fn s(v: &str) -> String {
    v.to_owned()
}

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// One event of every type, most with every optional field set.
fn every_event() -> Vec<Event> {
    let sub = Some(s("sub-1"));
    let input = RunAgentInput {
        thread_id: s("t1"),
        run_id: s("r1"),
        messages: vec![
            Message::User(UserMessage {
                id: s("u1"),
                content: Content::Parts(vec![
                    ContentPart::Text {
                        text: s("look"),
                        id: None,
                        metadata: None,
                    },
                    ContentPart::Image(MediaPart {
                        source: PartSource::Data {
                            value: s("aGk="),
                            mime_type: s("image/png"),
                        },
                        id: Some(s("img")),
                        metadata: None,
                    }),
                ]),
                ..Default::default()
            }),
            Message::Assistant(AssistantMessage {
                id: s("a1"),
                content: Some(s("calling")),
                tool_calls: Some(vec![ToolCall {
                    id: s("c1"),
                    kind: s("function"),
                    function: FunctionCall {
                        name: s("search"),
                        arguments: s("{\"q\":1}"),
                    },
                    encrypted_value: None,
                    metadata: None,
                }]),
                ..Default::default()
            }),
            Message::Tool(ToolMessage {
                id: s("tm1"),
                content: Content::Text(s("found")),
                tool_call_id: s("c1"),
                ..Default::default()
            }),
            Message::Activity(ActivityMessage {
                id: s("act"),
                activity_type: s("progress"),
                content: obj(json!({"done": 1})),
                ..Default::default()
            }),
            Message::Reasoning(ReasoningMessage {
                id: s("re"),
                content: s("hmm"),
                ..Default::default()
            }),
            Message::System(PlainMessage {
                id: s("sys"),
                content: s("be brief"),
                ..Default::default()
            }),
        ],
        tools: Some(vec![Tool {
            name: s("search"),
            description: s("searches"),
            parameters: Some(json!({"type": "object"})),
            metadata: None,
        }]),
        context: Some(vec![Context {
            description: s("tz"),
            value: s("UTC"),
        }]),
        protocol_version: Some(s("1.0")),
        parent_run_id: None,
        state: Some(json!({"count": 1})),
        forwarded_props: Some(json!({"x": true})),
        resume: Some(vec![ResumeEntry {
            interrupt_id: s("i1"),
            status: ResumeStatus::Resolved,
            payload: Some(json!({"approved": true})),
            metadata: None,
        }]),
    };
    let kinds: Vec<EventKind> = vec![
        TextMessageStart {
            message_id: s("m1"),
            role: Some(TextRole::Assistant),
            name: Some(s("bot")),
            subagent_run_id: sub.clone(),
        }
        .into(),
        TextMessageContent {
            message_id: s("m1"),
            delta: s(""),
            subagent_run_id: None,
        }
        .into(),
        TextMessageEnd {
            message_id: s("m1"),
            subagent_run_id: None,
        }
        .into(),
        ToolCallStart {
            tool_call_id: s("c1"),
            tool_call_name: s("search"),
            parent_message_id: Some(s("m1")),
            subagent_run_id: None,
        }
        .into(),
        ToolCallArgs {
            tool_call_id: s("c1"),
            delta: s("{\"q\":"),
            subagent_run_id: None,
        }
        .into(),
        ToolCallEnd {
            tool_call_id: s("c1"),
            subagent_run_id: sub.clone(),
        }
        .into(),
        StateSnapshot {
            snapshot: json!({"a": [1, 2, {"b": null}]}),
            subagent_run_id: None,
        }
        .into(),
        StateDelta {
            delta: vec![
                PatchOp::add("/a/-", json!(null)),
                PatchOp::remove("/a/0"),
                PatchOp {
                    op: PatchOpKind::Move,
                    path: s("/c"),
                    from: Some(s("/a")),
                    value: None,
                },
            ],
            subagent_run_id: None,
        }
        .into(),
        MessagesSnapshot {
            messages: input.messages.clone(),
        }
        .into(),
        Raw {
            event: json!({"kind": "x"}),
            source: Some(s("a2a")),
            subagent_run_id: None,
        }
        .into(),
        Custom {
            name: s("app:x"),
            value: json!([1, "two"]),
            subagent_run_id: None,
        }
        .into(),
        RunStarted {
            thread_id: s("t1"),
            run_id: s("r1"),
            parent_run_id: Some(s("r0")),
            input: Some(Box::new(input.clone())),
            protocol_version: Some(s("1.0")),
        }
        .into(),
        RunFinished {
            thread_id: s("t1"),
            run_id: s("r1"),
            result: Some(json!({"ok": true})),
            outcome: Some(RunFinishedOutcome::Interrupt {
                interrupts: vec![Interrupt {
                    id: s("i1"),
                    reason: s("input_required"),
                    message: Some(s("your name?")),
                    response_schema: Some(obj(json!({"type": "object"}))),
                    metadata: Some(obj(json!({"taskId": "t"}))),
                    ..Default::default()
                }],
            }),
            usage: Some(vec![TokenUsage {
                model: Some(s("m")),
                input_tokens: Some(3),
                output_tokens: Some(4),
                ..Default::default()
            }]),
        }
        .into(),
        RunError {
            message: s("boom"),
            code: Some(s("a2a:failed")),
            usage: None,
        }
        .into(),
        StepStarted {
            step_name: s("plan"),
            subagent_run_id: None,
        }
        .into(),
        StepFinished {
            step_name: s("plan"),
            subagent_run_id: None,
        }
        .into(),
        TextMessageChunk {
            message_id: Some(s("m2")),
            role: Some(TextRole::User),
            delta: Some(s("x")),
            name: None,
            subagent_run_id: None,
        }
        .into(),
        ToolCallChunk {
            tool_call_id: Some(s("c2")),
            tool_call_name: Some(s("t")),
            parent_message_id: None,
            delta: Some(s("{}")),
            subagent_run_id: None,
        }
        .into(),
        SubagentStarted {
            subagent_run_id: s("sub-1"),
            name: s("helper"),
            description: Some(s("helps")),
            parent_subagent_run_id: None,
            parent_tool_call_id: Some(s("c1")),
            parent_message_id: None,
        }
        .into(),
        SubagentFinished {
            subagent_run_id: s("sub-1"),
            result: Some(json!(42)),
            outcome: Some(SubagentOutcome::Suspended {
                interrupt_ids: Some(vec![s("i1")]),
            }),
        }
        .into(),
        SubagentError {
            subagent_run_id: s("sub-2"),
            message: s("no"),
            code: None,
        }
        .into(),
        ToolCallResult {
            message_id: s("tr1"),
            tool_call_id: s("c1"),
            content: Content::Parts(vec![ContentPart::Document(MediaPart {
                source: PartSource::Url {
                    value: s("https://example.invalid/doc.pdf"),
                    mime_type: None,
                },
                id: None,
                metadata: Some(json!({"pages": 2})),
            })]),
            role: Some(ToolRole::Tool),
            subagent_run_id: None,
        }
        .into(),
        ActivitySnapshot {
            message_id: s("act"),
            activity_type: s("a2a-task-progress"),
            content: obj(json!({"trackers": [{"id": "d", "progress": 1}]})),
            replace: Some(false),
            subagent_run_id: None,
        }
        .into(),
        ActivityDelta {
            message_id: s("act"),
            activity_type: s("a2a-task-progress"),
            patch: vec![PatchOp::replace("/trackers/0/progress", json!(2))],
            subagent_run_id: None,
        }
        .into(),
        ReasoningStart {
            message_id: s("r"),
            subagent_run_id: None,
        }
        .into(),
        ReasoningMessageStart {
            message_id: s("r"),
            role: ReasoningRole::Reasoning,
            subagent_run_id: None,
        }
        .into(),
        ReasoningMessageContent {
            message_id: s("r"),
            delta: s("thinking"),
            subagent_run_id: None,
        }
        .into(),
        ReasoningMessageEnd {
            message_id: s("r"),
            subagent_run_id: None,
        }
        .into(),
        ReasoningMessageChunk {
            message_id: Some(s("r2")),
            delta: None,
            subagent_run_id: None,
        }
        .into(),
        ReasoningEnd {
            message_id: s("r"),
            subagent_run_id: None,
        }
        .into(),
        ReasoningEncryptedValue {
            subtype: EncryptedSubtype::ToolCall,
            entity_id: s("c1"),
            encrypted_value: s("opaque"),
            subagent_run_id: None,
        }
        .into(),
    ];
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            let e = Event::new(k);
            if i % 3 == 0 {
                e.with_timestamp(1_767_225_600_000 + i as i64)
                    .with_metadata(obj(json!({"a2a": {"i": i}})))
            } else {
                e
            }
        })
        .collect()
}

/// A run's final state is its last snapshot with the deltas after it
/// applied in order; a delta that does not apply is the error.
#[test]
fn the_final_state_folds_snapshots_and_deltas() {
    use crate::run::RunEvents;
    let snapshot = |v: Value| {
        Event::new(StateSnapshot {
            snapshot: v,
            subagent_run_id: None,
        })
    };
    let delta = |ops: Vec<PatchOp>| {
        Event::new(StateDelta {
            delta: ops,
            subagent_run_id: None,
        })
    };
    assert_eq!(Vec::<Event>::new().final_state().unwrap(), Value::Null);
    let run = vec![
        snapshot(json!({"old": true})),
        snapshot(json!({"n": 1, "list": []})),
        delta(vec![PatchOp::replace("/n", json!(2))]),
        delta(vec![PatchOp::add("/list/-", json!("a"))]),
    ];
    assert_eq!(run.final_state().unwrap(), json!({"n": 2, "list": ["a"]}));
    let broken = vec![
        snapshot(json!({})),
        delta(vec![PatchOp::remove("/missing")]),
    ];
    assert!(broken.final_state().is_err());
}

#[test]
fn every_event_type_is_covered_once() {
    let events = every_event();
    let mut names: Vec<&str> = events.iter().map(Event::type_name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 31);
    assert_eq!(EventKind::TYPE_NAMES.len(), 31);
}

#[test]
fn json_uses_the_wire_names_and_omits_absent_fields() {
    let e = Event::new(TextMessageStart {
        message_id: s("m1"),
        role: None,
        name: None,
        subagent_run_id: None,
    });
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1"})
    );
    let e = Event::new(RunFinished {
        thread_id: s("t"),
        run_id: s("r"),
        outcome: Some(RunFinishedOutcome::Success {
            pending_tool_call_ids: None,
        }),
        ..Default::default()
    })
    .with_timestamp(5);
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
               "outcome": {"type": "success"}, "timestamp": 5})
    );
    // The text, in order: `type`, the kind's fields, then the base fields
    // (with and without base fields, which are written by different paths).
    assert_eq!(
        serde_json::to_string(&e).unwrap(),
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"},"timestamp":5}"#
    );
    let e = Event {
        timestamp: None,
        ..e
    };
    assert_eq!(
        serde_json::to_string(&e).unwrap(),
        r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}"#
    );
    // No field is ever null, except inside values that are free JSON.
    fn no_null(v: &Value, path: &str) {
        match v {
            Value::Null => panic!("null at {path}"),
            Value::Object(m) => {
                for (k, v) in m {
                    if !matches!(k.as_str(), "snapshot" | "value") {
                        no_null(v, &format!("{path}/{k}"));
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| no_null(v, path)),
            _ => {}
        }
    }
    for e in every_event() {
        no_null(&serde_json::to_value(&e).unwrap(), e.type_name());
    }
}

#[test]
fn json_round_trips_every_event() {
    for e in every_event() {
        let text = serde_json::to_string(&e).unwrap();
        let back: Event = serde_json::from_str(&text).unwrap();
        assert_eq!(back, e, "{text}");
    }
}

#[test]
fn a_float_timestamp_is_refused() {
    let r: Result<Event, _> =
        serde_json::from_str(r#"{"type":"TEXT_MESSAGE_END","messageId":"m","timestamp":1.5}"#);
    assert!(r.is_err());
}

#[test]
fn an_unknown_type_is_an_error_not_a_panic() {
    let r: Result<Event, _> = serde_json::from_str(r#"{"type":"THINKING_START"}"#);
    assert!(r.is_err());
}

#[test]
fn sse_frames_round_trip_through_the_decoder_in_any_split() {
    let events = every_event();
    let mut bytes = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let id = (i % 2 == 0).then(|| format!("{i}.0"));
        sse::write_sse_frame(&mut bytes, id.as_deref(), e);
    }
    // A keep-alive comment between frames yields nothing.
    bytes.extend_from_slice(b": ping\n\n");
    assert!(!bytes.windows(2).any(|w| w == b"\r\n"));
    for chunk in [1usize, 7, 4096] {
        let mut dec = SseDecoder::new();
        let mut got = Vec::new();
        for piece in bytes.chunks(chunk) {
            got.extend(dec.push(piece).unwrap());
        }
        assert!(dec.is_idle());
        assert_eq!(got.len(), events.len());
        for (i, (g, e)) in got.iter().zip(&events).enumerate() {
            assert_eq!(&g.event, e);
            assert_eq!(g.id, (i % 2 == 0).then(|| format!("{i}.0")));
        }
    }
}

#[test]
fn sse_frame_is_data_line_and_blank_line() {
    let e = Event::new(TextMessageContent {
        message_id: s("m1"),
        delta: s("hi"),
        subagent_run_id: None,
    });
    assert_eq!(
        sse::sse_frame(None, &e),
        "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m1\",\"delta\":\"hi\"}\n\n"
    );
    assert_eq!(sse::sse_frame(Some("7"), &e).lines().next(), Some("id: 7"));
}

#[test]
fn an_event_framed_from_its_resume_point_is_the_frame_of_its_id_text() {
    let e = Event::new(TextMessageEnd {
        message_id: s("m1"),
        subagent_run_id: None,
    });
    let points = [
        None,
        Some(crate::ResumePoint::of_event(0, 0, 1)),
        Some(crate::ResumePoint::of_event(7, 0, 3)),
        Some(crate::ResumePoint::of_event(7, 2, 3)),
        Some(crate::ResumePoint::of_event(u64::MAX, 12, 40)),
    ];
    let texts = [
        None,
        Some("0"),
        Some("7.0"),
        Some("7"),
        Some("18446744073709551615.12"),
    ];
    for (point, text) in points.into_iter().zip(texts) {
        assert_eq!(point.map(|p| p.to_string()).as_deref(), text);
        assert_eq!(
            point.map(|p| crate::ResumePoint::parse(&p.to_string()).unwrap()),
            point
        );
        let mut direct = Vec::new();
        sse::write_sse_event(&mut direct, point, &e);
        let mut from_text = Vec::new();
        sse::write_sse_frame(&mut from_text, text, &e);
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            String::from_utf8(from_text).unwrap()
        );
    }
}

#[test]
fn protobuf_is_chosen_only_when_named() {
    assert_eq!(Encoding::negotiate(None), Encoding::Sse);
    assert_eq!(Encoding::negotiate(Some("*/*")), Encoding::Sse);
    assert_eq!(
        Encoding::negotiate(Some("text/event-stream")),
        Encoding::Sse
    );
    assert_eq!(
        Encoding::negotiate(Some("application/vnd.ag-ui.event+proto")),
        Encoding::Protobuf
    );
    assert_eq!(
        Encoding::negotiate(Some(
            "text/event-stream, application/vnd.ag-ui.event+proto;q=0.5"
        )),
        Encoding::Protobuf
    );
    assert_eq!(
        Encoding::negotiate(Some("application/vnd.ag-ui.event+proto;q=0")),
        Encoding::Sse
    );
}

#[test]
fn protobuf_frame_matches_the_reference_bytes() {
    // From the AG-UI reference: TEXT_MESSAGE_CONTENT {messageId:"m1", delta:"hi"}.
    let e = Event::new(TextMessageContent {
        message_id: s("m1"),
        delta: s("hi"),
        subagent_run_id: None,
    });
    let mut frame = Vec::new();
    proto::write_frame(&mut frame, &e).unwrap();
    let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, "0000000e120c0a02080112026d311a026869");
}

#[test]
fn protobuf_round_trips_every_event_in_any_split() {
    let events = every_event();
    let mut bytes = Vec::new();
    for e in &events {
        proto::write_frame(&mut bytes, e).unwrap();
    }
    for chunk in [1usize, 5, 65536] {
        let mut dec = proto::ProtoDecoder::new();
        let mut got = Vec::new();
        for piece in bytes.chunks(chunk) {
            got.extend(dec.push(piece).unwrap());
        }
        assert!(dec.is_idle());
        assert_eq!(got.len(), events.len());
        for (g, e) in got.iter().zip(&events) {
            assert_eq!(g, e, "{}", e.type_name());
        }
    }
}

#[test]
fn protobuf_rejects_garbage_without_panicking() {
    assert!(proto::decode_event(&[0xff, 0xff, 0xff]).is_err());
    assert!(proto::decode_event(&[]).is_err());
    let mut dec = proto::ProtoDecoder::new();
    assert!(matches!(
        dec.push(&[0x7f, 0xff, 0xff, 0xff]),
        Err(proto::ProtoError::FrameTooLarge(_))
    ));
}

#[test]
fn hints_read_prefixed_and_unprefixed_keys() {
    let part = hints::thinking_part("hmm", "b1", 2);
    let h = PartHints::read(&part);
    assert_eq!(h.role(), PartRole::Reasoning);
    assert_eq!(h.block_id.as_deref(), Some("b1"));
    assert_eq!(h.block_index, Some(2));
    let md = part.metadata.clone().unwrap();
    assert_eq!(md["agui_event_type"], "thinking");
    assert_eq!(md["agui_block_type"], "thinking");

    // Hector's code writes the keys without the prefix.
    let hector = Part::text("x").with_metadata(obj(json!({
        "event_type": "tool_call", "tool_call_id": "c9", "is_error": false
    })));
    let h = PartHints::read(&hector);
    assert_eq!(h.role(), PartRole::ToolResult);
    assert_eq!(h.tool_call_id.as_deref(), Some("c9"));

    // The prefixed key wins over the unprefixed one.
    let both = Part::text("x").with_metadata(obj(json!({
        "agui_block_type": "code", "block_type": "thinking"
    })));
    assert_eq!(PartHints::read(&both).role(), PartRole::Code);
    assert_eq!(
        PartHints::read(&Part::text("plain")).role(),
        PartRole::Plain
    );
}

#[test]
fn tool_parts_have_the_seed_shape_and_read_back() {
    let call = hints::tool_call_part("c1", "search", json!({"q": "auth"}));
    assert_eq!(
        serde_json::to_value(&call).unwrap(),
        json!({"data": {"id": "c1", "name": "search", "arguments": {"q": "auth"}},
               "metadata": {"agui_event_type": "tool_call", "agui_tool_call_id": "c1",
                            "agui_tool_name": "search"}})
    );
    let h = PartHints::read(&call);
    assert_eq!(h.role(), PartRole::ToolCall);
    let read = hints::read_tool_call(&call, &h).unwrap();
    assert_eq!((read.id.as_str(), read.name.as_str()), ("c1", "search"));

    let failed = hints::tool_result_part("c1", "", Some("timeout"));
    let h = PartHints::read(&failed);
    assert_eq!(h.role(), PartRole::ToolResult);
    assert_eq!(h.is_error, Some(true));
    let r = hints::read_tool_result(&failed, &h).unwrap();
    assert_eq!(r.error.as_deref(), Some("timeout"));

    // The 0.3-era wrapping {"data": {...}} reads the same.
    let wrapped = Part::data(json!({"data": {"tool_call_id": "c2", "content": "ok", "error": ""}}))
        .with_metadata(obj(
            json!({"agui_event_type": "tool_call", "agui_is_error": false}),
        ));
    let h = PartHints::read(&wrapped);
    let r = hints::read_tool_result(&wrapped, &h).unwrap();
    assert_eq!((r.tool_call_id.as_str(), r.content.as_str()), ("c2", "ok"));
    assert_eq!(r.error, None);
    assert!(matches!(wrapped.content, PartContent::Data(_)));
}

#[test]
fn diff_then_apply_gives_the_new_document() {
    let cases = [
        (json!({}), json!({"a": 1})),
        (json!({"a": [1, 2]}), json!({"a": [1, 2, 3, 4]})),
        (json!({"a": [1, 2]}), json!({"a": [2]})),
        (json!({"a": {"b/c": 1, "~d": 2}}), json!({"a": {"b/c": 3}})),
        (
            json!({"a": [{"x": 1}, {"x": 2}]}),
            json!({"a": [{"x": 1}, {"x": 5}]}),
        ),
        (json!({"a": 1}), json!({"a": "s"})),
        (json!([1]), json!({"k": null})),
    ];
    for (old, new) in cases {
        let ops = patch::diff(&old, &new);
        let mut doc = old.clone();
        patch::apply(&mut doc, &ops).unwrap();
        assert_eq!(doc, new, "{ops:?}");
    }
    assert!(patch::diff(&json!({"a": [1]}), &json!({"a": [1]})).is_empty());
}

#[test]
fn verifier_follows_the_client_rules() {
    let start = Event::new(RunStarted {
        thread_id: s("t"),
        run_id: s("r"),
        ..Default::default()
    });
    let open = Event::new(TextMessageStart {
        message_id: s("m"),
        ..Default::default()
    });
    let end = Event::new(TextMessageEnd {
        message_id: s("m"),
        subagent_run_id: None,
    });
    let finish = Event::new(RunFinished {
        thread_id: s("t"),
        run_id: s("r"),
        ..Default::default()
    });
    assert!(Verifier::verify_all([&start, &open, &end, &finish, &start, &finish]).is_ok());
    // Content before RUN_STARTED.
    assert!(Verifier::verify_all([&open]).is_err());
    // RUN_FINISHED with a message open.
    let e = Verifier::verify_all([&start, &open, &finish]).unwrap_err();
    assert_eq!(e.index, 2);
    // Anything after RUN_FINISHED but a new run.
    assert!(Verifier::verify_all([&start, &finish, &open]).is_err());
    // Nested runs.
    assert!(Verifier::verify_all([&start, &start]).is_err());
    // END of a message never opened.
    assert!(Verifier::verify_all([&start, &end]).is_err());
}

#[test]
fn verifier_follows_the_client_subagent_rules() {
    let start = Event::new(RunStarted {
        thread_id: s("t"),
        run_id: s("r"),
        ..Default::default()
    });
    let sub = |id: &str| {
        Event::new(SubagentStarted {
            subagent_run_id: s(id),
            name: s("helper"),
            ..Default::default()
        })
    };
    let done = |id: &str| {
        Event::new(SubagentFinished {
            subagent_run_id: s(id),
            ..Default::default()
        })
    };
    let said = |by: Option<&str>| {
        let owner = by.map(str::to_owned);
        [
            Event::new(TextMessageStart {
                message_id: s("m"),
                subagent_run_id: owner.clone(),
                ..Default::default()
            }),
            Event::new(TextMessageEnd {
                message_id: s("m"),
                subagent_run_id: owner,
            }),
        ]
    };
    let finish = Event::new(RunFinished {
        thread_id: s("t"),
        run_id: s("r"),
        ..Default::default()
    });
    let [open_a, end_a] = said(Some("a"));
    let [_, end_b] = said(Some("b"));
    let [_, end_parent] = said(None);
    let good = [&start, &sub("a"), &open_a, &end_a, &done("a"), &finish];
    assert!(Verifier::verify_all(good).is_ok());
    // A subagent still active when the run finishes.
    assert!(Verifier::verify_all([&start, &sub("a"), &finish]).is_err());
    // Finishing one never started; starting one again in the same run.
    assert!(Verifier::verify_all([&start, &done("a")]).is_err());
    assert!(Verifier::verify_all([&start, &sub("a"), &done("a"), &sub("a")]).is_err());
    // A message opened by one subagent and ended by another; one without
    // a subagentRunId may end it (the official client checks named ones).
    assert!(Verifier::verify_all([&start, &sub("a"), &open_a, &end_b]).is_err());
    assert!(Verifier::verify_all([&start, &sub("a"), &open_a, &end_parent]).is_ok());
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
        /// Any text survives both encodings, in frames split anywhere.
        #[test]
        fn any_text_round_trips(delta in any::<String>(), name in "\\PC{0,8}", split in 1usize..64) {
            let events = vec![
                Event::new(TextMessageContent { message_id: name.clone(), delta: delta.clone(), subagent_run_id: None }),
                Event::new(Custom { name, value: json!({"t": delta}), subagent_run_id: None }),
            ];
            let mut text = Vec::new();
            let mut bin = Vec::new();
            for e in &events {
                sse::write_sse_frame(&mut text, Some("1.0"), e);
                proto::write_frame(&mut bin, e).unwrap();
            }
            let mut sd = SseDecoder::new();
            let got: Vec<Event> = text.chunks(split).flat_map(|c| sd.push(c).unwrap()).map(|f| f.event).collect();
            prop_assert_eq!(&got, &events);
            let mut pd = proto::ProtoDecoder::new();
            let got: Vec<Event> = bin.chunks(split).flat_map(|c| pd.push(c).unwrap()).collect();
            prop_assert_eq!(&got, &events);
        }
    }
}

#[test]
fn hector_vocabulary_renames_a_run() {
    use crate::hector::HectorTranslator;
    // One event per row, in the wire form a run produces.
    let events: Vec<Event> = [
        json!({"type": "RUN_STARTED", "threadId": "ctx", "runId": "task"}),
        json!({"type": "REASONING_START", "messageId": "r"}),
        json!({"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"}),
        json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "hmm"}),
        json!({"type": "REASONING_END", "messageId": "r"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "search"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"q\":"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "1}"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
        json!({"type": "RUN_FINISHED", "threadId": "ctx", "runId": "task"}),
    ]
    .into_iter()
    .map(|v| serde_json::from_value(v).unwrap())
    .collect();
    let mut t = HectorTranslator::new();
    let out: Vec<_> = events.iter().flat_map(|e| t.translate(e)).collect();
    let names: Vec<&str> = out.iter().map(|e| e.name).collect();
    assert_eq!(
        names,
        [
            "task_start",
            "message_start",
            "thinking_start",
            "thinking_delta",
            "thinking_stop",
            "tool_call_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_stop",
            "task_complete"
        ]
    );
    assert_eq!(
        out[1].data,
        json!({"messageId": "task", "contextId": "ctx", "role": "agent"})
    );
    assert_eq!(
        out[5].data,
        json!({"toolCallId": "c1", "toolName": "search", "arguments": {"q": 1}})
    );
    assert_eq!(out[7].data, json!({"blockId": "m", "delta": "hi"}));
    // A run error closes the message and names the task.
    let err = Event::new(RunError {
        message: s("boom"),
        code: Some(s("a2a:failed")),
        usage: None,
    });
    let mut t = HectorTranslator::new();
    t.translate(&events[0]);
    let out = t.translate(&err);
    assert_eq!(out[0].name, "message_stop");
    assert_eq!(
        out[1].data,
        json!({"taskId": "task", "error": "boom", "code": "a2a:failed"})
    );
}
