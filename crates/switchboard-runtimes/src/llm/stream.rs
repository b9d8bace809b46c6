//! One model request: the HTTP call with its retries, and the streamed
//! answer read chunk by chunk into the task (text and reasoning deltas out
//! as they come, tool-call deltas assembled by index, usage kept).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt as _;
use serde_json::Value;
use switchboard_core::{BoxError, TaskEvents};
use tokio::time::Instant;

use super::sse::{Line, Lines};
use super::{LlmAgent, LlmError, Output};

/// A tool call the model made, assembled from its deltas.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolCall {
    /// The model's id for it (one is made up when the server sends none).
    pub(crate) id: String,
    /// The function.
    pub(crate) name: String,
    /// The arguments as the model wrote them (JSON text).
    pub(crate) arguments: String,
}

/// Token counts, summed over a task's requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub(crate) prompt: u64,
    pub(crate) completion: u64,
    pub(crate) total: u64,
}

impl Usage {
    pub(crate) fn add(&mut self, other: Usage) {
        self.prompt += other.prompt;
        self.completion += other.completion;
        self.total += other.total;
    }
}

/// What one request answered.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// The answer's text.
    pub(crate) text: String,
    /// Its tool calls, in index order.
    pub(crate) tool_calls: Vec<ToolCall>,
    /// What the server reported using, if it did.
    pub(crate) usage: Option<Usage>,
}

/// Why reading one attempt's stream stopped short.
enum Broke {
    /// Before anything went out: the request may be made again.
    Early(LlmError),
    /// After tokens went out, or for good.
    Final(BoxError),
}

impl From<LlmError> for Broke {
    fn from(e: LlmError) -> Self {
        Broke::Final(e.into())
    }
}

