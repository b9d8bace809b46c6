//! The end-to-end matrix: every operation on every combination of protocol
//! binding (JSON-RPC, HTTP+JSON, gRPC) and protocol version (1.0, 0.3).
//!
//! One scenario, [`scenario`], is run once per combination. It drives the
//! real `switchboard serve` binary (demo agent, SQLite file store, push on)
//! with our own client forced onto that combination through
//! `preferred_bindings` + `preferred_versions`, and checks after each call
//! that the client really stayed on it. What differs between combinations
//! is only what the protocol version lacks (see [`Combo::is_v1`]) and the
//! wire form of an invalid-params error ([`raw_invalid_params`]).
//!
//! A2A 0.3 has no ListTasks and no tenants (a2a-wire.md §8; the 0.3 proto
//! has no `ListTasks` rpc and no `tenant` fields on JSON-RPC), so over 0.3
//! the scenario checks that ListTasks is refused with UnsupportedOperation
//! and skips the tenant part. Everything else is common.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod util;

use std::fmt;
use std::time::Duration;

use futures::StreamExt;
use proc::Serve;
use serde_json::{Value, json};
use switchboard_client::{A2AClient, ClientError, StreamEvent};
use switchboard_proto::v1 as pb;
use switchboard_proto::v1::a2a_service_client::A2aServiceClient;
use switchboard_protocol::{
    A2AError, AgentCard, GetTaskRequest, ListTasksRequest, Message, SendMessageConfiguration,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};
use util::{get_with_history, push_config, push_config_ref, push_config_round_trip};

/// One binding × version combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Combo {
    /// `protocolBinding` as written in the card.
    binding: &'static str,
    /// `protocolVersion` as written in the card.
    version: &'static str,
}

impl Combo {
    fn is_v1(self) -> bool {
        self.version.starts_with('1')
    }

    /// The same binding in the other version, used for the cross-version
    /// reads; JSON-RPC when the card does not offer that binding in the
    /// other version.
    fn other_version(self, card: &AgentCard) -> Combo {
        let version = if self.is_v1() { "0.3" } else { "1.0" };
        let offered = card
            .supported_interfaces
            .iter()
            .any(|i| i.protocol_binding == self.binding && i.protocol_version == version);
        Combo {
            binding: if offered { self.binding } else { "JSONRPC" },
            version,
        }
    }
}

impl fmt::Display for Combo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.binding, self.version)
    }
}

macro_rules! combination {
    ($name:ident, $binding:literal, $version:literal) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            scenario(Combo {
                binding: $binding,
                version: $version,
            })
            .await;
        }
    };
}

combination!(jsonrpc_1_0, "JSONRPC", "1.0");
combination!(rest_1_0, "HTTP+JSON", "1.0");
combination!(grpc_1_0, "GRPC", "1.0");
combination!(jsonrpc_0_3, "JSONRPC", "0.3");
combination!(rest_0_3, "HTTP+JSON", "0.3");
combination!(grpc_0_3, "GRPC", "0.3");

/// Upper bound of any single step: a hang is a failure, not a stuck run.
const STEP: Duration = Duration::from_secs(20);

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {STEP:?}"))
}

/// A client forced onto `combo`, built from the served card (optionally
/// with a tenant set on the chosen interface, as an agent would publish it).
async fn client(base: &str, combo: Combo, tenant: Option<&str>) -> A2AClient {
    let builder = A2AClient::builder()
        .preferred_bindings([combo.binding])
        .preferred_versions([combo.version])
        .timeout(STEP);
    let c = match tenant {
        None => builder.connect(base).await.unwrap(),
        Some(t) => {
            let mut card = builder.fetch_card(base).await.unwrap();
            for i in &mut card.supported_interfaces {
                if i.protocol_binding == combo.binding && i.protocol_version == combo.version {
                    i.tenant = Some(t.to_string());
                }
            }
            builder.from_card(card).unwrap()
        }
    };
    let iface = c.interface();
    assert_eq!(
        (
            iface.protocol_binding.as_str(),
            iface.protocol_version.as_str()
        ),
        (combo.binding, combo.version),
        "the client must use the combination it was forced onto"
    );
    assert_eq!(iface.tenant.as_deref(), tenant);
    c
}

