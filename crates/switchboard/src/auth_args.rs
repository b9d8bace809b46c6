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
//! **Anonymous access is explicit.** With no scheme configured, `serve`
//! accepts every caller as the anonymous principal only when it listens on
//! a loopback address (a development setup nobody else can reach); on any
//! other address it refuses to start unless `--allow-anonymous` says that is
//! meant. With schemes configured, `--allow-anonymous` also serves callers
//! that present no credentials; presented credentials are always checked.
//! The configured schemes are advertised in the agent card
//! (`securitySchemes`, `securityRequirements`; 0.3 `security` on the hybrid
//! card).

use std::net::IpAddr;
use std::time::Duration;

use anyhow::{Context, bail};
use switchboard_auth::{ApiKeys, JwtBearer, JwtConfig, Schemes};

/// The authentication flags of `switchboard serve`; also the `auth`
/// table of an `[[agents]]` entry (the same keys, for that agent only; see
/// [`crate::agents`]).
#[derive(Debug, Default, Clone, clap::Args, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
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
    #[serde(alias = "api_key_hashes")]
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

/// Who `serve` lets in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only callers the configured schemes accept.
    Authenticated,
    /// Those, and callers without credentials as the anonymous principal.
    AuthenticatedOrAnonymous,
    /// Everyone, as the anonymous principal (no scheme configured).
    Anonymous,
}

/// The anonymous rule: without a scheme, anonymous access is the default
/// only on a loopback address; elsewhere it must be asked for.
pub fn access(has_schemes: bool, allow_anonymous: bool, listen: IpAddr) -> Result<Access, String> {
    match (has_schemes, allow_anonymous) {
        (true, false) => Ok(Access::Authenticated),
        (true, true) => Ok(Access::AuthenticatedOrAnonymous),
        (false, true) => Ok(Access::Anonymous),
        (false, false) if listen.is_loopback() => Ok(Access::Anonymous),
        (false, false) => Err(format!(
            "refusing to serve {listen} without authentication: anyone who can reach it could read and cancel every task. \
             Configure API keys (--api-key-hash) or JWTs (--jwks-url, --jwt-issuer, --jwt-audience), \
             or pass --allow-anonymous if open access is intended"
        )),
    }
}

/// One `HASH=PRINCIPAL[@TENANT][;admin]` entry added to `keys`.
fn add_api_key(keys: ApiKeys, spec: &str) -> anyhow::Result<ApiKeys> {
    let (hash, who) = spec
        .split_once('=')
        .with_context(|| format!("API key {spec:?}: expected HASH=PRINCIPAL[@TENANT][;admin]"))?;
    let (who, admin) = match who.split_once(';') {
        Some((who, "admin")) => (who, true),
        Some((_, flag)) => bail!("API key {spec:?}: unknown flag {flag:?} (only `admin`)"),
        None => (who, false),
    };
    let (principal, tenant) = match who.split_once('@') {
        Some((p, t)) => (p, Some(t)),
        None => (who, None),
    };
    if principal.is_empty() || tenant.is_some_and(str::is_empty) {
        bail!("API key {spec:?}: the principal (and a tenant after @) must not be empty");
    }
    Ok(keys.key(hash, principal, tenant, admin)?)
}

/// The configured schemes (empty when none is).
pub fn schemes(s: &AuthArgs) -> anyhow::Result<Schemes> {
    let mut schemes = Schemes::new();
    if let Some(url) = &s.jwks_url {
        let (Some(issuer), Some(audience)) = (&s.jwt_issuer, &s.jwt_audience) else {
            bail!(
                "--jwks-url needs --jwt-issuer and --jwt-audience (tokens are checked against both)"
            );
        };
        let mut config = JwtConfig::new(url, issuer, audience);
        if !s.jwt_algorithms.is_empty() {
            config.algorithms =
                JwtConfig::parse_algorithms(&s.jwt_algorithms).map_err(anyhow::Error::msg)?;
        }
        if let Some(secs) = s.jwt_leeway_secs {
            config.leeway = Duration::from_secs(secs);
        }
        if let Some(secs) = s.jwks_min_refetch_secs {
            config.min_refetch = Duration::from_secs(secs);
        }
        if let Some(secs) = s.jwks_revalidate_secs {
            config.revalidate_after = Duration::from_secs(secs);
        }
        config.tenant_claim.clone_from(&s.jwt_tenant_claim);
        if let Some(c) = &s.jwt_admin_claim {
            config.admin_claim.clone_from(c);
        }
        config.admin_value.clone_from(&s.jwt_admin_value);
        if let Some(path) = &s.jwks_ca_cert {
            let pem = std::fs::read(path)
                .with_context(|| format!("--jwks-ca-cert {}", path.display()))?;
            config.jwks_ca_pem = Some(pem);
        }
        schemes = schemes.with(JwtBearer::new(config).map_err(anyhow::Error::msg)?);
    } else if s.jwt_issuer.is_some() || s.jwt_audience.is_some() || s.jwks_ca_cert.is_some() {
        bail!(
            "--jwt-issuer/--jwt-audience/--jwks-ca-cert need --jwks-url (where the issuer's keys are)"
        );
    }
    if !s.api_key_hash.is_empty() {
        let keys = s
            .api_key_hash
            .iter()
            .try_fold(ApiKeys::new(), |keys, spec| add_api_key(keys, spec))?;
        schemes = schemes.with(keys);
    }
    Ok(schemes)
}