impl LlmAgent {
    /// Asks the model once (retrying what failed before any token went
    /// out) and streams its answer into `out`. `None`: the task was
    /// canceled, and the stream is already dropped.
    pub(crate) async fn ask_model(
        &self,
        body: &Value,
        events: &TaskEvents,
        out: &mut Output,
        mut note: Option<&str>,
    ) -> Result<Option<Answer>, BoxError> {
        let cfg = &self.config;
        let endpoint = cfg.endpoint();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let retry_left = attempt <= cfg.retries;
            let first_deadline = Instant::now() + cfg.first_token_timeout;
            let mut request = self.http.post(&endpoint).json(body);
            if let Some(key) = &self.api_key {
                request = request.bearer_auth(key);
            }
            // The working status (first attempt only) is committed while the
            // request goes out; both are done before the stream is read.
            let working = async {
                match note.take() {
                    Some(note) => events.working(note).await,
                    None => Ok(()),
                }
            };
            let send = async {
                let (working, sent) = tokio::join!(working, request.send());
                (working, sent)
            };
            let sent = tokio::select! {
                biased;
                _ = events.cancelled() => return Ok(None),
                _ = tokio::time::sleep_until(first_deadline) => Err(None),
                (working, sent) = send => {
                    working?;
                    sent.map_err(Some)
                }
            };
            let wait = match sent {
                Err(None) => {
                    let e = LlmError::FirstTokenTimeout(cfg.first_token_timeout);
                    if !retry_left {
                        return Err(e.into());
                    }
                    tracing::warn!(attempt, error = %e, "retrying the model request");
                    self.backoff(attempt, None)
                }
                Err(Some(e)) => {
                    let reason = error_chain(&e);
                    if !retry_left {
                        return Err(LlmError::Connect {
                            endpoint,
                            attempts: attempt,
                            reason,
                        }
                        .into());
                    }
                    tracing::warn!(attempt, reason, "retrying the model request");
                    self.backoff(attempt, None)
                }
                Ok(response) if response.status().is_success() => {
                    match self.read(response, first_deadline, events, out).await {
                        Ok(answer) => return Ok(answer),
                        Err(Broke::Early(e)) if retry_left => {
                            tracing::warn!(attempt, error = %e, "retrying the model request");
                            self.backoff(attempt, None)
                        }
                        Err(Broke::Early(e)) => return Err(e.into()),
                        Err(Broke::Final(e)) => return Err(e),
                    }
                }
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .and_then(|s| Duration::try_from_secs_f64(s).ok());
                    let retryable = status == 429 || status >= 500;
                    if !(retryable && retry_left) {
                        let body = excerpt(response).await;
                        return Err(LlmError::Status {
                            status,
                            attempts: attempt,
                            body,
                        }
                        .into());
                    }
                    tracing::warn!(attempt, status, "retrying the model request");
                    self.backoff(attempt, retry_after)
                }
            };
            tokio::select! {
                biased;
                _ = events.cancelled() => return Ok(None),
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// How long to wait before attempt `attempt + 1`.
    fn backoff(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let cfg = &self.config;
        let doubled = cfg
            .retry_backoff
            .saturating_mul(1 << (attempt.saturating_sub(1)).min(16));
        retry_after.unwrap_or(doubled).min(cfg.max_retry_wait)
    }

    /// Reads one attempt's stream.
    async fn read(
        &self,
        response: reqwest::Response,
        first_deadline: Instant,
        events: &TaskEvents,
        out: &mut Output,
    ) -> Result<Option<Answer>, Broke> {
        let cfg = &self.config;
        let mut stream = response.bytes_stream();
        let mut lines = Lines::new(cfg.max_line_bytes, cfg.max_response_bytes);
        let mut answer = Answer::default();
        let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
        let mut finished = false;
        let mut done = false;
        let mut got_event = false;
        let emitted_before = out.chunks();
        loop {
            let deadline = if got_event {
                Instant::now() + cfg.idle_timeout
            } else {
                first_deadline
            };
            let next = tokio::select! {
                biased;
                _ = events.cancelled() => return Ok(None),
                _ = tokio::time::sleep_until(deadline) => {
                    let e = if got_event {
                        LlmError::IdleTimeout(cfg.idle_timeout)
                    } else {
                        LlmError::FirstTokenTimeout(cfg.first_token_timeout)
                    };
                    return Err(broke(e, out.chunks() > emitted_before));
                }
                next = stream.next() => next,
            };
            let parsed = match next {
                None => break,
                Some(Err(e)) => {
                    let reason = error_chain(&e);
                    let streamed = out.chunks() - emitted_before;
                    if streamed > 0 {
                        return Err(Broke::Final(
                            LlmError::Cut {
                                tokens: streamed,
                                reason,
                            }
                            .into(),
                        ));
                    }
                    return Err(Broke::Early(LlmError::Upstream(format!(
                        "a broken stream: {reason}"
                    ))));
                }
                Some(Ok(bytes)) => lines.feed(&bytes)?,
            };
            let mut pending: Vec<(Delta, String)> = Vec::new();
            for line in parsed {
                match line {
                    Line::Done => done = true,
                    Line::Data(data) => {
                        got_event = true;
                        let chunk: Value = serde_json::from_str(&data).map_err(|e| {
                            LlmError::Upstream(format!("an event that is not JSON ({e})"))
                        })?;
                        finished |= apply_chunk(&chunk, &mut answer, &mut calls, &mut pending)?;
                    }
                }
                if done {
                    break;
                }
            }
            // One commit per kind of delta per network read: a model that
            // streams faster than the store commits is coalesced, not queued.
            for (kind, text) in pending {
                let result = match kind {
                    Delta::Reasoning => out.thinking(text).await,
                    Delta::Content => out.text(text).await,
                };
                result.map_err(|e| Broke::Final(e.into()))?;
            }
            if done {
                break;
            }
        }
        if !done {
            if let Some(Line::Data(data)) = lines.finish() {
                let chunk: Value = serde_json::from_str(&data)
                    .map_err(|e| LlmError::Upstream(format!("an event that is not JSON ({e})")))?;
                let mut pending = Vec::new();
                finished |= apply_chunk(&chunk, &mut answer, &mut calls, &mut pending)?;
                for (kind, text) in pending {
                    let result = match kind {
                        Delta::Reasoning => out.thinking(text).await,
                        Delta::Content => out.text(text).await,
                    };
                    result.map_err(|e| Broke::Final(e.into()))?;
                }
            }
            // No `[DONE]` and no finish reason: the stream ended early.
            if !finished {
                let streamed = out.chunks() - emitted_before;
                let reason = "the stream ended before the answer did (no finish_reason, no [DONE])";
                if streamed > 0 {
                    return Err(Broke::Final(
                        LlmError::Cut {
                            tokens: streamed,
                            reason: reason.into(),
                        }
                        .into(),
                    ));
                }
                return Err(Broke::Early(LlmError::Upstream(reason.into())));
            }
        }
        answer.tool_calls = calls
            .into_iter()
            .map(|(index, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{index}");
                }
                call
            })
            .collect();
        Ok(Some(answer))
    }
}

