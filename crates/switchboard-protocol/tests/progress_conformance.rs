//! The task-progress spec's own test material, run against our validator:
//! the normative conformance vectors of §10, the examples of §9 and the card
//! declaration of §3.1, plus the wire details (integers stay integers,
//! timestamps end in `Z`) and the card-limit parsing rules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use switchboard_protocol::progress::*;
use switchboard_protocol::{AgentCard, AgentExtension, Metadata};

fn md(payload: Value) -> Metadata {
    let mut m = Metadata::new();
    m.insert(TASK_PROGRESS_URI.into(), payload);
    m
}

fn read(payload: Value) -> Result<ProgressPayload, InvalidProgress> {
    ProgressPayload::from_metadata(&md(payload)).expect("the entry is present")
}

fn rules(err: &InvalidProgress) -> Vec<ProgressRule> {
    err.violations.iter().map(|v| v.rule).collect()
}

// ---- §10 conformance vectors ------------------------------------------------

#[test]
fn vector_1_valid_monotonic_0_10_10_with_total_10() {
    let snaps: Vec<ProgressPayload> = [0, 10, 10]
        .iter()
        .map(|p| {
            read(
                json!({"trackers": [{"id": "t", "progress": p, "total": 10, "status": "running"}]}),
            )
            .unwrap()
        })
        .collect();
    for s in &snaps {
        validate(s, &ProgressLimits::default()).unwrap();
    }
    for w in snaps.windows(2) {
        assert!(check_monotonic(&w[0], &w[1]).is_empty());
    }
    let mut r = ProgressReducer::new();
    for s in &snaps {
        r.apply_metadata(&s.to_metadata());
    }
    assert!(r.violations().is_empty(), "{:?}", r.violations());
    assert_eq!(r.active()[0].progress, Some(10.0));
}

#[test]
fn a_regression_with_known_total_is_non_monotonic() {
    let a = read(json!({"trackers": [{"id": "t", "progress": 7, "total": 10}]})).unwrap();
    let b = read(json!({"trackers": [{"id": "t", "progress": 3, "total": 10}]})).unwrap();
    let v = check_monotonic(&a, &b);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].rule, ProgressRule::NonMonotonic);
    assert_eq!(v[0].path, "/trackers/0/progress");
    // Without a total, the SHOULD does not apply.
    let a = read(json!({"trackers": [{"id": "t", "progress": 7}]})).unwrap();
    let b = read(json!({"trackers": [{"id": "t", "progress": 3}]})).unwrap();
    assert!(check_monotonic(&a, &b).is_empty());
}

#[test]
fn vector_2_valid_unknown_total() {
    let mut prev: Option<ProgressPayload> = None;
    for p in [1, 2, 5, 9] {
        let s = read(json!({"trackers": [{"id": "download", "progress": p}]})).unwrap();
        assert_eq!(s.trackers[0].total, None);
        if let Some(prev) = &prev {
            assert!(check_monotonic(prev, &s).is_empty());
        }
        prev = Some(s);
    }
}

