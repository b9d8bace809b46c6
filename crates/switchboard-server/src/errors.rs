//! How an [`A2AError`] becomes an HTTP status and a gRPC status: ONE table.
//!
//! JSON-RPC carries errors as codes inside an HTTP 200 answer, but the
//! HTTP+JSON (REST) and gRPC bindings use their transport's status. The spec
//! published two versions of that mapping, and both are in use:
//!
//! | error | v1.0.1 (default) gRPC / HTTP | v1.0.0 gRPC / HTTP |
//! |---|---|---|
//! | TaskNotFound | NOT_FOUND / 404 | NOT_FOUND / 404 |
//! | TaskNotCancelable | FAILED_PRECONDITION / 400 | FAILED_PRECONDITION / **409** |
//! | PushNotificationNotSupported | FAILED_PRECONDITION / 400 | **UNIMPLEMENTED** / 400 |
//! | UnsupportedOperation | FAILED_PRECONDITION / 400 | **UNIMPLEMENTED** / 400 |
//! | ContentTypeNotSupported | INVALID_ARGUMENT / 400 | INVALID_ARGUMENT / **415** |
//! | InvalidAgentResponse | INTERNAL / 500 | INTERNAL / **502** |
//! | ExtendedAgentCardNotConfigured | FAILED_PRECONDITION / 400 | same |
//! | ExtensionSupportRequired | FAILED_PRECONDITION / 400 | same |
//! | VersionNotSupported | FAILED_PRECONDITION / 400 | **UNIMPLEMENTED** / 400 |
//!
//! Authentication failures are transport errors in every binding (spec
//! §3.3.2): Unauthenticated → UNAUTHENTICATED / 401, PermissionDenied →
//! PERMISSION_DENIED / 403 in both versions (JSON-RPC sends them with those
//! HTTP statuses too, and custom codes -31401 / -31403). Quotas, which the
//! spec names no error for, are ResourceExhausted → RESOURCE_EXHAUSTED / 429
//! (JSON-RPC: HTTP 429 and custom code -31429), with `Retry-After` when the
//! request rate is what ran out.
//!
//! The generic JSON-RPC errors map the same way in both versions (as the
//! Python reference SDK does): Parse, InvalidRequest and InvalidParams →
//! INVALID_ARGUMENT / 400, MethodNotFound → NOT_FOUND / 404, Internal (and
//! any error this table does not know yet) → INTERNAL / 500.
//!
//! v1.0.1 is what the Python SDK ≥ 1.0.3 sends; v1.0.0 is what the 1.0
//! conformance suites expect. Pick one per server with
//! [`crate::A2aServer::error_table`]. The gRPC column is part of the same
//! table on purpose: a gRPC binding reuses [`ErrorTable::status`] instead of
//! keeping a second mapping that could drift.
//!
//! On the REST wire an error is a `google.rpc.Status` in its JSON form
//! (AIP-193), built by [`rest_error_body`]:
//!
//! ```text
//! HTTP/1.1 404
//! {"error":{"code":404,"status":"NOT_FOUND","message":"Task not found: t1",
//!   "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",
//!               "reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]}}
//! ```
//!
//! `status` is the table's gRPC name (so in v1.0.0 a 400 can say
//! `UNIMPLEMENTED`, exactly as that version of the spec pairs them), and
//! `details` is [`A2AError::details`]: always an `ErrorInfo` whose `reason`
//! identifies the error, since several errors share one HTTP status.

use http::StatusCode;
use serde_json::json;
use switchboard_protocol::A2AError;

/// Which published version of the error → status mapping to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorTable {
    /// The table of spec v1.0.0 (409, 415, 502 and UNIMPLEMENTED in places).
    V1_0_0,
    /// The table of spec v1.0.1 and later (the default).
    #[default]
    V1_0_1,
}

/// The canonical gRPC status codes (`google.rpc.Code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum GrpcCode {
    /// 0
    Ok = 0,
    /// 1
    Cancelled = 1,
    /// 2
    Unknown = 2,
    /// 3
    InvalidArgument = 3,
    /// 4
    DeadlineExceeded = 4,
    /// 5
    NotFound = 5,
    /// 6
    AlreadyExists = 6,
    /// 7
    PermissionDenied = 7,
    /// 8
    ResourceExhausted = 8,
    /// 9
    FailedPrecondition = 9,
    /// 10
    Aborted = 10,
    /// 11
    OutOfRange = 11,
    /// 12
    Unimplemented = 12,
    /// 13
    Internal = 13,
    /// 14
    Unavailable = 14,
    /// 15
    DataLoss = 15,
    /// 16
    Unauthenticated = 16,
}

