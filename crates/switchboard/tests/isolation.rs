//! Issue 21's isolation matrix: two tenants × two principals, each owning
//! a task and a push config, and every operation that names a task, a
//! context or a config tried by every *other* principal, on every binding
//! (JSON-RPC, REST, gRPC) in both protocol versions (1.0, 0.3), through our
//! client over loopback against a real server with API keys.
//!
//! A cross access must be refused as TaskNotFound (the task's existence is
//! not revealed) or as an authentication/authorization error, and must
//! change nothing; the owner's own accesses must succeed. A contextId is
//! scoped like a task: another principal naming it starts a conversation of
//! its own, and sees nothing of the owner's. The tenant comes from the
//! credential: naming another tenant (the REST path prefix, the `tenant`
//! field) is refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod util;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use switchboard_auth::{ApiKeys, Schemes, hash_api_key};
use switchboard_client::{A2AClient, ClientError};
use switchboard_core::{
    BoxError, InMemoryStore, PushConfigLimits, RequestContext, RequestHandler, TaskEvents, agent_fn,
};
use switchboard_protocol::error::{PERMISSION_DENIED_CODE, UNAUTHENTICATED_CODE};
use switchboard_protocol::{
    A2AError, AgentCard, AgentSkill, GetTaskRequest, ListTasksRequest, Message,
    SendMessageResponse, Task, TaskPushNotificationConfig, TaskState,
};
use util::{COMBOS, TestServer};

/// (API key, tenant, principal name).
const PRINCIPALS: [(&str, &str, &str); 4] = [
    ("sb_alice-key", "t1", "alice"),
    ("sb_bob-key", "t1", "bob"),
    ("sb_carol-key", "t2", "carol"),
    ("sb_dave-key", "t2", "dave"),
];

/// Every message leaves the task waiting for input, so tasks stay open for
/// cancel, subscribe and follow-ups.
fn agent() -> impl switchboard_core::AgentExecutor {
    agent_fn(|ctx: RequestContext, events: TaskEvents| async move {
        events
            .ask(format!("you said {:?}; anything else?", ctx.text()))
            .await?;
        Ok::<(), BoxError>(())
    })
}

fn card() -> AgentCard {
    let mut card = AgentCard::new("isolation", "Asks for more, always.", "1.0.0")
        .with_streaming(true)
        .with_skill(AgentSkill::new("ask", "Ask", "Asks", &["ask"]));
    card.capabilities.push_notifications = Some(true);
    card
}

/// An administrator of tenant t1 (`;admin` on its key).
const ROOT: (&str, &str, &str) = ("sb_root-key", "t1", "root");

async fn server() -> TestServer {
    let mut keys = ApiKeys::new();
    for (key, tenant, name) in PRINCIPALS {
        keys = keys
            .key(&hash_api_key(key), name, Some(tenant), false)
            .unwrap();
    }
    keys = keys
        .key(&hash_api_key(ROOT.0), ROOT.2, Some(ROOT.1), true)
        .unwrap();
    let store = Arc::new(InMemoryStore::new());
    let limits = PushConfigLimits {
        allow_hosts: vec!["127.0.0.1".into()],
        ..PushConfigLimits::default()
    };
    let handler = RequestHandler::builder(agent(), card())
        .store(store.clone())
        .push(store, limits)
        .build();
    TestServer::start_with(|s| s.authenticator(Schemes::new().with(keys)), handler).await
}

async fn client(base: &str, combo: (&str, &str), key: &str) -> A2AClient {
    let c = A2AClient::builder()
        .preferred_bindings([combo.0])
        .preferred_versions([combo.1])
        .timeout(Duration::from_secs(20))
        .no_reconnect()
        .header("x-api-key", key)
        .connect(base)
        .await
        .unwrap();
    assert_eq!(
        (
            c.interface().protocol_binding.as_str(),
            c.interface().protocol_version.as_str()
        ),
        combo
    );
    c
}

/// What one principal owns in one combination.
struct Owned {
    task: Task,
    config_id: String,
}

fn task_of(r: SendMessageResponse, what: &str) -> Task {
    match r {
        SendMessageResponse::Task(t) => t,
        other => panic!("{what}: not a task: {other:?}"),
    }
}