fn protocol(what: &str, e: ClientError) -> A2AError {
    match e {
        ClientError::Protocol(a) => a,
        other => panic!("{what}: expected an A2A error, got {other:?}"),
    }
}

fn task_of(what: &str, r: SendMessageResponse) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        other => panic!("{what}: expected a task, got {other:?}"),
    }
}

fn non_blocking(text: &str) -> SendMessageRequest {
    SendMessageRequest {
        configuration: Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        }),
        ..SendMessageRequest::new(Message::user_text(text))
    }
}

async fn collect(what: &str, stream: switchboard_client::EventStream) -> Vec<StreamEvent> {
    within(what, stream.collect::<Vec<_>>())
        .await
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{what}: {e}")))
        .collect()
}

/// Starts `/long 30` through `c` without waiting: a task that runs for 30 s.
async fn start_long(what: &str, c: &A2AClient) -> Task {
    task_of(
        what,
        within(what, c.send_message(non_blocking("/long 30")))
            .await
            .unwrap(),
    )
}

/// Streams `text` through `c` to the end: the stream starts with the task
/// and ends completed. Returns the task as first streamed, and every item.
async fn stream_to_completion(
    what: &str,
    combo: Combo,
    c: &A2AClient,
    text: &str,
) -> (Task, Vec<StreamEvent>) {
    let stream = within(what, c.send_streaming_message(Message::user_text(text)))
        .await
        .unwrap();
    let items = collect(what, stream).await;
    let StreamResponse::Task(ref streamed) = items[0].event else {
        panic!("{combo}: {what} starts with the task, got {:?}", items[0]);
    };
    assert_eq!(
        items.last().unwrap().event.state(),
        Some(TaskState::Completed),
        "{combo}: {what} ends at the terminal state"
    );
    (streamed.clone(), items)
}

/// Subscribes through `c` to the running task `long`: the subscription
/// starts with the task, not finished yet.
async fn subscribe_running(
    what: &str,
    combo: Combo,
    c: &A2AClient,
    long: &Task,
) -> switchboard_client::EventStream {
    let mut sub = within(what, c.subscribe_to_task(long.id.as_str()))
        .await
        .unwrap();
    let first = within(what, sub.next()).await.unwrap().unwrap();
    assert!(
        matches!(first.event, StreamResponse::Task(ref t) if t.id == long.id && !t.status.state.is_terminal()),
        "{combo}: {what} starts with the running task: {first:?}"
    );
    sub
}

/// Cancels the running task `long` through `c`; its subscription `sub`
/// ends with the cancel.
async fn cancel_ends_subscription(
    what: &str,
    combo: Combo,
    c: &A2AClient,
    long: &Task,
    sub: switchboard_client::EventStream,
) {
    let canceled = within(what, c.cancel_task(long.id.as_str())).await.unwrap();
    assert_eq!(canceled.status.state, TaskState::Canceled, "{combo}");
    let rest = collect(what, sub).await;
    assert_eq!(
        rest.last().map(|e| e.event.state()),
        Some(Some(TaskState::Canceled)),
        "{combo}: {what}: the subscription ends with the cancel"
    );
}

