//! Service parameters: `A2A-Version` and `A2A-Extensions`.
//!
//! The version comes from the `A2A-Version` header or, as the spec allows,
//! the `A2A-Version` query parameter. A missing or empty value means 0.3.
//! Only the major and minor parts count: `1`, `1.0` and `1.0.3` all mean 1.0;
//! `0.3` and `0.3.0` mean 0.3.
//!
//! How a binding picks the dialect (the rule, per request):
//! - **JSON-RPC**: the method name decides. A 0.3 name (`message/send`, …)
//!   is served in the 0.3 dialect; a 1.0 name (`SendMessage`, …) in 1.0,
//!   also when `A2A-Version` is missing — many 1.0 clients in the wild omit
//!   it, and the two sets of names never collide, so nothing is ambiguous.
//!   An explicit `A2A-Version: 0.3` on a 1.0 name is MethodNotFound (0.3 has
//!   no such method); a version this server does not serve (`2.0`) is
//!   VersionNotSupported for every method.
//! - **REST**: the path decides. `/v1/...` is 0.3, every other route 1.0.
//!   The 1.0 routes keep the spec's rule that a missing version means 0.3
//!   and answer VersionNotSupported, because there a header-less call is
//!   what a 0.3 client pointed at the wrong base URL sends.

use http::{HeaderMap, HeaderName};
use switchboard_protocol::{A2AError, VERSION_HEADER};

// The headers read on every request, as parsed names: looking one up by a
// `&str` parses (and lowercases) the name each time, ~300 instructions a
// lookup on the unary path. `switchboard_protocol`'s string constants are
// what the spec spells; these are the same names, lowercase as HTTP/2 sends
// them (a test checks they agree).
static VERSION: HeaderName = HeaderName::from_static("a2a-version");
static EXTENSIONS: HeaderName = HeaderName::from_static("a2a-extensions");
static LEGACY_EXTENSIONS: HeaderName = HeaderName::from_static("x-a2a-extensions");
static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The protocol version a request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolVersion {
    /// A2A 1.x.
    V1_0,
    /// A2A 0.3 (the JSON-RPC and REST dialects in `switchboard_protocol::v03`).
    V0_3,
}

/// What a missing or empty `A2A-Version` means (spec §3.6.2).
pub const IMPLIED_VERSION: &str = "0.3";

/// Reads the requested version (missing or empty = 0.3) and refuses
/// versions this server does not serve.
pub fn negotiate_version(
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<ProtocolVersion, A2AError> {
    Ok(explicit_version(headers, query)?.unwrap_or(ProtocolVersion::V0_3))
}

/// Like [`negotiate_version`] for a route that serves 1.0 only.
pub fn require_v1(headers: &HeaderMap, query: Option<&str>) -> Result<(), A2AError> {
    match negotiate_version(headers, query)? {
        ProtocolVersion::V1_0 => Ok(()),
        ProtocolVersion::V0_3 => Err(A2AError::VersionNotSupported(
            raw_version(headers, query)
                .unwrap_or(IMPLIED_VERSION)
                .to_string(),
        )),
    }
}

fn raw_version<'a>(headers: &'a HeaderMap, query: Option<&'a str>) -> Option<&'a str> {
    let from_header = headers
        .get(&VERSION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    let from_query = query.and_then(|q| {
        q.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            k.eq_ignore_ascii_case(VERSION_HEADER).then_some(v.trim())
        })
    });
    from_header
        .filter(|v| !v.is_empty())
        .or(from_query.filter(|v| !v.is_empty()))
}

