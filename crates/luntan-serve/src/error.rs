//! Every failure a request can meet, as one JSON shape with a status code:
//! `{"error": "...", "status": 400, "column": 7}` (`column` only for a
//! malformed query, 1-based characters as `luntan-search` reports them).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use luntan_search::{QueryError, SearchError};

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A malformed query or parameter: the caller's to fix.
    #[error("{message}")]
    BadRequest { message: String, column: Option<usize> },
    #[error("{0}")]
    NotFound(String),
    #[error("a valid token is required")]
    Unauthorized,
    /// An index or the crawl database cannot be opened right now (being
    /// created, another schema, missing): worth retrying later.
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::BadRequest { message: message.into(), column: None }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn column(&self) -> Option<usize> {
        match self {
            ApiError::BadRequest { column, .. } => *column,
            _ => None,
        }
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> ApiError {
        ApiError::BadRequest { message: format!("query: {e}"), column: e.column() }
    }
}

impl From<SearchError> for ApiError {
    fn from(e: SearchError) -> ApiError {
        match e {
            SearchError::Query(q) => q.into(),
            SearchError::UnknownSite { site, .. } => ApiError::bad(format!("site {site:?}: no such forum")),
            SearchError::Day(d) => ApiError::bad(d.to_string()),
            SearchError::Io { .. } | SearchError::Open { .. } | SearchError::Schema { .. } => ApiError::Unavailable(e.to_string()),
            SearchError::Search { .. } => ApiError::Internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!("{self}");
        }
        let mut body = serde_json::json!({ "error": self.to_string(), "status": status.as_u16() });
        if let Some(c) = self.column() {
            body["column"] = c.into();
        }
        let mut resp = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(axum::http::header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        resp
    }
}