/// Every operation of `combo`'s version, over `combo` only.
async fn scenario(combo: Combo) {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("matrix.db").display());
    // Push configs name a loopback webhook: exempt it from the SSRF guard.
    let s = Serve::start_with(&store, &["--push-allow-host", "127.0.0.1"]);
    let base = s.base();
    let c = client(&base, combo, None).await;

    // --- The card: it offers this combination. -----------------------------
    let card = c.card().expect("connect reads the card").clone();
    assert!(
        card.supported_interfaces
            .iter()
            .any(|i| i.protocol_binding == combo.binding && i.protocol_version == combo.version),
        "{combo}: not in the card"
    );

    // --- SendMessage, blocking: the task comes back finished. --------------
    let done = task_of(
        "blocking send",
        within("blocking send", c.send_text("hello matrix"))
            .await
            .unwrap(),
    );
    proc::assert_demo_answer(&done, "hello matrix", combo);
    // A direct reply is a Message, not a Task.
    match within("message reply", c.send_text("/message hi there"))
        .await
        .unwrap()
    {
        SendMessageResponse::Message(m) => assert!(m.text().contains("hi there"), "{combo}"),
        other => panic!("{combo}: expected a message, got {other:?}"),
    }

    // --- SendMessage, non-blocking: returns while the task still runs. -----
    let long = start_long("non-blocking send", &c).await;
    assert!(
        !long.status.state.is_terminal(),
        "{combo}: a non-blocking send of a 30 s task returned {:?}",
        long.status.state
    );

    // --- SendStreamingMessage to the end. ---------------------------------
    let (streamed, items) = stream_to_completion("stream", combo, &c, "stream me").await;
    assert!(
        items
            .iter()
            .any(|i| matches!(i.event, StreamResponse::ArtifactUpdate(_))),
        "{combo}: the reply is streamed as artifact updates"
    );
    // Numbered streams count up by one (resumption relies on it).
    let seqs: Vec<u64> = items.iter().filter_map(|i| i.seq).collect();
    if !seqs.is_empty() {
        assert_eq!(seqs.len(), items.len(), "{combo}: all or none numbered");
        assert!(
            seqs.windows(2).all(|w| w[1] == w[0] + 1),
            "{combo}: {seqs:?}"
        );
    }

    // --- GetTask, with historyLength. --------------------------------------
    let got = within("get", c.get_task(get_with_history(&streamed.id, 1)))
        .await
        .unwrap();
    assert_eq!(got.id, streamed.id);
    assert_eq!(got.status.state, TaskState::Completed);
    assert!(got.history().len() <= 1, "{combo}: historyLength 1");
    assert!(!got.artifacts().is_empty(), "{combo}");

    // --- ListTasks: filters and paging (1.0 only). -------------------------
    let ctx = format!("matrix-{}", combo.binding.to_lowercase());
    for i in 0..3 {
        let msg = Message::user_text(format!("listed {i}")).with_context_id(ctx.clone());
        within("send in context", c.send_message(msg))
            .await
            .unwrap();
    }
    let list = |page_token: Option<String>| ListTasksRequest {
        context_id: Some(ctx.clone()),
        status: Some(TaskState::Completed),
        page_size: Some(2),
        page_token,
        ..Default::default()
    };
    if combo.is_v1() {
        let first = within("list", c.list_tasks(list(None))).await.unwrap();
        assert_eq!(first.total_size, 3, "{combo}: only this context");
        assert_eq!(first.tasks.len(), 2);
        assert_eq!(first.page_size, 2);
        assert!(!first.next_page_token.is_empty(), "{combo}: more to come");
        let second = within(
            "list page 2",
            c.list_tasks(list(Some(first.next_page_token))),
        )
        .await
        .unwrap();
        assert_eq!(second.tasks.len(), 1, "{combo}");
        assert_eq!(second.next_page_token, "", "{combo}: the last page");
        let mut ids: Vec<_> = first
            .tasks
            .iter()
            .chain(&second.tasks)
            .map(|t| &t.id)
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 3, "{combo}: paging neither repeats nor skips");
        assert!(
            first
                .tasks
                .iter()
                .chain(&second.tasks)
                .all(|t| t.context_id == ctx && t.status.state == TaskState::Completed)
        );
        // A state filter that matches none of them.
        let mut working = list(None);
        working.status = Some(TaskState::Working);
        let none = within("list working", c.list_tasks(working)).await.unwrap();
        assert_eq!(none.total_size, 0, "{combo}");
        // Paging parameters out of range or not issued by the server.
        let mut zero = list(None);
        zero.page_size = Some(0);
        let err = protocol("list pageSize 0", c.list_tasks(zero).await.unwrap_err());
        assert!(
            matches!(err, A2AError::InvalidParams { .. }),
            "{combo}: {err:?}"
        );
        let err = protocol(
            "list forged pageToken",
            c.list_tasks(list(Some("not-a-token".into())))
                .await
                .unwrap_err(),
        );
        assert!(
            matches!(err, A2AError::InvalidParams { .. }),
            "{combo}: {err:?}"
        );
    } else {
        // 0.3 has no ListTasks: the client says so instead of guessing a route.
        let err = protocol("0.3 list", c.list_tasks(list(None)).await.unwrap_err());
        assert!(
            matches!(err, A2AError::UnsupportedOperation(_)),
            "{combo}: {err:?}"
        );
    }

    // --- SubscribeToTask to the running task, twice, then CancelTask. ------
    let mut sub = subscribe_running("subscribe", combo, &c, &long).await;
    // The agent emits a status every 0.5 s: the subscription is live.
    let live = within("subscribe second event", sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.event.task_id(), Some(long.id.as_str()), "{combo}");
    drop(sub);
    // Resubscribe (0.3: tasks/resubscribe) after dropping the first one.
    let resub = subscribe_running("resubscribe", combo, &c, &long).await;
    cancel_ends_subscription("cancel", combo, &c, &long, resub).await;

    // --- The four push config operations. -----------------------------------
    // (Our client is bounded by STEP on every call.)
    let gone = push_config_round_trip(&c, &done.id, "http://127.0.0.1:9/matrix-hook").await;
    let err = protocol("push get after delete", gone);
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{combo}: {err:?}");

    // --- The extended card: the demo card does not declare one, so the
    // spec's answer is UnsupportedOperation (a2a-wire.md §5).
    assert_ne!(card.capabilities.extended_agent_card, Some(true));
    let err = protocol(
        "extended card",
        within("extended card", c.get_extended_agent_card())
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(err, A2AError::UnsupportedOperation(_)),
        "{combo}: {err:?}"
    );

    // --- Errors. ------------------------------------------------------------
    let err = protocol(
        "unknown task",
        c.get_task("no-such-task").await.unwrap_err(),
    );
    assert_eq!(
        err,
        A2AError::TaskNotFound("no-such-task".into()),
        "{combo}"
    );
    let err = protocol(
        "cancel terminal",
        c.cancel_task(done.id.as_str()).await.unwrap_err(),
    );
    assert!(
        matches!(err, A2AError::TaskNotCancelable { ref task_id, .. } if *task_id == done.id),
        "{combo}: {err:?}"
    );
    // A message to a finished task: UnsupportedOperation (a terminal task
    // accepts nothing more; a follow-up is a new task).
    let follow_up = Message::user_text("again")
        .with_task_id(done.id.clone())
        .with_context_id(done.context_id.clone());
    let err = protocol(
        "message to terminal",
        c.send_message(follow_up).await.unwrap_err(),
    );
    assert!(
        matches!(err, A2AError::UnsupportedOperation(_)),
        "{combo}: {err:?}"
    );
    // The same over the streaming call: the error comes before, or as the
    // only item of, the stream.
    let follow_up = Message::user_text("again, streamed")
        .with_task_id(done.id.clone())
        .with_context_id(done.context_id.clone());
    let err = match within("stream to terminal", c.send_streaming_message(follow_up)).await {
        Err(e) => protocol("stream to terminal", e),
        Ok(stream) => {
            let items: Vec<_> = within("stream to terminal", stream.collect::<Vec<_>>()).await;
            assert_eq!(items.len(), 1, "{combo}: only the error: {items:?}");
            let e = items.into_iter().next().unwrap().unwrap_err();
            protocol("stream to terminal", e)
        }
    };
    assert!(
        matches!(err, A2AError::UnsupportedOperation(_)),
        "{combo}: {err:?}"
    );
    // A task that fails streams to its failed state (an agent failure is a
    // task state, not a protocol error).
    let failed = within(
        "failing stream",
        c.send_streaming_message(Message::user_text("/fail on purpose")),
    )
    .await
    .unwrap();
    let items = collect("failing stream", failed).await;
    assert_eq!(
        items.last().unwrap().event.state(),
        Some(TaskState::Failed),
        "{combo}"
    );
    // Subscribing to a finished task: nothing more will come.
    let err = match c.subscribe_to_task(done.id.as_str()).await {
        Err(e) => protocol("subscribe terminal", e),
        Ok(_) => panic!("{combo}: subscribing to a finished task must fail"),
    };
    assert!(
        matches!(err, A2AError::UnsupportedOperation(_)),
        "{combo}: {err:?}"
    );
    // Bad params: a negative historyLength, typed through our client...
    let err = protocol(
        "bad params",
        c.get_task(get_with_history(&done.id, -1))
            .await
            .unwrap_err(),
    );
    assert!(
        matches!(err, A2AError::InvalidParams { .. }),
        "{combo}: {err:?}"
    );
    // ...and in the binding's own wire form.
    raw_invalid_params(combo, &base, &done.id).await;

    // --- Tenants (1.0): a tenant in the card interface reaches the server.
    if combo.is_v1() {
        let tc = client(&base, combo, Some("acme")).await;
        let t = task_of(
            "tenant send",
            within("tenant send", tc.send_text("in a tenant"))
                .await
                .unwrap(),
        );
        assert_eq!(
            within("tenant get", tc.get_task(t.id.as_str()))
                .await
                .unwrap()
                .id,
            t.id
        );
        // Stored under the tenant: readable naming it, invisible without it.
        let named = c
            .get_task(GetTaskRequest {
                tenant: Some("acme".into()),
                id: t.id.clone(),
                history_length: None,
            })
            .await
            .unwrap();
        assert_eq!(named.id, t.id, "{combo}");
        let err = protocol("no tenant", c.get_task(t.id.as_str()).await.unwrap_err());
        assert!(matches!(err, A2AError::TaskNotFound(_)), "{combo}: {err:?}");
        let listed = within("tenant list", tc.list_tasks(ListTasksRequest::default()))
            .await
            .unwrap();
        assert_eq!(listed.total_size, 1, "{combo}: only the tenant's task");
        assert_eq!(listed.tasks[0].id, t.id);
        tenant_operations(combo, &tc, &c, &t).await;
    }

    // --- Cross-version: tasks are the same whatever version wrote them. ---
    let peer_combo = combo.other_version(&card);
    let peer = client(&base, peer_combo, None).await;
    let seen = within("cross read", peer.get_task(done.id.as_str()))
        .await
        .unwrap();
    assert_eq!(
        (seen.id.as_str(), seen.status.state),
        (done.id.as_str(), TaskState::Completed),
        "{combo} → {peer_combo}"
    );
    assert_eq!(seen.artifacts(), done.artifacts(), "{combo} → {peer_combo}");
    let theirs = task_of(
        "peer send",
        within("peer send", peer.send_text("from the other version"))
            .await
            .unwrap(),
    );
    let mine = within("cross read back", c.get_task(theirs.id.as_str()))
        .await
        .unwrap();
    assert_eq!(mine.id, theirs.id, "{peer_combo} → {combo}");
    assert_eq!(mine.status.state, TaskState::Completed);
    assert_eq!(
        mine.artifacts(),
        theirs.artifacts(),
        "{peer_combo} → {combo}"
    );
}

