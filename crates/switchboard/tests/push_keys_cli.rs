//! `switchboard push rotate-key` / `retire-key` end to end with the real
//! binary, on the key file of a SQLite `serve` and on the key set PostgreSQL
//! replicas share: the running server picks each change up without a
//! restart; a notification signed before the rotation still verifies with
//! the JWKS after it, and new ones are signed with the new key; after
//! retire-key the JWKS no longer lists the old `kid` and a receiver rejects
//! a notification signed with it. Refusals (the current key, an unknown
//! `kid`, a missing key file) are clear errors with exit code 1 or 2.
//!
//! The PostgreSQL case skips without a test server unless
//! `SWITCHBOARD_REQUIRE_POSTGRES=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;
mod push_receiver;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use proc::{Serve, call};
use push_receiver::{Received, Receiver};
use serde_json::{Value, json};
use switchboard_client::push::{PushVerifier, VerifyError};

/// `serve --store store` with stderr in `log`, allowed to push to loopback.
fn start_serve(store: &str, log: &Path) -> Serve {
    Serve::start_logging(store, &["--push-allow-host", "127.0.0.1"], log)
}

/// The `kid`s the server's JWKS lists, in its order.
async fn kids(s: &Serve) -> Vec<String> {
    let jwks: Value = proc::get_json(&s.jwks_url()).await;
    jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_string())
        .collect()
}

/// Waits (up to 15 s: the PostgreSQL refresh runs every 5 s) until the
/// JWKS satisfies `done`.
async fn wait_for_kids(s: &Serve, what: &str, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let every = Duration::from_millis(100);
    let what = format!("{what}: the JWKS lists the right kids");
    proc::poll_until(
        Duration::from_secs(15),
        every,
        &what,
        || kids(s),
        |k| done(k),
    )
    .await
}

/// Runs `switchboard push …`; returns (exit code, stdout, stderr).
fn push_cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("push")
        .args(args)
        .env_remove("SWITCHBOARD_STORE")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a demo task with an inline config to `rx` and returns the last
/// notification it gets (the completed status).
async fn notification(s: &Serve, rx: &Receiver) -> Received {
    let v = call(
        &s.base(),
        "SendMessage",
        json!({"message": {"messageId": format!("m-{}", rx.addr), "role": "ROLE_USER",
                           "parts": [{"text": "hello"}]},
               "configuration": {"taskPushNotificationConfig": {"url": rx.url()}}}),
    )
    .await;
    assert!(v.get("error").is_none(), "{v}");
    let got = rx
        .wait_until(20, "notifications", |got| {
            got.iter()
                .any(|r| r.json()["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED")
        })
        .await;
    got.last().unwrap().clone()
}

/// Checks the signature of `n`, received by `rx`, with a fresh verifier
/// (its own JWKS fetch and replay memory); the key id it was signed with.
async fn signing_kid(s: &Serve, rx: &Receiver, n: &Received) -> Result<String, VerifyError> {
    let verifier = PushVerifier::from_jwks_url(s.jwks_url(), rx.url()).issuer(s.base());
    Ok(verifier.verify(&n.headers, &n.body).await?.kid)
}

/// The whole rotation story against `serve --store store`, changing its
/// keys with `push <cmd> <key_args>`.
async fn rotate_and_retire(store: &str, key_args: &[&str], log: &Path) {
    let s = start_serve(store, log);
    let first = kids(&s).await;
    assert_eq!(first.len(), 1, "{first:?}");
    let old = first[0].clone();
    let rx_old = Receiver::start().await;
    let before = notification(&s, &rx_old).await;
    assert_eq!(signing_kid(&s, &rx_old, &before).await.unwrap(), old);

    // Rotate: the server signs with the new key and still publishes the old.
    let (code, out, err) = push_cli(&[&["rotate-key"], key_args].concat());
    assert_eq!(code, 0, "rotate-key: {err}");
    let new = out.trim().to_string();
    assert_ne!(new, old);
    assert!(err.contains(&format!("retire-key {old}")), "{err}");
    let kids = wait_for_kids(&s, "after rotate-key", |k| k.first() == Some(&new)).await;
    assert_eq!(kids, [new.clone(), old.clone()]);
    signing_kid(&s, &rx_old, &before)
        .await
        .expect("signed before the rotation, still verifies");
    let rx_new = Receiver::start().await;
    let after = notification(&s, &rx_new).await;
    assert_eq!(
        signing_kid(&s, &rx_new, &after).await.unwrap(),
        new,
        "new notifications use the new key"
    );

    // Refusals: the current key, an unknown kid.
    let (code, _, err) = push_cli(&[&["retire-key", new.as_str()], key_args].concat());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("current signing key"), "{err}");
    let (code, _, err) = push_cli(&[&["retire-key", "no-such-kid"], key_args].concat());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no published push signing key"), "{err}");

    // Retire the old key: gone from the JWKS, its notifications rejected.
    let (code, out, err) = push_cli(&[&["retire-key", old.as_str()], key_args].concat());
    assert_eq!(code, 0, "retire-key: {err}");
    assert_eq!(out.trim(), format!("retired {old}"));
    let kids = wait_for_kids(&s, "after retire-key", |k| !k.contains(&old)).await;
    assert_eq!(kids, std::slice::from_ref(&new));
    match signing_kid(&s, &rx_old, &before).await {
        Err(VerifyError::UnknownKey(kid)) => assert_eq!(kid, old),
        other => panic!("a notification signed with a retired key must fail: {other:?}"),
    }
    signing_kid(&s, &rx_new, &after)
        .await
        .expect("the current key still verifies");
}

#[tokio::test]
async fn rotate_and_retire_the_key_file_of_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("keys.db");
    let store = format!("sqlite://{}", db.display());
    rotate_and_retire(&store, &["--store", &store], &dir.path().join("serve.log")).await;
    // The file is where serve keeps it, and the flag naming it works too.
    let file = dir.path().join("keys.push-keys.json");
    assert!(file.exists());
    let (code, out, err) = push_cli(&["rotate-key", "--push-key-file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.trim().is_empty());
}

#[tokio::test]
async fn rotate_and_retire_the_shared_keys_on_postgres() {
    let Some(url) =
        switchboard_store_postgres::testing::fresh_database_or_skip("push_keys_cli").await
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    rotate_and_retire(
        &url,
        &["--postgres-url", &url],
        &dir.path().join("serve.log"),
    )
    .await;
}

#[test]
fn key_commands_refuse_what_they_cannot_change() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.push-keys.json");
    let (code, _, err) = push_cli(&["rotate-key", "--push-key-file", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no push signing key file"), "{err}");
    assert!(!missing.exists(), "a typo creates nothing");
    let (code, _, err) = push_cli(&["rotate-key", "--store", "memory"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("memory"), "{err}");
    let (code, _, err) = push_cli(&["retire-key", "k"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("which key set"), "{err}");
}
