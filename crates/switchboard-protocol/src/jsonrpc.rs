//! JSON-RPC 2.0 envelopes and the A2A 1.0 method names.
//!
//! [`parse_request`] turns raw bytes into a [`JsonRpcRequest`] with the
//! parameters left as raw JSON, so the method decides how to decode them, and
//! classifies failures the JSON-RPC way: not JSON at all is -32700, JSON that
//! is not a request object is -32600.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::A2AError;

/// The 1.0 method names, which are the gRPC rpc names, as constants to
/// match on. The names themselves are the operation table's
/// ([`for_each_operation!`](crate::for_each_operation)).
pub mod methods {
    use crate::Operation;

    /// SendMessage.
    pub const SEND_MESSAGE: &str = Operation::SendMessage.name();
    /// SendStreamingMessage.
    pub const SEND_STREAMING_MESSAGE: &str = Operation::SendStreamingMessage.name();
    /// GetTask.
    pub const GET_TASK: &str = Operation::GetTask.name();
    /// ListTasks.
    pub const LIST_TASKS: &str = Operation::ListTasks.name();
    /// CancelTask.
    pub const CANCEL_TASK: &str = Operation::CancelTask.name();
    /// SubscribeToTask.
    pub const SUBSCRIBE_TO_TASK: &str = Operation::SubscribeToTask.name();
    /// CreateTaskPushNotificationConfig.
    pub const CREATE_PUSH_CONFIG: &str = Operation::CreateTaskPushNotificationConfig.name();
    /// GetTaskPushNotificationConfig.
    pub const GET_PUSH_CONFIG: &str = Operation::GetTaskPushNotificationConfig.name();
    /// ListTaskPushNotificationConfigs.
    pub const LIST_PUSH_CONFIGS: &str = Operation::ListTaskPushNotificationConfigs.name();
    /// DeleteTaskPushNotificationConfig.
    pub const DELETE_PUSH_CONFIG: &str = Operation::DeleteTaskPushNotificationConfig.name();
    /// GetExtendedAgentCard.
    pub const GET_EXTENDED_AGENT_CARD: &str = Operation::GetExtendedAgentCard.name();
}

/// A JSON-RPC request id: a string, a number or null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A string id.
    String(String),
    /// A numeric id (kept as JSON to preserve its exact form).
    Number(serde_json::Number),
    /// A null id (used in errors when the id could not be read).
    Null,
}

/// A decoded JSON-RPC request whose params are still raw JSON.
#[derive(Debug)]
pub struct JsonRpcRequest {
    /// The request id, echoed in the response.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The raw params object, if present.
    pub params: Option<Box<RawValue>>,
}

impl JsonRpcRequest {
    /// Decodes the params into `T`; absent params decode from `{}`.
    /// Failures are -32602 errors naming the offending field.
    pub fn params<T: serde::de::DeserializeOwned>(&self) -> Result<T, A2AError> {
        let raw = self.params.as_ref().map(|p| p.get()).unwrap_or("{}");
        decode_params(raw)
    }
}

/// Decodes a params object into `T`, mapping serde errors to -32602.
pub fn decode_params<T: serde::de::DeserializeOwned>(raw: &str) -> Result<T, A2AError> {
    let trimmed = raw.trim_start();
    if !trimmed.starts_with('{') {
        return Err(A2AError::invalid_field("params", "must be a JSON object"));
    }
    serde_json::from_str(raw).map_err(|e| A2AError::invalid_params(strip_position(&e.to_string())))
}

/// Drops serde's " at line 1 column 5" suffix from an error message.
pub fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The longest string request id accepted, in bytes. Every answer echoes the id, and a stream echoes it in
/// every event: an unbounded id would be repeated without bound.
pub const MAX_REQUEST_ID_BYTES: usize = 256;

