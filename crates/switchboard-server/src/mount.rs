//! Several agents on one server: [`A2aServer::mount`](crate::A2aServer::mount).
//!
//! Each mounted agent is an [`A2aServer`](crate::A2aServer) of its own (its
//! handler, card, limits) served under a path prefix: its card at
//! `<path>/.well-known/agent-card.json`, its JSON-RPC endpoint at `<path>`
//! and its REST routes under `<path>/` (0.3's under `<path>/v1/`), the
//! card's interfaces naming those URLs. The outer server's gate (its
//! authenticator and request rate) guards a mounted agent that sets none of
//! its own, and the outer server's layers (access log, metrics) wrap it.
//! `GET /agents` lists every agent with its card's URL.
//!
//! gRPC is served for the outer (root) agent only: a gRPC call names a
//! service and method, not a path, so it cannot reach a prefix, and a
//! mounted agent's card lists no gRPC interface. (The A2A 1.0 `tenant`
//! field could route gRPC calls one day, but tenants already scope tasks
//! within one agent here.)
//!
//! A mount's first path segment is the agent's: on the root agent's REST
//! binding that segment can no longer be a tenant prefix, and the paths
//! the root serves itself ([`RESERVED`]) cannot be mounted on.

use bytes::Bytes;

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

/// `path` as [`A2aServer::mount`](crate::A2aServer::mount) takes it: one
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

/// The body of `GET /agents`.
pub(crate) fn directory(agents: &[Listed]) -> Bytes {
    Bytes::from(serde_json::to_vec(&serde_json::json!({ "agents": agents })).unwrap_or_default())
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
