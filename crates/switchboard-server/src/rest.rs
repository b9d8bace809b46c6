//! The HTTP+JSON (REST) binding of A2A 1.0: one resource-style route per
//! operation, SSE for the two streaming ones.
//!
//! | operation | route | request from | answer |
//! |---|---|---|---|
//! | SendMessage | `POST /message:send` | body: SendMessageRequest | SendMessageResponse |
//! | SendStreamingMessage | `POST /message:stream` | body: SendMessageRequest | SSE of StreamResponse |
//! | GetTask | `GET /tasks/{id}` | query: `historyLength` | Task |
//! | ListTasks | `GET /tasks` | query: `contextId`, `status`, `pageSize`, `pageToken`, `historyLength`, `statusTimestampAfter`, `includeArtifacts` | ListTasksResponse |
//! | CancelTask | `POST /tasks/{id}:cancel` | body: CancelTaskRequest (may be empty or `{}`) | Task |
//! | SubscribeToTask | `GET` or `POST /tasks/{id}:subscribe` | `Last-Event-ID` header to resume | SSE of StreamResponse |
//! | CreateTaskPushNotificationConfig | `POST /tasks/{taskId}/pushNotificationConfigs` | body: TaskPushNotificationConfig | the config |
//! | ListTaskPushNotificationConfigs | `GET /tasks/{taskId}/pushNotificationConfigs` | query: `pageSize`, `pageToken` | ListTaskPushNotificationConfigsResponse |
//! | GetTaskPushNotificationConfig | `GET /tasks/{taskId}/pushNotificationConfigs/{id}` | path | the config |
//! | DeleteTaskPushNotificationConfig | `DELETE /tasks/{taskId}/pushNotificationConfigs/{id}` | path | `{}` |
//! | GetExtendedAgentCard | `GET /extendedAgentCard` | — | AgentCard |
//!
//! Every route also exists as `/{tenant}/...`; the tenant goes into
//! `CallContext.tenant` (and the request's `tenant` field).
//!
//! The A2A 0.3 routes are the same table under `/v1` (`POST /v1/message:send`,
//! `GET /v1/tasks/{id}`, …, `GET /v1/card` for the extended card; no
//! ListTasks), with 0.3 bodies; see [`crate::rest_v03`]. They take a tenant
//! the same way: `/{tenant}/v1/...`.
//!
//! ## How a path is read (the routing rule)
//!
//! 1. The path is split on `/`; an empty segment (`//`, a trailing `/`)
//!    matches nothing. Segments are percent-decoded before they are
//!    compared or used.
//! 2. **Tenant.** If the first segment is one of the top-level route names
//!    `message:send`, `message:stream`, `tasks`, `extendedAgentCard` or `v1`
//!    (the 0.3 prefix), the path has no tenant. Otherwise the first segment IS the tenant and the
//!    rest is matched against the table. The decision looks at the first
//!    segment only, never at the HTTP method or the segments after it, so
//!    `/tasks/tasks` is always "GetTask `tasks`" and never "ListTasks in
//!    tenant `tasks`". Consequently a tenant named like one of those five
//!    names cannot be addressed over REST (our client refuses to build such
//!    a path instead of silently reaching the default tenant).
//! 3. **Custom verbs.** In `tasks/{segment}` a *literal* `:` followed by
//!    `cancel` or `subscribe` at the end of the segment selects the verb
//!    (the last `:` counts). Any other segment is a task id as a whole,
//!    colons included: `GET /tasks/a:b` reads task `a:b`. An id that itself
//!    ends in `:cancel`/`:subscribe` is sent with the colon escaped (`%3A`),
//!    as `encodeURIComponent` does.
//! 4. A known path with the wrong method is 405 (with `Allow`); anything
//!    else is 404. Both answer with the Google error JSON like every error.
//!
//! ## Order of checks
//!
//! Same as the JSON-RPC binding, after routing: route (404/405) → body size
//! (413) → content type of a non-empty body (`application/json` or
//! `application/a2a+json`, else ContentTypeNotSupported) → `A2A-Version`
//! (header or query parameter; missing means 0.3 → VersionNotSupported) →
//! extensions (ExtensionSupportRequired; activated ones are echoed in
//! `A2A-Extensions`) → `Last-Event-ID` (subscribe only) → decoding the body
//! or query (Parse / InvalidParams) → the operation.
//!
//! Query values: numbers in decimal, booleans `true`/`false`, the task state
//! by its enum name (`TASK_STATE_WORKING`), timestamps in RFC 3339; camelCase
//! or snake_case names; unknown names are ignored; a repeated name keeps its
//! last value. A bad value is InvalidParams (400 INVALID_ARGUMENT) naming
//! the parameter. Ids given in the path win: a body that names a different
//! `id`/`taskId`/`tenant` is refused rather than silently overridden.
//!
//! Successes are `200 application/json`. Errors use the Google API error
//! format with the status from [`crate::errors`]. Streams are SSE: each
//! event is `id: <seq>` + `data: <StreamResponse JSON>`; an error in the
//! middle of a stream is `event: error` + `data: <Google error JSON>`.
//! Errors before the first event are plain JSON error answers.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use futures::StreamExt;
use http::{HeaderValue, Method, StatusCode, Uri, header};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use switchboard_core::{CallContext, EventStream};
use switchboard_protocol::{
    A2AError, CancelTaskRequest, EXTENSIONS_HEADER, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState,
};