/// The schemes a server on `listen` checks callers with (`None`: everyone
/// is anonymous); an error when the settings are invalid or would serve
/// anonymous callers off loopback without being asked to. `serve` and
/// `bridge` apply the same rule.
pub fn caller_schemes(s: &AuthArgs, listen: IpAddr) -> anyhow::Result<Option<Schemes>> {
    let schemes = schemes(s)?;
    match access(!schemes.is_empty(), s.allow_anonymous, listen).map_err(anyhow::Error::msg)? {
        Access::Anonymous => {
            tracing::warn!(%listen, "no authentication: every caller is the anonymous principal");
            Ok(None)
        }
        access => Ok(Some(
            schemes.allow_anonymous(access == Access::AuthenticatedOrAnonymous),
        )),
    }
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
            let key = switchboard_auth::generate_api_key();
            let hash = switchboard_auth::hash_api_key(&key);
            if json {
                writeln!(out, "{}", serde_json::json!({ "key": key, "hash": hash }))
            } else {
                writeln!(out, "{key}\n{hash}")
            }
            .map_err(anyhow::Error::from)
        }
        AuthCommand::HashKey { json } => read_key(stdin).and_then(|key| {
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

fn read_key(mut stdin: impl std::io::BufRead) -> anyhow::Result<String> {
    let mut line = String::new();
    stdin
        .read_line(&mut line)
        .context("reading the key from stdin")?;
    let key = line.trim();
    if key.is_empty() {
        bail!("no key on stdin (e.g. `printf %s \"$KEY\" | switchboard auth hash-key`)");
    }
    Ok(key.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_protocol::AgentCard;

    const OFF_LOOPBACK: [&str; 3] = ["0.0.0.0", "192.0.2.7", "::"];

    #[test]
    fn anonymous_is_the_default_only_on_loopback() {
        for ip in ["127.0.0.1", "127.3.4.5", "::1"] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(access(false, false, ip), Ok(Access::Anonymous), "{ip}");
        }
        for ip in OFF_LOOPBACK {
            let ip: IpAddr = ip.parse().unwrap();
            let err = access(false, false, ip).unwrap_err();
            assert!(err.contains("--allow-anonymous"), "{err}");
            assert_eq!(
                access(false, true, ip),
                Ok(Access::Anonymous),
                "{ip}: asked for"
            );
            assert_eq!(access(true, false, ip), Ok(Access::Authenticated), "{ip}");
            assert_eq!(
                access(true, true, ip),
                Ok(Access::AuthenticatedOrAnonymous),
                "{ip}"
            );
        }
    }

    #[test]
    fn serve_refuses_to_start_open_off_loopback() {
        let ip: IpAddr = "0.0.0.0".parse().unwrap();
        let err = caller_schemes(&AuthArgs::default(), ip).unwrap_err();
        assert!(format!("{err}").contains("refusing to serve"), "{err}");
        let mut s = AuthArgs {
            api_key_hash: vec![format!("{}=ci@acme", switchboard_auth::hash_api_key("k"))],
            ..AuthArgs::default()
        };
        let schemes = caller_schemes(&s, ip).unwrap().unwrap();
        let mut card = AgentCard::new("a", "b", "1");
        switchboard_server::Authenticator::describe(&schemes, &mut card);
        assert!(card.security_schemes.contains_key("apiKey"), "advertised");
        s.api_key_hash.clear();
        s.allow_anonymous = true;
        assert!(caller_schemes(&s, ip).unwrap().is_none());
    }

    #[test]
    fn settings_are_checked() {
        let hash = switchboard_auth::hash_api_key("k");
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
        let jwks_only = AuthArgs {
            jwks_url: Some("http://127.0.0.1:1/jwks".into()),
            ..AuthArgs::default()
        };
        assert!(schemes(&jwks_only).is_err(), "issuer and audience required");
        let hs = AuthArgs {
            jwt_issuer: Some("i".into()),
            jwt_audience: Some("a".into()),
            jwt_algorithms: vec!["HS256".into()],
            ..jwks_only
        };
        assert!(schemes(&hs).is_err(), "symmetric algorithms refused");
    }

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
