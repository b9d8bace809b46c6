#![allow(clippy::unwrap_used)]

use std::time::Duration;

use switchboard_protocol::{Operation, TaskState};

use crate::metrics::{Metrics, Outcome, render_metrics};
use crate::trace::TraceParent;

/// A log sink a test can read, that blocks its writers while `gate` is
/// held.
#[cfg(feature = "logging")]
#[derive(Clone, Default)]
pub(crate) struct Sink {
    bytes: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    pub(crate) gate: std::sync::Arc<std::sync::Mutex<()>>,
}

#[cfg(feature = "logging")]
impl Sink {
    /// What was written so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes.lock().unwrap_or_else(|e| e.into_inner())).into()
    }
}

#[cfg(feature = "logging")]
impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _open = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        self.bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn traceparent_round_trips_and_refuses_what_the_spec_refuses() {
    let v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let tp = TraceParent::parse(v).unwrap();
    assert_eq!(tp.to_string(), v);
    assert!(tp.sampled());
    assert_eq!(tp.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    // A later version may append fields; version 00 may not.
    assert!(
        TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x").is_some()
    );
    for bad in [
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba9é2b7-01",
    ] {
        assert_eq!(TraceParent::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn every_operation_has_a_slot() {
    let m = Metrics::new();
    for op in Operation::ALL {
        m.request(Some(*op), "rest", Outcome::Ok, Duration::from_millis(1));
        assert_eq!(m.requests(Some(*op), "rest", Outcome::Ok), 1, "{op}");
    }
    assert_eq!(
        m.requests(None, "rest", Outcome::Ok),
        0,
        "none is its own slot"
    );
}

#[test]
fn exposition_has_labelled_series_and_cumulative_buckets() {
    let m = Metrics::new();
    m.request(
        Some(Operation::SendMessage),
        "jsonrpc",
        Outcome::Ok,
        Duration::from_millis(3),
    );
    m.request(
        Some(Operation::GetTask),
        "grpc",
        Outcome::A2a("TASK_NOT_FOUND"),
        Duration::from_secs(20),
    );
    m.request(None, "card", Outcome::of(404, None), Duration::ZERO);
    m.task_entered(TaskState::InputRequired);
    let text = render_metrics(&m);
    for line in [
        "switchboard_requests_total{operation=\"SendMessage\",binding=\"jsonrpc\",code=\"OK\"} 1",
        "switchboard_requests_total{operation=\"GetTask\",binding=\"grpc\",code=\"TASK_NOT_FOUND\"} 1",
        "switchboard_requests_total{operation=\"none\",binding=\"card\",code=\"HTTP_4XX\"} 1",
        "switchboard_request_duration_seconds_bucket{operation=\"SendMessage\",binding=\"jsonrpc\",le=\"0.0025\"} 0",
        "switchboard_request_duration_seconds_bucket{operation=\"SendMessage\",binding=\"jsonrpc\",le=\"0.005\"} 1",
        "switchboard_request_duration_seconds_bucket{operation=\"SendMessage\",binding=\"jsonrpc\",le=\"+Inf\"} 1",
        "switchboard_request_duration_seconds_bucket{operation=\"GetTask\",binding=\"grpc\",le=\"10\"} 0",
        "switchboard_request_duration_seconds_bucket{operation=\"GetTask\",binding=\"grpc\",le=\"+Inf\"} 1",
        "switchboard_request_duration_seconds_count{operation=\"GetTask\",binding=\"grpc\"} 1",
        "switchboard_task_transitions_total{state=\"input-required\"} 1",
        "switchboard_store_commit_duration_seconds_count 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

/// Every A2A error is counted under its own reason, none under another's
/// (a reason missing from the labels used to land on `HTTP_5XX`).
#[test]
fn every_error_reason_has_its_own_label() {
    let m = Metrics::new();
    for reason in switchboard_protocol::A2AError::REASONS {
        m.request(None, "rest", Outcome::A2a(reason), Duration::ZERO);
    }
    let text = render_metrics(&m);
    for reason in switchboard_protocol::A2AError::REASONS {
        let line = format!(
            "switchboard_requests_total{{operation=\"none\",binding=\"rest\",code=\"{reason}\"}} 1"
        );
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    assert!(!text.contains("code=\"HTTP_5XX\""), "{text}");
}

#[tokio::test]
async fn the_probe_reports_what_was_noted_inside_it_only() {
    crate::probe::note_operation(Operation::GetTask);
    let ((), noted) = crate::probe::observe(async {
        crate::probe::note_operation(Operation::CancelTask);
        tokio::task::yield_now().await;
        crate::probe::note_error("TASK_NOT_CANCELABLE");
    })
    .await;
    assert_eq!(noted.operation, Some(Operation::CancelTask));
    assert_eq!(noted.error, Some("TASK_NOT_CANCELABLE"));
    let ((), noted) = crate::probe::observe(async {}).await;
    assert_eq!(noted, crate::probe::Noted::default());
}

#[test]
fn without_a_pipeline_no_span_is_made() {
    assert!(!crate::trace::enabled());
    assert!(
        crate::trace::server_span("rest", || Some(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        ))
        .is_none()
    );
    assert!(crate::trace::client_span("SendMessage").is_none());
    assert!(crate::trace::current().is_none());
}

#[test]
fn the_sampler_follows_the_caller_or_the_ratio() {
    use crate::trace::{Root, Sampler};
    let parent = |trace: u128, flags: u8| TraceParent {
        trace_id: trace.to_be_bytes(),
        span_id: [1; 8],
        flags,
    };
    let sampled = parent(7, 1);
    let unsampled = parent(7, 0);
    let default = Sampler::default();
    assert!(default.sample(None) && default.sample(Some(&sampled)));
    assert!(
        !default.sample(Some(&unsampled)),
        "parent-based: the caller decided"
    );
    let off = Sampler {
        root: Root::AlwaysOff,
        parent_based: true,
    };
    assert!(!off.sample(None) && off.sample(Some(&sampled)));
    let ignore_parent = Sampler {
        root: Root::AlwaysOn,
        parent_based: false,
    };
    assert!(ignore_parent.sample(Some(&unsampled)));

    // A ratio decides a known trace by its id, the same way every time:
    // the low half of the id against the ratio.
    let half = Sampler {
        root: Root::Ratio(0.5),
        parent_based: false,
    };
    let low = parent(u128::from(u64::MAX / 4), 0);
    let high = parent(u128::from(u64::MAX / 4 * 3), 0);
    for _ in 0..3 {
        assert!(half.sample(Some(&low)));
        assert!(!half.sample(Some(&high)));
    }
    // New traces: the draws are spread evenly, so 1,000 decisions at 10 %
    // record close to 100 (the tests of this crate share the sequence, so
    // not exactly).
    let tenth = Sampler {
        root: Root::Ratio(0.1),
        parent_based: true,
    };
    let recorded = (0..1000).filter(|_| tenth.sample(None)).count();
    assert!((80..=120).contains(&recorded), "{recorded}");
    for (ratio, want) in [(0.0, 0), (1.0, 1000)] {
        let s = Sampler {
            root: Root::Ratio(ratio),
            parent_based: true,
        };
        assert_eq!((0..1000).filter(|_| s.sample(None)).count(), want);
    }
}

#[test]
fn sampler_names_are_the_specifications() {
    use crate::trace::{Root, Sampler};
    assert_eq!(
        Sampler::from_env_values("parentbased_traceidratio", Some("0.01")),
        Ok(Sampler {
            root: Root::Ratio(0.01),
            parent_based: true
        })
    );
    for (name, arg) in [
        ("traceidratio", "-0.1"),
        ("traceidratio", "NaN"),
        ("xray", ""),
    ] {
        assert!(
            Sampler::from_env_values(name, Some(arg)).is_err(),
            "{name} {arg}"
        );
    }
}

/// A JSON log line is one object with the fixed members first and each
/// field once, typed as recorded; a field named like a fixed member is left
/// out rather than written twice.
#[cfg(feature = "logging")]
#[test]
fn json_lines_are_one_object_per_event_with_typed_fields() {
    let buffer = Sink::default();
    let out = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .event_format(crate::logging::JsonLines)
        .with_writer(move || out.clone())
        .finish();
    let error = std::io::Error::other("disk \"full\"");
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("outer");
        let _entered = span.enter();
        tracing::warn!(
            target: "switchboard::access",
            path = "/a\"b\n",
            status = 200_u64,
            delta = -3_i64,
            duration_ms = 1.5_f64,
            nan = f64::NAN,
            ok = true,
            level = "spoofed",
            error = &error as &(dyn std::error::Error + 'static),
            id = ?Some(7),
            "request {}",
            1
        );
    });
    let text = buffer.text();
    assert_eq!(text.matches('\n').count(), 1, "{text}");
    let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap_or_default();
    assert_eq!(line["level"], "WARN", "{text}");
    assert_eq!(line["target"], "switchboard::access");
    assert_eq!(line["spans"], serde_json::json!(["outer"]));
    assert_eq!(line["message"], "request 1");
    assert_eq!(line["path"], "/a\"b\n");
    assert_eq!(line["status"], 200);
    assert_eq!(line["delta"], -3);
    assert_eq!(line["duration_ms"], 1.5);
    assert_eq!(line["nan"], serde_json::Value::Null);
    assert_eq!(line["ok"], true);
    assert_eq!(line["error"], "disk \"full\"");
    assert_eq!(line["id"], "Some(7)");
    assert!(line["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert_eq!(text.matches("\"level\"").count(), 1, "{text}");
}