use crate::AppState;
use crate::errors::{ErrorStatus, ErrorTable, GrpcCode, rest_error_body};
use crate::params::{
    explicit_version, is_json_content_type, last_event_id, requested_extensions, require_v1,
};

/// How often an idle stream sends an SSE comment (under the Python
/// client's 5 s read timeout, like the JSON-RPC binding).
const KEEP_ALIVE: Duration = Duration::from_secs(4);

/// First segments that start a route, so they are never a tenant
/// (`v1` starts the 0.3 routes).
const TOP_LEVEL: [&str; 5] = [
    "message:send",
    "message:stream",
    "tasks",
    "extendedAgentCard",
    V03_PREFIX,
];

/// The segment that starts every 0.3 route.
const V03_PREFIX: &str = "v1";

/// At most this much of a request path is repeated in an error message.
const MAX_PATH_ECHO: usize = 200;

/// The REST routes, to be merged into the server's router. One catch-all
/// route: the path is parsed by [`resolve`], which implements the rule in
/// the module docs (axum's matcher cannot split `{id}:cancel`).
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/{*path}", any(handle))
}

/// An operation with the ids taken from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op {
    SendMessage,
    SendStreamingMessage,
    GetTask { id: String },
    ListTasks,
    CancelTask { id: String },
    SubscribeToTask { id: String },
    CreatePushConfig { task_id: String },
    ListPushConfigs { task_id: String },
    GetPushConfig { task_id: String, id: String },
    DeletePushConfig { task_id: String, id: String },
    GetExtendedAgentCard,
}

/// A resolved route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// "" for the default tenant.
    pub(crate) tenant: String,
    pub(crate) op: Op,
    /// A 0.3 route (`/v1/...`).
    pub(crate) v03: bool,
}

/// Why a path is not a route.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoRoute {
    /// 404.
    NotFound,
    /// 405, with the methods the path does accept.
    WrongMethod(&'static [Method]),
    /// 400: a segment is not valid percent-encoded UTF-8.
    BadEncoding,
}

/// Maps a method and a path to an operation (see the module docs for the rule).
fn resolve(method: &Method, path: &str) -> Result<Route, NoRoute> {
    let raw = path.strip_prefix('/').unwrap_or(path);
    let segments: Vec<&str> = raw.split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(NoRoute::NotFound);
    }
    let first = decode(segments[0])?;
    let (tenant, rest) = if TOP_LEVEL.contains(&first.as_str()) {
        (String::new(), &segments[..])
    } else {
        (first, &segments[1..])
    };
    let names = rest
        .iter()
        .map(|s| decode(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut rest = rest;
    let v03 = names.first() == Some(&V03_PREFIX);
    if v03 {
        names.remove(0);
        rest = &rest[1..];
    }
    let only = |allowed: &'static [Method], op: Op| {
        if allowed.contains(method) {
            Ok(op)
        } else {
            Err(NoRoute::WrongMethod(allowed))
        }
    };
    const GET: &[Method] = &[Method::GET];
    const POST: &[Method] = &[Method::POST];
    const GET_POST: &[Method] = &[Method::GET, Method::POST];
    const GET_DELETE: &[Method] = &[Method::GET, Method::DELETE];
    let op = match names.as_slice() {
        ["message:send"] => only(POST, Op::SendMessage)?,
        ["message:stream"] => only(POST, Op::SendStreamingMessage)?,
        ["extendedAgentCard"] if !v03 => only(GET, Op::GetExtendedAgentCard)?,
        ["card"] if v03 => only(GET, Op::GetExtendedAgentCard)?,
        ["tasks"] if !v03 => only(GET, Op::ListTasks)?,
        ["tasks", _] => {
            // The verb needs a literal ':' in the raw segment.
            let raw_seg = rest[1];
            match raw_seg.rsplit_once(':') {
                Some((id, "cancel")) if !id.is_empty() => {
                    only(POST, Op::CancelTask { id: decode(id)? })?
                }
                Some((id, "subscribe")) if !id.is_empty() => {
                    only(GET_POST, Op::SubscribeToTask { id: decode(id)? })?
                }
                _ => only(
                    GET,
                    Op::GetTask {
                        id: names[1].to_string(),
                    },
                )?,
            }
        }
        ["tasks", task_id, "pushNotificationConfigs"] => {
            let task_id = task_id.to_string();
            match *method {
                Method::GET => Op::ListPushConfigs { task_id },
                Method::POST => Op::CreatePushConfig { task_id },
                _ => return Err(NoRoute::WrongMethod(GET_POST)),
            }
        }
        ["tasks", task_id, "pushNotificationConfigs", id] => {
            let (task_id, id) = (task_id.to_string(), id.to_string());
            match *method {
                Method::GET => Op::GetPushConfig { task_id, id },
                Method::DELETE => Op::DeletePushConfig { task_id, id },
                _ => return Err(NoRoute::WrongMethod(GET_DELETE)),
            }
        }
        _ => return Err(NoRoute::NotFound),
    };
    let empty_id = match &op {
        Op::GetTask { id } | Op::CancelTask { id } | Op::SubscribeToTask { id } => id.is_empty(),
        Op::CreatePushConfig { task_id } | Op::ListPushConfigs { task_id } => task_id.is_empty(),
        Op::GetPushConfig { task_id, id } | Op::DeletePushConfig { task_id, id } => {
            task_id.is_empty() || id.is_empty()
        }
        _ => false,
    };
    if empty_id {
        return Err(NoRoute::NotFound);
    }
    Ok(Route { tenant, op, v03 })
}

