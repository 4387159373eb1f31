//! The access token a non-loopback server requires. It may come as
//! `Authorization: Bearer <token>` (API clients), as `?token=` (a person's
//! first visit), which sets an HttpOnly cookie for the pages after, or as
//! that cookie.

use axum::extract::{Request, State};
use axum::http::header::{AUTHORIZATION, COOKIE, SET_COOKIE};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::State as AppState;

const COOKIE_NAME: &str = "luntan_token";

/// Compares without stopping at the first difference, so response time
/// does not tell how much of a guess was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub async fn require_token(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let Some(token) = st.cfg.token.as_deref() else { return next.run(req).await };
    let ok = |v: &str| same(v.as_bytes(), token.as_bytes());
    // The cookie holds the token form-encoded, as Set-Cookie below writes it.
    let encoded: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
    let header = req.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).is_some_and(|v| ok(v.trim()));
    let cookie = req
        .headers()
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE_NAME).and_then(|r| r.strip_prefix('=')))
        .any(|v| same(v.as_bytes(), encoded.as_bytes()));
    let in_query =
        req.uri().query().is_some_and(|q| url::form_urlencoded::parse(q.as_bytes()).any(|(k, v)| k == "token" && same(v.as_bytes(), token.as_bytes())));
    if !(header || cookie || in_query) {
        return ApiError::Unauthorized.into_response();
    }
    let mut resp = next.run(req).await;
    if in_query && !cookie {
        if let Ok(v) = HeaderValue::from_str(&format!("{COOKIE_NAME}={encoded}; HttpOnly; SameSite=Strict; Path=/")) {
            resp.headers_mut().append(SET_COOKIE, v);
        }
    }
    resp
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_compares_whole_values() {
        assert!(super::same(b"abc", b"abc"));
        assert!(!super::same(b"abc", b"abd"));
        assert!(!super::same(b"abc", b"abcd"));
        assert!(!super::same(b"", b"a"));
    }
}
