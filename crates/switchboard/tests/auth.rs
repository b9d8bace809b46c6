//! switchboard-auth on a real server over loopback: bearer JWTs checked
//! against a JWKS served by a local axum route (valid, expired, wrong
//! audience, unknown `kid` refetched, rotated keys, a flood of unknown
//! `kid`s costing one fetch), and API keys (valid in either header, wrong,
//! missing), on JSON-RPC, REST and gRPC in both protocol versions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;
use serde_json::{Value, json};
use switchboard_auth::{ApiKeys, JwtBearer, JwtConfig, Schemes, hash_api_key};
use switchboard_client::{A2AClient, ClientError};
use switchboard_core::{InMemoryStore, RequestHandler};
use switchboard_protocol::error::UNAUTHENTICATED_CODE;
use switchboard_protocol::{A2AError, SendMessageResponse, TaskState};
use switchboard_push::KeySet;
use switchboard_runtimes::builtin::{EchoTask, echo_card};
use util::{COMBOS, TestServer};

const ISSUER: &str = "https://idp.test";
const AUDIENCE: &str = "switchboard-test";
const ALPHA_KEY: &str = "sb_alpha-test-key";

/// An identity provider's JWKS endpoint on loopback: serves whatever set
/// the test puts in `keys`, counting the fetches.
struct JwksHost {
    url: String,
    keys: Arc<Mutex<JwkSet>>,
    fetches: Arc<AtomicUsize>,
}

