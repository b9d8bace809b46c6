//! Issue 21 item 6: every request limit of the engine hit once, over
//! JSON-RPC (-32602 InvalidParams) and REST (HTTP 400), each followed by a
//! normal request that still works; and the default history length of
//! GetTask and ListTasks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod util;

use serde_json::{Value, json};
use switchboard_core::{HandlerConfig, Limits, RequestHandler};
use switchboard_runtimes::builtin::{DemoAgent, demo_card};
use util::*;

fn limits() -> Limits {
    Limits {
        max_id_bytes: 64,
        max_parts_per_message: 3,
        max_part_bytes: 1000,
        max_message_bytes: 2500,
        max_metadata_bytes: 500,
        default_history_length: 1,
    }
}

async fn server() -> TestServer {
    let handler = RequestHandler::builder(DemoAgent::default(), demo_card())
        .config(HandlerConfig {
            limits: limits(),
            ..HandlerConfig::default()
        })
        .build();
    TestServer::start(handler).await
}

/// A message over each limit, and the field its error names.
fn over_the_limits() -> Vec<(&'static str, Value, &'static str)> {
    let long = "x".repeat(65);
    let msg = |extra: Value| {
        let mut m = json!({"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": "hi"}]});
        for (k, v) in extra.as_object().into_iter().flatten() {
            m[k] = v.clone();
        }
        json!({ "message": m })
    };
    vec![
        (
            "messageId length",
            msg(json!({"messageId": long})),
            "message.messageId",
        ),
        (
            "contextId length",
            msg(json!({"contextId": long})),
            "message.contextId",
        ),
        (
            "taskId length",
            msg(json!({"taskId": long})),
            "message.taskId",
        ),
        (
            "parts per message",
            msg(json!({"parts": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]})),
            "message.parts",
        ),
        (
            "part size",
            msg(json!({"parts": [{"text": "y".repeat(1001)}]})),
            "message.parts[0]",
        ),
        (
            "message size",
            msg(
                json!({"parts": [{"text": "y".repeat(900)}, {"text": "y".repeat(900)}, {"text": "y".repeat(900)}]}),
            ),
            "message",
        ),
        (
            "message metadata",
            msg(json!({"metadata": {"k": "z".repeat(501)}})),
            "message.metadata",
        ),
        (
            "part metadata",
            msg(json!({"parts": [{"text": "a", "metadata": {"k": "z".repeat(501)}}]})),
            "message.parts[0].metadata",
        ),
        (
            "request metadata",
            {
                let mut m = msg(json!({}));
                m["metadata"] = json!({"k": "z".repeat(501)});
                m
            },
            "metadata",
        ),
    ]
}

/// The JSON-RPC error in `r`'s body says `what`.
async fn assert_error_says(r: reqwest::Response, what: &str) {
    let r: Value = r.json().await.unwrap();
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains(what), "{r}");
}

#[tokio::test]
async fn each_limit_is_invalid_params_on_jsonrpc_and_the_server_keeps_serving() {
    let s = server().await;
    for (name, params, field) in over_the_limits() {
        let v = s.rpc("SendMessage", params).await;
        assert_eq!(err_code(&v), -32602, "{name}: {v}");
        assert!(
            v.to_string().contains(field),
            "{name}: the error names {field}: {v}"
        );
        let ok = s.rpc_send_text("still here").await;
        assert!(ok.get("result").is_some(), "{name}: then {ok}");
    }
    // An id too long to be a task of this server, on GetTask and ListTasks.
    let v = s.rpc("GetTask", json!({"id": "t".repeat(65)})).await;
    assert_eq!(err_code(&v), -32602, "{v}");
    let v = s
        .rpc("ListTasks", json!({"contextId": "c".repeat(65)}))
        .await;
    assert_eq!(err_code(&v), -32602, "{v}");
    println!("{} limits hit over JSON-RPC", over_the_limits().len() + 2);
    s.stop().await;
}

