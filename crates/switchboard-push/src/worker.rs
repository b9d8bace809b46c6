//! The delivery worker: drains the outbox of a [`PushStore`].
//!
//! One loop claims due items (each with a lease, at most one per config, so
//! a config's notifications go out strictly one after another in event
//! order) and hands each to its own tokio task, up to
//! [`PushOptions::max_in_flight`] at once, so one slow receiver never holds
//! up the others. Each attempt ends in exactly one store call:
//!
//! - 2xx → [`ack`](PushStore::ack): delivered, forgotten;
//! - failure with attempts left → [`retry`](PushStore::retry) after an
//!   exponential backoff with jitter ([`RetryPolicy`]);
//! - failure on the last attempt → [`dead_letter`](PushStore::dead_letter),
//!   logged at `warn` and queryable with
//!   [`PushStore::list_dead_letters`] (the CLI: `switchboard push
//!   dead-letters`; `switchboard push retry` requeues).
//!
//! All state is in the store, so the worker can die at any point: a claimed
//! item that was never settled is claimed again when its lease ends.
//! The loop sleeps until the store signals new items
//! ([`PushStore::wakeup`]), a delivery finishes, or the poll interval passes
//! (which picks up scheduled retries).

use std::sync::Arc;
use std::time::Duration;

use switchboard_core::push::{OutboxItem, PushStore};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use switchboard_telemetry::metrics::METRICS;

use crate::PushOptions;
use crate::deliver::{Deliverer, DeliveryError};

/// When to try again, and when to give up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Delay after the first failed attempt (default 1 s); doubles each time.
    pub base: Duration,
    /// Longest delay between attempts (default 10 min).
    pub max: Duration,
    /// Attempts in total before the item is dead-lettered (default 15,
    /// about an hour and a half of retrying with the default delays).
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            base: Duration::from_secs(1),
            max: Duration::from_secs(600),
            max_attempts: 15,
        }
    }
}

impl RetryPolicy {
    /// The wait after `attempts` failed attempts: `base · 2^(attempts-1)`,
    /// capped at `max`, then "equal jitter" (a random point in the upper
    /// half), so receivers coming back are not hit by every sender at once
    /// while the delay still grows.
    pub fn delay(&self, attempts: u32) -> Duration {
        let exp = attempts.saturating_sub(1).min(30);
        let full = self
            .base
            .saturating_mul(1_u32 << exp)
            .min(self.max.max(self.base));
        let half = full / 2;
        let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jitter = if nanos == 0 {
            0
        } else {
            // uuid v4 is 122 random bits from the OS; plenty for jitter.
            (uuid::Uuid::new_v4().as_u128() as u64) % nanos
        };
        half + Duration::from_nanos(jitter)
    }
}

/// A running delivery worker.
#[derive(Debug)]
pub struct PushWorker {
    handle: tokio::task::JoinHandle<()>,
    stop: CancellationToken,
}

impl PushWorker {
    /// Starts delivering from `store` until `shutdown` is cancelled. On
    /// shutdown, attempts in flight finish (bounded by the request timeout).
    pub fn spawn(
        store: Arc<dyn PushStore>,
        options: PushOptions,
        shutdown: CancellationToken,
    ) -> Result<PushWorker, DeliveryError> {
        let deliverer = Arc::new(Deliverer::new(
            options.keys.clone(),
            options.issuer.clone(),
            options.ssrf.clone(),
            options.resolver.clone(),
            options.request_timeout,
            options.token_ttl,
        )?);
        let stop = shutdown.clone();
        let handle = tokio::spawn(run(store, deliverer, options, shutdown));
        Ok(PushWorker { handle, stop })
    }

    /// Stops the worker and waits for attempts in flight to settle.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.handle.await;
    }

    /// Waits until the worker ends (after its shutdown token is cancelled).
    pub async fn join(self) {
        let _ = self.handle.await;
    }
}

async fn run(
    store: Arc<dyn PushStore>,
    deliverer: Arc<Deliverer>,
    options: PushOptions,
    shutdown: CancellationToken,
) {
    let wake = store.wakeup();
    let permits = Arc::new(Semaphore::new(options.max_in_flight.max(1)));
    // A lease must outlive an attempt, or a slow attempt would be sent twice.
    let lease = options
        .lease
        .max(options.request_timeout + Duration::from_secs(5));
    let mut inflight = JoinSet::new();
    loop {
        if shutdown.is_cancelled() {
            break;
        }
        while inflight.try_join_next().is_some() {}
        let free = permits.available_permits();
        let items = if free == 0 {
            Vec::new()
        } else {
            match store.claim(chrono::Utc::now(), free, lease).await {
                Ok(items) => items,
                Err(e) => {
                    tracing::error!(error = %e, "claiming push notifications failed");
                    Vec::new()
                }
            }
        };
        if items.is_empty() {
            let notified = async {
                match &wake {
                    Some(n) => n.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = notified => {}
                _ = tokio::time::sleep(options.poll_interval) => {}
                Some(_) = inflight.join_next(), if !inflight.is_empty() => {}
            }
            continue;
        }
        for item in items {
            let Ok(permit) = permits.clone().acquire_owned().await else {
                break;
            };
            let store = store.clone();
            let deliverer = deliverer.clone();
            let retry = options.retry.clone();
            inflight.spawn(async move {
                attempt(&*store, &deliverer, &retry, item).await;
                drop(permit);
            });
        }
    }
    while inflight.join_next().await.is_some() {}
}

/// One attempt and its settlement in the store.
async fn attempt(
    store: &dyn PushStore,
    deliverer: &Deliverer,
    retry: &RetryPolicy,
    item: OutboxItem,
) {
    // A span per attempt, child of the agent run whose event this is when
    // this process ran it (`trace::push_span`); the request carries its
    // `traceparent`.
    let origin = switchboard_telemetry::trace::origin(&item.task_id);
    let span = switchboard_telemetry::trace::push_span(&item.task_id, item.seq, origin.as_ref());
    let outcome = tracing::Instrument::instrument(deliverer.deliver(&item), span).await;
    let settled = match outcome {
        Ok(status) => {
            METRICS.push_delivered.inc();
            tracing::debug!(task_id = %item.task_id, seq = item.seq, config_id = %item.config_id, status, "push notification delivered");
            store.ack(item.id).await
        }
        Err(e) => {
            let reason = e.to_string();
            if item.attempts >= retry.max_attempts {
                tracing::warn!(
                    task_id = %item.task_id,
                    seq = item.seq,
                    config_id = %item.config_id,
                    url = %item.url,
                    attempts = item.attempts,
                    error = %reason,
                    "push notification dead-lettered after its last attempt"
                );
                METRICS.push_dead_lettered.inc();
                store.dead_letter(item.id, &reason).await
            } else {
                METRICS.push_retried.inc();
                let wait = retry.delay(item.attempts);
                tracing::debug!(task_id = %item.task_id, seq = item.seq, attempts = item.attempts, ?wait, error = %reason, "push notification failed; will retry");
                let now = chrono::Utc::now();
                let next = chrono::TimeDelta::from_std(wait)
                    .ok()
                    .and_then(|d| now.checked_add_signed(d))
                    .unwrap_or(now + chrono::TimeDelta::days(365));
                store.retry(item.id, next, &reason).await
            }
        }
    };
    if let Err(e) = settled {
        // The lease will run out and the item will be attempted again.
        tracing::error!(error = %e, item = item.id, "recording a push delivery outcome failed");
    }
}
