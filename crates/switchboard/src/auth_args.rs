//! Who may call `switchboard serve` (and `switchboard bridge`, which takes
//! the same flags): the authentication settings (flags, environment
//! variables, and the `[auth]` section of the config file), the rule for
//! anonymous callers, and `switchboard auth` to make API keys.
//!
//! ```toml
//! [auth]
//! # API keys, stored as hashes only (`switchboard auth new-key` makes one;
//! # `switchboard auth hash-key` hashes an existing key read from stdin).
//! # HASH=PRINCIPAL[@TENANT][;admin]; callers send `X-API-Key: <key>` or
//! # `Authorization: Bearer <key>`.
//! api_key_hashes = ["sha256:9f86…=ci@acme", "sha256:60303…=ops;admin"]
//!
//! # Bearer JWTs from an identity provider, checked against its JWKS.
//! jwks_url = "https://idp.example.com/.well-known/jwks.json"
//! jwks_ca_cert = "/etc/switchboard/idp-ca.pem" # a private CA for it (beside the system roots)
//! jwt_issuer = "https://idp.example.com/"
//! jwt_audience = "switchboard"
//! jwt_algorithms = ["RS256", "ES256"]   # default: RS256, PS256, ES256, EdDSA
//! jwt_leeway_secs = 30                  # clock skew on exp/nbf
//! jwt_tenant_claim = "tenant"           # tokens must carry it; binds the caller to it
//! jwt_admin_claim = "scope"             # a space-separated string or an array
//! jwt_admin_value = "switchboard:admin" # the value that marks an administrator
//! jwks_min_refetch_secs = 30            # unknown kids refetch at most this often
//! jwks_revalidate_secs = 60             # keys re-read in the background this often while in use
//!
//! allow_anonymous = false               # serve callers without credentials too
//! ```
//!
//! The settings become [`switchboard_auth::settings::AuthSettings`], where
//! the schemes are built and the rule for anonymous callers lives: with no
//! scheme, `serve` serves everyone only on a loopback address and refuses
//! to start elsewhere unless `--allow-anonymous` says that is meant. The
//! configured schemes are advertised in the agent card.

use std::net::IpAddr;

use switchboard_auth::Schemes;
use switchboard_auth::settings::{self, AuthSettings};

/// The authentication flags of `switchboard serve`; also the `auth`
/// table of an `[[agents]]` entry (the same keys, for that agent only; see
/// [`crate::agents`]).
#[derive(Debug, Default, Clone, clap::Args)]
pub struct AuthArgs {
    /// Serve callers that present no credentials, as the anonymous
    /// principal. Required to serve without authentication on a
    /// non-loopback address.
    #[arg(long, env = "SWITCHBOARD_ALLOW_ANONYMOUS")]
    pub allow_anonymous: bool,
    /// Accept an API key, given by its hash: `HASH=PRINCIPAL[@TENANT][;admin]`
    /// (hash from `switchboard auth hash-key`). Repeatable (comma-separated
    /// in the environment); adds to `api_key_hashes`.
    #[arg(
        long = "api-key-hash",
        alias = "api-key-hashes",
        env = "SWITCHBOARD_API_KEY_HASH",
        value_delimiter = ',',
        value_name = "HASH=PRINCIPAL[@TENANT][;admin]"
    )]
    pub api_key_hash: Vec<String>,
    /// Accept bearer JWTs verified with the keys published at this JWKS URL.
    #[arg(long, env = "SWITCHBOARD_JWKS_URL")]
    pub jwks_url: Option<String>,
    /// A PEM file of CA certificates trusted for an `https` --jwks-url
    /// beside the system's roots (an identity provider behind a private CA).
    #[arg(long, env = "SWITCHBOARD_JWKS_CA_CERT", value_name = "PEM")]
    pub jwks_ca_cert: Option<std::path::PathBuf>,
    /// The issuer (`iss`) tokens must come from.
    #[arg(long, env = "SWITCHBOARD_JWT_ISSUER")]
    pub jwt_issuer: Option<String>,
    /// The audience (`aud`) tokens must be for.
    #[arg(long, env = "SWITCHBOARD_JWT_AUDIENCE")]
    pub jwt_audience: Option<String>,
    /// Accepted token algorithms (RS*, PS*, ES*, EdDSA; never HS* or none).
    #[arg(long, env = "SWITCHBOARD_JWT_ALGORITHMS", value_delimiter = ',')]
    pub jwt_algorithms: Vec<String>,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds (default 30).
    #[arg(long, env = "SWITCHBOARD_JWT_LEEWAY_SECS")]
    pub jwt_leeway_secs: Option<u64>,
    /// The claim naming the caller's tenant (then required in every token).
    #[arg(long, env = "SWITCHBOARD_JWT_TENANT_CLAIM")]
    pub jwt_tenant_claim: Option<String>,
    /// The claim that can mark an administrator (default `scope`).
    #[arg(long, env = "SWITCHBOARD_JWT_ADMIN_CLAIM")]
    pub jwt_admin_claim: Option<String>,
    /// The value of the admin claim that marks an administrator.
    #[arg(long, env = "SWITCHBOARD_JWT_ADMIN_VALUE")]
    pub jwt_admin_value: Option<String>,
    /// Least time between two JWKS fetches, in seconds (default 30): tokens
    /// naming unknown keys cannot make the server hammer the JWKS host.
    #[arg(long, env = "SWITCHBOARD_JWKS_MIN_REFETCH_SECS")]
    pub jwks_min_refetch_secs: Option<u64>,
    /// While tokens arrive, re-read the JWKS in the background once it is
    /// this many seconds old (default 60): a key the issuer removed stops
    /// verifying within about that time.
    #[arg(long, env = "SWITCHBOARD_JWKS_REVALIDATE_SECS")]
    pub jwks_revalidate_secs: Option<u64>,
}

