//! What the agent does offer, said beside a refusal its card explains:
//! "unsupported operation" tells a user that something failed, the card's
//! side of it what to try instead. The notes go with
//! [`Failure::Offered`].
//!
//! | refusal | the note |
//! |---|---|
//! | no usable interface | the card's interfaces: `JSONRPC 1.0, HTTP+JSON 1.0, JSONRPC 0.3` ([`interfaces_note`]) |
//! | `PushNotificationNotSupported`, `UnsupportedOperation` | the card's capabilities (streaming, push notifications, extended card) |
//! | `ContentTypeNotSupported` | the card's input and output media types |
//! | `ExtensionSupportRequired` | the card's extensions, required ones marked |
//!
//! [`explain`] decides when a refusal gets a note and fetches the card for
//! it. UnsupportedOperation gets the capabilities only from a command that
//! relies on one (a stream, a resubscription, a push config): the same
//! error also refuses a message to a finished task, which no capability
//! explains. For the operation refusals the card is fetched again (the
//! failed call may have been made before any card was at hand, and it is
//! one request on a path that already failed); when that fetch fails too,
//! the original error is reported as it was.

use switchboard_client::{AgentSettings, ClientError};
use switchboard_protocol::{A2AError, AgentCard};

use crate::Failure;

/// `failure`, with what the agent at `url` offers when its card explains
/// the refusal; `agent` is how the failed call reached it, `capabilities`
/// whether the call relied on a declared capability.
pub async fn explain(
    url: &str,
    agent: &AgentSettings,
    capabilities: bool,
    failure: Failure,
) -> Failure {
    let Failure::Client(error) = failure else {
        return failure;
    };
    if let ClientError::NoSupportedInterface { offered } = &error {
        let mut asked = Vec::new();
        if let Some(b) = &agent.binding {
            asked.push(format!("--binding {b}"));
        }
        if let Some(v) = &agent.protocol_version {
            asked.push(format!("--protocol-version {v}"));
        }
        let note = interfaces_note(&asked, offered);
        return Failure::Offered { error, note };
    }
    let Some(protocol) = error.as_protocol() else {
        return Failure::Client(error);
    };
    let unrelated = matches!(protocol, A2AError::UnsupportedOperation(_)) && !capabilities;
    if !explained_by_card(protocol) || unrelated {
        return Failure::Client(error);
    }
    let card = match agent.options() {
        Ok(options) => options.builder().fetch_card(url).await.ok(),
        Err(_) => None,
    };
    match card.and_then(|card| card_note(protocol, &card)) {
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

/// What the card offers, for a refusal it explains.
pub fn card_note(error: &A2AError, card: &AgentCard) -> Option<String> {
    match error {
        A2AError::PushNotificationNotSupported | A2AError::UnsupportedOperation(_) => {
            let caps = &card.capabilities;
            let yes_no = |v: Option<bool>| if v == Some(true) { "yes" } else { "no" };
            Some(format!(
                "the agent's card offers: streaming {}, push notifications {}, extended card {}",
                yes_no(caps.streaming),
                yes_no(caps.push_notifications),
                yes_no(caps.extended_agent_card)
            ))
        }
        A2AError::ContentTypeNotSupported(_) => Some(format!(
            "the agent accepts {} and answers in {}",
            list_or_none(&card.default_input_modes),
            list_or_none(&card.default_output_modes)
        )),
        A2AError::ExtensionSupportRequired(_) => {
            let extensions: Vec<String> = card
                .capabilities
                .extensions
                .iter()
                .map(|e| {
                    let required = if e.required { " (required)" } else { "" };
                    format!("{}{required}", e.uri)
                })
                .collect();
            Some(format!(
                "the agent's extensions: {}",
                list_or_none(&extensions)
            ))
        }
        _ => None,
    }
}

/// `--binding grpc asked for; the agent offers JSONRPC 1.0, HTTP+JSON 1.0,
/// JSONRPC 0.3`: `offered` holds the card's interfaces as `BINDING VERSION
/// at URL`, `asked` what the caller asked for (nothing: no prefix).
pub fn interfaces_note(asked: &[String], offered: &[String]) -> String {
    let short: Vec<&str> = offered
        .iter()
        .map(|o| o.split(" at ").next().unwrap_or(o))
        .collect();
    let offers = format!("the agent offers {}", list_or_none(&short));
    if asked.is_empty() {
        offers
    } else {
        format!("{} asked for; {offers}", asked.join(" "))
    }
}

fn list_or_none<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        "nothing".to_string()
    } else {
        items
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_protocol::AgentExtension;

    fn card() -> AgentCard {
        let mut card = AgentCard::new("a", "b", "1");
        card.default_input_modes = vec!["text/plain".into(), "application/json".into()];
        card.default_output_modes = vec!["text/plain".into()];
        card.capabilities.streaming = Some(true);
        card.capabilities.push_notifications = Some(false);
        let mut ext = AgentExtension::new("urn:x:needed");
        ext.required = true;
        card.capabilities.extensions = vec![ext];
        card
    }

    #[test]
    fn each_refusal_names_the_cards_offer() {
        let card = card();
        let push = card_note(&A2AError::PushNotificationNotSupported, &card);
        assert_eq!(
            push.as_deref(),
            Some("the agent's card offers: streaming yes, push notifications no, extended card no")
        );
        let op = card_note(&A2AError::UnsupportedOperation("x".into()), &card);
        assert_eq!(op, push);
        let content = card_note(
            &A2AError::ContentTypeNotSupported("image/png".into()),
            &card,
        );
        assert_eq!(
            content.as_deref(),
            Some("the agent accepts text/plain, application/json and answers in text/plain")
        );
        let ext = card_note(&A2AError::ExtensionSupportRequired("urn:x".into()), &card);
        assert_eq!(
            ext.as_deref(),
            Some("the agent's extensions: urn:x:needed (required)")
        );
        assert!(card_note(&A2AError::TaskNotFound("t".into()), &card).is_none());
    }
}
