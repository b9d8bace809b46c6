//! JWT signature checks on ring, the one crypto library of the build.
//!
//! jsonwebtoken leaves its cryptography to a process-wide `CryptoProvider`.
//! Its `rust_crypto` backend checks an RSA signature with pure-Rust big
//! integers, which costs several times what ring's assembly does (a 2048-bit
//! RS256 check took ~55 % of a request's CPU under load); its other backend,
//! aws-lc-rs, would bring a second crypto library into a build that keeps to
//! ring (one rustls provider). So [`install`] sets a provider whose
//! *verifiers* are ring's for the keys JWKS publish (RSA of 2048 bits or
//! more given as `n`/`e`, ECDSA P-256/P-384, Ed25519), and which hands
//! everything else (HMAC, smaller or DER-encoded RSA keys, and all signing)
//! to `rust_crypto` as before.
//!
//! ring checks exactly what `rust_crypto` checks (PKCS #1 v1.5 and PSS with
//! the algorithm's hash, fixed-length ECDSA `r || s`, Ed25519); the tests
//! hold the two to the same answers.

use std::sync::LazyLock;

use jsonwebtoken::crypto::{CryptoProvider, JwtVerifier, rust_crypto};
use jsonwebtoken::errors::{ErrorKind, Result};
use jsonwebtoken::signature::{self, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind};
use ring::signature as ring_sig;

/// RSA moduli shorter than this (bytes) are left to `rust_crypto`: ring
/// refuses them.
const RING_MIN_RSA_MODULUS: usize = 2048 / 8;

static PROVIDER: LazyLock<CryptoProvider> = LazyLock::new(|| CryptoProvider {
    signer_factory: rust_crypto::DEFAULT_PROVIDER.signer_factory,
    verifier_factory: new_verifier,
    key_utils: rust_crypto::DEFAULT_PROVIDER.key_utils.clone(),
});

/// Makes the provider of the module docs jsonwebtoken's process-wide one.
/// Does nothing when a provider is in place already (one installed, or
/// jsonwebtoken used before this call): checks then stay as they were,
/// just slower.
pub(crate) fn install() {
    let _ = CryptoProvider::install_default(&PROVIDER);
}

/// How ring checks one algorithm.
#[derive(Clone, Copy)]
enum Check {
    Rsa(&'static ring_sig::RsaParameters),
    Raw(&'static dyn ring_sig::VerificationAlgorithm),
}

fn check_for(alg: Algorithm) -> Option<Check> {
    Some(match alg {
        Algorithm::RS256 => Check::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA256),
        Algorithm::RS384 => Check::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA384),
        Algorithm::RS512 => Check::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA512),
        Algorithm::PS256 => Check::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA256),
        Algorithm::PS384 => Check::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA384),
        Algorithm::PS512 => Check::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA512),
        Algorithm::ES256 => Check::Raw(&ring_sig::ECDSA_P256_SHA256_FIXED),
        Algorithm::ES384 => Check::Raw(&ring_sig::ECDSA_P384_SHA384_FIXED),
        Algorithm::EdDSA => Check::Raw(&ring_sig::ED25519),
        // HMAC, and whatever jsonwebtoken adds later.
        _ => return None,
    })
}

