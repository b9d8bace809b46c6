//! The A2A error model.
//!
//! [`A2AError`] is the one error type every layer speaks. Each binding maps
//! it exactly once to its wire form: a JSON-RPC code (see [`A2AError::code`]),
//! an HTTP status, or a gRPC status, always with a `google.rpc.ErrorInfo`
//! whose `reason` is [`A2AError::reason`] and whose domain is
//! [`ERROR_DOMAIN`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The `domain` of every A2A `google.rpc.ErrorInfo`.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// The `@type` of a `google.rpc.ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The `@type` of a `google.rpc.BadRequest` detail.
pub const BAD_REQUEST_TYPE: &str = "type.googleapis.com/google.rpc.BadRequest";

/// One field that failed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldViolation {
    /// Path of the field, e.g. `message.parts`.
    pub field: String,
    /// What is wrong with it.
    pub description: String,
}

/// Every error an A2A operation can return.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum A2AError {
    /// The body is not valid JSON (-32700).
    #[error("Invalid JSON payload: {0}")]
    Parse(String),
    /// The body is JSON but not a valid request (-32600).
    #[error("Request payload validation error: {0}")]
    InvalidRequest(String),
    /// No such method (-32601).
    #[error("Method not found: {0}")]
    MethodNotFound(String),
    /// The parameters are invalid (-32602).
    #[error("Invalid parameters: {message}")]
    InvalidParams {
        /// Human-readable summary.
        message: String,
        /// The fields at fault, when known.
        violations: Vec<FieldViolation>,
    },
    /// Something broke on the server (-32603).
    #[error("Internal error: {0}")]
    Internal(String),
    /// No such task, or not visible to the caller (-32001).
    #[error("Task not found: {0}")]
    TaskNotFound(String),
    /// The task cannot be canceled in its current state (-32002).
    #[error("Task cannot be canceled{}", not_cancelable_detail(task_id, state))]
    TaskNotCancelable {
        /// The task.
        task_id: String,
        /// Its state, as a proto enum name.
        state: String,
    },
    /// Push notifications are not supported (-32003).
    #[error("Push Notification is not supported")]
    PushNotificationNotSupported,
    /// The operation, or this use of it, is not supported (-32004).
    #[error("This operation is not supported: {0}")]
    UnsupportedOperation(String),
    /// A media type is not supported (-32005).
    #[error("Incompatible content types: {0}")]
    ContentTypeNotSupported(String),
    /// The agent produced something that breaks the protocol (-32006).
    #[error("Invalid agent response: {0}")]
    InvalidAgentResponse(String),
    /// No extended card is configured (-32007).
    #[error("Extended agent card is not configured")]
    ExtendedAgentCardNotConfigured,
    /// A required extension was not activated by the client (-32008).
    #[error("Extension support required: {0}")]
    ExtensionSupportRequired(String),
    /// The requested protocol version is not served here (-32009).
    #[error("A2A version '{0}' is not supported")]
    VersionNotSupported(String),
    /// Missing or invalid credentials (JSON-RPC custom code -31401; HTTP
    /// 401, gRPC UNAUTHENTICATED). Not an A2A error code: the spec leaves
    /// authentication to the transport and asks for "a JSON-RPC custom
    /// error", so the code sits outside the reserved -32768..-32000 range.
    #[error("Authentication required: {0}")]
    Unauthenticated(String),
    /// The caller is known but may not do this (JSON-RPC custom code
    /// -31403; HTTP 403, gRPC PERMISSION_DENIED). Never used for another
    /// caller's tasks: those are TaskNotFound, so existence is not leaked.
    #[error("Permission denied: {0}")]
    PermissionDenied(String),
    /// The caller used up a quota (request rate, concurrent tasks,
    /// subscribers, response size): JSON-RPC custom code -31429; HTTP 429
    /// (with `Retry-After` where waiting helps), gRPC RESOURCE_EXHAUSTED.
    /// The A2A specification names no error for quotas, so this is the
    /// transports' own (gRPC's canonical code, HTTP's status), like the
    /// authentication errors above.
    #[error("Resource exhausted: {0}")]
    ResourceExhausted(String),
}

/// The JSON-RPC code of [`A2AError::Unauthenticated`].
pub const UNAUTHENTICATED_CODE: i32 = -31401;
/// The JSON-RPC code of [`A2AError::PermissionDenied`].
pub const PERMISSION_DENIED_CODE: i32 = -31403;
/// The JSON-RPC code of [`A2AError::ResourceExhausted`].
pub const RESOURCE_EXHAUSTED_CODE: i32 = -31429;

fn not_cancelable_detail(task_id: &str, state: &str) -> String {
    match (task_id.is_empty(), state.is_empty()) {
        (false, _) => format!(": task {task_id} is {state}"),
        (true, false) => format!(": {state}"),
        (true, true) => String::new(),
    }
}

