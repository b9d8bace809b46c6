//! A running `serve` picks up key changes made to its push signing key file
//! by another process (`switchboard push rotate-key` / `retire-key`).
//!
//! The key file is the signing keys' only home when the server is not on
//! PostgreSQL (there the replicas share the set in the database and
//! [`crate::shared_keys`] polls its version). Those commands rewrite the file
//! atomically (temporary file + rename), so a reader sees the old or the new
//! document, never half of one. The server checks the file's modification
//! time and size every [`KEY_FILE_POLL`] (a `stat`, cheap) and, when they
//! changed, re-reads it with [`KeySet::reload`], which swaps the keys in
//! only if the set of `kid`s differs and never writes the file back. So
//! within about a second of a rotation new notifications are signed with the
//! new key and the JWKS lists it; after a retire the old `kid` is gone from
//! the JWKS. A file that disappears or does not parse is logged and the
//! keys in memory are kept: a bad edit must not stop signing.
//!
//! Polling rather than filesystem notifications: it works the same on every
//! platform and filesystem (including network and container mounts), and
//! the cost is one `stat` per second.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use switchboard_push::KeySet;
use tokio_util::sync::CancellationToken;

/// How often a server checks its key file for changes.
pub const KEY_FILE_POLL: Duration = Duration::from_secs(1);

/// Watches the file of `keys` (if it has one) every `every` until
/// `shutdown`, reloading it when it changed.
pub fn spawn_file_reload(
    keys: Arc<KeySet>,
    every: Duration,
    shutdown: CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    let path = keys.path()?.to_path_buf();
    let stamp = move || {
        std::fs::metadata(&path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()))
    };
    Some(tokio::spawn(async move {
        let mut seen = stamp();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            let now = stamp();
            if now == seen {
                continue;
            }
            // Remember the new stamp either way: a broken file is reported
            // once, not every second, and read again when it changes.
            seen = now;
            if seen.is_none() {
                tracing::warn!(path = ?keys.path(), "the push signing key file is gone; keeping the keys in memory");
                continue;
            }
            if let Err(e) = keys.reload() {
                tracing::warn!(error = %e, "reloading the push signing key file failed; keeping the keys in memory");
            }
        }
    }))
}
