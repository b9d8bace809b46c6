#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::json;

use crate::jsonrpc::{RequestId, parse_request};
use crate::*;

#[test]
fn part_is_a_flat_object_with_one_content_key() {
    let p = Part::raw(vec![1, 2, 3], "application/octet-stream").with_filename("x.bin");
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(
        v,
        json!({"raw": "AQID", "filename": "x.bin", "mediaType": "application/octet-stream"})
    );
    let back: Part = serde_json::from_value(v).unwrap();
    assert_eq!(back, p);

    let err = serde_json::from_value::<Part>(json!({"text": "a", "url": "http://x"})).unwrap_err();
    assert!(err.to_string().contains("exactly one"), "{err}");
    let err = serde_json::from_value::<Part>(json!({"metadata": {}})).unwrap_err();
    assert!(err.to_string().contains("exactly one"), "{err}");
    // `data` may hold any JSON value, null included.
    let p: Part = serde_json::from_value(json!({"data": null})).unwrap();
    assert_eq!(p.content, PartContent::Data(serde_json::Value::Null));
    // URL-safe base64 without padding is accepted.
    let p: Part = serde_json::from_value(json!({"raw": "-_8"})).unwrap();
    assert_eq!(p.content, PartContent::Raw(vec![0xfb, 0xff]));
}

#[test]
fn message_accepts_snake_case_and_unknown_fields() {
    let m: Message = serde_json::from_value(json!({
        "message_id": "m1", "context_id": "c1", "role": "ROLE_USER",
        "parts": [{"text": "hi"}], "reference_task_ids": ["t0"], "somethingNew": 1
    }))
    .unwrap();
    assert_eq!(m.message_id, "m1");
    assert_eq!(m.context_id.as_deref(), Some("c1"));
    assert_eq!(m.reference_task_ids, vec!["t0".to_string()]);
    let out = serde_json::to_value(&m).unwrap();
    assert_eq!(out["messageId"], "m1");
    assert_eq!(out["referenceTaskIds"], json!(["t0"]));
    assert!(out.get("taskId").is_none());
}

#[test]
fn required_fields_are_required() {
    assert!(serde_json::from_value::<Message>(json!({"role": "ROLE_USER", "parts": []})).is_err());
    assert!(serde_json::from_value::<Message>(json!({"messageId": "m", "parts": []})).is_err());
    assert!(serde_json::from_value::<Task>(json!({"id": "t"})).is_err());
}

#[test]
fn timestamps_end_in_z_with_millis() {
    let st = TaskStatus {
        state: TaskState::Working,
        message: None,
        timestamp: Some(serde_util::parse_timestamp("2026-01-02T03:04:05.123456+02:00").unwrap()),
    };
    let v = serde_json::to_value(&st).unwrap();
    assert_eq!(
        v,
        json!({"state": "TASK_STATE_WORKING", "timestamp": "2026-01-02T01:04:05.123Z"})
    );
}

#[test]
fn task_state_names_and_aliases() {
    for st in TaskState::ALL {
        let v = serde_json::to_value(st).unwrap();
        assert_eq!(v, json!(st.as_str()));
        assert_eq!(serde_json::from_value::<TaskState>(v).unwrap(), st);
        assert_eq!(TaskState::parse(st.label()), Some(st));
        assert_eq!(TaskState::parse(st.as_str()), Some(st));
    }
    assert_eq!(
        serde_json::from_value::<TaskState>(json!("input-required")).unwrap(),
        TaskState::InputRequired
    );
    assert!(serde_json::from_value::<TaskState>(json!("TASK_STATE_NOPE")).is_err());
}

#[test]
fn list_tasks_response_always_emits_required_fields() {
    let r = ListTasksResponse {
        tasks: vec![],
        next_page_token: String::new(),
        page_size: 50,
        total_size: 0,
    };
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0})
    );
}

#[test]
fn stream_response_is_a_one_key_wrapper() {
    let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: None,
        },
        metadata: None,
    });
    let v = serde_json::to_value(&ev).unwrap();
    assert_eq!(
        v,
        json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}})
    );
    assert!(ev.is_final());
    assert_eq!(serde_json::from_value::<StreamResponse>(v).unwrap(), ev);
}

