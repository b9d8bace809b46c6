//! Our task-progress validator against the spec's normative JSON Schema
//! (§8), run by an independent implementation (the `jsonschema` crate,
//! draft 2020-12, with `format` assertions on).
//!
//! The two must agree on every payload: the schema rejects a payload exactly
//! when we report at least one *schema* rule ([`ProgressRule::is_schema`]).
//! The rules the schema cannot express (progress above total, negative
//! numbers, ...) are ours alone, so a payload breaking only those is valid
//! for the schema and invalid for us. Checked on a hand-written corpus and on
//! random payloads.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod schema;

use proptest::prelude::*;
use schema::progress_schema;
use serde_json::{Value, json};
use switchboard_protocol::progress::*;

/// Asserts agreement and returns our violations.
fn agree(v: &jsonschema::Validator, payload: &Value) -> Vec<ProgressViolation> {
    let ours = validate_value(payload, &ProgressLimits::schema_caps())
        .err()
        .unwrap_or_default();
    let we_say_schema_invalid = ours.iter().any(|x| x.rule.is_schema());
    let theirs: Vec<String> = v
        .iter_errors(payload)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert_eq!(
        we_say_schema_invalid,
        !theirs.is_empty(),
        "disagreement on {payload}\n ours: {ours:?}\n schema: {theirs:?}"
    );
    ours
}

#[test]
fn the_schema_constant_is_the_spec_schema() {
    let s: Value = serde_json::from_str(TASK_PROGRESS_SCHEMA).unwrap();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["properties"]["trackers"]["maxItems"], 100);
    assert_eq!(
        s["definitions"]["tracker"]["properties"]["id"]["maxLength"],
        128
    );
}

#[test]
fn corpus_agrees_with_the_normative_schema() {
    let v = progress_schema();
    let valid = [
        json!({"trackers": []}),
        json!({"trackers": [{"id": "a"}]}),
        json!({"trackers": [{"id": "a", "progress": 0, "total": 0}]}),
        json!({"trackers": [{"id": "a", "progress": 1.5, "total": 3, "status": "completed",
            "message": "m", "startedAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:01.5+01:00"}]}),
        json!({"trackers": [], "aggregate": {}}),
        json!({"trackers": [], "aggregate": {"progress": 3, "total": 1, "message": "x"}}),
        json!({"trackers": [{"id": "x".repeat(128), "message": "y".repeat(512)}]}),
    ];
    for p in &valid {
        assert!(agree(&v, p).is_empty(), "{p}");
    }
    let schema_invalid = [
        json!(null),
        json!("trackers"),
        json!({}),
        json!({"trackers": {}}),
        json!({"trackers": [], "x": 1}),
        json!({"trackers": [1]}),
        json!({"trackers": [{}]}),
        json!({"trackers": [{"id": ""}]}),
        json!({"trackers": [{"id": "x".repeat(129)}]}),
        json!({"trackers": [{"id": 1}]}),
        json!({"trackers": [{"id": "a", "progress": "1"}]}),
        json!({"trackers": [{"id": "a", "total": null}]}),
        json!({"trackers": [{"id": "a", "status": "done"}]}),
        json!({"trackers": [{"id": "a", "message": "m".repeat(513)}]}),
        json!({"trackers": [{"id": "a", "startedAt": "2026-01-01"}]}),
        json!({"trackers": [{"id": "a", "updatedAt": "2026-13-01T00:00:00Z"}]}),
        json!({"trackers": [{"id": "a", "eta": 3}]}),
        json!({"trackers": [], "aggregate": []}),
        json!({"trackers": [], "aggregate": {"eta": 1}}),
        json!({"trackers": [], "aggregate": {"message": 5}}),
        json!({"trackers": (0..101).map(|i| json!({"id": i.to_string()})).collect::<Vec<_>>()}),
    ];
    for p in &schema_invalid {
        assert!(!agree(&v, p).is_empty(), "{p}");
    }
    // Valid for the schema, invalid for the spec's prose rules.
    let semantic_only = [
        (
            json!({"trackers": [{"id": "a", "progress": 11, "total": 10}]}),
            ProgressRule::ProgressExceedsTotal,
        ),
        (
            json!({"trackers": [{"id": "a", "progress": 1, "total": 0}]}),
            ProgressRule::ZeroTotalProgress,
        ),
        (
            json!({"trackers": [{"id": "a", "progress": -1}]}),
            ProgressRule::Negative,
        ),
        (
            json!({"trackers": [{"id": "a"}, {"id": "a"}]}),
            ProgressRule::DuplicateId,
        ),
    ];
    for (p, rule) in &semantic_only {
        let ours = agree(&v, p);
        assert_eq!(ours.len(), 1, "{p}: {ours:?}");
        assert_eq!(ours[0].rule, *rule);
        assert!(!rule.is_schema());
    }
}

