//! Several agents on one server: [`A2aServer::mount`].
//!
//! Each mounted agent is an [`A2aServer`] of its own (its
//! handler, card, limits) served under a path prefix: its card at
//! `<path>/.well-known/agent-card.json`, its JSON-RPC endpoint at `<path>`
//! and its REST routes under `<path>/` (0.3's under `<path>/v1/`), the
//! card's interfaces naming those URLs. The outer server's gate (its
//! authenticator and request rate) guards a mounted agent that sets none of
//! its own, and the outer server's layers (access log, metrics) wrap it.
//! `GET /agents` lists every agent with its card's URL.
//!
//! A server whose root serves no agent of its own can describe itself as a
//! directory instead ([`A2aServer::directory_card`]): its public card at
//! `/.well-known/agent-card.json` is then a valid A2A card whose skills are
//! the mounted agents, one each (id: the agent's name; its description,
//! ending with the URL of the agent's own card; the tags of its skills),
//! built anew from the agents mounted at each request, so it follows a
//! reload as `GET /agents` does. A2A defines one card per agent at a
//! well-known path and leaves registries to deployments; skills are where a
//! card says what can be asked of the server, and the card's schema has no
//! field for another card's URL, so it goes in the skill's description.
//! Such a card is never signed (it changes with the mounted set).
//!
//! gRPC is served for the outer (root) agent only: a gRPC call names a
//! service and method, not a path, so it cannot reach a prefix, and a
//! mounted agent's card lists no gRPC interface. (The A2A 1.0 `tenant`
//! field could route gRPC calls one day, but tenants already scope tasks
//! within one agent here.)
//!
//! The mounted set can be replaced while the server runs
//! ([`A2aServer::mount_reloader`],
//! [`MountReloader::replace`]): new requests are routed by the new set at
//! once; requests, streams and runs already under way keep the agent they
//! started with (its handler lives as long as they hold it), so a running
//! task of a replaced or removed agent finishes there. A removed agent's
//! task can then no longer be reached (read, resubscribed, answered) until
//! an agent is mounted at its path again; a replaced agent's is reached
//! through the new one, which shares the store and namespace.
//!
//! A mount's first path segment is the agent's: on the root agent's REST
//! binding that segment can no longer be a tenant prefix, and the paths
//! the root serves itself ([`RESERVED`]) cannot be mounted on.

use std::sync::{Arc, RwLock};

use bytes::Bytes;
use switchboard_protocol::{AGENT_CARD_PATH, AgentCard, AgentSkill};

use crate::A2aServer;

/// First path segments the root agent serves itself.
pub const RESERVED: &[&str] = &[
    ".well-known",
    "agents",
    "v1",
    "tasks",
    "message:send",
    "message:stream",
    "extendedAgentCard",
];

/// The listing of `GET /agents`.
pub const DIRECTORY_PATH: &str = "/agents";

/// Why an agent cannot be mounted where asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MountError {
    /// `/` (or an empty path) is the root agent's.
    #[error("an agent cannot be mounted at `/`: that is the server's own agent")]
    Root,
    /// Another agent is mounted there, or at a path sharing its first segment.
    #[error("`{0}` is already taken by another agent")]
    Taken(String),
    /// The root agent serves this path itself.
    #[error("`{path}` is reserved: the server serves `/{segment}` itself")]
    Reserved {
        /// The path asked for.
        path: String,
        /// Its first segment.
        segment: String,
    },
    /// Not a plain path (segments of letters, digits, `-`, `_` and `.`).
    #[error("`{0}` is not a plain path: use segments of letters, digits, `-`, `_` and `.`")]
    Invalid(String),
}

/// `path` as [`A2aServer::mount`] takes it: one
/// leading `/`, no trailing `/`, a plain path, no reserved first segment.
pub fn normalize(path: &str) -> Result<String, MountError> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Err(MountError::Root);
    }
    let plain = trimmed.split('/').all(|seg| {
        !seg.is_empty()
            && seg != "."
            && seg != ".."
            && seg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    });
    if !plain {
        return Err(MountError::Invalid(path.to_string()));
    }
    let first = trimmed.split('/').next().unwrap_or_default();
    if RESERVED.contains(&first) {
        return Err(MountError::Reserved {
            path: format!("/{trimmed}"),
            segment: first.to_string(),
        });
    }
    Ok(format!("/{trimmed}"))
}

/// The first segment of a normalized path (what two mounts may not share:
/// one would shadow the other).
pub(crate) fn first_segment(path: &str) -> &str {
    path.trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default()
}

/// One row of `GET /agents`.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Listed {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) path: String,
    pub(crate) url: String,
    pub(crate) card: String,
}

/// The directory card: `root` (the root's card as served: its name,
/// interfaces, security) with one skill per mounted agent.
pub(crate) fn directory_card(root: &AgentCard, mounted: &[Live]) -> AgentCard {
    let mut card = root.clone();
    card.signatures.clear();
    card.skills = mounted
        .iter()
        .map(|m| {
            let agent = m.server.handler.card();
            let url = format!("{}{AGENT_CARD_PATH}", m.server.public_url);
            let mut tags: Vec<String> = Vec::new();
            for tag in agent.skills.iter().flat_map(|s| &s.tags) {
                if !tags.contains(tag) {
                    tags.push(tag.clone());
                }
            }
            if tags.is_empty() {
                tags.push(agent.name.clone());
            }
            let description = if agent.description.is_empty() {
                format!("Agent card: {url}")
            } else {
                format!("{} (agent card: {url})", agent.description.trim_end())
            };
            let mut skill =
                AgentSkill::new(agent.name.clone(), agent.name.clone(), description, &[]);
            skill.tags = tags;
            skill
        })
        .collect();
    card
}

