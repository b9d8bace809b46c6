//! One entry point for every operation: [`RequestHandler::handle`] takes any
//! [`A2aRequest`] and runs the handler method its operation names, generated
//! from the operation table (`switchboard_protocol::for_each_operation!`),
//! so a binding needs no `match` of its own and a new operation is a compile
//! error here until the handler has its method.

use switchboard_protocol::{A2AError, A2aRequest, A2aResponse};

use crate::context::CallContext;
use crate::handler::RequestHandler;
use crate::runtime::EventStream;

/// What an operation answers.
#[allow(clippy::large_enum_variant)] // made once per call and consumed at once
pub enum Answer {
    /// A unary operation's result.
    Unary(A2aResponse),
    /// A streaming operation's events.
    Stream(EventStream),
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Unary(r) => f.debug_tuple("Unary").field(r).finish(),
            Answer::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

macro_rules! answer {
    (unary, $name:ident, $value:expr) => {
        Answer::Unary(A2aResponse::$name($value))
    };
    (stream, $name:ident, $value:expr) => {
        Answer::Stream($value)
    };
}

macro_rules! define_handle {
    ($(($name:ident, $handler:ident, $req:ty, $kind:ident $(, $resp:ty)?))*) => {
        impl RequestHandler {
            /// Runs `request`'s operation for `call`.
            pub async fn handle(
                &self,
                call: &CallContext,
                request: A2aRequest,
            ) -> Result<Answer, A2AError> {
                Ok(match request {
                    $(A2aRequest::$name(r) => answer!($kind, $name, self.$handler(call, r).await?),)*
                })
            }
        }
    };
}

switchboard_protocol::for_each_operation!(compact define_handle);
