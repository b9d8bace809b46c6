//! [`ProgressEmitter`] end to end through a real [`RequestHandler`]: what an
//! agent's progress calls put into the task's event log (full snapshots, in
//! both metadata locations, with a readable status text), which calls are
//! refused and never sent, coalescing and `flush`, concurrent trackers, the
//! end of the task, and what an activated client sees on its stream.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use switchboard_core::progress::{ProgressEmitter, ProgressError};
use switchboard_core::store::conformance::fixtures::log_of;
use switchboard_core::{BoxError, CallContext, RequestHandler, TaskEvents, agent_fn};
use switchboard_protocol::progress::*;
use switchboard_protocol::{AgentCard, Message, SendMessageRequest, StreamResponse, TaskState};

fn card() -> AgentCard {
    let mut card = AgentCard::new("p", "progress agent", "1").with_streaming(true);
    card.capabilities
        .extensions
        .push(ProgressLimits::default().to_extension());
    card
}

/// Runs `body` as the agent of one task and returns every progress snapshot
/// of the task's log with its status text.
async fn run<F, Fut>(body: F) -> Vec<(ProgressPayload, String)>
where
    F: Fn(TaskEvents) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    let body = Arc::new(body);
    let agent = agent_fn(move |_ctx, events| {
        let body = body.clone();
        async move { body(events).await }
    });
    let h = RequestHandler::builder(agent, card()).build();
    let task = common::run_task(&h).await;
    let log = log_of(h.store().as_ref(), "", &task.id).await;
    snapshots(log.iter().map(|e| &e.event))
}

/// The status texts of `snaps`, in order.
fn texts(snaps: &[(ProgressPayload, String)]) -> Vec<&str> {
    snaps.iter().map(|(_, t)| t.as_str()).collect()
}

fn snapshots<'a>(
    items: impl Iterator<Item = &'a StreamResponse>,
) -> Vec<(ProgressPayload, String)> {
    let mut out = Vec::new();
    for ev in items {
        let StreamResponse::StatusUpdate(u) = ev else {
            continue;
        };
        let Some(md) = &u.metadata else { continue };
        let Some(read) = ProgressPayload::from_metadata(md) else {
            continue;
        };
        let payload = read.unwrap();
        let msg = u.status.message.as_ref().expect("a status message");
        assert_eq!(
            msg.metadata.as_ref(),
            Some(md),
            "the same snapshot in both places"
        );
        assert_eq!(u.status.state, TaskState::Working);
        out.push((payload, msg.text()));
    }
    out
}

fn limits() -> ProgressLimits {
    ProgressLimits::default()
}

#[tokio::test(start_paused = true)]
async fn start_set_complete_emit_full_snapshots() {
    let snaps = run(|events| async move {
        let p = ProgressEmitter::new(events, limits());
        let dl = p
            .tracker("download")
            .total(100)
            .message("fetching")
            .start()
            .await?;
        let ix = p.tracker("index").start().await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        dl.set(50).await?;
        ix.set(3).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        dl.complete().await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        ix.advance(2).await?;
        Ok(())
    })
    .await;
    assert_eq!(
        texts(&snaps),
        vec![
            // The tracker's message, not its id, where it has one.
            "fetching (0/100)",
            "fetching (0/100), index 0",
            "fetching (50/100), index 0",
            "fetching (50/100), index 3",
            "download done, index 3",
            // A finished tracker stays in every later snapshot.
            "download done, index 5",
        ]
    );
    let (first, _) = &snaps[0];
    let t = &first.trackers[0];
    assert_eq!(t.status, Some(TrackerStatus::Running));
    assert_eq!(t.message.as_deref(), Some("fetching"));
    assert!(t.started_at.is_some() && t.updated_at.is_some());
    let (done, _) = &snaps[4];
    let d = done.tracker("download").unwrap();
    assert_eq!(d.status, Some(TrackerStatus::Completed));
    assert_eq!(d.progress, Some(100.0), "completion sets progress to total");
    // The finished tracker is listed with its final values, and counted:
    // total unknown (index has none), progress = 100 + 5.
    let (last, _) = &snaps[5];
    let d = last.tracker("download").expect("listed once finished");
    assert_eq!(d.status, Some(TrackerStatus::Completed));
    assert_eq!(d.progress, Some(100.0));
    let agg = last.aggregate.as_ref().unwrap();
    assert_eq!((agg.progress, agg.total), (Some(105.0), None));
    let (third, _) = &snaps[2];
    let agg = third.aggregate.as_ref().unwrap();
    assert_eq!((agg.progress, agg.total), (Some(50.0), None));
}