/// A refusal that reveals nothing: TaskNotFound, or the gate's errors.
fn assert_refused<T: std::fmt::Debug>(r: Result<T, ClientError>, what: &str) {
    match r {
        Err(ClientError::Protocol(A2AError::TaskNotFound(_))) => {}
        Err(e)
            if matches!(
                e.code(),
                Some(UNAUTHENTICATED_CODE | PERMISSION_DENIED_CODE)
            ) => {}
        other => panic!("{what}: a cross access was not refused: {other:?}"),
    }
}

fn push_config(task_id: &str, id: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: None,
        id: Some(id.into()),
        task_id: Some(task_id.into()),
        url: "http://127.0.0.1:9/hook".into(),
        token: None,
        authentication: None,
    }
}

/// Opens a subscription and returns its first item (or the error).
async fn first_of_subscription(c: &A2AClient, id: &str) -> Result<Task, ClientError> {
    let mut stream = c.subscribe_to_task(id).await?;
    match stream.next().await {
        Some(Ok(ev)) => match ev.event {
            switchboard_protocol::StreamResponse::Task(t) => Ok(t),
            other => panic!("subscription began with {other:?}"),
        },
        Some(Err(e)) => Err(e),
        None => panic!("subscription ended without an item"),
    }
}

#[derive(Default)]
struct Counts {
    refused: usize,
    isolated_contexts: usize,
    own_ok: usize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cross_access_is_refused_on_every_binding_and_version() {
    let s = server().await;
    let mut n = Counts::default();
    for combo in COMBOS {
        let v10 = combo.1 == "1.0";
        let mut clients = Vec::new();
        for (key, tenant, name) in PRINCIPALS {
            clients.push((name, tenant, client(&s.base, combo, key).await));
        }
        // Each principal opens a task and registers a webhook on it.
        let mut owned = Vec::new();
        for (name, _, c) in &clients {
            let what = format!("{combo:?} {name}");
            let task = task_of(c.send_text(format!("{name} here")).await.unwrap(), &what);
            assert_eq!(task.status.state, TaskState::InputRequired, "{what}");
            let config_id = format!("{name}-hook");
            let created = c
                .create_push_config(push_config(&task.id, &config_id))
                .await
                .unwrap();
            assert_eq!(created.id.as_deref(), Some(config_id.as_str()), "{what}");
            n.own_ok += 2;
            owned.push(Owned { task, config_id });
        }

        for (o, owner) in owned.iter().zip(&clients) {
            let (id, ctx) = (o.task.id.as_str(), o.task.context_id.as_str());
            for (other, other_tenant, c) in clients.iter().filter(|c| c.0 != owner.0) {
                let what = format!("{combo:?} {other} on {}'s task", owner.0);
                assert_refused(c.get_task(id).await, &format!("{what}: GetTask"));
                assert_refused(c.cancel_task(id).await, &format!("{what}: CancelTask"));
                assert_refused(
                    first_of_subscription(c, id).await,
                    &format!("{what}: SubscribeToTask"),
                );
                let follow_up = Message::user_text("let me in").with_task_id(id);
                assert_refused(
                    c.send_message(follow_up).await,
                    &format!("{what}: SendMessage with its taskId"),
                );
                let both = Message::user_text("let me in")
                    .with_task_id(id)
                    .with_context_id(ctx);
                assert_refused(
                    c.send_message(both).await,
                    &format!("{what}: SendMessage with its taskId and contextId"),
                );
                assert_refused(
                    c.create_push_config(push_config(id, "intruder")).await,
                    &format!("{what}: CreateTaskPushNotificationConfig"),
                );
                assert_refused(
                    c.get_push_config((id, o.config_id.as_str())).await,
                    &format!("{what}: GetTaskPushNotificationConfig"),
                );
                assert_refused(
                    c.list_push_configs(id).await,
                    &format!("{what}: ListTaskPushNotificationConfigs"),
                );
                assert_refused(
                    c.delete_push_config((id, o.config_id.as_str())).await,
                    &format!("{what}: DeleteTaskPushNotificationConfig"),
                );
                n.refused += 9;

                // The owner's contextId: a conversation of the caller's own,
                // showing nothing of the owner's.
                let mine = task_of(
                    c.send_message(Message::user_text("same context?").with_context_id(ctx))
                        .await
                        .unwrap(),
                    &what,
                );
                assert_ne!(mine.id, o.task.id, "{what}");
                let history = mine.history.clone().unwrap_or_default();
                assert!(
                    history
                        .iter()
                        .all(|m| m.task_id.as_deref() == Some(&mine.id)),
                    "{what}: foreign messages in {history:?}"
                );
                // Closed again, so later own accesses see the same tasks.
                c.cancel_task(mine.id.as_str()).await.unwrap();
                n.isolated_contexts += 1;

                if v10 {
                    // ListTasks (0.3 has none): never another's task, with
                    // or without the owner's contextId.
                    let all = c.list_tasks(ListTasksRequest::default()).await.unwrap();
                    assert!(
                        all.tasks.iter().all(|t| t.id != id),
                        "{what}: ListTasks shows it"
                    );
                    let by_ctx = c
                        .list_tasks(ListTasksRequest {
                            context_id: Some(ctx.into()),
                            ..Default::default()
                        })
                        .await
                        .unwrap();
                    assert!(
                        by_ctx.tasks.iter().all(|t| t.id != id),
                        "{what}: ListTasks by contextId shows it"
                    );
                    assert_eq!(by_ctx.tasks.len(), 1, "{what}: only the caller's own");
                    n.refused += 2;

                    // The tenant comes from the credential: naming the
                    // owner's tenant (REST: the path prefix) is refused.
                    let owner_tenant = owner.1;
                    if owner_tenant != *other_tenant {
                        let r = c
                            .get_task(GetTaskRequest {
                                tenant: Some(owner_tenant.into()),
                                id: id.into(),
                                history_length: None,
                            })
                            .await;
                        assert_refused(r, &format!("{what}: GetTask naming tenant {owner_tenant}"));
                        let r = c
                            .list_tasks(ListTasksRequest {
                                tenant: Some(owner_tenant.into()),
                                ..Default::default()
                            })
                            .await;
                        assert_refused(
                            r,
                            &format!("{what}: ListTasks naming tenant {owner_tenant}"),
                        );
                        n.refused += 2;
                    }
                }
            }
        }

        // Nothing the others tried changed anything, and every own access
        // works.
        for (o, (name, _, c)) in owned.iter().zip(&clients) {
            let what = format!("{combo:?} {name} on its own task");
            let id = o.task.id.as_str();
            let got = c.get_task(id).await.unwrap();
            assert_eq!(got.status.state, TaskState::InputRequired, "{what}");
            assert_eq!(
                got.history.as_ref().map(Vec::len),
                o.task.history.as_ref().map(Vec::len),
                "{what}: no foreign messages"
            );
            let cfg = c.get_push_config((id, o.config_id.as_str())).await.unwrap();
            assert_eq!(cfg.id.as_deref(), Some(o.config_id.as_str()), "{what}");
            let list = c.list_push_configs(id).await.unwrap();
            let ids: Vec<_> = list.configs.iter().filter_map(|c| c.id.clone()).collect();
            assert_eq!(ids, vec![o.config_id.clone()], "{what}: no intruder config");
            let first = first_of_subscription(c, id).await.unwrap();
            assert_eq!(first.id, o.task.id, "{what}");
            let again = task_of(
                c.send_message(
                    Message::user_text("more")
                        .with_task_id(id)
                        .with_context_id(o.task.context_id.as_str()),
                )
                .await
                .unwrap(),
                &what,
            );
            assert_eq!(again.id, o.task.id, "{what}");
            n.own_ok += 5;
            if v10 {
                let mine = c.list_tasks(ListTasksRequest::default()).await.unwrap();
                assert!(mine.tasks.iter().any(|t| t.id == id), "{what}: ListTasks");
                n.own_ok += 1;
            }
            c.delete_push_config((id, o.config_id.as_str()))
                .await
                .unwrap();
            let canceled = c.cancel_task(id).await.unwrap();
            assert_eq!(canceled.status.state, TaskState::Canceled, "{what}");
            n.own_ok += 2;
        }
    }
    println!(
        "isolation: {} combinations, {} cross accesses refused, {} foreign contextIds isolated, {} own accesses ok",
        COMBOS.len(),
        n.refused,
        n.isolated_contexts,
        n.own_ok
    );
    // 4 principals × 3 others × 9 operations on 6 combinations, plus
    // ListTasks (2 each) on the three 1.0 ones and the tenant probes (2 for
    // each of the 8 cross-tenant pairs) there.
    assert_eq!(n.refused, 6 * 12 * 9 + 3 * (12 * 2 + 8 * 2));
    assert_eq!(n.isolated_contexts, 6 * 12);
    assert_eq!(n.own_ok, 6 * 4 * (2 + 5 + 2) + 3 * 4);
    s.stop().await;
}

/// An administrator (the admin flag of its credentials) gets, lists and
/// cancels every task of its own tenant, and nothing of another tenant's;
/// subscribing, follow-ups and push configs stay the owner's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_administrator_manages_its_tenant_only() {
    let s = server().await;
    let mut checks = 0;
    for combo in COMBOS {
        let v10 = combo.1 == "1.0";
        let what = format!("{combo:?}");
        let alice = client(&s.base, combo, PRINCIPALS[0].0).await;
        let bob = client(&s.base, combo, PRINCIPALS[1].0).await;
        let carol = client(&s.base, combo, PRINCIPALS[2].0).await;
        let root = client(&s.base, combo, ROOT.0).await;
        let a = task_of(alice.send_text("a").await.unwrap(), &what);
        let b = task_of(bob.send_text("b").await.unwrap(), &what);
        let c = task_of(carol.send_text("c").await.unwrap(), &what);

        // Its tenant's tasks, whoever owns them.
        assert_eq!(
            root.get_task(a.id.as_str()).await.unwrap().id,
            a.id,
            "{what}"
        );
        assert_eq!(
            root.get_task(b.id.as_str()).await.unwrap().id,
            b.id,
            "{what}"
        );
        checks += 2;
        if v10 {
            let listed = root.list_tasks(ListTasksRequest::default()).await.unwrap();
            let ids: Vec<&str> = listed.tasks.iter().map(|t| t.id.as_str()).collect();
            assert!(
                ids.contains(&a.id.as_str()) && ids.contains(&b.id.as_str()),
                "{what}: {ids:?}"
            );
            assert!(
                !ids.contains(&c.id.as_str()),
                "{what}: another tenant's task listed"
            );
            // Alice's own listing is still only hers.
            let hers = alice.list_tasks(ListTasksRequest::default()).await.unwrap();
            assert!(hers.tasks.iter().all(|t| t.id != b.id), "{what}");
            checks += 2;
        }
        let canceled = root.cancel_task(a.id.as_str()).await.unwrap();
        assert_eq!(canceled.status.state, TaskState::Canceled, "{what}");
        assert_eq!(
            alice.get_task(a.id.as_str()).await.unwrap().status.state,
            TaskState::Canceled,
            "{what}: the owner sees the administrator's cancel"
        );
        checks += 1;

        // Not another tenant's, by id or by naming the tenant.
        assert_refused(
            root.get_task(c.id.as_str()).await,
            &format!("{what}: GetTask in t2"),
        );
        assert_refused(
            root.cancel_task(c.id.as_str()).await,
            &format!("{what}: CancelTask in t2"),
        );
        checks += 2;
        if v10 {
            let r = root
                .get_task(GetTaskRequest {
                    tenant: Some("t2".into()),
                    id: c.id.clone(),
                    history_length: None,
                })
                .await;
            assert_refused(r, &format!("{what}: GetTask naming t2"));
            checks += 1;
        }
        // Only the owner streams, follows up and manages webhooks.
        assert_refused(
            first_of_subscription(&root, &b.id).await,
            &format!("{what}: subscribe"),
        );
        assert_refused(
            root.send_message(Message::user_text("x").with_task_id(b.id.as_str()))
                .await,
            &format!("{what}: follow-up"),
        );
        assert_refused(
            root.list_push_configs(b.id.as_str()).await,
            &format!("{what}: push configs"),
        );
        checks += 3;
        bob.cancel_task(b.id.as_str()).await.unwrap();
        carol.cancel_task(c.id.as_str()).await.unwrap();
    }
    println!("admin: {checks} checks over {} combinations", COMBOS.len());
    assert_eq!(checks, 6 * 8 + 3 * 3);
    s.stop().await;
}