#[test]
fn everything_we_emit_from_typed_payloads_is_schema_valid() {
    let v = progress_schema();
    let p = ProgressPayload::new(vec![
        ProgressTracker::new("a")
            .with_progress(50.0)
            .with_total(100.0)
            .with_status(TrackerStatus::Running)
            .with_message("half"),
        ProgressTracker::new("b").with_progress(0.5),
    ])
    .with_aggregate(ProgressAggregate::default());
    let mut p = p;
    p.trackers[0].started_at = Some(chrono::Utc::now());
    p.trackers[0].updated_at = Some(chrono::Utc::now());
    validate(&p, &ProgressLimits::default()).unwrap();
    assert!(v.is_valid(&p.to_value()));
}

// ---- random payloads ------------------------------------------------------------

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u32..20).prop_map(|n| json!(n)),
        (-3i32..0).prop_map(|n| json!(n)),
        (0.0f64..20.0).prop_map(|n| json!(n)),
    ]
}

fn junk() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!("7")),
        Just(json!([])),
        Just(json!({})),
        Just(json!(3)),
    ]
}

fn text(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-zé日-]{1,12}",
        (0..4usize).prop_map(move |k| "m".repeat(max - 1 + k)),
    ]
}

fn timestamp() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("2026-02-04T10:00:00Z".to_string()),
        Just("2026-02-04T10:00:00.250+02:00".to_string()),
        Just("2026-02-04".to_string()),
        Just("2026-02-04T10:00:00".to_string()),
        Just("2026-02-31T10:00:00Z".to_string()),
        Just("soon".to_string()),
    ]
}

fn maybe<T: std::fmt::Debug + Clone + 'static>(
    s: impl Strategy<Value = T> + 'static,
) -> impl Strategy<Value = Option<T>> {
    prop_oneof![Just(None), s.prop_map(Some)]
}

fn field_value(key: &str) -> BoxedStrategy<Value> {
    match key {
        "id" => prop_oneof![4 => text(128).prop_map(Value::from), 1 => junk()].boxed(),
        "progress" | "total" => prop_oneof![4 => number(), 1 => junk()].boxed(),
        "message" => prop_oneof![4 => text(512).prop_map(Value::from), 1 => junk()].boxed(),
        "status" => prop_oneof![
            Just(json!("running")),
            Just(json!("completed")),
            Just(json!("failed")),
            Just(json!("paused")),
            junk()
        ]
        .boxed(),
        _ => prop_oneof![4 => timestamp().prop_map(Value::from), 1 => junk()].boxed(),
    }
}

/// An object of the fields that are present.
fn object<K: Into<String>>(fields: impl IntoIterator<Item = (K, Option<Value>)>) -> Value {
    let present = fields.into_iter().filter_map(|(k, v)| Some((k.into(), v?)));
    Value::Object(present.collect())
}

/// A tracker's fields, as the spec's schema lists them.
fn tracker_keys() -> Vec<String> {
    let schema: Value = serde_json::from_str(TASK_PROGRESS_SCHEMA).unwrap();
    let properties = schema["definitions"]["tracker"]["properties"]
        .as_object()
        .unwrap();
    properties.keys().cloned().collect()
}

fn tracker() -> impl Strategy<Value = Value> {
    let fields: Vec<BoxedStrategy<(String, Option<Value>)>> = tracker_keys()
        .into_iter()
        .map(|k| {
            let weight_present = if k == "id" { 9 } else { 1 };
            let present = field_value(&k).prop_map(Some);
            prop_oneof![1 => Just(None), weight_present => present]
                .prop_map(move |v| (k.clone(), v))
                .boxed()
        })
        .collect();
    (fields, maybe(Just(json!(1))))
        .prop_map(|(fields, eta)| object(fields.into_iter().chain([("eta".into(), eta)])))
}

fn payload() -> impl Strategy<Value = Value> {
    let trackers = prop_oneof![
        10 => prop::collection::vec(prop_oneof![9 => tracker(), 1 => junk()], 0..5).prop_map(Value::Array),
        1 => (99usize..103).prop_map(|n| Value::Array((0..n).map(|i| json!({"id": format!("t{i}")})).collect())),
        1 => junk(),
    ];
    let aggregate = (maybe(number()), maybe(number()), maybe(text(512))).prop_map(|(p, t, m)| {
        object([
            ("progress", p),
            ("total", t),
            ("message", m.map(Value::from)),
        ])
    });
    (
        maybe(trackers),
        maybe(prop_oneof![5 => aggregate, 1 => junk()]),
        maybe(Just(json!(1))),
        prop::bool::weighted(0.03),
    )
        .prop_map(|(t, a, extra, not_object)| {
            if not_object {
                return json!([1]);
            }
            object([("trackers", t), ("aggregate", a), ("extra", extra)])
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_payloads_agree_with_the_schema(p in payload()) {
        let v = progress_schema();
        agree(&v, &p);
        // A payload we accept decodes, and re-encodes to something we accept.
        if let Ok(decoded) = ProgressPayload::from_value(&p, &ProgressLimits::schema_caps()) {
            validate(&decoded, &ProgressLimits::schema_caps()).unwrap();
            prop_assert!(v.is_valid(&decoded.to_value()));
        }
    }
}
