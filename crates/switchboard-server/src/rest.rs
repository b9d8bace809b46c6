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
//! Same as the JSON-RPC binding, after routing: route (404/405) →
//! authentication (401/403, see [`crate::gate`]) → body size
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

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::response::Response;
use axum::routing::any;
use http::{HeaderValue, Method, StatusCode, Uri, header};
use serde::Serialize;
use serde_json::{Map, Value};
use switchboard_core::{Answer, CallContext, EventStream};
use switchboard_protocol::operations::{QueryKind, QueryParam};
use switchboard_protocol::{A2AError, A2aRequest, ListTasksRequest, Operation, TaskState};

use crate::AppState;
use crate::errors::{ErrorStatus, ErrorTable, GrpcCode, rest_error_body};
use crate::gate::Gate;
use crate::params::{explicit_version, last_event_id, require_v1};
pub(crate) use crate::preamble::Reply;
use crate::preamble::{agui_or_reply, json_response, read_body, require_json};
use crate::sse::{event_frames, sse_response};

/// The segment that starts every 0.3 route.
const V03_PREFIX: &str = "v1";

/// The 0.3 route of the extended card (`/v1/card`), the one 0.3 route
/// whose path differs from its 1.0 twin.
const V03_CARD: &str = "/card";

/// At most this much of a request path is repeated in an error message.
const MAX_PATH_ECHO: usize = 200;

/// The REST routes, to be merged into the server's router. One catch-all
/// route: the path is parsed by [`resolve`], which implements the rule in
/// the module docs (axum's matcher cannot split `{id}:cancel`).
pub(crate) fn routes() -> Router<AppState> {
    Router::new().route("/{*path}", any(handle))
}

/// A resolved route: the operation and the request fields its path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// "" for the default tenant.
    pub(crate) tenant: String,
    pub(crate) op: Operation,
    pub(crate) fields: PathFields,
    /// A 0.3 route (`/v1/...`).
    pub(crate) v03: bool,
}

impl Route {
    /// The value of a path field (`""` if the template has none such).
    pub(crate) fn field(&self, name: &str) -> String {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

/// Why a path is not a route.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoRoute {
    /// 404.
    NotFound,
    /// 405, with the methods the path does accept.
    WrongMethod(Vec<Method>),
    /// 400: a segment is not valid percent-encoded UTF-8.
    BadEncoding,
}

/// An operation's route template in the dialect asked for.
fn template(op: Operation, v03: bool) -> &'static str {
    match op {
        Operation::GetExtendedAgentCard if v03 => V03_CARD,
        _ => op.rest().template,
    }
}

/// The operations a dialect routes: every one in 1.0, those 0.3 has under `/v1`.
fn routed(v03: bool) -> impl Iterator<Item = Operation> {
    Operation::ALL
        .iter()
        .copied()
        .filter(move |op| !v03 || op.v03_name().is_some())
}

/// `true` when `first` starts a route, so it is never a tenant.
fn is_top_level(first: &str) -> bool {
    first == V03_PREFIX
        || Operation::ALL
            .iter()
            .any(|op| op.rest().template.trim_start_matches('/').split('/').next() == Some(first))
}

/// `(camelCase field, decoded value)` for each `{field}` of a template.
type PathFields = Vec<(&'static str, String)>;

/// How well one raw path segment fits one template segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    /// A `{field}` took the whole segment.
    Field,
    /// A literal, or a `{field}:verb` whose literal `:verb` ends the segment.
    Exact,
}

/// Matches raw (still percent-encoded) segments against a template. On a
/// match, returns how specific it was (segment by segment) and the fields.
fn fit(template: &'static str, raw: &[&str]) -> Result<Option<(Vec<Fit>, PathFields)>, NoRoute> {
    let parts: Vec<&'static str> = template.trim_start_matches('/').split('/').collect();
    if parts.len() != raw.len() {
        return Ok(None);
    }
    let mut fits = Vec::with_capacity(raw.len());
    let mut fields = Vec::new();
    for (part, seg) in parts.iter().zip(raw) {
        match part.strip_prefix('{').and_then(|p| p.split_once('}')) {
            None => {
                if decode(seg)? != *part {
                    return Ok(None);
                }
                fits.push(Fit::Exact);
            }
            Some((name, "")) => {
                fields.push((name, decode(seg)?));
                fits.push(Fit::Field);
            }
            Some((name, verb)) => {
                // The verb needs a literal ':' in the raw segment.
                match seg.rsplit_once(':') {
                    Some((id, v)) if !id.is_empty() && Some(v) == verb.strip_prefix(':') => {
                        fields.push((name, decode(id)?));
                        fits.push(Fit::Exact);
                    }
                    _ => return Ok(None),
                }
            }
        }
    }
    Ok(Some((fits, fields)))
}

