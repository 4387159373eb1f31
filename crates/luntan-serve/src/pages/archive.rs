//! A saved page as the forum served it.

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::api::load_thread;
use crate::catalog::blocking;
use crate::error::ApiError;
use crate::params::Params;
use crate::State as AppState;

/// The saved page as the forum served it, under a sandbox policy: the
/// browser treats it as a unique origin with scripts, forms and plugins
/// off, so whatever the forum's HTML holds never runs.
pub async fn archive(
    State(st): State<AppState>,
    path: Result<Path<(String, String)>, axum::extract::rejection::PathRejection>,
    RawQuery(raw): RawQuery,
) -> Response {
    let Ok(Path((site, id))) = path else { return ApiError::NotFound("no such thread".into()).into_response() };
    let page_no = match Params::parse(raw.as_deref(), &["page"]).and_then(|p| p.number("page", 1, 10_000)) {
        Ok(n) => n.max(1) as u32,
        Err(e) => return e.into_response(),
    };
    let read = blocking(move || {
        let (row, _) = load_thread(&st, &site, &id)?;
        if page_no > row.pages.unwrap_or(1) {
            return Err(ApiError::NotFound(format!("thread {site}/{id} has no page {page_no}")));
        }
        let loc = row.location(None).map_err(|_| ApiError::NotFound(format!("no saved page of {site}/{id}")))?;
        let path = st.data.html_path(&loc, page_no);
        let bytes = std::fs::read(&path).map_err(|_| ApiError::NotFound(format!("no saved page {page_no} of {site}/{id}")))?;
        Ok((bytes, row.content_type))
    })
    .await;
    match read {
        Ok((bytes, ct)) => {
            let mut r = bytes.into_response();
            let h = r.headers_mut();
            let ct = ct.filter(|c| c.to_ascii_lowercase().starts_with("text/html")).and_then(|c| HeaderValue::from_str(&c).ok());
            h.insert(header::CONTENT_TYPE, ct.unwrap_or(HeaderValue::from_static("text/html")));
            h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
            h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
            r
        }
        Err(e) => e.into_response(),
    }
}
