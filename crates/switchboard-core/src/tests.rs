#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use switchboard_protocol::*;

use crate::memory::{CommitObserver, ObservedStore};
use crate::store::conformance::fixtures::log_of;
use crate::*;

#[tokio::test]
async fn memory_store_conforms() {
    crate::store::conformance::run_all(&crate::InMemoryStore::new()).await;
}

#[tokio::test]
async fn memory_store_keeps_the_storage_quota() {
    use crate::store::conformance::{QUOTA_BYTES, storage_quota_is_per_owner};
    use crate::store::quota::StorageQuota;
    let store = InMemoryStore::new().with_storage_quota(StorageQuota::per_owner(QUOTA_BYTES));
    storage_quota_is_per_owner(&store).await;
}

/// The byte bound drops finished tasks, first finished first, to make room,
/// and refuses a new task once unfinished ones alone fill it.
#[tokio::test]
async fn memory_store_is_bounded_in_bytes() {
    use crate::store::conformance::fixtures::{commit_as_task, record};
    use crate::store::quota::json_bytes;
    let mut r = record("", "t0", TaskState::Completed, 0);
    r.task.history = Some(vec![Message::user_text("x".repeat(2000))]);
    r.last_seq = 1;
    let size = 2 * json_bytes(&r.task);
    let store = InMemoryStore::new().with_max_bytes(3 * size + size / 2);
    let task = |id: &str, state: TaskState| {
        let mut t = r.clone();
        t.task.id = id.into();
        t.task.status.state = state;
        t
    };
    for id in ["done-0", "done-1", "done-2"] {
        commit_as_task(&store, &task(id, TaskState::Completed))
            .await
            .unwrap();
    }
    commit_as_task(&store, &task("run-0", TaskState::Working))
        .await
        .unwrap();
    assert!(
        store.load("", "done-0").await.unwrap().is_none(),
        "oldest finished dropped"
    );
    assert!(store.load("", "done-1").await.unwrap().is_some());
    for id in ["run-1", "run-2"] {
        commit_as_task(&store, &task(id, TaskState::Working))
            .await
            .unwrap();
    }
    assert_eq!(store.len(), 3, "only unfinished tasks left");
    let refused = commit_as_task(&store, &task("run-3", TaskState::Working)).await;
    assert!(
        matches!(refused, Err(StoreError::QuotaExceeded(_))),
        "{refused:?}"
    );
    assert!(store.load("", "run-3").await.unwrap().is_none());
}

