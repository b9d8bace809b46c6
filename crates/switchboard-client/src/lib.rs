//! # switchboard-client
//!
//! An async client for A2A 1.0 (Agent2Agent) agents: it reads an agent's
//! card, picks an interface it can speak, and exposes all eleven A2A
//! operations as typed methods, with streams as [`futures::Stream`]s.
//!
//! The vocabulary (tasks, messages, parts, cards, errors) is the
//! [`switchboard_protocol`] crate, re-exported here as [`protocol`].
//!
//! ## Connect, send, stream
//!
//! ```no_run
//! use futures::StreamExt;
//! use switchboard_client::protocol::{Message, SendMessageResponse, StreamResponse};
//! use switchboard_client::{A2AClient, ClientError};
//!
//! # async fn demo() -> Result<(), ClientError> {
//! // Reads http://127.0.0.1:8080/.well-known/agent-card.json and picks the
//! // first JSON-RPC 1.x interface it lists.
//! let client = A2AClient::connect("http://127.0.0.1:8080").await?;
//! if let Some(card) = client.card() {
//!     println!("talking to {} at {}", card.name, client.endpoint());
//! }
//!
//! // A blocking send: the agent answers when the task is finished (or
//! // needs input), or replies with a plain message.
//! match client.send_text("hello").await? {
//!     SendMessageResponse::Task(task) => {
//!         println!("task {} is {}", task.id, task.status.state.label());
//!         for artifact in task.artifacts() {
//!             println!("{}", artifact.text());
//!         }
//!     }
//!     SendMessageResponse::Message(msg) => println!("{}", msg.text()),
//!     _ => {}
//! }
//!
//! // A streaming send: the task first, then updates until the server
//! // closes the stream.
//! let mut events = client
//!     .send_streaming_message(Message::user_text("write a haiku"))
//!     .await?;
//! while let Some(item) = events.next().await {
//!     match item?.event {
//!         StreamResponse::Task(task) => println!("task {}", task.id),
//!         StreamResponse::StatusUpdate(update) => {
//!             println!("now {}", update.status.state.label())
//!         }
//!         StreamResponse::ArtifactUpdate(update) => print!("{}", update.artifact.text()),
//!         StreamResponse::Message(msg) => println!("{}", msg.text()),
//!         _ => {}
//!     }
//! }
//!
//! // Errors from the agent keep their A2A code.
//! match client.get_task("no-such-task").await {
//!     Err(e) if e.code() == Some(-32001) => println!("not found, as expected"),
//!     other => println!("{other:?}"),
//! }
//! # Ok(()) }
//! ```
//!
//! ## Options
//!
//! [`A2AClient::builder`] sets a request timeout, extra headers (such as
//! `Authorization`), the extensions to request (sent as `A2A-Extensions`)
//! and the order of preferred protocol bindings. When the chosen interface
//! declares a `tenant`, it is copied into every request. An extension wanted
//! on some calls only goes through a second client made with
//! [`A2AClient::with_extensions`]. [`ConnectOptions`] is the same settings
//! as plain data (credentials, bindings, versions, trust), for a program
//! that reads them from flags or a file.
//!
//! [`follow`] keeps a task's id and last state while its stream is read,
//! and watches a task by polling until it stops.
//!
//! Streams resume by themselves: when the connection drops, the client
//! resubscribes with `Last-Event-ID` (the last event number it saw) and
//! carries on, yielding each event once; see [`resume`] and
//! [`ClientBuilder::reconnect`] (on by default, with bounded retries).
//!
//! ## Bindings
//!
//! JSON-RPC 2.0 over HTTP (A2A 1.x) is implemented. Each binding lives in
//! its own module behind one internal `Transport` trait, so HTTP+JSON, gRPC
//! or the 0.3 dialect can be added without touching the public API.
#![deny(missing_docs)]

#[cfg(feature = "agui")]
pub mod agui;
pub mod card_signature;
mod client;
pub mod connect;
pub mod directory;
mod error;
pub mod follow;
pub mod oauth;
pub mod push;
mod request;
pub mod resume;
pub mod tap;
pub mod tls;
mod transport;

#[cfg(feature = "agui")]
pub use agui::{AguiItem, AguiStream};
pub use card_signature::{CardSignatureError, CardTrust};
pub use client::{A2AClient, ClientBuilder, EventStream, MAX_DOCUMENT_BYTES, StreamEvent};
pub use connect::{AgentSettings, ConnectOptions, OAuthSettings, SettingsError};
pub use directory::ListedAgent;
pub use error::{ClientError, flatten_chain};
pub use oauth::ClientCredentials;
pub use request::IntoRequest;
pub use resume::ReconnectPolicy;
pub use tap::{FrameKind, WireFrame, WireTap};

/// The A2A protocol types ([`switchboard_protocol`]), re-exported so one
/// dependency is enough.
pub use switchboard_protocol as protocol;
