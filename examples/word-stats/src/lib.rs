//! A complete agent on the switchboard SDK, from the docs alone: it streams
//! its progress, writes a report artifact in chunks, declares an extension,
//! delivers push notifications and advertises gRPC on its own address.
//! `main.rs` serves it; `tests/serve.rs` runs it and talks to it.

use switchboard_sdk::prelude::*;
use switchboard_sdk::protocol::AgentExtension;
use switchboard_sdk::protocol::card::BINDING_GRPC;
use switchboard_sdk::server::push::{PushError, PushOptions};

/// The extension the card declares: for clients that activate it (the
/// `A2A-Extensions` header), each line of the report also gives the word's
/// length.
pub const WORD_LENGTHS: &str = "https://example.com/ext/word-lengths/v1";

/// Who the agent is and what it can do.
pub fn card() -> AgentCard {
    AgentCard::new("word-stats", "Counts and numbers the words you send", "1.0")
        .with_streaming(true)
        // Enforced: a part of another media type is refused, naming these.
        .with_input_modes(&["text/plain"])
        .with_skill(AgentSkill::new(
            "count",
            "Count words",
            "Numbers each word",
            &["text"],
        ))
        .with_extension(
            AgentExtension::new(WORD_LENGTHS)
                .with_description("Each word's length in the report")
                .with_param("unit", "characters"),
        )
}

/// The agent served at `public_url`, announcing gRPC at `grpc_url`
/// (`host:port`, e.g. a proxy in front of it).
pub fn server(public_url: &str, grpc_url: &str) -> Result<A2aServer, PushError> {
    let agent = agent_fn(|ctx, events| async move {
        let text = ctx.text();
        let words: Vec<&str> = text.split_whitespace().collect();
        let lengths = ctx.extension_active(WORD_LENGTHS);
        events
            .working(format!("numbering {} words", words.len()))
            .await?;
        let mut report = events.artifact_writer("report");
        for (i, word) in words.iter().enumerate() {
            let len = if lengths {
                format!(" ({})", word.chars().count())
            } else {
                String::new()
            };
            report
                .append(Part::text(format!("{}. {word}{len}\n", i + 1)))
                .await?;
        }
        report
            .finish(Part::text(format!("{} words", words.len())))
            .await?;
        Ok(()) // completes the task
    });
    let handler = RequestHandler::builder(agent, card()).build(); // tasks in memory
    A2aServer::new(handler)
        .public_url(public_url)
        .interface_url(BINDING_GRPC, grpc_url)
        // Configs, SSRF guard, signing keys, JWKS and the delivery worker.
        .push(PushOptions::new().allow_host("127.0.0.1"))
}