/// Parses a request body. On failure returns the error together with the id
/// that could be recovered (or [`RequestId::Null`]). An id longer than
/// [`MAX_REQUEST_ID_BYTES`] is an InvalidRequest answered with a null id.
pub fn parse_request(body: &[u8]) -> Result<JsonRpcRequest, (RequestId, A2AError)> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(default)]
        jsonrpc: Option<Value>,
        #[serde(default)]
        id: Option<Value>,
        #[serde(default)]
        method: Option<Value>,
        #[serde(default, borrow)]
        params: Option<&'a RawValue>,
    }
    let env: Envelope<'_> = match serde_json::from_slice(body) {
        Ok(env) => env,
        Err(e) => {
            use serde_json::error::Category;
            return Err(match e.classify() {
                Category::Syntax | Category::Eof | Category::Io => (
                    RequestId::Null,
                    A2AError::Parse(strip_position(&e.to_string())),
                ),
                Category::Data => (
                    RequestId::Null,
                    A2AError::InvalidRequest(
                        "the request must be a JSON-RPC 2.0 request object".into(),
                    ),
                ),
            });
        }
    };
    // A number is read as a 64-bit value whatever its length, so only a
    // string can make the echo long.
    if let Some(Value::String(s)) = &env.id
        && s.len() > MAX_REQUEST_ID_BYTES
    {
        return Err((
            RequestId::Null,
            A2AError::InvalidRequest(format!(
                "`id` is {} bytes; the limit is {MAX_REQUEST_ID_BYTES}",
                s.len()
            )),
        ));
    }
    let id = match env.id {
        None => {
            return Err((
                RequestId::Null,
                A2AError::InvalidRequest("missing `id`".into()),
            ));
        }
        Some(Value::String(s)) => RequestId::String(s),
        Some(Value::Number(n)) => RequestId::Number(n),
        Some(Value::Null) => RequestId::Null,
        Some(_) => {
            return Err((
                RequestId::Null,
                A2AError::InvalidRequest("`id` must be a string, a number or null".into()),
            ));
        }
    };
    match env.jsonrpc {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => {
            return Err((
                id,
                A2AError::InvalidRequest("`jsonrpc` must be \"2.0\"".into()),
            ));
        }
    }
    let method = match env.method {
        Some(Value::String(m)) => m,
        _ => {
            return Err((
                id,
                A2AError::InvalidRequest("`method` must be a string".into()),
            ));
        }
    };
    let params = match env.params {
        None => None,
        Some(p) if p.get() == "null" => None,
        Some(p) => {
            if !p.get().trim_start().starts_with('{') {
                return Err((
                    id,
                    A2AError::InvalidRequest("`params` must be an object".into()),
                ));
            }
            Some(p.to_owned())
        }
    };
    Ok(JsonRpcRequest { id, method, params })
}

/// A JSON-RPC response: a result or an error.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub struct JsonRpcResponse<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: Option<&'a T>,
    error: Option<JsonRpcError>,
}

/// The `error` member of a JSON-RPC response.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcError {
    /// Error code.
    pub code: i32,
    /// Human-readable message.
    pub message: String,
    /// Details: an array of ProtoJSON `Any` objects (ErrorInfo, BadRequest).
    pub data: Option<Value>,
}

impl From<&A2AError> for JsonRpcError {
    fn from(e: &A2AError) -> Self {
        JsonRpcError {
            code: e.code(),
            message: e.to_string(),
            data: Some(Value::Array(e.details())),
        }
    }
}

impl JsonRpcError {
    /// Converts back to an [`A2AError`] (client side).
    pub fn to_a2a_error(&self) -> A2AError {
        A2AError::from_wire(self.code, self.message.clone(), self.data.as_ref())
    }
}

/// Serializes a success response.
pub fn success_body<T: Serialize>(id: &RequestId, result: &T) -> Vec<u8> {
    let resp = JsonRpcResponse {
        jsonrpc: "2.0",
        id,
        result: Some(result),
        error: None,
    };
    // Serializing plain data structures to a Vec cannot fail.
    serde_json::to_vec(&resp).unwrap_or_default()
}

/// Serializes an error response.
pub fn error_body(id: &RequestId, error: &A2AError) -> Vec<u8> {
    let resp: JsonRpcResponse<'_, ()> = JsonRpcResponse {
        jsonrpc: "2.0",
        id,
        result: None,
        error: Some(error.into()),
    };
    serde_json::to_vec(&resp).unwrap_or_default()
}

/// A response as a client reads it.
#[derive(Debug, Deserialize)]
pub struct JsonRpcResponseOwned {
    /// The id.
    #[serde(default)]
    pub id: Option<Value>,
    /// The result, when successful.
    #[serde(default)]
    pub result: Option<Box<RawValue>>,
    /// The error, when not.
    #[serde(default)]
    pub error: Option<JsonRpcError>,
}

/// A request as a client writes it.
#[derive(Debug, Serialize)]
pub struct JsonRpcRequestOut<'a, P: Serialize> {
    /// Always "2.0".
    pub jsonrpc: &'static str,
    /// The id.
    pub id: &'a RequestId,
    /// The method.
    pub method: &'a str,
    /// The params.
    pub params: &'a P,
}
