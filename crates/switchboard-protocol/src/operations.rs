//! The eleven operations as values, generated from the operation table
//! ([`for_each_operation!`](crate::for_each_operation)).
//!
//! - [`Operation`] names one operation and knows its names on every
//!   binding: the JSON-RPC method (1.0 and 0.3), the REST route and the
//!   gRPC method.
//! - [`A2aRequest`] carries one operation's canonical request, decoded from
//!   JSON-RPC params or built from a REST route.
//! - [`A2aResponse`] carries one unary answer, or one item of a stream.
//!
//! Bindings and clients work on these instead of matching method-name
//! strings, so an operation added to the table is a compile error in every
//! `match` that does not handle it yet.

use serde::Serialize;
use serde_json::Value;

use crate::error::A2AError;
use crate::jsonrpc::decode_params;
#[allow(unused_imports)] // the table names these types
use crate::{
    AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

/// How a REST query parameter's text becomes the JSON value the request
/// type expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    /// Taken as it is.
    Str,
    /// A decimal 32-bit integer.
    Int,
    /// `true` or `false` (any case).
    Bool,
    /// A task state by its enum name (`TASK_STATE_WORKING`).
    State,
    /// An RFC 3339 timestamp.
    Timestamp,
}

/// A query parameter a REST route reads: its camelCase name (its
/// snake_case form is accepted too) and how its value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryParam {
    /// The request field, camelCase.
    pub name: &'static str,
    /// How the value is read.
    pub kind: QueryKind,
}

/// An operation's HTTP+JSON route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestRoute {
    /// The HTTP methods it answers (`"GET"`, `"POST"`, `"DELETE"`); a client
    /// uses the first.
    pub verbs: &'static [&'static str],
    /// The path after the tenant, e.g. `/tasks/{id}:cancel`: `{field}`
    /// segments are request fields, `:verb` a custom verb.
    pub template: &'static str,
    /// The query parameters of a GET or DELETE.
    pub query: &'static [QueryParam],
}

macro_rules! v03_name {
    (none) => {
        None
    };
    ($name:literal) => {
        Some($name)
    };
}

macro_rules! answer_type {
    (unary $ty:ty) => {
        $ty
    };
    (stream) => {
        StreamResponse
    };
}

macro_rules! is_stream {
    (unary $ty:ty) => {
        false
    };
    (stream) => {
        true
    };
}

