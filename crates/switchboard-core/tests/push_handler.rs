//! Push notifications in the engine: the in-memory store passes the
//! `PushStore` conformance suite, and the handler's four config operations
//! and the inline config of SendMessage follow the protocol rules
//! (validation, scoping, limits, queued notifications from the first event).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use switchboard_core::push::{PushConfigLimits, PushStore, conformance};
use switchboard_core::store::conformance::fixtures::log_of;
use switchboard_core::{CallContext, InMemoryStore, RequestHandler, agent_fn};
use switchboard_protocol::{
    A2AError, AgentCard, AuthenticationInfo, ListTaskPushNotificationConfigsRequest, Message,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

#[tokio::test]
async fn memory_store_conforms() {
    switchboard_core::push::conformance::run_all(&InMemoryStore::new()).await;
}

fn handler(push: Option<Arc<InMemoryStore>>) -> RequestHandler {
    let agent = agent_fn(|ctx, events| async move {
        if ctx.text() == "reply" {
            events.reply_text("hi").await?;
            return Ok(());
        }
        events.working("w").await?;
        events.artifact_text("out", "x").await?;
        Ok(())
    });
    let mut b = RequestHandler::builder(agent, AgentCard::new("t", "t", "1"));
    if let Some(store) = push {
        let limits = PushConfigLimits {
            max_configs_per_task: 2,
            allow_hosts: vec!["127.0.0.1".into()],
            ..Default::default()
        };
        b = b.store(store.clone()).push(store, limits);
    }
    b.build()
}

fn send(text: &str, push: Option<TaskPushNotificationConfig>) -> SendMessageRequest {
    SendMessageRequest {
        tenant: None,
        message: Message::user_text(text),
        configuration: Some(SendMessageConfiguration {
            task_push_notification_config: push,
            ..Default::default()
        }),
        metadata: None,
    }
}

fn cfg(task: &str, url: &str) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: None,
        id: None,
        task_id: Some(task.into()),
        url: url.into(),
        token: Some("tok".into()),
        authentication: Some(AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: Some("c".into()),
        }),
    }
}

