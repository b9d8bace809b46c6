//! One access log line per request, and a request id on each.
//!
//! Both are the work of the request layer [`super::Observe`],
//! which sees every request: all bindings (gRPC included), the card and the
//! added routes, and times each once for its access line, its metrics and
//! its span. Each request gets an id: the caller's `X-Request-Id` when it
//! is sane (1–128 characters of `A-Z a-z 0-9 - _ . :`), else a new one,
//! shaped as a UUID (see `new_id`: unique, not random per request);
//! it is set on the request (for the handlers) and returned as
//! `X-Request-Id`. When the response head is ready, one `info` event with
//! target `switchboard::access` records method, path (never the query
//! string, which may carry credentials), binding, HTTP status (and the
//! `grpc-status` of a trailers-only gRPC answer), duration to the response
//! head in ms (a stream runs on after it) and the request id. Headers are
//! never logged.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::Response;

/// The request id header, read and written.
pub static REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// A trailers-only gRPC answer's status, looked up by a name parsed once.
static GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");

/// The request's id: the caller's if sane, else a new one; set on the
/// request for the handlers.
pub(crate) fn request_id(req: &mut Request) -> HeaderValue {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .filter(|v| sane(v.as_bytes()))
        .cloned()
        .unwrap_or_else(new_id);
    req.headers_mut().insert(REQUEST_ID.clone(), id.clone());
    id
}

/// Returns the request's id on its answer.
pub(crate) fn answer_id(resp: &mut Response, mut id: HeaderValue) {
    // Every id is new, so an HTTP/2 (gRPC) encoder gains nothing by adding
    // it to its HPACK table: it would only push out useful entries, and
    // each lookup would compare against the old ids. "Sensitive" values
    // are sent as never-indexed literals.
    id.set_sensitive(true);
    resp.headers_mut().insert(REQUEST_ID.clone(), id);
}

/// The request's side of its access line, taken before the request moves
/// on to the inner service.
pub(crate) struct Line {
    method: axum::http::Method,
    path: String,
    binding: &'static str,
}

impl Line {
    /// What the line needs, only when it will be written: with the level
    /// at `warn` (the usual production setting) a request costs the id and
    /// nothing else here.
    pub(crate) fn of(req: &Request, binding: &'static str) -> Option<Line> {
        tracing::enabled!(target: "switchboard::access", tracing::Level::INFO).then(|| Line {
            method: req.method().clone(),
            path: req.uri().path().to_string(),
            binding,
        })
    }

    /// Writes the line for `resp`, answered after `elapsed`.
    pub(crate) fn write(self, resp: &Response, id: &HeaderValue, elapsed: Duration) {
        let grpc_status = resp
            .headers()
            .get(&GRPC_STATUS)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        tracing::info!(
            target: "switchboard::access",
            // Strings rather than `Display` values: a subscriber takes a
            // `&str` as it is, where a `Display` goes through a formatter.
            method = self.method.as_str(),
            path = self.path.as_str(),
            binding = self.binding,
            status = resp.status().as_u16(),
            grpc_status = grpc_status,
            duration_ms = elapsed.as_secs_f64() * 1000.0,
            // Ids are ASCII: `sane` ones as checked, new ones as made.
            request_id = id.to_str().unwrap_or_default(),
            "request"
        );
    }
}

/// Whether an incoming request id may be echoed and logged as is.
fn sane(id: &[u8]) -> bool {
    (1..=128).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(b))
}

/// A new request id, shaped as a UUID (36 characters).
///
/// An id only has to be unique, so it is not drawn from the random number
/// generator per request: its first half is random once per process, its
/// second half a per-process counter passed through a random bijection
/// (xor, then multiplication by an odd number, both invertible modulo
/// 2⁶⁴), so ids never repeat within a process, differ between processes
/// with overwhelming probability, and do not read as a count of requests.
/// They are not secrets and need not be unguessable.
fn new_id() -> HeaderValue {
    static PROCESS: std::sync::LazyLock<(u64, u64, u64)> = std::sync::LazyLock::new(|| {
        let (prefix, key) = uuid::Uuid::new_v4().as_u64_pair();
        let odd = uuid::Uuid::new_v4().as_u64_pair().0 | 1;
        (prefix, key, odd)
    });
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let (prefix, key, odd) = *PROCESS;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let id = uuid::Uuid::from_u64_pair(prefix, (n ^ key).wrapping_mul(odd));
    // Formatted on the stack, then moved into one shared allocation: the
    // request's copy and the answer's are clones of it (a reference count,
    // where a copied value would be promoted to shared storage by its first
    // clone, a second allocation). A UUID is always a valid header value.
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    id.hyphenated().encode_lower(&mut buf);
    HeaderValue::from_maybe_shared(axum::body::Bytes::from_owner(buf))
        .unwrap_or(HeaderValue::from_static("unknown"))
}

/// Which binding a request is for, from its head alone.
pub(crate) fn binding(req: &Request) -> &'static str {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let path = req.uri().path();
    if content_type.starts_with("application/grpc") {
        "grpc"
    } else if path.starts_with("/.well-known/") {
        "card"
    } else if path == "/healthz" || path == "/readyz" {
        "health"
    } else if req.method() == axum::http::Method::POST && (path == "/" || path.is_empty()) {
        "jsonrpc"
    } else {
        "rest"
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_sane_ids_are_kept() {
        for ok in ["abc", "0f-1_2.3:4", &"a".repeat(128)] {
            assert!(super::sane(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "a b", "a\nb", "é", &"a".repeat(129), "x;y"] {
            assert!(!super::sane(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn new_ids_are_unique_and_shaped_as_uuids() {
        let ids: std::collections::HashSet<String> = (0..10_000)
            .map(|_| String::from_utf8_lossy(super::new_id().as_bytes()).into_owned())
            .collect();
        assert_eq!(ids.len(), 10_000, "no id repeats");
        for id in &ids {
            assert!(uuid::Uuid::try_parse(id).is_ok(), "{id}");
            assert!(super::sane(id.as_bytes()), "{id}");
        }
    }
}