macro_rules! define_operations {
    ($(
        $(#[$doc:meta])*
        $name:ident {
            handler: $handler:ident,
            request: $req:ty,
            answer: $kind:ident $($resp:ty)?,
            jsonrpc: $jsonrpc:literal,
            v03: $v03:tt,
            rest: [$($verb:ident),+] $route:literal query [$($qname:ident: $qkind:ident),* $(,)?],
            grpc: $grpc:ident,
        }
    )*) => {
        /// One A2A operation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation {
            $($(#[$doc])* $name,)*
        }

        impl Operation {
            /// Every operation, in the table's order.
            pub const ALL: &'static [Operation] = &[$(Operation::$name),*];

            /// The 1.0 name: the JSON-RPC method and the gRPC rpc.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Operation::$name => $jsonrpc,)*
                }
            }

            /// The operation a 1.0 JSON-RPC method names.
            pub fn from_name(name: &str) -> Option<Operation> {
                match name {
                    $($jsonrpc => Some(Operation::$name),)*
                    _ => None,
                }
            }

            /// The A2A 0.3 JSON-RPC method, when 0.3 has the operation.
            pub fn v03_name(self) -> Option<&'static str> {
                match self {
                    $(Operation::$name => v03_name!($v03),)*
                }
            }

            /// The operation a 0.3 JSON-RPC method names.
            pub fn from_v03_name(name: &str) -> Option<Operation> {
                Operation::ALL
                    .iter()
                    .copied()
                    .find(|op| op.v03_name() == Some(name))
            }

            /// `true` when the answer is a stream of `StreamResponse`.
            pub fn is_streaming(self) -> bool {
                match self {
                    $(Operation::$name => is_stream!($kind $($resp)?),)*
                }
            }

            /// The HTTP+JSON route.
            pub fn rest(self) -> RestRoute {
                match self {
                    $(Operation::$name => RestRoute {
                        verbs: &[$(stringify!($verb)),+],
                        template: $route,
                        query: &[$(QueryParam { name: stringify!($qname), kind: QueryKind::$qkind }),*],
                    },)*
                }
            }
        }

        impl std::fmt::Display for Operation {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        /// One operation's canonical request.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)] // built once per call, moved into the handler
        pub enum A2aRequest {
            $($(#[$doc])* $name($req),)*
        }

        impl A2aRequest {
            /// The operation this is a request of.
            pub fn operation(&self) -> Operation {
                match self {
                    $(A2aRequest::$name(_) => Operation::$name,)*
                }
            }

            /// Decodes `op`'s request from a JSON params object (InvalidParams
            /// when it does not fit).
            pub fn from_params(op: Operation, raw: &str) -> Result<A2aRequest, A2AError> {
                Ok(match op {
                    $(Operation::$name => A2aRequest::$name(decode_params(raw)?),)*
                })
            }

            /// Decodes `op`'s request from a JSON value.
            pub fn from_value(op: Operation, value: Value) -> Result<A2aRequest, A2AError> {
                let invalid = |e: serde_json::Error| A2AError::invalid_params(
                    crate::jsonrpc::strip_position(&e.to_string()),
                );
                Ok(match op {
                    $(Operation::$name => A2aRequest::$name(
                        serde_json::from_value(value).map_err(invalid)?,
                    ),)*
                })
            }

            /// The tenant the request names (`""` for none).
            pub fn tenant(&self) -> &str {
                match self {
                    $(A2aRequest::$name(r) => r.tenant.as_deref().unwrap_or(""),)*
                }
            }

            /// Sets the request's tenant (`""` clears it).
            pub fn set_tenant(&mut self, tenant: &str) {
                let value = (!tenant.is_empty()).then(|| tenant.to_string());
                match self {
                    $(A2aRequest::$name(r) => r.tenant = value,)*
                }
            }
        }

        impl Serialize for A2aRequest {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(A2aRequest::$name(r) => r.serialize(s),)*
                }
            }
        }

        /// One operation's answer: the unary result, or for a streaming
        /// operation one item of its stream.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum A2aResponse {
            $($(#[$doc])* $name(answer_type!($kind $($resp)?)),)*
        }

        impl A2aResponse {
            /// The operation this answers.
            pub fn operation(&self) -> Operation {
                match self {
                    $(A2aResponse::$name(_) => Operation::$name,)*
                }
            }

            /// Decodes `op`'s answer from its 1.0 JSON.
            pub fn from_json(op: Operation, json: &str) -> Result<A2aResponse, serde_json::Error> {
                Ok(match op {
                    $(Operation::$name => A2aResponse::$name(serde_json::from_str(json)?),)*
                })
            }
        }

        impl Serialize for A2aResponse {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(A2aResponse::$name(r) => r.serialize(s),)*
                }
            }
        }
    };
}

crate::for_each_operation!(define_operations);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(Operation::ALL.len(), 11);
        for &op in Operation::ALL {
            assert_eq!(Operation::from_name(op.name()), Some(op));
            if let Some(v03) = op.v03_name() {
                assert_eq!(Operation::from_v03_name(v03), Some(op));
            }
            assert!(op.rest().template.starts_with('/'), "{op}");
        }
        assert_eq!(Operation::ListTasks.v03_name(), None);
        assert!(Operation::SubscribeToTask.is_streaming());
        assert!(!Operation::GetTask.is_streaming());
        assert_eq!(Operation::SubscribeToTask.rest().verbs, ["GET", "POST"]);
        assert_eq!(Operation::from_name("message/send"), None);
    }

    #[test]
    fn requests_decode_and_carry_their_tenant() {
        let mut r =
            A2aRequest::from_params(Operation::GetTask, r#"{"id":"t1","tenant":"acme"}"#).unwrap();
        assert_eq!(r.operation(), Operation::GetTask);
        assert_eq!(r.tenant(), "acme");
        r.set_tenant("");
        assert_eq!(r.tenant(), "");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"id": "t1"})
        );
        let err = A2aRequest::from_params(Operation::GetTask, "[]").unwrap_err();
        assert_eq!(err.code(), -32602);
    }
}
