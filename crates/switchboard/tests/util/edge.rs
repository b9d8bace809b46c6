//! An agent, a card and a store that produce the errors the demo never
//! does, for the error tests of every binding.

use std::sync::Arc;

use switchboard_core::{
    EventQuery, LoggedEvent, RequestHandler, StoreError, TaskPage, TaskQuery, TaskRecord,
    TaskStore, agent_fn,
};
use switchboard_protocol::{AgentCard, AgentExtension, Message, Role, StreamResponse};

/// A card that declares an extended card (none is configured), an optional
/// extension `urn:x-optional` and `urn:x-required`, required when `required`.
pub fn edge_card(streaming: bool, required: bool) -> AgentCard {
    let mut card = AgentCard::new("edge", "edge cases", "1").with_streaming(streaming);
    card.capabilities.extended_agent_card = Some(true);
    card.capabilities.extensions = vec![
        AgentExtension {
            uri: "urn:x-required".into(),
            description: None,
            required,
            params: None,
        },
        AgentExtension {
            uri: "urn:x-optional".into(),
            description: None,
            required: false,
            params: None,
        },
    ];
    card
}

/// An agent that answers `empty-reply` with an invalid (empty) message and
/// anything else with one artifact, on `card`, on `store` if given.
pub fn edge_handler(card: AgentCard, store: Option<Arc<dyn TaskStore>>) -> RequestHandler {
    let agent = agent_fn(|ctx, events| async move {
        if ctx.text() == "empty-reply" {
            let _ = events.reply(Message::new(Role::Agent, vec![])).await;
            return Ok(());
        }
        events.artifact_text("out", "fine").await?;
        Ok(())
    });
    let b = RequestHandler::builder(agent, card);
    match store {
        Some(s) => b.store(s).build(),
        None => b.build(),
    }
}

/// A store whose every call fails with a backend error.
#[derive(Debug)]
pub struct FailingStore;

fn on_fire<T>() -> Result<T, StoreError> {
    Err(StoreError::Backend("disk on fire".into()))
}

#[switchboard_core::async_trait]
impl TaskStore for FailingStore {
    async fn commit_events(&self, _: &TaskRecord, _: &[StreamResponse]) -> Result<(), StoreError> {
        on_fire()
    }
    async fn load(&self, _: &str, _: &str) -> Result<Option<TaskRecord>, StoreError> {
        on_fire()
    }
    async fn list(&self, _: &TaskQuery) -> Result<TaskPage, StoreError> {
        on_fire()
    }
    async fn events(&self, _: EventQuery<'_>) -> Result<Vec<LoggedEvent>, StoreError> {
        on_fire()
    }
}