#[test]
fn vector_3_progress_above_total_is_rejected() {
    let err = read(json!({"trackers": [{"id": "t", "progress": 11, "total": 10}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::ProgressExceedsTotal]);
    assert_eq!(err.violations[0].path, "/trackers/0/progress");
    assert!(err.violations[0].message.contains("11"), "{err}");
    // Typed payloads are held to the same rule.
    let typed = ProgressPayload::new(vec![
        ProgressTracker::new("t")
            .with_progress(11.0)
            .with_total(10.0),
    ]);
    let v = validate(&typed, &ProgressLimits::default()).unwrap_err();
    assert_eq!(v[0].rule, ProgressRule::ProgressExceedsTotal);
}

#[test]
fn vector_4_invalid_status_is_rejected() {
    let err =
        read(json!({"trackers": [{"id": "t", "progress": 1, "status": "paused"}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Enum]);
    assert_eq!(err.violations[0].path, "/trackers/0/status");
    assert!(ProgressRule::Enum.is_schema());
    // Case matters: the enum is exact.
    let err = read(json!({"trackers": [{"id": "t", "status": "Running"}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Enum]);
}

#[test]
fn vector_5_inconsistent_aggregate_is_advisory() {
    let payload = json!({
        "trackers": [
            {"id": "a", "progress": 1, "total": 10},
            {"id": "b", "progress": 2, "total": 10}
        ],
        "aggregate": {"progress": 99, "total": 5, "message": "nearly there"}
    });
    let p = read(payload).unwrap();
    validate(&p, &ProgressLimits::default()).unwrap();
    let mut r = ProgressReducer::new();
    assert!(r.apply_metadata(&p.to_metadata()));
    assert!(r.violations().is_empty(), "{:?}", r.violations());
    assert_eq!(r.violation_count(), 0);
    assert_eq!(r.aggregate().unwrap().progress, Some(99.0));
    // The derived figure is available for clients that prefer it.
    let d = r.derived_aggregate();
    assert_eq!((d.progress, d.total), (Some(3.0), Some(20.0)));
}

// ---- §9 examples -------------------------------------------------------------

#[test]
fn section_9_examples_are_valid() {
    let ex1 = json!({
      "metadata": {
        "https://a2a-protocol.org/extensions/task-progress/v1": {
          "trackers": [
            {"id": "tool-call-1", "progress": 50, "total": 100, "message": "Processing image 50/100", "status": "running"}
          ],
          "aggregate": {"progress": 50, "total": 100}
        }
      }
    });
    let ex2 = json!({
      "metadata": {
        "https://a2a-protocol.org/extensions/task-progress/v1": {
          "trackers": [
            {"id": "download", "progress": 12, "message": "Downloaded 12 files"},
            {"id": "index", "progress": 3, "message": "Indexed 3 shards"}
          ]
        }
      }
    });
    for ex in [ex1, ex2] {
        let m: Metadata = serde_json::from_value(ex["metadata"].clone()).unwrap();
        let p = ProgressPayload::from_metadata(&m).unwrap().unwrap();
        validate(&p, &ProgressLimits::default()).unwrap();
        // Round trip: what we write back is byte-for-byte what the spec shows.
        assert_eq!(p.to_value(), m[TASK_PROGRESS_URI]);
    }
}

// ---- §5 rules the schema cannot express ---------------------------------------

#[test]
fn zero_total_forces_zero_progress() {
    read(json!({"trackers": [{"id": "t", "progress": 0, "total": 0}]})).unwrap();
    let err = read(json!({"trackers": [{"id": "t", "progress": 1, "total": 0}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::ZeroTotalProgress]);
}

#[test]
fn negative_numbers_are_rejected() {
    let err = read(json!({"trackers": [{"id": "t", "progress": -1}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Negative]);
    let err = read(json!({"trackers": [{"id": "t", "total": -5}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Negative]);
    assert_eq!(err.violations[0].path, "/trackers/0/total");
}

#[test]
fn non_finite_numbers_are_rejected_in_typed_payloads() {
    for bad in [f64::NAN, f64::INFINITY] {
        let p = ProgressPayload::new(vec![ProgressTracker::new("t").with_progress(bad)]);
        let v = validate(&p, &ProgressLimits::default()).unwrap_err();
        assert_eq!(v[0].rule, ProgressRule::NotFinite);
    }
}

#[test]
fn duplicate_ids_in_one_snapshot_are_rejected() {
    let err = read(json!({"trackers": [{"id": "t"}, {"id": "t"}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::DuplicateId]);
    assert_eq!(err.violations[0].path, "/trackers/1/id");
}

#[test]
fn declared_limits_are_enforced_below_the_schema_caps() {
    let limits = ProgressLimits {
        max_trackers: 2,
        max_message_chars: 5,
        max_id_chars: 3,
        recommended_max_updates_per_second: 2.0,
    };
    let v = json!({"trackers": [{"id": "abcd", "message": "123456"}, {"id": "b"}, {"id": "c"}]});
    let err = ProgressPayload::from_value(&v, &limits).unwrap_err();
    let mut got = rules(&err);
    got.sort_by_key(|r| r.as_str());
    assert_eq!(
        got,
        vec![
            ProgressRule::MaxIdChars,
            ProgressRule::MaxMessageChars,
            ProgressRule::MaxTrackers
        ]
    );
    // The same payload is fine under the schema caps alone.
    ProgressPayload::from_value(&v, &ProgressLimits::schema_caps()).unwrap();
}

#[test]
fn lengths_count_characters_not_bytes() {
    let id: String = "é".repeat(128);
    let msg: String = "日".repeat(512);
    read(json!({"trackers": [{"id": id, "message": msg}]})).unwrap();
    let err = read(json!({"trackers": [{"id": "é".repeat(129)}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::MaxLength]);
    let err = read(json!({"trackers": [{"id": "t", "message": "日".repeat(513)}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::MaxLength]);
    let err = read(json!({"trackers": [{"id": ""}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::MinLength]);
}

#[test]
fn raw_json_is_checked_not_just_what_a_typed_decode_keeps() {
    let err = read(json!({"trackers": [{"id": "t", "eta": 5}], "extra": true})).unwrap_err();
    let paths: Vec<&str> = err.violations.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(paths, vec!["/extra", "/trackers/0/eta"]);
    assert!(
        err.violations
            .iter()
            .all(|v| v.rule == ProgressRule::AdditionalProperties)
    );
    // The best-effort reading keeps the tracker for tolerant clients.
    assert_eq!(err.payload.unwrap().trackers[0].id, "t");

    let err = read(json!({"trackers": [{"id": "t", "startedAt": "yesterday"}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::DateTime]);
    let err = read(json!({"trackers": [{"id": 7, "progress": "5"}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Type, ProgressRule::Type]);
    let err = read(json!({"trackers": [{"progress": 1}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Required]);
    let err = read(json!({"aggregate": {"progress": 1}})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Required]);
    assert!(err.payload.is_none());
    let err = read(json!([1, 2])).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Type]);
    let err = read(json!({"trackers": [{"id": "t", "total": null}]})).unwrap_err();
    assert_eq!(rules(&err), vec![ProgressRule::Type]);
    // JSON Pointer escaping of odd keys.
    let err = read(json!({"trackers": [], "a/b~c": 1})).unwrap_err();
    assert_eq!(err.violations[0].path, "/a~1b~0c");
}

#[test]
fn timestamps_must_be_full_rfc3339_date_times() {
    for ok in [
        "2026-02-04T10:00:00Z",
        "2026-02-04t10:00:00z",
        "2026-02-04T10:00:00.123456+02:00",
        "2026-02-04T10:00:00-05:30",
    ] {
        assert!(parse_rfc3339(ok).is_some(), "{ok}");
        read(json!({"trackers": [{"id": "t", "updatedAt": ok}]})).unwrap();
    }
    for bad in [
        "2026-02-04",
        "2026-02-04 10:00:00Z",
        "2026-02-04T10:00Z",
        "2026-02-04T10:00:00",
        "2026-02-04T10:00:00.Z",
        "2026-02-30T10:00:00Z",
        "2026-02-04T25:00:00Z",
        "2026-02-04T10:00:00+0200",
        "not a date",
    ] {
        assert!(parse_rfc3339(bad).is_none(), "{bad}");
    }
}

// ---- wire form ----------------------------------------------------------------

#[test]
fn whole_numbers_are_written_as_integers() {
    let t = ProgressTracker::new("t")
        .with_progress(50.0)
        .with_total(100.0);
    let v = serde_json::to_string(&t).unwrap();
    assert_eq!(v, r#"{"id":"t","progress":50,"total":100}"#);
    let t = ProgressTracker::new("t").with_progress(2.5);
    assert_eq!(
        serde_json::to_string(&t).unwrap(),
        r#"{"id":"t","progress":2.5}"#
    );
    assert_eq!(format_amount(3.0), "3");
    assert_eq!(format_amount(0.25), "0.25");
    assert_eq!(format_amount(-0.0), "0");
}

#[test]
fn timestamps_are_written_in_utc_with_z() {
    let ts = parse_rfc3339("2026-02-04T12:00:00+02:00").unwrap();
    let mut t = ProgressTracker::new("t");
    t.started_at = Some(ts);
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(v["startedAt"], "2026-02-04T10:00:00.000Z");
}

#[test]
fn typed_decode_refuses_unknown_fields_too() {
    let r: Result<ProgressPayload, _> =
        serde_json::from_value(json!({"trackers": [{"id": "t", "eta": 1}]}));
    assert!(r.is_err());
}

// ---- §3.1 card declaration ----------------------------------------------------

#[test]
fn card_declaration_matches_section_3_1() {
    let ext = ProgressLimits::default().to_extension();
    assert_eq!(
        serde_json::to_value(&ext).unwrap(),
        json!({
            "uri": "https://a2a-protocol.org/extensions/task-progress/v1",
            "description": "Structured task progress reporting",
            "params": {
                "maxTrackers": 20,
                "maxMessageChars": 512,
                "maxIdChars": 128,
                "recommendedMaxUpdatesPerSecond": 2
            }
        })
    );
    assert!(!ext.required);
    assert_eq!(
        ProgressLimits::from_extension(&ext),
        ProgressLimits::default()
    );
    let mut card = AgentCard::new("a", "b", "1");
    assert_eq!(ProgressLimits::from_card(&card), None);
    card.capabilities.extensions.push(ext);
    assert_eq!(
        ProgressLimits::from_card(&card),
        Some(ProgressLimits::default())
    );
}

#[test]
fn card_params_are_read_leniently_and_clamped() {
    let ext = |params: Value| AgentExtension {
        uri: TASK_PROGRESS_URI.into(),
        description: None,
        required: false,
        params: params.as_object().cloned(),
    };
    let l = ProgressLimits::from_extension(&ext(json!({
        "maxTrackers": 500, "maxMessageChars": 1000, "maxIdChars": 16,
        "recommendedMaxUpdatesPerSecond": 0.5
    })));
    assert_eq!(l.max_trackers, 100);
    assert_eq!(l.max_message_chars, 512);
    assert_eq!(l.max_id_chars, 16);
    assert_eq!(l.recommended_max_updates_per_second, 0.5);
    let l = ProgressLimits::from_extension(&ext(json!({
        "maxTrackers": "many", "maxMessageChars": 0, "recommendedMaxUpdatesPerSecond": -1
    })));
    assert_eq!(l, ProgressLimits::default());
    let mut no_params = ext(json!({}));
    no_params.params = None;
    assert_eq!(
        ProgressLimits::from_extension(&no_params),
        ProgressLimits::default()
    );
    // A fractional rate is written as is.
    let e = l.clone();
    let e = ProgressLimits {
        recommended_max_updates_per_second: 0.5,
        ..e
    }
    .to_extension();
    assert_eq!(
        e.params.unwrap()["recommendedMaxUpdatesPerSecond"],
        json!(0.5)
    );
}

#[test]
fn violations_display_path_message_and_rule() {
    let err = read(json!({"trackers": [{"id": "t", "progress": 3, "total": 2}]})).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("/trackers/0/progress"), "{text}");
    assert!(text.contains("progress-exceeds-total"), "{text}");
}
