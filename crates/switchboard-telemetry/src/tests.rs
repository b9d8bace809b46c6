#![allow(clippy::unwrap_used)]

use std::time::Duration;

use switchboard_protocol::{Operation, TaskState};

use crate::metrics::{Metrics, Outcome, render_metrics};
use crate::trace::TraceParent;

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
        crate::trace::server_span(
            "rest",
            Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        )
        .is_none()
    );
    assert!(crate::trace::client_span("SendMessage").is_none());
    assert!(crate::trace::current().is_none());
}