/// Maps a method and a path to an operation (see the module docs for the
/// rule): the most specific template that fits the path wins; if it does
/// not take the method, the path's methods are the 405's `Allow`.
fn resolve(method: &Method, path: &str) -> Result<Route, NoRoute> {
    let raw = path.strip_prefix('/').unwrap_or(path);
    let segments: Vec<&str> = raw.split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(NoRoute::NotFound);
    }
    let first = decode(segments[0])?;
    let (tenant, mut rest) = if is_top_level(&first) {
        (String::new(), &segments[..])
    } else {
        (first, &segments[1..])
    };
    let v03 = match rest.first() {
        Some(seg) if decode(seg)? == V03_PREFIX => {
            rest = &rest[1..];
            true
        }
        _ => false,
    };
    // Every template that fits, best first.
    let mut fitting = Vec::new();
    for op in routed(v03) {
        if let Some((fits, fields)) = fit(template(op, v03), rest)? {
            fitting.push((fits, op, fields));
        }
    }
    let Some(best) = fitting.iter().map(|(fits, ..)| fits.clone()).max() else {
        return Err(NoRoute::NotFound);
    };
    let mut allowed = Vec::new();
    for (fits, op, fields) in fitting {
        if fits != best {
            continue;
        }
        let verbs = op.rest().verbs;
        if verbs.contains(&method.as_str()) {
            return Ok(Route {
                tenant,
                op,
                fields,
                v03,
            });
        }
        allowed.extend(
            verbs
                .iter()
                .filter_map(|v| Method::from_bytes(v.as_bytes()).ok()),
        );
    }
    Err(NoRoute::WrongMethod(allowed))
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
    // Who is calling, before anything of the body is read.
    let identity = match app.gate.authenticate(&parts).await {
        Ok(identity) => identity,
        Err(err) => return error_response(&app, &err, &[]),
    };
    let bytes = match read_body(body, app.max_body_bytes).await {
        Ok(b) => b,
        Err(err) => {
            let status = ErrorStatus {
                http: StatusCode::PAYLOAD_TOO_LARGE,
                grpc: table.status(&err).grpc,
            };
            return json_response(status.http, rest_error_body(&err, status), &[]);
        }
    };
    let has_body = !bytes.iter().all(u8::is_ascii_whitespace);
    // POST routes read the body; the others their query.
    let reads_body = parts.method == Method::POST;
    if has_body
        && reads_body
        && let Err(err) = require_json(&parts.headers)
    {
        return error_response(&app, &err, &[]);
    }
    // The path decides the version (see `crate::params`); a 0.3 route only
    // refuses versions this server does not serve at all.
    let version = if route.v03 {
        explicit_version(&parts.headers, parts.uri.query()).map(|_| ())
    } else {
        require_v1(&parts.headers, parts.uri.query())
    };
    if let Err(err) = version {
        return error_response(&app, &err, &[]);
    }
    let call = app
        .gate
        .call_context(&identity, &parts.headers)
        .and_then(|mut call| call.use_tenant(&route.tenant).map(|()| call));
    let mut call = match call {
        Ok(call) => call,
        Err(err) => return error_response(&app, &err, &[]),
    };
    let extra = Gate::echo_headers(&call);
    // AG-UI instead of A2A frames, if asked for (1.0 streams only; its
    // `Last-Event-ID` is an AG-UI event id).
    let op = (!route.v03).then_some(route.op);
    let agui = match crate::agui::opt_in(&parts.headers, parts.uri.query(), op) {
        Ok(agui) => agui,
        Err(err) => return error_response(&app, &err, &extra),
    };
    if route.op.is_streaming() {
        match agui.map_or_else(|| last_event_id(&parts.headers), |a| Ok(a.resume_after())) {
            Ok(after) => call.resume_after = after,
            Err(err) => return error_response(&app, &err, &extra),
        }
    }
    let agui = agui.map(|a| (a, call.clone()));
    let input = Input {
        tenant: &call.tenant,
        uri: &parts.uri,
        body: if has_body && reads_body { &bytes } else { &[] },
    };
    let result = if route.v03 {
        crate::rest_v03::dispatch(&app, &call, &route, &input).await
    } else {
        dispatch(&app, &call, &route, &input).await
    };
    let reply = match result {
        Ok(reply) => reply,
        Err(err) => return error_response(&app, &err, &extra),
    };
    let reply = match agui_or_reply(&app, reply, agui, &extra) {
        Ok(agui_stream) => return agui_stream,
        Err(reply) => reply,
    };
    match reply {
        Reply::Json(body) => json_response(StatusCode::OK, body, &extra),
        Reply::Stream(stream) => sse(table, stream, &extra, |ev| {
            serde_json::to_string(&ev).unwrap_or_default()
        }),
        Reply::Stream03(stream) => sse(table, stream, &extra, |ev| {
            serde_json::to_string(&switchboard_protocol::v03::rest::StreamResponse::from(ev))
                .unwrap_or_default()
        }),
    }
}

