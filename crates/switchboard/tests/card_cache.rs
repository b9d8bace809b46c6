//! HTTP caching of the agent card: `ETag`, `Last-Modified` and
//! `Cache-Control: max-age`, and conditional requests answered 304.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod proc;

use proc::{Serve, get};
use reqwest::StatusCode;

#[tokio::test]
async fn the_card_is_cacheable_and_conditional_requests_get_304() {
    let serve = Serve::start("memory");
    let url = format!("{}/.well-known/agent-card.json", serve.base());
    let first = get(&url, &[]).await;
    assert_eq!(first.status(), StatusCode::OK);
    let h = first.headers().clone();
    let etag = h["etag"].to_str().unwrap().to_string();
    let modified = h["last-modified"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert!(modified.ends_with(" GMT"), "{modified}");
    assert_eq!(h["cache-control"], "public, max-age=300");
    let body = first.bytes().await.unwrap();
    assert!(serde_json::from_slice::<serde_json::Value>(&body).unwrap()["name"].is_string());

    // Same tag (strong, weak, in a list, or `*`): 304, no body, the validators again.
    let weak = format!("W/{etag}");
    let list = format!("\"nope\", {etag}");
    for tags in [etag.as_str(), weak.as_str(), list.as_str(), "*"] {
        let resp = get(&url, &[("If-None-Match", tags)]).await;
        assert_eq!(resp.status(), StatusCode::NOT_MODIFIED, "{tags}");
        assert_eq!(resp.headers()["etag"], etag.as_str());
        assert_eq!(resp.headers()["last-modified"], modified.as_str());
        assert!(resp.bytes().await.unwrap().is_empty());
    }
    let resp = get(&url, &[("If-None-Match", "\"other\"")]).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.bytes().await.unwrap(), body);

    // If-Modified-Since: not modified since then, or since later: 304.
    let resp = get(&url, &[("If-Modified-Since", &modified)]).await;
    assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
    let at = httpdate::parse_http_date(&modified).unwrap();
    let later = httpdate::fmt_http_date(at + std::time::Duration::from_secs(3600));
    let earlier = httpdate::fmt_http_date(at - std::time::Duration::from_secs(1));
    let resp = get(&url, &[("If-Modified-Since", &later)]).await;
    assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
    let resp = get(&url, &[("If-Modified-Since", &earlier)]).await;
    assert_eq!(resp.status(), StatusCode::OK, "changed since then");
    let resp = get(&url, &[("If-Modified-Since", "yesterday-ish")]).await;
    assert_eq!(
        resp.status(),
        StatusCode::OK,
        "an unreadable date is ignored"
    );
    // If-None-Match decides when both are sent.
    let resp = get(
        &url,
        &[
            ("If-None-Match", "\"other\""),
            ("If-Modified-Since", &modified),
        ],
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
}
