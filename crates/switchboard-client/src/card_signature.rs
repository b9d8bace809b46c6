//! Verifying signed agent cards.
//!
//! An agent may sign its card (A2A 1.0 §"Agent Card Signing"): each entry of
//! `signatures` is a JWS (RFC 7515) with a *detached* payload, the card's
//! canonical JSON ([`AgentCard::signing_payload`]: the 1.0 card without
//! `signatures`, empty values dropped, RFC 8785). The protected header names
//! the key (`kid`), its algorithm (`alg`) and usually where to find it (`jku`,
//! a JWKS URL). A card is accepted when **one** signature verifies (several
//! appear during a key rotation).
//!
//! What a signature proves depends on where the key comes from, so the
//! caller chooses ([`CardTrust`]):
//! - [`CardTrust::Keys`]: keys you were given out of band (pinned). A card
//!   signed by anyone else fails, whatever its `jku` says.
//! - [`CardTrust::SameOrigin`]: keys from the `jku` of each signature, but
//!   only a `jku` on the card URL's own origin (scheme, host, port). This
//!   proves the card was issued by the host it was fetched from and was not
//!   altered by a cache or proxy in between; a `jku` elsewhere is not
//!   followed (anyone can publish a JWKS for their own forgery).
//!
//! Only asymmetric algorithms are accepted: `none` and the HMAC family (a
//! public key used as an HMAC secret is the classic JWS confusion attack)
//! are refused.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey};
use switchboard_protocol::AgentCard;
use switchboard_protocol::card::AgentCardSignature;

/// JWK types, for [`CardTrust::Keys`] (re-exported from `jsonwebtoken`).
pub use jsonwebtoken::jwk::{Jwk, JwkSet};

/// Where the keys that may sign a card come from. See the module docs.
#[derive(Debug, Clone)]
pub enum CardTrust {
    /// Only these keys.
    Keys(JwkSet),
    /// Keys published at a `jku` on the card URL's own origin.
    SameOrigin,
}

/// Why a card's signatures were not accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CardSignatureError {
    /// The card carries no signature at all.
    #[error("the agent card is not signed")]
    Unsigned,
    /// The card cannot be put in canonical form (e.g. absurd nesting).
    #[error("the agent card has no canonical form: {0}")]
    Canonical(String),
    /// No signature verified; why each one failed, in card order.
    #[error("no valid signature on the agent card ({})", .0.join("; "))]
    Invalid(Vec<String>),
}

/// Algorithms a card may be signed with.
const ASYMMETRIC: &[Algorithm] = &[
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::EdDSA,
];

/// A signature's protected header, as far as verification needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtectedHeader {
    /// `alg`.
    pub alg: String,
    /// `kid`.
    pub kid: Option<String>,
    /// `jku`, the JWKS URL.
    pub jku: Option<String>,
}

/// Decodes a signature's protected header.
pub fn protected_header(signature: &AgentCardSignature) -> Result<ProtectedHeader, String> {
    let bytes = URL_SAFE_NO_PAD
        .decode(signature.protected.trim_end_matches('='))
        .map_err(|e| format!("protected header is not base64url: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| format!("protected header is not JSON: {e}"))?;
    let text = |name: &str| value.get(name).and_then(|v| v.as_str()).map(String::from);
    Ok(ProtectedHeader {
        alg: text("alg").ok_or("protected header has no alg")?,
        kid: text("kid"),
        jku: text("jku"),
    })
}

/// Checks `card`'s signatures against `keys`; returns the `kid` of the
/// first signature that verifies.
pub fn verify_card(card: &AgentCard, keys: &JwkSet) -> Result<String, CardSignatureError> {
    if card.signatures.is_empty() {
        return Err(CardSignatureError::Unsigned);
    }
    let payload = card
        .signing_payload()
        .map_err(|e| CardSignatureError::Canonical(e.to_string()))?;
    let encoded_payload = URL_SAFE_NO_PAD.encode(payload.as_bytes());
    let mut reasons = Vec::new();
    for (i, signature) in card.signatures.iter().enumerate() {
        match verify_one(signature, &encoded_payload, keys) {
            Ok(kid) => return Ok(kid),
            Err(why) => reasons.push(format!("signature {i}: {why}")),
        }
    }
    Err(CardSignatureError::Invalid(reasons))
}

fn verify_one(
    signature: &AgentCardSignature,
    encoded_payload: &str,
    keys: &JwkSet,
) -> Result<String, String> {
    let header = protected_header(signature)?;
    let alg: Algorithm = header
        .alg
        .parse()
        .map_err(|_| format!("unknown algorithm {:?}", header.alg))?;
    if !ASYMMETRIC.contains(&alg) {
        return Err(format!("algorithm {:?} is not accepted", header.alg));
    }
    let kid = header.kid.ok_or("protected header has no kid")?;
    let jwk = keys
        .find(&kid)
        .ok_or_else(|| format!("no trusted key with kid {kid:?}"))?;
    if let Some(key_alg) = jwk
        .common
        .key_algorithm
        .filter(|a| a.to_string() != header.alg)
    {
        return Err(format!(
            "key {kid:?} is for {key_alg}, the signature says {}",
            header.alg
        ));
    }
    let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("key {kid:?}: {e}"))?;
    let input = format!("{}.{encoded_payload}", signature.protected);
    match jsonwebtoken::crypto::verify(&signature.signature, input.as_bytes(), &key, alg) {
        Ok(true) => Ok(kid),
        Ok(false) => Err(format!("signature by {kid:?} does not match the card")),
        Err(e) => Err(format!("signature by {kid:?}: {e}")),
    }
}

/// Whether `jku` is on the same origin (scheme, host, port) as `card_url`.
pub(crate) fn same_origin(jku: &str, card_url: &reqwest::Url) -> bool {
    reqwest::Url::parse(jku).is_ok_and(|u| u.origin() == card_url.origin())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let card = reqwest::Url::parse("https://a.example/.well-known/agent-card.json").unwrap();
        assert!(same_origin(
            "https://a.example/.well-known/jwks.json",
            &card
        ));
        assert!(same_origin("https://a.example:443/keys", &card));
        assert!(!same_origin(
            "http://a.example/.well-known/jwks.json",
            &card
        ));
        assert!(!same_origin("https://a.example:8443/jwks.json", &card));
        assert!(!same_origin("https://evil.example/jwks.json", &card));
        assert!(!same_origin("not a url", &card));
    }

    #[test]
    fn unsigned_and_garbled_signatures_are_refused() {
        let mut card = AgentCard::new("a", "b", "1");
        let none = JwkSet { keys: vec![] };
        assert_eq!(verify_card(&card, &none), Err(CardSignatureError::Unsigned));
        let hs = URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","kid":"k"}"#);
        let nothing = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","kid":"k"}"#);
        for protected in [hs, nothing, "***".into(), URL_SAFE_NO_PAD.encode("[1]")] {
            card.signatures = vec![AgentCardSignature {
                protected,
                signature: "AAAA".into(),
                header: None,
            }];
            let Err(CardSignatureError::Invalid(why)) = verify_card(&card, &none) else {
                panic!("accepted a bad signature");
            };
            assert_eq!(why.len(), 1, "{why:?}");
        }
    }
}
