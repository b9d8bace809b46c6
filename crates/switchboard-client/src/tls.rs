//! TLS for every binding: which servers the client trusts.
//!
//! The HTTP bindings (JSON-RPC, REST, the card and JWKS fetches) run on
//! reqwest with a rustls config made here; gRPC runs on tonic's rustls
//! connector, given the same roots. Both use the ring crypto provider,
//! passed explicitly, so the process needs no default provider and never
//! sees two (see `switchboard-push`'s docs).
//!
//! The roots are the Mozilla set compiled in (`webpki-roots`) rather than the
//! operating system's store: it builds and behaves the same on every machine,
//! minimal containers without `/etc/ssl/certs` included, and needs no file
//! access at start-up. A private CA (a test's, or a company's) is added with
//! [`ClientBuilder::add_root_certificate_pem`](crate::ClientBuilder::add_root_certificate_pem);
//! the CLI's `--ca-cert FILE` does that.
//!
//! A reqwest client built *without* such a config (`reqwest::Client::new()`
//! elsewhere in the program) asks rustls for the process's default
//! provider and panics when there is none; [`install_default_provider`]
//! installs ring as that default, and building an [`A2AClient`](crate::A2AClient)
//! does it too.

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;

use crate::error::ClientError;

/// The extra roots a client trusts, beside the Mozilla set: each a PEM
/// document of one or more certificates.
#[derive(Debug, Clone, Default)]
pub(crate) struct TrustedRoots {
    pub pems: Arc<Vec<Vec<u8>>>,
}

impl TrustedRoots {
    /// The root store: Mozilla's roots plus every certificate of the PEMs.
    fn store(&self) -> Result<RootCertStore, ClientError> {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for pem in self.pems.iter() {
            let certs = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ClientError::Config(format!("CA certificate is not PEM: {e}")))?;
            if certs.is_empty() {
                return Err(ClientError::Config(
                    "CA certificate file holds no CERTIFICATE block".into(),
                ));
            }
            for cert in certs {
                roots.add(cert).map_err(|e| {
                    ClientError::Config(format!("CA certificate is not usable: {e}"))
                })?;
            }
        }
        Ok(roots)
    }

    /// The rustls config of the HTTP bindings (ALPN `h2`, `http/1.1`).
    pub(crate) fn client_config(&self) -> Result<rustls::ClientConfig, ClientError> {
        let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Config(format!("TLS configuration: {e}")))?
        .with_root_certificates(self.store()?)
        .with_no_client_auth();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }

    /// tonic's TLS settings for a gRPC channel: the same roots.
    #[cfg(feature = "grpc")]
    pub(crate) fn grpc_config(&self) -> tonic::transport::ClientTlsConfig {
        self.pems.iter().fold(
            tonic::transport::ClientTlsConfig::new().with_webpki_roots(),
            |config, pem| config.ca_certificate(tonic::transport::Certificate::from_pem(pem)),
        )
    }
}

/// Makes ring the process's default rustls crypto provider, unless one is
/// installed already (then nothing changes). Call it first in `main` (and
/// in tests) when other code builds reqwest clients of its own.
pub fn install_default_provider() {
    // `Err` only means a default is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A reqwest client with the default roots (for fetches that have no
/// [`ClientBuilder`](crate::ClientBuilder), such as a webhook's JWKS).
pub(crate) fn default_http(timeout: Option<std::time::Duration>) -> reqwest::Client {
    install_default_provider();
    let mut builder = reqwest::Client::builder();
    if let Some(t) = timeout {
        builder = builder.timeout(t);
    }
    if let Ok(config) = TrustedRoots::default().client_config() {
        builder = builder.tls_backend_preconfigured(config);
    }
    // Only a broken TLS setup fails here; the provider above is installed,
    // so the default client is a working fallback.
    builder.build().unwrap_or_default()
}
