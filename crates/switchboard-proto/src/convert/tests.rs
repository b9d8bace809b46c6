//! Round trips: canonical → prost → bytes → prost → canonical is the
//! identity for every value the canonical types can hold (modulo the
//! documented presence rule: `Some("")` and `Some(vec![])` are not generated
//! because proto3 cannot tell them from absent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use proptest::prelude::*;

fn wire<P: prost::Message + Default>(x: &P) -> P {
    P::decode(x.encode_to_vec().as_slice()).unwrap()
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-(1i64 << 53)..(1i64 << 53)).prop_map(|n| Value::Number(n.into())),
        // Non-integral finite doubles survive as floats.
        (-1.0e12f64..1.0e12)
            .prop_filter("non-integral", |f| f.fract() != 0.0)
            .prop_map(|f| Value::Number(Number::from_f64(f).unwrap())),
        "[a-zA-Z0-9 é€]{0,12}".prop_map(Value::String),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn meta() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(
        prop::collection::btree_map("[a-z]{1,6}", json(), 0..3)
            .prop_map(|m| m.into_iter().collect()),
    )
}

fn text() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,10}"
}

fn otext() -> impl Strategy<Value = Option<String>> {
    prop::option::of(text())
}

fn part() -> impl Strategy<Value = p::Part> {
    let content = prop_oneof![
        ".{0,10}".prop_map(p::PartContent::Text),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(p::PartContent::Raw),
        text().prop_map(p::PartContent::Url),
        json().prop_map(p::PartContent::Data),
    ];
    (content, meta(), otext(), otext()).prop_map(|(content, metadata, filename, media_type)| {
        p::Part {
            content,
            metadata,
            filename,
            media_type,
        }
    })
}

fn role() -> impl Strategy<Value = p::Role> {
    prop_oneof![Just(p::Role::User), Just(p::Role::Agent)]
}

fn message() -> impl Strategy<Value = p::Message> {
    (
        text(),
        otext(),
        otext(),
        role(),
        prop::collection::vec(part(), 0..3),
        meta(),
        prop::collection::vec(text(), 0..2),
        prop::collection::vec(text(), 0..2),
    )
        .prop_map(
            |(id, ctx, task, role, parts, metadata, ext, refs)| p::Message {
                message_id: id,
                context_id: ctx,
                task_id: task,
                role,
                parts,
                metadata,
                extensions: ext,
                reference_task_ids: refs,
            },
        )
}

/// Times as A2A carries them on every wire: to the millisecond.
fn time() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..4_000_000_000, 0u32..1_000)
        .prop_map(|(s, ms)| DateTime::from_timestamp(s, ms * 1_000_000).unwrap())
}

fn state() -> impl Strategy<Value = p::TaskState> {
    prop::sample::select(p::TaskState::ALL.to_vec())
}

fn status() -> impl Strategy<Value = p::TaskStatus> {
    (
        state(),
        prop::option::of(message()),
        prop::option::of(time()),
    )
        .prop_map(|(state, message, timestamp)| p::TaskStatus {
            state,
            message,
            timestamp,
        })
}

fn artifact() -> impl Strategy<Value = p::Artifact> {
    (
        text(),
        otext(),
        otext(),
        prop::collection::vec(part(), 0..3),
        meta(),
        prop::collection::vec(text(), 0..2),
    )
        .prop_map(
            |(artifact_id, name, description, parts, metadata, extensions)| p::Artifact {
                artifact_id,
                name,
                description,
                parts,
                metadata,
                extensions,
            },
        )
}

fn task() -> impl Strategy<Value = p::Task> {
    (
        text(),
        text(),
        status(),
        prop::option::of(prop::collection::vec(artifact(), 1..3)),
        prop::option::of(prop::collection::vec(message(), 1..3)),
        meta(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata)| p::Task {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
            },
        )
}

