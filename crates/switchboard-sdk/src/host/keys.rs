//! Where the push signing keys live: a configured file; else, on
//! PostgreSQL, one set the replicas share in the database; else a file
//! beside the SQLite database; else (memory) keys in memory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchboard_push::KeySet;
use tokio_util::sync::CancellationToken;

use crate::store::OpenedStore;

/// Why the push signing keys could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PushKeysError {
    /// The key file could not be read or made.
    #[error("loading the push signing keys {}", .0.display())]
    File(PathBuf, #[source] switchboard_push::KeyError),
    /// Keys could not be generated.
    #[error("generating push signing keys")]
    Generate(#[source] switchboard_push::KeyError),
    /// The replicas' shared set could not be read.
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Shared(#[from] switchboard_push::shared_keys::SharedKeysError),
}

/// The push signing keys for the store `url`: `key_file` when given; else,
/// on PostgreSQL, the set the replicas share in the database (kept current
/// by a refresh task until `shutdown`); else a file beside the SQLite
/// database ([`push_key_path`], re-read when it changes); else keys in memory.
pub async fn load_push_keys(
    url: &str,
    key_file: Option<&Path>,
    store: &OpenedStore,
    shutdown: &CancellationToken,
) -> Result<Arc<KeySet>, PushKeysError> {
    #[cfg(feature = "postgres")]
    if key_file.is_none()
        && let Some(pg) = store.postgres()
    {
        use switchboard_push::shared_keys;
        let (keys, version) = shared_keys::load(pg).await?;
        shared_keys::spawn_refresh(
            pg.clone(),
            keys.clone(),
            version,
            shared_keys::REFRESH_INTERVAL,
            shutdown.clone(),
        );
        return Ok(keys);
    }
    #[cfg(not(feature = "postgres"))]
    let _ = store;
    let keys = Arc::new(match push_key_path(url, key_file) {
        Some(path) => KeySet::load_or_create(&path).map_err(|e| PushKeysError::File(path, e))?,
        None => KeySet::generate().map_err(PushKeysError::Generate)?,
    });
    // Key rotation changes the file; pick that up live.
    switchboard_push::keys::spawn_file_reload(
        keys.clone(),
        switchboard_push::keys::KEY_FILE_POLL,
        shutdown.clone(),
    );
    Ok(keys)
}

/// Where the push signing keys live for the store `url`: `key_file`, or
/// beside the SQLite database (`NAME.push-keys.json`); `None` (keys in
/// memory) for the memory store and PostgreSQL's shared set.
pub fn push_key_path(url: &str, key_file: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = key_file {
        return Some(p.to_owned());
    }
    let rest = url.strip_prefix("sqlite:")?;
    let path = rest.trim_start_matches("//");
    let path = path.split('?').next().unwrap_or(path);
    if path.is_empty() || path.contains(":memory:") {
        return None;
    }
    let db = PathBuf::from(path);
    let stem = db.file_stem()?.to_string_lossy().to_string();
    Some(db.with_file_name(format!("{stem}.push-keys.json")))
}
