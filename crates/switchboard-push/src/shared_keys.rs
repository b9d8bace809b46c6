//! Push signing keys shared by several replicas through PostgreSQL.
//!
//! A receiver verifies a notification with the key its JWT names (`kid`),
//! looked up in the JWKS of whichever replica it fetched it from. Replicas
//! behind one URL must therefore sign with the same key set. With the
//! PostgreSQL store (and no `push_key_file`), the set lives in the database:
//!
//! - at start-up each replica offers a freshly generated set; the first one
//!   stored wins and every replica loads that one ([`load`]);
//! - [`rotate`] rotates the stored set with a compare-and-set on its version,
//!   retrying on a concurrent change, so no rotation is lost;
//! - every replica polls the version ([`refresh`], run by [`spawn_refresh`])
//!   and swaps in the new set when it changed, so a rotation on one replica
//!   reaches every JWKS and every signer within one poll interval. The old
//!   key stays published (that is what rotation means), so notifications
//!   signed just before keep verifying everywhere; [`retire`] removes an
//!   old key the same way. An operator runs both with `switchboard push
//!   rotate-key` / `retire-key --postgres-url …`.
//!
//! Feature `postgres`.

use std::sync::Arc;
use std::time::Duration;

use switchboard_core::StoreError;
use switchboard_store_postgres::PgStore;
use tokio_util::sync::CancellationToken;

use crate::{KeyError, KeySet};

/// Why sharing the key set through the database failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SharedKeysError {
    /// The database failed.
    #[error("the shared push signing keys: {0}")]
    Store(#[from] StoreError),
    /// Making, reading or changing the key set failed.
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// Other replicas changed the set at every attempt (compare-and-set
    /// retried 10 times).
    #[error("the shared push signing keys kept changing; {0} not applied")]
    KeptChanging(&'static str),
    /// The database holds no key set yet.
    #[error("this database holds no shared push signing keys yet (start a server on it first)")]
    NoKeys,
}

/// How often a replica looks for a rotation made by another one.
pub const REFRESH_INTERVAL: Duration = Duration::from_secs(5);

/// The replicas' key set and the version it was loaded at.
pub async fn load(store: &PgStore) -> Result<(Arc<KeySet>, i64), SharedKeysError> {
    let candidate = KeySet::generate().and_then(|k| k.to_document())?;
    let stored = store.push_keys_init(&candidate).await?;
    let keys = KeySet::from_document(&stored.document)?;
    Ok((Arc::new(keys), stored.version))
}

/// Loads the stored set into `keys` if its version is not `*version`;
/// returns whether it changed.
pub async fn refresh(
    store: &PgStore,
    keys: &KeySet,
    version: &mut i64,
) -> Result<bool, SharedKeysError> {
    let Some(stored) = store.push_keys().await? else {
        return Ok(false);
    };
    if stored.version == *version {
        return Ok(false);
    }
    keys.replace_from_document(&stored.document)?;
    *version = stored.version;
    tracing::info!(kid = %keys.current_kid(), version = stored.version, "loaded rotated push signing keys");
    Ok(true)
}

/// Rotates the stored set (a fresh current key; the old one stays
/// published) and loads it into `keys`. Returns the new `kid`.
pub async fn rotate(store: &PgStore, keys: &KeySet) -> Result<String, SharedKeysError> {
    for _ in 0..10 {
        let stored = match store.push_keys().await? {
            Some(s) => s,
            None => {
                load(store).await?;
                continue;
            }
        };
        let next = KeySet::from_document(&stored.document)?;
        let kid = next.rotate()?;
        let document = next.to_document()?;
        if store
            .push_keys_replace(stored.version, &document)
            .await?
            .is_some()
        {
            keys.replace_from_document(&document)?;
            return Ok(kid);
        }
        // Another replica changed the set meanwhile: rotate its version.
    }
    Err(SharedKeysError::KeptChanging("rotation"))
}

/// Removes `kid` from the stored set (it must be published and not the
/// current key), with the same compare-and-set as [`rotate`]; every replica
/// drops it from its JWKS at its next [`refresh`]. `Ok(false)`: no published
/// key has this `kid`.
pub async fn retire(store: &PgStore, kid: &str) -> Result<bool, SharedKeysError> {
    for _ in 0..10 {
        let Some(stored) = store.push_keys().await? else {
            return Err(SharedKeysError::NoKeys);
        };
        let next = KeySet::from_document(&stored.document)?;
        if !next.retire(kid)? {
            return Ok(false);
        }
        let document = next.to_document()?;
        if store
            .push_keys_replace(stored.version, &document)
            .await?
            .is_some()
        {
            return Ok(true);
        }
    }
    Err(SharedKeysError::KeptChanging("retirement"))
}

/// Polls for rotations every `every` until `shutdown`.
pub fn spawn_refresh(
    store: PgStore,
    keys: Arc<KeySet>,
    mut version: i64,
    every: Duration,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            if let Err(e) = refresh(&store, &keys, &mut version).await {
                tracing::warn!(error = %e, "checking for rotated push signing keys");
            }
        }
    })
}