fn stream_item() -> impl Strategy<Value = p::StreamResponse> {
    prop_oneof![
        task().prop_map(p::StreamResponse::Task),
        message().prop_map(p::StreamResponse::Message),
        (text(), text(), status(), meta()).prop_map(|(task_id, context_id, status, metadata)| {
            p::StreamResponse::StatusUpdate(p::TaskStatusUpdateEvent {
                task_id,
                context_id,
                status,
                metadata,
            })
        }),
        (
            text(),
            text(),
            artifact(),
            any::<bool>(),
            any::<bool>(),
            meta()
        )
            .prop_map(
                |(task_id, context_id, artifact, append, last_chunk, metadata)| {
                    p::StreamResponse::ArtifactUpdate(p::TaskArtifactUpdateEvent {
                        task_id,
                        context_id,
                        artifact,
                        append,
                        last_chunk,
                        metadata,
                    })
                }
            ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn json_values_round_trip(v in json()) {
        let back = value_from_proto(wire(&value_to_proto(&v))).unwrap();
        prop_assert_eq!(back, v);
    }

    #[test]
    fn timestamps_round_trip(t in time()) {
        let back = timestamp_from_proto(wire(&timestamp_to_proto(&t)), "t").unwrap();
        prop_assert_eq!(back, t);
    }

    /// Below the millisecond is dropped, as the JSON forms drop it.
    #[test]
    fn timestamps_keep_milliseconds(s in 0i64..4_000_000_000, n in 0u32..1_000_000_000) {
        let t = DateTime::from_timestamp(s, n).unwrap();
        let back = timestamp_from_proto(wire(&timestamp_to_proto(&t)), "t").unwrap();
        prop_assert_eq!(back.timestamp(), s);
        prop_assert_eq!(back.timestamp_subsec_nanos(), n / 1_000_000 * 1_000_000);
    }

    #[test]
    fn stream_items_round_trip(item in stream_item()) {
        let back = p::StreamResponse::try_from(wire(&pb::StreamResponse::from(&item))).unwrap();
        prop_assert_eq!(back, item);
    }

    #[test]
    fn send_message_requests_round_trip(
        m in message(),
        tenant in otext(),
        hist in prop::option::of(0i32..10),
        ret in any::<bool>(),
        modes in prop::collection::vec(text(), 0..2),
        metadata in meta(),
        push in prop::option::of((text(), otext(), prop::option::of((text(), otext())))),
    ) {
        let req = p::SendMessageRequest {
            tenant,
            message: m,
            configuration: Some(p::SendMessageConfiguration {
                accepted_output_modes: modes,
                task_push_notification_config: push.map(|(url, token, auth)| p::TaskPushNotificationConfig {
                    tenant: None, id: None, task_id: None, url, token,
                    authentication: auth.map(|(scheme, credentials)| p::AuthenticationInfo { scheme, credentials }),
                }),
                history_length: hist,
                return_immediately: ret,
            }),
            metadata,
        };
        let back = p::SendMessageRequest::try_from(wire(&pb::SendMessageRequest::from(&req))).unwrap();
        prop_assert_eq!(back, req);
    }

    #[test]
    fn list_tasks_round_trip(
        tenant in otext(), ctx in otext(),
        status in prop::option::of(state().prop_filter("unspecified is no filter", |s| *s != p::TaskState::Unspecified)),
        size in prop::option::of(0i32..200), token in otext(), hist in prop::option::of(0i32..5),
        after in prop::option::of(time()), arts in prop::option::of(any::<bool>()),
        tasks in prop::collection::vec(task(), 0..3),
    ) {
        let req = p::ListTasksRequest {
            tenant, context_id: ctx, status, page_size: size, page_token: token,
            history_length: hist, status_timestamp_after: after, include_artifacts: arts,
        };
        prop_assert_eq!(p::ListTasksRequest::try_from(wire(&pb::ListTasksRequest::from(&req))).unwrap(), req);
        let resp = p::ListTasksResponse { tasks, next_page_token: String::new(), page_size: 50, total_size: 3 };
        prop_assert_eq!(p::ListTasksResponse::try_from(wire(&pb::ListTasksResponse::from(&resp))).unwrap(), resp);
    }
}

#[test]
fn missing_required_fields_are_named() {
    let err = p::Task::try_from(pb::Task::default()).unwrap_err();
    assert_eq!(err, ConvertError::Missing("task.status"));
    let err = p::SendMessageRequest::try_from(pb::SendMessageRequest::default()).unwrap_err();
    assert_eq!(err.field(), "message");
    let err = p::Part::try_from(pb::Part::default()).unwrap_err();
    assert_eq!(err.field(), "part.content");
    let bad_role = pb::Message {
        role: 7,
        ..Default::default()
    };
    assert_eq!(p::Message::try_from(bad_role).unwrap_err().field(), "role");
    let nan = prost_types::Value {
        kind: Some(prost_types::value::Kind::NumberValue(f64::NAN)),
    };
    assert!(value_from_proto(nan).is_err());
    let bad_time = prost_types::Timestamp {
        seconds: 0,
        nanos: -1,
    };
    assert!(timestamp_from_proto(bad_time, "t").is_err());
}

#[test]
fn the_card_round_trips_with_security_schemes() {
    let json = serde_json::json!({
        "name": "a", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "127.0.0.1:1", "protocolBinding": "GRPC", "tenant": "t", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true, "pushNotifications": false,
            "extensions": [{"uri": "urn:x", "required": true, "params": {"n": 1}}]},
        "securitySchemes": {
            "k": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
            "b": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": {"r": "read"}}}}},
            "i": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o"}},
            "m": {"mtlsSecurityScheme": {"description": "mtls"}}
        },
        "securityRequirements": [{"schemes": {"k": {"list": []}, "o": {"list": ["r"]}}}],
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["t"]}],
        "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "1"}}],
        "iconUrl": "https://i"
    });
    let card: p::AgentCard = serde_json::from_value(json).unwrap();
    let back = p::AgentCard::try_from(wire(&pb::AgentCard::from(&card))).unwrap();
    assert_eq!(back, card);
}