/// A scripted agent: the first word of the message picks the behaviour.
fn agent() -> impl AgentExecutor {
    agent_fn(|ctx, events| async move {
        let text = ctx.text();
        let mut words = text.split_whitespace();
        match words.next().unwrap_or("") {
            "reply" => events.reply_text(format!("re: {text}")).await?,
            "ask" => {
                if ctx.is_follow_up() {
                    events
                        .artifact_text("answer", format!("hello {text}"))
                        .await?;
                } else {
                    events.ask("name?").await?;
                }
            }
            "long" => {
                events.working("waiting").await?;
                tokio::select! {
                    _ = events.cancelled() => {}
                    _ = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
            }
            "chunks" => {
                let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(3);
                let mut w = events.artifact_writer("out");
                for i in 0..n {
                    w.append(Part::text(format!("c{i}"))).await?;
                }
                w.finish(Part::text("end")).await?;
            }
            "nothing" => {}
            "complete" => {
                events.artifact_text("echo", text.clone()).await?;
                events.complete().await?;
            }
            "batch" => {
                events
                    .batch()
                    .working("thinking")
                    .artifact_text("echo", text.clone())
                    .complete()
                    .commit()
                    .await?;
            }
            "batch-later" => {
                // A batch on a task that exists already.
                events.working("first").await?;
                events
                    .batch()
                    .artifact_text("a", "one")
                    .artifact_text("b", "two")
                    .complete_with("done")
                    .commit()
                    .await?;
            }
            "bad-batch" => {
                // The second change is refused (submitted again), so none is
                // made: not even the closing of artifact "err" by the first,
                // which is then sent whole.
                events.working("first").await?;
                let err = events
                    .batch()
                    .artifact(Artifact::new(vec![Part::text("never")]).with_id("err"))
                    .set_state(TaskState::Submitted, None)
                    .complete()
                    .commit()
                    .await
                    .unwrap_err();
                events
                    .artifact(Artifact::new(vec![Part::text(err.to_string())]).with_id("err"))
                    .await?;
            }
            "fail" => return Err("boom".into()),
            "panic" => panic!("agent exploded"),
            "refuse" => return Err(A2AError::ContentTypeNotSupported("no thanks".into()).into()),
            "bad-append" => {
                let err = events
                    .artifact_chunk(
                        Artifact::new(vec![Part::text("x")]).with_id("nope"),
                        true,
                        false,
                    )
                    .await
                    .unwrap_err();
                events.artifact_text("err", err.to_string()).await?;
            }
            _ => {
                events.working("thinking").await?;
                events.artifact_text("echo", text.clone()).await?;
            }
        }
        Ok(())
    })
}

/// The test agent's card: it streams.
fn card() -> AgentCard {
    AgentCard::new("test", "test agent", "1.0").with_streaming(true)
}

fn handler() -> RequestHandler {
    RequestHandler::builder(agent(), card()).build()
}

fn send(text: &str) -> SendMessageRequest {
    SendMessageRequest::new(Message::user_text(text))
}

fn nonblocking(text: &str) -> SendMessageRequest {
    let mut r = send(text);
    r.configuration = Some(SendMessageConfiguration {
        return_immediately: true,
        ..Default::default()
    });
    r
}

/// Requests that name one task of the default tenant, with no options.
fn get_req(id: &str) -> GetTaskRequest {
    GetTaskRequest {
        tenant: None,
        id: id.into(),
        history_length: None,
    }
}

fn subscribe_req(id: &str) -> SubscribeToTaskRequest {
    SubscribeToTaskRequest {
        tenant: None,
        id: id.into(),
    }
}

fn cancel_req(id: &str) -> CancelTaskRequest {
    CancelTaskRequest {
        tenant: None,
        id: id.into(),
        metadata: None,
    }
}

async fn task_of(h: &RequestHandler, call: &CallContext, req: SendMessageRequest) -> Task {
    match h.send_message(call, req).await.unwrap() {
        SendMessageResponse::Task(t) => t,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The sequence numbers of `events`, in order.
fn seqs(events: &[LoggedEvent]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

/// Sends `text` and returns the task, which must be in `state`.
async fn task_in(h: &RequestHandler, call: &CallContext, text: &str, state: TaskState) -> Task {
    let t = task_of(h, call, send(text)).await;
    assert_eq!(t.status.state, state, "{t:?}");
    t
}

async fn collect(mut s: EventStream) -> Vec<LoggedEvent> {
    let mut out = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(5), s.next())
        .await
        .expect("stream stalled")
    {
        out.push(ev.unwrap());
    }
    out
}

/// Sends `req` as a streaming message and collects the whole stream.
async fn stream(
    h: &RequestHandler,
    call: &CallContext,
    req: SendMessageRequest,
) -> Vec<LoggedEvent> {
    collect(h.send_streaming_message(call, req).await.unwrap()).await
}

async fn list(h: &RequestHandler, call: &CallContext, req: ListTasksRequest) -> ListTasksResponse {
    h.list_tasks(call, req).await.unwrap()
}

#[tokio::test]
async fn blocking_send_returns_the_completed_task() {
    let h = handler();
    let call = CallContext::anonymous();
    let t = task_in(&h, &call, "hello world", TaskState::Completed).await;
    assert_eq!(t.artifacts()[0].text(), "hello world");
    assert!(!t.context_id.is_empty());
    // History: the user message, then the agent's "thinking" status message.
    assert_eq!(t.history()[0].text(), "hello world");
    assert_eq!(t.history()[0].task_id.as_deref(), Some(t.id.as_str()));
    assert_eq!(t.history()[1].text(), "thinking");
    // history_length keeps the newest messages; 0 leaves the history out.
    for (history_length, kept) in [(1, Some(1)), (0, None)] {
        let req = GetTaskRequest {
            history_length: Some(history_length),
            ..get_req(&t.id)
        };
        let got = h.get_task(&call, req).await.unwrap();
        assert_eq!(got.history.as_ref().map(Vec::len), kept);
    }
}

#[tokio::test]
async fn reply_first_means_a_message_and_no_task() {
    let h = handler();
    let call = CallContext::anonymous();
    let mut req = send("reply hi");
    req.message.context_id = Some("ctx-1".into());
    match h.send_message(&call, req).await.unwrap() {
        SendMessageResponse::Message(m) => {
            assert_eq!(m.text(), "re: reply hi");
            assert_eq!(m.context_id.as_deref(), Some("ctx-1"));
            assert_eq!(m.role, Role::Agent);
            assert!(m.task_id.is_none());
        }
        other => panic!("{other:?}"),
    }
    let listed = list(&h, &call, ListTasksRequest::default()).await;
    assert_eq!(listed.total_size, 0);
}

#[tokio::test]
async fn nonblocking_returns_at_once_and_cancel_reaches_the_agent() {
    let h = handler();
    let call = CallContext::anonymous();
    let t = task_of(&h, &call, nonblocking("long job")).await;
    assert!(
        matches!(t.status.state, TaskState::Submitted | TaskState::Working),
        "{:?}",
        t.status.state
    );
    let sub = h
        .subscribe_to_task(&call, subscribe_req(&t.id))
        .await
        .unwrap();
    let sub2 = h
        .subscribe_to_task(&call, subscribe_req(&t.id))
        .await
        .unwrap();
    let canceled = h.cancel_task(&call, cancel_req(&t.id)).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled);
    let a = collect(sub).await;
    let b = collect(sub2).await;
    assert!(
        matches!(a[0].event, StreamResponse::Task(_)),
        "a subscription starts with the task"
    );
    assert_eq!(a.last().unwrap().event.state(), Some(TaskState::Canceled));
    // Both subscribers end with the same events, in the same order.
    assert_eq!(a.last().unwrap().seq, b.last().unwrap().seq);
    let after_task = seqs(&a[1..]);
    assert!(
        after_task.windows(2).all(|w| w[1] == w[0] + 1),
        "no gaps: {after_task:?}"
    );
    // Terminal tasks refuse cancel, subscribe and messages.
    let err = h.cancel_task(&call, cancel_req(&t.id)).await.unwrap_err();
    assert_eq!(err.code(), -32002);
    let err = h
        .subscribe_to_task(&call, subscribe_req(&t.id))
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), -32004);
    let err = h
        .send_message(&call, send("more").map_task(&t.id))
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32004);
    // The run saw the cancellation and ended without changing the task again.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let got = h.get_task(&call, get_req(&t.id)).await.unwrap();
    assert_eq!(got.status.state, TaskState::Canceled);
}

