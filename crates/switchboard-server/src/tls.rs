//! TLS on the listener: rustls (ring), a certificate chain and key read from
//! PEM files, and reloaded when the files change.
//!
//! Every binding rides on the same TLS connection: the handshake offers ALPN
//! `h2` and `http/1.1`, and `conn.rs` then serves the decrypted stream exactly
//! as it serves a plaintext one (the HTTP/2 preface sniffing still decides,
//! so a client that negotiates nothing works too). The handshake happens
//! inside the connection's slot, under the header read timeout: a client
//! that opens TLS and goes silent is closed like a silent plaintext one, and
//! counts against the connection caps meanwhile.
//!
//! Certificates expire, so they are replaced while the server runs. The
//! server config never holds the certificate itself: its
//! [`ResolvesServerCert`] reads the current [`CertifiedKey`] from a lock at
//! every handshake, and [`ServerTls::reload`] swaps in a new one. A watcher
//! (started by `A2aServer::serve`) polls both files' modification times
//! every [`ServerTls::reload_interval`] and reloads on a change. A file that
//! does not parse, or a key that does not match the certificate (say the
//! certificate was replaced and the key not yet), is logged and the old pair
//! kept; the next change is tried again. Connections already open keep the
//! session they negotiated.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

/// How often the certificate files are checked for a change, by default.
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(5);

/// Why a certificate and key could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A file holds no usable PEM of the kind expected.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// rustls refused the pair (unsupported key type, key not matching the
    /// certificate, …).
    #[error("the certificate {cert} and key {key} do not go together: {source}")]
    Pair {
        /// The certificate chain file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        source: rustls::Error,
    },
    /// rustls refused the server configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// A listener's TLS: the rustls server config and the files its certificate
/// comes from (see the [module docs](self)). Cheap to clone; clones share the
/// certificate.
#[derive(Clone)]
pub struct ServerTls {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: Arc<CurrentCert>,
    config: Arc<rustls::ServerConfig>,
    reload_interval: Duration,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .field("reload_interval", &self.reload_interval)
            .finish_non_exhaustive()
    }
}

/// The pair handshakes are answered with, and the file stamps it was read at.
#[derive(Debug)]
struct CurrentCert {
    key: RwLock<Arc<CertifiedKey>>,
    stamps: RwLock<Stamps>,
}

/// What the watcher compares: each file's modification time and length.
type Stamps = [Option<(SystemTime, u64)>; 2];

impl ResolvesServerCert for CurrentCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.key
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        )
    }
}

/// The one crypto provider of the process (see `switchboard-push`'s docs):
/// passed explicitly, so nothing depends on a process default.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl ServerTls {
    /// Reads the certificate chain (PEM, leaf first) and private key (PEM:
    /// PKCS#8, PKCS#1 or SEC1) and builds a server config offering ALPN
    /// `h2` and `http/1.1`.
    pub fn from_pem_files(
        cert: impl Into<PathBuf>,
        key: impl Into<PathBuf>,
    ) -> Result<Self, TlsError> {
        let cert_path = cert.into();
        let key_path = key.into();
        let stamps = stamps(&cert_path, &key_path);
        let certified = load_pair(&cert_path, &key_path)?;
        let current = Arc::new(CurrentCert {
            key: RwLock::new(Arc::new(certified)),
            stamps: RwLock::new(stamps),
        });
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_cert_resolver(current.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(ServerTls {
            cert_path,
            key_path,
            current,
            config: Arc::new(config),
            reload_interval: DEFAULT_RELOAD_INTERVAL,
        })
    }

    /// How often the files are checked for a change (default
    /// [`DEFAULT_RELOAD_INTERVAL`]).
    pub fn reload_interval(mut self, every: Duration) -> Self {
        self.reload_interval = every.max(Duration::from_millis(10));
        self
    }

    /// The rustls config handshakes use.
    pub fn config(&self) -> Arc<rustls::ServerConfig> {
        self.config.clone()
    }

    /// The certificate chain new handshakes present (DER, leaf first).
    pub fn certificate_chain(&self) -> Vec<CertificateDer<'static>> {
        self.current
            .key
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .cert
            .clone()
    }

    /// Re-reads the files if either changed since the last attempt.
    /// `Ok(true)`: new handshakes present the new pair; `Ok(false)`: nothing
    /// changed; an error leaves the current pair in place (the same change
    /// is not tried again).
    pub fn reload(&self) -> Result<bool, TlsError> {
        let now = stamps(&self.cert_path, &self.key_path);
        {
            let mut seen = self
                .current
                .stamps
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if *seen == now {
                return Ok(false);
            }
            *seen = now;
        }
        let certified = load_pair(&self.cert_path, &self.key_path)?;
        *self
            .current
            .key
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(certified);
        Ok(true)
    }

    /// Polls the files until `stop`, reloading on change; failures are
    /// logged and the old pair kept.
    pub(crate) async fn watch(self, stop: CancellationToken) {
        let mut tick = tokio::time::interval(self.reload_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            match self.reload() {
                Ok(true) => tracing::info!(
                    cert = %self.cert_path.display(),
                    "TLS certificate reloaded"
                ),
                Ok(false) => {}
                Err(e) => tracing::warn!(
                    error = %e,
                    "TLS certificate reload failed; still serving the previous certificate"
                ),
            }
        }
    }
}

fn stamps(cert: &Path, key: &Path) -> Stamps {
    let stamp = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len())))
    };
    [stamp(cert), stamp(key)]
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads and checks one certificate chain + key pair.
fn load_pair(cert_path: &Path, key_path: &Path) -> Result<CertifiedKey, TlsError> {
    let pem_error = |path: &Path, message: String| TlsError::Pem {
        path: path.to_path_buf(),
        message,
    };
    let cert_pem = read(cert_path)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(cert_path, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(pem_error(
            cert_path,
            "no CERTIFICATE block in the file".into(),
        ));
    }
    let key_pem = read(key_path)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| pem_error(key_path, format!("no PEM private key: {e}")))?;
    CertifiedKey::from_der(chain, key, &provider()).map_err(|source| TlsError::Pair {
        cert: cert_path.to_path_buf(),
        key: key_path.to_path_buf(),
        source,
    })
}
