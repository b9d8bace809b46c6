#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn head(headers: &[(&str, &str)]) -> Parts {
    let mut b = http::Request::builder().uri("/");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(()).unwrap().into_parts().0
}

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

fn keys() -> ApiKeys {
    ApiKeys::new()
        .key(&hash_api_key("alpha-key"), "alice", None, false)
        .unwrap()
        .key(&hash_api_key("beta-key"), "bob", Some("acme"), true)
        .unwrap()
}

#[test]
fn hashes_have_one_format_and_bad_ones_are_refused() {
    let h = hash_api_key("k");
    assert!(h.starts_with("sha256:") && h.len() == 7 + 64, "{h}");
    assert_eq!(
        hash_api_key(" k\n"),
        h,
        "surrounding whitespace is not part of a key"
    );
    for bad in [
        "",
        "sha256:",
        "md5:00",
        &h[..h.len() - 1],
        &h.replace("sha256:", "sha1:"),
    ] {
        assert!(
            ApiKeys::new().key(bad, "x", None, false).is_err(),
            "{bad:?}"
        );
    }
    let nonhex = format!("sha256:{}", "zz".repeat(32));
    assert!(ApiKeys::new().key(&nonhex, "x", None, false).is_err());
    let a = generate_api_key();
    assert!(a.starts_with("sb_") && a.len() == 67, "{a}");
    assert_ne!(a, generate_api_key());
    assert!(
        !looks_like_jwt(&a),
        "generated keys are never taken for JWTs"
    );
}

#[test]
fn api_keys_map_to_their_identity_in_either_header() {
    let auth = Schemes::new().with(keys());
    let id = block(auth.authenticate(&head(&[("x-api-key", "alpha-key")]))).unwrap();
    assert_eq!(id, Identity::new("key:alice"));
    let id = block(auth.authenticate(&head(&[("authorization", "Bearer beta-key")]))).unwrap();
    assert_eq!(
        id,
        Identity::new("key:bob")
            .with_tenant("acme")
            .with_admin(true)
    );
    let id = block(auth.authenticate(&head(&[("authorization", "bearer  alpha-key ")]))).unwrap();
    assert_eq!(
        id.principal, "key:alice",
        "the scheme name is case-insensitive"
    );
}

#[test]
fn wrong_and_missing_credentials_are_unauthenticated() {
    let auth = Schemes::new().with(keys());
    for h in [
        head(&[]),
        head(&[("x-api-key", "gamma-key")]),
        head(&[("authorization", "Bearer alpha-keyX")]),
        head(&[("authorization", "Basic YWxpY2U6eA==")]),
        head(&[("authorization", "Bearer a.b.c")]),
    ] {
        let err = block(auth.authenticate(&h)).unwrap_err();
        assert!(matches!(err, A2AError::Unauthenticated(_)), "{err:?}");
    }
    assert_eq!(
        auth.challenge().unwrap(),
        "ApiKey header=\"X-API-Key\"",
        "the challenge names the scheme"
    );
}

#[test]
fn anonymous_is_explicit_and_never_replaces_a_bad_credential() {
    let auth = Schemes::new().with(keys()).allow_anonymous(true);
    let id = block(auth.authenticate(&head(&[]))).unwrap();
    assert_eq!(id, Identity::anonymous());
    let err = block(auth.authenticate(&head(&[("x-api-key", "wrong")]))).unwrap_err();
    assert!(matches!(err, A2AError::Unauthenticated(_)), "{err:?}");
    let none = Schemes::new();
    assert!(
        block(none.authenticate(&head(&[]))).is_err(),
        "no schemes, no anonymous: refused"
    );
}

#[test]
fn the_card_lists_each_scheme_as_an_alternative() {
    let mut card = AgentCard::new("a", "b", "1");
    Schemes::new()
        .with(keys())
        .allow_anonymous(true)
        .describe(&mut card);
    assert_eq!(
        card.security_schemes["apiKey"]["apiKeySecurityScheme"]["name"],
        "X-API-Key"
    );
    let json = serde_json::to_value(&card).unwrap();
    assert_eq!(
        json["securityRequirements"],
        serde_json::json!([{"schemes": {"apiKey": {"list": []}}}, {"schemes": {}}])
    );
}

#[test]
fn jwt_shape_decides_between_api_keys_and_tokens() {
    assert!(looks_like_jwt("eyJh.eyJz.c2ln"));
    for not in ["a.b", "a.b.c.d", "a..c", "a.b.c=", "sb_0123"] {
        assert!(!looks_like_jwt(not), "{not}");
    }
}

#[test]
fn symmetric_algorithms_cannot_be_allowed() {
    assert!(JwtConfig::parse_algorithms(&["ES256", "RS256"]).is_ok());
    for bad in ["HS256", "none", "XX1"] {
        assert!(JwtConfig::parse_algorithms(&[bad]).is_err(), "{bad}");
    }
    let mut config = JwtConfig::new("http://127.0.0.1:1/jwks", "iss", "aud");
    config.algorithms = vec![jsonwebtoken::Algorithm::HS256];
    assert!(JwtBearer::new(config.clone()).is_err());
    config.algorithms.clear();
    assert!(JwtBearer::new(config).is_err());
}