trait MapTask {
    fn map_task(self, id: &str) -> Self;
}
impl MapTask for SendMessageRequest {
    fn map_task(mut self, id: &str) -> Self {
        self.message.task_id = Some(id.into());
        self
    }
}

#[tokio::test]
async fn input_required_then_follow_up_completes_the_same_task() {
    let h = handler();
    let call = CallContext::anonymous();
    let t = task_in(&h, &call, "ask", TaskState::InputRequired).await;
    assert_eq!(t.status.message.as_ref().unwrap().text(), "name?");
    let mut follow = send("ask Ada").map_task(&t.id);
    follow.message.context_id = Some("wrong".into());
    let err = h.send_message(&call, follow.clone()).await.unwrap_err();
    assert_eq!(err.code(), -32602, "context mismatch is invalid params");
    follow.message.context_id = None;
    let done = task_of(&h, &call, follow).await;
    assert_eq!(done.id, t.id);
    assert_eq!(done.context_id, t.context_id);
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(done.artifacts()[0].text(), "hello ask Ada");
    let texts: Vec<String> = done.history().iter().map(Message::text).collect();
    assert_eq!(
        texts,
        vec!["ask", "name?", "ask Ada"],
        "question sits between the two user messages"
    );
    // Subscribers saw the task resume (WORKING) before it completed.
    let log = log_of(h.store().as_ref(), "", &t.id).await;
    let states: Vec<TaskState> = log.iter().filter_map(|e| e.event.state()).collect();
    assert_eq!(
        states,
        vec![
            TaskState::Submitted,
            TaskState::InputRequired,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    // A follow-up on the finished task makes a new task in the same context.
    let mut next = send("again");
    next.message.context_id = Some(t.context_id.clone());
    next.message.reference_task_ids = vec![t.id.clone()];
    let t2 = task_of(&h, &call, next).await;
    assert_ne!(t2.id, t.id);
    assert_eq!(t2.context_id, t.context_id);
    assert_eq!(t2.history()[0].reference_task_ids, vec![t.id.clone()]);
}

#[tokio::test]
async fn streams_start_with_the_task_and_chunks_assemble() {
    let h = handler();
    let call = CallContext::anonymous();
    let events = stream(&h, &call, send("chunks 4")).await;
    let StreamResponse::Task(first) = &events[0].event else {
        panic!("first is a task")
    };
    assert_eq!(first.status.state, TaskState::Submitted);
    assert_eq!(events[0].seq, 1);
    let arts: Vec<&TaskArtifactUpdateEvent> = events
        .iter()
        .filter_map(|e| match &e.event {
            StreamResponse::ArtifactUpdate(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(arts.len(), 5);
    assert!(!arts[0].append && arts[1..].iter().all(|a| a.append));
    assert!(arts[4].last_chunk && arts[..4].iter().all(|a| !a.last_chunk));
    assert_eq!(
        events.last().unwrap().event.state(),
        Some(TaskState::Completed)
    );
    let t = h.get_task(&call, get_req(&first.id)).await.unwrap();
    assert_eq!(
        t.artifacts()[0].text(),
        "c0c1c2c3end",
        "chunks are one text"
    );
    // The store's log equals what the stream showed.
    let log = log_of(h.store().as_ref(), "", &first.id).await;
    assert_eq!(log, events);
}

#[tokio::test]
async fn message_stream_is_one_message() {
    let h = handler();
    let events = stream(&h, &CallContext::anonymous(), send("reply x")).await;
    assert_eq!(events.len(), 1);
    assert!(matches!(events[0].event, StreamResponse::Message(_)));
}

#[tokio::test]
async fn an_agent_panicking_before_it_returns_its_future_fails_the_task() {
    // `agent_fn`'s closure runs synchronously inside `execute`, before any
    // future exists; its panic must fail the task like any other.
    let agent = agent_fn(|ctx, _events| {
        if ctx.text() == "sync" {
            panic!("exploded before the future");
        }
        async move { Ok::<(), crate::BoxError>(()) }
    });
    let h = RequestHandler::builder(agent, card()).build();
    let t = task_in(&h, &CallContext::anonymous(), "sync", TaskState::Failed).await;
    let status = t.status.message.as_ref().unwrap().text();
    assert!(status.contains("exploded before the future"), "{status}");
}

#[tokio::test]
async fn agent_errors_and_panics_fail_the_task() {
    let h = handler();
    let call = CallContext::anonymous();
    let t = task_in(&h, &call, "fail", TaskState::Failed).await;
    assert!(t.status.message.as_ref().unwrap().text().contains("boom"));
    let t = task_in(&h, &call, "panic", TaskState::Failed).await;
    assert!(
        t.status
            .message
            .as_ref()
            .unwrap()
            .text()
            .contains("agent exploded")
    );
    let err = h.send_message(&call, send("refuse")).await.unwrap_err();
    assert_eq!(err.code(), -32005);
    let t = task_of(&h, &call, send("bad-append")).await;
    assert!(
        t.artifacts()[0].text().contains("does not exist"),
        "{}",
        t.artifacts()[0].text()
    );
}

#[tokio::test]
async fn bad_requests_get_spec_errors() {
    let h = handler();
    let call = CallContext::anonymous();
    let err = h
        .send_message(&call, send("x").map_task("no-such-task"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32001);
    let mut empty = send("x");
    empty.message.parts.clear();
    assert_eq!(
        h.send_message(&call, empty).await.unwrap_err().code(),
        -32602
    );
    let mut agent_role = send("x");
    agent_role.message.role = Role::Agent;
    assert_eq!(
        h.send_message(&call, agent_role).await.unwrap_err().code(),
        -32602
    );
    let mut image = send("x");
    image.message.parts = vec![Part::raw(vec![1], "image/png")];
    assert_eq!(
        h.send_message(&call, image).await.unwrap_err().code(),
        -32005
    );
    let mut modes = send("x");
    modes.configuration = Some(SendMessageConfiguration {
        accepted_output_modes: vec!["image/png".into()],
        ..Default::default()
    });
    assert_eq!(
        h.send_message(&call, modes).await.unwrap_err().code(),
        -32005
    );
    let err = h.get_task(&call, get_req("nope")).await.unwrap_err();
    assert_eq!(err.code(), -32001);
    let err = h
        .get_task(
            &call,
            GetTaskRequest {
                history_length: Some(-1),
                ..get_req("nope")
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), -32602);
    for bad in [0, 101, -3] {
        let req = ListTasksRequest {
            page_size: Some(bad),
            ..Default::default()
        };
        assert_eq!(h.list_tasks(&call, req).await.unwrap_err().code(), -32602);
    }
    let req = ListTasksRequest {
        page_token: Some("garbage!".into()),
        ..Default::default()
    };
    assert_eq!(h.list_tasks(&call, req).await.unwrap_err().code(), -32602);
    let push = TaskPushNotificationConfig {
        tenant: None,
        id: None,
        task_id: Some("t".into()),
        url: "https://x".into(),
        token: None,
        authentication: None,
    };
    assert_eq!(
        h.create_push_config(&call, push).await.unwrap_err().code(),
        -32003
    );
    assert_eq!(
        h.get_extended_agent_card(&call, Default::default())
            .await
            .unwrap_err()
            .code(),
        -32004
    );
}

#[tokio::test]
async fn tasks_are_scoped_to_tenant_and_owner() {
    let h = handler();
    let alice = CallContext {
        principal: "alice".into(),
        ..CallContext::anonymous()
    };
    let bob = CallContext {
        principal: "bob".into(),
        ..CallContext::anonymous()
    };
    let other_tenant = CallContext::anonymous().with_tenant("t2");
    let t = task_of(&h, &alice, send("hi")).await;
    for who in [&bob, &other_tenant] {
        let err = h.get_task(who, get_req(&t.id)).await.unwrap_err();
        assert_eq!(err.code(), -32001);
        assert_eq!(
            list(&h, who, ListTasksRequest::default()).await.total_size,
            0
        );
    }
    assert_eq!(
        list(&h, &alice, ListTasksRequest::default())
            .await
            .total_size,
        1
    );
}

#[tokio::test]
async fn list_pages_and_filters() {
    let h = handler();
    let call = CallContext::anonymous();
    let mut ids = Vec::new();
    for i in 0..5 {
        let mut r = send(&format!("task {i}"));
        r.message.context_id = Some(if i % 2 == 0 { "even" } else { "odd" }.into());
        ids.push(task_of(&h, &call, r).await.id);
    }
    let first = list(
        &h,
        &call,
        ListTasksRequest {
            page_size: Some(2),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(first.tasks.len(), 2);
    assert_eq!(first.total_size, 5);
    assert_eq!(first.page_size, 2);
    assert!(!first.next_page_token.is_empty());
    assert!(
        first.tasks.iter().all(|t| t.artifacts.is_none()),
        "artifacts omitted by default"
    );
    let mut seen: Vec<String> = first.tasks.iter().map(|t| t.id.clone()).collect();
    let mut token = first.next_page_token;
    while !token.is_empty() {
        let page = list(
            &h,
            &call,
            ListTasksRequest {
                page_size: Some(2),
                page_token: Some(token),
                ..Default::default()
            },
        )
        .await;
        seen.extend(page.tasks.iter().map(|t| t.id.clone()));
        token = page.next_page_token;
    }
    ids.reverse();
    assert_eq!(seen, ids, "most recent first, every task once");
    let odd = list(
        &h,
        &call,
        ListTasksRequest {
            context_id: Some("odd".into()),
            include_artifacts: Some(true),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(odd.total_size, 2);
    assert!(
        odd.tasks
            .iter()
            .all(|t| t.artifacts.as_ref().is_some_and(|a| !a.is_empty()))
    );
    let done = list(
        &h,
        &call,
        ListTasksRequest {
            status: Some(TaskState::Working),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(done.total_size, 0);
}

#[tokio::test]
async fn a_lagging_subscriber_catches_up_from_the_log() {
    let h = handler();
    let call = CallContext::anonymous();
    // Far more chunks than the bus holds: a subscriber that does not read
    // while they are produced must get them from the store.
    let n = crate::runtime::BUS_CAPACITY * 3;
    let stream = h
        .send_streaming_message(&call, send(&format!("chunks {n}")))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let events = collect(stream).await;
    let got = seqs(&events);
    assert_eq!(
        got,
        (1..=got.len() as u64).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    assert_eq!(
        events.last().unwrap().event.state(),
        Some(TaskState::Completed)
    );
    let chunks = events
        .iter()
        .filter(|e| matches!(e.event, StreamResponse::ArtifactUpdate(_)))
        .count();
    assert_eq!(chunks, n + 1);
}

#[tokio::test]
async fn required_extensions_are_enforced_and_declared_ones_activated() {
    let mut card = AgentCard::new("x", "x", "1").with_streaming(true);
    card.capabilities.extensions = vec![
        AgentExtension {
            uri: "urn:req".into(),
            description: None,
            required: true,
            params: None,
        },
        AgentExtension {
            uri: "urn:opt".into(),
            description: None,
            required: false,
            params: None,
        },
    ];
    let h = RequestHandler::builder(agent(), card).build();
    let mut call = CallContext::anonymous().with_extensions_header("urn:opt, urn:unknown");
    assert_eq!(h.activate_extensions(&mut call).unwrap_err().code(), -32008);
    let mut call = CallContext::anonymous().with_extensions_header("urn:req,urn:opt,urn:unknown");
    h.activate_extensions(&mut call).unwrap();
    assert_eq!(
        call.activated_extensions,
        vec!["urn:req".to_string(), "urn:opt".to_string()]
    );
}

#[tokio::test]
async fn shutdown_cancels_runs() {
    let h = handler();
    let call = CallContext::anonymous();
    let t = task_of(&h, &call, nonblocking("long")).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    h.shutdown(Duration::from_secs(5)).await;
    let got = h.get_task(&call, get_req(&t.id)).await.unwrap();
    // The agent stopped when told to and returned Ok without finishing:
    // the engine fails the task, saying why, rather than claim it completed.
    assert_eq!(got.status.state, TaskState::Failed, "{got:?}");
    assert!(
        got.status
            .message
            .as_ref()
            .unwrap()
            .text()
            .contains("server shut down"),
        "{got:?}"
    );
    let _ = Arc::new(());
}

#[tokio::test]
async fn memory_store_evicts_oldest_finished_tasks_only() {
    let store = Arc::new(InMemoryStore::with_max_terminal_tasks(3));
    let card = AgentCard::new("t", "t", "1").with_streaming(true);
    let h = RequestHandler::builder(agent(), card)
        .store(store.clone())
        .build();
    let call = CallContext::anonymous();
    let running = task_of(&h, &call, nonblocking("long one")).await;
    let mut done = Vec::new();
    for i in 0..10 {
        done.push(task_of(&h, &call, send(&format!("t{i}"))).await.id);
    }
    assert_eq!(store.len(), 4, "3 finished + 1 running");
    assert!(
        h.get_task(&call, get_req(&running.id)).await.is_ok(),
        "running tasks are never evicted"
    );
    for id in &done[..7] {
        assert_eq!(
            h.get_task(&call, get_req(id)).await.unwrap_err().code(),
            -32001
        );
    }
    for id in &done[7..] {
        assert!(h.get_task(&call, get_req(id)).await.is_ok());
    }
    h.cancel_task(&call, cancel_req(&running.id)).await.unwrap();
}

#[tokio::test]
async fn extension_metadata_is_shown_only_to_callers_that_activated_it() {
    const EXT: &str = "urn:test:progress";
    let mut card = AgentCard::new("x", "x", "1").with_streaming(true);
    card.capabilities.extensions = vec![AgentExtension {
        uri: EXT.into(),
        description: None,
        required: false,
        params: None,
    }];
    let agent = agent_fn(|_ctx, events| async move {
        let mut md = Metadata::new();
        md.insert(EXT.into(), serde_json::json!({"trackers": []}));
        md.insert("urn:undeclared".into(), serde_json::json!(1));
        let mut msg = Message::agent_text("working");
        msg.metadata = Some(md.clone());
        events
            .status(
                TaskStatus::new(TaskState::Working).with_message(msg),
                Some(md),
            )
            .await?;
        Ok(())
    });
    let h = RequestHandler::builder(agent, card).build();
    let mut plain = CallContext::anonymous();
    h.activate_extensions(&mut plain).unwrap();
    let mut opted = CallContext::anonymous().with_extensions_header(EXT);
    h.activate_extensions(&mut opted).unwrap();

    let events = stream(&h, &plain, send("go")).await;
    let StreamResponse::StatusUpdate(u) = &events[1].event else {
        panic!("{:?}", events[1])
    };
    let md = u.metadata.as_ref().unwrap();
    assert!(!md.contains_key(EXT), "not activated: hidden");
    assert!(
        md.contains_key("urn:undeclared"),
        "undeclared keys are the agent's business"
    );
    let id = u.task_id.clone();

    let t = h.get_task(&plain, get_req(&id)).await.unwrap();
    assert!(
        t.history()
            .iter()
            .all(|m| m.metadata.as_ref().is_none_or(|md| !md.contains_key(EXT)))
    );
    let t = h.get_task(&opted, get_req(&id)).await.unwrap();
    assert!(
        t.history()
            .iter()
            .any(|m| m.metadata.as_ref().is_some_and(|md| md.contains_key(EXT)))
    );
    let events = stream(&h, &opted, send("go")).await;
    let StreamResponse::StatusUpdate(u) = &events[1].event else {
        panic!()
    };
    assert!(
        u.metadata.as_ref().unwrap().contains_key(EXT),
        "activated: shown"
    );
}

#[tokio::test]
async fn transient_status_messages_stay_out_of_the_history() {
    let agent = agent_fn(|_ctx, events| async move {
        for i in 0..50 {
            let msg = Message::agent_text(format!("progress {i}"));
            events
                .transient_status(TaskStatus::new(TaskState::Working).with_message(msg), None)
                .await?;
        }
        events.working("kept").await?;
        Ok(())
    });
    let h = RequestHandler::builder(agent, AgentCard::new("x", "x", "1")).build();
    let t = task_of(&h, &CallContext::anonymous(), send("go")).await;
    let texts: Vec<String> = t.history().iter().map(Message::text).collect();
    assert_eq!(
        texts,
        vec!["go", "kept"],
        "only the user message and the durable status remain"
    );
    let log = log_of(h.store().as_ref(), "", &t.id).await;
    assert_eq!(
        log.len(),
        1 + 50 + 1 + 1,
        "every transient update is still an event"
    );
}

/// Drops a stream after a random number of items, many times, resuming each
/// time from the last sequence seen: the pieces reassemble into exactly the
/// uninterrupted sequence.
#[tokio::test]
async fn resumed_streams_reassemble_without_gaps_or_duplicates() {
    let h = handler();
    let call = CallContext::anonymous();
    let full = stream(&h, &call, send("chunks 40")).await;
    let id = full[0].event.task_id().unwrap().to_string();
    // Replaying a finished task from every possible point.
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..60 {
        let mut got: Vec<LoggedEvent> = vec![full[0].clone()];
        loop {
            let after = got.last().unwrap().seq;
            let mut s = h
                .resubscribe_to_task(&call, subscribe_req(&id), after)
                .await
                .unwrap();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let take = 1 + (rng % 7) as usize;
            let mut n = 0;
            let mut ended = true;
            while let Some(ev) = s.next().await {
                got.push(ev.unwrap());
                n += 1;
                if n == take {
                    ended = false;
                    break; // drop the stream mid-way
                }
            }
            if ended {
                break;
            }
        }
        assert_eq!(got, full);
    }
    // Resuming from a point that does not exist yet is an error.
    let err = h
        .resubscribe_to_task(&call, subscribe_req(&id), 10_000)
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), -32602);
}

#[tokio::test]
async fn a_live_stream_resumed_mid_task_misses_nothing() {
    let h = handler();
    let call = CallContext::anonymous();
    let t = task_of(&h, &call, nonblocking("long")).await;
    let mut first = h
        .subscribe_to_task(&call, subscribe_req(&t.id))
        .await
        .unwrap();
    let snapshot = first.next().await.unwrap().unwrap();
    drop(first);
    // Events happen while nobody is connected.
    h.cancel_task(&call, cancel_req(&t.id)).await.unwrap();
    let resumed = collect(
        h.resubscribe_to_task(&call, subscribe_req(&t.id), snapshot.seq)
            .await
            .unwrap(),
    )
    .await;
    let log = h
        .store()
        .events(EventQuery::new("", &t.id).after(snapshot.seq))
        .await
        .unwrap();
    assert_eq!(resumed, log);
    assert_eq!(
        resumed.last().unwrap().event.state(),
        Some(TaskState::Canceled)
    );
}

/// The request drives a quick agent itself; when a blocking caller goes
/// away mid-run, the agent carries on on its own task and still settles.
#[tokio::test]
async fn a_dropped_blocking_caller_does_not_stop_the_agent() {
    let agent = agent_fn(|_ctx, events| async move {
        events.working("slow").await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        events.artifact_text("out", "finished anyway").await?;
        Ok(())
    });
    let h = RequestHandler::builder(agent, AgentCard::new("x", "x", "1")).build();
    let call = CallContext::anonymous();
    let gave_up =
        tokio::time::timeout(Duration::from_millis(50), h.send_message(&call, send("go"))).await;
    assert!(
        gave_up.is_err(),
        "the caller gave up before the agent finished"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let list = list(
        &h,
        &call,
        ListTasksRequest {
            include_artifacts: Some(true),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(list.tasks.len(), 1);
    assert_eq!(list.tasks[0].status.state, TaskState::Completed);
    assert_eq!(list.tasks[0].artifacts()[0].text(), "finished anyway");
}

/// Counts commits and the events in each.
#[derive(Debug, Default)]
struct Counting {
    commits: std::sync::Mutex<Vec<usize>>,
}

impl Counting {
    /// The sizes of the commits since the last call, oldest first.
    fn take(&self) -> Vec<usize> {
        std::mem::take(&mut *self.commits.lock().unwrap())
    }
}

#[async_trait::async_trait]
impl CommitObserver for Counting {
    async fn committed(&self, _: &TaskRecord, events: &[StreamResponse]) {
        self.commits.lock().unwrap().push(events.len());
    }
}

/// The test agent's handler on a store that records the size of each commit.
fn counting_handler() -> (Arc<ObservedStore<Counting>>, RequestHandler) {
    let store = Arc::new(ObservedStore::<Counting>::default());
    let h = RequestHandler::builder(agent(), card())
        .store(store.clone())
        .build();
    (store, h)
}

#[tokio::test]
async fn a_task_is_created_in_the_same_commit_as_its_first_change() {
    let (store, h) = counting_handler();
    let call = CallContext::default();

    // working, artifact, then completed by the engine: four events, three commits.
    let t = task_in(&h, &call, "hello", TaskState::Completed).await;
    assert_eq!(store.observer.take(), vec![2, 1, 1]);
    let log = log_of(&*store, "", &t.id).await;
    assert_eq!(seqs(&log), [1, 2, 3, 4]);
    assert!(
        matches!(&log[0].event, StreamResponse::Task(first) if first.status.state == TaskState::Submitted)
    );
    assert_eq!(log[1].event.state(), Some(TaskState::Working));

    // A run that emits nothing: created and completed in one commit.
    task_in(&h, &call, "nothing", TaskState::Completed).await;
    assert_eq!(store.observer.take(), vec![2]);

    // A stream still shows the task first, then every change once.
    let events = stream(&h, &call, send("hello")).await;
    assert_eq!(seqs(&events), [1, 2, 3, 4]);
    assert!(matches!(events[0].event, StreamResponse::Task(_)));
    assert_eq!(events[3].event.state(), Some(TaskState::Completed));
}

/// Announces every commit before the commit returns, the way PostgreSQL's
/// NOTIFY can reach a replica's listener first.
#[derive(Debug)]
struct Announcing {
    tx: tokio::sync::broadcast::Sender<Announcement>,
}

#[async_trait::async_trait]
impl CommitObserver for Announcing {
    async fn committed(&self, record: &TaskRecord, _: &[StreamResponse]) {
        let _ = self.tx.send(Announcement::Appended(Appended {
            tenant: record.tenant.clone(),
            task_id: record.task.id.clone(),
            seq: record.last_seq,
        }));
        // The announcement's reader runs before we return, as over a network.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }

    // Reads take a while, as over a network: catching up holds the lock long.
    async fn loading(&self) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[derive(Debug)]
struct OneReplica(tokio::sync::broadcast::Sender<Announcement>);

#[async_trait::async_trait]
impl Cluster for OneReplica {
    fn replica_id(&self) -> &str {
        "test"
    }
    fn announcements(&self) -> tokio::sync::broadcast::Receiver<Announcement> {
        self.0.subscribe()
    }
    async fn take_orphans(&self, _: usize) -> Result<Vec<(String, String)>, StoreError> {
        Ok(Vec::new())
    }
}

/// Regression: a blocking SendMessage used to wait for the task's lock while
/// the agent's run (which the lock had already been handed to) was no
/// longer polled, so it hung forever when anything else (here, catching up
/// with an announcement) queued on the lock at that moment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_sends_never_hang_on_lock_contention() {
    let (tx, _) = tokio::sync::broadcast::channel(1024);
    let store = Arc::new(ObservedStore::new(Announcing { tx: tx.clone() }));
    let h = RequestHandler::builder(agent(), card())
        .store(store)
        .cluster(Arc::new(OneReplica(tx)))
        .build();
    let call = CallContext::default();
    for i in 0..200 {
        let sent = tokio::time::timeout(
            Duration::from_secs(5),
            h.send_message(&call, send("complete")),
        )
        .await
        .unwrap_or_else(|_| panic!("blocking send {i} hung"));
        match sent.unwrap() {
            SendMessageResponse::Task(t) => assert_eq!(t.status.state, TaskState::Completed),
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn a_batch_is_one_commit_of_consecutive_events() {
    let (store, h) = counting_handler();
    let call = CallContext::default();

    // The first batch creates the task: task + working + artifact +
    // completed in one commit, and the engine has nothing left to settle.
    let t = task_in(&h, &call, "batch", TaskState::Completed).await;
    assert_eq!(t.artifacts()[0].text(), "batch");
    assert_eq!(store.observer.take(), vec![4]);
    let log = log_of(&*store, "", &t.id).await;
    assert_eq!(seqs(&log), [1, 2, 3, 4]);
    assert_eq!(log[1].event.state(), Some(TaskState::Working));
    assert!(matches!(log[2].event, StreamResponse::ArtifactUpdate(_)));
    assert_eq!(log[3].event.state(), Some(TaskState::Completed));

    // A batch on an existing task: one more commit of three events.
    let t = task_in(&h, &call, "batch-later", TaskState::Completed).await;
    assert_eq!(store.observer.take(), vec![2, 3]);
    let names: Vec<_> = t.artifacts().iter().map(|a| a.text()).collect();
    assert_eq!(names, ["one", "two"]);

    // A stream sees every event of a batch once, in order.
    let events = stream(&h, &call, send("batch-later")).await;
    assert_eq!(seqs(&events), [1, 2, 3, 4, 5]);
    assert_eq!(events[4].event.state(), Some(TaskState::Completed));
}

#[tokio::test]
async fn a_batch_with_a_refused_change_changes_nothing() {
    let (store, h) = counting_handler();
    let t = task_of(&h, &CallContext::default(), send("bad-batch")).await;
    // Not the batch's artifact nor its completion: the error artifact the
    // agent emitted afterwards, then the engine's completion.
    assert_eq!(t.artifacts().len(), 1, "{t:?}");
    assert_eq!(t.artifacts()[0].artifact_id, "err");
    assert!(
        t.artifacts()[0].text().contains("cannot move from"),
        "{t:?}"
    );
    assert_eq!(t.status.state, TaskState::Completed);
    // created+working, the error artifact, the engine's completion.
    assert_eq!(store.observer.take(), vec![2, 1, 1]);
    let log = log_of(&*store, "", &t.id).await;
    assert_eq!(seqs(&log), [1, 2, 3, 4]);
}