/// The provider's verifier factory: ring where it applies (see the module
/// docs), `rust_crypto` otherwise.
fn new_verifier(alg: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    let fallback = rust_crypto::DEFAULT_PROVIDER.verifier_factory;
    let Some(check) = check_for(*alg) else {
        return fallback(alg, key);
    };
    if key.family() != alg.family() {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let ring_can = match (check, key.kind()) {
        (Check::Rsa(_), DecodingKeyKind::RsaModulusExponent { n, .. }) => {
            modulus_len(n) >= RING_MIN_RSA_MODULUS
        }
        (Check::Rsa(_), DecodingKeyKind::SecretOrDer(_)) => false,
        (Check::Raw(_), DecodingKeyKind::SecretOrDer(_)) => true,
        (Check::Raw(_), DecodingKeyKind::RsaModulusExponent { .. }) => {
            return Err(ErrorKind::InvalidKeyFormat.into());
        }
    };
    if !ring_can {
        return fallback(alg, key);
    }
    Ok(Box::new(RingVerifier {
        alg: *alg,
        check,
        key: key.clone(),
    }))
}

/// The length of a big-endian modulus without its leading zero bytes.
fn modulus_len(n: &[u8]) -> usize {
    n.len() - n.iter().take_while(|b| **b == 0).count()
}

struct RingVerifier {
    alg: Algorithm,
    check: Check,
    key: DecodingKey,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, msg: &[u8], sig: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        let checked = match (self.check, self.key.kind()) {
            (Check::Rsa(params), DecodingKeyKind::RsaModulusExponent { n, e }) => {
                ring_sig::RsaPublicKeyComponents { n, e }.verify(params, msg, sig)
            }
            (Check::Raw(alg), DecodingKeyKind::SecretOrDer(public)) => {
                ring_sig::UnparsedPublicKey::new(alg, public).verify(msg, sig)
            }
            // `new_verifier` pairs no other kinds.
            _ => return Err(signature::Error::new()),
        };
        checked.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};

    use super::*;

    const MSG: &[u8] = b"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9";

    /// Both providers' answers for one signature: (ring, rust_crypto).
    fn answers(alg: Algorithm, key: &DecodingKey, sig: &[u8]) -> (bool, bool) {
        let sig = sig.to_vec();
        let ring = new_verifier(&alg, key).unwrap().verify(MSG, &sig).is_ok();
        let rc = (rust_crypto::DEFAULT_PROVIDER.verifier_factory)(&alg, key)
            .unwrap()
            .verify(MSG, &sig)
            .is_ok();
        (ring, rc)
    }

    /// A good signature passes both; flipping any of a few bits, or
    /// checking another message, fails both.
    fn agree(alg: Algorithm, key: &DecodingKey, sig: &[u8]) {
        assert_eq!(answers(alg, key, sig), (true, true), "{alg:?}: good");
        for at in [0, sig.len() / 2, sig.len() - 1] {
            let mut bad = sig.to_vec();
            bad[at] ^= 0x01;
            assert_eq!(answers(alg, key, &bad), (false, false), "{alg:?}: bit {at}");
        }
        let other = new_verifier(&alg, key)
            .unwrap()
            .verify(b"another message", &sig.to_vec());
        assert!(other.is_err(), "{alg:?}: another message");
    }

    #[test]
    fn ring_and_rust_crypto_agree_on_rsa() {
        let pair = RsaKeyPair::from_pkcs8(include_bytes!("../testdata/rsa-2048.pk8")).unwrap();
        let public = ring_sig::RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
        let key = DecodingKey::from_rsa_raw_components(&public.n, &public.e);
        let rng = SystemRandom::new();
        for (alg, encoding) in [
            (
                Algorithm::RS256,
                &ring_sig::RSA_PKCS1_SHA256 as &'static dyn ring_sig::RsaEncoding,
            ),
            (Algorithm::RS512, &ring_sig::RSA_PKCS1_SHA512),
            (Algorithm::PS256, &ring_sig::RSA_PSS_SHA256),
        ] {
            let mut sig = vec![0; pair.public().modulus_len()];
            pair.sign(encoding, &rng, MSG, &mut sig).unwrap();
            agree(alg, &key, &sig);
            // The hash is part of the check: RS256 does not pass as RS384.
            if alg == Algorithm::RS256 {
                assert_eq!(answers(Algorithm::RS384, &key, &sig), (false, false));
            }
        }
    }

    #[test]
    fn ring_and_rust_crypto_agree_on_ecdsa_and_ed25519() {
        let rng = SystemRandom::new();
        let alg = &ring_sig::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        let point = pair.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        let b64 = |b: &[u8]| {
            use base64::Engine;
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
        };
        let key = DecodingKey::from_ec_components(&b64(x), &b64(y)).unwrap();
        let sig = pair.sign(&rng, MSG).unwrap();
        agree(Algorithm::ES256, &key, sig.as_ref());

        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let key = DecodingKey::from_ed_components(&b64(pair.public_key().as_ref())).unwrap();
        agree(Algorithm::EdDSA, &key, pair.sign(MSG).as_ref());
    }

    #[test]
    fn keys_of_another_family_are_refused_and_the_rest_is_handed_on() {
        let rsa = DecodingKey::from_rsa_raw_components(&[0xc5; 256], &[1, 0, 1]);
        assert!(new_verifier(&Algorithm::ES256, &rsa).is_err());
        let ec = DecodingKey::from_ec_der(&[4; 65]);
        assert!(new_verifier(&Algorithm::RS256, &ec).is_err());
        // HMAC and short RSA keys go to rust_crypto, which still answers.
        let secret = DecodingKey::from_secret(b"s3cret");
        assert!(new_verifier(&Algorithm::HS256, &secret).is_ok());
        let short = DecodingKey::from_rsa_raw_components(&[0xc5; 128], &[1, 0, 1]);
        assert!(new_verifier(&Algorithm::RS256, &short).is_ok());
        assert_eq!(modulus_len(&[0, 0, 1, 2]), 2);
    }
}
