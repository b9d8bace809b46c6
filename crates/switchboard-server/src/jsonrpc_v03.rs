//! The A2A 0.3 JSON-RPC dialect on the same endpoint as 1.0.
//!
//! A request whose method is a 0.3 name (`message/send`, `message/stream`,
//! `tasks/get`, `tasks/cancel`, `tasks/resubscribe`,
//! `tasks/pushNotificationConfig/{set,get,list,delete}`,
//! `agent/getAuthenticatedExtendedCard`) lands here after the common checks
//! in [`crate::jsonrpc`]. Its params are decoded as 0.3 types, converted to
//! the 1.0 request, handled by the same `RequestHandler`, and the answer is
//! converted back: results are bare `kind`-tagged objects, stream items
//! carry `final`. Error codes are the same numbers in both versions, so
//! errors keep their 1.0 body (0.3 left `data` free-form).
//!
//! 0.3 has no tenant: these calls always act in the default tenant. It has
//! no ListTasks either. `tasks/pushNotificationConfig/get` without
//! `pushNotificationConfigId` returns the task's first config, as 0.3
//! servers did when a task had one config.
//!
//! The call runs with `CallContext::push_payload` = `TaskSnapshot`, so push
//! configs created here (`tasks/pushNotificationConfig/set`, or inline in
//! `message/send`/`message/stream`) are notified with the task as of each
//! event, which the push worker sends as the 0.3 `Task` (see
//! `switchboard_core::push`). Configs read back the same over either version.

use serde_json::Value;
use switchboard_core::CallContext;
use switchboard_core::push::PayloadKind;
use switchboard_protocol::jsonrpc::JsonRpcRequest;
use switchboard_protocol::v03::rpc;
use switchboard_protocol::{
    A2AError, GetExtendedAgentCardRequest, ListTaskPushNotificationConfigsRequest, Operation,
    SendMessageRequest, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use crate::AppState;
use crate::jsonrpc::{Reply, ok};

/// Most configs `tasks/pushNotificationConfig/list` gathers (0.3 has no paging).
const MAX_LISTED_CONFIGS: usize = 1000;

/// Decodes 0.3 params, runs the operation, encodes a 0.3 result.
pub(crate) async fn dispatch(
    app: &AppState,
    call: CallContext,
    rpc: &JsonRpcRequest,
) -> Result<Reply, A2AError> {
    let h = &app.handler;
    let id = &rpc.id;
    let call = call.with_push_payload(PayloadKind::TaskSnapshot);
    let op = Operation::from_v03_name(&rpc.method)
        .ok_or_else(|| A2AError::MethodNotFound(rpc.method.clone()))?;
    match op {
        Operation::SendMessage => {
            let p: rpc::MessageSendParams = rpc.params()?;
            let resp = h.send_message(&call, SendMessageRequest::from(p)).await?;
            ok(id, &rpc::Event::from(resp))
        }
        Operation::SendStreamingMessage => {
            let p: rpc::MessageSendParams = rpc.params()?;
            let stream = h
                .send_streaming_message(&call, SendMessageRequest::from(p))
                .await?;
            Ok(Reply::Stream03(stream))
        }
        Operation::GetTask => {
            let p: rpc::TaskQueryParams = rpc.params()?;
            ok(id, &rpc::Event::task(h.get_task(&call, p.into()).await?))
        }
        Operation::CancelTask => {
            let p: rpc::TaskIdParams = rpc.params()?;
            ok(id, &rpc::Event::task(h.cancel_task(&call, p.into()).await?))
        }
        Operation::SubscribeToTask => {
            let p: rpc::TaskIdParams = rpc.params()?;
            Ok(Reply::Stream03(h.subscribe_to_task(&call, p.into()).await?))
        }
        Operation::CreateTaskPushNotificationConfig => {
            let p: rpc::TaskPushNotificationConfig = rpc.params()?;
            if p.task_id.is_empty() {
                return Err(A2AError::invalid_field("taskId", "must not be empty"));
            }
            let created = h
                .create_push_config(&call, TaskPushNotificationConfig::from(p))
                .await?;
            ok(id, &rpc::TaskPushNotificationConfig::from(created))
        }
        Operation::GetTaskPushNotificationConfig => {
            let p: rpc::PushConfigParams = rpc.params()?;
            let config = match p.push_notification_config_id {
                Some(cid) if !cid.is_empty() => {
                    h.get_push_config(&call, push_ref(p.id, cid)).await?
                }
                _ => all_configs(app, &call, &p.id)
                    .await?
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        A2AError::invalid_params(format!(
                            "task {} has no push notification config",
                            p.id
                        ))
                    })?,
            };
            ok(id, &rpc::TaskPushNotificationConfig::from(config))
        }
        Operation::ListTaskPushNotificationConfigs => {
            let p: rpc::TaskIdParams = rpc.params()?;
            let configs: Vec<rpc::TaskPushNotificationConfig> = all_configs(app, &call, &p.id)
                .await?
                .into_iter()
                .map(Into::into)
                .collect();
            ok(id, &configs)
        }
        Operation::DeleteTaskPushNotificationConfig => {
            let p: rpc::PushConfigParams = rpc.params()?;
            let cid = p
                .push_notification_config_id
                .filter(|c| !c.is_empty())
                .ok_or_else(|| {
                    A2AError::invalid_field("pushNotificationConfigId", "is required")
                })?;
            h.delete_push_config(&call, push_ref(p.id, cid)).await?;
            ok(id, &Value::Null)
        }
        Operation::GetExtendedAgentCard => {
            let card = h
                .get_extended_agent_card(&call, GetExtendedAgentCardRequest { tenant: None })
                .await?;
            ok(id, &switchboard_protocol::v03::card::hybrid_card(&card))
        }
        // Not reached: 0.3 names no such method.
        // Operations A2A 0.3 does not have: ListTasks and every operation
        // added after 0.3 (the table gives them no 0.3 name, so
        // `from_v03_name` never yields them; 0.3 gains no operations).
        _ => Err(A2AError::MethodNotFound(rpc.method.clone())),
    }
}

fn push_ref(task_id: String, id: String) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: None,
        task_id,
        id,
    }
}

/// Every config of a task, page by page (0.3 lists without paging).
pub(crate) async fn all_configs(
    app: &AppState,
    call: &CallContext,
    task_id: &str,
) -> Result<Vec<TaskPushNotificationConfig>, A2AError> {
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let page = app
            .handler
            .list_push_configs(
                call,
                ListTaskPushNotificationConfigsRequest {
                    tenant: None,
                    task_id: task_id.to_string(),
                    page_size: None,
                    page_token: token,
                },
            )
            .await?;
        out.extend(page.configs);
        if page.next_page_token.is_empty() || out.len() >= MAX_LISTED_CONFIGS {
            return Ok(out);
        }
        token = Some(page.next_page_token);
    }
}