/// The body of `GET /agents`.
pub(crate) fn directory(agents: &[Listed]) -> Bytes {
    Bytes::from(serde_json::to_vec(&serde_json::json!({ "agents": agents })).unwrap_or_default())
}

/// One mounted agent as requests reach it.
pub(crate) struct Live {
    /// Its path (normalized).
    pub(crate) path: String,
    /// The agent as mounted (its URLs under the server's, the server's gate
    /// where it has none).
    pub(crate) server: A2aServer,
    /// Its routes.
    pub(crate) router: axum::Router,
}

/// The agents mounted now, replaced whole by a reload.
#[derive(Clone, Default)]
pub(crate) struct LiveMounts(Arc<LiveInner>);

#[derive(Default)]
pub(crate) struct LiveInner {
    set: RwLock<Arc<Vec<Live>>>,
    /// The set of `A2aServer::mount` was put in (once: a router built again
    /// later must not undo a reload).
    started: std::sync::OnceLock<()>,
}

impl LiveMounts {
    pub(crate) fn current(&self) -> Arc<Vec<Live>> {
        self.0.set.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set(&self, mounts: Vec<Live>) {
        let _ = self.0.started.set(());
        *self.0.set.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(mounts);
    }

    /// Puts in the first set, unless there is one already.
    pub(crate) fn start(&self, first: impl FnOnce() -> Vec<Live>) {
        if self.0.started.get().is_none() {
            self.set(first());
        }
    }

    /// The routes of the agent `path` is under, and the path inside it.
    pub(crate) fn find(&self, path: &str) -> Option<(axum::Router, String)> {
        let mounts = self.current();
        mounts.iter().find_map(|m| {
            let rest = path.strip_prefix(m.path.as_str())?;
            if rest.is_empty() {
                Some((m.router.clone(), "/".to_string()))
            } else if rest.starts_with('/') {
                Some((m.router.clone(), rest.to_string()))
            } else {
                None
            }
        })
    }
}

/// Replaces the agents a running server has mounted; from
/// [`A2aServer::mount_reloader`]. See the
/// [module docs](self) for what happens to requests under way.
#[derive(Clone)]
pub struct MountReloader {
    pub(crate) root: A2aServer,
    pub(crate) live: LiveMounts,
}

impl std::fmt::Debug for MountReloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MountReloader")
            .field("paths", &self.paths())
            .finish()
    }
}

impl MountReloader {
    /// Mounts exactly `agents` (path, agent), as [`A2aServer::mount`] would
    /// have at start; on an error nothing changes. Pass an agent that did
    /// not change as the same `A2aServer` (a clone): its tasks, runs and
    /// streams carry on as if nothing happened.
    pub fn replace(&self, agents: Vec<(String, A2aServer)>) -> Result<(), MountError> {
        let mut live: Vec<Live> = Vec::with_capacity(agents.len());
        for (path, agent) in agents {
            let path = normalize(&path)?;
            let first = first_segment(&path);
            if live.iter().any(|m| first_segment(&m.path) == first) {
                return Err(MountError::Taken(path));
            }
            let server = self.root.mounted(&path, &agent);
            let router = server.router();
            live.push(Live {
                path,
                server,
                router,
            });
        }
        self.live.set(live);
        Ok(())
    }

    /// The paths mounted now.
    pub fn paths(&self) -> Vec<String> {
        self.live.current().iter().map(|m| m.path.clone()).collect()
    }
}

/// `req` with its path replaced by `inner` (the path inside the mounted
/// agent), its query kept.
pub(crate) fn strip(mut req: axum::extract::Request, inner: &str) -> axum::extract::Request {
    let uri = req.uri();
    let path_and_query = match uri.query() {
        Some(q) => format!("{inner}?{q}"),
        None => inner.to_string(),
    };
    if let Ok(pq) = axum::http::uri::PathAndQuery::try_from(path_and_query) {
        let mut parts = uri.clone().into_parts();
        parts.path_and_query = Some(pq);
        if let Ok(uri) = axum::http::Uri::from_parts(parts) {
            *req.uri_mut() = uri;
        }
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalized_and_checked() {
        assert_eq!(normalize("support/"), Ok("/support".into()));
        assert_eq!(normalize("/a/b"), Ok("/a/b".into()));
        assert_eq!(normalize("/"), Err(MountError::Root));
        assert!(matches!(
            normalize("/tasks"),
            Err(MountError::Reserved { .. })
        ));
        assert!(matches!(
            normalize("/.well-known/x"),
            Err(MountError::Reserved { .. })
        ));
        assert!(matches!(normalize("/a/../b"), Err(MountError::Invalid(_))));
        assert!(matches!(normalize("/a b"), Err(MountError::Invalid(_))));
        assert!(matches!(normalize("/{x}"), Err(MountError::Invalid(_))));
        assert_eq!(first_segment("/a/b"), "a");
    }
}
