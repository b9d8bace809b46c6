//! Signing keys for notifications: a [`KeySet`] with one current key and any
//! number of retired-but-still-published keys, persisted to a file.
//!
//! Receivers verify a notification's JWT with the public key whose `kid` the
//! JWT header names, fetched from the server's JWKS
//! (`/.well-known/jwks.json`). Rotation therefore has two steps:
//!
//! 1. [`KeySet::rotate`] makes a fresh key current. New notifications are
//!    signed with it; the old key stays **published**, so notifications
//!    signed a moment ago (or still being retried) keep verifying.
//! 2. Once nothing signed with the old key can still be in flight (its JWTs
//!    expire after the token lifetime, minutes), [`KeySet::retire`] removes
//!    it from the JWKS. From then on, a JWT signed with it fails to verify.
//!
//! Keys are ECDSA P-256 (JWS `ES256`), generated with ring and stored as
//! PKCS#8 PEM inside a small JSON file (mode 0600, replaced atomically) so a
//! restart keeps them: receivers that cached the JWKS need not refetch. The
//! `kid` is the key's RFC 7638 JWK thumbprint, so it is stable and derived
//! from the key itself.

use std::path::{Path, PathBuf};
use std::sync::RwLock;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why a key operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// Reading or writing the key file failed.
    #[error("push signing key file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The key file's contents are not a key set this server wrote.
    #[error("push signing key file {path} is not valid: {why}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Generating, encoding or using a key failed.
    #[error("push signing key: {0}")]
    Crypto(String),
    /// A shared key set document (e.g. from the database) is not valid.
    #[error("shared push signing key set is not valid: {0}")]
    InvalidDocument(String),
    /// No published key has this `kid`.
    #[error("no published push signing key has kid {0:?}")]
    UnknownKid(String),
    /// The current key cannot be retired (rotate first).
    #[error("key {0} is the current signing key; rotate() before retiring it")]
    RetireCurrent(String),
}

/// One ES256 key pair.
struct SigningKey {
    kid: String,
    pkcs8_der: Vec<u8>,
    encoding: EncodingKey,
    /// The public half, as published.
    jwk: Jwk,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl SigningKey {
    fn generate() -> Result<SigningKey, KeyError> {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &rng,
        )
        .map_err(|e| KeyError::Crypto(format!("generating a P-256 key: {e}")))?;
        SigningKey::from_pkcs8(pkcs8.as_ref().to_vec(), chrono::Utc::now())
    }

    fn from_pkcs8(
        der: Vec<u8>,
        created_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<SigningKey, KeyError> {
        let encoding = EncodingKey::from_ec_der(&der);
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256)
            .map_err(|e| KeyError::Crypto(format!("deriving the public key: {e}")))?;
        let kid = thumbprint(&jwk)?;
        jwk.common.key_id = Some(kid.clone());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        jwk.common.key_algorithm = Some(KeyAlgorithm::ES256);
        Ok(SigningKey {
            kid,
            pkcs8_der: der,
            encoding,
            jwk,
            created_at,
        })
    }
}

/// RFC 7638 thumbprint of an EC JWK: SHA-256 over the required members in
/// lexicographic order, base64url.
fn thumbprint(jwk: &Jwk) -> Result<String, KeyError> {
    let AlgorithmParameters::EllipticCurve(ec) = &jwk.algorithm else {
        return Err(KeyError::Crypto("not an EC key".into()));
    };
    let crv = serde_json::to_value(&ec.curve)
        .map_err(|e| KeyError::Crypto(e.to_string()))?
        .as_str()
        .unwrap_or("P-256")
        .to_string();
    let canonical = format!(
        r#"{{"crv":"{crv}","kty":"EC","x":"{}","y":"{}"}}"#,
        ec.x, ec.y
    );
    Ok(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())))
}

/// The file format: every key, newest last, and which one signs.
#[derive(Serialize, Deserialize)]
struct KeyFile {
    version: u32,
    current: String,
    keys: Vec<StoredKey>,
}