/// The other operations under a tenant (`tc` has tenant `acme` in its
/// interface; `c` has none): streams, subscribe + cancel, the push config
/// ops, the extended card and the errors all carry the tenant, and nothing
/// of the tenant's leaks to the default tenant.
async fn tenant_operations(combo: Combo, tc: &A2AClient, c: &A2AClient, t: &Task) {
    // A stream under the tenant: the task it creates lives there.
    let (streamed, _) =
        stream_to_completion("tenant stream", combo, tc, "streamed in a tenant").await;
    assert!(
        c.get_task(streamed.id.as_str()).await.is_err(),
        "{combo}: a tenant's streamed task is not in the default tenant"
    );
    within("tenant get streamed", tc.get_task(streamed.id.as_str()))
        .await
        .unwrap();

    // Subscribe and cancel under the tenant; neither works without it.
    let long = start_long("tenant non-blocking", tc).await;
    let err = protocol(
        "cancel without tenant",
        c.cancel_task(long.id.as_str()).await.unwrap_err(),
    );
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{combo}: {err:?}");
    let sub = subscribe_running("tenant subscribe", combo, tc, &long).await;
    cancel_ends_subscription("tenant cancel", combo, tc, &long, sub).await;

    // Push configs under the tenant.
    let created = within(
        "tenant push create",
        tc.create_push_config(push_config(&t.id, "http://127.0.0.1:9/tenant-hook", None)),
    )
    .await
    .unwrap();
    let cref = push_config_ref(&t.id, &created.id.expect("a config id"));
    within("tenant push get", tc.get_push_config(cref.clone()))
        .await
        .unwrap();
    assert_eq!(
        within("tenant push list", tc.list_push_configs(t.id.as_str()))
            .await
            .unwrap()
            .configs
            .len(),
        1,
        "{combo}"
    );
    assert!(
        c.get_push_config(cref.clone()).await.is_err(),
        "{combo}: a tenant's push config is not in the default tenant"
    );
    within("tenant push delete", tc.delete_push_config(cref))
        .await
        .unwrap();
    assert!(
        within(
            "tenant push list after",
            tc.list_push_configs(t.id.as_str())
        )
        .await
        .unwrap()
        .configs
        .is_empty(),
        "{combo}"
    );

    // The extended card and the errors keep their meaning in a tenant.
    let err = protocol(
        "tenant extended card",
        tc.get_extended_agent_card().await.unwrap_err(),
    );
    assert!(
        matches!(err, A2AError::UnsupportedOperation(_)),
        "{combo}: {err:?}"
    );
    let err = protocol(
        "tenant cancel terminal",
        tc.cancel_task(t.id.as_str()).await.unwrap_err(),
    );
    assert!(
        matches!(err, A2AError::TaskNotCancelable { .. }),
        "{combo}: {err:?}"
    );
    let err = protocol(
        "tenant unknown task",
        tc.get_task("no-such-task").await.unwrap_err(),
    );
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{combo}: {err:?}");
}

