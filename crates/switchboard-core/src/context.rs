//! Who is calling: tenant, principal and the extensions in play.
//!
//! Bindings build a [`CallContext`] from the transport (path prefix, auth
//! layer, `A2A-Extensions`) and hand it to every [`crate::RequestHandler`]
//! method. The engine uses it to scope every lookup: a task is only visible
//! in its tenant and to its owner.

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
}

impl Default for CallContext {
    fn default() -> Self {
        CallContext {
            tenant: String::new(),
            principal: ANONYMOUS.to_string(),
            requested_extensions: Vec::new(),
            activated_extensions: Vec::new(),
            push_payload: PayloadKind::Event,
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

/// `true` when the media-type pattern `pattern` (which may be `*/*` or
/// `type/*`) covers `media_type`. Parameters (`; charset=...`) are ignored.
pub fn media_type_matches(pattern: &str, media_type: &str) -> bool {
    let base = |s: &str| {
        s.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let (p, m) = (base(pattern), base(media_type));
    if p == "*/*" || p == "*" || p == m {
        return true;
    }
    match (p.split_once('/'), m.split_once('/')) {
        (Some((pt, "*")), Some((mt, _))) => pt == mt,
        _ => false,
    }
}
