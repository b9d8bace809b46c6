//! Which remote agent a proxy forwards to, with which credentials and
//! within which limits ([`ProxyConfig`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// One proxy agent's settings. Deserializes from the runtime's keys of an
/// `[[agents]]` table (unknown keys are refused, so a typo is an error);
/// durations are seconds.
///
/// Credentials for the remote are never values in the file: `token_env`,
/// `api_key_env` and `header_env` name environment variables of the server,
/// read once when the agent is built. A literal `header` naming a header
/// that carries credentials is refused ([`ConfigError::SecretInFile`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyConfig {
    /// The remote agent: its base URL or its card's URL.
    pub url: String,
    /// Headers sent on every call to the remote, as `"Name: value"` (not
    /// secrets: those come from the environment).
    #[serde(default)]
    pub header: Vec<String>,
    /// Headers whose values are environment variables: header name →
    /// variable name.
    #[serde(default)]
    pub header_env: BTreeMap<String, String>,
    /// A variable holding an API key, sent in [`api_key_header`](Self::api_key_header).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The header the API key goes in (default `X-API-Key`).
    #[serde(default = "default_api_key_header")]
    pub api_key_header: String,
    /// A variable holding a bearer token (`Authorization: Bearer …`).
    #[serde(default)]
    pub token_env: Option<String>,
    /// Longest wait for the remote's next answer or event; then the task
    /// fails (and the remote task is canceled).
    #[serde(default = "default_timeout", deserialize_with = "seconds")]
    pub timeout: Duration,
    /// Longest wait for a connection to the remote.
    #[serde(default = "default_connect_timeout", deserialize_with = "seconds")]
    pub connect_timeout: Duration,
    /// Most calls to the remote in flight at once; a message beyond it is
    /// refused with ResourceExhausted, never queued.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
}

fn default_api_key_header() -> String {
    "X-API-Key".into()
}
fn default_timeout() -> Duration {
    Duration::from_secs(300)
}
fn default_connect_timeout() -> Duration {
    Duration::from_secs(10)
}
fn default_max_concurrent() -> usize {
    64
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| serde::de::Error::custom(format!("{secs} is not a number of seconds")))
}

/// Headers whose value is a credential: never literal in the file.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
];

/// A setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `url` is not an http(s) URL.
    #[error("`url` {url:?} is not an http:// or https:// URL: {reason}")]
    BadUrl {
        /// As written.
        url: String,
        /// Why.
        reason: String,
    },
    /// `url` carries a user or password.
    #[error("`url` carries credentials: give them with token_env, api_key_env or header_env")]
    CredentialsInUrl,
    /// A `header` is not `Name: value`.
    #[error("`header` {0:?} is not `Name: value`")]
    BadHeader(String),
    /// A literal `header` names a credential header.
    #[error(
        "`header` {0:?} would put a credential in the file: use token_env, api_key_env or header_env"
    )]
    SecretInFile(String),
    /// A credential variable is unset or empty.
    #[error("the environment variable {0} (a credential for the remote agent) is not set")]
    MissingEnv(String),
    /// `max_concurrent` is 0.
    #[error("`max_concurrent` is 0: the agent could never run")]
    NoConcurrency,
}

impl ProxyConfig {
    /// A proxy of the agent at `url`, with the defaults.
    pub fn new(url: impl Into<String>) -> Self {
        ProxyConfig {
            url: url.into(),
            header: Vec::new(),
            header_env: BTreeMap::new(),
            api_key_env: None,
            api_key_header: default_api_key_header(),
            token_env: None,
            timeout: default_timeout(),
            connect_timeout: default_connect_timeout(),
            max_concurrent: default_max_concurrent(),
        }
    }

    /// Checks what deserializing cannot (the environment is read later, by
    /// [`ProxyConfig::headers`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let url = url::Url::parse(&self.url).map_err(|e| ConfigError::BadUrl {
            url: self.url.clone(),
            reason: e.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ConfigError::BadUrl {
                url: self.url.clone(),
                reason: format!("scheme {}", url.scheme()),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ConfigError::CredentialsInUrl);
        }
        for header in &self.header {
            let (name, _) = split_header(header)?;
            if is_secret_header(name) || name.eq_ignore_ascii_case(&self.api_key_header) {
                return Err(ConfigError::SecretInFile(name.to_string()));
            }
        }
        if self.max_concurrent == 0 {
            return Err(ConfigError::NoConcurrency);
        }
        Ok(())
    }

    /// Every header sent to the remote, credentials read from the
    /// environment now.
    pub fn headers(&self) -> Result<Vec<(String, String)>, ConfigError> {
        let env = |name: &str| match std::env::var(name) {
            Ok(v) if !v.is_empty() => Ok(v),
            _ => Err(ConfigError::MissingEnv(name.to_string())),
        };
        let mut headers = Vec::new();
        for header in &self.header {
            let (name, value) = split_header(header)?;
            headers.push((name.to_string(), value.to_string()));
        }
        for (name, var) in &self.header_env {
            headers.push((name.clone(), env(var)?));
        }
        if let Some(var) = &self.api_key_env {
            headers.push((self.api_key_header.clone(), env(var)?));
        }
        if let Some(var) = &self.token_env {
            headers.push(("Authorization".into(), format!("Bearer {}", env(var)?)));
        }
        Ok(headers)
    }
}

fn split_header(header: &str) -> Result<(&str, &str), ConfigError> {
    match header.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim(), value.trim())),
        _ => Err(ConfigError::BadHeader(header.to_string())),
    }
}

fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.iter().any(|s| name.eq_ignore_ascii_case(s))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn credentials_never_come_from_the_file() {
        let mut c = ProxyConfig::new("http://127.0.0.1:1/");
        assert_eq!(c.validate(), Ok(()));
        c.header = vec!["Authorization: Bearer x".into()];
        assert!(matches!(c.validate(), Err(ConfigError::SecretInFile(_))));
        c.header = vec!["X-Trace: on".into()];
        assert_eq!(c.validate(), Ok(()));
        c.url = "http://user:pw@127.0.0.1:1/".into();
        assert_eq!(c.validate(), Err(ConfigError::CredentialsInUrl));
        c.url = "ftp://127.0.0.1/".into();
        assert!(matches!(c.validate(), Err(ConfigError::BadUrl { .. })));
        let mut c = ProxyConfig::new("http://127.0.0.1:1/");
        c.token_env = Some("SWITCHBOARD_PROXY_TEST_UNSET_VARIABLE".into());
        assert_eq!(
            c.headers(),
            Err(ConfigError::MissingEnv(
                "SWITCHBOARD_PROXY_TEST_UNSET_VARIABLE".into()
            ))
        );
    }
}