async fn new_task(h: &RequestHandler) -> String {
    match h
        .send_message(&CallContext::anonymous(), send("go", None))
        .await
        .unwrap()
    {
        SendMessageResponse::Task(t) => t.id,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn is_invalid(e: &A2AError, needle: &str) -> bool {
    e.code() == -32602 && e.to_string().contains(needle)
}

#[tokio::test]
async fn without_a_push_store_everything_is_unsupported() {
    let h = handler(None);
    assert!(!h.push_enabled());
    let call = CallContext::anonymous();
    let err = h
        .create_push_config(&call, cfg("t", "https://example.com/h"))
        .await
        .unwrap_err();
    assert_eq!(err, A2AError::PushNotificationNotSupported);
    let err = h
        .send_message(&call, send("go", Some(cfg("", "https://example.com/h"))))
        .await
        .unwrap_err();
    assert_eq!(err, A2AError::PushNotificationNotSupported);
}

#[tokio::test]
async fn config_operations_validate_scope_and_limit() {
    let store = Arc::new(InMemoryStore::new());
    let h = handler(Some(store.clone()));
    assert!(h.push_enabled());
    let call = CallContext::anonymous();
    let task = new_task(&h).await;

    // Validation.
    for (url, needle) in [
        ("", "url: is required"),
        ("/relative", "not an absolute URL"),
        ("ftp://example.com/x", "must use http or https"),
        ("https://user:pw@example.com/", "must not carry credentials"),
        ("http://10.1.2.3/hook", "private address"),
        ("http://localhost:9/hook", "loopback name"),
        ("http://[::1]:9/hook", "IPv6 loopback"),
        ("http://169.254.169.254/latest", "metadata"),
    ] {
        let err = h
            .create_push_config(&call, cfg(&task, url))
            .await
            .unwrap_err();
        assert!(is_invalid(&err, needle), "{url}: {err}");
    }
    let err = h
        .create_push_config(&call, cfg(&task, "http://10.1.2.3/hook"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("--push-allow-host"), "{err}");
    let mut bad_auth = cfg(&task, "https://example.com/h");
    bad_auth.authentication = Some(AuthenticationInfo {
        scheme: " ".into(),
        credentials: None,
    });
    let err = h.create_push_config(&call, bad_auth).await.unwrap_err();
    assert!(is_invalid(&err, "authentication.scheme"), "{err}");
    let mut injected = cfg(&task, "https://example.com/h");
    injected.token = Some("a\r\nX-Evil: 1".into());
    let err = h.create_push_config(&call, injected).await.unwrap_err();
    assert!(is_invalid(&err, "token"), "{err}");
    let mut missing = cfg("", "https://example.com/h");
    missing.task_id = None;
    let err = h.create_push_config(&call, missing).await.unwrap_err();
    assert!(is_invalid(&err, "taskId"), "{err}");

    // Unknown and foreign tasks.
    let err = h
        .create_push_config(&call, cfg("nope", "https://example.com/h"))
        .await
        .unwrap_err();
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{err}");
    let other = CallContext::anonymous().with_tenant("other");
    let err = h
        .create_push_config(&other, cfg(&task, "https://example.com/h"))
        .await
        .unwrap_err();
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{err}");

    // Create (server id), allowlisted loopback, get, list, limit, delete.
    let a = h
        .create_push_config(&call, cfg(&task, "https://example.com/a"))
        .await
        .unwrap();
    let a_id = a.id.clone().expect("server-assigned id");
    assert_eq!(a.task_id.as_deref(), Some(task.as_str()));
    let mut b = cfg(&task, "http://127.0.0.1:1/b");
    b.id = Some("mine".into());
    let b = h.create_push_config(&call, b).await.unwrap();
    assert_eq!(b.id.as_deref(), Some("mine"));
    let err = h
        .create_push_config(&call, cfg(&task, "https://example.com/c"))
        .await
        .unwrap_err();
    assert!(
        is_invalid(&err, "already has 2 push notification configs"),
        "{err}"
    );
    let got = h
        .get_push_config(
            &call,
            TaskPushNotificationConfigRef {
                tenant: None,
                task_id: task.clone(),
                id: a_id.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(got, a);
    // One config a page.
    let page = |page_token| ListTaskPushNotificationConfigsRequest {
        tenant: None,
        task_id: task.clone(),
        page_size: Some(1),
        page_token,
    };
    let page1 = h.list_push_configs(&call, page(None)).await.unwrap();
    assert_eq!(page1.configs, vec![a.clone()]);
    assert!(!page1.next_page_token.is_empty());
    let page2 = h
        .list_push_configs(&call, page(Some(page1.next_page_token)))
        .await
        .unwrap();
    assert_eq!(page2.configs, vec![b.clone()]);
    assert_eq!(page2.next_page_token, "");
    let r = |id: &str| TaskPushNotificationConfigRef {
        tenant: None,
        task_id: task.clone(),
        id: id.into(),
    };
    h.delete_push_config(&call, r("mine")).await.unwrap();
    h.delete_push_config(&call, r("mine")).await.unwrap();
    let err = h.get_push_config(&call, r("mine")).await.unwrap_err();
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{err}");
    let err = h.get_push_config(&other, r(&a_id)).await.unwrap_err();
    assert!(matches!(err, A2AError::TaskNotFound(_)), "{err}");
}

#[tokio::test]
async fn inline_config_gets_the_first_event() {
    let store = Arc::new(InMemoryStore::new());
    let h = handler(Some(store.clone()));
    let call = CallContext::anonymous();
    let resp = h
        .send_message(
            &call,
            send("go", Some(cfg("", "https://example.com/inline"))),
        )
        .await
        .unwrap();
    let SendMessageResponse::Task(task) = resp else {
        panic!("expected a task")
    };
    let log = log_of(&*store, "", &task.id).await;
    let seqs: Vec<u64> = conformance::drain(&*store)
        .await
        .iter()
        .map(|i| i.seq)
        .collect();
    assert_eq!(
        seqs,
        log.iter().map(|e| e.seq).collect::<Vec<_>>(),
        "every event, from the Task-created one on, was queued in order"
    );
    assert!(matches!(log[0].event, StreamResponse::Task(_)));

    // A direct reply creates no task, and leaves no config behind.
    let resp = h
        .send_message(&call, send("reply", Some(cfg("", "https://example.com/x"))))
        .await
        .unwrap();
    assert!(matches!(resp, SendMessageResponse::Message(_)));
    assert_eq!(store.pending_count().await.unwrap(), 0);

    // Invalid inline configs are refused before anything runs.
    let err = h
        .send_message(&call, send("go", Some(cfg("", "http://192.168.1.1/"))))
        .await
        .unwrap_err();
    assert!(
        is_invalid(&err, "configuration.taskPushNotificationConfig.url"),
        "{err}"
    );
}
