//! Delivery state changed from outside the server that delivers: dead
//! letters requeued, signing keys rotated and retired. These are the calls
//! behind `switchboard push …`; each returns what happened and leaves the
//! telling to its caller.
//!
//! A running server sees each change without a restart: a requeued dead
//! letter is pending and due at once, so a worker delivers it; a key file
//! is re-read within a second ([`spawn_file_reload`](crate::keys::spawn_file_reload)),
//! a set shared through PostgreSQL within `shared_keys::REFRESH_INTERVAL`.
//!
//! Keys rotate in two steps so that nothing in flight stops verifying:
//! [`rotate_key`] makes a fresh key current and keeps the old one published;
//! [`retire_key`], once the notifications signed with it are past their
//! token lifetime, takes the old one out of the JWKS.

use std::path::{Path, PathBuf};

use switchboard_core::StoreError;
use switchboard_core::push::{OutboxItem, PushStore, Requeue};

use crate::{KeyError, KeySet};

/// Which dead letters to requeue.
#[derive(Debug, Clone, Copy)]
pub enum DeadLetters<'a> {
    /// These ids (as listed by `PushStore::list_dead_letters`).
    Ids(&'a [u64]),
    /// Every dead letter of the tenant, or of one of its tasks.
    All {
        /// Only this task's.
        task: Option<&'a str>,
    },
}

/// Why requeueing stopped: the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequeueError {
    /// Listing the tenant's dead letters failed.
    #[error("listing dead letters")]
    List(#[source] StoreError),
    /// Requeueing this one failed (the ones before it were done).
    #[error("requeueing dead letter {id}")]
    Requeue {
        /// The dead letter.
        id: u64,
        /// What the store said.
        #[source]
        source: StoreError,
    },
}

/// A dead letter as it is shown: where it was going and why it failed, in
/// A2A's JSON style; the payload and the receiver's token and credentials
/// stay in the store. `url` is `null` when its push config was deleted.
pub fn dead_letter_json(d: &OutboxItem) -> serde_json::Value {
    serde_json::json!({
        "id": d.id,
        "tenant": d.tenant,
        "taskId": d.task_id,
        "configId": d.config_id,
        "seq": d.seq,
        "url": if d.url.is_empty() { None } else { Some(&d.url) },
        "attempts": d.attempts,
        "lastError": d.last_error,
        "queuedAt": d.created_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    })
}

/// Why requeueing left a dead letter as it was (`None`: it was requeued).
pub fn not_requeued_reason(outcome: Requeue) -> Option<&'static str> {
    match outcome {
        Requeue::Requeued => None,
        Requeue::NotFound => Some("no such dead letter"),
        Requeue::ConfigDeleted => Some("its push config was deleted; left as a dead letter"),
    }
}

/// Puts `which` dead letters of `tenant` back in the queue, in order;
/// returns what happened to each ([`Requeue::NotFound`] and
/// [`Requeue::ConfigDeleted`] leave it as it was).
pub async fn requeue_dead_letters(
    push: &dyn PushStore,
    tenant: &str,
    which: DeadLetters<'_>,
) -> Result<Vec<(u64, Requeue)>, RequeueError> {
    let ids: Vec<u64> = match which {
        DeadLetters::Ids(ids) => ids.to_vec(),
        DeadLetters::All { task } => push
            .list_dead_letters(tenant, task, usize::MAX >> 1)
            .await
            .map_err(RequeueError::List)?
            .iter()
            .map(|d| d.id)
            .collect(),
    };
    let mut done = Vec::with_capacity(ids.len());
    for id in ids {
        let outcome = push
            .requeue_dead_letter(tenant, id)
            .await
            .map_err(|source| RequeueError::Requeue { id, source })?;
        done.push((id, outcome));
    }
    Ok(done)
}

/// A signing key set, where a server keeps it.
#[derive(Debug)]
#[non_exhaustive]
pub enum SigningKeys {
    /// One server's key file (`KeySet::load_or_create`; boxed, it is the
    /// larger).
    File(Box<KeySet>),
    /// The set the replicas on one PostgreSQL database share.
    #[cfg(feature = "postgres")]
    Shared(switchboard_store_postgres::PgStore),
}

impl SigningKeys {
    /// The key file at `path`, which must exist: a typo must not create a
    /// new key set that no server signs with.
    pub fn open_file(path: &Path) -> Result<Self, KeyAdminError> {
        if !path.exists() {
            return Err(KeyAdminError::NoKeyFile(path.to_owned()));
        }
        Ok(SigningKeys::File(Box::new(KeySet::load_or_create(path)?)))
    }

    /// The set the replicas on the PostgreSQL database at `url` share.
    #[cfg(feature = "postgres")]
    pub async fn open_postgres(url: &str) -> Result<Self, KeyAdminError> {
        let store = switchboard_store_postgres::PgStore::open(url)
            .await
            .map_err(KeyAdminError::Open)?;
        Ok(SigningKeys::Shared(store))
    }
}

/// Why a key set could not be changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyAdminError {
    /// Making, reading, writing or changing the keys failed (retiring the
    /// current key included: [`KeyError::RetireCurrent`]).
    #[error(transparent)]
    Keys(#[from] KeyError),
    /// No key file where one was named.
    #[error("no push signing key file at {} (serve creates it at its first start)", .0.display())]
    NoKeyFile(PathBuf),
    /// The shared set's database could not be opened.
    #[error("opening the PostgreSQL store")]
    Open(#[source] StoreError),
    /// The shared set's database failed, or kept changing under us.
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Shared(crate::shared_keys::SharedKeysError),
}

#[cfg(feature = "postgres")]
impl From<crate::shared_keys::SharedKeysError> for KeyAdminError {
    fn from(e: crate::shared_keys::SharedKeysError) -> Self {
        match e {
            crate::shared_keys::SharedKeysError::Keys(keys) => KeyAdminError::Keys(keys),
            other => KeyAdminError::Shared(other),
        }
    }
}

/// A rotation: the key signing from now on, and the one before it (still
/// published until retired).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    /// The new current key's id.
    pub kid: String,
    /// The previous current key's id.
    pub previous: String,
}

/// Makes a fresh key current; the old one stays published.
pub async fn rotate_key(keys: &SigningKeys) -> Result<Rotated, KeyAdminError> {
    match keys {
        SigningKeys::File(set) => {
            let previous = set.current_kid();
            Ok(Rotated {
                kid: set.rotate()?,
                previous,
            })
        }
        #[cfg(feature = "postgres")]
        SigningKeys::Shared(store) => {
            let (set, _) = crate::shared_keys::load(store).await?;
            let previous = set.current_kid();
            Ok(Rotated {
                kid: crate::shared_keys::rotate(store, &set).await?,
                previous,
            })
        }
    }
}

/// Takes the key `kid` out of the published set; `false` when no published
/// key has that id. The current key is refused ([`KeyError::RetireCurrent`]).
pub async fn retire_key(keys: &SigningKeys, kid: &str) -> Result<bool, KeyAdminError> {
    match keys {
        SigningKeys::File(set) => Ok(set.retire(kid)?),
        #[cfg(feature = "postgres")]
        SigningKeys::Shared(store) => Ok(crate::shared_keys::retire(store, kid).await?),
    }
}
