//! Signed notifications end to end: the worker signs, a real receiver gets
//! the request, `switchboard_client::push::PushVerifier` judges it. Genuine
//! notifications pass; altered bodies, wrong keys, stale tokens, other
//! audiences and replays fail; rotation keeps old notifications verifiable
//! until their key is retired; keys persist across a reload of the key file;
//! the JWKS is fetched over HTTP and refetched for a new `kid`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::Digest as _;
use switchboard_client::push::{PushVerifier, VerifyError};
use switchboard_core::push::JwksSource;
use switchboard_push::testing::{Received, Receiver, outbox_item};
use switchboard_push::{Deliverer, KeySet, NotificationClaims, SsrfPolicy, SystemResolver};

fn payload(n: u64) -> String {
    format!(
        r#"{{"statusUpdate":{{"taskId":"task-1","contextId":"c","status":{{"state":"TASK_STATE_WORKING","message":{{"messageId":"m{n}","role":"ROLE_AGENT","parts":[{{"text":"step {n}"}}]}}}}}}}}"#
    )
}

fn deliverer(keys: Arc<KeySet>) -> Deliverer {
    Deliverer::new(
        keys,
        "http://agent.test",
        SsrfPolicy {
            guard: true,
            allow_hosts: vec!["127.0.0.1".into()],
            ..Default::default()
        },
        Arc::new(SystemResolver),
        Duration::from_secs(5),
        Duration::from_secs(300),
    )
    .unwrap()
}

/// Delivers `n` notifications to a fresh receiver; returns what it got.
async fn deliver(keys: &Arc<KeySet>, rx: &Receiver, n: u64) -> Vec<Received> {
    let d = deliverer(keys.clone());
    let before = rx.accepted().len();
    for seq in 1..=n {
        d.deliver(&outbox_item(&rx.url(), seq, &payload(seq)))
            .await
            .unwrap();
    }
    rx.accepted()[before..].to_vec()
}

fn verifier(keys: &KeySet, rx: &Receiver) -> PushVerifier {
    PushVerifier::from_jwk_set(keys.jwk_set(), rx.url()).issuer("http://agent.test")
}

#[tokio::test]
async fn genuine_notifications_verify_and_forgeries_do_not() {
    let keys = Arc::new(KeySet::generate().unwrap());
    let rx = Receiver::start().await;
    let got = deliver(&keys, &rx, 3).await;
    let v = verifier(&keys, &rx);
    for (i, r) in got.iter().enumerate() {
        let ok = v.verify(&r.headers, &r.body).await.unwrap();
        assert_eq!(ok.claims.seq, i as u64 + 1);
        assert_eq!(ok.claims.task_id, "task-1");
        assert_eq!(ok.claims.aud, rx.url());
        assert_eq!(ok.kid, keys.current_kid());
        assert!(ok.claims.exp > ok.claims.iat);
    }
    let r = &got[0];

    // Replayed: the same request a second time.
    let err = v.verify(&r.headers, &r.body).await.unwrap_err();
    assert!(matches!(err, VerifyError::Replay(_)), "{err}");

    // Altered body (with a fresh verifier, so it is not a replay).
    let fresh = verifier(&keys, &rx);
    let mut body = r.body.to_vec();
    let pos = body.iter().position(|b| *b == b'1').unwrap();
    body[pos] = b'9';
    let err = fresh.verify(&r.headers, &body).await.unwrap_err();
    assert!(matches!(err, VerifyError::BodyMismatch), "{err}");
    // The untouched original still passes: a failed forgery burns nothing.
    fresh.verify(&r.headers, &r.body).await.unwrap();

    // Missing signature.
    let mut headers = r.headers.clone();
    headers.remove("x-a2a-notification-signature");
    assert!(matches!(
        fresh.verify(&headers, &r.body).await.unwrap_err(),
        VerifyError::MissingSignature
    ));

    // Another receiver's token.
    let other = PushVerifier::from_jwk_set(keys.jwk_set(), "http://me.test/other");
    let err = other
        .verify(&got[1].headers, &got[1].body)
        .await
        .unwrap_err();
    assert!(matches!(err, VerifyError::WrongAudience { .. }), "{err}");

    // Wrong issuer expected.
    let wrong_iss = PushVerifier::from_jwk_set(keys.jwk_set(), rx.url()).issuer("http://evil.test");
    let err = wrong_iss
        .verify(&got[1].headers, &got[1].body)
        .await
        .unwrap_err();
    assert!(matches!(err, VerifyError::WrongIssuer { .. }), "{err}");
}

