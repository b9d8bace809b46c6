//! The echo agents: the smallest answers an A2A agent can give, one per
//! kind. [`EchoMessage`] answers with a direct message, [`EchoTask`] with a
//! task created, given its artifact and completed in one commit.
//!
//! They mirror the minimal agents the benchmark runs on every peer SDK, so a
//! load test measures the server and the store rather than an agent's work.

use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents, async_trait};
use switchboard_protocol::{AgentCard, AgentSkill, Artifact, Message, Part, Role};

/// Replies to every message with a direct message echoing its text.
#[derive(Debug, Default)]
pub struct EchoMessage;

#[async_trait]
impl AgentExecutor for EchoMessage {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        Ok(events
            .reply(Message::new(Role::Agent, vec![Part::text(ctx.text())]))
            .await?)
    }
}

/// Answers every message with a task: one artifact echoing the text, then
/// completed. The answer is known at once, so it goes out as one batch: the
/// task is created, given its artifact and completed in one commit.
#[derive(Debug, Default)]
pub struct EchoTask;

#[async_trait]
impl AgentExecutor for EchoTask {
    async fn execute(&self, ctx: RequestContext, events: TaskEvents) -> Result<(), BoxError> {
        Ok(events
            .batch()
            .artifact(Artifact::new(vec![Part::text(ctx.text())]).with_id("echo"))
            .complete()
            .commit()
            .await?)
    }
}

/// A card for the echo agents.
pub fn echo_card() -> AgentCard {
    AgentCard::new(
        "switchboard echo",
        "Echoes your text back.",
        env!("CARGO_PKG_VERSION"),
    )
    .with_streaming(true)
    .with_skill(AgentSkill::new("echo", "Echo", "Echoes text", &["echo"]))
}
