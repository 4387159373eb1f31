//! The pages for people: server-rendered HTML that works without
//! JavaScript, in Chinese, readable on a phone.

mod archive;
mod export;
mod search;
mod status;
mod thread;
mod trend;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::html::{escape, page};

pub use archive::archive;
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

pub(crate) fn error_page(e: &ApiError) -> Response {
    let col = e.column().map(|c| format!("（第 {c} 个字符）")).unwrap_or_default();
    html(e.status(), page("出错了", &format!(r#"<p class="error">{}{col}</p><p><a href="/">返回搜索</a></p>"#, escape(&e.to_string()))))
}

pub async fn script() -> Response {
    let mut r = crate::html::SCRIPT.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    r
}