#[derive(Serialize, Deserialize)]
struct StoredKey {
    kid: String,
    created_at: chrono::DateTime<chrono::Utc>,
    private_key_pem: String,
}

struct Keys {
    /// Signs new notifications.
    current: SigningKey,
    /// Retired from signing, still in the JWKS, oldest first.
    published: Vec<SigningKey>,
}

/// The server's notification signing keys. See the module docs.
pub struct KeySet {
    keys: RwLock<Keys>,
    path: Option<PathBuf>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private keys.
        f.debug_struct("KeySet")
            .field("current", &self.current_kid())
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl KeySet {
    /// A fresh key set that lives in memory only (keys change at restart).
    pub fn generate() -> Result<KeySet, KeyError> {
        Ok(KeySet {
            keys: RwLock::new(Keys {
                current: SigningKey::generate()?,
                published: Vec::new(),
            }),
            path: None,
        })
    }

    /// Loads the key set stored at `path`, or creates one there (with a new
    /// key) if the file does not exist. Every later change is saved to it.
    pub fn load_or_create(path: impl AsRef<Path>) -> Result<KeySet, KeyError> {
        let path = path.as_ref().to_path_buf();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let keys = parse_file(&path, &text)?;
                Ok(KeySet {
                    keys: RwLock::new(keys),
                    path: Some(path),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let set = KeySet {
                    keys: RwLock::new(Keys {
                        current: SigningKey::generate()?,
                        published: Vec::new(),
                    }),
                    path: Some(path),
                };
                set.save(&set.read())?;
                Ok(set)
            }
            Err(source) => Err(KeyError::Io { path, source }),
        }
    }

    /// A key set from a document written by [`to_document`](Self::to_document)
    /// (the key file format), kept in memory only: for key sets shared
    /// through a database, where the caller stores the document.
    pub fn from_document(text: &str) -> Result<KeySet, KeyError> {
        Ok(KeySet {
            keys: RwLock::new(parse_document(text)?),
            path: None,
        })
    }

    /// The whole set, private keys included, in the key file format.
    pub fn to_document(&self) -> Result<String, KeyError> {
        document(&self.read())
    }

    /// Replaces every key with those of `text` (a document from
    /// [`to_document`](Self::to_document)), e.g. after another replica
    /// rotated the shared set. Saved to the key file, if this set has one.
    pub fn replace_from_document(&self, text: &str) -> Result<(), KeyError> {
        let fresh = parse_document(text)?;
        let mut keys = self.write();
        *keys = fresh;
        self.save(&keys)
    }

    /// The file this set is saved to, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Re-reads the key file (another process, e.g. `switchboard push
    /// rotate-key`, changed it) and swaps its keys in if they differ from
    /// the ones held; returns whether they did. Nothing is written back.
    /// `Ok(false)` for a set without a file.
    pub fn reload(&self) -> Result<bool, KeyError> {
        let Some(path) = &self.path else {
            return Ok(false);
        };
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: path.clone(),
            source,
        })?;
        let fresh = parse_file(path, &text)?;
        let kids = |k: &Keys| {
            std::iter::once(k.current.kid.clone())
                .chain(k.published.iter().map(|p| p.kid.clone()))
                .collect::<Vec<_>>()
        };
        let mut keys = self.write();
        if kids(&keys) == kids(&fresh) {
            return Ok(false);
        }
        *keys = fresh;
        tracing::info!(kid = %keys.current.kid, path = %path.display(), "reloaded the push signing keys from their file");
        Ok(true)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Keys> {
        // A panic while holding the lock cannot leave the keys half-changed:
        // every change is built first and swapped in with one assignment.
        self.keys.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Keys> {
        self.keys.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The `kid` new notifications are signed with.
    pub fn current_kid(&self) -> String {
        self.read().current.kid.clone()
    }

    /// Every published `kid`: the current one first, then retired-but-published ones.
    pub fn published_kids(&self) -> Vec<String> {
        let keys = self.read();
        std::iter::once(keys.current.kid.clone())
            .chain(keys.published.iter().rev().map(|k| k.kid.clone()))
            .collect()
    }

    /// Makes a fresh key current; the previous one stays published until
    /// [`retire`](Self::retire)d. Returns the new `kid`.
    pub fn rotate(&self) -> Result<String, KeyError> {
        let fresh = SigningKey::generate()?;
        let kid = fresh.kid.clone();
        let mut keys = self.write();
        let old = std::mem::replace(&mut keys.current, fresh);
        keys.published.push(old);
        self.save(&keys)?;
        tracing::info!(kid = %kid, "rotated the push signing key");
        Ok(kid)
    }

    /// Removes a non-current key from the JWKS; `Ok(false)` if it is not published.
    pub fn retire(&self, kid: &str) -> Result<bool, KeyError> {
        let mut keys = self.write();
        if keys.current.kid == kid {
            return Err(KeyError::RetireCurrent(kid.to_string()));
        }
        let before = keys.published.len();
        keys.published.retain(|k| k.kid != kid);
        let removed = keys.published.len() != before;
        if removed {
            self.save(&keys)?;
            tracing::info!(kid = %kid, "retired a push signing key");
        }
        Ok(removed)
    }

    /// The public keys as a JWK Set.
    pub fn jwk_set(&self) -> JwkSet {
        let keys = self.read();
        JwkSet {
            keys: std::iter::once(keys.current.jwk.clone())
                .chain(keys.published.iter().rev().map(|k| k.jwk.clone()))
                .collect(),
        }
    }

    /// Signs `claims` as an ES256 JWT with the current key (`kid` in the header).
    pub fn sign<T: Serialize>(&self, claims: &T) -> Result<String, KeyError> {
        let keys = self.read();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(keys.current.kid.clone());
        jsonwebtoken::encode(&header, claims, &keys.current.encoding)
            .map_err(|e| KeyError::Crypto(format!("signing a notification: {e}")))
    }

    /// Signs `payload` with the current key as a JWS with a detached
    /// payload (RFC 7515 appendix F): returns the base64url protected header
    /// (`alg` ES256, `kid`, `typ` "JOSE", and `jku` when given) and the
    /// base64url signature over `protected || "." || base64url(payload)`.
    /// Agent card signatures are made this way.
    pub fn sign_detached(
        &self,
        payload: &[u8],
        jku: Option<&str>,
    ) -> Result<(String, String), KeyError> {
        let keys = self.read();
        let mut header = serde_json::json!({
            "alg": "ES256",
            "kid": keys.current.kid,
            "typ": "JOSE",
        });
        if let Some(jku) = jku {
            header["jku"] = serde_json::Value::from(jku);
        }
        let protected = URL_SAFE_NO_PAD.encode(header.to_string());
        let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
        let signature =
            jsonwebtoken::crypto::sign(input.as_bytes(), &keys.current.encoding, Algorithm::ES256)
                .map_err(|e| KeyError::Crypto(format!("signing: {e}")))?;
        Ok((protected, signature))
    }

    /// A signature over `card` ([`AgentCard::signing_payload`]) with the
    /// current key, for the card's `signatures`. Verifiers find the public
    /// key by `kid` in the JWKS at `jku` (the server's
    /// `/.well-known/jwks.json`), the same set notification receivers use.
    ///
    /// [`AgentCard::signing_payload`]: switchboard_protocol::AgentCard::signing_payload
    pub fn sign_card(
        &self,
        card: &switchboard_protocol::AgentCard,
        jku: Option<&str>,
    ) -> Result<switchboard_protocol::card::AgentCardSignature, KeyError> {
        let payload = card
            .signing_payload()
            .map_err(|e| KeyError::Crypto(format!("canonicalizing the agent card: {e}")))?;
        let (protected, signature) = self.sign_detached(payload.as_bytes(), jku)?;
        Ok(switchboard_protocol::card::AgentCardSignature {
            protected,
            signature,
            header: None,
        })
    }

    /// Writes the set to its file (if it has one), atomically and private.
    fn save(&self, keys: &Keys) -> Result<(), KeyError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let text = document(keys)?;
        let io = |source| KeyError::Io {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("tmp");
        write_private(&tmp, text.as_bytes()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        Ok(())
    }
}

/// The key file JSON of `keys`.
fn document(keys: &Keys) -> Result<String, KeyError> {
    let file = KeyFile {
        version: 1,
        current: keys.current.kid.clone(),
        keys: keys
            .published
            .iter()
            .chain(std::iter::once(&keys.current))
            .map(|k| StoredKey {
                kid: k.kid.clone(),
                created_at: k.created_at,
                private_key_pem: to_pem(&k.pkcs8_der),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&file)
        .map_err(|e| KeyError::Crypto(format!("encoding the key file: {e}")))
}

impl switchboard_core::push::JwksSource for KeySet {
    fn jwks(&self) -> serde_json::Value {
        serde_json::to_value(self.jwk_set()).unwrap_or_else(|_| serde_json::json!({"keys": []}))
    }
}

fn parse_file(path: &Path, text: &str) -> Result<Keys, KeyError> {
    parse_with(text, |why| KeyError::Invalid {
        path: path.to_path_buf(),
        why,
    })
}

fn parse_document(text: &str) -> Result<Keys, KeyError> {
    parse_with(text, KeyError::InvalidDocument)
}

fn parse_with(text: &str, invalid: impl Fn(String) -> KeyError) -> Result<Keys, KeyError> {
    let file: KeyFile = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    if file.version != 1 {
        return Err(invalid(format!("unknown version {}", file.version)));
    }
    let mut current = None;
    let mut published = Vec::new();
    for stored in file.keys {
        let der = from_pem(&stored.private_key_pem)
            .ok_or_else(|| invalid(format!("key {} is not a PEM private key", stored.kid)))?;
        let key = SigningKey::from_pkcs8(der, stored.created_at)?;
        if key.kid != stored.kid {
            return Err(invalid(format!(
                "key {} does not match its kid (thumbprint {})",
                stored.kid, key.kid
            )));
        }
        if key.kid == file.current {
            current = Some(key);
        } else {
            published.push(key);
        }
    }
    let current =
        current.ok_or_else(|| invalid(format!("current key {} is missing", file.current)))?;
    Ok(Keys { current, published })
}

fn to_pem(der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(chunk));
        pem.push('\n');
    }
    pem.push_str("-----END PRIVATE KEY-----\n");
    pem
}

fn from_pem(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("-----"))
        .collect();
    STANDARD.decode(body).ok()
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

/// How often a server checks its key file for changes.
pub const KEY_FILE_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// Watches the file of `keys` (if it has one) every `every` until
/// `shutdown`, reloading it when it changed.
///
/// A running server picks up key changes made to its push signing key file
/// by another process (`switchboard push rotate-key` / `retire-key`).
///
/// The key file is the signing keys' only home when the server is not on
/// PostgreSQL (there the replicas share the set in the database and
/// `shared_keys` (feature `postgres`) polls its version). Those commands rewrite the file
/// atomically (temporary file + rename), so a reader sees the old or the new
/// document, never half of one. The server checks the file's modification
/// time and size every [`KEY_FILE_POLL`] (a `stat`, cheap) and, when they
/// changed, re-reads it with [`KeySet::reload`], which swaps the keys in
/// only if the set of `kid`s differs and never writes the file back. So
/// within about a second of a rotation new notifications are signed with the
/// new key and the JWKS lists it; after a retire the old `kid` is gone from
/// the JWKS. A file that disappears or does not parse is logged and the
/// keys in memory are kept: a bad edit must not stop signing.
///
/// Polling rather than filesystem notifications: it works the same on every
/// platform and filesystem (including network and container mounts), and
/// the cost is one `stat` per second.
pub fn spawn_file_reload(
    keys: std::sync::Arc<KeySet>,
    every: std::time::Duration,
    shutdown: tokio_util::sync::CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    let path = keys.path()?.to_path_buf();
    let stamp = move || {
        std::fs::metadata(&path).ok().map(|m| {
            (
                m.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH),
                m.len(),
            )
        })
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