#[tokio::test]
async fn wrong_keys_are_rejected() {
    let keys = Arc::new(KeySet::generate().unwrap());
    let attacker = Arc::new(KeySet::generate().unwrap());
    let rx = Receiver::start().await;
    let v = verifier(&keys, &rx);

    // Signed by a key the agent never published.
    let forged = deliver(&attacker, &rx, 1).await;
    let err = v
        .verify(&forged[0].headers, &forged[0].body)
        .await
        .unwrap_err();
    assert!(matches!(err, VerifyError::UnknownKey(_)), "{err}");

    // Signed by another key but claiming the agent's kid.
    let body = payload(7);
    let now = chrono::Utc::now().timestamp();
    let claims = NotificationClaims {
        iss: "http://agent.test".into(),
        aud: rx.url(),
        iat: now,
        exp: now + 300,
        jti: "forged-1".into(),
        task_id: "task-1".into(),
        seq: 7,
        config_id: "cfg".into(),
        body_sha256: URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(body.as_bytes())),
    };
    let token = attacker.sign(&claims).unwrap();
    let (h, p, s) = {
        let mut it = token.split('.');
        (it.next().unwrap(), it.next().unwrap(), it.next().unwrap())
    };
    let mut header: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(h).unwrap()).unwrap();
    header["kid"] = keys.current_kid().into();
    let relabeled = format!(
        "{}.{p}.{s}",
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).unwrap())
    );
    let err = v
        .verify_token(&relabeled, body.as_bytes())
        .await
        .unwrap_err();
    assert!(matches!(err, VerifyError::BadSignature), "{err}");
}

#[tokio::test]
async fn stale_tokens_are_rejected() {
    let keys = Arc::new(KeySet::generate().unwrap());
    let rx = Receiver::start().await;
    let v = verifier(&keys, &rx).leeway(Duration::from_secs(5));
    let body = payload(1);
    let hash = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(body.as_bytes()));
    let now = chrono::Utc::now().timestamp();
    let claims = |iat: i64, exp: i64, jti: &str| NotificationClaims {
        iss: "http://agent.test".into(),
        aud: rx.url(),
        iat,
        exp,
        jti: jti.into(),
        task_id: "task-1".into(),
        seq: 1,
        config_id: "cfg".into(),
        body_sha256: hash.clone(),
    };
    // Expired.
    let t = keys.sign(&claims(now - 900, now - 600, "a")).unwrap();
    let err = v.verify_token(&t, body.as_bytes()).await.unwrap_err();
    assert!(matches!(err, VerifyError::Stale(_)), "{err}");
    // Not expired yet, but issued longer ago than max_age.
    let t = keys.sign(&claims(now - 3600, now + 600, "b")).unwrap();
    let err = v.verify_token(&t, body.as_bytes()).await.unwrap_err();
    assert!(
        matches!(err, VerifyError::Stale(ref m) if m.contains("ago")),
        "{err}"
    );
    // From the future.
    let t = keys.sign(&claims(now + 600, now + 900, "c")).unwrap();
    let err = v.verify_token(&t, body.as_bytes()).await.unwrap_err();
    assert!(matches!(err, VerifyError::Stale(_)), "{err}");
    // Fresh.
    let t = keys.sign(&claims(now, now + 300, "d")).unwrap();
    v.verify_token(&t, body.as_bytes()).await.unwrap();
}