/// What a request carries besides its route.
pub(crate) struct Input<'a> {
    pub(crate) tenant: &'a str,
    pub(crate) uri: &'a Uri,
    pub(crate) body: &'a [u8],
}

pub(crate) fn ok<T: Serialize>(value: &T) -> Result<Reply, A2AError> {
    // Serializing plain data structures cannot fail.
    Ok(Reply::Json(serde_json::to_vec(value).unwrap_or_default()))
}

/// Builds the route's request (the body of a POST, the query of the
/// others, the path's fields and the tenant) and runs it.
async fn dispatch(
    app: &AppState,
    call: &CallContext,
    route: &Route,
    input: &Input<'_>,
) -> Result<Reply, A2AError> {
    let request = A2aRequest::from_value(route.op, Value::Object(request_map(route, input)?))?;
    match app.handler.handle(call, request).await? {
        // An empty answer (DeleteTaskPushNotificationConfig) is `{}`, as
        // the proto's `Empty` is in ProtoJSON.
        Answer::Unary(answer) => match serde_json::to_value(&answer) {
            Ok(Value::Null) => ok(&serde_json::json!({})),
            Ok(value) => ok(&value),
            Err(e) => Err(A2AError::Internal(e.to_string())),
        },
        Answer::Stream(stream) => Ok(Reply::Stream(stream)),
    }
}

/// The request object of `route` as JSON: the body (empty = `{}`) when the
/// route reads one, else its query parameters; with the tenant and the
/// path's fields filled in. A body that contradicts the path is refused.
pub(crate) fn request_map(
    route: &Route,
    input: &Input<'_>,
) -> Result<Map<String, Value>, A2AError> {
    let mut map = if !input.body.is_empty() {
        match serde_json::from_slice::<Value>(input.body) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(A2AError::invalid_field("body", "must be a JSON object")),
            Err(e) => return Err(A2AError::Parse(strip_position(&e.to_string()))),
        }
    } else {
        query_map(input, route.op.rest().query)?
    };
    let path: Vec<(&str, &str)> = route.fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    fill_path_fields(&mut map, input.tenant, &path)?;
    Ok(map)
}

/// The query parameters `known` of the request's URI, as JSON values.
fn query_map(input: &Input<'_>, known: &[QueryParam]) -> Result<Map<String, Value>, A2AError> {
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
        if let Some(param) = known
            .iter()
            .find(|p| p.name == name || snake_case(p.name) == name)
        {
            map.insert(
                param.name.to_string(),
                parse_query(param.kind, param.name, &raw)?,
            );
        }
    }
    Ok(map)
}

