//! Issue 21 item 1 (client side): OAuth 2.0 client credentials in our client.
//!
//! An identity provider in the test (axum on 127.0.0.1: a token endpoint and
//! its JWKS) and the real `serve` with JWT authentication against that JWKS.
//! On every binding and version our client gets a token once and reuses it;
//! a token the agent refuses although the provider said it was good for an
//! hour (issued already expired: clocks that disagree) is renewed once and
//! the call succeeds; wrong client credentials are
//! a clear OAuth error that does not show the secret. The CLI does the same
//! with its flags and the secret from the environment.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod util;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use base64::Engine as _;
use proc::Serve;
use serde_json::json;
use switchboard_client::{A2AClient, ClientCredentials, ClientError};
use switchboard_protocol::error::UNAUTHENTICATED_CODE;
use switchboard_push::KeySet;
use util::COMBOS;

const ISSUER: &str = "https://idp.test";
const AUDIENCE: &str = "switchboard-oauth-test";
const CLIENT_ID: &str = "robot";
const SECRET: &str = "s3cret-value-never-logged";

/// The identity provider: `/token` (client credentials, HTTP Basic) and
/// `/jwks`; tokens are signed with the current key.
struct Idp {
    base: String,
    issued: Arc<AtomicUsize>,
    scopes: Arc<Mutex<Vec<String>>>,
    /// The next token issued is already expired (but claims an hour).
    stale_next: Arc<std::sync::atomic::AtomicBool>,
}

