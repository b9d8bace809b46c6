//! Rate limiting of [`ProgressEmitter`] on a paused clock.
//!
//! An observed store stamps every committed event with `tokio::time::Instant`,
//! so we know exactly when each snapshot left. For each tracker we take the
//! snapshots in which *its* entry changed and check that no one-second
//! window holds more than the declared `recommendedMaxUpdatesPerSecond`
//! running updates (the final completed/failed update is never held back,
//! so it may be one more), that the latest value always arrives, and that a
//! completion is never lost.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_core::memory::{CommitObserver, ObservedStore};
use switchboard_core::progress::{ProgressEmitter, ProgressError};
use switchboard_core::{BoxError, RequestHandler, TaskEvents, TaskRecord, agent_fn, async_trait};
use switchboard_protocol::progress::*;
use switchboard_protocol::{AgentCard, StreamResponse};
use tokio::time::Instant;

/// Remembers when each event was committed.
#[derive(Debug, Default)]
struct Stamped {
    log: Mutex<Vec<(Instant, StreamResponse)>>,
}

#[async_trait]
impl CommitObserver for Stamped {
    async fn committed(&self, _: &TaskRecord, events: &[StreamResponse]) {
        let now = Instant::now();
        let mut log = self.log.lock().unwrap();
        log.extend(events.iter().map(|ev| (now, ev.clone())));
    }
}

/// When a tracker's entry changed, and to what.
type Changes = HashMap<String, Vec<(Duration, ProgressTracker)>>;

/// Runs `body` as the agent; returns, per tracker, the snapshots that
/// changed its entry (time since the first event, new value).
async fn run<F, Fut>(limits: ProgressLimits, body: F) -> Changes
where
    F: Fn(ProgressEmitter) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
{
    let body = Arc::new(body);
    let agent_limits = limits.clone();
    let agent = agent_fn(move |_ctx, events: TaskEvents| {
        let body = body.clone();
        let limits = agent_limits.clone();
        async move { body(ProgressEmitter::new(events, limits)).await }
    });
    let store = Arc::new(ObservedStore::<Stamped>::default());
    let mut card = AgentCard::new("r", "rate", "1");
    card.capabilities.extensions.push(limits.to_extension());
    let h = RequestHandler::builder(agent, card)
        .store(store.clone())
        .build();
    common::run_task(&h).await;

    let log = store.observer.log.lock().unwrap().clone();
    let t0 = log[0].0;
    let mut changes: Changes = HashMap::new();
    let mut last: HashMap<String, ProgressTracker> = HashMap::new();
    for (at, ev) in &log {
        let StreamResponse::StatusUpdate(u) = ev else {
            continue;
        };
        let Some(p) = u.metadata.as_ref().and_then(ProgressPayload::from_metadata) else {
            continue;
        };
        let p = p.unwrap();
        validate(&p, &limits).unwrap();
        for t in p.trackers {
            if last.get(&t.id) != Some(&t) {
                last.insert(t.id.clone(), t.clone());
                changes.entry(t.id.clone()).or_default().push((*at - t0, t));
            }
        }
    }
    changes
}