/// Percent-decodes one path segment (`+` stays `+`).
fn decode(segment: &str) -> Result<String, NoRoute> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: u8| (b as char).to_digit(16);
            let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) else {
                return Err(NoRoute::BadEncoding);
            };
            // Two hex digits are at most 0xFF.
            out.push(u8::try_from(hi * 16 + lo).map_err(|_| NoRoute::BadEncoding)?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| NoRoute::BadEncoding)
}

/// Handles every request that reaches the REST catch-all route.
async fn handle(State(app): State<AppState>, req: Request) -> Response {
    let table = app.error_table;
    let (parts, body) = req.into_parts();
    let route = match resolve(&parts.method, parts.uri.path()) {
        Ok(r) => r,
        Err(no) => return no_route(table, &parts.method, parts.uri.path(), no),
    };
    let bytes = match axum::body::to_bytes(body, app.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => {
            let err = A2AError::InvalidRequest(format!(
                "the request body exceeds {} bytes",
                app.max_body_bytes
            ));
            let status = ErrorStatus {
                http: StatusCode::PAYLOAD_TOO_LARGE,
                grpc: table.status(&err).grpc,
            };
            return json_response(status.http, rest_error_body(&err, status), &[]);
        }
    };
    let has_body = !bytes.iter().all(u8::is_ascii_whitespace);
    if has_body && reads_body(&route.op, &parts.method) && !is_json_content_type(&parts.headers) {
        let got = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none");
        let err = A2AError::ContentTypeNotSupported(format!(
            "Content-Type must be application/json or application/a2a+json, got {got}"
        ));
        return error_response(table, &err, &[]);
    }
    // The path decides the version (see `crate::params`); a 0.3 route only
    // refuses versions this server does not serve at all.
    let version = if route.v03 {
        explicit_version(&parts.headers, parts.uri.query()).map(|_| ())
    } else {
        require_v1(&parts.headers, parts.uri.query())
    };
    if let Err(err) = version {
        return error_response(table, &err, &[]);
    }
    let mut call = CallContext::anonymous()
        .with_tenant(route.tenant.clone())
        .with_extensions_header(&requested_extensions(&parts.headers));
    if let Err(err) = app.handler.activate_extensions(&mut call) {
        return error_response(table, &err, &[]);
    }
    let echo = call.activated_extensions.join(",");
    let extra: Vec<(&'static str, String)> = if echo.is_empty() {
        vec![]
    } else {
        vec![(EXTENSIONS_HEADER, echo)]
    };
    let input = Input {
        tenant: &route.tenant,
        uri: &parts.uri,
        body: if has_body && reads_body(&route.op, &parts.method) {
            &bytes
        } else {
            &[]
        },
        headers: &parts.headers,
    };
    let result = if route.v03 {
        crate::rest_v03::dispatch(&app, &call, route.op, &input).await
    } else {
        dispatch(&app, &call, route.op, &input).await
    };
    match result {
        Ok(Reply::Json(body)) => json_response(StatusCode::OK, body, &extra),
        Ok(Reply::Stream(stream)) => sse_response(table, stream, &extra, |ev| {
            serde_json::to_string(&ev).unwrap_or_default()
        }),
        Ok(Reply::Stream03(stream)) => sse_response(table, stream, &extra, |ev| {
            serde_json::to_string(&switchboard_protocol::v03::rest::StreamResponse::from(ev))
                .unwrap_or_default()
        }),
        Err(err) => error_response(table, &err, &extra),
    }
}

