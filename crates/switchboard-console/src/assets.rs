//! The page's files, embedded in the binary (`include_str!`): no build
//! step, nothing fetched from elsewhere, so the console works offline.
//! Each is served with a Content-Security-Policy that allows scripts,
//! styles and connections from the console's own origin only: even a
//! rendering mistake cannot run an agent's `<script>` or inline handler.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use crate::BASE_PATH;

/// One embedded file.
pub(crate) struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
}

macro_rules! assets {
    ($($name:literal => $type:literal,)*) => {
        /// Every file of the page.
        pub(crate) const ASSETS: &[Asset] = &[$(Asset {
            name: $name,
            content_type: $type,
            body: include_str!(concat!("../assets/", $name)),
        },)*];
    };
}

assets! {
    "index.html" => "text/html; charset=utf-8",
    "style.css" => "text/css; charset=utf-8",
    "app.js" => "text/javascript; charset=utf-8",
    "api.js" => "text/javascript; charset=utf-8",
    "dom.js" => "text/javascript; charset=utf-8",
    "render.js" => "text/javascript; charset=utf-8",
    "card.js" => "text/javascript; charset=utf-8",
    "chat.js" => "text/javascript; charset=utf-8",
    "tasks.js" => "text/javascript; charset=utf-8",
    "debug.js" => "text/javascript; charset=utf-8",
}

/// What the page may load and run: its own files only.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
    frame-ancestors 'none'";

pub(crate) fn routes() -> Router {
    Router::new()
        .route(
            BASE_PATH,
            get(|| async { Redirect::permanent(&format!("{BASE_PATH}/")) }),
        )
        .route(
            &format!("{BASE_PATH}/"),
            get(|| async { serve("index.html") }),
        )
        .route(
            &format!("{BASE_PATH}/assets/{{name}}"),
            get(|Path(name): Path<String>| async move { serve(&name) }),
        )
}

fn serve(name: &str) -> Response {
    let Some(asset) = ASSETS.iter().find(|a| a.name == name) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let mut response = asset.body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
