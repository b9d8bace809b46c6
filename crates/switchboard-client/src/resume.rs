//! Automatic reconnection of event streams: a dropped stream resumes where
//! it stopped, and the caller sees every event exactly once.
//!
//! # How resuming works
//!
//! A server that supports resuming numbers the events of a task 1, 2, 3, …
//! and sends each number as the SSE `id:` of its frame (the client exposes
//! it as [`StreamEvent::seq`]). A client that lost its connection calls
//! `SubscribeToTask` again with the HTTP header `Last-Event-ID: <last seq it
//! saw>`; the server replays its log past that number and then follows the
//! task live. So the pieces of a dropped stream, put end to end, are the
//! uninterrupted stream: no gap, no duplicate.
//!
//! The client wraps every stream from `SendStreamingMessage` or
//! `SubscribeToTask` and does that by itself:
//!
//! * it remembers the task id (from the first event that names it, or from
//!   the `SubscribeToTask` request) and the last sequence number it yielded;
//! * when the connection fails (a transport error) or ends before the
//!   stream's natural end (see below), it waits a backoff and resubscribes
//!   after that number, up to [`ReconnectPolicy::max_attempts`] times in a
//!   row without receiving an event;
//! * it drops any event whose number it has already yielded, so a server
//!   that ignores `Last-Event-ID` (and replays from the start) still yields
//!   each event once.
//!
//! A stream ends naturally after a message, a terminal state (completed,
//! failed, canceled, rejected) or `input-required` (the agent waits for a
//! new message, which starts a new stream); an end of stream right after
//! `auth-required` is also taken as natural, since servers may close there.
//! The wrapper itself ends the stream after those events, even if the
//! connection stays open (a replayed `input-required` does not close a
//! resumed server stream).
//!
//! What cannot be resumed is reported as the stream's last error, never
//! papered over: a connection error before the server named the task (the
//! message may or may not have been accepted: the caller decides whether to
//! resend), a connection error on a stream whose events carry no sequence
//! numbers (a server that does not support resuming), an agent's error (task
//! not found, …) and exhausted retries. A clean end of a stream without
//! numbered events stays what it always was: the end.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use switchboard_protocol::{StreamResponse, TaskState};

use crate::client::{EventStream, StreamEvent};
use crate::error::ClientError;

/// How a dropped stream is resumed. Set it with
/// [`ClientBuilder::reconnect`](crate::ClientBuilder::reconnect); the
/// default is on: 5 attempts, backoff 100 ms doubling up to 2 s.
///
/// ```
/// use std::time::Duration;
/// use switchboard_client::ReconnectPolicy;
///
/// let patient = ReconnectPolicy::default()
///     .max_attempts(20)
///     .backoff(Duration::from_millis(50), Duration::from_secs(5));
/// assert!(patient.is_enabled());
/// assert!(!ReconnectPolicy::disabled().is_enabled());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        }
    }
}

impl ReconnectPolicy {
    /// No reconnection: a dropped stream ends with its transport error, as
    /// an end of stream ends it.
    pub fn disabled() -> Self {
        ReconnectPolicy {
            max_attempts: 0,
            ..Self::default()
        }
    }

    /// How many reconnections in a row may fail (or bring no event) before
    /// the stream gives up with the last error. Every event received resets
    /// the count. `0` disables reconnection.
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// The wait before the first reconnection of a series, doubled after
    /// each failed one up to `max`.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// `true` unless reconnection is disabled.
    pub fn is_enabled(&self) -> bool {
        self.max_attempts > 0
    }

    /// The wait before reconnection number `attempt` (0-based) of a series.
    fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX);
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// Opens `SubscribeToTask(task_id)` resumed after event `after`.
pub(crate) type Resubscribe = Arc<
    dyn Fn(String, u64) -> Pin<Box<dyn Future<Output = Result<EventStream, ClientError>> + Send>>
        + Send
        + Sync,
>;

/// Wraps `first` so that a dropped connection is resumed through
/// `resubscribe`. `task_id` is known up front for `SubscribeToTask`, and
/// learnt from the events for `SendStreamingMessage`.
pub(crate) fn resuming(
    first: EventStream,
    task_id: Option<String>,
    policy: ReconnectPolicy,
    resubscribe: Resubscribe,
) -> EventStream {
    let state = Resume {
        current: Some(first),
        task_id,
        last_seq: None,
        unnumbered: false,
        finished: false,
        failures: 0,
        policy,
        resubscribe,
    };
    futures::stream::unfold(state, |mut st| async move {
        let item = st.next_item().await?;
        Some((item, st))
    })
    .boxed()
}

