#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{rest, rpc};
use crate::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, Task, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Parts 0.3 can carry exactly: no mediaType/filename on text and data parts.
fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        "[a-z ]{0,10}".prop_map(Part::text),
        (
            prop::collection::vec(any::<u8>(), 0..8),
            prop::option::of("[a-z]{1,5}/[a-z]{1,5}"),
            prop::option::of("[a-z]{1,6}\\.txt")
        )
            .prop_map(|(b, mt, f)| Part {
                content: PartContent::Raw(b),
                metadata: None,
                filename: f,
                media_type: mt,
            }),
        (
            "https://[a-z]{1,6}\\.example/[a-z]{0,5}",
            prop::option::of("[a-z]{1,5}/[a-z]{1,5}")
        )
            .prop_map(|(u, mt)| Part {
                media_type: mt,
                ..Part::url(u)
            }),
        json_value().prop_map(Part::data),
    ]
}

fn state() -> impl Strategy<Value = TaskState> {
    prop::sample::select(TaskState::ALL.to_vec())
}

fn message() -> impl Strategy<Value = Message> {
    (
        "[a-z0-9]{1,8}",
        prop::option::of("[a-z0-9]{1,8}"),
        any::<bool>(),
        prop::collection::vec(part(), 0..4),
    )
        .prop_map(|(id, ctx, agent, parts)| {
            let mut m = Message::new(if agent { Role::Agent } else { Role::User }, parts);
            m.message_id = id;
            m.context_id = ctx;
            m
        })
}

fn task() -> impl Strategy<Value = Task> {
    (
        "[a-z0-9]{1,8}",
        state(),
        prop::option::of(prop::collection::vec(message(), 0..3)),
        prop::option::of(prop::collection::vec(
            ("[a-z]{1,5}", prop::collection::vec(part(), 0..3)),
            0..3,
        )),
    )
        .prop_map(|(id, st, history, arts)| Task {
            id,
            context_id: "ctx".into(),
            status: TaskStatus {
                state: st,
                message: None,
                timestamp: None,
            },
            artifacts: arts.map(|v| {
                v.into_iter()
                    .map(|(i, p)| Artifact::new(p).with_id(i))
                    .collect()
            }),
            history,
            metadata: None,
        })
}

proptest! {
    #[test]
    fn rpc_task_round_trips(t in task()) {
        let wire = serde_json::to_string(&rpc::Event::task(t.clone())).unwrap();
        let back: rpc::Event = serde_json::from_str(&wire).unwrap();
        prop_assert_eq!(StreamResponse::from(back), StreamResponse::Task(t));
    }

    #[test]
    fn rest_task_round_trips(t in task()) {
        let wire = serde_json::to_string(&rest::Task::from(t.clone())).unwrap();
        let back: rest::Task = serde_json::from_str(&wire).unwrap();
        prop_assert_eq!(Task::from(back), t);
    }

    #[test]
    fn rpc_message_round_trips(m in message()) {
        let wire = serde_json::to_value(rpc::Message::from(m.clone())).unwrap();
        prop_assert_eq!(&wire["kind"], "message");
        let back: rpc::Message = serde_json::from_value(wire).unwrap();
        prop_assert_eq!(Message::from(back), m);
    }

    #[test]
    fn random_bodies_never_panic(v in json_value(), s in ".{0,40}") {
        // Decoding either succeeds or says why; it never panics.
        let _ = serde_json::from_value::<rpc::Event>(v.clone());
        let _ = serde_json::from_value::<rpc::MessageSendParams>(v.clone());
        let _ = serde_json::from_value::<rpc::TaskPushNotificationConfig>(v.clone());
        let _ = serde_json::from_value::<rest::SendMessageRequest03>(v.clone());
        let _ = serde_json::from_value::<rest::StreamResponse>(v);
        let _ = serde_json::from_str::<rpc::MessageSendParams>(&s);
        let _ = serde_json::from_str::<rest::Part>(&s);
    }

    #[test]
    fn random_parts_are_decoded_or_refused(kind in prop::sample::select(vec!["text", "file", "data", "x"]), body in json_value()) {
        let mut obj = serde_json::Map::new();
        obj.insert("kind".into(), json!(kind));
        obj.insert(kind.to_string(), body.clone());
        let res = serde_json::from_value::<rpc::Part>(Value::Object(obj));
        match (kind, &body) {
            ("text", Value::String(_)) => prop_assert!(res.is_ok()),
            ("data", Value::Object(_)) => prop_assert!(res.is_ok()),
            ("data", _) | ("x", _) | ("text", _) => prop_assert!(res.is_err()),
            _ => {}
        }
    }
}