/// The JWKS served over HTTP from the KeySet itself, as the server does.
async fn serve_jwks(keys: Arc<KeySet>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route(
        "/.well-known/jwks.json",
        get(move || {
            let keys = keys.clone();
            async move { axum::Json(keys.jwks()) }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/.well-known/jwks.json")
}

#[tokio::test]
async fn rotation_keeps_old_notifications_verifiable_until_retired() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.json");
    let keys = Arc::new(KeySet::load_or_create(&path).unwrap());
    let old_kid = keys.current_kid();
    let rx = Receiver::start().await;
    let jwks_url = serve_jwks(keys.clone()).await;
    let v = PushVerifier::from_jwks_url(&jwks_url, rx.url()).min_refetch_interval(Duration::ZERO);

    let before = deliver(&keys, &rx, 2).await;
    v.verify(&before[0].headers, &before[0].body).await.unwrap();

    let new_kid = keys.rotate().unwrap();
    assert_ne!(new_kid, old_kid);
    assert_eq!(
        keys.published_kids(),
        vec![new_kid.clone(), old_kid.clone()]
    );
    let after = deliver(&keys, &rx, 1).await;
    // The verifier has never seen the new kid: it refetches the JWKS.
    let ok = v.verify(&after[0].headers, &after[0].body).await.unwrap();
    assert_eq!(ok.kid, new_kid);
    // A notification signed before the rotation still verifies.
    let ok = v.verify(&before[1].headers, &before[1].body).await.unwrap();
    assert_eq!(ok.kid, old_kid);

    // Restarting keeps the keys: the file holds both, the new one current.
    let reloaded = KeySet::load_or_create(&path).unwrap();
    assert_eq!(reloaded.current_kid(), new_kid);
    assert_eq!(reloaded.published_kids(), keys.published_kids());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the key file is private");
    }

    // Once retired, the old key is gone from the JWKS and its tokens fail.
    assert!(keys.retire(&old_kid).unwrap());
    assert!(
        keys.retire(&new_kid).is_err(),
        "the current key cannot be retired"
    );
    let v2 = PushVerifier::from_jwks_url(&jwks_url, rx.url());
    // A fresh verifier, so the jti of this old notification is not spent.
    let late = before[0].clone();
    let err = v2.verify(&late.headers, &late.body).await.unwrap_err();
    assert!(
        matches!(err, VerifyError::UnknownKey(ref k) if *k == old_kid),
        "{err}"
    );
    assert_eq!(
        KeySet::load_or_create(&path).unwrap().published_kids(),
        vec![new_kid],
        "retiring is persisted"
    );
}

/// Another process changing the key file (`switchboard push rotate-key` /
/// `retire-key`) reaches a running set through `reload`, which never
/// writes the file back; a broken file is an error and keeps the keys.
#[test]
fn reload_picks_up_changes_made_by_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.json");
    let running = KeySet::load_or_create(&path).unwrap();
    let old = running.current_kid();
    assert!(!running.reload().unwrap(), "nothing changed");

    let other = KeySet::load_or_create(&path).unwrap();
    let new = other.rotate().unwrap();
    assert!(running.reload().unwrap());
    assert_eq!(running.published_kids(), [new.clone(), old.clone()]);
    assert!(!running.reload().unwrap(), "the same keys again: no change");

    assert!(other.retire(&old).unwrap());
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(running.reload().unwrap());
    assert_eq!(running.published_kids(), std::slice::from_ref(&new));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        written,
        "reload does not rewrite the file"
    );

    std::fs::write(&path, "not a key file").unwrap();
    assert!(running.reload().is_err());
    assert_eq!(running.current_kid(), new, "a broken file keeps the keys");
    assert!(!KeySet::generate().unwrap().reload().unwrap(), "no file");
}