/// `taskId` → `task_id`: the snake_case alias ProtoJSON also accepts.
fn snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Puts the tenant and the path's `(field, value)`s into `map`. A different
/// non-empty value already in the body is an error, since the path decides.
fn fill_path_fields(
    map: &mut Map<String, Value>,
    tenant: &str,
    path: &[(&str, &str)],
) -> Result<(), A2AError> {
    for (name, value) in std::iter::once(&("tenant", tenant)).chain(path) {
        let snake = snake_case(name);
        for key in [*name, snake.as_str()] {
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
        map.remove(&snake);
        if value.is_empty() {
            map.remove(*name);
        } else {
            map.insert(name.to_string(), Value::String(value.to_string()));
        }
    }
    Ok(())
}

/// Drops serde's " at line 1 column 5" suffix.
pub(crate) use switchboard_protocol::jsonrpc::strip_position;

/// Converts one query value into the JSON the request type expects.
fn parse_query(kind: QueryKind, name: &str, raw: &str) -> Result<Value, A2AError> {
    let bad = |what: &str| A2AError::invalid_field(name, format!("must be {what}, got {raw:?}"));
    match kind {
        QueryKind::Str => Ok(Value::String(raw.to_string())),
        QueryKind::Int => raw
            .trim()
            .parse::<i32>()
            .map(Value::from)
            .map_err(|_| bad("a 32-bit integer")),
        QueryKind::Bool => match raw.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(bad("true or false")),
        },
        QueryKind::State => {
            let v = Value::String(raw.trim().to_string());
            serde_json::from_value::<TaskState>(v.clone())
                .map(|_| v)
                .map_err(|_| bad("a task state name such as TASK_STATE_WORKING"))
        }
        QueryKind::Timestamp => {
            let v = Value::String(raw.trim().to_string());
            let mut probe = Map::new();
            probe.insert("statusTimestampAfter".into(), v.clone());
            serde_json::from_value::<ListTasksRequest>(Value::Object(probe))
                .map(|_| v)
                .map_err(|_| bad("an RFC 3339 timestamp such as 2025-11-09T10:30:00Z"))
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
            table_error(table, &err, &[])
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
            table_error(table, &err, &[])
        }
    }
}

