#![allow(clippy::unwrap_used)]

use serde_json::json;
use switchboard_protocol as p;

use super::*;

fn task() -> p::Task {
    serde_json::from_value(json!({
        "id": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_INPUT_REQUIRED",
                   "message": {"messageId": "m0", "role": "ROLE_AGENT", "parts": [{"text": "more?"}]},
                   "timestamp": "2026-01-02T03:04:05.123Z"},
        "artifacts": [{"artifactId": "a1", "name": "n", "parts": [
            {"raw": "AAEC", "filename": "f.bin", "mediaType": "application/octet-stream"},
            {"url": "https://x/y", "mediaType": "text/plain"},
            {"data": {"k": [1, 2.5, null]}},
            {"data": 7}
        ]}],
        "history": [{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}], "extensions": ["u:x"]}],
        "metadata": {"n": 1}
    }))
    .unwrap()
}

#[test]
fn a_task_survives_the_round_trip() {
    let t = task();
    let pbt = task_to_proto(&t);
    assert_eq!(
        pbt.status.as_ref().unwrap().state,
        pb::TaskState::InputRequired as i32
    );
    // Parts are under `content`; a file part keeps name and mime type.
    let parts = &pbt.artifacts[0].parts;
    match parts[0].part.as_ref().unwrap() {
        pb::part::Part::File(f) => {
            assert_eq!(f.name, "f.bin");
            assert_eq!(
                f.file,
                Some(pb::file_part::File::FileWithBytes(vec![0, 1, 2]))
            );
        }
        other => panic!("{other:?}"),
    }
    // A non-object data value travels wrapped, and comes back as it was.
    assert_eq!(task_from_proto(pbt).unwrap(), t);
}

#[test]
fn status_updates_carry_final() {
    let ev: p::StreamResponse = serde_json::from_value(json!({"statusUpdate": {
        "taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}))
    .unwrap();
    let pbe = stream_to_proto(&ev);
    match pbe.payload.as_ref().unwrap() {
        pb::stream_response::Payload::StatusUpdate(s) => assert!(s.r#final),
        other => panic!("{other:?}"),
    }
    assert_eq!(stream_from_proto(pbe).unwrap(), ev);
}

#[test]
fn send_request_rules() {
    let req = pb::SendMessageRequest {
        request: Some(pb::Message {
            message_id: "m".into(),
            role: pb::Role::User as i32,
            content: vec![pb::Part {
                part: Some(pb::part::Part::Text("hi".into())),
                metadata: None,
            }],
            ..Default::default()
        }),
        configuration: None,
        metadata: None,
    };
    let canon = send_request_from_proto(req.clone()).unwrap();
    assert_eq!(canon.message.parts[0], p::Part::text("hi"));
    // No configuration blocks.
    assert!(
        canon
            .configuration
            .as_ref()
            .is_none_or(|c| !c.return_immediately)
    );
    let mut no_msg = req.clone();
    no_msg.request = None;
    assert_eq!(
        send_request_from_proto(no_msg).unwrap_err(),
        ConvertError::Missing("request")
    );
    let mut empty_part = req.clone();
    empty_part.request.as_mut().unwrap().content[0].part = None;
    assert_eq!(
        send_request_from_proto(empty_part).unwrap_err().field(),
        "part.part"
    );
    let mut bad_role = req;
    bad_role.request.as_mut().unwrap().role = 9;
    assert_eq!(
        send_request_from_proto(bad_role).unwrap_err().field(),
        "role"
    );
}

#[test]
fn resource_names() {
    assert_eq!(task_name("tasks/abc", "name").unwrap(), "abc");
    for bad in ["", "tasks/", "abc", "tasks/a/b", "task/a"] {
        assert!(task_name(bad, "name").is_err(), "{bad}");
    }
    assert_eq!(
        config_name("tasks/t/pushNotificationConfigs/c", "name").unwrap(),
        ("t".into(), "c".into())
    );
    assert_eq!(
        config_name("tasks/t/pushNotificationConfigs/", "name").unwrap(),
        ("t".into(), "".into())
    );
    for bad in [
        "tasks/t",
        "tasks//pushNotificationConfigs/c",
        "tasks/t/pushNotificationConfigsX",
        "tasks/t/pushNotificationConfigs/c/d",
    ] {
        assert!(config_name(bad, "name").is_err(), "{bad}");
    }
}

#[test]
fn push_configs_are_named() {
    let c = p::TaskPushNotificationConfig {
        tenant: None,
        id: Some("c1".into()),
        task_id: Some("t1".into()),
        url: "https://hook/".into(),
        token: Some("tok".into()),
        authentication: Some(p::AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("x".into()),
        }),
    };
    let pbc = push_config_to_proto(&c);
    assert_eq!(pbc.name, "tasks/t1/pushNotificationConfigs/c1");
    assert_eq!(push_config_from_proto(pbc).unwrap(), c);
    let create = create_push_config_to_proto(&c);
    assert_eq!(create.parent, "tasks/t1");
    assert_eq!(create_push_config_from_proto(create).unwrap(), c);
}

#[test]
fn the_card_names_its_03_interfaces() {
    let mut card = p::AgentCard::new("a", "b", "1");
    for (url, b, v) in [
        ("http://h/", "JSONRPC", "1.0"),
        ("h:1", "GRPC", "1.0"),
        ("http://h/", "JSONRPC", "0.3"),
        ("h:1", "GRPC", "0.3"),
    ] {
        card.supported_interfaces.push(p::AgentInterface {
            url: url.into(),
            protocol_binding: b.into(),
            tenant: None,
            protocol_version: v.into(),
        });
    }
    let pbc = card_to_proto(&card);
    assert_eq!(pbc.protocol_version, "0.3.0");
    assert_eq!(pbc.url, "http://h/");
    assert_eq!(pbc.preferred_transport, "JSONRPC");
    assert_eq!(pbc.additional_interfaces.len(), 2);
    let back = card_from_proto(pbc).unwrap();
    assert_eq!(back.name, "a");
    let v: Vec<_> = back
        .supported_interfaces
        .iter()
        .map(|i| {
            (
                i.url.as_str(),
                i.protocol_binding.as_str(),
                i.protocol_version.as_str(),
            )
        })
        .collect();
    assert_eq!(v, [("http://h/", "JSONRPC", "0.3"), ("h:1", "GRPC", "0.3")]);
}
