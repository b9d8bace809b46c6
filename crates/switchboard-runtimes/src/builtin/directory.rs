//! The directory: a root that serves no agent of its own, for a server
//! whose agents are all mounted under paths. Its card (the server's, made
//! a directory of the mounted agents by `A2aServer::directory_card` in
//! `switchboard-server`) tells callers where the agents are; a message sent
//! to the root itself is refused, pointing there.

use switchboard_core::{AgentExecutor, BoxError, RequestContext, TaskEvents, async_trait};
use switchboard_protocol::{A2AError, AgentCard};

/// Refuses every message: the root of a server that only lists its agents.
#[derive(Debug, Default)]
pub struct Directory;

#[async_trait]
impl AgentExecutor for Directory {
    async fn execute(&self, _ctx: RequestContext, _events: TaskEvents) -> Result<(), BoxError> {
        Err(A2AError::UnsupportedOperation(
            "this server's root serves no agent: its agent card lists the agents it hosts, each with its own card (also at GET /agents)".into(),
        )
        .into())
    }
}

/// The directory's card before the server adds its agents as skills.
pub fn directory_card() -> AgentCard {
    AgentCard::new(
        "switchboard",
        "A directory of the agents this server hosts: each skill is one agent, its description ending with the URL of that agent's own card.",
        env!("CARGO_PKG_VERSION"),
    )
    .with_streaming(true)
}
