//! Who is calling: tenant, principal and the extensions in play.
//!
//! Bindings build a [`CallContext`] from the transport (path prefix, auth
//! layer, `A2A-Extensions`) and hand it to every [`crate::RequestHandler`]
//! method. The engine uses it to scope every lookup: a task is only visible
//! in its tenant and to its owner.

use std::net::IpAddr;

use switchboard_protocol::A2AError;

use crate::push::PayloadKind;

/// The principal used when no authentication is configured.
pub const ANONYMOUS: &str = "anonymous";

/// The caller of one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    /// Tenant ("" for the default tenant).
    pub tenant: String,
    /// Authenticated principal id ([`ANONYMOUS`] without auth).
    pub principal: String,
    /// Extension URIs the caller asked for (`A2A-Extensions`).
    pub requested_extensions: Vec<String>,
    /// The subset the agent declares, i.e. the ones actually applied;
    /// filled in by the engine and echoed back by the binding.
    pub activated_extensions: Vec<String>,
    /// What webhooks registered by this call receive for each event
    /// (recorded on the push configs it creates): bindings whose receivers
    /// expect the whole task ask for [`PayloadKind::TaskSnapshot`]; the
    /// default is the event (see [`crate::push`]).
    pub push_payload: PayloadKind,
    /// The one tenant the caller's credentials allow, when authentication
    /// says so. Requests may then name only that tenant (or none); see
    /// [`CallContext::use_tenant`].
    pub credential_tenant: Option<String>,
    /// The last event sequence number the caller saw of a stream it is
    /// resuming (`Last-Event-ID`, gRPC `last-event-id`): SubscribeToTask
    /// then replays what came after it instead of starting afresh.
    pub resume_after: Option<u64>,
    /// The caller's credentials carry the administrator scope: it may get,
    /// list and cancel every task of the tenant it works in, not only its
    /// own (subscribing, follow-ups and push configs stay the owner's).
    /// Its tenant is still the one its credentials grant.
    pub admin: bool,
    /// Who an anonymous caller is for quotas: the address it connects from
    /// (an IPv6 caller by its /64), set by the server's gate. Anonymous
    /// callers share one principal, and so would share its quotas, which
    /// one caller could then take from all; this gives each address its
    /// own. `None` for authenticated callers, counted by their principal.
    pub client: Option<IpAddr>,
}

impl Default for CallContext {
    fn default() -> Self {
        CallContext {
            tenant: String::new(),
            principal: ANONYMOUS.to_string(),
            requested_extensions: Vec::new(),
            activated_extensions: Vec::new(),
            push_payload: PayloadKind::Event,
            credential_tenant: None,
            resume_after: None,
            admin: false,
            client: None,
        }
    }
}

impl CallContext {
    /// An anonymous caller in the default tenant.
    pub fn anonymous() -> Self {
        Self::default()
    }

    /// Sets the tenant.
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = tenant.into();
        self
    }

    /// Applies the tenant a request names (a path segment or a `tenant`
    /// field; `""` when it names none). Every binding calls this, so the
    /// rule lives once: a caller whose credentials grant one tenant works in
    /// that tenant, and naming another is PermissionDenied — the path a
    /// caller picks never widens what its credentials allow.
    pub fn use_tenant(&mut self, requested: &str) -> Result<(), A2AError> {
        match &self.credential_tenant {
            None => {
                self.tenant = requested.to_string();
                Ok(())
            }
            Some(granted) if requested.is_empty() || requested == granted => {
                self.tenant = granted.clone();
                Ok(())
            }
            Some(_) => Err(A2AError::PermissionDenied(format!(
                "the credentials do not grant tenant {requested:?}"
            ))),
        }
    }

    /// Whether this caller may get, list and cancel a task owned by
    /// `owner`: its own, or any as an administrator ([`CallContext::admin`]).
    pub fn may_manage(&self, owner: &str) -> bool {
        self.admin || owner == self.principal
    }

    /// Sets what webhooks registered by this call receive.
    pub fn with_push_payload(mut self, kind: PayloadKind) -> Self {
        self.push_payload = kind;
        self
    }

    /// Sets the requested extensions from an `A2A-Extensions` header value
    /// (comma-separated, whitespace ignored, duplicates dropped).
    pub fn with_extensions_header(mut self, header: &str) -> Self {
        for uri in header.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if !self.requested_extensions.iter().any(|e| e == uri) {
                self.requested_extensions.push(uri.to_string());
            }
        }
        self
    }
}

/// A media type without its parameters (`; charset=...`) and surrounding
/// blanks, as bytes: `type/subtype`, to compare ASCII case-insensitively.
///
/// A byte search and an ASCII trim: media types are ASCII, and on strings
/// this short `split`/`trim`'s general machinery cost more than the
/// comparison (it runs for every part of every message, and for the
/// content type of every JSON request).
pub fn media_type_base(value: &[u8]) -> &[u8] {
    let end = value.iter().position(|&b| b == b';').unwrap_or(value.len());
    value[..end].trim_ascii()
}

/// `true` when the media-type pattern `pattern` (which may be `*/*` or
/// `type/*`) covers `media_type`. Parameters (`; charset=...`) are ignored.
pub fn media_type_matches(pattern: &str, media_type: &str) -> bool {
    // Compared in place, ASCII case-insensitively: no lowercased copies.
    fn base(s: &str) -> &[u8] {
        media_type_base(s.as_bytes())
    }
    fn main_type(s: &[u8]) -> Option<(&[u8], &[u8])> {
        let slash = s.iter().position(|&b| b == b'/')?;
        Some((&s[..slash], &s[slash + 1..]))
    }
    let (p, m) = (base(pattern), base(media_type));
    if p == b"*/*" || p == b"*" || p.eq_ignore_ascii_case(m) {
        return true;
    }
    match (main_type(p), main_type(m)) {
        (Some((pt, b"*")), Some((mt, _))) => pt.eq_ignore_ascii_case(mt),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn credentials_decide_the_tenant() {
        let mut free = CallContext::anonymous();
        free.use_tenant("acme").unwrap();
        assert_eq!(free.tenant, "acme");

        let mut bound = CallContext {
            credential_tenant: Some("acme".into()),
            ..CallContext::anonymous()
        };
        bound.use_tenant("").unwrap();
        assert_eq!(bound.tenant, "acme", "no tenant named: the granted one");
        bound.use_tenant("acme").unwrap();
        assert_eq!(bound.tenant, "acme");
        let err = bound.use_tenant("other").unwrap_err();
        assert_eq!(
            err.code(),
            switchboard_protocol::error::PERMISSION_DENIED_CODE
        );
        assert_eq!(bound.tenant, "acme", "a refused tenant changes nothing");
    }

    #[test]
    fn media_types_match_by_type_wildcard_and_case() {
        let matching = [
            ("Text/Plain", "text/PLAIN; charset=utf-8"),
            (" text/plain ; q=1", "text/plain"),
            ("*/*", "image/png"),
            ("*", "application/json"),
            ("IMAGE/*", "image/png"),
        ];
        // Another type, subtype or nothing at all never matches.
        let other = [
            ("text/plain", "text/html"),
            ("image/*", "text/plain"),
            ("text/plain", "image/*"),
            ("image/*", "imagex/png"),
            ("", "text/plain"),
        ];
        for (expected, cases) in [(true, matching), (false, other)] {
            for (pattern, media_type) in cases {
                let got = media_type_matches(pattern, media_type);
                assert_eq!(got, expected, "{pattern} ~ {media_type}");
            }
        }
    }
}
