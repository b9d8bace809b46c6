//! A2A 0.3 for the client: the 1.0 ⇄ 0.3 translation used by the 0.3
//! transports (their factories are in the parent's `FACTORIES`). The 0.3 JSON-RPC transport is
//! `super::jsonrpc` in 0.3 mode, with [`to_v03`]/[`result_to_v10`]; the 0.3
//! REST transport is `super::rest` in 0.3 mode, with
//! [`rest_params`]/[`rest_result_to_v10`].
//!
//! The client above speaks 1.0 JSON (see the parent module). A 0.3
//! transport translates at the edge: [`to_v03`] turns a 1.0 method and its
//! params into the 0.3 method and params, [`result_to_v10`] turns a 0.3
//! result back into the 1.0 JSON the client decodes. Where 0.3 cannot say
//! something the conversion loses it as documented in
//! `switchboard_protocol::v03` (notably: no tenant, no ListTasks).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use switchboard_protocol::jsonrpc::methods as m10;
use switchboard_protocol::v03::rpc;
use switchboard_protocol::{
    A2AError, CancelTaskRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, Operation, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};

use crate::error::ClientError;

/// `true` for `0.3` and `0.3.x`.
pub(crate) fn is_v03(version: &str) -> bool {
    version == "0.3" || version.starts_with("0.3.")
}

fn decode<T: DeserializeOwned>(what: &str, v: Value) -> Result<T, ClientError> {
    serde_json::from_value(v).map_err(|e| ClientError::Decode(format!("{what}: {e}")))
}

fn encode<T: Serialize>(v: &T) -> Result<Value, ClientError> {
    serde_json::to_value(v).map_err(|e| ClientError::Config(format!("cannot serialize: {e}")))
}

fn raw<T: Serialize>(v: &T) -> Result<Box<RawValue>, ClientError> {
    serde_json::value::to_raw_value(v).map_err(|e| ClientError::Decode(e.to_string()))
}

/// The 0.3 JSON-RPC method (from the operation table) and params for a
/// 1.0 method and params.
pub(crate) fn to_v03(method: &str, params: Value) -> Result<(&'static str, Value), ClientError> {
    let name = Operation::from_name(method)
        .and_then(Operation::v03_name)
        .ok_or_else(|| {
            ClientError::Protocol(A2AError::UnsupportedOperation(format!(
                "{method} does not exist in A2A 0.3"
            )))
        })?;
    let params = match method {
        m10::SEND_MESSAGE | m10::SEND_STREAMING_MESSAGE => {
            down::<SendMessageRequest, rpc::MessageSendParams>(params)
        }
        m10::GET_TASK => down::<GetTaskRequest, rpc::TaskQueryParams>(params),
        m10::CANCEL_TASK => down::<CancelTaskRequest, rpc::TaskIdParams>(params),
        m10::SUBSCRIBE_TO_TASK => down::<SubscribeToTaskRequest, rpc::TaskIdParams>(params),
        m10::CREATE_PUSH_CONFIG => {
            down::<TaskPushNotificationConfig, rpc::TaskPushNotificationConfig>(params)
        }
        m10::GET_PUSH_CONFIG | m10::DELETE_PUSH_CONFIG => {
            down::<TaskPushNotificationConfigRef, rpc::PushConfigParams>(params)
        }
        m10::LIST_PUSH_CONFIGS => {
            down::<ListTaskPushNotificationConfigsRequest, rpc::TaskIdParams>(params)
        }
        // The extended card, the one other operation 0.3 has, takes no params.
        _ => Ok(json!({})),
    }?;
    Ok((name, params))
}

/// 1.0 params as the 0.3 params `P` they convert to.
fn down<R: DeserializeOwned, P: From<R> + Serialize>(params: Value) -> Result<Value, ClientError> {
    encode(&P::from(decode::<R>("params", params)?))
}

