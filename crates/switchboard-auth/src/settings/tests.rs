#![allow(clippy::unwrap_used)]
use super::*;
use switchboard_protocol::AgentCard;

const OFF_LOOPBACK: [&str; 3] = ["0.0.0.0", "192.0.2.7", "::"];

#[test]
fn anonymous_is_the_default_only_on_loopback() {
    for ip in ["127.0.0.1", "127.3.4.5", "::1"] {
        let ip: IpAddr = ip.parse().unwrap();
        assert_eq!(access(false, false, ip).unwrap(), Access::Anonymous, "{ip}");
    }
    for ip in OFF_LOOPBACK {
        let ip: IpAddr = ip.parse().unwrap();
        let err = access(false, false, ip).unwrap_err().to_string();
        assert!(err.contains("--allow-anonymous"), "{err}");
        assert_eq!(
            access(false, true, ip).unwrap(),
            Access::Anonymous,
            "{ip}: asked for"
        );
        assert_eq!(
            access(true, false, ip).unwrap(),
            Access::Authenticated,
            "{ip}"
        );
        assert_eq!(
            access(true, true, ip).unwrap(),
            Access::AuthenticatedOrAnonymous,
            "{ip}"
        );
    }
}

#[test]
fn a_server_refuses_to_start_open_off_loopback() {
    let ip: IpAddr = "0.0.0.0".parse().unwrap();
    let err = caller_schemes(&AuthSettings::default(), ip).unwrap_err();
    assert!(format!("{err}").contains("refusing to serve"), "{err}");
    let mut s = AuthSettings {
        api_key_hash: vec![format!("{}=ci@acme", crate::hash_api_key("k"))],
        ..AuthSettings::default()
    };
    let schemes = caller_schemes(&s, ip).unwrap().unwrap();
    let mut card = AgentCard::new("a", "b", "1");
    crate::Authenticator::describe(&schemes, &mut card);
    assert!(card.security_schemes.contains_key("apiKey"), "advertised");
    s.api_key_hash.clear();
    s.allow_anonymous = true;
    assert!(caller_schemes(&s, ip).unwrap().is_none());
}

#[test]
fn settings_are_checked() {
    let hash = crate::hash_api_key("k");
    for good in [
        format!("{hash}=ci"),
        format!("{hash}=ci@acme"),
        format!("{hash}=ops;admin"),
    ] {
        assert!(add_api_key(ApiKeys::new(), &good).is_ok(), "{good}");
    }
    for bad in [
        hash.clone(),
        format!("{hash}="),
        format!("{hash}=ci@"),
        format!("{hash}=ci;root"),
        "sha256:00=ci".to_string(),
    ] {
        assert!(add_api_key(ApiKeys::new(), &bad).is_err(), "{bad}");
    }
    let jwks_only = AuthSettings {
        jwks_url: Some("http://127.0.0.1:1/jwks".into()),
        ..AuthSettings::default()
    };
    assert!(schemes(&jwks_only).is_err(), "issuer and audience required");
    let hs = AuthSettings {
        jwt_issuer: Some("i".into()),
        jwt_audience: Some("a".into()),
        jwt_algorithms: vec!["HS256".into()],
        ..jwks_only
    };
    assert!(schemes(&hs).is_err(), "symmetric algorithms refused");
}

#[test]
fn the_settings_are_the_auth_table_of_a_config_file() {
    let s: AuthSettings =
        serde_json::from_str(r#"{"api_key_hashes": ["a"], "jwt_leeway_secs": 5}"#).unwrap();
    assert_eq!(s.api_key_hash, ["a"]);
    assert_eq!(s.jwt_leeway_secs, Some(5));
    assert!(serde_json::from_str::<AuthSettings>(r#"{"jwks": 1}"#).is_err());
}

#[test]
fn keys_are_made_and_read() {
    let made = new_key();
    assert_eq!(made.hash, crate::hash_api_key(&made.key));
    assert_eq!(read_key(&b"secret\n"[..]).unwrap(), "secret");
    assert!(matches!(read_key(&b"\n"[..]), Err(ReadKeyError::Empty)));
}