impl A2AError {
    /// A -32602 error with a single field violation.
    pub fn invalid_field(field: impl Into<String>, description: impl Into<String>) -> Self {
        let field = field.into();
        let description = description.into();
        A2AError::InvalidParams {
            message: format!("{field}: {description}"),
            violations: vec![FieldViolation { field, description }],
        }
    }

    /// A -32602 error with a message and no field detail.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        A2AError::InvalidParams {
            message: message.into(),
            violations: Vec::new(),
        }
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            Self::Parse(_) => -32700,
            Self::InvalidRequest(_) => -32600,
            Self::MethodNotFound(_) => -32601,
            Self::InvalidParams { .. } => -32602,
            Self::Internal(_) => -32603,
            Self::TaskNotFound(_) => -32001,
            Self::TaskNotCancelable { .. } => -32002,
            Self::PushNotificationNotSupported => -32003,
            Self::UnsupportedOperation(_) => -32004,
            Self::ContentTypeNotSupported(_) => -32005,
            Self::InvalidAgentResponse(_) => -32006,
            Self::ExtendedAgentCardNotConfigured => -32007,
            Self::ExtensionSupportRequired(_) => -32008,
            Self::VersionNotSupported(_) => -32009,
            Self::Unauthenticated(_) => UNAUTHENTICATED_CODE,
            Self::PermissionDenied(_) => PERMISSION_DENIED_CODE,
            Self::ResourceExhausted(_) => RESOURCE_EXHAUSTED_CODE,
        }
    }

    /// Every [`A2AError::reason`], in the order of the variants: for
    /// whoever keeps something per reason (a metrics label, a table).
    pub const REASONS: [&'static str; 17] = [
        "PARSE_ERROR",
        "INVALID_REQUEST",
        "METHOD_NOT_FOUND",
        "INVALID_PARAMS",
        "INTERNAL_ERROR",
        "TASK_NOT_FOUND",
        "TASK_NOT_CANCELABLE",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "UNSUPPORTED_OPERATION",
        "CONTENT_TYPE_NOT_SUPPORTED",
        "INVALID_AGENT_RESPONSE",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        "EXTENSION_SUPPORT_REQUIRED",
        "VERSION_NOT_SUPPORTED",
        "UNAUTHENTICATED",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
    ];

    /// The `google.rpc.ErrorInfo` reason, e.g. `TASK_NOT_FOUND`; always
    /// one of [`A2AError::REASONS`].
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Parse(_) => "PARSE_ERROR",
            Self::InvalidRequest(_) => "INVALID_REQUEST",
            Self::MethodNotFound(_) => "METHOD_NOT_FOUND",
            Self::InvalidParams { .. } => "INVALID_PARAMS",
            Self::Internal(_) => "INTERNAL_ERROR",
            Self::TaskNotFound(_) => "TASK_NOT_FOUND",
            Self::TaskNotCancelable { .. } => "TASK_NOT_CANCELABLE",
            Self::PushNotificationNotSupported => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            Self::UnsupportedOperation(_) => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported(_) => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::InvalidAgentResponse(_) => "INVALID_AGENT_RESPONSE",
            Self::ExtendedAgentCardNotConfigured => "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
            Self::ExtensionSupportRequired(_) => "EXTENSION_SUPPORT_REQUIRED",
            Self::VersionNotSupported(_) => "VERSION_NOT_SUPPORTED",
            Self::Unauthenticated(_) => "UNAUTHENTICATED",
            Self::PermissionDenied(_) => "PERMISSION_DENIED",
            Self::ResourceExhausted(_) => "RESOURCE_EXHAUSTED",
        }
    }

    /// The JSON-RPC code of the error an `ErrorInfo` reason names (the
    /// inverse of [`A2AError::reason`]), for clients reading REST and gRPC
    /// errors; `None` for a reason that is not A2A's.
    pub fn code_for_reason(reason: &str) -> Option<i32> {
        Some(match reason {
            "PARSE_ERROR" => -32700,
            "INVALID_REQUEST" => -32600,
            "METHOD_NOT_FOUND" => -32601,
            "INVALID_PARAMS" => -32602,
            "INTERNAL_ERROR" => -32603,
            "TASK_NOT_FOUND" => -32001,
            "TASK_NOT_CANCELABLE" => -32002,
            "PUSH_NOTIFICATION_NOT_SUPPORTED" => -32003,
            "UNSUPPORTED_OPERATION" => -32004,
            "CONTENT_TYPE_NOT_SUPPORTED" => -32005,
            "INVALID_AGENT_RESPONSE" => -32006,
            "EXTENDED_AGENT_CARD_NOT_CONFIGURED" => -32007,
            "EXTENSION_SUPPORT_REQUIRED" => -32008,
            "VERSION_NOT_SUPPORTED" => -32009,
            "UNAUTHENTICATED" => UNAUTHENTICATED_CODE,
            "PERMISSION_DENIED" => PERMISSION_DENIED_CODE,
            "RESOURCE_EXHAUSTED" => RESOURCE_EXHAUSTED_CODE,
            _ => return None,
        })
    }

    /// Structured context for `ErrorInfo.metadata` (string values only).
    pub fn metadata(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        match self {
            Self::TaskNotFound(id) => {
                m.insert("taskId".into(), id.clone());
            }
            Self::TaskNotCancelable { task_id, state } => {
                m.insert("taskId".into(), task_id.clone());
                m.insert("state".into(), state.clone());
            }
            Self::MethodNotFound(method) => {
                m.insert("method".into(), method.clone());
            }
            Self::ExtensionSupportRequired(uri) => {
                m.insert("extension".into(), uri.clone());
            }
            Self::VersionNotSupported(v) => {
                m.insert("version".into(), v.clone());
                m.insert(
                    "supportedVersions".into(),
                    crate::card::PROTOCOL_VERSION.into(),
                );
            }
            _ => {}
        }
        m
    }

    /// The error details as ProtoJSON `Any` objects: an `ErrorInfo`, plus a
    /// `BadRequest` when field violations are known.
    pub fn details(&self) -> Vec<Value> {
        let mut details = vec![json!({
            "@type": ERROR_INFO_TYPE,
            "reason": self.reason(),
            "domain": ERROR_DOMAIN,
            "metadata": self.metadata(),
        })];
        if let Self::InvalidParams { violations, .. } = self
            && !violations.is_empty()
        {
            details.push(json!({ "@type": BAD_REQUEST_TYPE, "fieldViolations": violations }));
        }
        details
    }

    /// Rebuilds an error from a JSON-RPC code and message (client side).
    pub fn from_code(code: i32, message: String) -> Self {
        Self::from_wire(code, message, None)
    }

    /// Rebuilds an error from its wire form: the JSON-RPC code, the message
    /// and the `data` details. Structured fields come from the
    /// `ErrorInfo.metadata` when present, and the standard wording this
    /// type adds on display is taken off the message, so displaying the
    /// result does not repeat it ("Task not found: Task not found: x").
    pub fn from_wire(code: i32, message: String, data: Option<&Value>) -> Self {
        let info = data
            .and_then(Value::as_array)
            .and_then(|d| d.iter().find(|v| v["@type"] == ERROR_INFO_TYPE))
            .map(|v| &v["metadata"]);
        let meta = |key: &str| info.and_then(|m| m[key].as_str()).map(str::to_string);
        let strip = |prefix: &str| {
            message
                .strip_prefix(prefix)
                .map(str::to_string)
                .unwrap_or_else(|| message.clone())
        };
        match code {
            -32700 => Self::Parse(strip("Invalid JSON payload: ")),
            -32600 => Self::InvalidRequest(strip("Request payload validation error: ")),
            -32601 => {
                Self::MethodNotFound(meta("method").unwrap_or_else(|| strip("Method not found: ")))
            }
            -32602 => Self::InvalidParams {
                message: strip("Invalid parameters: "),
                violations: Vec::new(),
            },
            -32001 => {
                Self::TaskNotFound(meta("taskId").unwrap_or_else(|| strip("Task not found: ")))
            }
            -32002 => Self::TaskNotCancelable {
                task_id: meta("taskId").unwrap_or_default(),
                state: meta("state").unwrap_or_else(|| {
                    let rest = message
                        .strip_prefix("Task cannot be canceled")
                        .unwrap_or(&message);
                    rest.trim_start_matches(':').trim().to_string()
                }),
            },
            -32003 => Self::PushNotificationNotSupported,
            -32004 => Self::UnsupportedOperation(strip("This operation is not supported: ")),
            -32005 => Self::ContentTypeNotSupported(strip("Incompatible content types: ")),
            -32006 => Self::InvalidAgentResponse(strip("Invalid agent response: ")),
            -32007 => Self::ExtendedAgentCardNotConfigured,
            -32008 => Self::ExtensionSupportRequired(
                meta("extension").unwrap_or_else(|| strip("Extension support required: ")),
            ),
            -32009 => Self::VersionNotSupported(meta("version").unwrap_or(message)),
            UNAUTHENTICATED_CODE => Self::Unauthenticated(strip("Authentication required: ")),
            PERMISSION_DENIED_CODE => Self::PermissionDenied(strip("Permission denied: ")),
            RESOURCE_EXHAUSTED_CODE => Self::ResourceExhausted(strip("Resource exhausted: ")),
            _ => Self::Internal(strip("Internal error: ")),
        }
    }
}