impl AuthArgs {
    /// The settings as the auth crate takes them.
    pub fn settings(&self) -> AuthSettings {
        AuthSettings {
            allow_anonymous: self.allow_anonymous,
            api_key_hash: self.api_key_hash.clone(),
            jwks_url: self.jwks_url.clone(),
            jwks_ca_cert: self.jwks_ca_cert.clone(),
            jwt_issuer: self.jwt_issuer.clone(),
            jwt_audience: self.jwt_audience.clone(),
            jwt_algorithms: self.jwt_algorithms.clone(),
            jwt_leeway_secs: self.jwt_leeway_secs,
            jwt_tenant_claim: self.jwt_tenant_claim.clone(),
            jwt_admin_claim: self.jwt_admin_claim.clone(),
            jwt_admin_value: self.jwt_admin_value.clone(),
            jwks_min_refetch_secs: self.jwks_min_refetch_secs,
            jwks_revalidate_secs: self.jwks_revalidate_secs,
        }
    }
}

/// The schemes a server on `listen` checks callers with
/// ([`settings::caller_schemes`]); `serve`, `bridge`, `console` and `mcp`
/// apply the same rule.
pub fn caller_schemes(s: &AuthArgs, listen: IpAddr) -> anyhow::Result<Option<Schemes>> {
    Ok(settings::caller_schemes(&s.settings(), listen)?)
}

/// `switchboard auth`: API keys for `--api-key-hash`.
#[derive(Debug, clap::Subcommand)]
pub enum AuthCommand {
    /// Make a new random API key: prints the key (give it to the caller)
    /// and, on the next line, its hash (give that to `serve`).
    NewKey {
        /// Print one JSON object: `{"key": …, "hash": …}`.
        #[arg(long)]
        json: bool,
    },
    /// Hash an API key read from stdin (so it stays out of the shell
    /// history and the process list); prints the hash for `--api-key-hash`.
    HashKey {
        /// Print one JSON object: `{"hash": …}`.
        #[arg(long)]
        json: bool,
    },
}

/// Runs an `auth` command; the exit code.
pub fn run(cmd: AuthCommand, stdin: impl std::io::BufRead, mut out: impl std::io::Write) -> u8 {
    let result = match cmd {
        AuthCommand::NewKey { json } => {
            let settings::NewKey { key, hash } = settings::new_key();
            if json {
                writeln!(out, "{}", serde_json::json!({ "key": key, "hash": hash }))
            } else {
                writeln!(out, "{key}\n{hash}")
            }
            .map_err(anyhow::Error::from)
        }
        AuthCommand::HashKey { json } => settings::read_key(stdin)
            .map_err(anyhow::Error::from)
            .and_then(|key| {
                let hash = switchboard_auth::hash_api_key(&key);
                if json {
                    writeln!(out, "{}", serde_json::json!({ "hash": hash }))
                } else {
                    writeln!(out, "{hash}")
                }
                .map_err(anyhow::Error::from)
            }),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("switchboard auth: {e:#}");
            2
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn flags_add_to_and_override_the_auth_section_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sb.toml");
        let args = |extra: &[&str]| -> Vec<std::ffi::OsString> {
            ["--config", file.to_str().unwrap()]
                .iter()
                .chain(extra)
                .map(Into::into)
                .collect()
        };
        std::fs::write(
            &file,
            "[auth]\napi_key_hashes = [\"a\"]\njwt_issuer = \"file\"\njwt_leeway_secs = 5\n",
        )
        .unwrap();
        let flags = [
            "--api-key-hash",
            "b",
            "--jwt-issuer",
            "flag",
            "--allow-anonymous",
        ];
        let s = crate::serve::ServeArgs::resolve(&args(&flags))
            .unwrap()
            .auth;
        assert_eq!(s.api_key_hash, ["a", "b"]);
        assert_eq!(s.jwt_issuer.as_deref(), Some("flag"));
        assert_eq!(
            s.jwt_leeway_secs,
            Some(5),
            "unset flags keep the file's value"
        );
        assert!(s.allow_anonymous);
        std::fs::write(&file, "[auth]\njwks = 1\n").unwrap();
        assert!(
            crate::serve::ServeArgs::resolve(&args(&[])).is_err(),
            "unknown keys"
        );
    }

    #[test]
    fn auth_commands_make_and_hash_keys() {
        let mut out = Vec::new();
        assert_eq!(
            run(AuthCommand::NewKey { json: false }, &b""[..], &mut out),
            0
        );
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], switchboard_auth::hash_api_key(lines[0]));
        let mut out = Vec::new();
        assert_eq!(
            run(
                AuthCommand::HashKey { json: false },
                &b"secret\n"[..],
                &mut out
            ),
            0
        );
        assert_eq!(
            String::from_utf8(out).unwrap().trim(),
            switchboard_auth::hash_api_key("secret")
        );
        assert_eq!(
            run(AuthCommand::HashKey { json: false }, &b"\n"[..], Vec::new()),
            2
        );
    }
}