impl Idp {
    async fn start() -> Idp {
        let keys = Arc::new(Mutex::new(KeySet::generate().unwrap()));
        let issued = Arc::new(AtomicUsize::new(0));
        let scopes = Arc::new(Mutex::new(Vec::new()));
        let stale_next = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (k1, k2, n, sc) = (keys.clone(), keys.clone(), issued.clone(), scopes.clone());
        let stale = stale_next.clone();
        let app = axum::Router::new()
            .route(
                "/jwks",
                axum::routing::get(move || {
                    let set = k1.lock().unwrap().jwk_set();
                    async move { axum::Json(serde_json::to_value(set).unwrap()) }
                }),
            )
            .route(
                "/token",
                axum::routing::post(move |headers: HeaderMap, body: String| {
                    let (k, n, sc) = (k2.clone(), n.clone(), sc.clone());
                    let stale = stale.clone();
                    async move {
                        let expected = format!(
                            "Basic {}",
                            base64::engine::general_purpose::STANDARD
                                .encode(format!("{CLIENT_ID}:{SECRET}"))
                        );
                        let auth = headers
                            .get("authorization")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default();
                        if auth != expected {
                            return (
                                StatusCode::UNAUTHORIZED,
                                axum::Json(json!({"error": "invalid_client"})),
                            );
                        }
                        let form: Vec<(String, String)> =
                            url::form_urlencoded::parse(body.as_bytes())
                                .into_owned()
                                .collect();
                        let get = |k: &str| {
                            form.iter()
                                .find(|(name, _)| name == k)
                                .map(|(_, v)| v.clone())
                        };
                        if get("grant_type").as_deref() != Some("client_credentials") {
                            return (
                                StatusCode::BAD_REQUEST,
                                axum::Json(json!({"error": "unsupported_grant_type"})),
                            );
                        }
                        if let Some(scope) = get("scope") {
                            sc.lock().unwrap().push(scope);
                        }
                        n.fetch_add(1, Ordering::SeqCst);
                        let now = chrono::Utc::now().timestamp();
                        let exp = if stale.swap(false, Ordering::SeqCst) {
                            now - 600
                        } else {
                            now + 3600
                        };
                        let token = k
                            .lock()
                            .unwrap()
                            .sign(&json!({"iss": ISSUER, "aud": AUDIENCE, "sub": CLIENT_ID,
                                          "iat": now, "exp": exp}))
                            .unwrap();
                        (
                            StatusCode::OK,
                            axum::Json(json!({"access_token": token, "token_type": "Bearer",
                                              "expires_in": 3600})),
                        )
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Idp {
            base,
            issued,
            scopes,
            stale_next,
        }
    }

    fn token_url(&self) -> String {
        format!("{}/token", self.base)
    }

    fn issued(&self) -> usize {
        self.issued.load(Ordering::SeqCst)
    }
}

fn serve(idp: &Idp) -> Serve {
    let jwks = format!("{}/jwks", idp.base);
    Serve::start_with(
        "memory",
        &[
            "--jwks-url",
            &jwks,
            "--jwt-issuer",
            ISSUER,
            "--jwt-audience",
            AUDIENCE,
            "--jwks-min-refetch-secs",
            "0",
            "--agent",
            "echo-task",
        ],
    )
}

fn credentials(idp: &Idp) -> ClientCredentials {
    ClientCredentials::new(idp.token_url(), CLIENT_ID, SECRET).scope("a2a.tasks")
}

async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 60 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_on_every_binding() {
    let idp = Idp::start().await;
    let server = serve(&idp);
    let base = server.base();
    for combo in COMBOS {
        let what = format!("{} {}", combo.0, combo.1);
        let builder = A2AClient::builder()
            .preferred_bindings([combo.0])
            .preferred_versions([combo.1])
            .timeout(Duration::from_secs(20));

        // Without a token: refused.
        let anonymous = within(&what, builder.clone().connect(&base)).await.unwrap();
        let err = within(&what, anonymous.send_text("no token"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(UNAUTHENTICATED_CODE), "{what}: {err}");

        // With client credentials. The first token is refused (issued
        // expired, though it claims an hour): renewed once, and the call
        // succeeds; then one token serves several calls.
        let before = idp.issued();
        idp.stale_next.store(true, Ordering::SeqCst);
        let client = within(
            &what,
            builder.clone().oauth(credentials(&idp)).connect(&base),
        )
        .await
        .unwrap();
        assert_eq!(client.interface().protocol_binding, combo.0, "{what}");
        for i in 0..3 {
            within(&what, client.send_text(format!("call {i}")))
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        assert_eq!(
            idp.issued(),
            before + 2,
            "{what}: renewed once after the refusal, then cached"
        );
        // A stream carries the token too.
        let stream = within(
            &what,
            client.send_streaming_message(switchboard_protocol::Message::user_text("stream")),
        )
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        use futures::StreamExt as _;
        let items: Vec<_> = within(&what, stream.collect::<Vec<_>>()).await;
        assert!(!items.is_empty(), "{what}");
        for item in items {
            item.unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        assert_eq!(idp.issued(), before + 2, "{what}: no more tokens");
    }
    assert!(
        idp.scopes.lock().unwrap().iter().all(|s| s == "a2a.tasks"),
        "the scope is asked for"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_client_credentials_are_an_oauth_error_without_the_secret() {
    let idp = Idp::start().await;
    let server = serve(&idp);
    let wrong = "wrong-secret-value";
    let client = A2AClient::builder()
        .oauth(ClientCredentials::new(idp.token_url(), CLIENT_ID, wrong))
        .connect(&server.base())
        .await
        .unwrap();
    let err = within("send", client.send_text("hi")).await.unwrap_err();
    assert!(matches!(err, ClientError::OAuth(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("401"), "{text}");
    assert!(!text.contains(wrong) && !text.contains(SECRET), "{text}");
    assert!(
        !format!("{:?}", ClientCredentials::new("u", "i", wrong)).contains(wrong),
        "Debug masks the secret"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_takes_the_secret_from_the_environment() {
    let idp = Idp::start().await;
    let server = serve(&idp);
    let run = |with_secret: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"));
        cmd.args(["send", "--url", &server.base(), "--oauth-token-url"])
            .arg(idp.token_url())
            .args(["--oauth-client-id", CLIENT_ID, "--oauth-scope", "a2a.tasks"])
            .arg("hello from the cli")
            .env_remove("SWITCHBOARD_OAUTH_CLIENT_SECRET");
        if with_secret {
            cmd.env("SWITCHBOARD_OAUTH_CLIENT_SECRET", SECRET);
        }
        cmd
    };
    let mut cmd = run(true);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("hello from the cli"), "{stdout}");
    assert!(!stdout.contains(SECRET) && !stderr.contains(SECRET));
    assert_eq!(idp.issued(), 1);
    let mut cmd = run(false);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("SWITCHBOARD_OAUTH_CLIENT_SECRET"),
        "{stderr}"
    );
}
