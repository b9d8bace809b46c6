//! Agents sharing one store, each in a namespace of its own
//! (`RequestHandlerBuilder::namespace`): one agent never finds, lists or
//! runs on another's tasks, and no caller names its way into a namespace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use switchboard_core::{CallContext, InMemoryStore, RequestHandler, TaskStore, agent_fn};
use switchboard_protocol::{
    A2AError, AgentCard, GetTaskRequest, ListTasksRequest, Message, SendMessageRequest,
    SendMessageResponse, TaskState,
};

fn agent(
    store: &Arc<dyn TaskStore>,
    name: &'static str,
    namespace: Option<&str>,
) -> RequestHandler {
    let agent = agent_fn(move |_ctx, events| async move {
        events.artifact_text("who", name).await?;
        Ok(())
    });
    let mut builder =
        RequestHandler::builder(agent, AgentCard::new(name, "test", "1")).store(store.clone());
    if let Some(ns) = namespace {
        builder = builder.namespace(ns);
    }
    builder.build()
}

async fn send(h: &RequestHandler, message: Message) -> Result<SendMessageResponse, A2AError> {
    h.send_message(&CallContext::anonymous(), SendMessageRequest::new(message))
        .await
}

fn get(id: &str) -> GetTaskRequest {
    GetTaskRequest {
        tenant: None,
        id: id.to_string(),
        history_length: None,
    }
}

#[tokio::test]
async fn agents_on_one_store_never_reach_each_others_tasks() {
    let store: Arc<dyn TaskStore> = Arc::new(InMemoryStore::new());
    let root = agent(&store, "root", None);
    let a = agent(&store, "a", Some("/a"));
    let b = agent(&store, "b", Some("/b"));
    let call = CallContext::anonymous();

    let SendMessageResponse::Task(task) = send(&a, Message::user_text("hi")).await.unwrap() else {
        panic!("a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(a.get_task(&call, get(&task.id)).await.unwrap().id, task.id);
    for other in [&b, &root] {
        let err = other.get_task(&call, get(&task.id)).await.unwrap_err();
        assert!(matches!(err, A2AError::TaskNotFound(_)), "{err:?}");
        let listed = other
            .list_tasks(&call, ListTasksRequest::default())
            .await
            .unwrap();
        assert!(listed.tasks.is_empty(), "{listed:?}");
        // A follow-up naming a's task never runs this agent on it.
        let err = send(
            other,
            Message::user_text("again").with_task_id(task.id.clone()),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, A2AError::TaskNotFound(_)), "{err:?}");
    }
    assert_eq!(
        a.list_tasks(&call, ListTasksRequest::default())
            .await
            .unwrap()
            .tasks
            .len(),
        1
    );

    // The namespace separator is nobody's tenant.
    let sneaky = CallContext::anonymous().with_tenant("/a\u{1f}");
    for h in [&root, &a, &b] {
        let err = h.get_task(&sneaky, get(&task.id)).await.unwrap_err();
        assert!(matches!(err, A2AError::InvalidParams { .. }), "{err:?}");
    }
}