/// Every scheme kind and every OAuth flow, each field set, goes to the
/// proto oneof and back unchanged; what the card leaves out comes back as
/// the proto3 defaults do (empty strings omitted, `pkceRequired` and
/// `scopes` always written, an OAuth scheme without flows as `flows: {}`).
#[test]
fn every_security_scheme_kind_and_flow_round_trips() {
    let flow_fields = serde_json::json!({
        "authorizationUrl": "https://a", "deviceAuthorizationUrl": "https://d",
        "tokenUrl": "https://t", "refreshUrl": "https://r", "scopes": {"x": "y"}, "pkceRequired": true
    });
    let kept = |keys: &[&str]| -> Value {
        keys.iter()
            .map(|k| (k.to_string(), flow_fields[*k].clone()))
            .collect::<Map<_, _>>()
            .into()
    };
    let cases = [
        serde_json::json!({"apiKeySecurityScheme": {"description": "d", "location": "header", "name": "X-Key"}}),
        serde_json::json!({"httpAuthSecurityScheme": {"description": "d", "scheme": "Bearer", "bearerFormat": "JWT"}}),
        serde_json::json!({"openIdConnectSecurityScheme": {"description": "d", "openIdConnectUrl": "https://o"}}),
        serde_json::json!({"mtlsSecurityScheme": {"description": "d"}}),
        serde_json::json!({"oauth2SecurityScheme": {"description": "d", "oauth2MetadataUrl": "https://m", "flows": {
            "authorizationCode": kept(&["authorizationUrl", "tokenUrl", "refreshUrl", "scopes", "pkceRequired"])}}}),
        serde_json::json!({"oauth2SecurityScheme": {"description": "d", "oauth2MetadataUrl": "https://m", "flows": {
            "clientCredentials": kept(&["tokenUrl", "refreshUrl", "scopes"])}}}),
        serde_json::json!({"oauth2SecurityScheme": {"description": "d", "oauth2MetadataUrl": "https://m", "flows": {
            "implicit": kept(&["authorizationUrl", "refreshUrl", "scopes"])}}}),
        serde_json::json!({"oauth2SecurityScheme": {"description": "d", "oauth2MetadataUrl": "https://m", "flows": {
            "password": kept(&["tokenUrl", "refreshUrl", "scopes"])}}}),
        serde_json::json!({"oauth2SecurityScheme": {"description": "d", "oauth2MetadataUrl": "https://m", "flows": {
            "deviceCode": kept(&["deviceAuthorizationUrl", "tokenUrl", "refreshUrl", "scopes"])}}}),
    ];
    for scheme in cases {
        let proto = wire(&scheme_to_proto(&scheme));
        assert_eq!(scheme_from_proto(proto).unwrap(), scheme);
    }

    // Left out in the card: proto3 defaults.
    let sparse = [
        (
            serde_json::json!({"apiKeySecurityScheme": {"name": "X-Key"}}),
            serde_json::json!({"apiKeySecurityScheme": {"name": "X-Key"}}),
        ),
        (
            serde_json::json!({"oauth2SecurityScheme": {}}),
            serde_json::json!({"oauth2SecurityScheme": {"flows": {}}}),
        ),
        (
            serde_json::json!({"oauth2SecurityScheme": {"flows": {"authorizationCode": {}}}}),
            serde_json::json!({"oauth2SecurityScheme": {"flows": {"authorizationCode": {"scopes": {}, "pkceRequired": false}}}}),
        ),
    ];
    for (card, back) in sparse {
        assert_eq!(
            scheme_from_proto(wire(&scheme_to_proto(&card))).unwrap(),
            back
        );
    }

    // A kind we do not know has no proto form, and a proto scheme without a kind is refused.
    assert_eq!(
        scheme_to_proto(&serde_json::json!({"magic": {}})).scheme,
        None
    );
    assert!(scheme_from_proto(pb::SecurityScheme { scheme: None }).is_err());
}