/// `true` for the operations whose request comes (partly) from the body.
fn reads_body(op: &Op, method: &Method) -> bool {
    match op {
        Op::SendMessage | Op::SendStreamingMessage | Op::CancelTask { .. } => true,
        Op::CreatePushConfig { .. } => true,
        Op::SubscribeToTask { .. } => *method == Method::POST,
        _ => false,
    }
}

/// What a request carries besides its route.
pub(crate) struct Input<'a> {
    pub(crate) tenant: &'a str,
    pub(crate) uri: &'a Uri,
    pub(crate) body: &'a [u8],
    pub(crate) headers: &'a http::HeaderMap,
}

pub(crate) enum Reply {
    Json(Vec<u8>),
    Stream(EventStream),
    /// A stream sent in the 0.3 REST shapes.
    Stream03(EventStream),
}

pub(crate) fn ok<T: Serialize>(value: &T) -> Result<Reply, A2AError> {
    // Serializing plain data structures cannot fail.
    Ok(Reply::Json(serde_json::to_vec(value).unwrap_or_default()))
}

/// Decodes the request of `op` and calls the matching handler method.
async fn dispatch(
    app: &AppState,
    call: &CallContext,
    op: Op,
    input: &Input<'_>,
) -> Result<Reply, A2AError> {
    let h = &app.handler;
    match op {
        Op::SendMessage => {
            let req: SendMessageRequest = from_body(input, &[])?;
            ok(&h.send_message(call, req).await?)
        }
        Op::SendStreamingMessage => {
            let req: SendMessageRequest = from_body(input, &[])?;
            Ok(Reply::Stream(h.send_streaming_message(call, req).await?))
        }
        Op::GetTask { id } => {
            let req: GetTaskRequest = from_query(input, &[("id", "id", &id)], &[HISTORY_LENGTH])?;
            ok(&h.get_task(call, req).await?)
        }
        Op::ListTasks => {
            let req: ListTasksRequest = from_query(input, &[], LIST_TASKS_PARAMS)?;
            ok(&h.list_tasks(call, req).await?)
        }
        Op::CancelTask { id } => {
            let req: CancelTaskRequest = from_body(input, &[("id", "id", &id)])?;
            ok(&h.cancel_task(call, req).await?)
        }
        Op::SubscribeToTask { id } => {
            let after = last_event_id(input.headers)?;
            let req: SubscribeToTaskRequest = from_body(input, &[("id", "id", &id)])?;
            let stream = match after {
                Some(after) => h.resubscribe_to_task(call, req, after).await?,
                None => h.subscribe_to_task(call, req).await?,
            };
            Ok(Reply::Stream(stream))
        }
        Op::CreatePushConfig { task_id } => {
            let req: TaskPushNotificationConfig =
                from_body(input, &[("taskId", "task_id", &task_id)])?;
            ok(&h.create_push_config(call, req).await?)
        }
        Op::ListPushConfigs { task_id } => {
            let req: ListTaskPushNotificationConfigsRequest = from_query(
                input,
                &[("taskId", "task_id", &task_id)],
                &[PAGE_SIZE, PAGE_TOKEN],
            )?;
            ok(&h.list_push_configs(call, req).await?)
        }
        Op::GetPushConfig { task_id, id } => {
            let req = push_ref(input, task_id, id);
            ok(&h.get_push_config(call, req).await?)
        }
        Op::DeletePushConfig { task_id, id } => {
            let req = push_ref(input, task_id, id);
            h.delete_push_config(call, req).await?;
            ok(&serde_json::json!({}))
        }
        Op::GetExtendedAgentCard => {
            let req = GetExtendedAgentCardRequest {
                tenant: tenant_field(input.tenant),
            };
            ok(&h.get_extended_agent_card(call, req).await?)
        }
    }
}

pub(crate) fn tenant_field(tenant: &str) -> Option<String> {
    (!tenant.is_empty()).then(|| tenant.to_string())
}

fn push_ref(input: &Input<'_>, task_id: String, id: String) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: tenant_field(input.tenant),
        task_id,
        id,
    }
}

/// A field that comes from the path: (camelCase name, snake_case alias, value).
pub(crate) type PathField<'a> = (&'static str, &'static str, &'a str);

/// Decodes the body (empty = `{}`) into `T`, with the tenant and the path's
/// ids filled in. A body that contradicts the path is refused.
fn from_body<T: DeserializeOwned>(
    input: &Input<'_>,
    path: &[PathField<'_>],
) -> Result<T, A2AError> {
    let mut map = if input.body.is_empty() {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(input.body) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(A2AError::invalid_field("body", "must be a JSON object")),
            Err(e) => return Err(A2AError::Parse(strip_position(&e.to_string()))),
        }
    };
    fill_path_fields(&mut map, input.tenant, path)?;
    decode_map(map)
}

