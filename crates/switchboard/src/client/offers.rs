//! Errors that name what the agent does offer.
//!
//! "No interface this client supports" or "unsupported operation" tells a
//! user that something failed, not what to try instead. The agent card says
//! what the agent offers, so a refusal that the card explains is reported
//! with the card's side of it:
//!
//! | refusal | what is added |
//! |---|---|
//! | no interface for `--binding`/`--protocol-version` | the card's interfaces: `JSONRPC 1.0, HTTP+JSON 1.0, JSONRPC 0.3` |
//! | `PushNotificationNotSupported`, `UnsupportedOperation` | the card's capabilities (streaming, push notifications, extended card) |
//! | `ContentTypeNotSupported` | the card's input and output media types |
//! | `ExtensionSupportRequired` | the card's extensions, required ones marked |
//!
//! UnsupportedOperation gets the capabilities only from a command that
//! relies on one (`stream`, `subscribe`, `push-config`): the same error
//! also refuses a message to a finished task, which no capability explains.
//!
//! The notes are the printer's (`switchboard_printer::offers`); this
//! module decides when a refusal gets one and fetches the card for it.
//!
//! For the operation refusals the card is fetched again (the failed call
//! may have been made before any card was at hand, and it is one request
//! on a path that already failed); when that fetch fails too, the original
//! error is reported as it was.

use switchboard_client::ClientError;
use switchboard_protocol::A2AError;

use super::args::ConnectArgs;
use switchboard_printer::{Failure, offers};

use super::run::builder;

/// `failure`, with what the agent offers when the card explains it;
/// `capabilities`: whether the command relies on a declared capability.
pub(super) async fn explain(conn: &ConnectArgs, capabilities: bool, failure: Failure) -> Failure {
    let Failure::Client(error) = failure else {
        return failure;
    };
    if let ClientError::NoSupportedInterface { offered } = &error {
        let note = interfaces_note(conn, offered);
        return Failure::Offered { error, note };
    }
    let Some(protocol) = error.as_protocol() else {
        return Failure::Client(error);
    };
    let unrelated = matches!(protocol, A2AError::UnsupportedOperation(_)) && !capabilities;
    if !explained_by_card(protocol) || unrelated {
        return Failure::Client(error);
    }
    let card = match builder(conn) {
        Ok(b) => b.fetch_card(&conn.url).await.ok(),
        Err(_) => None,
    };
    match card.and_then(|card| offers::card_note(protocol, &card)) {
        Some(note) => Failure::Offered { error, note },
        None => Failure::Client(error),
    }
}

/// Whether the card says something about this refusal.
fn explained_by_card(error: &A2AError) -> bool {
    matches!(
        error,
        A2AError::PushNotificationNotSupported
            | A2AError::UnsupportedOperation(_)
            | A2AError::ContentTypeNotSupported(_)
            | A2AError::ExtensionSupportRequired(_)
    )
}

/// `--binding grpc: the agent offers JSONRPC 1.0, HTTP+JSON 1.0, JSONRPC 0.3`.
/// `offered` holds the card's interfaces as `BINDING VERSION at URL`.
fn interfaces_note(conn: &ConnectArgs, offered: &[String]) -> String {
    let mut asked = Vec::new();
    if let Some(b) = conn.agent.binding {
        asked.push(format!("--binding {}", b.card_name()));
    }
    if let Some(v) = &conn.agent.protocol_version {
        asked.push(format!("--protocol-version {v}"));
    }
    offers::interfaces_note(&asked, offered)
}
