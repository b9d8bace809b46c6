//! Issue 21 item 7: `serve` over TLS, and our client speaking it.
//!
//! A CA and server certificates for 127.0.0.1/localhost are made in the test
//! (rcgen); the real binary serves them. Checked: every binding (JSON-RPC,
//! REST, gRPC; a stream too) works with the CA trusted and the card's
//! interfaces are https; without the CA each binding fails at once with a
//! certificate error; replacing the files makes new connections present the
//! new certificate while an old connection keeps working, and a bad file is
//! logged and the old certificate kept. And the JWT scheme's JWKS fetch
//! from an identity provider behind a private CA: trusted with
//! `--jwks-ca-cert`, refused (callers Unauthenticated) without it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use proc::Serve;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SerialNumber};
use rustls::pki_types::{CertificateDer, ServerName};
use switchboard_client::{A2AClient, ClientError};
use switchboard_protocol::card::{BINDING_GRPC, BINDING_HTTP_JSON, BINDING_JSONRPC};
use switchboard_protocol::{Message, SendMessageResponse, StreamResponse, TaskState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A test CA that issues server certificates.
struct Pki {
    ca_pem: String,
    ca_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

/// One issued server certificate.
struct Leaf {
    cert_pem: String,
    key_pem: String,
    der: CertificateDer<'static>,
}

impl Pki {
    fn new() -> Pki {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "switchboard test CA");
        let cert = params.self_signed(&key).unwrap();
        Pki {
            ca_pem: cert.pem(),
            ca_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A certificate for localhost and 127.0.0.1 with this serial and name.
    fn leaf(&self, serial: u64, name: &str) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.serial_number = Some(SerialNumber::from(serial));
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            der: cert.der().clone(),
        }
    }
}

/// Writes a file whole and then renames it into place, as a deployment
/// would, so the server never reads half of it.
fn replace(path: &Path, contents: &str) {
    let tmp = path.with_extension("new");
    std::fs::write(&tmp, contents).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

struct TlsServe {
    serve: Serve,
    cert: PathBuf,
    key: PathBuf,
    _dir: tempfile::TempDir,
}

impl TlsServe {
    fn start(leaf: &Leaf) -> TlsServe {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        let key = dir.path().join("key.pem");
        replace(&cert, &leaf.cert_pem);
        replace(&key, &leaf.key_pem);
        let log = dir.path().join("serve.log");
        let serve = Serve::start_logging(
            "memory",
            &[
                "--tls-cert",
                cert.to_str().unwrap(),
                "--tls-key",
                key.to_str().unwrap(),
                "--tls-reload-secs",
                "1",
                "--log",
                "info",
            ],
            &log,
        );
        TlsServe {
            serve,
            cert,
            key,
            _dir: dir,
        }
    }

    fn base(&self) -> String {
        format!("https://127.0.0.1:{}", self.serve.port)
    }

    /// How often the server's log has `needle` so far.
    fn count(&self, needle: &str) -> usize {
        self.serve.log().matches(needle).count()
    }

    /// Waits until the server's log has `needle` `count` times (the
    /// reloader's report: the event the test waits for).
    async fn logged(&self, needle: &str, count: usize) {
        let waited = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                if self.serve.log().matches(needle).count() >= count {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
        assert!(
            waited.is_ok(),
            "no {needle:?} in the log:\n{}",
            self.serve.log()
        );
    }
}

/// A raw TLS connection that trusts `ca`, to see what the server presents.
async fn tls_connect(
    port: u16,
    ca: &CertificateDer<'static>,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap()
}

fn presented(conn: &tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> Vec<u8> {
    conn.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

/// One HTTP/1.1 request for the card on an open connection; its status line.
async fn card_on(conn: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> String {
    conn.write_all(
        b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n",
    )
    .await
    .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0_u8; 4096];
    // The head is enough: the status line is what is checked.
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&seen)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

async fn within<T>(what: &'static str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 60 s"))
}

#[tokio::test]
async fn every_binding_over_tls_with_the_ca_trusted() {
    let pki = Pki::new();
    let server = TlsServe::start(&pki.leaf(1, "first"));
    let base = server.base();
    let trusting = A2AClient::builder().add_root_certificate_pem(pki.ca_pem.clone());

    let card = within("card", trusting.fetch_card(&base)).await.unwrap();
    assert!(!card.supported_interfaces.is_empty());
    for i in &card.supported_interfaces {
        assert!(
            i.url.starts_with("https://127.0.0.1:"),
            "{} {}: {}",
            i.protocol_binding,
            i.protocol_version,
            i.url
        );
    }

    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let client = within(
            "connect",
            trusting
                .clone()
                .preferred_bindings([binding])
                .connect(&base),
        )
        .await
        .unwrap_or_else(|e| panic!("{binding}: {e}"));
        assert_eq!(client.interface().protocol_binding, binding);
        match within("send", client.send_text("hello over tls"))
            .await
            .unwrap_or_else(|e| panic!("{binding}: {e}"))
        {
            SendMessageResponse::Task(t) => proc::assert_demo_answer(&t, "hello over tls", binding),
            other => panic!("{binding}: expected a task, got {other:?}"),
        }
        // A stream (SSE on the HTTP bindings, a server stream on gRPC).
        let stream = within(
            "stream",
            client.send_streaming_message(Message::user_text("stream over tls")),
        )
        .await
        .unwrap_or_else(|e| panic!("{binding}: {e}"));
        let items: Vec<_> = within("stream items", stream.collect::<Vec<_>>()).await;
        let items: Vec<_> = items
            .into_iter()
            .map(|i| i.unwrap_or_else(|e| panic!("{binding}: {e}")))
            .collect();
        assert!(
            matches!(items[0].event, StreamResponse::Task(_)),
            "{binding}"
        );
        assert_eq!(
            items.last().unwrap().event.state(),
            Some(TaskState::Completed),
            "{binding}"
        );
    }
}

/// The certificate error, not a hang or a generic failure, on every binding.
#[tokio::test]
async fn without_the_ca_every_binding_reports_a_certificate_error() {
    let pki = Pki::new();
    let server = TlsServe::start(&pki.leaf(1, "first"));
    let base = server.base();
    let card = within(
        "card",
        A2AClient::builder()
            .add_root_certificate_pem(pki.ca_pem.clone())
            .fetch_card(&base),
    )
    .await
    .unwrap();

    let is_certificate_error = |e: &ClientError| {
        let text = e.to_string().to_ascii_lowercase();
        assert!(
            matches!(e, ClientError::Transport { timeout: false, .. }),
            "{e:?}"
        );
        assert!(
            text.contains("certificate") && text.contains("unknownissuer"),
            "not a certificate error: {text}"
        );
    };

    // The card fetch itself.
    let err = within("connect", A2AClient::builder().connect(&base))
        .await
        .unwrap_err();
    is_certificate_error(&err);

    // Each binding, with a card already in hand.
    for binding in [BINDING_JSONRPC, BINDING_HTTP_JSON, BINDING_GRPC] {
        let client = A2AClient::builder()
            .preferred_bindings([binding])
            .no_reconnect()
            .from_card(card.clone())
            .unwrap();
        let err = within("send", client.send_text("not trusted"))
            .await
            .unwrap_err();
        is_certificate_error(&err);
    }
}

#[tokio::test]
async fn a_replaced_certificate_is_served_to_new_connections() {
    let pki = Pki::new();
    let first = pki.leaf(1001, "first");
    let server = TlsServe::start(&first);

    let mut old = tls_connect(server.serve.port, &pki.ca_der).await;
    assert_eq!(presented(&old), first.der.to_vec());
    assert_eq!(card_on(&mut old).await, "HTTP/1.1 200 OK");

    // Rotation: new key and certificate (another serial and subject).
    let second = pki.leaf(2002, "second");
    replace(&server.key, &second.key_pem);
    replace(&server.cert, &second.cert_pem);
    server.logged("TLS certificate reloaded", 1).await;

    let fresh = tls_connect(server.serve.port, &pki.ca_der).await;
    assert_eq!(
        presented(&fresh),
        second.der.to_vec(),
        "a new connection sees the new certificate (serial 2002, CN second)"
    );
    assert_ne!(first.der, second.der);
    // The connection made before the rotation still works.
    assert_eq!(card_on(&mut old).await, "HTTP/1.1 200 OK");
    // And our client, trusting the CA, connects afresh.
    let client = A2AClient::builder()
        .add_root_certificate_pem(pki.ca_pem.clone())
        .connect(&server.base())
        .await
        .unwrap();
    within("send", client.send_text("after rotation"))
        .await
        .unwrap();

    // A bad file: logged, and the last good certificate kept.
    const FAILED: &str = "TLS certificate reload failed";
    const RELOADED: &str = "TLS certificate reloaded";
    let failed = server.count(FAILED);
    replace(&server.cert, "-----BEGIN CERTIFICATE-----\nnot base64!\n");
    server.logged(FAILED, failed + 1).await;
    let still = tls_connect(server.serve.port, &pki.ca_der).await;
    assert_eq!(presented(&still), second.der.to_vec());
    // A key that does not match the certificate: refused the same way.
    let third = pki.leaf(3003, "third");
    let failed = server.count(FAILED);
    replace(&server.cert, &third.cert_pem);
    server.logged(FAILED, failed + 1).await;
    let still = tls_connect(server.serve.port, &pki.ca_der).await;
    assert_eq!(presented(&still), second.der.to_vec());
    // Its key arrives: the pair is complete and served.
    let reloaded = server.count(RELOADED);
    replace(&server.key, &third.key_pem);
    server.logged(RELOADED, reloaded + 1).await;
    let newest = tls_connect(server.serve.port, &pki.ca_der).await;
    assert_eq!(presented(&newest), third.der.to_vec());
}

#[test]
fn tls_needs_both_files() {
    let pki = Pki::new();
    let leaf = pki.leaf(1, "x");
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::write(&cert, &leaf.cert_pem).unwrap();
    let err = serve_refuses_to_start(&["--tls-cert", cert.to_str().unwrap()]);
    assert!(err.contains("tls_key"), "{err}");
}

/// Runs `serve` on loopback with `extra` flags, expecting it to refuse to
/// start; returns what it wrote to stderr.
fn serve_refuses_to_start(extra: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store", "memory"])
        .args(extra)
        .env_remove("SWITCHBOARD_CONFIG")
        .output()
        .unwrap();
    assert!(!out.status.success(), "serve started with {extra:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// An identity provider's JWKS endpoint over HTTPS with `leaf`'s
/// certificate: every connection gets `jwks` (one request, then close).
async fn https_jwks(leaf: &Leaf, jwks: String) -> String {
    use rustls::pki_types::PrivateKeyDer;
    use rustls::pki_types::pem::PemObject as _;
    let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der.clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://127.0.0.1:{}/jwks",
        listener.local_addr().unwrap().port()
    );
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, jwks) = (acceptor.clone(), jwks.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return; // a client that does not trust the CA
                };
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{jwks}",
                    jwks.len()
                );
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    url
}

/// `serve --jwks-url https://…` against an identity provider whose
/// certificate a private CA issued: with `--jwks-ca-cert` a token signed by
/// its keys is accepted; without, the fetch fails and the caller gets the
/// binding's authentication error (never task data, never a 500).
#[tokio::test]
async fn a_jwks_behind_a_private_ca_is_trusted_with_jwks_ca_cert() {
    let pki = Pki::new();
    let idp_keys = switchboard_push::KeySet::generate().unwrap();
    let jwks = https_jwks(
        &pki.leaf(7, "idp"),
        serde_json::to_string(&idp_keys.jwk_set()).unwrap(),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("idp-ca.pem");
    replace(&ca, &pki.ca_pem);
    let now = chrono::Utc::now().timestamp();
    let token = idp_keys
        .sign(&serde_json::json!({
            "iss": "https://idp.test", "aud": "switchboard-test", "sub": "ci",
            "iat": now, "exp": now + 300
        }))
        .unwrap();
    let jwt_args = [
        "--agent",
        "echo-task",
        "--jwks-url",
        &jwks,
        "--jwt-issuer",
        "https://idp.test",
        "--jwt-audience",
        "switchboard-test",
    ];
    let list = |port: u16| {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/"))
            .header("a2a-version", "1.0")
            .bearer_auth(&token)
            .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
            .send()
    };

    let mut trusted_args = jwt_args.to_vec();
    trusted_args.extend(["--jwks-ca-cert", ca.to_str().unwrap()]);
    let trusted = Serve::start_logging("memory", &trusted_args, &dir.path().join("trusted.log"));
    let answer = list(trusted.port).await.unwrap();
    assert_eq!(answer.status(), 200, "{}", trusted.log());
    let body: serde_json::Value = answer.json().await.unwrap();
    assert!(body["result"]["tasks"].is_array(), "{body}");

    let untrusted = Serve::start_logging("memory", &jwt_args, &dir.path().join("untrusted.log"));
    let answer = list(untrusted.port).await.unwrap();
    assert_eq!(answer.status(), 401, "{}", untrusted.log());
    let body: serde_json::Value = answer.json().await.unwrap();
    assert!(body.get("result").is_none(), "{body}");
    assert!(body["error"]["code"].is_i64(), "{body}");
}

/// A CA file without a certificate is a start-up error naming the flag.
#[test]
fn a_jwks_ca_file_without_certificates_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("empty.pem");
    std::fs::write(&ca, "not a certificate\n").unwrap();
    let stderr = serve_refuses_to_start(&[
        "--jwks-url",
        "https://127.0.0.1:1/jwks",
        "--jwt-issuer",
        "i",
        "--jwt-audience",
        "a",
        "--jwks-ca-cert",
        ca.to_str().unwrap(),
    ]);
    assert!(stderr.contains("JWKS CA certificates"), "{stderr}");
}