/// Each dialect writes every state its own way, reads it back, and refuses
/// the other dialect's spelling; REST also reads the one-L `CANCELED`.
#[test]
fn each_dialect_spells_the_task_states() {
    let cases = [
        (TaskState::Unspecified, "unknown", "TASK_STATE_UNSPECIFIED"),
        (TaskState::Submitted, "submitted", "TASK_STATE_SUBMITTED"),
        (TaskState::Working, "working", "TASK_STATE_WORKING"),
        (TaskState::Completed, "completed", "TASK_STATE_COMPLETED"),
        (TaskState::Failed, "failed", "TASK_STATE_FAILED"),
        (TaskState::Canceled, "canceled", "TASK_STATE_CANCELLED"),
        (
            TaskState::InputRequired,
            "input-required",
            "TASK_STATE_INPUT_REQUIRED",
        ),
        (TaskState::Rejected, "rejected", "TASK_STATE_REJECTED"),
        (
            TaskState::AuthRequired,
            "auth-required",
            "TASK_STATE_AUTH_REQUIRED",
        ),
    ];
    assert_eq!(cases.len(), TaskState::ALL.len());
    let status = |state: &str| json!({ "state": state });
    for (state, rpc_name, rest_name) in cases {
        let rpc_status = rpc::TaskStatus::from(TaskStatus {
            timestamp: None,
            ..TaskStatus::new(state)
        });
        assert_eq!(serde_json::to_value(&rpc_status).unwrap(), status(rpc_name));
        let rest_status = rest::TaskStatus::from(TaskStatus {
            timestamp: None,
            ..TaskStatus::new(state)
        });
        assert_eq!(
            serde_json::to_value(&rest_status).unwrap(),
            status(rest_name)
        );
        let read: rpc::TaskStatus = serde_json::from_value(status(rpc_name)).unwrap();
        assert_eq!(read.state, state);
        let read: rest::TaskStatus = serde_json::from_value(status(rest_name)).unwrap();
        assert_eq!(read.state, state);
        assert!(
            serde_json::from_value::<rpc::TaskStatus>(status(rest_name)).is_err(),
            "{rest_name}"
        );
        assert!(
            serde_json::from_value::<rest::TaskStatus>(status(rpc_name)).is_err(),
            "{rpc_name}"
        );
    }
    let one_l: rest::TaskStatus = serde_json::from_value(status("TASK_STATE_CANCELED")).unwrap();
    assert_eq!(one_l.state, TaskState::Canceled);
}

#[test]
fn a_message_event_writes_kind_once_and_reads_back() {
    let m = Message::new(Role::Agent, Vec::new()).with_task_id("t");
    let wire =
        serde_json::to_string(&rpc::Event::from(StreamResponse::Message(m.clone()))).unwrap();
    assert_eq!(wire.matches("\"kind\"").count(), 1, "{wire}");
    let v: Value = serde_json::from_str(&wire).unwrap();
    assert_eq!(v["kind"], "message");
    assert_eq!(v["role"], "agent");
    let back: rpc::Event = serde_json::from_str(&wire).unwrap();
    assert_eq!(StreamResponse::from(back), StreamResponse::Message(m));
}

#[test]
fn wire_shapes_of_the_jsonrpc_dialect() {
    let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus::new(TaskState::InputRequired),
        metadata: None,
    });
    let v = serde_json::to_value(rpc::Event::from(ev)).unwrap();
    assert_eq!(v["kind"], "status-update");
    assert_eq!(v["final"], true);
    assert_eq!(v["status"]["state"], "input-required");
    let working = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus::new(TaskState::Working),
        metadata: None,
    });
    assert_eq!(
        serde_json::to_value(rpc::Event::from(working)).unwrap()["final"],
        false
    );

    let m = Message::new(
        Role::User,
        vec![
            Part::raw(vec![1, 2], "image/png").with_filename("a.png"),
            Part::url("https://x/y"),
            Part::data(json!([1, 2])),
        ],
    );
    let v = serde_json::to_value(rpc::Message::from(m.clone())).unwrap();
    assert_eq!(v["role"], "user");
    assert_eq!(
        v["parts"][0],
        json!({"kind": "file", "file": {"name": "a.png", "mimeType": "image/png", "bytes": "AQI="}})
    );
    assert_eq!(v["parts"][1]["file"]["uri"], "https://x/y");
    assert_eq!(
        v["parts"][2],
        json!({"kind": "data", "data": {"value": [1, 2]}, "metadata": {"data_part_compat": true}})
    );
    let back: Message = serde_json::from_value::<rpc::Message>(v).unwrap().into();
    assert_eq!(
        back, m,
        "the data_part_compat marker makes the way back exact"
    );

    // Lossy: a text part's mediaType has nowhere to go in 0.3.
    let t = Part::text("x").with_media_type("text/markdown");
    let down = rpc::Part::from(t);
    assert_eq!(crate::Part::from(down).media_type, None);

    // Bad files are refused, not guessed.
    for bad in [
        json!({"kind": "file", "file": {"bytes": "AA==", "uri": "x"}}),
        json!({"kind": "file", "file": {}}),
        json!({"kind": "file", "file": {"bytes": "!!"}}),
        json!({"kind": "data", "data": 3}),
    ] {
        assert!(serde_json::from_value::<rpc::Part>(bad).is_err());
    }
}