impl GrpcCode {
    /// The numeric code, as sent in `grpc-status` (the discriminant).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The name, as written in the `status` field of a JSON error body.
    pub fn name(self) -> &'static str {
        match self {
            GrpcCode::Ok => "OK",
            GrpcCode::Cancelled => "CANCELLED",
            GrpcCode::Unknown => "UNKNOWN",
            GrpcCode::InvalidArgument => "INVALID_ARGUMENT",
            GrpcCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            GrpcCode::NotFound => "NOT_FOUND",
            GrpcCode::AlreadyExists => "ALREADY_EXISTS",
            GrpcCode::PermissionDenied => "PERMISSION_DENIED",
            GrpcCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            GrpcCode::FailedPrecondition => "FAILED_PRECONDITION",
            GrpcCode::Aborted => "ABORTED",
            GrpcCode::OutOfRange => "OUT_OF_RANGE",
            GrpcCode::Unimplemented => "UNIMPLEMENTED",
            GrpcCode::Internal => "INTERNAL",
            GrpcCode::Unavailable => "UNAVAILABLE",
            GrpcCode::DataLoss => "DATA_LOSS",
            GrpcCode::Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

/// One row of the table: what an error looks like on HTTP and on gRPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorStatus {
    /// The HTTP status of a REST error answer.
    pub http: StatusCode,
    /// The gRPC status; its name is also the `status` of a REST error body.
    pub grpc: GrpcCode,
}

impl ErrorTable {
    /// The HTTP and gRPC status of `err` in this version of the table.
    pub fn status(self, err: &A2AError) -> ErrorStatus {
        use GrpcCode::*;
        // Every REST and gRPC error answer passes here: the request's
        // metrics and span record it (`switchboard_telemetry::probe`).
        switchboard_telemetry::probe::note_error(err.reason());
        let v100 = self == ErrorTable::V1_0_0;
        let (http, grpc) = match err {
            A2AError::Parse(_) | A2AError::InvalidRequest(_) | A2AError::InvalidParams { .. } => {
                (400, InvalidArgument)
            }
            A2AError::MethodNotFound(_) => (404, NotFound),
            A2AError::Internal(_) => (500, Internal),
            A2AError::TaskNotFound(_) => (404, NotFound),
            A2AError::TaskNotCancelable { .. } => {
                (if v100 { 409 } else { 400 }, FailedPrecondition)
            }
            A2AError::PushNotificationNotSupported | A2AError::UnsupportedOperation(_) => (
                400,
                if v100 {
                    Unimplemented
                } else {
                    FailedPrecondition
                },
            ),
            A2AError::ContentTypeNotSupported(_) => (if v100 { 415 } else { 400 }, InvalidArgument),
            A2AError::InvalidAgentResponse(_) => (if v100 { 502 } else { 500 }, Internal),
            A2AError::ExtendedAgentCardNotConfigured | A2AError::ExtensionSupportRequired(_) => {
                (400, FailedPrecondition)
            }
            A2AError::VersionNotSupported(_) => (
                400,
                if v100 {
                    Unimplemented
                } else {
                    FailedPrecondition
                },
            ),
            A2AError::Unauthenticated(_) => (401, Unauthenticated),
            A2AError::PermissionDenied(_) => (403, PermissionDenied),
            A2AError::ResourceExhausted(_) => (429, ResourceExhausted),
            // A2AError is non-exhaustive: an error added later is an
            // internal error until it gets its own row.
            _ => (500, Internal),
        };
        ErrorStatus {
            http: StatusCode::from_u16(http).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            grpc,
        }
    }
}

/// The REST error body (`google.rpc.Status` as JSON) for `err` with the
/// HTTP `status` it is sent with, and `grpc` as its `status` name.
pub fn rest_error_body(err: &A2AError, status: ErrorStatus) -> Vec<u8> {
    let body = json!({
        "error": {
            "code": status.http.as_u16(),
            "status": status.grpc.name(),
            "message": err.to_string(),
            "details": err.details(),
        }
    });
    serde_json::to_vec(&body).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// An expected (HTTP status, gRPC status name).
    type Expected = (u16, &'static str);

    // The pairs the tables use, named by the gRPC status, or by the HTTP
    // status where only one table or one variant uses them.
    const INVALID: Expected = (400, "INVALID_ARGUMENT");
    const NOT_FOUND: Expected = (404, "NOT_FOUND");
    const PRECOND: Expected = (400, "FAILED_PRECONDITION");
    const UNIMPL: Expected = (400, "UNIMPLEMENTED");
    const INTERNAL: Expected = (500, "INTERNAL");
    const CONFLICT: Expected = (409, "FAILED_PRECONDITION");
    const MEDIA_TYPE: Expected = (415, "INVALID_ARGUMENT");
    const BAD_GATEWAY: Expected = (502, "INTERNAL");
    const UNAUTHORIZED: Expected = (401, "UNAUTHENTICATED");
    const FORBIDDEN: Expected = (403, "PERMISSION_DENIED");
    const TOO_MANY: Expected = (429, "RESOURCE_EXHAUSTED");

    /// Every A2AError variant, with the expected (HTTP, gRPC) for v1.0.1
    /// and v1.0.0.
    fn cases() -> Vec<(A2AError, Expected, Expected)> {
        use A2AError::*;
        let not_cancelable = TaskNotCancelable {
            task_id: "t".into(),
            state: "TASK_STATE_COMPLETED".into(),
        };
        vec![
            (Parse("x".into()), INVALID, INVALID),
            (InvalidRequest("x".into()), INVALID, INVALID),
            (MethodNotFound("x".into()), NOT_FOUND, NOT_FOUND),
            (A2AError::invalid_field("f", "d"), INVALID, INVALID),
            (Internal("x".into()), INTERNAL, INTERNAL),
            (TaskNotFound("t".into()), NOT_FOUND, NOT_FOUND),
            (not_cancelable, PRECOND, CONFLICT),
            (PushNotificationNotSupported, PRECOND, UNIMPL),
            (UnsupportedOperation("x".into()), PRECOND, UNIMPL),
            (ContentTypeNotSupported("x".into()), INVALID, MEDIA_TYPE),
            (InvalidAgentResponse("x".into()), INTERNAL, BAD_GATEWAY),
            (ExtendedAgentCardNotConfigured, PRECOND, PRECOND),
            (ExtensionSupportRequired("urn:x".into()), PRECOND, PRECOND),
            (VersionNotSupported("0.3".into()), PRECOND, UNIMPL),
            (Unauthenticated("x".into()), UNAUTHORIZED, UNAUTHORIZED),
            (PermissionDenied("tenant".into()), FORBIDDEN, FORBIDDEN),
            (ResourceExhausted("rate".into()), TOO_MANY, TOO_MANY),
        ]
    }

    #[test]
    fn every_error_in_both_tables() {
        let all = cases();
        assert_eq!(all.len(), 17, "one case per A2AError variant");
        for (err, v101, v100) in all {
            for (table, (http, grpc)) in [(ErrorTable::V1_0_1, v101), (ErrorTable::V1_0_0, v100)] {
                let st = table.status(&err);
                assert_eq!(st.http.as_u16(), http, "{table:?} {err:?}");
                assert_eq!(st.grpc.name(), grpc, "{table:?} {err:?}");
                let body: serde_json::Value =
                    serde_json::from_slice(&rest_error_body(&err, st)).unwrap();
                assert_eq!(body["error"]["code"], http);
                assert_eq!(body["error"]["status"], grpc);
                assert_eq!(body["error"]["message"], err.to_string());
                let info = &body["error"]["details"][0];
                assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
                assert_eq!(info["reason"], err.reason());
                assert_eq!(info["domain"], "a2a-protocol.org");
            }
        }
    }

    #[test]
    fn default_is_v1_0_1_and_bad_request_detail_is_kept() {
        assert_eq!(ErrorTable::default(), ErrorTable::V1_0_1);
        let err = A2AError::invalid_field("pageSize", "must be between 1 and 100");
        let st = ErrorTable::default().status(&err);
        let body: serde_json::Value = serde_json::from_slice(&rest_error_body(&err, st)).unwrap();
        assert_eq!(
            body["error"]["details"][1]["@type"],
            "type.googleapis.com/google.rpc.BadRequest"
        );
        assert_eq!(
            body["error"]["details"][1]["fieldViolations"][0]["field"],
            "pageSize"
        );
    }

    #[test]
    fn grpc_codes_are_canonical() {
        assert_eq!(GrpcCode::NotFound.code(), 5);
        assert_eq!(GrpcCode::FailedPrecondition.code(), 9);
        assert_eq!(GrpcCode::Unimplemented.code(), 12);
        assert_eq!(GrpcCode::Internal.code(), 13);
        assert_eq!(GrpcCode::Unauthenticated.code(), 16);
        assert_eq!(GrpcCode::InvalidArgument.name(), "INVALID_ARGUMENT");
    }
}