/// Builds `T` from the query string (see [`QueryParam`]) plus the tenant and
/// the path's ids.
pub(crate) fn from_query<T: DeserializeOwned>(
    input: &Input<'_>,
    path: &[PathField<'_>],
    known: &[QueryParam],
) -> Result<T, A2AError> {
    let pairs: Vec<(String, String)> = match Query::try_from_uri(input.uri) {
        Ok(Query(pairs)) => pairs,
        Err(e) => {
            return Err(A2AError::invalid_params(format!(
                "the query string is not valid URL encoding: {e}"
            )));
        }
    };
    let mut map = Map::new();
    for (name, raw) in pairs {
        // The last occurrence of a name wins.
        if let Some(param) = known.iter().find(|p| p.name == name || p.snake == name) {
            map.insert(param.name.to_string(), param.kind.parse(param.name, &raw)?);
        }
    }
    fill_path_fields(&mut map, input.tenant, path)?;
    decode_map(map)
}

fn decode_map<T: DeserializeOwned>(map: Map<String, Value>) -> Result<T, A2AError> {
    serde_json::from_value(Value::Object(map))
        .map_err(|e| A2AError::invalid_params(strip_position(&e.to_string())))
}

/// Puts the tenant and the path's ids into `map`. A different non-empty
/// value already in the body is an error, since the path decides.
fn fill_path_fields(
    map: &mut Map<String, Value>,
    tenant: &str,
    path: &[PathField<'_>],
) -> Result<(), A2AError> {
    let tenant_field: PathField<'_> = ("tenant", "tenant", tenant);
    for (name, snake, value) in std::iter::once(&tenant_field).chain(path) {
        for key in [*name, *snake] {
            match map.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if s == value || (s.is_empty() && *name == "tenant") => {}
                Some(other) => {
                    let in_path = if value.is_empty() {
                        "not given in the path (the default tenant)".to_string()
                    } else {
                        format!("{value:?} in the path")
                    };
                    return Err(A2AError::invalid_field(
                        *name,
                        format!("is {in_path} but {other} in the body; the path decides"),
                    ));
                }
            }
        }
        map.remove(*snake);
        if value.is_empty() {
            map.remove(*name);
        } else {
            map.insert(name.to_string(), Value::String(value.to_string()));
        }
    }
    Ok(())
}

/// Drops serde's " at line 1 column 5" suffix.
pub(crate) fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// A query parameter a route understands.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueryParam {
    name: &'static str,
    snake: &'static str,
    kind: Kind,
}

/// How a query value is read.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Int,
    Bool,
    Str,
    State,
    Timestamp,
}

pub(crate) const HISTORY_LENGTH: QueryParam = QueryParam {
    name: "historyLength",
    snake: "history_length",
    kind: Kind::Int,
};
pub(crate) const PAGE_SIZE: QueryParam = QueryParam {
    name: "pageSize",
    snake: "page_size",
    kind: Kind::Int,
};
pub(crate) const PAGE_TOKEN: QueryParam = QueryParam {
    name: "pageToken",
    snake: "page_token",
    kind: Kind::Str,
};
const LIST_TASKS_PARAMS: &[QueryParam] = &[
    QueryParam {
        name: "contextId",
        snake: "context_id",
        kind: Kind::Str,
    },
    QueryParam {
        name: "status",
        snake: "status",
        kind: Kind::State,
    },
    PAGE_SIZE,
    PAGE_TOKEN,
    HISTORY_LENGTH,
    QueryParam {
        name: "statusTimestampAfter",
        snake: "status_timestamp_after",
        kind: Kind::Timestamp,
    },
    QueryParam {
        name: "includeArtifacts",
        snake: "include_artifacts",
        kind: Kind::Bool,
    },
];

impl Kind {
    /// Converts one query value into the JSON the request type expects.
    fn parse(self, name: &str, raw: &str) -> Result<Value, A2AError> {
        let bad =
            |what: &str| A2AError::invalid_field(name, format!("must be {what}, got {raw:?}"));
        match self {
            Kind::Str => Ok(Value::String(raw.to_string())),
            Kind::Int => raw
                .trim()
                .parse::<i32>()
                .map(Value::from)
                .map_err(|_| bad("a 32-bit integer")),
            Kind::Bool => match raw.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(bad("true or false")),
            },
            Kind::State => {
                let v = Value::String(raw.trim().to_string());
                serde_json::from_value::<TaskState>(v.clone())
                    .map(|_| v)
                    .map_err(|_| bad("a task state name such as TASK_STATE_WORKING"))
            }
            Kind::Timestamp => {
                let v = Value::String(raw.trim().to_string());
                let mut probe = Map::new();
                probe.insert("statusTimestampAfter".into(), v.clone());
                serde_json::from_value::<ListTasksRequest>(Value::Object(probe))
                    .map(|_| v)
                    .map_err(|_| bad("an RFC 3339 timestamp such as 2025-11-09T10:30:00Z"))
            }
        }
    }
}