/// The most changes of one kind inside any half-open one-second window.
fn max_per_second(times: &[Duration]) -> usize {
    times
        .iter()
        .map(|start| {
            times
                .iter()
                .filter(|t| **t >= *start && **t < *start + Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap_or(0)
}

fn assert_rate(changes: &Changes, rate: usize) {
    for (id, list) in changes {
        let running: Vec<Duration> = list
            .iter()
            .filter(|(_, t)| !t.is_terminal())
            .map(|(at, _)| *at)
            .collect();
        let all: Vec<Duration> = list.iter().map(|(at, _)| *at).collect();
        assert!(
            max_per_second(&running) <= rate,
            "tracker {id}: {} running updates in one second (limit {rate}): {running:?}",
            max_per_second(&running)
        );
        assert!(max_per_second(&all) <= rate + 1, "tracker {id}: {:?}", all);
    }
}

fn limits(rate: f64) -> ProgressLimits {
    ProgressLimits {
        recommended_max_updates_per_second: rate,
        ..ProgressLimits::default()
    }
}

/// Sets the tracker to 1, 2, 3, ... every millisecond for `secs` seconds.
async fn hammer(
    p: &ProgressEmitter,
    id: &str,
    total: u32,
    secs: u32,
) -> Result<switchboard_core::Tracker, ProgressError> {
    let t = p.tracker(id).total(total).start().await?;
    for i in 1..=secs * 1000 {
        t.set(i).await?;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(t)
}

#[tokio::test(start_paused = true)]
async fn a_tracker_updated_1000_times_a_second_emits_at_most_the_declared_rate() {
    let changes = run(limits(2.0), |p| async move {
        hammer(&p, "busy", 3000, 3).await?;
        // No flush: the coalesced final value must arrive on its own.
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(())
    })
    .await;
    assert_rate(&changes, 2);
    let list = &changes["busy"];
    assert!(
        list.len() >= 6,
        "about two updates a second over three seconds: {}",
        list.len()
    );
    assert_eq!(
        list.last().unwrap().1.progress,
        Some(3000.0),
        "the final value arrives"
    );
}

/// [`run`]s an agent that [`hammer`]s the tracker `id` (of `total`) for
/// `secs` seconds and then completes it.
async fn hammer_then_complete(
    limits: ProgressLimits,
    id: &'static str,
    total: u32,
    secs: u32,
) -> Changes {
    run(limits, move |p| async move {
        let t = hammer(&p, id, total, secs).await?;
        t.complete().await?;
        Ok(())
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn completion_right_after_a_burst_is_never_lost() {
    let changes = hammer_then_complete(limits(2.0), "burst", 5000, 2).await;
    assert_rate(&changes, 2);
    let (_, last) = changes["burst"].last().unwrap();
    assert_eq!(last.status, Some(TrackerStatus::Completed));
    assert_eq!(last.progress, Some(5000.0));
}

#[tokio::test(start_paused = true)]
async fn failure_right_after_a_burst_is_never_lost() {
    let changes = run(limits(2.0), |p| async move {
        let t = hammer(&p, "burst", 5000, 2).await?;
        t.fail("gave up").await?;
        Ok(())
    })
    .await;
    assert_rate(&changes, 2);
    let (_, last) = changes["burst"].last().unwrap();
    assert_eq!(last.status, Some(TrackerStatus::Failed));
    assert_eq!(
        last.progress,
        Some(2000.0),
        "the last value set, not a stale one"
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_trackers_are_each_held_to_the_rate() {
    let changes = run(limits(5.0), |p| async move {
        let mut joins = Vec::new();
        for (n, step) in [1u64, 3, 7, 40].into_iter().enumerate() {
            let p = p.clone();
            joins.push(tokio::spawn(async move {
                let t = p.tracker(format!("w{n}")).total(10_000).start().await?;
                for i in 1..=(3000 / step) {
                    t.set(i).await?;
                    tokio::time::sleep(Duration::from_millis(step)).await;
                }
                if n % 2 == 0 {
                    t.complete().await?;
                } else {
                    t.fail("stopped").await?;
                }
                Ok::<_, ProgressError>(())
            }));
        }
        for j in joins {
            j.await??;
        }
        Ok(())
    })
    .await;
    assert_rate(&changes, 5);
    assert_eq!(changes.len(), 4);
    for (id, list) in &changes {
        let (_, last) = list.last().unwrap();
        assert!(last.is_terminal(), "{id} finished: {last:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_fractional_rate_spaces_updates_further_apart() {
    let changes = hammer_then_complete(limits(0.5), "slow", 10_000, 6).await;
    let times: Vec<Duration> = changes["slow"]
        .iter()
        .filter(|(_, t)| !t.is_terminal())
        .map(|(at, _)| *at)
        .collect();
    for w in times.windows(2) {
        assert!(w[1] - w[0] >= Duration::from_secs(2), "{times:?}");
    }
    assert!(times.len() >= 3, "{times:?}");
}

#[tokio::test(start_paused = true)]
async fn an_unbounded_rate_sends_every_change() {
    let changes = run(limits(f64::INFINITY), |p| async move {
        let t = p.tracker("all").total(100).start().await?;
        for i in 1..=100 {
            t.set(i).await?;
        }
        Ok(())
    })
    .await;
    assert_eq!(changes["all"].len(), 101);
}