/// The version the request names explicitly: `None` when it names none;
/// VersionNotSupported for a version this server does not serve.
pub fn explicit_version(
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Option<ProtocolVersion>, A2AError> {
    let Some(raw) = raw_version(headers, query) else {
        return Ok(None);
    };
    let mut parts = raw.split('.');
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    match (parts.next(), parts.next(), parts.next()) {
        (Some("1"), None, _) => Ok(Some(ProtocolVersion::V1_0)),
        (Some("1"), Some(minor), _) if digits(minor) => Ok(Some(ProtocolVersion::V1_0)),
        (Some("0"), Some("3"), patch) if patch.is_none_or(digits) => {
            Ok(Some(ProtocolVersion::V0_3))
        }
        _ => Err(A2AError::VersionNotSupported(raw.to_string())),
    }
}

/// The extension URIs requested with `A2A-Extensions` (or the 0.3-era
/// `X-A2A-Extensions`), all header instances combined.
pub fn requested_extensions(headers: &HeaderMap) -> String {
    // Most requests name no extension: nothing is allocated for them.
    let mut all = String::new();
    for name in [&EXTENSIONS, &LEGACY_EXTENSIONS] {
        for v in headers.get_all(name) {
            if let Ok(s) = v.to_str() {
                if !all.is_empty() {
                    all.push(',');
                }
                all.push_str(s);
            }
        }
    }
    all
}

/// `true` for `application/json` and `application/a2a+json` (any parameters).
pub fn is_json_content_type(headers: &HeaderMap) -> bool {
    // On the bytes: a value that is not ASCII cannot equal either name, so
    // it needs no UTF-8 check.
    headers
        .get(http::header::CONTENT_TYPE)
        .map(|v| {
            let base = switchboard_core::context::media_type_base(v.as_bytes());
            base.eq_ignore_ascii_case(b"application/json")
                || base.eq_ignore_ascii_case(b"application/a2a+json")
        })
        .unwrap_or(false)
}

/// `Last-Event-ID`: the SSE id (event sequence) a reconnecting client saw
/// last; SubscribeToTask resumes right after it. `None` when absent; an
/// error when present but not a sequence number.
pub fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, A2AError> {
    match headers.get(&LAST_EVENT_ID) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(Some)
            .ok_or_else(|| {
                A2AError::invalid_field(
                    "Last-Event-ID",
                    "must be an event sequence number this server sent as an SSE id",
                )
            }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn h(v: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(VERSION_HEADER, v.parse().unwrap());
        m
    }

    #[test]
    fn requested_extensions_joins_every_instance_of_both_headers() {
        assert_eq!(requested_extensions(&HeaderMap::new()), "");
        let mut m = HeaderMap::new();
        m.append(&EXTENSIONS, "urn:a, urn:b".parse().unwrap());
        m.append(&EXTENSIONS, "urn:c".parse().unwrap());
        m.append(&LEGACY_EXTENSIONS, "urn:d".parse().unwrap());
        assert_eq!(requested_extensions(&m), "urn:a, urn:b,urn:c,urn:d");
    }

    #[test]
    fn the_parsed_names_are_the_specs() {
        use switchboard_protocol::EXTENSIONS_HEADER;
        for (parsed, spelled) in [(&VERSION, VERSION_HEADER), (&EXTENSIONS, EXTENSIONS_HEADER)] {
            assert_eq!(parsed, &HeaderName::from_bytes(spelled.as_bytes()).unwrap());
        }
    }

    #[test]
    fn json_content_types() {
        let is_json = |v: &[u8]| {
            let mut m = HeaderMap::new();
            m.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_bytes(v).unwrap(),
            );
            is_json_content_type(&m)
        };
        for yes in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/a2a+json ;x=1",
        ] {
            assert!(is_json(yes.as_bytes()), "{yes}");
        }
        for no in [
            "text/plain",
            "application/jsonx",
            "application/json+x",
            "",
            "json",
        ] {
            assert!(!is_json(no.as_bytes()), "{no}");
        }
        assert!(!is_json("application/jsön".as_bytes()), "not ASCII");
        assert!(!is_json_content_type(&HeaderMap::new()), "absent");
    }

    #[test]
    fn last_event_ids() {
        assert_eq!(last_event_id(&HeaderMap::new()).unwrap(), None);
        let mut m = HeaderMap::new();
        m.insert("Last-Event-ID", " 12 ".parse().unwrap());
        assert_eq!(last_event_id(&m).unwrap(), Some(12));
        m.insert("Last-Event-ID", "x".parse().unwrap());
        assert_eq!(last_event_id(&m).unwrap_err().code(), -32602);
    }

    #[test]
    fn versions() {
        assert_eq!(
            negotiate_version(&h("1.0"), None).unwrap(),
            ProtocolVersion::V1_0
        );
        assert_eq!(
            negotiate_version(&h("1"), None).unwrap(),
            ProtocolVersion::V1_0
        );
        assert_eq!(
            negotiate_version(&h("1.0.3"), None).unwrap(),
            ProtocolVersion::V1_0
        );
        assert_eq!(
            negotiate_version(&HeaderMap::new(), Some("A2A-Version=1.0")).unwrap(),
            ProtocolVersion::V1_0
        );
        assert_eq!(
            negotiate_version(&HeaderMap::new(), None).unwrap(),
            ProtocolVersion::V0_3
        );
        assert_eq!(
            negotiate_version(&h("0.3.0"), None).unwrap(),
            ProtocolVersion::V0_3
        );
        assert_eq!(explicit_version(&h(""), None).unwrap(), None);
        assert_eq!(require_v1(&h(""), None).unwrap_err().code(), -32009);
        assert_eq!(require_v1(&h("0.3"), None).unwrap_err().code(), -32009);
        assert_eq!(
            negotiate_version(&h("0.4"), None).unwrap_err().code(),
            -32009
        );
        assert_eq!(
            negotiate_version(&h("2.0"), None).unwrap_err().code(),
            -32009
        );
        assert_eq!(
            negotiate_version(&h("1.x"), None).unwrap_err().code(),
            -32009
        );
    }
}
