//! The pages for people: server-rendered HTML that works without
//! JavaScript, in Chinese, readable on a phone.

mod archive;
mod author;
mod export;
mod search;
mod status;
mod thread;
mod trend;

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::html::{escape, page};
use crate::params::Params;

pub use archive::archive;
pub use author::author;
pub use export::{csv as export_csv, ndjson as export_ndjson};
pub use search::search;
pub use status::status;
pub use thread::thread;
pub use trend::trend;

/// Our own pages load only our own script and no remote anything: even a
/// missed escape could not run an inline script or an `onerror`.
const PAGE_CSP: &str =
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

pub(crate) fn html(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

/// Hits on one page of search results; a hit's place `n` (1-based) is on
/// page `(n - 1) / RESULTS_PER_PAGE + 1`.
pub(crate) const RESULTS_PER_PAGE: usize = 10;

/// The parameters of `raw` that a page knows, any other left out: a page
/// ignores what it does not read (a chat app's `from=singlemessage`) where
/// the API refuses it. Values are checked as the API checks them.
pub(crate) fn known_params(raw: Option<&str>, known: &[&str]) -> Result<Params, ApiError> {
    let raw = raw.unwrap_or("");
    if raw.len() > crate::MAX_QUERY_STRING {
        // Refused as a whole, as the API refuses it.
        return Params::parse(Some(raw), known);
    }
    let kept: Vec<&str> = raw
        .split('&')
        .filter(|pair| url::form_urlencoded::parse(pair.as_bytes()).next().is_some_and(|(k, _)| known.contains(&k.as_ref()) || k == "token"))
        .collect();
    Params::parse(Some(&kept.join("&")), known)
}

/// An error as a page: in Chinese (see [`ApiError::chinese`]), with its status.
pub(crate) fn error_page(e: &ApiError) -> Response {
    html(e.status(), page("出错了", &format!(r#"<p class="error">{}</p><p><a href="/">返回搜索</a></p>"#, escape(&e.chinese()))))
}

/// An unknown path outside `/api/`: a page saying so, in Chinese, with the
/// way back to the search (the path is shown as text).
pub async fn not_found(uri: axum::http::Uri) -> Response {
    let body = format!(
        r#"<h1>找不到这个页面</h1><p class="error">这个网址（<code>{}</code>）没有对应的页面。</p><p><a href="/">返回搜索</a></p>"#,
        escape(uri.path())
    );
    html(StatusCode::NOT_FOUND, page("找不到页面", &body))
}

/// An archived picture or attachment, `/media/<sha256>`, as `luntan-media`
/// stored it, with the type it was served with. Pictures show inline;
/// anything else (and SVG, which can carry script) is sent as a download.
/// The content never changes under its hash, so it may be cached for good.
pub async fn media(State(st): State<crate::State>, Path(hash): Path<String>) -> Response {
    let Ok(hash) = luntan_core::ids::MediaHash::parse(&hash) else { return error_page(&ApiError::NotFound("no such media".into())) };
    let found = crate::catalog::blocking(move || {
        let store = crate::data::open_store(&st)?;
        let content_type = store.media_type_of(hash.as_str()).map_err(|e| ApiError::Unavailable(e.to_string()))?;
        let content_type = content_type.ok_or_else(|| ApiError::NotFound(format!("no archived media {hash}")))?;
        let bytes = std::fs::read(st.data.media_path(&hash)).map_err(|_| ApiError::NotFound(format!("no archived media {hash}")))?;
        Ok((content_type, bytes))
    })
    .await;
    let (content_type, bytes) = match found {
        Ok(x) => x,
        Err(e) => return error_page(&e),
    };
    let inline = content_type.starts_with("image/") && content_type != "image/svg+xml";
    let mut r = bytes.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_str(&content_type).unwrap_or(HeaderValue::from_static("application/octet-stream")));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    if !inline {
        h.insert(header::CONTENT_DISPOSITION, HeaderValue::from_static("attachment"));
    }
    r
}

pub async fn script() -> Response {
    let mut r = crate::html::SCRIPT.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    r
}