#[test]
fn history_length_semantics() {
    let mut t = Task {
        id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus::new(TaskState::Working),
        artifacts: None,
        history: Some((0..5).map(|i| Message::user_text(i.to_string())).collect()),
        metadata: None,
    };
    t.limit_history(None);
    assert_eq!(t.history().len(), 5);
    t.limit_history(Some(2));
    assert_eq!(
        t.history().iter().map(|m| m.text()).collect::<Vec<_>>(),
        vec!["3", "4"]
    );
    t.limit_history(Some(0));
    assert!(t.history.is_none());
}

#[test]
fn jsonrpc_classifies_bad_envelopes() {
    let (_, e) = parse_request(b"{not json").unwrap_err();
    assert_eq!(e.code(), -32700);
    let (_, e) = parse_request(b"[1,2]").unwrap_err();
    assert_eq!(e.code(), -32600);
    let (id, e) = parse_request(br#"{"jsonrpc":"1.0","id":7,"method":"GetTask"}"#).unwrap_err();
    assert_eq!(e.code(), -32600);
    assert_eq!(id, RequestId::Number(7.into()));
    let (_, e) = parse_request(br#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#).unwrap_err();
    assert_eq!(e.code(), -32600);
    let (_, e) = parse_request(br#"{"jsonrpc":"2.0","id":1,"method":5}"#).unwrap_err();
    assert_eq!(e.code(), -32600);
    let (_, e) =
        parse_request(br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}"#).unwrap_err();
    assert_eq!(e.code(), -32600);
    // Ids are echoed in every answer: a long one is refused, not repeated.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"GetTask"}}"#,
        "i".repeat(257)
    );
    let (id, e) = parse_request(long.as_bytes()).unwrap_err();
    assert_eq!((id, e.code()), (RequestId::Null, -32600));
    assert!(
        e.to_string()
            .contains("`id` is 257 bytes; the limit is 256"),
        "{e}"
    );
    // A number of any length is read as a 64-bit value: its echo is short.
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"GetTask"}}"#,
        "9".repeat(300)
    );
    let RequestId::Number(n) = parse_request(long.as_bytes()).unwrap().id else {
        panic!("a numeric id stays a number");
    };
    assert!(n.to_string().len() < 32, "{n}");
    let at_limit = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"GetTask"}}"#,
        "i".repeat(256)
    );
    assert!(parse_request(at_limit.as_bytes()).is_ok());
    let ok = parse_request(br#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"x"}}"#)
        .unwrap();
    let p: GetTaskRequest = ok.params().unwrap();
    assert_eq!(p.id, "x");
    let bad: Result<GetTaskRequest, _> =
        parse_request(br#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":5}}"#)
            .unwrap()
            .params();
    assert_eq!(bad.unwrap_err().code(), -32602);
}

#[test]
fn errors_carry_error_info() {
    let e = A2AError::TaskNotFound("t1".into());
    let d = e.details();
    assert_eq!(d[0]["@type"], error::ERROR_INFO_TYPE);
    assert_eq!(d[0]["reason"], "TASK_NOT_FOUND");
    assert_eq!(d[0]["domain"], "a2a-protocol.org");
    assert_eq!(d[0]["metadata"]["taskId"], "t1");
    let body: serde_json::Value =
        serde_json::from_slice(&jsonrpc::error_body(&RequestId::Null, &e)).unwrap();
    assert_eq!(body["error"]["code"], -32001);
    assert_eq!(body["id"], serde_json::Value::Null);
}

fn arb_json() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-zA-Z_]{0,12}".prop_map(serde_json::Value::String),
        prop::sample::select(vec![
            "SendMessage",
            "GetTask",
            "ROLE_USER",
            "TASK_STATE_WORKING",
            "2.0",
            "text",
            "message",
            "parts"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "jsonrpc",
                    "id",
                    "method",
                    "params",
                    "message",
                    "messageId",
                    "role",
                    "parts",
                    "text",
                    "raw",
                    "url",
                    "data",
                    "configuration",
                    "historyLength",
                    "returnImmediately",
                    "taskId",
                    "contextId",
                    "pageSize",
                    "status",
                    "metadata"
                ])
                .prop_map(String::from),
                inner,
                0..8
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The fixed-width timestamp writer gives exactly chrono's RFC 3339 form
    /// (millis, `Z`) for any instant, leap seconds and years past 9999 included
    /// (those take chrono's own path).
    #[test]
    fn timestamps_are_written_as_chrono_writes_them(
        secs in -62_167_219_200i64..=253_402_300_799 * 2,
        nanos in prop_oneof![0u32..1_000_000_000, 1_000_000_000u32..2_000_000_000],
    ) {
        use chrono::{DateTime, SecondsFormat, Utc};
        if let Some(ts) = DateTime::<Utc>::from_timestamp(secs, nanos) {
            let want = ts.to_rfc3339_opts(SecondsFormat::Millis, true);
            prop_assert_eq!(serde_util::format_timestamp(&ts), want.clone());
            let st = TaskStatus { state: TaskState::Working, message: None, timestamp: Some(ts) };
            let json = serde_json::to_value(&st).unwrap();
            prop_assert_eq!(json["timestamp"].as_str(), Some(want.as_str()));
        }
    }

    /// Arbitrary bytes never panic the envelope parser, and every failure
    /// is one of the two envelope errors.
    #[test]
    fn parse_request_never_panics(body in prop::collection::vec(any::<u8>(), 0..256)) {
        if let Err((_, e)) = parse_request(&body) {
            prop_assert!(e.code() == -32700 || e.code() == -32600);
        }
    }

    /// Random JSON shaped like requests decodes or fails with a JSON-RPC error,
    /// and every params type decodes or fails with -32602.
    #[test]
    fn random_json_gets_a_jsonrpc_error(v in arb_json()) {
        let body = serde_json::to_vec(&v).unwrap();
        match parse_request(&body) {
            Err((_, e)) => prop_assert!(e.code() == -32700 || e.code() == -32600),
            Ok(req) => {
                for r in [
                    req.params::<SendMessageRequest>().err(),
                    req.params::<GetTaskRequest>().err(),
                    req.params::<ListTasksRequest>().err(),
                    req.params::<CancelTaskRequest>().err(),
                ].into_iter().flatten() {
                    prop_assert_eq!(r.code(), -32602);
                }
            }
        }
    }

    /// Whatever decodes as a message re-encodes and decodes to the same value.
    #[test]
    fn message_roundtrip(v in arb_json()) {
        if let Ok(m) = serde_json::from_value::<Message>(v) {
            let again: Message = serde_json::from_value(serde_json::to_value(&m).unwrap()).unwrap();
            prop_assert_eq!(again, m);
        }
    }
}

