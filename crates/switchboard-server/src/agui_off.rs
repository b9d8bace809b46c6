//! Built without the `agui` feature: no request opts in to AG-UI, and the
//! A2A streaming endpoints always answer with A2A frames.

use axum::response::Response;
use http::HeaderMap;
use switchboard_core::{CallContext, EventStream, RequestHandler};
use switchboard_protocol::{A2AError, Operation};

/// A request that opted in to AG-UI: none can, without the feature.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AguiRequest {}

impl AguiRequest {
    pub(crate) fn resume_after(&self) -> Option<u64> {
        match *self {}
    }
}

pub(crate) fn opt_in(
    _headers: &HeaderMap,
    _query: Option<&str>,
    _op: Option<Operation>,
) -> Result<Option<AguiRequest>, A2AError> {
    Ok(None)
}

pub(crate) fn response(
    _handler: RequestHandler,
    _call: CallContext,
    _stream: EventStream,
    agui: AguiRequest,
    _extra: &[(&'static str, String)],
) -> Response {
    match agui {}
}