/// The answer for a path that is not a route.
fn no_route(table: ErrorTable, method: &Method, path: &str, why: NoRoute) -> Response {
    let shown: String = path.chars().take(MAX_PATH_ECHO).collect();
    match why {
        NoRoute::NotFound => {
            // The error's string is the request line alone: it becomes
            // `ErrorInfo.metadata.method`.
            let err = A2AError::MethodNotFound(format!("{method} {shown}"));
            error_response(table, &err, &[])
        }
        NoRoute::WrongMethod(allowed) => {
            let list: Vec<&str> = allowed.iter().map(Method::as_str).collect();
            // The accepted methods are in the `Allow` header.
            let err = A2AError::MethodNotFound(format!("{method} {shown}"));
            let status = ErrorStatus {
                http: StatusCode::METHOD_NOT_ALLOWED,
                grpc: GrpcCode::Unimplemented,
            };
            let mut resp = json_response(status.http, rest_error_body(&err, status), &[]);
            if let Ok(v) = HeaderValue::from_str(&list.join(", ")) {
                resp.headers_mut().insert(header::ALLOW, v);
            }
            resp
        }
        NoRoute::BadEncoding => {
            let err = A2AError::InvalidRequest(format!(
                "the path {shown} is not valid percent-encoded UTF-8"
            ));
            error_response(table, &err, &[])
        }
    }
}