/// The requests converted field by field round-trip, with and without
/// their optional fields (an unset one is the proto3 default on the wire).
#[test]
fn the_plain_requests_round_trip() {
    fn round_trip<C, W>(canonical: C)
    where
        C: Clone + PartialEq + std::fmt::Debug + From<W>,
        W: prost::Message + Default + for<'a> From<&'a C>,
    {
        assert_eq!(C::from(wire(&W::from(&canonical))), canonical);
    }
    for tenant in [None, Some("t".to_string())] {
        round_trip::<_, pb::GetTaskRequest>(p::GetTaskRequest {
            tenant: tenant.clone(),
            id: "x".into(),
            history_length: Some(0),
        });
        round_trip::<_, pb::GetTaskRequest>(p::GetTaskRequest {
            tenant: tenant.clone(),
            id: "x".into(),
            history_length: None,
        });
        round_trip::<_, pb::SubscribeToTaskRequest>(p::SubscribeToTaskRequest {
            tenant: tenant.clone(),
            id: "x".into(),
        });
        let config = p::TaskPushNotificationConfigRef {
            tenant: tenant.clone(),
            task_id: "x".into(),
            id: "c".into(),
        };
        round_trip::<_, pb::GetTaskPushNotificationConfigRequest>(config.clone());
        round_trip::<_, pb::DeleteTaskPushNotificationConfigRequest>(config);
        for (page_size, page_token) in [(None, None), (Some(5), Some("p".to_string()))] {
            let list = p::ListTaskPushNotificationConfigsRequest {
                tenant: tenant.clone(),
                task_id: "x".into(),
                page_size,
                page_token,
            };
            round_trip::<_, pb::ListTaskPushNotificationConfigsRequest>(list);
        }
        round_trip::<_, pb::GetExtendedAgentCardRequest>(p::GetExtendedAgentCardRequest { tenant });
    }
    // `page_size: 0` is "server default" on the wire, and reads as unset.
    let zero = pb::ListTaskPushNotificationConfigsRequest {
        page_size: 0,
        ..Default::default()
    };
    assert_eq!(
        p::ListTaskPushNotificationConfigsRequest::from(zero).page_size,
        None
    );
}