/// A GetTask with `historyLength: -1` sent by hand, checked in the form
/// each binding gives an invalid-params error (a2a-wire.md §2–§4).
async fn raw_invalid_params(combo: Combo, base: &str, task_id: &str) {
    let http = reqwest::Client::new();
    match (combo.binding, combo.version) {
        ("JSONRPC", version) => {
            let method = if combo.is_v1() {
                "GetTask"
            } else {
                "tasks/get"
            };
            let mut req = http.post(format!("{base}/")).json(&json!({
                "jsonrpc": "2.0", "id": 7, "method": method,
                "params": {"id": task_id, "historyLength": -1}
            }));
            if combo.is_v1() {
                req = req.header("A2A-Version", version);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), 200, "{combo}: JSON-RPC errors ride on 200");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["code"], -32602, "{combo}: {v}");
            assert_eq!(v["id"], 7);
        }
        ("HTTP+JSON", version) => {
            let path = if combo.is_v1() {
                format!("{base}/tasks/{task_id}?historyLength=-1")
            } else {
                format!("{base}/v1/tasks/{task_id}?historyLength=-1")
            };
            let mut req = http.get(path);
            if combo.is_v1() {
                req = req.header("A2A-Version", version);
            }
            let resp = req.send().await.unwrap();
            assert_eq!(resp.status(), 400, "{combo}");
            let v: Value = resp.json().await.unwrap();
            assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{combo}: {v}");
            assert_eq!(v["error"]["code"], 400, "{combo}: {v}");
        }
        ("GRPC", "1.0") => {
            let mut raw = A2aServiceClient::connect(base.to_string()).await.unwrap();
            let mut req = tonic::Request::new(pb::GetTaskRequest {
                tenant: String::new(),
                id: task_id.to_string(),
                history_length: Some(-1),
            });
            req.metadata_mut()
                .insert("a2a-version", "1.0".parse().unwrap());
            let st = raw.get_task(req).await.unwrap_err();
            assert_eq!(st.code(), tonic::Code::InvalidArgument, "{combo}: {st:?}");
        }
        ("GRPC", _) => {
            // The 0.3 service (package a2a.v1): no `a2a-version` = 0.3; a
            // negative history length and a malformed resource name.
            use switchboard_proto::v03 as pb03;
            let mut raw = pb03::a2a_service_client::A2aServiceClient::connect(base.to_string())
                .await
                .unwrap();
            for (name, history_length) in [(format!("tasks/{task_id}"), -1), ("tasks".into(), 0)] {
                let st = raw
                    .get_task(pb03::GetTaskRequest {
                        name: name.clone(),
                        history_length,
                    })
                    .await
                    .unwrap_err();
                assert_eq!(
                    st.code(),
                    tonic::Code::InvalidArgument,
                    "{combo} {name}: {st:?}"
                );
            }
        }
        _ => unreachable!("{combo}: not one of the six combinations"),
    }
}