#[tokio::test(start_paused = true)]
async fn the_aggregate_sums_totals_when_all_are_known() {
    let snaps = run(|events| async move {
        let p = ProgressEmitter::new(events, limits());
        p.set_summary(Some("two jobs".into()))?;
        let a = p.tracker("a").total(10).start().await?;
        let b = p.tracker("b").total(30).progress(5).start().await?;
        a.complete().await?;
        b.fail("disk full").await?;
        Ok(())
    })
    .await;
    let aggs: Vec<(Option<f64>, Option<f64>)> = snaps
        .iter()
        .map(|(p, _)| {
            let a = p.aggregate.as_ref().unwrap();
            assert_eq!(a.message.as_deref(), Some("two jobs"));
            (a.progress, a.total)
        })
        .collect();
    assert_eq!(
        aggs,
        vec![
            (Some(0.0), Some(10.0)),
            (Some(5.0), Some(40.0)),
            (Some(15.0), Some(40.0)),
            (Some(15.0), Some(40.0)),
        ]
    );
    let (last, text) = snaps.last().unwrap();
    let b = last.tracker("b").unwrap();
    assert_eq!(b.status, Some(TrackerStatus::Failed));
    assert_eq!(b.message.as_deref(), Some("disk full"));
    assert_eq!(b.progress, Some(5.0), "a failure keeps its progress");
    assert_eq!(
        last.tracker("a").unwrap().status,
        Some(TrackerStatus::Completed),
        "a finished tracker stays listed"
    );
    assert_eq!(text, "a done, b 5/30 failed: disk full");
}