impl JwksHost {
    async fn start(keys: JwkSet) -> JwksHost {
        let keys = Arc::new(Mutex::new(keys));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (k, f) = (keys.clone(), fetches.clone());
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let (k, f) = (k.clone(), f.clone());
                async move {
                    f.fetch_add(1, Ordering::SeqCst);
                    let set = k.lock().unwrap().clone();
                    axum::Json(serde_json::to_value(set).unwrap())
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        JwksHost { url, keys, fetches }
    }

    fn publish(&self, keys: JwkSet) {
        *self.keys.lock().unwrap() = keys;
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A token for `sub` signed by `keys`, valid for five minutes.
fn token(keys: &KeySet, sub: &str) -> String {
    keys.sign(
        &json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": now() + 300, "iat": now()}),
    )
    .unwrap()
}

fn config(jwks: &JwksHost, min_refetch: Duration) -> JwtConfig {
    let mut c = JwtConfig::new(&jwks.url, ISSUER, AUDIENCE);
    c.min_refetch = min_refetch;
    c
}

async fn server(jwt: JwtConfig) -> TestServer {
    let keys = ApiKeys::new()
        .key(&hash_api_key(ALPHA_KEY), "alpha", None, false)
        .unwrap();
    let auth = Schemes::new().with(JwtBearer::new(jwt).unwrap()).with(keys);
    let handler = RequestHandler::builder(EchoTask, echo_card())
        .store(Arc::new(InMemoryStore::new()))
        .build();
    TestServer::start_with(|s| s.authenticator(auth), handler).await
}

/// An identity provider (its keys, published by a JWKS host) and a server
/// that trusts it, refetching the JWKS at most every `min_refetch`.
async fn idp_and_server(min_refetch: Duration) -> (KeySet, JwksHost, TestServer) {
    let idp = KeySet::generate().unwrap();
    let jwks = JwksHost::start(idp.jwk_set()).await;
    let s = server(config(&jwks, min_refetch)).await;
    (idp, jwks, s)
}

/// Our client on one binding and version, with extra headers.
async fn client(base: &str, combo: (&str, &str), headers: &[(&str, &str)]) -> A2AClient {
    let mut b = A2AClient::builder()
        .preferred_bindings([combo.0])
        .preferred_versions([combo.1])
        .timeout(Duration::from_secs(20));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let c = b.connect(base).await.unwrap();
    assert_eq!(c.interface().protocol_binding, combo.0);
    c
}

fn bearer(t: &str) -> [(&'static str, String); 1] {
    [("authorization", format!("Bearer {t}"))]
}

async fn as_bearer(base: &str, combo: (&str, &str), t: &str) -> A2AClient {
    let [(k, v)] = bearer(t);
    client(base, combo, &[(k, &v)]).await
}

/// ListTasks with the bearer token `t`: what a token is good for.
async fn list_as_bearer(
    base: &str,
    combo: (&str, &str),
    t: &str,
) -> Result<switchboard_protocol::ListTasksResponse, ClientError> {
    as_bearer(base, combo, t)
        .await
        .list_tasks(Default::default())
        .await
}

fn assert_unauthenticated(err: &ClientError, what: &str) {
    assert_eq!(err.code(), Some(UNAUTHENTICATED_CODE), "{what}: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwts_are_verified_on_every_binding() {
    let (idp, jwks, s) = idp_and_server(Duration::from_secs(3600)).await;
    let expired = idp
        .sign(&json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now() - 120}))
        .unwrap();
    let other_audience = idp
        .sign(&json!({"iss": ISSUER, "aud": "another-agent", "sub": "alice", "exp": now() + 300}))
        .unwrap();
    let not_yet = idp
        .sign(&json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now() + 600, "nbf": now() + 300}))
        .unwrap();
    for combo in COMBOS {
        let what = format!("{} {}", combo.0, combo.1);
        let alice = as_bearer(&s.base, combo, &token(&idp, "alice")).await;
        let task = match alice.send_text("hi").await.unwrap() {
            SendMessageResponse::Task(t) => t,
            other => panic!("{what}: {other:?}"),
        };
        assert_eq!(task.status.state, TaskState::Completed, "{what}");
        assert_eq!(alice.get_task(task.id.as_str()).await.unwrap().id, task.id);

        // Another subject of the same issuer does not see alice's task.
        let bob = as_bearer(&s.base, combo, &token(&idp, "bob")).await;
        let err = bob.get_task(task.id.as_str()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::Protocol(A2AError::TaskNotFound(_))),
            "{what}: {err}"
        );

        for (name, bad) in [
            ("expired", &expired),
            ("wrong audience", &other_audience),
            ("not yet valid", &not_yet),
        ] {
            let c = as_bearer(&s.base, combo, bad).await;
            let err = c.get_task(task.id.as_str()).await.unwrap_err();
            assert_unauthenticated(&err, &format!("{what}: {name}"));
        }
        // A tampered payload (sub changed, signature kept) is refused too.
        let good = token(&idp, "alice");
        let parts: Vec<&str> = good.split('.').collect();
        let forged_claims = base64_url(
            &json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now() + 300})
                .to_string(),
        );
        let forged = format!("{}.{forged_claims}.{}", parts[0], parts[2]);
        let err = as_bearer(&s.base, combo, &forged)
            .await
            .get_task(task.id.as_str())
            .await
            .unwrap_err();
        assert_unauthenticated(&err, &format!("{what}: forged"));
    }
    assert_eq!(jwks.fetches(), 1, "one fetch served every token");

    // The refusal's form on JSON-RPC: 401, the challenges, what was wrong.
    let resp = s
        .http
        .post(s.url())
        .header("A2A-Version", "1.0")
        .bearer_auth(&expired)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(
        resp.headers()["www-authenticate"],
        "Bearer realm=\"switchboard\", ApiKey header=\"X-API-Key\""
    );
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], UNAUTHENTICATED_CODE);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{body}"
    );
    s.stop().await;
}