/// A JSON-RPC id is echoed in every answer and every stream event: one of
/// 1 MB is refused (with a null id) instead of being sent back.
#[tokio::test]
async fn a_huge_jsonrpc_id_is_refused_not_echoed() {
    let s = server().await;
    let body =
        json!({"jsonrpc": "2.0", "id": "i".repeat(1 << 20), "method": "ListTasks", "params": {}});
    let (_, text, _) = s
        .send(reqwest::Method::POST, "/", Some(body.to_string()), V1)
        .await;
    assert!(
        text.len() < 1024,
        "the answer is small: {} bytes",
        text.len()
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(err_code(&v), -32600, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    assert!(v.to_string().contains("the limit is 256"), "{v}");
    let ok = s.rpc_send_text("still here").await;
    assert!(ok.get("result").is_some(), "then {ok}");
    s.stop().await;
}

#[tokio::test]
async fn each_limit_is_400_on_rest_and_the_server_keeps_serving() {
    let s = server().await;
    let post = |params: Value| {
        s.http
            .post(format!("{}/message:send", s.base))
            .header("A2A-Version", "1.0")
            .json(&params)
            .send()
    };
    for (name, params, field) in over_the_limits() {
        let resp = post(params).await.unwrap();
        assert_eq!(resp.status(), 400, "{name}");
        let body = resp.text().await.unwrap();
        assert!(body.contains(field), "{name}: {body}");
        let ok = post(json!({"message": user_msg("still here")}))
            .await
            .unwrap();
        assert_eq!(
            ok.status(),
            200,
            "{name}: then {}",
            ok.text().await.unwrap()
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn get_and_list_return_the_default_history_unless_asked() {
    let s = server().await;
    let v = s
        .rpc_send_configured("hello", json!({"historyLength": 100}))
        .await;
    let task = &result(&v)["task"];
    let full = task["history"].as_array().map_or(0, Vec::len);
    assert!(full >= 1, "{task}");
    let id = task["id"].as_str().unwrap();
    let got = s.rpc("GetTask", json!({"id": id})).await;
    let history = |t: &Value| t["history"].as_array().map_or(0, Vec::len);
    assert_eq!(history(result(&got)), 1.min(full), "{got}");
    let got = s
        .rpc("GetTask", json!({"id": id, "historyLength": 100}))
        .await;
    assert_eq!(history(result(&got)), full, "asked for: {got}");
    let listed = s.rpc("ListTasks", json!({})).await;
    for t in result(&listed)["tasks"].as_array().unwrap() {
        assert!(history(t) <= 1, "{t}");
    }
    println!("history: {full} stored, 1 returned by default");
    s.stop().await;
}

// ---- Quotas: each hit once, with its error, while others are served ----

mod quotas {
    use std::sync::Arc;
    use std::time::Duration;

    use futures::StreamExt;
    use serde_json::{Value, json};
    use switchboard_auth::{ApiKeys, Schemes, hash_api_key};
    use switchboard_client::{A2AClient, ClientError};
    use switchboard_core::{
        BoxError, HandlerConfig, InMemoryStore, PushConfigLimits, Quotas, RequestContext,
        RequestHandler, TaskEvents, agent_fn,
    };
    use switchboard_protocol::error::RESOURCE_EXHAUSTED_CODE;
    use switchboard_protocol::{
        AgentCard, AgentSkill, Artifact, ListTasksRequest, Message, Part, SendMessageConfiguration,
        SendMessageRequest, SendMessageResponse, Task, TaskPushNotificationConfig, TaskState,
    };
    use switchboard_server::RequestRate;

    use crate::util::{COMBOS, TestServer};

    const KEYS: [&str; 6] = ["alice", "bob", "carol", "dave", "erin", "frank"];

    /// "wait" works until canceled; anything else completes at once with
    /// the text as an artifact.
    fn agent() -> impl switchboard_core::AgentExecutor {
        agent_fn(|ctx: RequestContext, events: TaskEvents| async move {
            if ctx.text() == "wait" {
                events.working("waiting to be canceled").await?;
                events.cancelled().await;
                return Ok::<(), BoxError>(());
            }
            // "long-id" names its artifact after the caller's text, as agents
            // may: the id limit applies to what agents emit too.
            let id = if ctx.text() == "long-id" {
                "a".repeat(65)
            } else {
                "echo".into()
            };
            events
                .batch()
                .artifact(Artifact::new(vec![Part::text(ctx.text())]).with_id(id))
                .complete()
                .commit()
                .await?;
            Ok(())
        })
    }

    async fn server(quotas: Quotas, rate: Option<RequestRate>) -> TestServer {
        let mut keys = ApiKeys::new();
        for name in KEYS {
            keys = keys
                .key(&hash_api_key(&format!("sb_{name}")), name, None, false)
                .unwrap();
        }
        let mut card = AgentCard::new("quotas", "waits or echoes", "1.0.0")
            .with_streaming(true)
            .with_skill(AgentSkill::new("echo", "Echo", "Echoes", &["echo"]));
        card.capabilities.push_notifications = Some(true);
        let store = Arc::new(InMemoryStore::new());
        let handler = RequestHandler::builder(agent(), card)
            .store(store.clone())
            .push(
                store,
                PushConfigLimits {
                    allow_hosts: vec!["127.0.0.1".into()],
                    ..PushConfigLimits::default()
                },
            )
            .config(HandlerConfig {
                quotas,
                limits: switchboard_core::Limits {
                    max_id_bytes: 64,
                    ..Default::default()
                },
                ..HandlerConfig::default()
            })
            .build();
        TestServer::start_with(
            move |s| {
                s.authenticator(Schemes::new().with(keys))
                    .request_rate(rate)
            },
            handler,
        )
        .await
    }

    async fn client(base: &str, combo: (&str, &str), name: &str) -> A2AClient {
        A2AClient::builder()
            .preferred_bindings([combo.0])
            .preferred_versions([combo.1])
            .timeout(Duration::from_secs(20))
            .no_reconnect()
            .header("x-api-key", format!("sb_{name}"))
            .connect(base)
            .await
            .unwrap()
    }

    fn exhausted<T: std::fmt::Debug>(r: Result<T, ClientError>, what: &str) -> String {
        match r {
            Err(e) if e.code() == Some(RESOURCE_EXHAUSTED_CODE) => e.to_string(),
            other => panic!("{what}: expected ResourceExhausted, got {other:?}"),
        }
    }

    fn task_of(r: SendMessageResponse) -> Task {
        match r {
            SendMessageResponse::Task(t) => t,
            other => panic!("not a task: {other:?}"),
        }
    }

    async fn start_waiting(c: &A2AClient) -> Task {
        let mut req = SendMessageRequest::new(Message::user_text("wait"));
        req.configuration = Some(SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        });
        task_of(c.send_message(req).await.unwrap())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_tasks_and_subscribers_per_task_on_every_binding() {
        let s = server(
            Quotas {
                max_active_tasks_per_principal: 1,
                max_subscribers_per_task: 1,
                ..Quotas::default()
            },
            None,
        )
        .await;
        for combo in COMBOS {
            let what = format!("{combo:?}");
            let alice = client(&s.base, combo, "alice").await;
            let bob = client(&s.base, combo, "bob").await;
            // One task being worked on is alice's quota ...
            let waiting = start_waiting(&alice).await;
            let msg = exhausted(alice.send_text("another").await, &what);
            assert!(msg.contains("concurrent tasks"), "{what}: {msg}");
            // ... not bob's.
            assert_eq!(
                task_of(bob.send_text("hi").await.unwrap()).status.state,
                TaskState::Completed,
                "{what}"
            );
            // One subscriber per task.
            let mut first = alice.subscribe_to_task(waiting.id.as_str()).await.unwrap();
            assert!(first.next().await.unwrap().is_ok(), "{what}");
            let second = match alice.subscribe_to_task(waiting.id.as_str()).await {
                Ok(mut st) => match st.next().await {
                    Some(Err(e)) => Err(e),
                    other => panic!("{what}: a second subscriber got {other:?}"),
                },
                Err(e) => Err::<(), _>(e),
            };
            let msg = exhausted(second, &what);
            assert!(msg.contains("subscriptions"), "{what}: {msg}");
            drop(first);
            // Canceling ends the run, which gives the task quota back.
            alice.cancel_task(waiting.id.as_str()).await.unwrap();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                match alice.send_text("again").await {
                    Ok(r) => {
                        assert_eq!(task_of(r).status.state, TaskState::Completed, "{what}");
                        break;
                    }
                    Err(e) if e.code() == Some(RESOURCE_EXHAUSTED_CODE) => {
                        assert!(tokio::time::Instant::now() < deadline, "{what}: {e}");
                        tokio::task::yield_now().await;
                    }
                    Err(e) => panic!("{what}: {e}"),
                }
            }
        }
        println!(
            "quotas: concurrent tasks and subscribers hit on {} combinations",
            COMBOS.len()
        );
        s.stop().await;
    }

    /// Sends `call(key)` three times (a burst of 3: all served), then once
    /// more: refused with 429 and `Retry-After: 100` (one request per 100 s
    /// refills). Returns the refusal's JSON body.
    async fn spend_the_burst(call: impl Fn(&str) -> reqwest::RequestBuilder, key: &str) -> Value {
        for _ in 0..3 {
            assert_eq!(call(key).send().await.unwrap().status(), 200);
        }
        let refused = call(key).send().await.unwrap();
        assert_eq!(refused.status(), 429);
        assert_eq!(refused.headers()["retry-after"], "100");
        refused.json().await.unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_request_rate_is_429_with_retry_after_and_resource_exhausted_on_grpc() {
        let rate = RequestRate {
            per_second: 0.01,
            burst: 3,
        };
        let s = server(Quotas::default(), Some(rate)).await;
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
        let jsonrpc = |key: &str| {
            s.http
                .post(s.url())
                .header("A2A-Version", "1.0")
                .header("x-api-key", key)
                .json(&list)
        };
        let body = spend_the_burst(jsonrpc, "sb_alice").await;
        assert_eq!(body["error"]["code"], RESOURCE_EXHAUSTED_CODE, "{body}");
        // Another caller is still served.
        assert_eq!(jsonrpc("sb_bob").send().await.unwrap().status(), 200);

        let rest = |key: &str| {
            s.http
                .get(format!("{}/tasks", s.base))
                .header("A2A-Version", "1.0")
                .header("x-api-key", key)
        };
        let body = spend_the_burst(rest, "sb_carol").await;
        assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
        assert_eq!(
            body["error"]["details"][0]["reason"], "RESOURCE_EXHAUSTED",
            "{body}"
        );

        for (combo, name) in [(("GRPC", "1.0"), "dave"), (("GRPC", "0.3"), "erin")] {
            let c = client(&s.base, combo, name).await;
            for _ in 0..3 {
                c.get_task("no-such-task").await.unwrap_err();
            }
            let msg = exhausted(c.get_task("no-such-task").await, &format!("{combo:?}"));
            assert!(msg.contains("request rate"), "{msg}");
        }
        let frank = client(&s.base, ("GRPC", "1.0"), "frank").await;
        frank.list_tasks(ListTasksRequest::default()).await.unwrap();
        println!(
            "request rate: 429 + Retry-After on JSON-RPC and REST, RESOURCE_EXHAUSTED on gRPC 1.0 and 0.3"
        );
        s.stop().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_keep_to_the_byte_budget() {
        let s = server(
            Quotas {
                max_response_bytes: 3000,
                ..Quotas::default()
            },
            None,
        )
        .await;
        let alice = client(&s.base, ("JSONRPC", "1.0"), "alice").await;
        let mut ids = Vec::new();
        for i in 0..5 {
            let t = task_of(
                alice
                    .send_text(format!("{i}{}", "x".repeat(1000)))
                    .await
                    .unwrap(),
            );
            ids.push(t.id);
        }
        // Pages end early; their tokens reach every task.
        let mut seen = Vec::new();
        let mut req = ListTasksRequest::default();
        let mut pages = 0;
        loop {
            let page = alice.list_tasks(req.clone()).await.unwrap();
            assert!(page.tasks.len() < 5, "a page within 3000 bytes");
            assert!(serde_json::to_vec(&page).unwrap().len() < 3300);
            seen.extend(page.tasks.iter().map(|t| t.id.clone()));
            pages += 1;
            if page.next_page_token.is_empty() {
                break;
            }
            req.page_token = Some(page.next_page_token);
        }
        seen.sort();
        ids.sort();
        assert_eq!(seen, ids, "{pages} pages");
        assert!(pages >= 3, "{pages}");

        // A task larger than the budget even without history: refused,
        // naming its size; the caller's other tasks still answer.
        let big = task_of(alice.send_text("y".repeat(4000)).await.unwrap());
        let msg = exhausted(alice.get_task(big.id.as_str()).await, "GetTask");
        assert!(msg.contains("limited to 3000 bytes"), "{msg}");
        alice.get_task(ids[0].as_str()).await.unwrap();

        // Push config ids are ids: bounded like the others.
        let err = alice
            .create_push_config(TaskPushNotificationConfig {
                tenant: None,
                id: Some("c".repeat(65)),
                task_id: Some(ids[0].clone()),
                url: "http://127.0.0.1:9/hook".into(),
                token: None,
                authentication: None,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(-32602), "{err}");
        assert!(err.to_string().contains("id"), "{err}");
        // An agent's artifact id over the id limit is refused to the agent,
        // whose run then fails the task, saying why.
        let failed = task_of(alice.send_text("long-id").await.unwrap());
        assert_eq!(failed.status.state, TaskState::Failed);
        let why = serde_json::to_string(&failed.status).unwrap();
        assert!(why.contains("artifact id of 65 bytes"), "{why}");
        assert!(failed.artifacts.unwrap_or_default().is_empty());
        println!("response budget: {pages} pages of 5 tasks; a 4000-byte task refused");
        s.stop().await;
    }
}

/// Anonymous callers are told apart by their address (issue "security:"
/// 4): against the real `serve` (anonymous on loopback), a client at
/// 127.0.0.2 holding its whole quota of concurrent tasks, and then its
/// whole request rate, leaves a client at 127.0.0.3 unaffected, while it
/// is itself refused with 429.
#[tokio::test]
async fn one_anonymous_address_cannot_take_the_quotas_of_another() {
    let serve = proc::Serve::start_with(
        "memory",
        &[
            "--max-active-tasks-per-principal",
            "2",
            "--rate-per-second",
            "0.001",
            "--rate-burst",
            "6",
        ],
    );
    let url = format!("{}/", serve.base());
    let from = |ip: [u8; 4]| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from(ip))
            .build()
            .unwrap()
    };
    let (a, b) = (from([127, 0, 0, 2]), from([127, 0, 0, 3]));
    let send = |client: &reqwest::Client, text: &str| {
        client
            .post(&url)
            .header("A2A-Version", "1.0")
            .json(
                &json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                "message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}]},
                "configuration": {"returnImmediately": true}}}),
            )
            .send()
    };
    let get = |client: &reqwest::Client| {
        client
            .post(&url)
            .header("A2A-Version", "1.0")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                          "params": {"id": "no-such-task"}}))
            .send()
    };
    let long = "/long 3600";

    // 127.0.0.2 starts its two hour-long tasks; the third is refused.
    for i in 0..2 {
        let r: Value = send(&a, long).await.unwrap().json().await.unwrap();
        assert!(r["result"]["task"]["id"].is_string(), "a's task {i}: {r}");
    }
    let r = send(&a, long).await.unwrap();
    assert_eq!(r.status(), 429);
    assert_error_says(r, "concurrent tasks").await;
    // 127.0.0.3 is another caller: its quota is its own.
    let r: Value = send(&b, long).await.unwrap().json().await.unwrap();
    assert!(r["result"]["task"]["id"].is_string(), "b's task: {r}");

    // 127.0.0.2 has used 3 of its 6 requests; 3 more, then 429 with
    // Retry-After, while 127.0.0.3 (1 used) still gets through.
    for _ in 0..3 {
        let r = get(&a).await.unwrap();
        assert_ne!(r.status(), 429, "{:?}", r.text().await);
    }
    let r = get(&a).await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
    assert_error_says(r, "request rate").await;
    let r: Value = send(&b, "hi").await.unwrap().json().await.unwrap();
    assert!(
        r.get("result").is_some(),
        "b is not limited by a's rate: {r}"
    );
}