fn error_response(table: ErrorTable, err: &A2AError, extra: &[(&'static str, String)]) -> Response {
    let status = table.status(err);
    json_response(status.http, rest_error_body(err, status), extra)
}

fn json_response(status: StatusCode, body: Vec<u8>, extra: &[(&'static str, String)]) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (name, value) in extra {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(*name, v);
        }
    }
    resp
}

/// Frames each item as `id: <seq>` + `data: <StreamResponse>`; an error
/// item becomes `event: error` with the Google error JSON.
fn sse_response(
    table: ErrorTable,
    stream: EventStream,
    extra: &[(&'static str, String)],
    encode: fn(switchboard_protocol::StreamResponse) -> String,
) -> Response {
    let frames = stream.map(move |item| {
        let event = match item {
            Ok(ev) => {
                let data = encode(ev.event);
                let e = Event::default().data(data);
                if ev.seq > 0 {
                    e.id(ev.seq.to_string())
                } else {
                    e
                }
            }
            Err(err) => {
                let body = rest_error_body(&err, table.status(&err));
                Event::default()
                    .event("error")
                    .data(String::from_utf8(body).unwrap_or_default())
            }
        };
        Ok::<_, Infallible>(event)
    });
    let mut resp = Sse::new(frames)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    for (name, value) in extra {
        if let Ok(v) = HeaderValue::from_str(value) {
            resp.headers_mut().insert(*name, v);
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn r(method: Method, path: &str) -> Result<Route, NoRoute> {
        resolve(&method, path)
    }

    fn route(tenant: &str, op: Op) -> Result<Route, NoRoute> {
        Ok(Route {
            tenant: tenant.into(),
            op,
            v03: false,
        })
    }

    #[test]
    fn plain_routes() {
        assert_eq!(r(Method::POST, "/message:send"), route("", Op::SendMessage));
        assert_eq!(
            r(Method::POST, "/message:stream"),
            route("", Op::SendStreamingMessage)
        );
        assert_eq!(r(Method::GET, "/tasks"), route("", Op::ListTasks));
        assert_eq!(
            r(Method::GET, "/tasks/t1"),
            route("", Op::GetTask { id: "t1".into() })
        );
        assert_eq!(
            r(Method::POST, "/tasks/t1:cancel"),
            route("", Op::CancelTask { id: "t1".into() })
        );
        for m in [Method::GET, Method::POST] {
            assert_eq!(
                r(m, "/tasks/t1:subscribe"),
                route("", Op::SubscribeToTask { id: "t1".into() })
            );
        }
        assert_eq!(
            r(Method::POST, "/tasks/t1/pushNotificationConfigs"),
            route(
                "",
                Op::CreatePushConfig {
                    task_id: "t1".into()
                }
            )
        );
        assert_eq!(
            r(Method::GET, "/tasks/t1/pushNotificationConfigs"),
            route(
                "",
                Op::ListPushConfigs {
                    task_id: "t1".into()
                }
            )
        );
        assert_eq!(
            r(Method::GET, "/tasks/t1/pushNotificationConfigs/c1"),
            route(
                "",
                Op::GetPushConfig {
                    task_id: "t1".into(),
                    id: "c1".into()
                }
            )
        );
        assert_eq!(
            r(Method::DELETE, "/tasks/t1/pushNotificationConfigs/c1"),
            route(
                "",
                Op::DeletePushConfig {
                    task_id: "t1".into(),
                    id: "c1".into()
                }
            )
        );
        assert_eq!(
            r(Method::GET, "/extendedAgentCard"),
            route("", Op::GetExtendedAgentCard)
        );
    }

    #[test]
    fn tenant_is_the_first_segment_unless_it_is_a_route_name() {
        assert_eq!(
            r(Method::POST, "/acme/message:send"),
            route("acme", Op::SendMessage)
        );
        assert_eq!(
            r(Method::POST, "/acme/tasks/t1:cancel"),
            route("acme", Op::CancelTask { id: "t1".into() })
        );
        assert_eq!(
            r(Method::GET, "/a%2Fb/tasks"),
            route("a/b", Op::ListTasks),
            "an escaped slash stays inside the tenant"
        );
        // `tasks` as first segment is never a tenant.
        assert_eq!(
            r(Method::GET, "/tasks/tasks"),
            route("", Op::GetTask { id: "tasks".into() })
        );
        assert_eq!(
            r(Method::POST, "/tasks/message:send"),
            Err(NoRoute::WrongMethod(&[Method::GET]))
        );
        assert_eq!(
            r(Method::POST, "/message:send/message:send"),
            Err(NoRoute::NotFound)
        );
        assert_eq!(
            r(Method::POST, "/message%3Asend/message:send"),
            Err(NoRoute::NotFound),
            "route names are compared after decoding"
        );
        // A tenant that looks like an id or verb is just a tenant.
        assert_eq!(
            r(Method::GET, "/t1:cancel/tasks"),
            route("t1:cancel", Op::ListTasks)
        );
        assert_eq!(r(Method::GET, "/acme"), Err(NoRoute::NotFound));
    }

    #[test]
    fn verbs_need_a_literal_colon_and_ids_keep_theirs() {
        assert_eq!(
            r(Method::GET, "/tasks/a:b"),
            route("", Op::GetTask { id: "a:b".into() })
        );
        assert_eq!(
            r(Method::GET, "/tasks/x%3Acancel"),
            route(
                "",
                Op::GetTask {
                    id: "x:cancel".into()
                }
            )
        );
        assert_eq!(
            r(Method::POST, "/tasks/a:b:cancel"),
            route("", Op::CancelTask { id: "a:b".into() })
        );
        assert_eq!(
            r(Method::POST, "/tasks/a%3Acancel:cancel"),
            route(
                "",
                Op::CancelTask {
                    id: "a:cancel".into()
                }
            )
        );
        assert_eq!(
            r(Method::GET, "/tasks/t1:cancel"),
            Err(NoRoute::WrongMethod(&[Method::POST]))
        );
        assert_eq!(
            r(Method::GET, "/tasks/:cancel"),
            route(
                "",
                Op::GetTask {
                    id: ":cancel".into()
                }
            )
        );
    }

    #[test]
    fn v1_starts_the_03_routes_and_is_never_a_tenant() {
        let v03 = |tenant: &str, op: Op| {
            Ok(Route {
                tenant: tenant.into(),
                op,
                v03: true,
            })
        };
        assert_eq!(
            r(Method::POST, "/v1/message:send"),
            v03("", Op::SendMessage)
        );
        assert_eq!(
            r(Method::POST, "/acme/v1/message:stream"),
            v03("acme", Op::SendStreamingMessage)
        );
        assert_eq!(
            r(Method::GET, "/v1/tasks/t1"),
            v03("", Op::GetTask { id: "t1".into() })
        );
        assert_eq!(
            r(Method::POST, "/v1/tasks/t1:cancel"),
            v03("", Op::CancelTask { id: "t1".into() })
        );
        assert_eq!(
            r(Method::GET, "/v1/card"),
            v03("", Op::GetExtendedAgentCard)
        );
        assert_eq!(
            r(Method::DELETE, "/v1/tasks/t/pushNotificationConfigs/c"),
            v03(
                "",
                Op::DeletePushConfig {
                    task_id: "t".into(),
                    id: "c".into()
                }
            )
        );
        // 0.3 has no ListTasks, and the 1.0 card route is not under /v1.
        assert_eq!(r(Method::GET, "/v1/tasks"), Err(NoRoute::NotFound));
        assert_eq!(
            r(Method::GET, "/v1/extendedAgentCard"),
            Err(NoRoute::NotFound)
        );
        assert_eq!(r(Method::GET, "/card"), Err(NoRoute::NotFound));
        // Other tenants are untouched.
        assert_eq!(r(Method::GET, "/v2/tasks"), route("v2", Op::ListTasks));
    }

    #[test]
    fn nothing_else_matches() {
        for p in [
            "/",
            "",
            "/tasks/",
            "//tasks",
            "/tasks//pushNotificationConfigs",
            "/tasks/t/pushNotificationConfigs/c/x",
            "/a/b/tasks",
            "/v1/message:send/x",
            "/message:sendx",
        ] {
            assert!(
                matches!(
                    r(Method::GET, p),
                    Err(NoRoute::NotFound | NoRoute::WrongMethod(_))
                ),
                "{p}"
            );
        }
        assert_eq!(r(Method::GET, "/tasks/%zz"), Err(NoRoute::BadEncoding));
        assert_eq!(r(Method::GET, "/tasks/%ff"), Err(NoRoute::BadEncoding));
        assert_eq!(
            r(Method::PUT, "/tasks/t/pushNotificationConfigs/c"),
            Err(NoRoute::WrongMethod(&[Method::GET, Method::DELETE]))
        );
    }

    #[test]
    fn query_values_are_typed() {
        assert_eq!(Kind::Int.parse("pageSize", "7").unwrap(), Value::from(7));
        assert!(Kind::Int.parse("pageSize", "seven").is_err());
        assert!(Kind::Int.parse("pageSize", "").is_err());
        assert_eq!(
            Kind::Bool.parse("includeArtifacts", "TRUE").unwrap(),
            Value::Bool(true)
        );
        assert!(Kind::Bool.parse("includeArtifacts", "1").is_err());
        assert!(Kind::State.parse("status", "TASK_STATE_WORKING").is_ok());
        let err = Kind::State.parse("status", "RUNNING").unwrap_err();
        assert_eq!(err.reason(), "INVALID_PARAMS");
        assert!(err.to_string().contains("status"), "{err}");
        assert!(
            Kind::Timestamp
                .parse("statusTimestampAfter", "2025-11-09T10:30:00Z")
                .is_ok()
        );
        assert!(
            Kind::Timestamp
                .parse("statusTimestampAfter", "yesterday")
                .is_err()
        );
    }

    #[tokio::test]
    async fn stream_frames_carry_ids_and_errors_become_error_events() {
        use switchboard_core::LoggedEvent;
        use switchboard_protocol::{Message, StreamResponse};
        let items = vec![
            Ok(LoggedEvent {
                seq: 7,
                event: StreamResponse::Message(Message::agent_text("hi")),
            }),
            Err(A2AError::Internal("store failed".into())),
        ];
        let stream: EventStream = Box::pin(futures::stream::iter(items));
        let resp = sse_response(
            ErrorTable::V1_0_0,
            stream,
            &[(EXTENSIONS_HEADER, "urn:x".into())],
            |ev| serde_json::to_string(&ev).unwrap(),
        );
        assert_eq!(resp.headers()[EXTENSIONS_HEADER], "urn:x");
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
        assert_eq!(frames.len(), 2, "{text}");
        assert!(frames[0].contains("id: 7"), "{text}");
        let data: Value = serde_json::from_str(
            frames[0]
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(data["message"]["parts"][0]["text"], "hi");
        assert!(frames[1].starts_with("event: error"), "{text}");
        let err: Value = serde_json::from_str(
            frames[1]
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(err["error"]["code"], 500);
        assert_eq!(err["error"]["status"], "INTERNAL");
        assert_eq!(err["error"]["details"][0]["reason"], "INTERNAL_ERROR");
    }

    #[test]
    fn path_fields_win_and_contradictions_are_refused() {
        let mut m = Map::new();
        m.insert("id".into(), Value::String("t1".into()));
        m.insert("tenant".into(), Value::String(String::new()));
        fill_path_fields(&mut m, "", &[("id", "id", "t1")]).unwrap();
        assert_eq!(m.get("tenant"), None);
        let mut m = Map::new();
        m.insert("id".into(), Value::String("other".into()));
        assert!(fill_path_fields(&mut m, "", &[("id", "id", "t1")]).is_err());
        let mut m = Map::new();
        m.insert("tenant".into(), Value::String("x".into()));
        assert!(fill_path_fields(&mut m, "", &[]).is_err());
        let mut m = Map::new();
        m.insert("task_id".into(), Value::String("t1".into()));
        fill_path_fields(&mut m, "acme", &[("taskId", "task_id", "t1")]).unwrap();
        assert_eq!(m.get("taskId"), Some(&Value::String("t1".into())));
        assert_eq!(m.get("tenant"), Some(&Value::String("acme".into())));
        assert_eq!(m.get("task_id"), None);
    }
}