#[test]
fn errors_round_trip_through_the_wire() {
    let cases = vec![
        A2AError::TaskNotFound("t1".into()),
        A2AError::TaskNotCancelable {
            task_id: "t2".into(),
            state: "TASK_STATE_COMPLETED".into(),
        },
        A2AError::UnsupportedOperation("no".into()),
        A2AError::ExtensionSupportRequired("urn:x".into()),
        A2AError::VersionNotSupported("0.3".into()),
        A2AError::MethodNotFound("Nope".into()),
        A2AError::Internal("boom".into()),
    ];
    for e in cases {
        let wire = jsonrpc::JsonRpcError::from(&e);
        assert_eq!(wire.to_a2a_error(), e, "{e}");
    }
}

/// `A2AError::REASONS` lists every variant's reason once, in variant order
/// (metrics keep a counter per reason by this list).
#[test]
fn error_reasons_list_every_variant_once() {
    let s = || String::from("x");
    let every = [
        A2AError::Parse(s()),
        A2AError::InvalidRequest(s()),
        A2AError::MethodNotFound(s()),
        A2AError::InvalidParams {
            message: s(),
            violations: Vec::new(),
        },
        A2AError::Internal(s()),
        A2AError::TaskNotFound(s()),
        A2AError::TaskNotCancelable {
            task_id: s(),
            state: s(),
        },
        A2AError::PushNotificationNotSupported,
        A2AError::UnsupportedOperation(s()),
        A2AError::ContentTypeNotSupported(s()),
        A2AError::InvalidAgentResponse(s()),
        A2AError::ExtendedAgentCardNotConfigured,
        A2AError::ExtensionSupportRequired(s()),
        A2AError::VersionNotSupported(s()),
        A2AError::Unauthenticated(s()),
        A2AError::PermissionDenied(s()),
        A2AError::ResourceExhausted(s()),
    ];
    let reasons: Vec<&str> = every.iter().map(A2AError::reason).collect();
    assert_eq!(reasons, A2AError::REASONS);
}