/// `claims` signed by the issuer's current key under `header` (whose
/// `alg` and `kid` are set here): tokens the IdP would never mint, but
/// whose signatures verify.
fn signed_with_header(idp: &KeySet, mut header: jsonwebtoken::Header, claims: &Value) -> String {
    let doc: Value = serde_json::from_str(&idp.to_document().unwrap()).unwrap();
    let current = doc["current"].as_str().unwrap();
    let pem = doc["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == current)
        .unwrap()["private_key_pem"]
        .as_str()
        .unwrap()
        .to_string();
    header.alg = jsonwebtoken::Algorithm::ES256;
    header.kid = Some(current.to_string());
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    use base64::Engine;
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    let key = jsonwebtoken::EncodingKey::from_ec_der(&der);
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

/// Tokens with valid signatures that are still not acceptable: a `crit`
/// extension nobody here understands (RFC 7515 §4.1.11), a `sub` or tenant
/// that would put control characters into principal names, an `exp` that
/// never comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn well_signed_tokens_that_break_the_rules_are_refused() {
    let (idp, _jwks, s) = idp_and_server(Duration::from_secs(3600)).await;
    let claims =
        |sub: &str, exp: Value| json!({"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "exp": exp});
    let fine = signed_with_header(
        &idp,
        Default::default(),
        &claims("alice", json!(now() + 300)),
    );
    assert_eq!(
        list_status(&s, fine).await,
        200,
        "the same tokens, well-formed, pass"
    );
    let mut crit = jsonwebtoken::Header {
        crit: Some(vec!["x-unknown".into()]),
        ..Default::default()
    };
    crit.extras.insert("x-unknown", "1");
    let empty_crit = jsonwebtoken::Header {
        crit: Some(vec![]),
        ..Default::default()
    };
    for (what, token, says) in [
        (
            "crit",
            signed_with_header(&idp, crit, &claims("alice", json!(now() + 300))),
            "critical header extensions",
        ),
        (
            "empty crit",
            signed_with_header(&idp, empty_crit, &claims("alice", json!(now() + 300))),
            "critical header extensions",
        ),
        (
            "control characters in sub",
            token(&idp, "alice\u{1b}[2J\nadmin"),
            "control characters",
        ),
        (
            "exp 2^63",
            idp.sign(&claims("alice", json!(1u64 << 63))).unwrap(),
            "past the year 9999",
        ),
    ] {
        let resp = s
            .http
            .post(s.url())
            .header("A2A-Version", "1.0")
            .bearer_auth(&token)
            .json(&json!({"jsonrpc": "2.0", "id": "r-1", "method": "ListTasks", "params": {}}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{what}");
        let body: Value = resp.json().await.unwrap();
        assert_eq!(
            body["error"]["code"], UNAUTHENTICATED_CODE,
            "{what}: {body}"
        );
        assert!(
            body["error"]["message"].as_str().unwrap().contains(says),
            "{what}: {body}"
        );
        // The refusal answers the request's own id.
        assert_eq!(body["id"], "r-1", "{what}: {body}");
    }
    s.stop().await;
}

/// A key the issuer removes from its JWKS stops verifying within the
/// revalidation interval, though no token names an unknown `kid` and the
/// cached set is far younger than its maximum age.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_removed_from_the_jwks_stops_verifying_without_an_unknown_kid() {
    let idp = KeySet::generate().unwrap();
    let jwks = JwksHost::start(idp.jwk_set()).await;
    let mut jwt = config(&jwks, Duration::ZERO);
    jwt.revalidate_after = Duration::from_millis(200);
    let s = server(jwt).await;
    let old = token(&idp, "alice");
    assert_eq!(list_status(&s, old.clone()).await, 200);
    // The issuer rotates and removes the old key at once (a compromised key).
    let old_kid = idp.current_kid();
    idp.rotate().unwrap();
    idp.retire(&old_kid).unwrap();
    jwks.publish(idp.jwk_set());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while list_status(&s, old.clone()).await != 401 {
        assert!(
            std::time::Instant::now() < deadline,
            "the removed key kept verifying"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        list_status(&s, token(&idp, "alice")).await,
        200,
        "the new key works"
    );
    s.stop().await;
}

fn base64_url(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
}

/// The HTTP status of a JSON-RPC ListTasks with the bearer token `t`.
async fn list_status(s: &TestServer, t: String) -> reqwest::StatusCode {
    s.http
        .post(s.url())
        .header("A2A-Version", "1.0")
        .bearer_auth(t)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}))
        .send()
        .await
        .unwrap()
        .status()
}

/// A token that verified is remembered (by its SHA-256) so the next
/// request skips the signature check; what is remembered must never vouch
/// for another token, and a refused token is never remembered as good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remembered_token_vouches_for_itself_only() {
    let (idp, jwks, s) = idp_and_server(Duration::from_secs(3600)).await;
    let status = |t: String| list_status(&s, t);
    let good = token(&idp, "alice");
    for round in 0..3 {
        assert_eq!(status(good.clone()).await, 200, "round {round}");
    }
    // The same header and claims under another token's signature: refused,
    // every time (a memory keyed on the claims would let it through).
    let (signed, _) = good.rsplit_once('.').unwrap();
    let other = token(&idp, "bob");
    let (_, other_sig) = other.rsplit_once('.').unwrap();
    let spliced = format!("{signed}.{other_sig}");
    // An expired token with a valid signature: refused, and not remembered.
    let expired = idp
        .sign(&json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now() - 120}))
        .unwrap();
    for round in 0..3 {
        assert_eq!(status(spliced.clone()).await, 401, "spliced, round {round}");
        assert_eq!(status(expired.clone()).await, 401, "expired, round {round}");
        assert_eq!(status(good.clone()).await, 200, "good, round {round}");
    }
    assert_eq!(status(other).await, 200, "bob's own token is fine");
    assert_eq!(jwks.fetches(), 1);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_kids_refetch_the_jwks_and_rotation_takes_effect() {
    // No quiet interval: every unknown kid may refetch.
    let (idp, jwks, s) = idp_and_server(Duration::ZERO).await;
    for (i, combo) in [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0")]
        .into_iter()
        .enumerate()
    {
        let what = format!("{} {}", combo.0, combo.1);
        let old_token = token(&idp, "alice");
        list_as_bearer(&s.base, combo, &old_token).await.unwrap();
        if i == 0 {
            assert_eq!(jwks.fetches(), 1, "fetched on first use");
        }
        let before = jwks.fetches();

        // The issuer rotates: a new key signs from now on.
        let old_kid = idp.current_kid();
        idp.rotate().unwrap();
        let new_token = token(&idp, "alice");
        // Not published yet: refused after a refetch that did not find it.
        let err = list_as_bearer(&s.base, combo, &new_token)
            .await
            .unwrap_err();
        assert_unauthenticated(&err, &format!("{what}: unpublished kid"));
        assert_eq!(
            jwks.fetches(),
            before + 1,
            "{what}: the unknown kid refetched"
        );

        // Published, with the old key retired: the new token works ...
        idp.retire(&old_kid).unwrap();
        jwks.publish(idp.jwk_set());
        list_as_bearer(&s.base, combo, &new_token).await.unwrap();
        assert_eq!(jwks.fetches(), before + 2, "{what}: published, refetched");
        // ... and one under the retired key no longer verifies.
        let err = list_as_bearer(&s.base, combo, &old_token)
            .await
            .unwrap_err();
        assert_unauthenticated(&err, &format!("{what}: retired kid"));
        assert_eq!(jwks.fetches(), before + 3, "{what}: looked once more");
    }
    // Tokens signed by a key the issuer never published are refused.
    let stranger = KeySet::generate().unwrap();
    let err = list_as_bearer(&s.base, COMBOS[0], &token(&stranger, "alice"))
        .await
        .unwrap_err();
    assert_unauthenticated(&err, "unpublished key");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_unknown_kids_fetches_the_jwks_once() {
    let (idp, jwks, s) = idp_and_server(Duration::from_secs(3600)).await;
    let alice = as_bearer(&s.base, COMBOS[0], &token(&idp, "alice")).await;
    alice.list_tasks(Default::default()).await.unwrap();
    assert_eq!(jwks.fetches(), 1);
    let strangers: Vec<String> = (0..40)
        .map(|i| token(&KeySet::generate().unwrap(), &format!("s{i}")))
        .collect();
    let refusals =
        futures::future::join_all(strangers.iter().map(|t| list_status(&s, t.clone()))).await;
    assert!(refusals.iter().all(|s| *s == 401), "{refusals:?}");
    assert_eq!(
        jwks.fetches(),
        1,
        "unknown kids inside the quiet interval do not reach the JWKS host"
    );
    // The known key still works meanwhile.
    alice.list_tasks(Default::default()).await.unwrap();
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys_on_every_binding() {
    let (idp, _jwks, s) = idp_and_server(Duration::from_secs(3600)).await;
    for combo in COMBOS {
        let what = format!("{} {}", combo.0, combo.1);
        let by_header = client(&s.base, combo, &[("x-api-key", ALPHA_KEY)]).await;
        let task = match by_header.send_text("hi").await.unwrap() {
            SendMessageResponse::Task(t) => t,
            other => panic!("{what}: {other:?}"),
        };
        // The same key as a bearer token is the same principal.
        let by_bearer = as_bearer(&s.base, combo, ALPHA_KEY).await;
        assert_eq!(
            by_bearer.get_task(task.id.as_str()).await.unwrap().id,
            task.id
        );
        // A JWT caller is another principal, even with sub "alpha".
        let jwt = as_bearer(&s.base, combo, &token(&idp, "alpha")).await;
        let err = jwt.get_task(task.id.as_str()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::Protocol(A2AError::TaskNotFound(_))),
            "{what}: {err}"
        );

        let wrong = client(&s.base, combo, &[("x-api-key", "sb_not-a-key")]).await;
        assert_unauthenticated(&wrong.send_text("hi").await.unwrap_err(), &what);
        let wrong = as_bearer(&s.base, combo, "sb_not-a-key").await;
        assert_unauthenticated(&wrong.get_task(task.id.as_str()).await.unwrap_err(), &what);
        let missing = client(&s.base, combo, &[]).await;
        assert_unauthenticated(&missing.send_text("hi").await.unwrap_err(), &what);
    }
    // REST's form: 401 with the challenges, no task data.
    let (status, body, headers) = s
        .send(
            reqwest::Method::GET,
            "/tasks",
            None,
            &[("A2A-Version", "1.0"), ("x-api-key", "sb_not-a-key")],
        )
        .await;
    assert_eq!(status, 401);
    assert!(headers.contains_key("www-authenticate"));
    assert!(!body.contains("\"tasks\""), "{body}");
    s.stop().await;
}

mod proc;

/// The card of a served agent, read by an official Python SDK through
/// `code` (the card JSON on stdin); what the script printed.
fn python_reads(venv: &str, code: &str, card: &Value) -> Option<Value> {
    let python = proc::interop_python(venv)?;
    let out = proc::output_with_stdin(
        std::process::Command::new(python).args(["-c", code]),
        card.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{venv}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_authenticates_from_flags_and_config_and_advertises_it() {
    let idp = KeySet::generate().unwrap();
    let jwks = JwksHost::start(idp.jwk_set()).await;
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[auth]\njwks_url = \"{}\"\njwt_issuer = \"{ISSUER}\"\njwt_audience = \"{AUDIENCE}\"\n",
        jwks.url
    );
    let key_flag = format!("{}=ci", hash_api_key(ALPHA_KEY));
    let s = proc::Serve::start_configured(
        dir.path(),
        "auth",
        "memory",
        &config,
        &["--agent", "echo-task", "--api-key-hash", &key_flag],
    );
    let base = s.base();

    let card: Value = reqwest::get(format!("{base}/.well-known/agent-card.json"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["bearerFormat"],
        "JWT"
    );
    assert_eq!(
        card["securitySchemes"]["apiKey"]["apiKeySecurityScheme"]["name"],
        "X-API-Key"
    );
    assert_eq!(
        card["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}, {"schemes": {"apiKey": {"list": []}}}])
    );
    assert_eq!(card["security"], json!([{"bearer": []}, {"apiKey": []}]));

    for combo in [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0")] {
        let what = format!("{} {}", combo.0, combo.1);
        let ci = client(&base, combo, &[("x-api-key", ALPHA_KEY)]).await;
        let task = match ci.send_text("hi").await.unwrap() {
            SendMessageResponse::Task(t) => t,
            other => panic!("{what}: {other:?}"),
        };
        let alice = as_bearer(&base, combo, &token(&idp, "alice")).await;
        alice.send_text("hi").await.unwrap();
        let err = alice.get_task(task.id.as_str()).await.unwrap_err();
        assert!(
            matches!(err, ClientError::Protocol(A2AError::TaskNotFound(_))),
            "{what}: {err}"
        );
        let missing = client(&base, combo, &[]).await;
        assert_unauthenticated(&missing.send_text("hi").await.unwrap_err(), &what);
        let wrong = client(&base, combo, &[("x-api-key", "sb_wrong")]).await;
        assert_unauthenticated(&wrong.send_text("hi").await.unwrap_err(), &what);
    }

    // The CLI sends credentials from --api-key / --token or their env vars.
    let cli = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"));
        c.args(["list", "--url", &base, "--json"])
            .args(args)
            .env_remove("SWITCHBOARD_API_KEY")
            .env_remove("SWITCHBOARD_TOKEN");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap().status.code()
    };
    let jwt = token(&idp, "alice");
    assert_eq!(cli(&["--api-key", ALPHA_KEY], &[]), Some(0));
    assert_eq!(cli(&["--token", &jwt], &[]), Some(0));
    assert_eq!(cli(&[], &[("SWITCHBOARD_API_KEY", ALPHA_KEY)]), Some(0));
    assert_eq!(cli(&[], &[("SWITCHBOARD_TOKEN", &jwt)]), Some(0));
    assert_eq!(cli(&[], &[]), Some(2), "no credentials: refused");
    assert_eq!(cli(&["--api-key", "sb_wrong"], &[]), Some(2));
    // `switchboard auth hash-key` makes the hash serve was given.
    let out = proc::output_with_stdin(
        std::process::Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["auth", "hash-key"]),
        ALPHA_KEY.as_bytes(),
    );
    assert_eq!(
        format!("{}=ci", String::from_utf8(out.stdout).unwrap().trim()),
        key_flag
    );

    // The official SDKs read the schemes from the hybrid card: 0.3 from its
    // OpenAPI-style members and `security`, 1.0 (a2a-sdk 1.x's resolver) too.
    let v03 = python_reads(
        ".venv03",
        "import json, sys\nfrom a2a.types import AgentCard\nc = AgentCard.model_validate(json.load(sys.stdin))\n\
         print(json.dumps({'schemes': {k: v.root.model_dump(mode='json', by_alias=True, exclude_none=True) for k, v in c.security_schemes.items()}, 'security': c.security}))",
        &card,
    );
    if let Some(v03) = v03 {
        assert_eq!(v03["schemes"]["apiKey"]["type"], "apiKey", "{v03}");
        assert_eq!(v03["schemes"]["apiKey"]["in"], "header", "{v03}");
        assert_eq!(v03["schemes"]["apiKey"]["name"], "X-API-Key", "{v03}");
        assert_eq!(v03["schemes"]["bearer"]["type"], "http", "{v03}");
        assert_eq!(v03["schemes"]["bearer"]["scheme"], "Bearer", "{v03}");
        assert_eq!(v03["security"], json!([{"bearer": []}, {"apiKey": []}]));
    }
    let v10 = python_reads(
        ".venv",
        "import json, sys\nfrom google.protobuf.json_format import MessageToDict\n\
         from a2a.client.card_resolver import parse_agent_card\nc = parse_agent_card(json.load(sys.stdin))\n\
         d = MessageToDict(c)\nprint(json.dumps({'schemes': d.get('securitySchemes'), 'requirements': d.get('securityRequirements')}))",
        &card,
    );
    if let Some(v10) = v10 {
        assert_eq!(
            v10["schemes"]["apiKey"],
            card["securitySchemes"]["apiKey"]
                .as_object()
                .map(|o| json!({"apiKeySecurityScheme": o["apiKeySecurityScheme"]}))
                .unwrap(),
            "{v10}"
        );
        assert_eq!(
            v10["schemes"]["bearer"]["httpAuthSecurityScheme"]["bearerFormat"], "JWT",
            "{v10}"
        );
        assert_eq!(
            v10["requirements"].as_array().map(Vec::len),
            Some(2),
            "{v10}"
        );
    }
}

/// The extended agent card: declared on the public card, returned to
/// authenticated callers on every binding and version, refused to anonymous
/// ones with the authentication error (0.3 gRPC has one card method, which
/// is also how 0.3 clients read the public card: anonymous callers get that).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extended_card_is_for_authenticated_callers_on_every_binding() {
    let keys = ApiKeys::new()
        .key(&hash_api_key(ALPHA_KEY), "alpha", None, false)
        .unwrap();
    let extended = echo_card().with_skill(switchboard_protocol::AgentSkill::new(
        "secret",
        "Secret",
        "Only for customers",
        &["customers"],
    ));
    let schemes = Schemes::new().with(keys).allow_anonymous(true);
    // The public card advertises the schemes (as `serve` does); the
    // extended card names none and gets them from the served card.
    let mut public_card = echo_card();
    schemes.describe(&mut public_card);
    let handler = RequestHandler::builder(EchoTask, public_card)
        .store(Arc::new(InMemoryStore::new()))
        .extended_card(extended)
        .build();
    let s = TestServer::start_with(|s| s.authenticator(schemes), handler).await;
    let public: Value = s.get_json("/.well-known/agent-card.json").await;
    assert_eq!(
        public["capabilities"]["extendedAgentCard"], true,
        "{public}"
    );
    assert_eq!(
        public["supportsAuthenticatedExtendedCard"], true,
        "{public}"
    );
    assert!(!public.to_string().contains("secret"), "{public}");
    for combo in COMBOS {
        let what = format!("{} {}", combo.0, combo.1);
        let alpha = client(&s.base, combo, &[("x-api-key", ALPHA_KEY)]).await;
        let card = alpha.get_extended_agent_card().await.unwrap();
        assert!(
            card.skills.iter().any(|k| k.id == "secret"),
            "{what}: {:?}",
            card.skills
        );
        assert_eq!(card.capabilities.extended_agent_card, Some(true), "{what}");
        assert!(
            !card.supported_interfaces.is_empty(),
            "{what}: the served interfaces"
        );
        assert!(!card.security_schemes.is_empty(), "{what}: the schemes");

        let anonymous = client(&s.base, combo, &[]).await;
        let answer = anonymous.get_extended_agent_card().await;
        if combo == ("GRPC", "0.3") {
            let card = answer.unwrap();
            assert!(card.skills.iter().all(|k| k.id != "secret"), "{what}");
        } else {
            assert_unauthenticated(&answer.unwrap_err(), &format!("{what}: anonymous"));
        }
    }
    // REST's form: 401 with the challenge, no card.
    let resp = s
        .http
        .get(format!("{}/extendedAgentCard", s.base))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert!(!resp.text().await.unwrap().contains("secret"));
    s.stop().await;
}

/// Serves `body` at `path` on loopback, in 64 KiB chunks without a
/// Content-Length (chunked), or with one; returns the base URL.
async fn serve_document(path: &'static str, body: Vec<u8>, with_length: bool) -> String {
    let body = Arc::new(body);
    let app = axum::Router::new().route(
        path,
        axum::routing::get(move || {
            let body = body.clone();
            async move {
                if with_length {
                    axum::body::Body::from(body.as_ref().clone())
                } else {
                    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
                        body.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
                    axum::body::Body::from_stream(futures::stream::iter(chunks))
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// A JSON object `value` padded with a `padding` member to about `size` bytes.
fn padded(mut value: Value, size: usize) -> Vec<u8> {
    value["padding"] = json!("x".repeat(size));
    serde_json::to_vec(&value).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_and_jwks_bodies_are_read_up_to_one_mib() {
    let limit = switchboard_client::MAX_DOCUMENT_BYTES;
    // Our client: a card over 1 MiB is refused with a clear error, with or
    // without a Content-Length; the same card under it is read.
    let card = serde_json::to_value(echo_card()).unwrap();
    for with_length in [false, true] {
        let big = serve_document(
            "/.well-known/agent-card.json",
            padded(card.clone(), limit + 1),
            with_length,
        )
        .await;
        let err = A2AClient::connect(&big).await.unwrap_err();
        assert!(
            matches!(&err, ClientError::Decode(m) if m.contains("larger than 1048576 bytes")),
            "Content-Length {with_length}: {err}"
        );
    }
    let small = serve_document("/.well-known/agent-card.json", padded(card, 1000), false).await;
    let fetched = A2AClient::builder().fetch_card(&small).await.unwrap();
    assert_eq!(fetched.name, echo_card().name);

    // The JWT scheme: a JWKS over 1 MiB (chunked) is not used; under it is.
    let idp = KeySet::generate().unwrap();
    let set = serde_json::to_value(idp.jwk_set()).unwrap();
    for (size, accepted) in [(limit + 1, false), (1000, true)] {
        let host = serve_document("/jwks", padded(set.clone(), size), false).await;
        let mut jwt = JwtConfig::new(format!("{host}/jwks"), ISSUER, AUDIENCE);
        jwt.min_refetch = Duration::ZERO;
        let s = server(jwt).await;
        let answer = as_bearer(&s.base, COMBOS[0], &token(&idp, "alice"))
            .await
            .list_tasks(Default::default())
            .await;
        match (accepted, answer) {
            (true, Ok(_)) => {}
            (false, Err(e)) => assert_unauthenticated(&e, "an oversized JWKS"),
            (_, other) => panic!("JWKS of {size} bytes: {other:?}"),
        }
        s.stop().await;
    }
}