/// An error answer with the table's status; an Unauthenticated one carries
/// the authenticator's `WWW-Authenticate` challenge.
fn error_response(app: &AppState, err: &A2AError, extra: &[(&'static str, String)]) -> Response {
    let mut headers = extra.to_vec();
    headers.extend(app.gate.error_headers(err));
    table_error(app.error_table, err, &headers)
}

fn table_error(table: ErrorTable, err: &A2AError, extra: &[(&'static str, String)]) -> Response {
    let status = table.status(err);
    json_response(status.http, rest_error_body(err, status), extra)
}

/// The SSE answer of a stream: each event as `data: <encode(event)>`, an
/// error as `event: error` with the Google error JSON.
fn sse(
    table: ErrorTable,
    stream: EventStream,
    extra: &[(&'static str, String)],
    encode: fn(switchboard_protocol::StreamResponse) -> String,
) -> Response {
    let frames = event_frames(stream, encode, move |err| {
        String::from_utf8(rest_error_body(err, table.status(err))).unwrap_or_default()
    });
    sse_response(frames, extra)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn r(method: Method, path: &str) -> Result<Route, NoRoute> {
        resolve(&method, path)
    }

    /// The routes as the tests name them: an operation with its path ids
    /// (`task_id`, then `id`).
    enum Op {
        SendMessage,
        SendStreamingMessage,
        GetTask(&'static str),
        ListTasks,
        CancelTask(&'static str),
        SubscribeToTask(&'static str),
        CreatePushConfig(&'static str),
        ListPushConfigs(&'static str),
        GetPushConfig(&'static str, &'static str),
        DeletePushConfig(&'static str, &'static str),
        GetExtendedAgentCard,
    }
    use Op::*;

    fn resolved(tenant: &str, op: Op, v03: bool) -> Result<Route, NoRoute> {
        use Operation as O;
        let (op, fields) = match op {
            SendMessage => (O::SendMessage, vec![]),
            SendStreamingMessage => (O::SendStreamingMessage, vec![]),
            GetTask(id) => (O::GetTask, vec![("id", id)]),
            ListTasks => (O::ListTasks, vec![]),
            CancelTask(id) => (O::CancelTask, vec![("id", id)]),
            SubscribeToTask(id) => (O::SubscribeToTask, vec![("id", id)]),
            CreatePushConfig(task) => (O::CreateTaskPushNotificationConfig, vec![("taskId", task)]),
            ListPushConfigs(task) => (O::ListTaskPushNotificationConfigs, vec![("taskId", task)]),
            GetPushConfig(task, id) => (
                O::GetTaskPushNotificationConfig,
                vec![("taskId", task), ("id", id)],
            ),
            DeletePushConfig(task, id) => (
                O::DeleteTaskPushNotificationConfig,
                vec![("taskId", task), ("id", id)],
            ),
            GetExtendedAgentCard => (O::GetExtendedAgentCard, vec![]),
        };
        Ok(Route {
            tenant: tenant.into(),
            op,
            fields: fields
                .into_iter()
                .map(|(n, v)| (n, v.to_string()))
                .collect(),
            v03,
        })
    }

    fn route(tenant: &str, op: Op) -> Result<Route, NoRoute> {
        resolved(tenant, op, false)
    }

    fn v03(tenant: &str, op: Op) -> Result<Route, NoRoute> {
        resolved(tenant, op, true)
    }

    fn wrong_method(allowed: &[Method]) -> Result<Route, NoRoute> {
        Err(NoRoute::WrongMethod(allowed.to_vec()))
    }

    const NOT_FOUND: Result<Route, NoRoute> = Err(NoRoute::NotFound);

    /// Resolves each `"METHOD /path"` and compares with what it should be.
    fn check(cases: Vec<(&str, Result<Route, NoRoute>)>) {
        for (request, expected) in cases {
            let (method, path) = request.split_once(' ').unwrap();
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            assert_eq!(r(method, path), expected, "{request}");
        }
    }

    #[test]
    fn plain_routes() {
        check(vec![
            ("POST /message:send", route("", SendMessage)),
            ("POST /message:stream", route("", SendStreamingMessage)),
            ("GET /tasks", route("", ListTasks)),
            ("GET /tasks/t1", route("", GetTask("t1"))),
            ("POST /tasks/t1:cancel", route("", CancelTask("t1"))),
            ("GET /tasks/t1:subscribe", route("", SubscribeToTask("t1"))),
            ("POST /tasks/t1:subscribe", route("", SubscribeToTask("t1"))),
            (
                "POST /tasks/t1/pushNotificationConfigs",
                route("", CreatePushConfig("t1")),
            ),
            (
                "GET /tasks/t1/pushNotificationConfigs",
                route("", ListPushConfigs("t1")),
            ),
            (
                "GET /tasks/t1/pushNotificationConfigs/c1",
                route("", GetPushConfig("t1", "c1")),
            ),
            (
                "DELETE /tasks/t1/pushNotificationConfigs/c1",
                route("", DeletePushConfig("t1", "c1")),
            ),
            ("GET /extendedAgentCard", route("", GetExtendedAgentCard)),
        ]);
    }

    #[test]
    fn tenant_is_the_first_segment_unless_it_is_a_route_name() {
        check(vec![
            ("POST /acme/message:send", route("acme", SendMessage)),
            (
                "POST /acme/tasks/t1:cancel",
                route("acme", CancelTask("t1")),
            ),
            // An escaped slash stays inside the tenant.
            ("GET /a%2Fb/tasks", route("a/b", ListTasks)),
            // `tasks` as first segment is never a tenant.
            ("GET /tasks/tasks", route("", GetTask("tasks"))),
            ("POST /tasks/message:send", wrong_method(&[Method::GET])),
            ("POST /message:send/message:send", NOT_FOUND),
            // Route names are compared after decoding.
            ("POST /message%3Asend/message:send", NOT_FOUND),
            // A tenant that looks like an id or verb is just a tenant.
            ("GET /t1:cancel/tasks", route("t1:cancel", ListTasks)),
            ("GET /acme", NOT_FOUND),
        ]);
    }

    #[test]
    fn verbs_need_a_literal_colon_and_ids_keep_theirs() {
        check(vec![
            ("GET /tasks/a:b", route("", GetTask("a:b"))),
            ("GET /tasks/x%3Acancel", route("", GetTask("x:cancel"))),
            ("POST /tasks/a:b:cancel", route("", CancelTask("a:b"))),
            (
                "POST /tasks/a%3Acancel:cancel",
                route("", CancelTask("a:cancel")),
            ),
            ("GET /tasks/t1:cancel", wrong_method(&[Method::POST])),
            ("GET /tasks/:cancel", route("", GetTask(":cancel"))),
        ]);
    }

    #[test]
    fn v1_starts_the_03_routes_and_is_never_a_tenant() {
        check(vec![
            ("POST /v1/message:send", v03("", SendMessage)),
            (
                "POST /acme/v1/message:stream",
                v03("acme", SendStreamingMessage),
            ),
            ("GET /v1/tasks/t1", v03("", GetTask("t1"))),
            ("POST /v1/tasks/t1:cancel", v03("", CancelTask("t1"))),
            ("GET /v1/card", v03("", GetExtendedAgentCard)),
            (
                "DELETE /v1/tasks/t/pushNotificationConfigs/c",
                v03("", DeletePushConfig("t", "c")),
            ),
            // 0.3 has no ListTasks, and the 1.0 card route is not under /v1.
            ("GET /v1/tasks", NOT_FOUND),
            ("GET /v1/extendedAgentCard", NOT_FOUND),
            ("GET /card", NOT_FOUND),
            // Other tenants are untouched.
            ("GET /v2/tasks", route("v2", ListTasks)),
        ]);
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
            Err(NoRoute::WrongMethod(vec![Method::GET, Method::DELETE]))
        );
    }

    #[test]
    fn query_values_are_typed() {
        assert_eq!(
            parse_query(QueryKind::Int, "pageSize", "7").unwrap(),
            Value::from(7)
        );
        assert!(parse_query(QueryKind::Int, "pageSize", "seven").is_err());
        assert!(parse_query(QueryKind::Int, "pageSize", "").is_err());
        assert_eq!(
            parse_query(QueryKind::Bool, "includeArtifacts", "TRUE").unwrap(),
            Value::Bool(true)
        );
        assert!(parse_query(QueryKind::Bool, "includeArtifacts", "1").is_err());
        assert!(parse_query(QueryKind::State, "status", "TASK_STATE_WORKING").is_ok());
        let err = parse_query(QueryKind::State, "status", "RUNNING").unwrap_err();
        assert_eq!(err.reason(), "INVALID_PARAMS");
        assert!(err.to_string().contains("status"), "{err}");
        assert!(
            parse_query(
                QueryKind::Timestamp,
                "statusTimestampAfter",
                "2025-11-09T10:30:00Z"
            )
            .is_ok()
        );
        assert!(parse_query(QueryKind::Timestamp, "statusTimestampAfter", "yesterday").is_err());
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
        let ext = switchboard_protocol::EXTENSIONS_HEADER;
        let resp = sse(ErrorTable::V1_0_0, stream, &[(ext, "urn:x".into())], |ev| {
            serde_json::to_string(&ev).unwrap()
        });
        assert_eq!(resp.headers()[ext], "urn:x");
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8(body.to_vec()).unwrap();
        let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
        assert_eq!(frames.len(), 2, "{text}");
        assert!(frames[0].contains("id: 7"), "{text}");
        // The JSON of a frame's `data:` line.
        let data_of = |frame: &str| -> Value {
            let line = frame.lines().find_map(|l| l.strip_prefix("data: "));
            serde_json::from_str(line.unwrap()).unwrap()
        };
        let data = data_of(frames[0]);
        assert_eq!(data["message"]["parts"][0]["text"], "hi");
        assert!(frames[1].starts_with("event: error"), "{text}");
        let err = data_of(frames[1]);
        assert_eq!(err["error"]["code"], 500);
        assert_eq!(err["error"]["status"], "INTERNAL");
        assert_eq!(err["error"]["details"][0]["reason"], "INTERNAL_ERROR");
    }

    #[test]
    fn path_fields_win_and_contradictions_are_refused() {
        let mut m = Map::new();
        m.insert("id".into(), Value::String("t1".into()));
        m.insert("tenant".into(), Value::String(String::new()));
        fill_path_fields(&mut m, "", &[("id", "t1")]).unwrap();
        assert_eq!(m.get("tenant"), None);
        let mut m = Map::new();
        m.insert("id".into(), Value::String("other".into()));
        assert!(fill_path_fields(&mut m, "", &[("id", "t1")]).is_err());
        let mut m = Map::new();
        m.insert("tenant".into(), Value::String("x".into()));
        assert!(fill_path_fields(&mut m, "", &[]).is_err());
        let mut m = Map::new();
        m.insert("task_id".into(), Value::String("t1".into()));
        fill_path_fields(&mut m, "acme", &[("taskId", "t1")]).unwrap();
        assert_eq!(m.get("taskId"), Some(&Value::String("t1".into())));
        assert_eq!(m.get("tenant"), Some(&Value::String("acme".into())));
        assert_eq!(m.get("task_id"), None);
    }
}