#[test]
fn send_params_blocking_and_push_config() {
    let p: rpc::MessageSendParams = serde_json::from_value(json!({
        "message": {"kind": "message", "messageId": "m", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"blocking": false, "historyLength": 2,
            "pushNotificationConfig": {"url": "https://hook/x", "token": "tok",
               "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"}}}
    }))
    .unwrap();
    let req = crate::SendMessageRequest::from(p);
    assert!(!req.is_blocking());
    assert_eq!(req.history_length(), Some(2));
    let pc = req
        .configuration
        .as_ref()
        .unwrap()
        .task_push_notification_config
        .clone()
        .unwrap();
    assert_eq!(pc.authentication.unwrap().scheme, "Bearer");
    let unset: rpc::MessageSendParams = serde_json::from_value(json!({
        "message": {"messageId": "m", "role": "user", "parts": []},
        "configuration": {}
    }))
    .unwrap();
    assert!(crate::SendMessageRequest::from(unset).is_blocking());
}

#[test]
fn wire_shapes_of_the_rest_dialect() {
    let m = Message::new(
        Role::Agent,
        vec![
            Part::url("https://f").with_media_type("a/b"),
            Part::data(json!({"k": 1})),
        ],
    );
    let v = serde_json::to_value(rest::Message::from(m.clone())).unwrap();
    assert_eq!(v["role"], "ROLE_AGENT");
    assert_eq!(
        v["content"][0],
        json!({"file": {"fileWithUri": "https://f", "mimeType": "a/b"}})
    );
    assert_eq!(v["content"][1], json!({"data": {"data": {"k": 1}}}));
    assert!(v.get("kind").is_none() && v.get("parts").is_none());
    let back: Message = serde_json::from_value::<rest::Message>(v).unwrap().into();
    assert_eq!(back, m);
    let sr = rest::StreamResponse::from(crate::SendMessageResponse::Message(m));
    assert!(serde_json::to_value(sr).unwrap().get("message").is_some());
    let req: rest::SendMessageRequest03 = serde_json::from_value(json!({
        "request": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]},
        "configuration": {"blocking": true}
    }))
    .unwrap();
    let req = crate::SendMessageRequest::from(req);
    assert_eq!(req.message.text(), "x");
    assert!(req.is_blocking());
    // ProtoJSON omits `blocking: false`: unset inside a configuration is non-blocking.
    let req: rest::SendMessageRequest03 = serde_json::from_value(json!({
        "message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]},
        "configuration": {"historyLength": 1}
    }))
    .unwrap();
    assert!(!crate::SendMessageRequest::from(req).is_blocking());
    let bare: rest::SendMessageRequest03 = serde_json::from_value(json!({
        "message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}
    }))
    .unwrap();
    assert!(crate::SendMessageRequest::from(bare).is_blocking());
}

#[test]
fn hybrid_card_gives_security_schemes_both_forms() {
    use crate::card::{SecurityRequirement, StringList};
    use crate::{AgentCard, AgentInterface};
    let mut card = AgentCard::new("a", "b", "1");
    card.supported_interfaces.push(AgentInterface {
        url: "http://h/".into(),
        protocol_binding: "JSONRPC".into(),
        tenant: None,
        protocol_version: "0.3".into(),
    });
    card.security_schemes.insert(
        "apiKey".into(),
        json!({"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}}),
    );
    card.security_schemes.insert(
        "bearer".into(),
        json!({"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}}),
    );
    card.security_requirements = vec![
        SecurityRequirement {
            schemes: [("apiKey".to_string(), StringList::default())].into(),
        },
        SecurityRequirement {
            schemes: [(
                "bearer".to_string(),
                StringList {
                    list: vec!["read".into()],
                },
            )]
            .into(),
        },
    ];
    let v = super::card::hybrid_card(&card);
    assert_eq!(
        v["securitySchemes"]["apiKey"],
        json!({"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"},
               "type": "apiKey", "in": "header", "name": "X-API-Key"})
    );
    assert_eq!(v["securitySchemes"]["bearer"]["type"], "http");
    assert_eq!(v["securitySchemes"]["bearer"]["bearerFormat"], "JWT");
    assert_eq!(v["security"], json!([{"apiKey": []}, {"bearer": ["read"]}]));
    // The 1.0 reading is unchanged.
    let back: AgentCard = serde_json::from_value(v).unwrap();
    assert_eq!(back.security_requirements, card.security_requirements);
    // Without 0.3 interfaces nothing is added.
    card.supported_interfaces[0].protocol_version = "1.0".into();
    let strict = super::card::hybrid_card(&card);
    assert!(strict.get("security").is_none());
    assert!(strict["securitySchemes"]["apiKey"].get("type").is_none());
}
