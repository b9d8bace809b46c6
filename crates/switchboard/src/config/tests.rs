#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn secret_names() {
    for secret in [
        "api_key",
        "auth_token",
        "client_secret",
        "db_password",
        "api_keys",
    ] {
        assert!(is_secret_name(secret), "{secret}");
    }
    for plain in [
        "listen",
        "push_key_file",
        "store",
        "jwks_path",
        "push_lease_secs",
    ] {
        assert!(!is_secret_name(plain), "{plain}");
    }
}

#[test]
fn url_passwords_are_masked() {
    assert_eq!(
        mask_url_credentials("postgres://sb:hunter2@127.0.0.1:5432/sb?sslmode=disable"),
        "postgres://sb:***@127.0.0.1:5432/sb?sslmode=disable"
    );
    assert_eq!(
        mask_url_credentials("postgres://sb@127.0.0.1/sb"),
        "postgres://sb@127.0.0.1/sb",
        "no password, nothing to mask"
    );
    assert_eq!(mask_url_credentials("sqlite://a.db"), "sqlite://a.db");
    assert_eq!(
        mask_url_credentials("https://u:p@q@h/x@y"),
        "https://u:***@h/x@y",
        "the last @ of the authority ends the credentials"
    );
}

#[test]
fn literals_keep_their_toml_shape() {
    assert_eq!(toml_literal("12"), "12");
    assert_eq!(toml_literal("true"), "true");
    let text = format!("k = {}", toml_literal("a\"b'c"));
    let table: toml::Table = text.parse().unwrap();
    assert_eq!(table["k"].as_str(), Some("a\"b'c"));
}
