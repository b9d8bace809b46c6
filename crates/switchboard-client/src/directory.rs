//! A server's list of the agents it hosts: `GET <base>/agents`, which a
//! switchboard server with several agents answers (one row per agent: its
//! card's name and description, the path it is mounted at, its URLs).
//! Not part of A2A: a server without the listing answers 404, which
//! [`ClientBuilder::list_agents`](crate::ClientBuilder::list_agents) reports
//! as `Ok(None)`.

use serde::{Deserialize, Serialize};

/// Where a server lists its agents, under its base URL.
pub const DIRECTORY_PATH: &str = "/agents";

/// One agent a server hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ListedAgent {
    /// Its card's name.
    pub name: String,
    /// Its card's description.
    #[serde(default)]
    pub description: String,
    /// Where it is mounted: `/` for the server's own agent, `/support` for
    /// one under a prefix.
    pub path: String,
    /// Its base URL as the server publishes it.
    #[serde(default)]
    pub url: String,
    /// Its card's URL as the server publishes it.
    #[serde(default)]
    pub card: String,
}

/// The body of `GET /agents`.
#[derive(Debug, Deserialize)]
pub(crate) struct Directory {
    pub(crate) agents: Vec<ListedAgent>,
}

/// The server base `url` names: an agent base URL or a card URL, without
/// the card's path and without a trailing `/`.
pub fn server_base(url: &str) -> &str {
    let url = url.trim();
    let url = url
        .strip_suffix(switchboard_protocol::AGENT_CARD_PATH)
        .unwrap_or(url);
    url.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_drops_the_card_path() {
        assert_eq!(server_base("http://h:1/"), "http://h:1");
        assert_eq!(
            server_base("http://h:1/a/.well-known/agent-card.json"),
            "http://h:1/a"
        );
    }
}
