//! AG-UI streams (feature `agui`): a task's stream read as AG-UI 1.0 events.
//!
//! A switchboard server answers `SendStreamingMessage` and
//! `SubscribeToTask` with AG-UI events when asked (`Accept:
//! application/x-agui-events`; see the server's docs). This client asks over
//! its JSON-RPC or HTTP+JSON interface and decodes the frames with
//! [`switchboard_agui::sse::SseDecoder`], so the bridge and the console get
//! typed [`Event`]s:
//!
//! ```no_run
//! # async fn f() -> Result<(), switchboard_client::ClientError> {
//! use futures::StreamExt;
//! use switchboard_client::A2AClient;
//! use switchboard_client::protocol::{A2aRequest, Message, SendMessageRequest};
//!
//! let client = A2AClient::connect("http://127.0.0.1:8080").await?;
//! let request = A2aRequest::SendStreamingMessage(SendMessageRequest::new(Message::user_text("/think why")));
//! let mut events = client.agui_stream(request, None).await?;
//! while let Some(event) = events.next().await {
//!     println!("{}", event?.event.type_name());
//! }
//! # Ok(()) }
//! ```
//!
//! Each item also carries its SSE id ([`AguiItem::id`], `<seq>.<i>`): give
//! the last one to a `SubscribeToTask` as `last_event_id` to resume exactly
//! after it. A stream is not resumed automatically.

use futures::StreamExt;
use futures::stream::{self, BoxStream};
use switchboard_agui::Event;
use switchboard_agui::sse::SseDecoder;
use switchboard_protocol::A2aRequest;

use crate::client::A2AClient;
use crate::error::ClientError;

/// One AG-UI event of a stream, with the SSE id that resumes after it.
#[derive(Debug, Clone, PartialEq)]
pub struct AguiItem {
    /// `<seq>.<i>` or `<seq>`; `None` for events outside a task's log
    /// (a direct message reply, a stream error).
    pub id: Option<String>,
    /// The event.
    pub event: Event,
}

/// The AG-UI events of one stream; an error is the last item.
pub type AguiStream = BoxStream<'static, Result<AguiItem, ClientError>>;

impl A2AClient {
    /// Runs a streaming operation (`SendStreamingMessage` or
    /// `SubscribeToTask`) as an AG-UI stream; `last_event_id` resumes a
    /// `SubscribeToTask` after that event. Errors before the stream starts
    /// are the operation's ordinary A2A errors.
    pub async fn agui_stream(
        &self,
        mut request: A2aRequest,
        last_event_id: Option<&str>,
    ) -> Result<AguiStream, ClientError> {
        self.fill_request_tenant(&mut request);
        let resp = self
            .transport()
            .open_agui(request, last_event_id.map(str::to_owned))
            .await?;
        let mut decoder = SseDecoder::new();
        let mut failed = false;
        Ok(resp
            .bytes_stream()
            .flat_map(move |chunk| {
                let items: Vec<Result<AguiItem, ClientError>> = if failed {
                    Vec::new()
                } else {
                    match chunk {
                        Err(e) => vec![Err(ClientError::transport(&e))],
                        Ok(bytes) => match decoder.push(&bytes) {
                            Ok(events) => events
                                .into_iter()
                                .map(|e| {
                                    Ok(AguiItem {
                                        id: e.id,
                                        event: e.event,
                                    })
                                })
                                .collect(),
                            Err(e) => vec![Err(ClientError::Decode(e.to_string()))],
                        },
                    }
                };
                failed |= items.iter().any(Result::is_err);
                stream::iter(items)
            })
            .boxed())
    }
}
