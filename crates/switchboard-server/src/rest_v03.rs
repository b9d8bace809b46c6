//! The A2A 0.3 HTTP+JSON routes (`/v1/...`, optionally `/{tenant}/v1/...`).
//!
//! Routing, body limits, content type, extensions and errors are shared
//! with the 1.0 routes in [`crate::rest`]; this module only decodes the 0.3
//! bodies (ProtoJSON of the 0.3 proto, see `switchboard_protocol::v03::rest`)
//! and encodes the 0.3 answers:
//!
//! | operation | route | body / query | answer |
//! |---|---|---|---|
//! | send | `POST /v1/message:send` | SendMessageRequest (0.3: `message`/`request`, `content` parts) | `{task}` or `{message}` |
//! | stream | `POST /v1/message:stream` | same | SSE of `{task|message|statusUpdate|artifactUpdate}` (status updates carry `final`) |
//! | get | `GET /v1/tasks/{id}` | `historyLength` | Task |
//! | cancel | `POST /v1/tasks/{id}:cancel` | ignored | Task |
//! | subscribe | `GET`/`POST /v1/tasks/{id}:subscribe` | — | SSE |
//! | push create | `POST /v1/tasks/{id}/pushNotificationConfigs` | CreateTaskPushNotificationConfigRequest (`{config: ..}`), a TaskPushNotificationConfig or a bare PushNotificationConfig | TaskPushNotificationConfig (`name` = `tasks/{id}/pushNotificationConfigs/{cid}`) |
//! | push get | `GET /v1/tasks/{id}/pushNotificationConfigs/{cid}` | — | TaskPushNotificationConfig |
//! | push list | `GET /v1/tasks/{id}/pushNotificationConfigs` | `pageSize`, `pageToken` | `{configs, nextPageToken}` |
//! | push delete | `DELETE /v1/tasks/{id}/pushNotificationConfigs/{cid}` | — | `{}` |
//! | extended card | `GET /v1/card` | — | the card with the 0.3 fields merged in |
//!
//! Errors keep the Google error JSON with the status from the error table:
//! a2a-python 0.3 answered `{"message": ..}` with a status code, and its
//! client reads only the status, which is the same.
//!
//! Push configs created here are 0.3 configs: their notifications carry the
//! 0.3 `Task` (see `switchboard_core::push`).

use serde_json::{Map, Value};
use switchboard_core::CallContext;
use switchboard_core::push::PayloadKind;
use switchboard_protocol::v03::rest as r03;
use switchboard_protocol::v03::rpc::PushNotificationConfig;
use switchboard_protocol::{
    A2AError, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, Operation, SendMessageRequest, SubscribeToTaskRequest,
    TaskPushNotificationConfigRef,
};

use crate::AppState;
use crate::rest::{Input, Reply, Route, ok, request_map, strip_position};

/// Decodes the 0.3 request of the route and calls the matching handler method.
pub(crate) async fn dispatch(
    app: &AppState,
    call: &CallContext,
    route: &Route,
    input: &Input<'_>,
) -> Result<Reply, A2AError> {
    let h = &app.handler;
    let tenant = (!input.tenant.is_empty()).then(|| input.tenant.to_string());
    // Push configs made here are notified with the task, which is what 0.3
    // receivers expect (see `switchboard_core::push`).
    let call = &call.clone().with_push_payload(PayloadKind::TaskSnapshot);
    match route.op {
        Operation::SendMessage => {
            let req = send_request(input)?;
            ok(&r03::StreamResponse::from(h.send_message(call, req).await?))
        }
        Operation::SendStreamingMessage => {
            let req = send_request(input)?;
            Ok(Reply::Stream03(h.send_streaming_message(call, req).await?))
        }
        Operation::GetTask => {
            let req: GetTaskRequest = decode(Value::Object(request_map(route, input)?))?;
            ok(&r03::Task::from(h.get_task(call, req).await?))
        }
        Operation::CancelTask => {
            // The 0.3 body only repeats the resource name; the path decides.
            let req = CancelTaskRequest {
                tenant,
                id: route.field("id"),
                metadata: None,
            };
            ok(&r03::Task::from(h.cancel_task(call, req).await?))
        }
        Operation::SubscribeToTask => {
            let req = SubscribeToTaskRequest {
                tenant,
                id: route.field("id"),
            };
            Ok(Reply::Stream03(h.subscribe_to_task(call, req).await?))
        }
        Operation::CreateTaskPushNotificationConfig => {
            let mut config = push_config_body(input)?.into_v10(Some(route.field("taskId")));
            config.tenant = tenant;
            ok(&r03::TaskPushNotificationConfig::from(
                h.create_push_config(call, config).await?,
            ))
        }
        Operation::GetTaskPushNotificationConfig => {
            let req = push_ref(route, tenant);
            ok(&r03::TaskPushNotificationConfig::from(
                h.get_push_config(call, req).await?,
            ))
        }
        Operation::ListTaskPushNotificationConfigs => {
            let req: ListTaskPushNotificationConfigsRequest =
                decode(Value::Object(request_map(route, input)?))?;
            let page = h.list_push_configs(call, req).await?;
            ok(&r03::ListTaskPushNotificationConfigResponse {
                configs: page.configs.into_iter().map(Into::into).collect(),
                next_page_token: page.next_page_token,
            })
        }
        Operation::DeleteTaskPushNotificationConfig => {
            h.delete_push_config(call, push_ref(route, tenant)).await?;
            ok(&serde_json::json!({}))
        }
        Operation::GetExtendedAgentCard => {
            let card = h
                .get_extended_agent_card(call, GetExtendedAgentCardRequest { tenant })
                .await?;
            ok(&switchboard_protocol::v03::card::hybrid_card(&card))
        }
        // The router never makes these for `/v1`: operations without a 0.3
        // name in the table (ListTasks, and every operation added after 0.3;
        // 0.3 gains no operations).
        other => Err(A2AError::MethodNotFound(format!(
            "A2A 0.3 has no {other} operation"
        ))),
    }
}

fn push_ref(route: &Route, tenant: Option<String>) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant,
        task_id: route.field("taskId"),
        id: route.field("id"),
    }
}

fn body_object(input: &Input<'_>) -> Result<Map<String, Value>, A2AError> {
    if input.body.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(input.body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(A2AError::invalid_field("body", "must be a JSON object")),
        Err(e) => Err(A2AError::Parse(strip_position(&e.to_string()))),
    }
}

fn decode<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, A2AError> {
    serde_json::from_value(v).map_err(|e| A2AError::invalid_params(strip_position(&e.to_string())))
}

fn send_request(input: &Input<'_>) -> Result<SendMessageRequest, A2AError> {
    let body: r03::SendMessageRequest03 = decode(Value::Object(body_object(input)?))?;
    let mut req = SendMessageRequest::from(body);
    req.tenant = (!input.tenant.is_empty()).then(|| input.tenant.to_string());
    Ok(req)
}

/// The config in a create body: `{config: {pushNotificationConfig}}` (the
/// proto request), `{pushNotificationConfig}` or the bare config.
fn push_config_body(input: &Input<'_>) -> Result<PushNotificationConfig, A2AError> {
    let mut obj = body_object(input)?;
    if let Some(Value::Object(inner)) = obj.remove("config") {
        obj = inner;
    }
    let cfg = obj
        .remove("pushNotificationConfig")
        .or_else(|| obj.remove("push_notification_config"))
        .unwrap_or(Value::Object(obj));
    decode(cfg)
}