fn broke(e: LlmError, streamed: bool) -> Broke {
    if streamed {
        Broke::Final(e.into())
    } else {
        Broke::Early(e)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delta {
    Reasoning,
    Content,
}

/// Applies one chunk; `true` when it carried a finish reason.
fn apply_chunk(
    chunk: &Value,
    answer: &mut Answer,
    calls: &mut BTreeMap<u64, ToolCall>,
    pending: &mut Vec<(Delta, String)>,
) -> Result<bool, LlmError> {
    if let Some(error) = chunk.get("error") {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string());
        return Err(LlmError::Upstream(format!("an error: {message}")));
    }
    if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        answer.usage = Some(Usage {
            prompt: n("prompt_tokens"),
            completion: n("completion_tokens"),
            total: n("total_tokens"),
        });
    }
    let mut finished = false;
    let choices = chunk.get("choices").and_then(Value::as_array);
    for choice in choices.into_iter().flatten() {
        if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
            continue;
        }
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            finished = true;
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(key).and_then(Value::as_str)
                && !text.is_empty()
            {
                push(pending, Delta::Reasoning, text);
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            answer.text.push_str(text);
            push(pending, Delta::Content, text);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let entry = calls.entry(index).or_default();
            let id = call.get("id").and_then(Value::as_str);
            if let Some(id) = id {
                entry.id = id.to_owned();
            }
            if let Some(function) = call.get("function") {
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    // A delta with the call's id carries its whole name
                    // (OpenAI sends both once; llama.cpp's servers repeat
                    // both in every delta); a name without one continues it.
                    if id.is_some() {
                        entry.name = name.to_owned();
                    } else {
                        entry.name.push_str(name);
                    }
                }
                if let Some(args) = function.get("arguments").and_then(Value::as_str) {
                    entry.arguments.push_str(args);
                }
            }
        }
    }
    Ok(finished)
}

fn push(pending: &mut Vec<(Delta, String)>, kind: Delta, text: &str) {
    match pending.last_mut() {
        Some((k, s)) if *k == kind => s.push_str(text),
        _ => pending.push((kind, text.to_owned())),
    }
}

/// An error with its causes (reqwest's own text is only the outer layer).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The start of an error answer's body (at most 2 KiB).
async fn excerpt(response: reqwest::Response) -> String {
    const MAX: usize = 2048;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Ok(Some(Ok(bytes))) =
        tokio::time::timeout(Duration::from_secs(5), stream.next()).await
    {
        body.extend_from_slice(&bytes);
        if body.len() >= MAX {
            body.truncate(MAX);
            break;
        }
    }
    String::from_utf8_lossy(&body).trim().to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_call_deltas_assemble_by_index() {
        let mut answer = Answer::default();
        let mut calls = BTreeMap::new();
        let mut pending = Vec::new();
        for chunk in [
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{\"mes"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"y","arguments":"{}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"sage\":\"hi\"}"}}]}}]}),
            // llama.cpp's servers repeat the id and the whole name in every delta.
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"y","arguments":""}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"reasoning_content":"hm"}}]}),
            json!({"choices":[{"index":0,"delta":{"content":"A"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}),
        ] {
            apply_chunk(&chunk, &mut answer, &mut calls, &mut pending).unwrap();
        }
        assert_eq!(calls[&0].arguments, "{\"message\":\"hi\"}");
        assert_eq!(calls[&1].name, "y");
        assert_eq!(
            pending,
            vec![
                (Delta::Reasoning, "hm".into()),
                (Delta::Content, "A".into())
            ]
        );
        assert_eq!(answer.usage.unwrap().total, 5);
    }
}