#[tokio::test(start_paused = true)]
async fn invalid_calls_are_refused_and_never_sent() {
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = errors.clone();
    let snaps = run(move |events| {
        let errors = seen.clone();
        async move {
            let small = ProgressLimits {
                max_trackers: 2,
                max_message_chars: 8,
                max_id_chars: 4,
                recommended_max_updates_per_second: 2.0,
            };
            let p = ProgressEmitter::new(events, small);
            let record = |r: Result<(), ProgressError>| {
                let e = r.expect_err("must be refused");
                errors.lock().unwrap().push(format!("{e:?}"));
            };
            let t = p.tracker("t").total(10).progress(4).start().await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            record(t.set(11).await);
            record(t.set(3).await);
            record(t.set(-1).await);
            record(t.set(f64::NAN).await);
            record(t.set(f64::INFINITY).await);
            record(t.advance(7).await);
            record(t.advance(-1).await);
            record(t.set_total(3).await);
            record(t.set_message("123456789").await);
            record(t.set_with_message(5, "123456789").await);
            record(p.set_summary(Some("123456789".into())));
            record(p.tracker("").start().await.map(|_| ()));
            record(p.tracker("abcde").start().await.map(|_| ()));
            record(p.tracker("t").start().await.map(|_| ()));
            record(
                p.tracker("u")
                    .total(1)
                    .progress(2)
                    .start()
                    .await
                    .map(|_| ()),
            );
            record(p.tracker("u").total(-1).start().await.map(|_| ()));
            record(
                p.tracker("u")
                    .message("123456789")
                    .start()
                    .await
                    .map(|_| ()),
            );
            let u = p.tracker("u").start().await?;
            record(p.tracker("v").start().await.map(|_| ()));
            u.complete().await?;
            record(u.set(1).await);
            record(u.complete().await);
            record(u.fail("x").await);
            // The id stays taken after the tracker finished.
            record(p.tracker("u").start().await.map(|_| ()));
            // A slot is free again.
            p.tracker("v").start().await?;
            // Still fine, and progress was never moved by a refused call.
            assert_eq!(t.current().unwrap().progress, Some(4.0));
            t.set(10).await?;
            Ok(())
        }
    })
    .await;
    let errors = errors.lock().unwrap().clone();
    let kinds: Vec<&str> = errors
        .iter()
        .map(|e| e.split([' ', '(', '{']).next().unwrap())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "ExceedsTotal",
            "Decreasing",
            "InvalidNumber",
            "InvalidNumber",
            "InvalidNumber",
            "ExceedsTotal",
            "InvalidNumber",
            "TotalBelowProgress",
            "MessageTooLong",
            "MessageTooLong",
            "MessageTooLong",
            "EmptyId",
            "IdTooLong",
            "DuplicateId",
            "ExceedsTotal",
            "InvalidNumber",
            "MessageTooLong",
            "TooManyTrackers",
            "Finished",
            "Finished",
            "Finished",
            "DuplicateId",
        ]
    );
    assert_eq!(
        texts(&snaps),
        vec![
            "t 4/10",
            "t 4/10, u 0",
            "t 4/10, u done",
            "t 4/10, v 0",
            "t 10/10, v 0"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn updates_inside_the_window_are_coalesced_and_flushed() {
    let snaps = run(|events| async move {
        let p = ProgressEmitter::new(events, limits());
        let t = p.tracker("t").total(100).start().await?;
        for i in 1..=10 {
            t.set(i).await?; // all inside the first half-second window
        }
        // The latest value goes out when the window opens (at 0.5s), which
        // starts the next window (until 1.0s).
        tokio::time::sleep(Duration::from_millis(1100)).await;
        t.set(11).await?; // window open: sent at once
        t.set(12).await?;
        t.set(13).await?;
        p.flush().await?; // sends 13 now, whatever the window says
        Ok(())
    })
    .await;
    let values: Vec<f64> = snaps
        .iter()
        .map(|(p, _)| p.trackers[0].progress.unwrap())
        .collect();
    assert_eq!(values, vec![0.0, 10.0, 11.0, 13.0]);
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_shows_the_last_sent_value_of_a_tracker_whose_window_is_closed() {
    let snaps = run(|events| async move {
        let p = ProgressEmitter::new(events, limits());
        let a = p.tracker("a").total(100).start().await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let b = p.tracker("b").total(100).start().await?;
        a.set(5).await?; // a's window is closed until 0.5s
        tokio::time::sleep(Duration::from_millis(300)).await; // t=0.6: a flushed at 0.5
        b.set(7).await?; // b's window closed until 0.8
        a.set(6).await?; // a's window closed until 1.0
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(())
    })
    .await;
    assert_eq!(
        texts(&snaps),
        vec![
            "a 0/100",
            "a 0/100, b 0/100",
            "a 5/100, b 0/100",
            "a 5/100, b 7/100",
            "a 6/100, b 7/100",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn clones_work_from_concurrent_tasks() {
    let snaps = run(|events| async move {
        let p = ProgressEmitter::new(events, limits());
        let mut joins = Vec::new();
        for n in 0..5 {
            let p = p.clone();
            joins.push(tokio::spawn(async move {
                let t = p.tracker(format!("job{n}")).total(50).start().await?;
                for i in 1..=50 {
                    t.set(i).await?;
                    tokio::time::sleep(Duration::from_millis(20 + n * 7)).await;
                }
                t.complete().await?;
                Ok::<_, ProgressError>(())
            }));
        }
        for j in joins {
            j.await??;
        }
        Ok(())
    })
    .await;
    let mut last = std::collections::HashMap::new();
    let mut done = std::collections::HashSet::new();
    for (p, _) in &snaps {
        validate(p, &limits()).unwrap();
        for t in &p.trackers {
            let v = t.progress.unwrap();
            let prev = last.insert(t.id.clone(), v).unwrap_or(0.0);
            assert!(v >= prev, "{} went back from {prev} to {v}", t.id);
            if t.status == Some(TrackerStatus::Completed) {
                done.insert(t.id.clone());
                assert_eq!(v, 50.0);
            }
        }
    }
    assert_eq!(done.len(), 5, "every completion arrives");
    let (final_snap, _) = snaps.last().unwrap();
    assert!(
        final_snap.trackers.iter().all(|t| t.is_terminal()) && final_snap.trackers.len() == 5,
        "the last snapshot lists every tracker, finished: {final_snap:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn after_the_task_ends_progress_reports_the_engine_error() {
    let outcome = Arc::new(Mutex::new(Vec::new()));
    let out = outcome.clone();
    let _ = run(move |events| {
        let out = out.clone();
        async move {
            let p = ProgressEmitter::new(events.clone(), limits());
            let t = p.tracker("t").total(10).start().await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            events.complete().await?;
            let e = t.set(5).await.unwrap_err();
            out.lock().unwrap().push((e.is_task_over(), e.to_string()));
            // Later calls fail fast, even ones that would only be coalesced.
            let e = t.set(6).await.unwrap_err();
            out.lock().unwrap().push((e.is_task_over(), e.to_string()));
            let e = p.flush().await.unwrap_err();
            out.lock().unwrap().push((e.is_task_over(), e.to_string()));
            Ok(())
        }
    })
    .await;
    let outcome = outcome.lock().unwrap();
    assert_eq!(outcome.len(), 3);
    for (over, text) in outcome.iter() {
        assert!(over, "{text}");
        assert!(text.contains("TASK_STATE_COMPLETED"), "{text}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_activated_client_folds_the_stream_with_the_reducer() {
    let agent = agent_fn(|_ctx, events| async move {
        let p = ProgressEmitter::new(events, limits());
        let a = p.tracker("a").total(4).start().await?;
        let b = p.tracker("b").start().await?;
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_secs(1)).await;
            a.advance(1).await?;
            b.advance(1).await?;
        }
        a.complete().await?;
        p.flush().await?;
        Ok(())
    });
    let h = RequestHandler::builder(agent, card()).build();
    let mut call = CallContext::anonymous().with_extensions_header(TASK_PROGRESS_URI);
    h.activate_extensions(&mut call).unwrap();
    let mut stream = h
        .send_streaming_message(&call, SendMessageRequest::new(Message::user_text("go")))
        .await
        .unwrap();
    let mut r = ProgressReducer::with_limits(limits());
    let mut carried = 0;
    while let Some(item) = stream.next().await {
        let item = item.unwrap();
        if r.apply(&item.event) {
            carried += 1;
            if r.finished().is_empty() {
                assert!(!r.active().is_empty());
            }
        }
    }
    assert!(carried >= 6, "{carried}");
    assert!(r.violations().is_empty(), "{:?}", r.violations());
    assert_eq!(
        r.tracker("a").unwrap().status,
        Some(TrackerStatus::Completed)
    );
    assert_eq!(r.tracker("b").unwrap().progress, Some(4.0));
    assert!(
        r.active().is_empty(),
        "the task completed: nothing is active"
    );

    // A caller that did not activate the extension sees no progress entry,
    // only the status text.
    let plain = CallContext::anonymous();
    let mut stream = h
        .send_streaming_message(&plain, SendMessageRequest::new(Message::user_text("go")))
        .await
        .unwrap();
    let mut r = ProgressReducer::new();
    let mut texts = 0;
    while let Some(item) = stream.next().await {
        let item = item.unwrap();
        assert!(!r.apply(&item.event));
        if let StreamResponse::StatusUpdate(u) = &item.event
            && u.status.message.is_some()
        {
            texts += 1;
        }
    }
    assert!(texts >= 6);
}

#[tokio::test(start_paused = true)]
async fn long_failure_reasons_are_cut_not_refused() {
    let snaps = run(|events| async move {
        let p = ProgressEmitter::new(
            events,
            ProgressLimits {
                max_message_chars: 10,
                ..limits()
            },
        );
        let t = p.tracker("t").start().await?;
        t.fail("a very long explanation of what went wrong").await?;
        Ok(())
    })
    .await;
    let (last, _) = snaps.last().unwrap();
    let msg = last.trackers[0].message.as_deref().unwrap();
    assert_eq!(msg.chars().count(), 10);
    assert!(msg.ends_with('…'));
}
