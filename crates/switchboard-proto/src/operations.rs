//! How each operation of the operation table travels over gRPC 1.0
//! (`lf.a2a.v1.A2AService`): its prost request and response types and the
//! conversions to and from the canonical [`A2aRequest`] / [`A2aResponse`].
//!
//! [`op`] has one marker type per table row; [`GrpcOperation`] is
//! implemented for each below. Servers and clients are generic over it, so
//! one function serves (or calls) every unary method, and a row added to
//! the table without a line here is a compile error wherever the server
//! names its marker.

use switchboard_protocol::{A2aRequest, A2aResponse, Operation};

use crate::convert::ConvertError;
use crate::v1 as pb;

/// One operation on the gRPC wire.
pub trait GrpcOperation: Send + Sync + 'static {
    /// The table row.
    const OPERATION: Operation;
    /// The prost request message.
    type Request: prost::Message + Default + Send + 'static;
    /// The prost response message (for a streaming method, one item).
    type Response: Send + 'static;

    /// The canonical request of a wire request.
    fn request(pb: Self::Request) -> Result<A2aRequest, ConvertError>;

    /// The tenant a wire request names (`""` for none).
    fn tenant(pb: &Self::Request) -> &str;

    /// The wire form of this operation's answer; `None` when `answer`
    /// belongs to another operation.
    fn response(answer: A2aResponse) -> Option<Self::Response>;

    /// The wire form of a canonical request (client side); `None` when
    /// `request` belongs to another operation.
    fn wire_request(request: &A2aRequest) -> Option<Self::Request>;

    /// The canonical answer of a wire response (client side).
    fn answer(pb: Self::Response) -> Result<A2aResponse, ConvertError>;

    /// The full gRPC path of the method: `/lf.a2a.v1.A2AService/{name}`.
    fn path() -> tonic::codegen::http::uri::PathAndQuery {
        tonic::codegen::http::uri::PathAndQuery::from_maybe_shared(format!(
            "/{}/{}",
            crate::SERVICE_NAME,
            Self::OPERATION.name()
        ))
        .unwrap_or_else(|_| tonic::codegen::http::uri::PathAndQuery::from_static("/"))
    }
}

macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident { $($row:tt)* })*) => {
        /// One marker type per operation, named as in the table.
        pub mod op {
            $(
                $(#[$doc])*
                #[derive(Debug, Clone, Copy)]
                pub struct $name;
            )*
        }
    };
}

switchboard_protocol::for_each_operation!(markers);

macro_rules! grpc_operations {
    ($($name:ident: $req:ty => $resp:ty;)*) => {
        $(
            impl GrpcOperation for op::$name {
                const OPERATION: Operation = Operation::$name;
                type Request = $req;
                type Response = $resp;

                fn request(pb: $req) -> Result<A2aRequest, ConvertError> {
                    Ok(A2aRequest::$name(TryFrom::try_from(pb).map_err(ConvertError::from)?))
                }

                fn tenant(pb: &$req) -> &str {
                    &pb.tenant
                }

                fn response(answer: A2aResponse) -> Option<$resp> {
                    match answer {
                        A2aResponse::$name(value) => Some(value.into()),
                        _ => None,
                    }
                }

                fn wire_request(request: &A2aRequest) -> Option<$req> {
                    match request {
                        A2aRequest::$name(r) => Some(r.into()),
                        _ => None,
                    }
                }

                fn answer(pb: $resp) -> Result<A2aResponse, ConvertError> {
                    Ok(A2aResponse::$name(TryFrom::try_from(pb).map_err(ConvertError::from)?))
                }
            }
        )*
    };
}

grpc_operations! {
    SendMessage: pb::SendMessageRequest => pb::SendMessageResponse;
    SendStreamingMessage: pb::SendMessageRequest => pb::StreamResponse;
    GetTask: pb::GetTaskRequest => pb::Task;
    ListTasks: pb::ListTasksRequest => pb::ListTasksResponse;
    CancelTask: pb::CancelTaskRequest => pb::Task;
    SubscribeToTask: pb::SubscribeToTaskRequest => pb::StreamResponse;
    CreateTaskPushNotificationConfig: pb::TaskPushNotificationConfig => pb::TaskPushNotificationConfig;
    GetTaskPushNotificationConfig: pb::GetTaskPushNotificationConfigRequest => pb::TaskPushNotificationConfig;
    ListTaskPushNotificationConfigs: pb::ListTaskPushNotificationConfigsRequest => pb::ListTaskPushNotificationConfigsResponse;
    DeleteTaskPushNotificationConfig: pb::DeleteTaskPushNotificationConfigRequest => ();
    GetExtendedAgentCard: pb::GetExtendedAgentCardRequest => pb::AgentCard;
}