/// Where a resumable stream stands.
struct Resume {
    /// The connection being read; `None` once the stream is over.
    current: Option<EventStream>,
    task_id: Option<String>,
    /// The highest sequence number yielded so far.
    last_seq: Option<u64>,
    /// An event without a sequence number was yielded: resuming after
    /// `last_seq` would repeat it, so the stream cannot be resumed exactly.
    unnumbered: bool,
    /// The last event yielded ends the stream (see the module docs).
    finished: bool,
    /// Reconnections in a row that brought no event.
    failures: u32,
    policy: ReconnectPolicy,
    resubscribe: Resubscribe,
}

impl Resume {
    async fn next_item(&mut self) -> Option<Result<StreamEvent, ClientError>> {
        loop {
            let current = self.current.as_mut()?;
            let cause = match current.next().await {
                Some(Ok(ev)) => {
                    if let (Some(seq), Some(last)) = (ev.seq, self.last_seq)
                        && seq <= last
                    {
                        // Already yielded before the reconnection.
                        continue;
                    }
                    self.record(&ev);
                    if self.finished_by(&ev.event) {
                        self.current = None;
                    }
                    return Some(Ok(ev));
                }
                Some(Err(e)) if retryable(&e) => e,
                Some(Err(e)) => {
                    self.current = None;
                    return Some(Err(e));
                }
                // A server that does not number its events cannot be
                // resumed, and for it an end of stream is just the end (as
                // it is with reconnection off).
                None if self.finished
                    || !self.policy.is_enabled()
                    || self.unnumbered
                    || self.last_seq.is_none() =>
                {
                    self.current = None;
                    return None;
                }
                None => ClientError::Transport {
                    message: "the event stream ended before the task finished".into(),
                    timeout: false,
                },
            };
            self.current = None;
            if let Err(e) = self.reconnect(cause).await {
                return Some(Err(e));
            }
        }
    }

    fn record(&mut self, ev: &StreamEvent) {
        self.failures = 0;
        if self.task_id.is_none() {
            self.task_id = ev.event.task_id().map(str::to_owned);
        }
        match ev.seq {
            Some(seq) => self.last_seq = Some(seq),
            None => self.unnumbered = true,
        }
        self.finished = ends_stream(&ev.event);
    }

    /// `true` when the wrapper should stop reading after `event`; an
    /// `auth-required` pause does not stop it (the server may keep the
    /// stream open) but an end of stream after it is natural.
    fn finished_by(&self, event: &StreamResponse) -> bool {
        self.finished && event.state() != Some(TaskState::AuthRequired)
    }

    /// Replaces the dropped connection with a resumed one, or says why it
    /// cannot.
    async fn reconnect(&mut self, cause: ClientError) -> Result<(), ClientError> {
        if !self.policy.is_enabled() {
            return Err(cause);
        }
        let Some(task_id) = self.task_id.clone() else {
            return Err(ClientError::Transport {
                message: format!(
                    "the stream dropped before the agent named the task, so it cannot be resumed \
                     (the message may or may not have been accepted): {cause}"
                ),
                timeout: cause.is_timeout(),
            });
        };
        if self.unnumbered {
            return Err(ClientError::Transport {
                message: format!(
                    "the stream of task {task_id} dropped and cannot be resumed: the agent does \
                     not number its events: {cause}"
                ),
                timeout: cause.is_timeout(),
            });
        }
        // Nothing numbered yet: resume from the start of the log.
        let after = self.last_seq.unwrap_or(0);
        let mut cause = cause;
        loop {
            if self.failures >= self.policy.max_attempts {
                return Err(ClientError::Transport {
                    message: format!(
                        "the stream of task {task_id} dropped and {} reconnection(s) failed; \
                         last error: {cause}",
                        self.failures
                    ),
                    timeout: cause.is_timeout(),
                });
            }
            tokio::time::sleep(self.policy.delay(self.failures)).await;
            // Counted now, reset by the first event the new connection
            // brings: a connection that opens and closes at once is a failure.
            self.failures += 1;
            match (self.resubscribe)(task_id.clone(), after).await {
                Ok(stream) => {
                    self.current = Some(stream);
                    return Ok(());
                }
                Err(e) if retryable(&e) => cause = e,
                Err(e) => return Err(e),
            }
        }
    }
}

/// `true` for a stream that ends after `event`.
fn ends_stream(event: &StreamResponse) -> bool {
    event.is_final() || event.state().is_some_and(TaskState::is_interrupted)
}

/// Failures worth a reconnection: the network, and gateways that could not
/// reach the server (it may be restarting). An agent's answer is final.
fn retryable(e: &ClientError) -> bool {
    match e {
        ClientError::Transport { .. } => true,
        ClientError::Http { status, .. } => matches!(status, 502..=504),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = ReconnectPolicy::default()
            .backoff(Duration::from_millis(100), Duration::from_millis(700));
        let waits: Vec<_> = (0..5).map(|i| p.delay(i).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 700, 700]);
        assert_eq!(p.delay(u32::MAX), Duration::from_millis(700));
        assert!(!ReconnectPolicy::default().max_attempts(0).is_enabled());
    }
}