/// The 1.0 result JSON for the 0.3 result of a 1.0 `method`.
pub(crate) fn result_to_v10(method: &str, result: &RawValue) -> Result<Box<RawValue>, ClientError> {
    let v: Value = serde_json::from_str(result.get())
        .map_err(|e| ClientError::Decode(format!("{method} result: {e}")))?;
    match method {
        m10::SEND_MESSAGE => {
            let ev: rpc::Event = decode("message/send result", v)?;
            let resp = match StreamResponse::from(ev) {
                StreamResponse::Task(t) => SendMessageResponse::Task(t),
                StreamResponse::Message(m) => SendMessageResponse::Message(m),
                _ => {
                    return Err(ClientError::Decode(
                        "message/send answered with an update event".into(),
                    ));
                }
            };
            raw(&resp)
        }
        m10::SEND_STREAMING_MESSAGE | m10::SUBSCRIBE_TO_TASK => {
            let ev: rpc::Event = decode("stream item", v)?;
            raw(&StreamResponse::from(ev))
        }
        m10::GET_TASK | m10::CANCEL_TASK => {
            let ev: rpc::Event = decode("task", v)?;
            match StreamResponse::from(ev) {
                StreamResponse::Task(t) => raw(&t),
                _ => Err(ClientError::Decode(format!("{method}: expected a task"))),
            }
        }
        m10::CREATE_PUSH_CONFIG | m10::GET_PUSH_CONFIG => {
            let c: rpc::TaskPushNotificationConfig = decode("push config", v)?;
            raw(&TaskPushNotificationConfig::from(c))
        }
        m10::LIST_PUSH_CONFIGS => {
            let list: Vec<rpc::TaskPushNotificationConfig> = decode("push configs", v)?;
            raw(&ListTaskPushNotificationConfigsResponse {
                configs: list.into_iter().map(Into::into).collect(),
                next_page_token: String::new(),
            })
        }
        // Delete (null) and the card (a 0.3 or hybrid card reads as a 1.0
        // card; its unknown fields are ignored) pass through.
        _ => raw(&v),
    }
}

/// Rewrites 1.0 params into the 0.3 REST body fields (the tenant and the
/// path ids stay, for the router of `super::rest` to move into the path).
pub(crate) fn rest_params(method: &str, params: Value) -> Result<Value, ClientError> {
    use switchboard_protocol::v03::rest as r03;
    match method {
        m10::SEND_MESSAGE | m10::SEND_STREAMING_MESSAGE => {
            let req: SendMessageRequest = decode("params", params)?;
            let tenant = req.tenant.clone();
            let mut body = encode(&r03::SendMessageRequest03::from(req))?;
            if let (Some(t), Value::Object(m)) = (tenant, &mut body) {
                m.insert("tenant".into(), Value::String(t));
            }
            Ok(body)
        }
        m10::CREATE_PUSH_CONFIG => {
            let req: TaskPushNotificationConfig = decode("params", params)?;
            let cfg = rpc::PushNotificationConfig::from_v10(&req);
            let mut body = json!({"taskId": req.task_id, "pushNotificationConfig": cfg});
            if let (Some(t), Value::Object(m)) = (req.tenant, &mut body) {
                m.insert("tenant".into(), Value::String(t));
            }
            Ok(body)
        }
        m10::LIST_TASKS => Err(ClientError::Protocol(A2AError::UnsupportedOperation(
            format!("{method} does not exist in A2A 0.3"),
        ))),
        _ => Ok(params),
    }
}

/// The 1.0 result JSON for a 0.3 REST result of a 1.0 `method`.
pub(crate) fn rest_result_to_v10(
    method: &str,
    result: &RawValue,
) -> Result<Box<RawValue>, ClientError> {
    use switchboard_protocol::v03::rest as r03;
    let v: Value = serde_json::from_str(result.get())
        .map_err(|e| ClientError::Decode(format!("{method} result: {e}")))?;
    match method {
        m10::SEND_MESSAGE => {
            let r: r03::StreamResponse = decode("message:send result", v)?;
            match StreamResponse::from(r) {
                StreamResponse::Task(t) => raw(&SendMessageResponse::Task(t)),
                StreamResponse::Message(m) => raw(&SendMessageResponse::Message(m)),
                _ => Err(ClientError::Decode(
                    "message:send answered with an update event".into(),
                )),
            }
        }
        m10::SEND_STREAMING_MESSAGE | m10::SUBSCRIBE_TO_TASK => {
            let r: r03::StreamResponse = decode("stream item", v)?;
            raw(&StreamResponse::from(r))
        }
        m10::GET_TASK | m10::CANCEL_TASK => {
            let t: r03::Task = decode("task", v)?;
            raw(&switchboard_protocol::Task::from(t))
        }
        m10::CREATE_PUSH_CONFIG | m10::GET_PUSH_CONFIG => {
            let c: r03::TaskPushNotificationConfig = decode("push config", v)?;
            raw(&TaskPushNotificationConfig::from(c))
        }
        m10::LIST_PUSH_CONFIGS => {
            let l: r03::ListTaskPushNotificationConfigResponse = decode("push configs", v)?;
            raw(&ListTaskPushNotificationConfigsResponse {
                configs: l.configs.into_iter().map(Into::into).collect(),
                next_page_token: l.next_page_token,
            })
        }
        _ => raw(&v),
    }
}
